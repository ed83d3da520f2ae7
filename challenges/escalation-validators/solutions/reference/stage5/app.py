"""The HTTP face of the validation pipeline: POST /validate."""

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from pipeline import DEFAULT_LANG, validate_record

__all__ = ["create_app"]


def request_language(payload: dict, accept_language: str | None) -> str:
    """Return the body's "lang", else Accept-Language's first primary language."""
    lang = payload.get("lang")
    if isinstance(lang, str):
        return lang
    if not accept_language:
        return DEFAULT_LANG
    first = accept_language.split(",")[0].split(";")[0]
    return first.split("-")[0].strip().lower()


async def validate(request: Request) -> JSONResponse:
    """Validate the JSON record in the body: 200 if valid, else 422 with the errors."""
    try:
        payload = await request.json()
    except ValueError:  # malformed JSON (or not UTF-8)
        payload = None
    if not isinstance(payload, dict):
        return JSONResponse({"detail": "The body must be a JSON object."}, 400)
    lang = request_language(payload, request.headers.get("accept-language"))
    errors = validate_record(payload, lang)
    if errors:
        return JSONResponse({"valid": False, "errors": errors}, status_code=422)
    return JSONResponse({"valid": True})


def create_app() -> FastAPI:
    """Return a new app with the POST /validate route."""
    app = FastAPI(title="Contact validation")
    app.add_api_route("/validate", validate, methods=["POST"])
    return app
