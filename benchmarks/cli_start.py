"""How long ``changeup --help`` (and each ``changeup COMMAND --help``) takes to start.

Each command is started as a user starts it, ``python -m orchestrator ARGS`` (the path the
``changeup`` console script takes too: both import ``orchestrator.present.cli`` and call
``main``), in a fresh process, ``--runs`` times, in turns with the baseline: plain
``python -c pass``, the interpreter's own start. The figures are the median wall time of
each, the difference (what changeup's imports and click cost) and the ratio to the baseline.
The goal: every ``--help`` under 0.3 s.

    python benchmarks/cli_start.py [--runs N] [--command='run --help' ...]

``python -X importtime -m orchestrator --help`` shows which module the time goes to.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOAL = 0.3
#: What ``--command`` defaults to: the group's help and each command's.
COMMANDS = [
    "--help",
    *(
        f"{name} --help"
        for name in (
            "run",
            "show",
            "replay",
            "report",
            "calibrate",
            "validate",
            "new",
            "schema",
            "import",
            "agents",
            "compare",
            "review",
            "view",
        )
    ),
]


def wall(argv: list[str]) -> float:
    """Seconds from start to exit of ``argv`` (its output discarded); a failure is an error."""
    env = {**os.environ, "COLUMNS": "100"}
    started = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def main() -> None:
    """Time the baseline and each command in turns; print a table and the reproducing command."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="starts of each (the median is reported)")
    parser.add_argument("--command", action="append", help="changeup ARGS to time (repeatable)")
    args = parser.parse_args()
    commands = args.command or COMMANDS
    baseline: list[float] = []
    times: dict[str, list[float]] = {command: [] for command in commands}
    for _ in range(args.runs):  # in turns, so a busy moment weighs on all alike
        baseline.append(wall([sys.executable, "-c", "pass"]))
        for command in commands:
            times[command].append(wall([sys.executable, "-m", "orchestrator", *shlex.split(command)]))
    base = statistics.median(baseline)
    print(f"python -c pass: {base * 1000:.0f} ms (median of {args.runs})")
    print(f"{'changeup ...':24} {'median':>9} {'- python':>9} {'ratio':>6}  goal {GOAL * 1000:.0f} ms")
    slow = 0
    for command, runs in times.items():
        median = statistics.median(runs)
        slow += median >= GOAL
        print(
            f"{command:24} {median * 1000:>6.0f} ms {(median - base) * 1000:>6.0f} ms "
            f"{median / base:>6.1f}  {'ok' if median < GOAL else 'SLOW'}"
        )
    print(f"{len(times) - slow} of {len(times)} under {GOAL * 1000:.0f} ms")
    print("reproduce: python benchmarks/cli_start.py --runs", args.runs)


if __name__ == "__main__":
    main()
