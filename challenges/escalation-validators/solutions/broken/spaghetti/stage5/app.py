"""The REST endpoint: POST /validate."""

import re

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse


def create_app() -> FastAPI:
    """Return the app."""
    app = FastAPI()

    @app.post("/validate")
    async def validate(request: Request):
        try:
            data = await request.json()
        except ValueError:
            return JSONResponse({"detail": "bad json"}, status_code=400)
        if not isinstance(data, dict):
            return JSONResponse({"detail": "not an object"}, status_code=400)
        lang = "en"
        if "lang" in data and isinstance(data["lang"], str):
            if data["lang"] == "fr":
                lang = "fr"
        else:
            header = request.headers.get("accept-language")
            if header:
                first = header.split(",")[0].split(";")[0].strip().lower()
                if first == "fr" or first.startswith("fr-"):
                    lang = "fr"
        errors = {}
        email = data.get("email")
        if email is None or email == "":
            if lang == "fr":
                errors["email"] = "L'adresse e-mail est obligatoire."
            else:
                errors["email"] = "Email address is required."
        else:
            ok = False
            if isinstance(email, str) and len(email) <= 254:
                m = re.fullmatch(
                    r"([A-Za-z0-9_%+-]+(?:\.[A-Za-z0-9_%+-]+)*)@"
                    r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}",
                    email,
                )
                if m and len(m.group(1)) <= 64:
                    ok = True
            if not ok:
                if lang == "fr":
                    errors["email"] = "L'adresse e-mail n'est pas valide."
                else:
                    errors["email"] = "Email address is not valid."
        phone = data.get("phone")
        if phone is None or phone == "":
            if lang == "fr":
                errors["phone"] = "Le numéro de téléphone est obligatoire."
            else:
                errors["phone"] = "Phone number is required."
        else:
            ok = False
            if isinstance(phone, str):
                if re.fullmatch(r"\+[1-9](?:[ .-]?[0-9])*", phone):
                    digits = len([c for c in phone if c.isdigit()])
                    if digits >= 7 and digits <= 15:
                        ok = True
            if not ok:
                if lang == "fr":
                    errors["phone"] = "Le numéro de téléphone n'est pas valide."
                else:
                    errors["phone"] = "Phone number is not valid."
        postal = data.get("postal")
        country = data.get("country")
        if postal is None or postal == "":
            if lang == "fr":
                errors["postal"] = "Le code postal est obligatoire."
            else:
                errors["postal"] = "Postal code is required."
        else:
            c = str(country).upper()
            if c not in ("US", "UK", "CA"):
                if lang == "fr":
                    errors["postal"] = "Le pays doit être US, UK ou CA."
                else:
                    errors["postal"] = "Country must be US, UK or CA."
            else:
                ok = False
                if isinstance(postal, str):
                    if c == "US":
                        if re.fullmatch(r"[0-9]{5}(-[0-9]{4})?", postal):
                            ok = True
                    elif c == "UK":
                        if re.fullmatch(
                            r"[A-Z]{1,2}[0-9][A-Z0-9]? ?[0-9][A-Z]{2}", postal.upper()
                        ):
                            ok = True
                    else:
                        if re.fullmatch(
                            r"[ABCEGHJ-NPRSTVXY][0-9][ABCEGHJ-NPRSTV-Z] ?"
                            r"[0-9][ABCEGHJ-NPRSTV-Z][0-9]",
                            postal.upper(),
                        ):
                            ok = True
                if not ok:
                    if lang == "fr":
                        errors["postal"] = "Le code postal n'est pas valide."
                    else:
                        errors["postal"] = "Postal code is not valid."
        if errors:
            return JSONResponse({"valid": False, "errors": errors}, status_code=422)
        return {"valid": True}

    return app
