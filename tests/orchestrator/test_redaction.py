"""Secret redaction: which values are secret, and redacting them from text, files and streams."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.agents.redaction import RedactedStream, Redactor, is_secret_name, redact_file, secret_flags

SECRET = "sk-test-secret-0123456789"
SECRETS = {"ANTHROPIC_API_KEY": "sk-ant-0123456789abcdef", "GH_TOKEN": "ghp_zyxwvutsrq9876"}
pieces = st.lists(
    st.one_of(st.sampled_from(sorted(SECRETS.values())), st.text("ab \n-", max_size=12)), max_size=30
)


# --- which values are secret, and redacting them --------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        *("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GH_TOKEN", "AWS_SECRET_ACCESS_KEY", "LLM_API_KEY"),
        *("DB_PASSWORD", "CLAUDE_CODE_OAUTH_TOKEN", "OPENAI_APIKEY", "HF_TOKEN", "--openai-api-key"),
    ],
)
def test_secret_names_are_recognised(name: str) -> None:
    """Keys, tokens, secrets and passwords, however they are spelled into a name."""
    assert is_secret_name(name)


@pytest.mark.parametrize(
    "name", ["PATH", "HOME", "GIT_AUTHOR_NAME", "LLM_MODEL", "MSWEA_CONFIGURED", "KEYBOARD"]
)
def test_ordinary_names_are_not_secret(name: str) -> None:
    """Everything else is recorded as it is."""
    assert not is_secret_name(name)


def test_redactor_replaces_every_secret_value_and_names_it() -> None:
    """Values of secret-named variables go; short values and ordinary variables stay."""
    redact = Redactor.from_env({"ANTHROPIC_API_KEY": SECRET, "PIN_TOKEN": "1234", "HOME": "/root"})
    assert redact(f"key={SECRET}; again {SECRET}") == (
        "key=[redacted $ANTHROPIC_API_KEY]; again [redacted $ANTHROPIC_API_KEY]"
    )
    assert redact("pin 1234 in /root") == "pin 1234 in /root"
    assert redact.value({"a": [SECRET, 3], SECRET: None}) == {
        "a": ["[redacted $ANTHROPIC_API_KEY]", 3],
        "[redacted $ANTHROPIC_API_KEY]": None,
    }


def test_the_longest_of_overlapping_secrets_wins() -> None:
    """A secret that contains another is redacted whole."""
    redact = Redactor({"SHORT_KEY": "abcdefgh", "LONG_KEY": "abcdefgh-ijkl"})
    assert redact("abcdefgh-ijkl and abcdefgh") == "[redacted $LONG_KEY] and [redacted $SHORT_KEY]"


def test_values_of_secret_flags_are_found_in_either_spelling() -> None:
    """``--flag VALUE`` and ``--flag=VALUE`` when the flag names a secret; other arguments are not."""
    args = ["--model", "m", "--openai-api-key", SECRET, "--anthropic-api-key=abcdefgh123", "API_KEY", "x"]
    assert secret_flags([*args, "--api-key"]) == {
        "--openai-api-key": SECRET,
        "--anthropic-api-key": "abcdefgh123",
    }


def test_a_file_is_redacted_in_place(tmp_path: Path) -> None:
    """Every secret value in the file is replaced; the rest of it is kept as it was."""
    path = tmp_path / "history.md"
    path.write_text(f"# chat\nkey {SECRET}\n", encoding="utf-8")
    redact_file(path, Redactor({"OPENAI_API_KEY": SECRET}))
    assert path.read_text(encoding="utf-8") == "# chat\nkey [redacted $OPENAI_API_KEY]\n"


def test_a_file_that_is_not_text_or_not_there_is_left_alone(tmp_path: Path) -> None:
    """Bytes that are not UTF-8 are not rewritten, and a missing file is no error."""
    path = tmp_path / "blob.bin"
    path.write_bytes(b"\xff\xfe" + SECRET.encode())
    redact = Redactor({"OPENAI_API_KEY": SECRET})
    redact_file(path, redact)
    redact_file(tmp_path / "missing.md", redact)
    assert path.read_bytes() == b"\xff\xfe" + SECRET.encode()
    assert not (tmp_path / "missing.md").exists()


# --- over a stream --------------------------------------------------------------------------


@settings(max_examples=400, deadline=None)
@given(parts=pieces, cuts=st.lists(st.integers(0, 400), max_size=12), hold=st.integers(1, 40))
def test_a_stream_cut_anywhere_redacts_like_the_whole_text(
    parts: list[str], cuts: list[int], hold: int
) -> None:
    """Whatever the chunking and however short the hold, the output is the whole text redacted."""
    text = "".join(parts)
    redact = Redactor(SECRETS)
    stream = RedactedStream(redact, hold=hold)
    bounds = sorted({0, len(text), *(c for c in cuts if c < len(text))})
    out = [stream.feed(text[a:b]) for a, b in itertools.pairwise(bounds)]
    out.append(stream.flush())
    joined = "".join(out)
    assert joined == redact(text)
    assert not any(secret in joined for secret in SECRETS.values())


def test_nothing_is_held_back_once_a_line_ends() -> None:
    """A whole line is written as soon as its end arrives; only the unfinished rest waits."""
    stream = RedactedStream(Redactor(SECRETS))
    assert stream.feed("first line\nsecond ") == "first line\n"
    assert stream.feed("sk-ant-0123") == ""
    assert stream.feed("456789abcdef done\n") == "second [redacted $ANTHROPIC_API_KEY] done\n"
    assert stream.flush() == ""
