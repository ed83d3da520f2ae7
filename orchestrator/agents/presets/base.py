"""What every preset shares: :class:`PresetAgent`, its options, and finding the installed CLI.

:class:`PresetAgent` runs a turn (the command line, the transcript, the ``turn.summary``);
a subclass says only how its CLI is called, continued and read. :func:`installed` and
:func:`binary_version` say whether a CLI is here, and which version (``changeup agents``
and the manifest).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import anyio

from orchestrator.agents.base import AgentUnavailable, message_text
from orchestrator.agents.redaction import Redactor, redact_file, secret_flags
from orchestrator.agents.shell import CommandAgent, agent_env
from orchestrator.agents.transcript import LineParser, Transcript, Usage
from orchestrator.challenge.model import Challenge
from orchestrator.seams import AgentContext, Message
from triggers.records import AgentOutput, TurnSummary

__all__ = [
    "COMMON_ENV",
    "OPTIONS",
    "PresetAgent",
    "PresetOptionError",
    "TurnArgs",
    "binary_version",
    "installed",
    "package_version_argv",
    "resolve_binary",
    "with_context",
]

#: What ``--agent-option`` can set on a preset.
OPTIONS: dict[str, str] = {
    "binary": "the program to run (default: the CLI's usual name, looked up on PATH)",
    "model": "the model, passed the way the CLI takes one",
    "flags": "extra arguments (shell-quoted), added where the command line shows [FLAGS]",
    "unattended": "replaces the flags that let the CLI work without asking for approval",
}

#: Variables that change how any networked CLI behaves; recorded in the manifest.
COMMON_ENV = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "REQUESTS_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
)

VERSION_TIMEOUT = 15.0

#: LiteLLM's provider prefixes (``anthropic/claude-…``) that a model gateway serves.
_PROVIDER_OF = ("anthropic", "openai", "gemini")
#: How a model's name starts → its provider (Aider's aliases ``sonnet``, ``opus``, ``haiku`` too).
_MODEL_PROVIDERS = (
    ("claude", "anthropic"),
    ("sonnet", "anthropic"),
    ("opus", "anthropic"),
    ("haiku", "anthropic"),
    ("gpt", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
    ("codex", "openai"),
    ("gemini", "gemini"),
)


@dataclass(frozen=True, slots=True)
class TurnArgs:
    """What a turn's command line is made of."""

    prompt: str  # the message text (with earlier messages, where the CLI cannot continue)
    message_file: str  # the same text, in a file
    agent_dir: str  # the run's agent/ folder
    tag: str  # the turn's number, 001, 002, …
    session: str  # what continues the conversation; "" on a first (or not continued) turn
    new_session: str = ""  # the id a first turn names its session by (presets that name them)


class PresetOptionError(ValueError):
    """An ``--agent-option`` a preset does not take, or cannot use."""


def with_context(earlier: list[str], new: str) -> str:
    """A message for a CLI that cannot continue a conversation: the earlier ones first, as context."""
    parts = ["[Earlier messages in this session, already given to you, in order — for context]"]
    for number, text in enumerate(earlier, 1):
        parts.append(f"## Message {number}\n\n{text.strip()}")
    parts.append(f"[The new message]\n\n{new.strip()}")
    return "\n\n".join(parts) + "\n"


class PresetAgent(CommandAgent):
    """One CLI driven per turn; subclasses say how it is called, continued and read."""

    preset: ClassVar[str]
    binary: ClassVar[str]
    title: ClassVar[str]
    docs: ClassVar[tuple[str, ...]]
    #: How a later message reaches the same conversation (for the docs and the manifest).
    continuity: ClassVar[str]
    #: How the message is handed over: ``stdin``, ``argument`` or ``file``.
    message_via: ClassVar[str] = "stdin"
    #: Environment variables (names or prefixes ending in ``_``) that change the CLI's behaviour.
    env_names: ClassVar[tuple[str, ...]] = ()
    #: The CLI talks to any provider (LiteLLM): every ``*_API_KEY`` variable matters too.
    any_api_key: ClassVar[bool] = False
    unattended_default: ClassVar[tuple[str, ...]] = ()
    transcript_ext: ClassVar[str] = "log"
    #: The CLI starts a session under an id it is given: each new one gets a fresh UUID.
    names_session: ClassVar[bool] = False
    #: Of ``home_files``, the logins (OAuth tokens): not seeded when the model gateway holds the keys.
    credential_files: ClassVar[tuple[str, ...]] = ()
    #: The provider whose API its CLI calls (a model gateway's name: anthropic, openai, gemini);
    #: None for a LiteLLM CLI, whose provider is its model's (:meth:`model_provider`).
    provider: ClassVar[str | None] = None

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        options = dict(options or {})
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise PresetOptionError(
                f"{self.preset} takes no option {', '.join(unknown)}; it takes: {', '.join(OPTIONS)}"
            )
        try:
            self.flags = shlex.split(options.get("flags", ""))
            unattended = options.get("unattended")
            self.unattended = list(self.unattended_default) if unattended is None else shlex.split(unattended)
        except ValueError as error:
            raise PresetOptionError(f"{self.preset}: cannot split the flags: {error}") from None
        self.executable = options.get("binary") or self.binary
        self.model = options.get("model") or None
        super().__init__([self.executable])
        self.name = self.preset + (f":{self.model}" if self.model else "")
        self._history: list[str] = []
        self._continuing = False
        self._session = ""
        self._named = ""  # the id the latest new session was started under (names_session)
        self._folder = Path()
        self._redact = Redactor({})
        self._transcript: Transcript | None = None
        self._began = 0.0

    def model_provider(self) -> str | None:
        """The provider its model is served by: its CLI's own, or, for a LiteLLM CLI, the one its
        ``model`` option names (``anthropic/…``, ``claude-…``: anthropic; ``gemini/…``: gemini;
        ``openai/…``, ``gpt-…``, ``o3``…: openai); None when that cannot be told."""
        if self.provider is not None:
            return self.provider
        model = (self.model or "").lower()
        prefix, slash, rest = model.partition("/")
        if slash and prefix in _PROVIDER_OF:
            return prefix
        name = rest if slash else model
        return next((p for start, p in _MODEL_PROVIDERS if name.startswith(start)), None) if name else None

    # --- what each preset says ------------------------------------------------------------------

    def arguments(self, turn: TurnArgs) -> list[str]:
        """The arguments after the program."""
        raise NotImplementedError

    def extra_env(self, env: Mapping[str, str]) -> dict[str, str]:
        """Variables the preset sets for its CLI."""
        return {}

    def parser(self) -> LineParser | None:
        """What reads a turn's output."""
        return None

    def continues(self) -> bool:
        """Whether the next turn can continue the conversation (else earlier messages are resent)."""
        return bool(self._session)

    def turn_started(self, ctx: AgentContext) -> None:
        """Called as a turn starts."""

    def read_usage(self, ctx: AgentContext, usage: Usage) -> Usage:
        """Complete what the output said from what the CLI left in files."""
        return usage

    def files_to_redact(self, ctx: AgentContext) -> list[Path]:
        """Files the CLI wrote into the agent folder this turn (secrets are redacted from them)."""
        return []

    def version_argv(self, path: str) -> list[str] | None:
        """How to ask the installed CLI its version."""
        return [path, "--version"]

    def programs(self) -> list[str]:
        """The CLI: its sandbox shows its installation, read-only."""
        return [self.executable]

    # --- the turn -------------------------------------------------------------------------------

    def preflight(self, challenge: Challenge) -> None:
        """Refuse a CLI that is not installed here."""
        if resolve_binary(self.executable) is None:
            raise AgentUnavailable(
                f"{self.preset}: {self.executable!r} is not installed (not found on PATH); "
                f"install {self.title} or pass --agent-option binary=/path/to/{self.binary} "
                "(`changeup agents` lists the presets and where each is found)"
            )

    async def start(self, ctx: AgentContext) -> None:
        """Remember the agent folder, where the CLI's history and transcripts are kept."""
        self._folder = ctx.folder

    def prompt_for(self, messages: list[Message]) -> str:
        """The new messages, after the earlier ones when the conversation cannot be continued."""
        new = message_text(messages)
        earlier = self._history
        self._history = [*earlier, new]
        self._continuing = bool(earlier) and self.continues()
        return new if not earlier or self._continuing else with_context(earlier, new)

    def command_for(self, ctx: AgentContext, prompt: str, message_file: Path) -> list[str]:
        """The preset's command line for this turn."""
        session = self._session if self._continuing else ""
        if self.names_session and not session:
            self._named = str(uuid.uuid4())
        tag = f"{self._turns:03d}"
        named = self._named if self.names_session and not session else ""
        return [
            self.executable,
            *self.arguments(TurnArgs(prompt, str(message_file), str(ctx.folder), tag, session, named)),
        ]

    def stdin_for(self, prompt: str) -> bytes | None:
        """The message on stdin, for CLIs that read it there."""
        return prompt.encode("utf-8") if self.message_via == "stdin" else None

    def env_for(self, ctx: AgentContext, message_file: Path) -> dict[str, str]:
        """The agent environment plus the preset's own variables; secrets in it are redacted from output."""
        env = agent_env(ctx, str(message_file))
        env.update(self.extra_env(env))
        self._redact = Redactor.from_env(env, extra=self.flag_secrets())
        return env

    def begin_turn(self, ctx: AgentContext) -> Callable[[str], None]:
        """Open the turn's transcript; the output goes there (and, up to a budget, to the log)."""
        self._began = anyio.current_time()
        self.turn_started(ctx)
        path = ctx.folder / f"turn-{self._turns:03d}.{self.transcript_ext}"

        def emit(text: str) -> None:
            ctx.emit(AgentOutput(0.0, text))

        self._transcript = Transcript(
            path,
            shown_as=_relative(path, ctx.folder.parent),
            emit=emit,
            redact=self._redact,
            parser=self.parser(),
        )
        return self._transcript.write

    def end_turn(self, ctx: AgentContext, returncode: int | None) -> None:
        """Close the transcript and report the turn's ``turn.summary``."""
        transcript = self._transcript
        if transcript is None:
            return
        transcript.close()
        usage = self.read_usage(ctx, transcript.usage())
        for path in self.files_to_redact(ctx):
            redact_file(path, self._redact)
        if usage.session:
            self._session = usage.session
        final = self._redact(usage.final_message) if usage.final_message else None
        ctx.emit(
            TurnSummary(
                0.0,
                self._turns,
                seconds=round(anyio.current_time() - self._began, 3),
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cache_read_tokens=usage.cache_read_tokens,
                cache_write_tokens=usage.cache_write_tokens,
                cost_usd=usage.cost_usd,
                final_message=final,
                model=self._redact(usage.model or self.model or ""),
                session=self._redact(self._session),
                transcript=transcript.shown_as,
            )
        )
        self._transcript = None

    # --- for the manifest, the docs and ``changeup agents`` ----------------------------------

    def flag_secrets(self) -> dict[str, str]:
        """Values given to secret-named flags (``--openai-api-key sk-…``), to redact like env secrets."""
        return secret_flags([*self.unattended, *self.flags])

    def command_line(self, *, continued: bool = False) -> list[str]:
        """This preset's command line with placeholders, for a first or a continued turn."""
        placeholders = TurnArgs(
            "<MESSAGE>",
            "<AGENT_DIR>/message-<N>.md",
            "<AGENT_DIR>",
            "<N>",
            "<SESSION>" if continued else "",
            "<NEW_SESSION>" if self.names_session and not continued else "",
        )
        return [self.executable, *self.arguments(placeholders)]

    def affecting_env(self, env: Mapping[str, str]) -> dict[str, str]:
        """The variables of ``env`` that change how this CLI behaves (values as they are)."""
        names = (*self.env_names, *COMMON_ENV)
        chosen = {
            name: value
            for name, value in env.items()
            if any(name == n or (n.endswith("_") and name.startswith(n)) for n in names)
            or (self.any_api_key and name.endswith("_API_KEY"))
        }
        chosen.update(self.extra_env(env))
        return dict(sorted(chosen.items()))

    def describe(self) -> dict[str, Any]:
        """What the manifest records about this agent (before any secret is redacted)."""
        return {
            "preset": self.preset,
            "title": self.title,
            "binary": self.executable,
            "model": self.model,
            "flags": self.flags,
            "unattended": self.unattended,
            "message_via": self.message_via,
            "command": self.command_line(),
            "continued_command": self.command_line(continued=True),
            "continuity": self.continuity,
            "docs": list(self.docs),
        }


def package_version_argv(script: str, package: str) -> list[str] | None:
    """How to ask a Python CLI's package its version: its script's ``#!`` interpreter reads the
    installed metadata (for a CLI with no ``--version``, or one too slow to start for it)."""
    try:
        first = Path(script).read_text(encoding="utf-8", errors="replace").split("\n", 1)[0]
    except OSError:
        return None
    interpreter = shlex.split(first[2:]) if first.startswith("#!") else []
    if not interpreter or "python" not in Path(interpreter[-1]).name:
        return None
    return [*interpreter, "-c", f"import importlib.metadata as m; print(m.version({package!r}))"]


def _relative(path: Path, base: Path) -> str:
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return str(path)


def resolve_binary(binary: str, path: str | None = None) -> str | None:
    """The full path of ``binary`` (a name looked up on ``path``, or a path), if it can be run."""
    return shutil.which(binary, path=path if path is not None else os.environ.get("PATH"))


def binary_version(argv: list[str] | None, timeout: float = VERSION_TIMEOUT) -> str | None:
    """The first line ``argv`` (a ``--version`` call) prints, or None if it fails."""
    if not argv:
        return None
    # In a HOME and folder of its own: asking a version must leave nothing in the user's HOME
    # (Gemini CLI 0.61.0 writes projects.json temporaries under ~/.gemini even for --version).
    with tempfile.TemporaryDirectory(prefix="changeup-version-") as home:
        try:
            done = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
                stdin=subprocess.DEVNULL,
                cwd=home,
                env={**os.environ, "HOME": home},
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
    lines = [line.strip() for line in (done.stdout or done.stderr).splitlines() if line.strip()]
    return lines[0] if done.returncode == 0 and lines else None


_SAFE_VERSION = re.compile(r"[^\x20-\x7e]")


def installed(preset: type[PresetAgent], options: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Whether the preset's CLI is installed here, where, and its version (None if it will not say)."""
    agent = preset(options)
    path = resolve_binary(agent.executable)
    version = binary_version(agent.version_argv(path)) if path else None
    return {
        "preset": agent.preset,
        "binary": agent.executable,
        "installed": path is not None,
        "path": path,
        "version": _SAFE_VERSION.sub("", version) if version else None,
        "title": agent.title,
    }
