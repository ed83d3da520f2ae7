"""``changeup view`` on a 100,000-event log and a 500-run matrix, against loading the JSON plainly.

The run: one real ``changeup run challenges/export-time --agent scripted`` (its report and its
``shadow.git``), whose ``events.jsonl`` is then replaced by ``--events`` synthetic records written
through the real EventLog: the agent printing, changing files, committing, hidden test runs of
both phases (each a new snapshot sha, which ``shadow.git`` lacks: every diff read is a git
failure, the dearer path), messages, turns. The matrix: the v6-v7 example with ``--trials`` trials
an agent run by the suite's fake sessions (tests/matrix/samples.py), and its compare.json.

For each it measures:

- building the pages: ``changeup view PATH --out DIR`` as its own process, its wall time and its
  peak resident memory; the base is a process that only ``json.loads`` every line of the log
  (the run) or compare.json (the matrix);
- the browser: headless Chromium loading the page to its end (``--dump-dom``, the page's script
  run), wall time and the peak resident memory of Chromium's largest process; the base is a
  page holding the same JSON that only parses it (what a viewer fed the raw JSON starts with).

The goal: Chromium shows each page no slower than it parses the plain JSON (a ratio of at most 1
for the run, 1.5 for the matrix, whose page holds every trial's row drawn). Without Chromium only
the build is measured, and the script says so.

    python benchmarks/view.py [--events N] [--trials N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from orchestrator.log.eventlog import EventLog, LogReader  # noqa: E402
from tests.matrix.samples import V6_V7, results_of  # noqa: E402
from triggers import (  # noqa: E402
    AgentOutput,
    AgentTurnEnded,
    CommitMade,
    Event,
    FileChange,
    FilesChanged,
    MessageDelivered,
    Observation,
    PhaseResult,
    TestOutcome,
    TestsResult,
)

CHANGEUP = [sys.executable, "-m", "orchestrator"]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
#: The most the page of the run, then of the matrix, may take to load, as a multiple of the plain page's.
GOALS = (1.0, 1.5)
TEXT = "Reading export_time.py; converting with astimezone(timezone.utc). Running the tests: 7 passed. " * 4

#: Runs ``argv[1:]``, prints its exit code, peak resident memory (kB, its largest process: Linux's
#: ``wait4`` reports the most of the child and the descendants it waited for) and wall seconds.
SPAWN = """import os, subprocess, sys, time
start = time.monotonic()
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, usage = os.wait4(child.pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss, time.monotonic() - start)"""


def measured(command: list[str]) -> tuple[float, int]:
    """Run ``command`` to its end: its wall seconds and peak resident bytes (exit 0 required)."""
    done = subprocess.run([sys.executable, "-c", SPAWN, *command], capture_output=True, text=True, check=True)
    code, kilobytes, seconds = done.stdout.split()
    if code != "0":
        raise SystemExit(f"{' '.join(command)} exited {code}")
    return float(seconds), int(kilobytes) * 1024


def synthetic(count: int, seed: int = 7) -> list[Event | Observation]:
    """``count`` records with the payloads of a long session, about 20 ms apart."""
    rng = random.Random(seed)
    out: list[Event | Observation] = []
    t, request = 0.0, 0
    for _ in range(count):
        t += rng.random() * 0.04
        roll = rng.random()
        if roll < 0.6:
            out.append(AgentOutput(t, TEXT[: rng.randrange(40, 400)]))
        elif roll < 0.8:
            out.append(FilesChanged(t, (FileChange("export_time.py", "modified"),)))
        elif roll < 0.85:
            request += 1
            phases = []
            for phase in ("phase1", "phase2"):
                tests = tuple(
                    TestOutcome(f"{phase}/test_x.py::test_{i}", "passed" if rng.random() < 0.8 else "failed")
                    for i in range(8)
                )
                passed = sum(test.outcome == "passed" for test in tests)
                phases.append(PhaseResult(phase, passed, len(tests) - passed, tests))
            out.append(TestsResult(t, request, f"{rng.getrandbits(160):040x}", tuple(phases), seconds=0.4))
        elif roll < 0.9:
            out.append(CommitMade(t, f"{rng.getrandbits(160):040x}", "Convert export timestamps to UTC"))
        elif roll < 0.95:
            out.append(MessageDelivered(t, "revision"))
        else:
            out.append(AgentTurnEnded(t, 0))
    return out


def long_run(root: Path, count: int) -> Path:
    """A real run folder whose log is replaced by ``count`` synthetic records."""
    out = root / "runs"
    done = subprocess.run(
        [*CHANGEUP, "run", "challenges/export-time", "--agent", "scripted", "--out", str(out), "--quiet"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"the reference run failed:\n{done.stderr}")
    run = next(out.iterdir())
    header = LogReader(run / "events.jsonl").header
    (run / "events.jsonl").unlink()
    log = EventLog.create(
        run / "events.jsonl", {k: v for k, v in header.items() if k not in ("format", "version")}
    )
    for record in synthetic(count):
        log.append(record, record.t)
    log.close()
    return run


def plain_page(folder: Path, name: str, data: str) -> Path:
    """A page that holds ``data`` (JSON text) and only parses it: the base of the browser's figures."""
    page = folder / f"{name}.html"
    safe = data.replace("</", "<\\/")
    page.write_text(
        f'<!doctype html><html><body><script type="application/json" id="d">{safe}</script><script>'
        "var d = JSON.parse(document.getElementById('d').textContent);"
        "document.body.dataset.count = Array.isArray(d) ? d.length : Object.keys(d).length;"
        "</script></body></html>"
    )
    return page


def browser(page: Path, profile: Path) -> tuple[float, int]:
    """Chromium loading ``page`` to its end: wall seconds, peak resident bytes of its largest process."""
    assert CHROMIUM is not None
    return measured([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", page.as_uri()])


def row(name: str, figures: tuple[float, int], base: tuple[float, int]) -> str:
    """A table row: seconds and MiB, each beside its base's and as a ratio."""
    (seconds, memory), (base_seconds, base_memory) = figures, base
    return (
        f"{name:<34} {seconds:8.2f} s {base_seconds:8.2f} s {seconds / base_seconds:6.1f}x "
        f"{memory / 2**20:8.0f} MiB {base_memory / 2**20:6.0f} MiB {memory / base_memory:6.1f}x"
    )


def main() -> None:
    """Make the run and the matrix, measure building and loading their pages, print the table."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument(
        "--trials", type=int, default=250, help="Trials an agent (two agents: twice the runs)."
    )
    parser.add_argument("--keep", type=Path, help="Work in this new folder and keep it.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = args.keep or Path(scratch)
        root.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        run = long_run(root / "run", args.events)
        (root / "matrix").mkdir()
        results, _ = results_of(root / "matrix", text=V6_V7.replace("trials: 3", f"trials: {args.trials}"))
        subprocess.run([*CHANGEUP, "compare", str(results)], capture_output=True, check=True)
        print(f"made the run and the matrix in {time.monotonic() - started:.0f} s")
        log, compare = run / "events.jsonl", results / "compare.json"
        lines_parse = "import json, sys; [json.loads(line) for line in open(sys.argv[1], encoding='utf-8')]"
        whole_parse = "import json, sys; json.load(open(sys.argv[1], encoding='utf-8'))"
        lines = sum(1 for _ in log.open())
        trials = len(json.loads(compare.read_text())["trials"])
        print(f"log: {lines:,} lines, {log.stat().st_size / 2**20:.1f} MiB; matrix: {trials} trials")
        print(f"{'':<34} {'view':>10} {'base':>10} {'ratio':>7} {'view':>12} {'base':>10} {'ratio':>7}")
        named = ((f"run ({lines:,} lines)", run, log), (f"matrix ({trials} runs)", results, compare))
        for (name, path, data), goal in zip(named, GOALS, strict=True):
            site = root / f"site-{name.split()[0]}"
            build = measured([*CHANGEUP, "view", str(path), "--out", str(site)])
            parse = lines_parse if data.suffix == ".jsonl" else whole_parse
            print(row(f"{name}: build", build, measured([sys.executable, "-c", parse, str(data)])))
            if CHROMIUM is None:
                print("LOUD: no chromium here (Debian's chromium package): the browser is not measured")
                continue
            kind = "runs" if path is run else "matrices"
            page = next((site / kind).glob(f"{path.name}-*.html"))
            text = data.read_text()
            raw = "[" + ",".join(text.splitlines()) + "]" if data.suffix == ".jsonl" else text
            base = plain_page(root, f"plain-{name.split()[0]}", raw)
            shown, plain = browser(page, root / "profile"), browser(base, root / "profile")
            print(row(f"{name}: Chromium", shown, plain))
            met = "met" if shown[0] <= goal * plain[0] else "MISSED"
            print(f"{'':<34} goal: at most {goal:g}x the plain JSON page's load time: {met}")
            sizes = page.stat().st_size / 2**20, base.stat().st_size / 2**20
            print(f"{'':<34} the page {sizes[0]:.1f} MiB, the plain JSON page {sizes[1]:.1f} MiB")


if __name__ == "__main__":
    main()
