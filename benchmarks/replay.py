"""Replay throughput: a synthetic 1,000,000-event log, against parsing the same file bare.

The log is written through the real EventLog from a live engine over the engine
benchmark's challenge (100 triggers), so it holds the decisions a session would record.
Its events have the payloads of real sessions: agents mostly print (output chunks of
40-400 characters, which replay reads but the engine never sees), change files, commit,
and tests report per-test verdicts. Then, in the
same run: the time to read the file and ``json.loads`` every line, and the time of a full
replay (read, decode, ``Engine.step``, compare every decision). Goal: replay at least half
as fast as the bare parse (at most 2x its time).

    python benchmarks/replay.py [--events N] [--repeat N] [--keep PATH]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent))

import random

from engine import PHASES, triggers

from orchestrator.eventlog import EventLog, LogReader
from orchestrator.replay import ReplayResult, replay_records
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
    Spec,
    TestOutcome,
    TestsResult,
    build_spec,
)

T = TypeVar("T")
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


def write_log(path: Path, count: int) -> tuple[int, int]:
    """Record ``count`` synthetic events and the engine's decisions; returns (events, lines)."""
    spec = build_spec(PHASES, triggers(100), briefing="Go.")
    engine = Engine(spec)
    log = EventLog.create(path, {"challenge": "synthetic", "agent": "benchmark"})
    lines = 0
    for event in events(count, seed=11):
        log.append(event.to_record(), event.t)
        lines += 1
        if isinstance(event, Observation):
            continue  # an observation: logged, never stepped
        for action in engine.step(event):
            log.append(action.to_record(), event.t)
            lines += 1
    log.close()
    return count, lines


def bare_parse(path: Path) -> None:
    """The baseline: read the file and ``json.loads`` every line."""
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            json.loads(line)


def replay_log(path: Path, spec: Spec) -> ReplayResult:
    """What ``changeup replay`` does with a log: read, decode, step, compare."""
    reader = LogReader(path)
    return replay_records(spec, reader, torn=lambda: reader.torn)


def timed(work: Callable[[], T]) -> tuple[float, T]:
    """Seconds ``work`` takes, and what it returned."""
    start = time.perf_counter()
    value = work()
    return time.perf_counter() - start, value


def main() -> None:
    """Write the log, time the bare parse and the replay, print the table."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--keep", type=Path, help="Write the log here and keep it.")
    parser.add_argument("--repeat", type=int, default=3, help="Time each this many times; report the best.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        path = args.keep or Path(scratch) / "events.jsonl"
        count, lines = write_log(path, args.events)
        size = path.stat().st_size

        spec = build_spec(PHASES, triggers(100), briefing="Go.")
        parse = replay = math.inf
        for _ in range(args.repeat):  # interleaved; the best of each (noise only slows)
            parse = min(parse, timed(lambda: bare_parse(path))[0])
            seconds, result = timed(lambda: replay_log(path, spec))
            replay = min(replay, seconds)

    assert result.divergence is None, result.divergence
    print(
        f"log: {count:,} events, {lines:,} lines, {size / 1e6:.0f} MB; "
        f"replay compared {result.decisions:,} decisions"
    )
    print(f"{'':28}{'seconds':>10}{'events/s':>14}")
    print(f"{'json.loads every line (base)':28}{parse:10.3f}{count / parse:14,.0f}")
    print(f"{'replay':28}{replay:10.3f}{count / replay:14,.0f}")
    ratio = replay / parse
    verdict = "met" if ratio <= 2 else "NOT met"
    print(f"replay takes {ratio:.2f}x the bare parse; goal at most 2x (half as fast or better): {verdict}")


if __name__ == "__main__":
    main()
