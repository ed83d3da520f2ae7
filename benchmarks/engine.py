"""Engine.step throughput: 100 triggers over 1,000,000 synthetic events.

Prints events/s of ``Engine.step`` beside the raw cost of iterating the same event objects
(measured in the same run), so the figure is comparable across machines. Goal: at least
200,000 events/s on one core. The CPU time of the same loop and the load average are printed
too, with a verdict for each clock: on a busy machine the wall clock also counts other
processes' turns, so there the CPU time is the one to judge by; on a quiet one they agree.

    python benchmarks/engine.py [--events N] [--triggers N] [--seed N]
"""

from __future__ import annotations

import argparse
import os
import random
import time
from typing import Any, Literal

from triggers import (
    AgentTurnEnded,
    ClockTick,
    CommitMade,
    Engine,
    Event,
    FileChange,
    FilesChanged,
    MessageDelivered,
    PhaseResult,
    SessionStarted,
    TestsResult,
    build_spec,
)

PHASES = tuple(f"phase{i}" for i in range(1, 11))
GOAL = 200_000  # events/s
ChangeKind = Literal["added", "modified", "deleted"]


def triggers(count: int) -> list[dict[str, Any]]:
    """A realistic mix: phase chains, deadlines, idle nudges, file and commit watchers, repeats."""
    out: list[dict[str, Any]] = []
    for i in range(count):
        kind = i % 10
        phase = PHASES[i % (len(PHASES) - 1)]
        following = PHASES[i % (len(PHASES) - 1) + 1]
        base: dict[str, Any] = {"id": f"t{i}", "message": f"message {i}", "priority": i}
        if kind == 0:
            out.append({**base, "condition": f"{phase}_tests_pass", "unlocks": following})
        elif kind == 1:
            out.append({**base, "condition": f"time_elapsed > {10 + i}min and {phase}_tests_not_pass"})
        elif kind == 2:
            out.append({**base, "condition": f"idle > {30 + i}s", "once": False})
        elif kind == 3:
            out.append({**base, "condition": f'file_exists("src/mod{i}.py")'})
        elif kind == 4:
            out.append({**base, "condition": f"commits >= {i // 10 + 1}"})
        elif kind == 5:
            out.append({**base, "condition": f"tests_passed({phase}) >= 3", "hold": 5.0})
        elif kind == 6:
            out.append({**base, "condition": f"fired(t{i - 6}) and phase_elapsed > 2m"})
        elif kind == 7:
            out.append({**base, "condition": f"{phase}_tests_not_pass", "once": False})
        elif kind == 8:
            out.append({**base, "condition": f'file_changed("docs/**") and turns >= {i // 20}'})
        else:
            out.append({**base, "condition": f"delivered(t{i - 9}) or time_elapsed > {i}min"})
    return out


def events(count: int, seed: int) -> list[Event]:
    """``count`` events of a plausible mix, 10 ms apart on average."""
    rng = random.Random(seed)
    out: list[Event] = [SessionStarted(0.0, ("README.md", "src/app.py"))]
    t = 0.0
    request = 1
    for _ in range(count - 1):
        t += rng.random() * 0.02
        roll = rng.random()
        # Agent output is an observation, not an engine input: the mix is of inputs only.
        if roll < 0.42:
            path = f"src/mod{rng.randrange(120)}.py" if rng.random() < 0.8 else "docs/notes.md"
            change: ChangeKind = rng.choice(("added", "modified", "modified", "deleted"))
            out.append(FilesChanged(t, (FileChange(path, change),)))
        elif roll < 0.67:
            request += 1
            phases = tuple(PhaseResult(p, rng.randrange(5), rng.randrange(2)) for p in PHASES[:4])
            out.append(TestsResult(t, request, "tree", phases))
        elif roll < 0.83:
            out.append(ClockTick(t))
        elif roll < 0.92:
            out.append(CommitMade(t, "sha"))
        elif roll < 0.96:
            out.append(MessageDelivered(t, f"t{rng.randrange(100)}"))
        else:
            out.append(AgentTurnEnded(t, 0))
    return out


def main() -> None:
    """Run the benchmark and print its table."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--triggers", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    spec = build_spec(PHASES, triggers(args.triggers), briefing="Go.")
    stream = events(args.events, args.seed)

    start = time.perf_counter()
    for _event in stream:
        pass
    baseline = time.perf_counter() - start

    engine = Engine(spec)
    step = engine.step
    actions = 0
    start, start_cpu = time.perf_counter(), time.process_time()
    for event in stream:
        actions += len(step(event))
    elapsed, cpu = time.perf_counter() - start, time.process_time() - start_cpu

    rate, cpu_rate = len(stream) / elapsed, len(stream) / cpu
    print(f"triggers: {args.triggers}   events: {len(stream):,}   actions: {actions:,}")
    print(f"{'':24}{'seconds':>10}{'events/s':>14}")
    print(f"{'iterate events (base)':24}{baseline:10.3f}{len(stream) / baseline:14,.0f}")
    print(f"{'Engine.step':24}{elapsed:10.3f}{rate:14,.0f}")
    print(f"{'Engine.step (CPU time)':24}{cpu:10.3f}{cpu_rate:14,.0f}")
    print(f"load average (1, 5, 15 min): {', '.join(f'{load:.2f}' for load in os.getloadavg())}")
    print(f"Engine.step costs {elapsed / baseline:.1f}x the bare iteration")
    print(
        f"goal >= {GOAL:,} events/s: {'met' if cpu_rate >= GOAL else 'NOT met'} by the CPU time, "
        f"{'met' if rate >= GOAL else 'NOT met'} by the wall clock"
    )


if __name__ == "__main__":
    main()
