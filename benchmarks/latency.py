"""Trigger latency, measured from outside: an agent's write that makes phase 1 pass → the pivot.

Each trial runs ``changeup run`` as a user would (a subprocess of the real CLI, with its
real watcher, debounce, snapshots, sandbox, hardened pytest, engine and delivery) on a
copy of ``challenges/export-time`` whose phase-2 message is delivered as an interrupt. The
agent is a ``command:`` shell script:

- on the briefing it waits for the session's first hidden test run to be over, prints
  ``WRITE <time>``, writes the phase-1 solution and keeps its turn open (it sleeps), so
  the write reaches the session through the file watcher, debounce included;
- the pivot interrupts that turn; the next turn starts with the pivot and prints
  ``PIVOT <time>`` first thing.

Both times come from the agent's own clock (``date +%s.%N``) and reach the event log as
its output. Write → pivot is the difference.

The baseline is what a user would otherwise run: plain ``python -m pytest`` (plugin
autoload off) on the same files, a copy of the trial's final workspace with phase 1's
hidden tests, timed in the same process right after the trial. Overhead = write → pivot
minus plain pytest, per trial; the median and p95 of that are the figures.

    python benchmarks/latency.py [--trials N] [--warmup N] [--raw FILE]
    python benchmarks/latency.py --pooled FILE [FILE ...]

``--raw FILE`` adds every trial's times (seconds) to FILE as JSON lines, for pooling the
trials of several runs (an A/B of two checkouts run in turns on the same machine, say);
``--pooled`` prints the figures of each such file, side by side, and runs no trial.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHALLENGE = ROOT / "challenges" / "export-time"
TARGET = "export_time.py"
GOAL_MEDIAN_MS, GOAL_P95_MS = 100.0, 250.0
#: How long the agent waits before its write, so the write never queues behind the first run.
SETTLE = 2.0
TRIAL_TIMEOUT = 120.0

AGENT = """\
#!/bin/sh
# The benchmark's agent: the briefing writes phase 1 and keeps the turn open; the pivot is timed.
if grep -q 'Update format_export_time' "$CHANGEUP_MESSAGE_FILE"; then
  echo "PIVOT $(date +%s.%N)"
  exit 0
fi
sleep {settle}
echo "WRITE $(date +%s.%N)"
cat > {target} <<'SOLUTION'
{solution}SOLUTION
exec sleep 60
"""


@dataclass(frozen=True, slots=True)
class Trial:
    """One trial: write → pivot, the plain pytest run, and where the time went (seconds)."""

    end_to_end: float
    plain: float
    stages: dict[str, float]


def bench_challenge(folder: Path) -> Path:
    """A copy of export-time whose pivot (``revision``) interrupts the agent's turn."""
    target = folder / "export-time"
    shutil.copytree(CHALLENGE, target)
    spec = target / "challenge.yaml"
    text = spec.read_text()
    marker = "      kind: revision\n"
    if marker not in text:
        raise SystemExit(f"{spec}: cannot find {marker.strip()!r} to make the pivot interrupt")
    spec.write_text(text.replace(marker, marker + "      delivery: interrupt\n", 1))
    return target


def agent_script(folder: Path) -> Path:
    """The shell agent, with the phase-1 reference solution inlined."""
    solution = (CHALLENGE / "solutions" / "reference" / "phase1" / TARGET).read_text()
    script = folder / "agent.sh"
    script.write_text(AGENT.format(settle=SETTLE, target=TARGET, solution=solution))
    script.chmod(0o755)
    return script


def _said(records: list[dict[str, object]], word: str) -> tuple[float, float]:
    """(agent clock, session clock) of the agent's ``WORD <time>`` line."""
    for record in records:
        if record["kind"] != "agent.output":
            continue
        for line in str(record["text"]).splitlines():
            if line.startswith(word + " "):
                return float(line.split()[1]), float(record["t"])  # type: ignore[arg-type]
    raise LookupError(f"the agent never said {word}")


def _first(records: list[dict[str, object]], kind: str, after: float, **match: object) -> dict[str, object]:
    for record in records:
        wanted = all(record.get(key) == value for key, value in match.items())
        if record["kind"] == kind and float(record["t"]) >= after and wanted:  # type: ignore[arg-type]
            return record
    raise LookupError(f"no {kind} {match} after {after:.3f}s")


def run_trial(challenge: Path, script: Path, scratch: Path) -> Trial:
    """One ``changeup run``; then plain pytest on its final workspace."""
    out = scratch / "runs"
    shutil.rmtree(out, ignore_errors=True)
    command = ["run", str(challenge), "--agent", f"command:{script}", "--out", str(out), "--quiet"]
    done = subprocess.run(
        [sys.executable, "-m", "orchestrator", *command],
        capture_output=True,
        text=True,
        timeout=TRIAL_TIMEOUT,
        check=False,
    )
    folders = list(out.iterdir()) if out.is_dir() else []
    if not folders:
        raise SystemExit(f"changeup run made no run folder (exit {done.returncode}):\n{done.stderr[-3000:]}")
    folder = folders[0]
    lines = (folder / "events.jsonl").read_text().splitlines()[1:]
    records = [json.loads(line) for line in lines]
    try:
        (wrote, wrote_t), (pivot, pivot_t) = _said(records, "WRITE"), _said(records, "PIVOT")
        changed = _first(records, "fs.changed", wrote_t)
        fired = _first(records, "trigger.fired", wrote_t, trigger="revision")
        started = [r for r in records if r["kind"] == "tests.started" and r["t"] <= fired["t"]][-1]
        result = [r for r in records if r["kind"] == "tests.result" and r["t"] <= fired["t"]][-1]
        delivered = _first(records, "message.delivered", wrote_t, trigger="revision")
    except LookupError as error:
        raise SystemExit(f"trial did not time a pivot ({error}); see {folder}") from None
    stages = {
        "write -> fs.changed": float(changed["t"]) - wrote_t,  # type: ignore[arg-type]
        "fs.changed -> tests.started": float(started["t"]) - float(changed["t"]),  # type: ignore[arg-type]
        "tests.started -> result": float(result["t"]) - float(started["t"]),
        "  of which the test run": float(result["seconds"]),
        "result -> delivered": float(delivered["t"]) - float(result["t"]),  # type: ignore[arg-type]
        "delivered -> agent prints": pivot_t - float(delivered["t"]),  # type: ignore[arg-type]
    }
    plain = plain_pytest(folder / "workspace", challenge / "tests" / "phase1", scratch / "plain")
    return Trial(pivot - wrote, plain, stages)


def plain_pytest(workspace: Path, tests: Path, scratch: Path) -> float:
    """``python -m pytest`` on a copy of ``workspace`` with ``tests`` beside it; its wall time."""
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(workspace, scratch / "ws", ignore=shutil.ignore_patterns(".git", "__pycache__"))
    shutil.copytree(tests, scratch / "hidden")
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(scratch / "hidden")]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=scratch / "ws", env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"plain pytest did not pass phase 1:\n{done.stdout[-2000:]}")
    return elapsed


def p95(values: list[float]) -> float:
    """The 95th percentile (linear interpolation between closest ranks)."""
    ordered = sorted(values)
    rank = 0.95 * (len(ordered) - 1)
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def quartiles(values: list[float]) -> tuple[float, float]:
    """The first and third quartiles (the spread around the median)."""
    low, _, high = statistics.quantiles(values, n=4, method="inclusive")
    return low, high


def pooled(files: list[Path]) -> None:
    """Each ``--raw`` file's trials, pooled: median, quartiles and p95 of each figure, in ms."""
    figures = ("end_to_end", "  of which the test run", "plain", "delivered -> agent prints")
    print(f"{'':28}{'trials':>7}{'median':>9}{'q1':>8}{'q3':>8}{'p95':>8}   (ms)")
    for file in files:
        trials = [json.loads(line) for line in file.read_text().splitlines() if line.strip()]
        print(file)
        rows = {name: [t[name] * 1000 for t in trials] for name in figures}
        rows["overhead"] = [(t["end_to_end"] - t["plain"]) * 1000 for t in trials]
        for name, values in rows.items():
            low, high = quartiles(values) if len(values) > 1 else (values[0], values[0])
            label = "write -> pivot" if name == "end_to_end" else name.strip()
            median = statistics.median(values)
            print(f"  {label:26}{len(values):7}{median:9.1f}{low:8.1f}{high:8.1f}{p95(values):8.1f}")


def main() -> None:
    """Run the trials and print the table."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=1, help="untimed trials run first (default 1)")
    parser.add_argument("--raw", type=Path, help="append each trial's times to this file (JSON lines)")
    parser.add_argument("--pooled", type=Path, nargs="+", help="print the figures of --raw files; no trial")
    args = parser.parse_args()
    if args.pooled:
        for file in args.pooled:
            if not file.is_file():
                parser.error(f"{file}: no such file (--pooled reads the --raw files of earlier runs)")
        pooled(args.pooled)
        return
    if args.trials < 1:
        parser.error("--trials must be at least 1")

    progress = sys.stderr.isatty()
    trials: list[Trial] = []
    with tempfile.TemporaryDirectory(prefix="changeup-latency-") as tmp:
        scratch = Path(tmp)
        challenge, script = bench_challenge(scratch), agent_script(scratch)
        for _ in range(args.warmup):
            run_trial(challenge, script, scratch)
        started = time.perf_counter()
        for n in range(args.trials):
            trials.append(run_trial(challenge, script, scratch))
            if progress:
                print(f"\rtrial {n + 1}/{args.trials}", end="", file=sys.stderr, flush=True)
        wall = time.perf_counter() - started
    if progress:
        print("\r\033[K", end="", file=sys.stderr, flush=True)

    if args.raw:
        with args.raw.open("a") as raw:
            for t in trials:
                raw.write(json.dumps({"end_to_end": t.end_to_end, "plain": t.plain, **t.stages}) + "\n")
    ms = 1000.0
    overhead = [(t.end_to_end - t.plain) * ms for t in trials]
    end_to_end = [t.end_to_end * ms for t in trials]
    plain = [t.plain * ms for t in trials]
    median, high = statistics.median(overhead), p95(overhead)
    print(f"python benchmarks/latency.py --trials {args.trials} --warmup {args.warmup}")
    print(f"challenge: export-time (pivot as an interrupt)   trials: {len(trials)}   wall: {wall:.1f}s")
    print(f"{'':32}{'median ms':>11}{'p95 ms':>10}")
    print(f"{'write -> pivot (agent clock)':32}{statistics.median(end_to_end):11.1f}{p95(end_to_end):10.1f}")
    print(f"{'plain python -m pytest':32}{statistics.median(plain):11.1f}{p95(plain):10.1f}")
    print(f"{'overhead':32}{median:11.1f}{high:10.1f}")
    print("where the time went (event log, session clock):")
    for stage in trials[0].stages:
        values = [t.stages[stage] * ms for t in trials]
        print(f"  {stage:30}{statistics.median(values):11.1f}{p95(values):10.1f}")
    verdict = "met" if median < GOAL_MEDIAN_MS and high < GOAL_P95_MS else "NOT met"
    print(f"goal: overhead median < {GOAL_MEDIAN_MS:.0f} ms, p95 < {GOAL_P95_MS:.0f} ms: {verdict}")


if __name__ == "__main__":
    main()
