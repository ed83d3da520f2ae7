"""Many sessions at once on one machine: a matrix of ``--sessions`` concurrent sessions, against one alone.

Runs ``normalize-tags`` with the scripted agent through the real CLI, in subprocesses. The
baseline is what a user would otherwise run: ``changeup run challenges/normalize-tags --agent
scripted``, one session, timed ``--single`` times in the same run (the median stands for one
session). Then ``changeup run challenges/normalize-tags --agent scripted --trials N
--concurrency N --out RESULTS``: N sessions at once, each in a process of its own forked from
one server (``orchestrator/matrix/session_process.py``). Every run folder is then checked: its
log whole (no torn line, its last record written) and replaying to the same decisions.
Printed: the matrix's wall time beside N x one session's, and changeup's own CPU time per
session: the driver's (``RUSAGE_SELF`` as it exits) and each session process's own (the last
line of its ``session.log``); the hidden test runs, the agents and git, their children, apart.
Goal: the matrix's wall time at most ``GOAL_SHARE`` of N x one session, and changeup's own CPU
under ``GOAL_CPU`` s per session.

    python benchmarks/concurrency.py [--sessions N] [--single N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from orchestrator.challenge.loader import load_challenge
from orchestrator.log.eventlog import LogReader, read_log
from orchestrator.scoring.report import finished
from orchestrator.session.replay import replay_records

REPO = Path(__file__).resolve().parents[1]
CHALLENGE = "challenges/normalize-tags"
GOAL_SHARE = 0.5  # of N x one session
GOAL_CPU = 0.5  # changeup's own CPU seconds per session
#: Runs the CLI as `changeup` does, and writes this process's own CPU and its children's as it exits.
WRAPPER = """\
import atexit, json, resource, sys
def _report(path):
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(path, "w") as out:
        json.dump({"own": own.ru_utime + own.ru_stime, "children": kids.ru_utime + kids.ru_stime}, out)
atexit.register(_report, sys.argv[1])
from orchestrator.present.cli import main
sys.argv = ["changeup", *sys.argv[2:]]
main()
"""


def changeup(args: list[str], usage: Path) -> tuple[float, dict[str, float]]:
    """Run ``changeup ARGS`` to its end; its wall time and CPU seconds (its own and its children's)."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", WRAPPER, str(usage), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"changeup {' '.join(args)} exited {done.returncode}:\n{done.stderr[-3000:]}")
    cpu: dict[str, float] = json.loads(usage.read_text())
    return wall, cpu


def check_run(folder: Path) -> tuple[bool, bool]:
    """Whether the run's log is whole (no torn line, its last record in), and whether it replays."""
    contents = read_log(folder / "events.jsonl")
    whole = not contents.torn and finished(contents.entries)
    challenge = load_challenge(folder / "challenge")
    log = LogReader(folder / "events.jsonl")
    result = replay_records(challenge.spec, log, torn=lambda: log.torn)
    return whole, result.divergence is None and result.events > 0


def session_cpu(folder: Path) -> float:
    """The CPU seconds a run's session process used itself, as its ``session.log`` ends by saying."""
    last = (folder / "session.log").read_text().strip().splitlines()[-1]
    return float(last.rpartition("its own CPU: ")[2].removesuffix(" s"))


def measure(root: Path, sessions: int, single: int) -> None:
    """Time one session alone ``single`` times, then ``sessions`` at once; print the table."""
    alone = []
    for number in range(single):
        wall, _ = changeup(
            ["run", CHALLENGE, "--agent", "scripted", "--out", str(root / f"one-{number}"), "-q"],
            root / "one.json",
        )
        alone.append(wall)
    one = statistics.median(alone)
    results = root / "results"
    matrix = ["run", CHALLENGE, "--agent", "scripted", "--trials", str(sessions)]
    wall, cpu = changeup(
        [*matrix, "--concurrency", str(sessions), "--out", str(results), "-q"], root / "many.json"
    )
    folders = sorted((results / "runs").iterdir())
    checks = [check_run(folder) for folder in folders]
    whole, replayed = sum(w for w, _ in checks), sum(r for _, r in checks)
    baseline = sessions * one
    processes = sum(session_cpu(folder) for folder in folders)
    per_session = (cpu["own"] + processes) / sessions
    print(
        f"challenge: normalize-tags, scripted agent   sessions: {sessions} at once   "
        f"one alone: median of {single}"
    )
    print(f"{'':34}{'wall s':>9}{'of N x one':>12}")
    print(f"{'one session alone (median)':34}{one:9.2f}")
    print(f"{f'{sessions} x one session':34}{baseline:9.2f}{1:12.0%}")
    print(f"{f'{sessions} sessions at once':34}{wall:9.2f}{wall / baseline:12.0%}")
    print(
        f"changeup's own CPU: {cpu['own'] + processes:.2f} s, {per_session:.3f} s per session "
        f"(the driver {cpu['own']:.2f} s, the session processes {processes:.2f} s; their children: "
        f"hidden test runs, agents, git: {cpu['children'] - processes:.2f} s)"
    )
    print(f"run folders: {len(checks)} of {sessions}; logs whole: {whole}; replay agrees: {replayed}")
    print(f"load average (1, 5, 15 min): {', '.join(f'{v:.2f}' for v in os.getloadavg())}")
    met = (
        wall <= GOAL_SHARE * baseline
        and per_session < GOAL_CPU
        and whole == replayed == len(checks) == sessions
    )
    print(
        f"goal: all {sessions} whole and replaying, wall <= {GOAL_SHARE:.0%} of {sessions} x one session, "
        f"changeup's CPU < {GOAL_CPU} s per session: {'met' if met else 'NOT met'}"
    )
    print(f"reproduce: .venv/bin/python benchmarks/concurrency.py --sessions {sessions} --single {single}")


def main() -> None:
    """Parse the options and run the benchmark in a temporary folder."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=50, help="sessions at once")
    parser.add_argument("--single", type=int, default=3, help="runs of one session alone, for the baseline")
    args = parser.parse_args()
    if args.sessions < 1 or args.single < 1:
        parser.error("--sessions and --single take a number of at least 1")
    with tempfile.TemporaryDirectory(prefix="changeup-concurrency-bench-") as root:
        measure(Path(root), args.sessions, args.single)


if __name__ == "__main__":
    main()
