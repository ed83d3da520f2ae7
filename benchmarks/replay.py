"""Replay: ``changeup replay`` of a synthetic log, against parsing the same file bare.

The benchmark writes a challenge folder (the 10 phases and 100 triggers of engine.py) and a
run folder whose ``events.jsonl`` is written through the real EventLog from a live engine
over that challenge, so it holds the decisions a session would record. Its events have the
payloads of real sessions: agents mostly print (output chunks of 40-400 characters, which
replay reads and checks but the engine never sees), change files, commit, and tests report
per-test verdicts. Then, in the same run:

- time: reading the file and ``json.loads`` of every line (the base), and ``changeup replay
  RUN`` through the CLI's own code (its click command, called in this process: the streaming
  reader with its record checks, decode, ``Engine.step``, every decision compared),
  interleaved ``--repeat`` times, the best of each. Both are single-threaded work in this
  process, timed in its CPU seconds, which a busy machine does not inflate as it does the
  wall clock. Goal: at most 2x the base.
- memory: ``changeup replay`` as a process of its own on that log and on one a fifth as
  long, and each one's peak resident memory. Goal: the peak does not grow
  with the log (the longer log's within 5 MB of the shorter's).

    python benchmarks/replay.py [--events N] [--repeat N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import json
import math
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine import PHASES, triggers

from orchestrator.challenge.loader import load_challenge
from orchestrator.log.eventlog import EventLog
from orchestrator.present.cli import cli
from triggers import (
    AgentOutput,
    AgentTurnEnded,
    ClockTick,
    CommitMade,
    Engine,
    Event,
    FileChange,
    FilesChanged,
    MessageDelivered,
    Observation,
    PhaseResult,
    SessionStarted,
    TestOutcome,
    TestsResult,
)

CORPUS = (
    "Reading export_time.py to see how the timestamp is formatted today. The function "
    "returns value.isoformat(), which keeps the offset; the revision asks for UTC with a "
    "trailing Z, so I will convert with astimezone(timezone.utc) and replace the suffix. "
    "def format_export_time(value: datetime) -> str:\n    if value.tzinfo is None:\n"
    "        raise ValueError('timezone required')\n    return value.astimezone(timezone.utc)"
    ".isoformat().replace('+00:00', 'Z')\nRunning the tests: 7 passed, 0 failed in 0.21s. "
)
PATHS = ("export_time.py", "tests/test_export_time.py", "README.md", "src/app/models.py", "src/app/api.py")


def events(count: int, seed: int) -> list[Event | Observation]:
    """``count`` events with realistic payloads, 10 ms apart on average."""
    rng = random.Random(seed)
    out: list[Event | Observation] = [SessionStarted(0.0, PATHS)]
    t = 0.0
    request = 1
    for _ in range(count - 1):
        t += rng.random() * 0.02
        roll = rng.random()
        if roll < 0.60:
            start = rng.randrange(len(CORPUS) - 400)
            out.append(AgentOutput(t, CORPUS[start : start + rng.randrange(40, 400)]))
        elif roll < 0.80:
            changes = tuple(
                FileChange(rng.choice(PATHS), rng.choice(("added", "modified", "modified", "deleted")))
                for _ in range(rng.randrange(1, 4))
            )
            out.append(FilesChanged(t, changes))
        elif roll < 0.85:
            request += 1
            phases = []
            for phase in PHASES[:4]:
                tests = tuple(
                    TestOutcome(f"{phase}/test_export_time.py::test_case_{i}", "passed")
                    if rng.random() < 0.8
                    else TestOutcome(
                        f"{phase}/test_export_time.py::test_case_{i}", "failed", "assert 'a' == 'b'"
                    )
                    for i in range(8)
                )
                passed = sum(o.outcome == "passed" for o in tests)
                phases.append(PhaseResult(phase, passed, len(tests) - passed, tests))
            out.append(TestsResult(t, request, f"{rng.getrandbits(160):040x}", tuple(phases), seconds=0.4))
        elif roll < 0.90:
            out.append(ClockTick(t))
        elif roll < 0.93:
            out.append(CommitMade(t, f"{rng.getrandbits(160):040x}", "Convert export timestamps to UTC"))
        elif roll < 0.96:
            out.append(MessageDelivered(t, f"t{rng.randrange(100)}"))
        else:
            out.append(AgentTurnEnded(t, 0))
    return out


def write_challenge(root: Path) -> Path:
    """A challenge folder with engine.py's phases and triggers; returns it."""
    folder = root / "synthetic"
    (folder / "workspace").mkdir(parents=True)
    (folder / "workspace" / "README.md").write_text("A synthetic challenge for benchmarks/replay.py.\n")
    for phase in PHASES:
        (folder / "tests" / phase).mkdir(parents=True)
        (folder / "tests" / phase / f"test_{phase}.py").write_text("def test_ok() -> None:\n    pass\n")
    spec = {
        "id": "synthetic",
        "title": "Synthetic: the 100 triggers of benchmarks/engine.py",
        "initial_briefing": "Go.",
        "phases": [{"id": phase, "title": phase} for phase in PHASES],
        # engine.py writes build_spec's dicts; a challenge file spells a hold `for`.
        "triggers": [{("for" if k == "hold" else k): v for k, v in t.items()} for t in triggers(100)],
        "limits": {"session": "12h"},  # the log spans about 3 hours
    }
    (folder / "challenge.yaml").write_text(json.dumps({"challenge": spec}, indent=1))  # JSON is YAML
    return folder


def write_run(folder: Path, challenge: Path, count: int) -> int:
    """A run folder at ``folder`` whose log records ``count`` events and the engine's
    decisions on them; returns its line count (the header aside)."""
    loaded = load_challenge(challenge)
    engine = Engine(loaded.spec)
    folder.mkdir()
    header = {
        "challenge": loaded.id,
        "challenge_path": str(challenge),
        "challenge_sha256": loaded.digest,
        "agent": "benchmark",
    }
    log = EventLog.create(folder / "events.jsonl", header)
    for event in events(count, seed=11):
        log.append(event, event.t)
        if isinstance(event, Observation):
            continue  # an observation: logged, never stepped
        for action in engine.step(event):
            log.append(action, event.t)
    log.close()
    return log.seq


def bare_parse(path: Path) -> None:
    """The base: read the file and ``json.loads`` every line, as fast as Python does it (PARSE)."""
    with path.open(encoding="utf-8") as handle:
        collections.deque(map(json.loads, handle), maxlen=0)


def cli_replay(run: Path) -> str:
    """``changeup replay RUN`` through the CLI's click command, in this process; its output."""
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown):
        cli.main(["replay", str(run)], prog_name="changeup", standalone_mode=False)
    return shown.getvalue()


def timed(work: Callable[[], object]) -> float:
    """CPU seconds ``work`` takes in this process."""
    start = time.process_time()
    work()
    return time.process_time() - start


#: Runs ``argv[1:]``, prints its exit code and peak resident memory (kilobytes). The benchmark
#: starts it, and it the measured process: on Linux a process's ``ru_maxrss`` begins at its
#: parent's resident size at the fork, which would be the benchmark's, holding its logs.
SPAWN = """import os, subprocess, sys
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
_, status, usage = os.wait4(child.pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)"""

#: The plain tool, as a command: json.loads of every line of the file given (as bare_parse).
PARSE = (
    "import collections, json, sys; "
    "collections.deque(map(json.loads, open(sys.argv[1], encoding='utf-8')), maxlen=0)"
)


def peak_rss(command: list[str]) -> int:
    """Run ``command`` to its end; its own peak resident memory in bytes (exit 0 required)."""
    done = subprocess.run([sys.executable, "-c", SPAWN, *command], capture_output=True, text=True, check=True)
    code, kilobytes = map(int, done.stdout.split())
    if code != 0:
        raise SystemExit(f"{' '.join(command)} exited {code}:\n{done.stderr}")
    return kilobytes * 1024


def main() -> None:
    """Write the logs, time the bare parse and the replay, measure both peaks, print the tables."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument(
        "--keep", type=Path, help="Write the challenge and runs in this new folder; keep them."
    )
    parser.add_argument("--repeat", type=int, default=3, help="Time each this many times; report the best.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = args.keep or Path(scratch)
        challenge = write_challenge(root)
        sizes = {args.events // 5: root / "run-short", args.events: root / "run"}
        lines = {count: write_run(run, challenge, count) for count, run in sizes.items()}
        run = sizes[args.events]
        log = run / "events.jsonl"
        parse = replay = math.inf
        for _ in range(args.repeat):  # interleaved; the best of each (noise only slows)
            parse = min(parse, timed(lambda: bare_parse(log)))
            replay = min(replay, timed(lambda: cli_replay(run)))
        said = cli_replay(run)
        changeup = [sys.executable, "-m", "orchestrator", "replay"]
        peaks = {count: peak_rss([*changeup, str(folder)]) for count, folder in sizes.items()}
        bases = {
            count: peak_rss([sys.executable, "-c", PARSE, str(folder / "events.jsonl")])
            for count, folder in sizes.items()
        }
        size = log.stat().st_size
    if not said.startswith("agrees"):
        raise SystemExit(f"replay did not agree with the log:\n{said}")

    count, short = args.events, args.events // 5
    print(f"log: {count:,} events, {lines[count]:,} records, {size / 1e6:.0f} MB; {said.strip()}")
    print(f"{'':32}{'CPU s':>10}{'events/s':>14}")
    print(f"{'json.loads every line (base)':32}{parse:10.3f}{count / parse:14,.0f}")
    print(f"{'changeup replay (in-process)':32}{replay:10.3f}{count / replay:14,.0f}")
    ratio = replay / parse
    print(f"replay takes {ratio:.2f}x the bare parse; goal at most 2x: {'met' if ratio <= 2 else 'NOT met'}")
    print(f"{'peak memory (RSS)':32}{f'{short:,} events':>18}{f'{count:,} events':>18}")
    for name, peak in (("changeup replay RUN", peaks), ("python -c PARSE (json.loads)", bases)):
        print(f"{name:32}{peak[short] / 2**20:15.0f} MB{peak[count] / 2**20:15.0f} MB")
    growth = (peaks[count] - peaks[short]) / 2**20
    verdict = "met" if growth <= 5 else "NOT met"
    print(f"replay's peak grows by {growth:.1f} MB with 5x the log; goal: bounded (within 5 MB): {verdict}")
    print(f"reproduce: python benchmarks/replay.py --events {count} --keep DIR, then compare")
    print(f'  changeup replay DIR/run   with   python -c "{PARSE}" DIR/run/events.jsonl')


if __name__ == "__main__":
    main()
