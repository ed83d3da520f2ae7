"""Presets for real coding agents: each drives one CLI's documented non-interactive mode.

A preset is a :class:`~orchestrator.agents.shell.CommandAgent` that runs its CLI once per
turn with an argument list (no shell), in the workspace, and

- continues the same conversation on later messages where the CLI can (Claude Code's
  ``--resume <session id>``, ``codex exec resume <thread id>``, Aider's restored chat history,
  Gemini CLI's ``--resume <session id>``, OpenHands' ``--resume <conversation id>``); where it
  cannot (mini-swe-agent), the earlier messages are sent again, as context, before the new one;
- keeps every turn's output in ``agent/turn-NNN.*`` (secrets redacted), inlines it into the
  event log as ``agent.output``, and parses it where the CLI emits structured events;
- ends every turn with a ``turn.summary`` record: time, tokens, cost (``None`` where the CLI
  does not say), the final message, and the id that continues the conversation.

Options (``--agent-option KEY=VALUE``): ``binary``, ``model``, ``flags``, ``unattended`` — see
:data:`OPTIONS`. docs/agents.md lists the exact command line of each preset and its sources.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import anyio

from orchestrator.agents.base import AgentContext, AgentUnavailable, Message, message_text
from orchestrator.agents.redaction import Redactor, is_secret_name
from orchestrator.agents.shell import CommandAgent, agent_env
from orchestrator.agents.transcript import (
    AiderText,
    ClaudeStreamJson,
    CodexJsonl,
    GeminiJson,
    LineParser,
    OpenHandsJsonl,
    Transcript,
    Usage,
    mini_trajectory_usage,
)
from orchestrator.challenge import Challenge
from triggers.records import AgentOutput, TurnSummary

__all__ = [
    "OPTIONS",
    "PRESETS",
    "Aider",
    "ClaudeCode",
    "Codex",
    "GeminiCli",
    "MiniSweAgent",
    "OpenHands",
    "PresetAgent",
    "PresetOptionError",
    "binary_version",
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


@dataclass(frozen=True, slots=True)
class TurnArgs:
    """What a turn's command line is made of."""

    prompt: str  # the message text (with earlier messages, where the CLI cannot continue)
    message_file: str  # the same text, in a file
    agent_dir: str  # the run's agent/ folder
    tag: str  # the turn's number, 001, 002, …
    session: str  # what continues the conversation; "" on a first (or not continued) turn


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
        self._folder = Path()
        self._redact = Redactor({})
        self._transcript: Transcript | None = None
        self._began = 0.0

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
        tag = f"{self._turns:03d}"
        return [
            self.executable,
            *self.arguments(TurnArgs(prompt, str(message_file), str(ctx.folder), tag, session)),
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
            _redact_file(path, self._redact)
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
        found: dict[str, str] = {}
        args = [*self.unattended, *self.flags]
        for index, arg in enumerate(args):
            name, eq, value = arg.partition("=")
            if not name.startswith("-") or not is_secret_name(name.lstrip("-")):
                continue
            if eq:
                found[name] = value
            elif index + 1 < len(args):
                found[name] = args[index + 1]
        return found

    def command_line(self, *, continued: bool = False) -> list[str]:
        """This preset's command line with placeholders, for a first or a continued turn."""
        placeholders = TurnArgs(
            "<MESSAGE>", "<AGENT_DIR>/message-<N>.md", "<AGENT_DIR>", "<N>", "<SESSION>" if continued else ""
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


def _relative(path: Path, base: Path) -> str:
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return str(path)


def _redact_file(path: Path, redact: Redactor) -> None:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return
    cleaned = redact(text)
    if cleaned != text:
        path.write_text(cleaned, encoding="utf-8")


def resolve_binary(binary: str, path: str | None = None) -> str | None:
    """The full path of ``binary`` (a name looked up on ``path``, or a path), if it can be run."""
    return shutil.which(binary, path=path if path is not None else os.environ.get("PATH"))


def binary_version(argv: list[str] | None, timeout: float = VERSION_TIMEOUT) -> str | None:
    """The first line ``argv`` (a ``--version`` call) prints, or None if it fails."""
    if not argv:
        return None
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=timeout, check=False, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = [line.strip() for line in (done.stdout or done.stderr).splitlines() if line.strip()]
    return lines[0] if done.returncode == 0 and lines else None


# --- the presets -----------------------------------------------------------------------------


class ClaudeCode(PresetAgent):
    """Claude Code in print mode, streaming JSON events; later turns ``--resume`` its session."""

    preset = "claude-code"
    binary = "claude"
    title = "Claude Code"
    docs = (
        "https://docs.anthropic.com/en/docs/claude-code/headless (print mode, stream-json, --resume)",
        "https://docs.anthropic.com/en/docs/claude-code/cli-reference (--model, permission flags)",
    )
    continuity = "--resume <session_id>, the id in its stream-json output (init and result events)"
    message_via = "stdin"
    env_names = ("ANTHROPIC_", "CLAUDE_", "IS_SANDBOX", "DISABLE_", "MAX_THINKING_TOKENS", "AWS_", "VERTEX_")
    home_files = (".claude.json", ".claude/settings.json", ".claude/.credentials.json", ".claude/CLAUDE.md")
    unattended_default = ("--dangerously-skip-permissions",)
    transcript_ext = "jsonl"

    def arguments(self, turn: TurnArgs) -> list[str]:
        """``claude -p --output-format stream-json --verbose …``; the message is on stdin."""
        return [
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            *self.unattended,
            *(["--model", self.model] if self.model else []),
            *(["--resume", turn.session] if turn.session else []),
            *self.flags,
        ]

    def parser(self) -> LineParser:
        """stream-json."""
        return ClaudeStreamJson()


class Codex(PresetAgent):
    """``codex exec --json``; later turns ``codex exec … resume <thread id>``."""

    preset = "codex"
    binary = "codex"
    title = "Codex CLI"
    docs = (
        "https://github.com/openai/codex/blob/main/docs/exec.md (exec, --json events, exec resume)",
        "https://github.com/openai/codex/blob/main/codex-rs/exec/src/cli.rs (PROMPT '-': read stdin)",
    )
    continuity = "codex exec resume <thread_id> -, the id of its thread.started event"
    message_via = "stdin"
    env_names = ("OPENAI_", "CODEX_")
    home_files = (".codex/config.toml", ".codex/auth.json", ".codex/AGENTS.md")
    unattended_default = ("--sandbox", "workspace-write")
    transcript_ext = "jsonl"

    def arguments(self, turn: TurnArgs) -> list[str]:
        """``codex exec --json --sandbox workspace-write … [resume ID] -``; the message is on stdin."""
        return [
            "exec",
            "--json",
            *self.unattended,
            *(["--model", self.model] if self.model else []),
            *self.flags,
            *(["resume", turn.session] if turn.session else []),
            "-",
        ]

    def parser(self) -> LineParser:
        """JSONL events."""
        return CodexJsonl()


AIDER_HISTORY = "aider.chat.history.md"
AIDER_INPUT_HISTORY = "aider.input.history"


class Aider(PresetAgent):
    """``aider --message-file``; its chat history lives in the agent folder and is restored."""

    preset = "aider"
    binary = "aider"
    title = "Aider"
    docs = (
        "https://aider.chat/docs/scripting.html (--message / --message-file, then exit)",
        "https://aider.chat/docs/config/options.html (--yes-always, history files, --restore-chat-history)",
    )
    continuity = "--restore-chat-history, from its chat history file in the run's agent/ folder"
    message_via = "file"
    _offset = 0  # where this turn's part of the chat history starts
    env_names = ("AIDER_",)
    home_files = (".aider.conf.yml", ".aider.model.settings.yml", ".aider.model.metadata.json")
    any_api_key = True
    unattended_default = ("--yes-always",)

    def arguments(self, turn: TurnArgs) -> list[str]:
        """``aider --message-file FILE --yes-always …``; nothing on stdin."""
        return [
            "--message-file",
            turn.message_file,
            *self.unattended,
            "--no-pretty",
            "--no-fancy-input",
            "--no-check-update",
            "--no-analytics",
            "--no-gitignore",
            "--chat-history-file",
            f"{turn.agent_dir}/{AIDER_HISTORY}",
            "--input-history-file",
            f"{turn.agent_dir}/{AIDER_INPUT_HISTORY}",
            *(["--restore-chat-history"] if turn.session else []),
            *(["--model", self.model] if self.model else []),
            *self.flags,
        ]

    def continues(self) -> bool:
        """Continues when it left a chat history to restore."""
        history = self._folder / AIDER_HISTORY
        return history.is_file() and history.stat().st_size > 0

    def command_for(self, ctx: AgentContext, prompt: str, message_file: Path) -> list[str]:
        """``--restore-chat-history`` stands for the session."""
        if self._continuing:
            self._session = AIDER_HISTORY
        return super().command_for(ctx, prompt, message_file)

    def parser(self) -> LineParser:
        """Its ``Tokens:``/``Cost:`` lines."""
        return AiderText()

    def turn_started(self, ctx: AgentContext) -> None:
        """Remember where this turn's part of the chat history starts."""
        history = ctx.folder / AIDER_HISTORY
        self._offset = history.stat().st_size if history.is_file() else 0

    def read_usage(self, ctx: AgentContext, usage: Usage) -> Usage:
        """The final message is what it answered, from this turn's part of the chat history."""
        history = ctx.folder / AIDER_HISTORY
        try:
            with history.open("rb") as handle:
                handle.seek(self._offset)
                added = handle.read().decode("utf-8", "replace")
        except OSError:
            return usage
        said = [
            line
            for line in added.splitlines()
            if not line.startswith(("#### ", "> ", "# aider chat started"))
            and line.rstrip() not in ("####", ">")
        ]
        usage.final_message = "\n".join(said).strip() or None
        usage.session = ""
        return usage

    def files_to_redact(self, ctx: AgentContext) -> list[Path]:
        """Its history files."""
        return [ctx.folder / AIDER_HISTORY, ctx.folder / AIDER_INPUT_HISTORY]


class GeminiCli(PresetAgent):
    """``gemini --output-format json --prompt=…``; later turns ``--resume <session id>``."""

    preset = "gemini-cli"
    binary = "gemini"
    title = "Gemini CLI"
    docs = (
        "https://github.com/google-gemini/gemini-cli/blob/main/docs/cli/headless.md (--prompt, json)",
        "https://github.com/google-gemini/gemini-cli/blob/main/docs/cli/cli-reference.md (--approval-mode)",
        "https://github.com/google-gemini/gemini-cli/blob/main/docs/cli/session-management.md (--resume ID)",
    )
    continuity = "--resume <session_id>, the session_id of its JSON output"
    message_via = "argument"
    env_names = ("GEMINI_", "GOOGLE_")
    home_files = (
        ".gemini/settings.json",
        ".gemini/oauth_creds.json",
        ".gemini/google_accounts.json",
        ".gemini/GEMINI.md",
        ".gemini/.env",
    )
    unattended_default = ("--approval-mode", "yolo")
    transcript_ext = "json"

    def arguments(self, turn: TurnArgs) -> list[str]:
        """``gemini --output-format json --approval-mode yolo … --prompt=MESSAGE``.

        ``--prompt=`` rather than ``-p MESSAGE``: a message starting with ``-`` stays a value.
        """
        return [
            "--output-format",
            "json",
            *self.unattended,
            *(["--model", self.model] if self.model else []),
            *(["--resume", turn.session] if turn.session else []),
            *self.flags,
            f"--prompt={turn.prompt}",
        ]

    def parser(self) -> LineParser:
        """One JSON object."""
        return GeminiJson()


class MiniSweAgent(PresetAgent):
    """``mini -y --exit-immediately -t …``: one task per run, so earlier messages are resent."""

    preset = "mini-swe-agent"
    binary = "mini"
    title = "mini-swe-agent"
    docs = (
        "https://mini-swe-agent.com/latest/usage/mini/ (-t, -y, -m, -o, --exit-immediately)",
        "src/minisweagent/run/mini.py and run/extra/config.py (MSWEA_CONFIGURED skips first-run setup)",
    )
    continuity = "none: each run is a new task, so earlier messages are sent again before the new one"
    message_via = "argument"
    env_names = ("MSWEA_", "LITELLM_")
    home_files = (".config/mini-swe-agent/.env",)
    any_api_key = True
    unattended_default = ("-y",)

    def arguments(self, turn: TurnArgs) -> list[str]:
        """``mini -y --exit-immediately -o TRAJECTORY … -t MESSAGE``."""
        return [
            *self.unattended,
            "--exit-immediately",
            "-o",
            f"{turn.agent_dir}/mini-{turn.tag}.traj.json",
            *(["-m", self.model] if self.model else []),
            *self.flags,
            "-t",
            turn.prompt,
        ]

    def continues(self) -> bool:
        """It cannot."""
        return False

    def extra_env(self, env: Mapping[str, str]) -> dict[str, str]:
        """Skip the interactive first-run setup."""
        return {} if env.get("MSWEA_CONFIGURED") else {"MSWEA_CONFIGURED": "true"}

    def read_usage(self, ctx: AgentContext, usage: Usage) -> Usage:
        """Cost, model and last message from its trajectory file."""
        return mini_trajectory_usage(self._trajectory(ctx), self._redact)

    def files_to_redact(self, ctx: AgentContext) -> list[Path]:
        """Its trajectory."""
        return [self._trajectory(ctx)]

    def _trajectory(self, ctx: AgentContext) -> Path:
        return ctx.folder / f"mini-{self._turns:03d}.traj.json"

    def version_argv(self, path: str) -> list[str] | None:
        """``mini`` has no ``--version``: ask the Python its script runs on for the package's version."""
        try:
            first = Path(path).read_text(encoding="utf-8", errors="replace").split("\n", 1)[0]
        except OSError:
            return None
        interpreter = shlex.split(first[2:]) if first.startswith("#!") else []
        if not interpreter or "python" not in Path(interpreter[-1]).name:
            return None
        code = "import importlib.metadata as m; print(m.version('mini-swe-agent'))"
        return [*interpreter, "-c", code]


class OpenHands(PresetAgent):
    """``openhands --headless --json -f FILE``; later turns ``--resume <conversation id>``."""

    preset = "openhands"
    binary = "openhands"
    title = "OpenHands CLI"
    docs = (
        "https://docs.openhands.dev/openhands/usage/cli/headless (--headless, --json, -t/-f)",
        "https://docs.openhands.dev/openhands/usage/cli/quick-start (--resume ID)",
        "OpenHands-CLI README (--override-with-envs applies LLM_MODEL, LLM_API_KEY, LLM_BASE_URL)",
    )
    continuity = "--resume <conversation id>, the id it prints as 'Conversation ID: …' when it exits"
    message_via = "file"
    env_names = ("LLM_", "OPENHANDS_")
    home_files = (".openhands/agent_settings.json", ".openhands/cli_config.json", ".openhands/mcp.json")
    any_api_key = True

    def arguments(self, turn: TurnArgs) -> list[str]:
        """``openhands --headless --json --override-with-envs [--resume ID] … -f FILE``."""
        return [
            "--headless",
            "--json",
            "--override-with-envs",
            *self.unattended,
            *(["--resume", turn.session] if turn.session else []),
            *self.flags,
            "-f",
            turn.message_file,
        ]

    def extra_env(self, env: Mapping[str, str]) -> dict[str, str]:
        """The model goes in ``LLM_MODEL`` (applied by ``--override-with-envs``)."""
        return {"LLM_MODEL": self.model} if self.model else {}

    def parser(self) -> LineParser:
        """JSONL events, then the conversation id."""
        return OpenHandsJsonl()


#: Presets by ``--agent`` name.
PRESETS: dict[str, type[PresetAgent]] = {
    cls.preset: cls for cls in (ClaudeCode, Codex, Aider, GeminiCli, MiniSweAgent, OpenHands)
}

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
