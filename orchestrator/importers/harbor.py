"""Harbor tasks (harbor-framework/harbor's task format), multi-step or single, as challenges.

A multi-step task is ``task.toml`` with ``[[steps]]`` (each a ``name``, an optional
``min_reward``, ``[steps.agent]`` and ``[steps.verifier]`` with ``timeout_sec``;
``multi_step_reward_strategy`` ``mean`` or ``final``; ``[environment] workdir``), an
``environment/`` (its Dockerfile, built once for every step), an optional task-level
``tests/`` (shared helpers, and a fallback ``test.sh``) and ``steps/<name>/`` with
``instruction.md``, ``tests/`` (uploaded to ``/tests`` over the task's) and
``solution/solve.sh``. A step's verifier is ``bash /tests/test.sh``, run when the agent ends
its turn, writing ``/logs/verifier/reward.txt`` (or ``reward.json``). A task without
``[[steps]]`` is one step: ``instruction.md``, ``tests/`` and ``solution/`` at its root.

Each step becomes a ``command:`` phase whose verifier mounts the workspace where the task
expects it, its tests at ``/tests`` and a writable ``/logs/verifier``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from orchestrator.importers.draft import (
    Draft,
    SourceError,
    advance_on_turn_end,
    identifier,
    read_text,
    read_toml,
    slug,
)
from orchestrator.importers.environment import (
    Install,
    Needs,
    installs,
    missing_tool,
    on_this_machine,
    shell_functions,
)

__all__ = ["draft_harbor"]

COMMAND = "bash /tests/test.sh"
_USED_KEYS = {
    "schema_version",
    "version",
    "task",
    "metadata",
    "environment",
    "steps",
    "multi_step_reward_strategy",
    "agent",
    "verifier",
}


def _steps(config: dict[str, Any], source: Path, path: Path) -> list[tuple[str, Path, dict[str, Any]]]:
    """Each step's name, folder and settings, in order."""
    steps = config.get("steps")
    if steps is None:
        return [(source.name, source, config)]
    if not isinstance(steps, list) or not steps:
        raise SourceError(path, "steps: expected [[steps]] tables, each with a name")
    out = []
    for i, step in enumerate(steps):
        if not isinstance(step, dict) or not isinstance(step.get("name"), str):
            raise SourceError(path, f"steps[{i}]: expected a table with a name")
        folder = source / "steps" / step["name"]
        if not folder.is_dir():
            raise SourceError(
                folder, f"missing: the folder of step {step['name']!r} (steps[{i}] of task.toml)"
            )
        out.append((step["name"], folder, step))
    return out


def _timeout(settings: dict[str, Any], config: dict[str, Any], section: str) -> float | None:
    """A step's ``[steps.<section>] timeout_sec``, else the task's ``[<section>]`` one."""
    for table in (settings, config):
        value = (table.get(section) or {}).get("timeout_sec")
        if isinstance(value, int | float):
            return float(value)
    return None


def _tests(source: Path, folder: Path, phase: str, multi: bool, out: Draft) -> None:
    """The step's /tests: the task's tests/ with the step's own laid over it."""
    shared, own = source / "tests", folder / "tests"
    layers = [p for p in ([shared, own] if multi else [shared]) if p.is_dir()]
    if not any((layer / "test.sh").is_file() for layer in layers):
        where = own if multi else shared
        raise SourceError(
            where / "test.sh", f"missing: the verifier of step {folder.name!r} (nor in {shared})"
        )
    for layer in layers:
        for entry in sorted(layer.iterdir()):
            if entry.name != "__pycache__":
                out.copies[f"tests/{phase}/{entry.name}"] = entry


def _dockerfile(source: Path) -> tuple[str | None, str | None, str]:
    """The task's Dockerfile: its base image, its last ``WORKDIR`` and its ``RUN`` lines."""
    dockerfile = source / "environment" / "Dockerfile"
    if not dockerfile.is_file():
        return None, None, ""
    base = workdir = None
    runs: list[str] = []
    for line in read_text(dockerfile).replace("\\\n", " ").splitlines():
        words = line.split()
        keyword = words[0].upper() if words else ""
        if keyword == "FROM" and len(words) > 1:
            base = words[1]
        elif keyword == "WORKDIR" and len(words) > 1:
            workdir = words[1]
        elif keyword == "RUN":
            runs.append(line.split(None, 1)[1] if len(words) > 1 else "")
    return base, workdir, "\n".join(runs)


def _environment(source: Path, workdir: str, base: str | None, out: Draft) -> None:
    if not (source / "environment").is_dir():
        return
    image = (
        f"its own image (environment/Dockerfile, FROM {base})"
        if base
        else "its own environment (environment/)"
    )
    out.dropped.append(
        f"the container: the task needs {image}; changeup runs each step's test.sh in its sandbox with the "
        "tools testing.tools declares (found from the verifiers' files) and this machine's packages"
    )
    out.dropped.append(
        f"the starting files of {workdir}: what the image puts there is not in workspace/ (copy it in)"
    )


def _needs(source: Path, test_folders: list[Path], runs: str, out: Draft) -> dict[str, Any]:
    """What the verifiers need: the tools their scripts and Python run, the packages the image and
    the scripts install (pip ones become requirements; one this machine lacks is named with the line
    that installs it); said in the report."""
    needs = Needs()
    needs.tool("bash", f"the command {COMMAND}")
    found: list[Install] = installs(runs, "environment/Dockerfile")
    files = [
        p for f in test_folders for p in sorted(f.rglob("*")) if p.is_file() and "__pycache__" not in p.parts
    ]
    scripts = {p: p.read_text(encoding="utf-8", errors="replace") for p in files if _is_script(p)}
    # A verifier sources its helpers (lib.sh): their functions are no programs.
    functions = set().union(*map(shell_functions, scripts.values())) if scripts else set()
    for path in files:
        where = path.relative_to(source).as_posix()
        if path.suffix == ".py":
            needs.python(path, where)
        elif path in scripts:
            text = scripts[path]
            needs.script(text, where, functions)
            found += installs(text, where)
            if re.search(r"\buvx?\b|\b(curl|wget)\b[^\n]*https?://", text):
                out.dropped.append(
                    f"{where} downloads at run time (uv/uvx, curl or wget from the network), and the sandbox "
                    "has no network: install what it fetches on this machine, and run the program itself "
                    "(e.g. pytest, its packages in requirements)"
                )
    declared: dict[str, Any] = {}
    if needs.tools:
        declared["tools"] = sorted(needs.tools)
    if needs.data:
        declared["data"] = sorted(needs.data)
    for name, places in sorted(needs.tools.items()):
        out.mapped.append(f"{name} → testing.tools (found in {', '.join(places[:2])})")
        if not on_this_machine(name):
            out.dropped.append(missing_tool(name))
    requirements = sorted(
        {i.package for i in found if i.manager == "pip" and _package(i.package) != "pytest"}
    )
    if requirements:
        declared["requirements"] = requirements
        out.mapped.append(
            f"pip packages the image or a verifier installs → requirements: {', '.join(requirements)}"
        )
    for install in found:
        if install.manager != "pip" and not install.present():
            out.dropped.append(
                f"{install.where} installs {install.package} ({install.manager}); this machine lacks it: "
                f"`{install.command()}`"
            )
    return declared


def _is_script(path: Path) -> bool:
    """A shell script: ``*.sh``, or a file that starts with ``#!`` and is not Python."""
    if path.suffix == ".sh":
        return True
    with path.open("rb") as file:
        head = file.readline(200)
    return head.startswith(b"#!") and b"python" not in head


def _package(requirement: str) -> str:
    return re.split(r"[\s<>=!~\[;@]", requirement, maxsplit=1)[0].lower()


def draft_harbor(source: Path) -> Draft:
    """The challenge a Harbor task folder makes."""
    toml_path = source / "task.toml"
    config = read_toml(toml_path)
    steps = _steps(config, source, toml_path)
    multi = "steps" in config
    workdir = str((config.get("environment") or {}).get("workdir") or "/app")
    base, image_workdir, runs = _dockerfile(source)
    out = Draft("harbor", source, {})
    ids: list[str] = []
    for name, _, _ in steps:
        phase = identifier(name, "step")
        while phase in ids:
            phase += "_"
        ids.append(phase)
    strategy = str(config.get("multi_step_reward_strategy") or "mean")
    if strategy not in ("mean", "final"):
        raise SourceError(toml_path, f"multi_step_reward_strategy: expected mean or final, got {strategy!r}")
    messages, phases, stopping = [], [], []
    agent_limits, verifier_limits = [], []
    for n, ((name, folder, settings), phase) in enumerate(zip(steps, ids, strict=True), start=1):
        messages.append(read_text(folder / "instruction.md"))
        _tests(source, folder, phase, multi, out)
        counts = settings.get("contributes_to_mean", True) and (strategy == "mean" or n == len(steps))
        model: dict[str, Any] = {
            "id": phase,
            "title": name,
            "command": COMMAND,
            "verifier": {},
            "weight": 1 if counts else 0,
        }
        if workdir != "/app":
            model["verifier"]["workspace"] = workdir
        if image_workdir is not None:
            model["verifier"]["workdir"] = image_workdir
        phases.append(model)
        if "min_reward" in settings and n < len(steps):
            stopping.append((n, phase))
        agent_limits += [t for t in [_timeout(settings, config, "agent")] if t]
        verifier_limits += [t for t in [_timeout(settings, config, "verifier")] if t]
        solution = folder / "solution"
        if solution.is_dir():
            out.dropped.append(
                f"{solution.relative_to(source)}/: a script (solve.sh) run in the task's container, and a "
                "changeup reference is files; it is not run at import. Write solutions/reference/"
                f"{phase}/ by hand (e.g. the workspace after solve.sh ran) so calibration can run"
            )
    # A step with min_reward stops the trial when it falls short: the session ends, no "moving on".
    stopped = {f"{phase}_moving_on" for _, phase in stopping}
    triggers = [t for t in advance_on_turn_end(ids, messages, "step") if t["id"] not in stopped]
    task = config.get("task") or {}
    name = str(task.get("name") or source.name)
    challenge: dict[str, Any] = {
        "id": slug(name.split("/")[-1]),
        "title": str(task.get("description") or name),
        "pattern": "escalation",
        "initial_briefing": messages[0],
        "phases": phases,
        "triggers": triggers,
        "testing": {"tools": ["bash"]},  # every verifier is `bash /tests/test.sh`, in the tests' own root
    }
    if stopping:
        challenge["end"] = " or ".join(f"(turns >= {n} and tests_not_pass({p}))" for n, p in stopping)
    limits: dict[str, Any] = {}
    if verifier_limits:
        limits["test_run"] = max(verifier_limits)
    if agent_limits:
        limits["agent_turn"] = max(agent_limits)
    if limits:
        challenge["limits"] = limits
    out.challenge = challenge
    out.mapped += [
        ("[[steps]], in order → phases " if multi else "the task (one step) → phase ") + ", ".join(ids),
        "each step's instruction.md → the briefing (the first) and the message of the trigger that "
        "unlocks the next",
        "the task's tests/ with the step's tests/ over it → tests/<phase>/, run as "
        f"`{COMMAND}` with verifier mounts {workdir} (workspace), /tests, /logs/verifier "
        "(reward.txt or reward.json)",
        *(
            [f"environment/Dockerfile WORKDIR {image_workdir} → each verifier's workdir (where it starts)"]
            if image_workdir is not None
            else []
        ),
        "the agent's turn ending → the step's verdict: passed, the next instruction; not passed, the next "
        "instruction after 'moving on' (a deadline trigger)",
        f"multi_step_reward_strategy {strategy} → phase weights "
        + ", ".join(f"{p['id']} {p['weight']}" for p in phases),
    ]
    if stopping:
        out.mapped.append("min_reward → end: the session ends when that step's turn ends without a pass")
        out.dropped.append(
            "min_reward's threshold: a step is passed or not, so any min_reward means 'must pass'"
        )
    if verifier_limits:
        out.mapped.append("verifier timeout_sec (a step's, else the task's) → limits.test_run (the longest)")
    if agent_limits:
        out.mapped.append("agent timeout_sec (a step's, else the task's) → limits.agent_turn (the longest)")
    if multi and (source / "instruction.md").is_file():
        out.dropped.append("the task-level instruction.md: Harbor does not send it in a multi-step task")
    _environment(source, workdir, base, out)
    folders = [source / "tests", *(folder / "tests" for _, folder, _ in steps if multi)]
    declared = _needs(source, [f for f in folders if f.is_dir()], runs, out)
    if "requirements" in declared:
        challenge["requirements"] = declared.pop("requirements")
    if declared:
        challenge["testing"] = declared
    resources = sorted(set(config.get("environment") or {}) - {"workdir"})
    if resources:
        out.dropped.append(
            f"[environment] {', '.join(resources)}: changeup's sandbox has its own limits and no network"
        )
    unused = sorted(set(config) - _USED_KEYS)
    verifier = config.get("verifier") or {}
    if verifier.get("env"):
        out.dropped.append("[verifier] env: changeup sets no variables for a verifier")
    if unused:
        out.dropped.append("task.toml keys " + ", ".join(unused))
    if not any((f / "solution").is_dir() for _, f, _ in steps):
        out.dropped.append(
            "a reference solution: none in the task; calibration needs solutions/reference/<phase>/"
        )
    return out
