"""A failed test's words say what its private root lacked (``grading/diagnosis.py``)."""

from __future__ import annotations

import pytest

from orchestrator.grading.diagnosis import annotate, missing, missing_in, run_note
from triggers import PhaseResult, TestOutcome


@pytest.mark.parametrize(
    ("detail", "found"),
    [
        pytest.param("FileNotFoundError: [Errno 2] No such file or directory: 'bash'", "bash", id="python"),
        pytest.param("[Errno 2] No such file or directory: '/bin/bash'", "bash", id="absolute"),
        pytest.param("assert 127 == 0\nsh: 1: git: not found", "git", id="dash"),
        pytest.param("bash: line 1: sort: command not found", "sort", id="bash"),
        pytest.param("/bin/sh: 1: cat: not found", "cat", id="sh-path"),
        pytest.param("./run.sh: /bin/bash: bad interpreter: No such file or directory", "bash", id="shebang"),
    ],
)
def test_a_missing_program_is_named(detail: str, found: str) -> None:
    """Python's and the shells' own words for a program that is not there."""
    assert missing(detail, [], []) == [("tool", found)]


@pytest.mark.parametrize(
    "detail",
    [
        "FileNotFoundError: [Errno 2] No such file or directory: 'config.json'",
        "FileNotFoundError: [Errno 2] No such file or directory: '/changeup/ws/data/bash'",
        "FileNotFoundError: [Errno 2] No such file or directory: 'python3'",
        "AssertionError: assert 'bash' == 'zsh'",
    ],
)
def test_what_is_no_program_is_not_named(detail: str) -> None:
    """A data file, a workspace path, the grading interpreter, or a mere mention: nothing missing."""
    assert missing(detail, [], []) == []


def test_what_is_declared_is_not_missing() -> None:
    """A declared tool (by name or absolute path) or data set is in the root: not blamed."""
    detail = "No such file or directory: 'git'; No time zone found with key UTC"
    assert missing(detail, ["/usr/bin/git"], ["zoneinfo"]) == []
    assert missing(detail, [], []) == [("tool", "git"), ("data", "zoneinfo")]


@pytest.mark.parametrize(
    ("detail", "data"),
    [
        ("zoneinfo._common.ZoneInfoNotFoundError: 'No time zone found with key Europe/Paris'", "zoneinfo"),
        ("ValueError: Invalid timezone 'UTC'", "zoneinfo"),
        ("ssl.SSLCertVerificationError: [SSL: CERTIFICATE_VERIFY_FAILED]", "ca-certificates"),
        ("locale.Error: unsupported locale setting", "locales"),
    ],
)
def test_missing_data_is_named(detail: str, data: str) -> None:
    """Time zones, certificates and locales, by their usual messages."""
    assert missing(detail, [], []) == [("data", data)]


def test_annotated_details_name_it_and_read_back() -> None:
    """The failing test's detail opens with what it lacked; passing tests and counts are untouched;
    the run says it once; calibration reads it back from the detail."""
    tests = (
        TestOutcome("p/t.py::a", "failed", "FileNotFoundError: [Errno 2] No such file or directory: 'bash'"),
        TestOutcome("p/t.py::b", "passed"),
        TestOutcome("p/t.py::c", "error", "sh: 1: bash: not found"),
    )
    (result,), lacking = annotate([PhaseResult("p", 1, 2, tests)], [], [])
    assert result.tests[0].detail == (
        "needs the tool bash (not in testing: tools): "
        "FileNotFoundError: [Errno 2] No such file or directory: 'bash'"
    )
    assert result.tests[1] == tests[1]
    assert (result.passed, result.failed) == (1, 2)
    assert lacking == [("tool", "bash")]
    assert missing_in(result.tests[2].detail) == [("tool", "bash")]
    assert run_note([*lacking, ("data", "zoneinfo")]) == (
        "the tests failed for want of the tool bash, the data zoneinfo, which the challenge does not declare "
        "(testing: tools: [bash]; testing: data: [zoneinfo])"
    )
    assert run_note([]) == ""
