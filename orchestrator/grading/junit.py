"""Read JUnit XML (pytest's ``xunit1`` flavour, or any tool's) into test verdicts."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

__all__ = ["JUnitError", "NotJUnit", "Verdict", "read_junit"]

_DETAIL_LIMIT = 2000


class JUnitError(ValueError):
    """A JUnit file that is missing or not JUnit XML."""


class NotJUnit(JUnitError):
    """Well-formed XML of another kind (a coverage report, say): no test results in it."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """One test case: its id, its outcome and, when it did not pass, why."""

    id: str
    outcome: str  # passed, failed, error, skipped
    detail: str = ""


def read_junit(source: Path | bytes, *, prefix: str = "", name: str = "") -> list[Verdict]:
    """Verdicts of every ``<testcase>`` in ``source``: a file, or the bytes of one document
    (``name`` says where they came from). Anything after the document is an error.

    With a ``file`` attribute (pytest's xunit1) the id is pytest's node id,
    ``file::Class::name``; otherwise it is ``classname::name``. ``prefix`` is put in front
    of ids that do not start with it (a command phase's ids get the phase name).
    """
    name = name or (source.name if isinstance(source, Path) else "the JUnit XML")
    try:
        root = ET.parse(source).getroot() if isinstance(source, Path) else ET.fromstring(source)
    except FileNotFoundError:
        raise JUnitError(f"no JUnit XML was written to {name}") from None
    except ET.ParseError as error:
        raise JUnitError(f"{name} is not XML: {error}") from None
    if root.tag not in ("testsuites", "testsuite"):
        raise NotJUnit(f"{name} is not JUnit XML (root element <{root.tag}>)")
    return [_verdict(case, prefix) for case in root.iter("testcase")]


def _verdict(case: ET.Element, prefix: str) -> Verdict:
    name = case.get("name", "")
    classname = case.get("classname", "")
    file = case.get("file")
    if file:
        module = file.removesuffix(".py").replace("/", ".")
        inner = classname[len(module) + 1 :] if classname.startswith(module + ".") else ""
        test_id = "::".join(part for part in (file, inner.replace(".", "::"), name) if part)
    else:
        test_id = f"{classname}::{name}" if classname else name
    if prefix and not test_id.startswith(prefix):
        test_id = prefix + test_id
    for tag, outcome in (("failure", "failed"), ("error", "error"), ("skipped", "skipped")):
        element = case.find(tag)
        if element is not None:
            text = (element.text or "").strip()
            detail = element.get("message") or text
            if detail == "collection failure" and text:  # pytest's words are in the text's last lines
                detail = "\n".join(text.splitlines()[-6:])
            return Verdict(test_id, outcome, detail[:_DETAIL_LIMIT])
    return Verdict(test_id, "passed")
