"""Snapshot and test-run export after a one-file change, against a plain copy of the workspace.

Builds a workspace of ``--files`` files (default 10,000: 100 folders of 100 small Python
modules) in the system's temporary folder, takes a snapshot and a test run's export of it,
then ``--rounds`` times changes one file and times the snapshot (``Workspace.snapshot``) and
the export a test run gets (``KeptExport.take`` and ``give_back``: the previous run's copy,
checked and updated by the difference). The baseline is what a user would otherwise run: a
plain ``shutil.copytree`` of the workspace (minus what a snapshot ignores), timed in the same
run. Goal: the snapshot and the export after a one-file change each at most 0.2 s and at most
1/10 of the plain copy (medians, wall clock). CPU seconds (this process and its git
children) are printed too: on a busy machine they say what the wall clock cannot.

    python benchmarks/snapshot.py [--files N] [--rounds N] [--copies N]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import anyio

from orchestrator.grading.export import KeptExport
from orchestrator.session.workspace import IGNORED, Workspace

GOAL_SECONDS = 0.2
GOAL_SHARE = 0.1  # of the plain copy
PER_FOLDER = 100


def module(folder: int, number: int) -> str:
    """A small, realistic Python module (about 600 bytes)."""
    return (
        f'"""Module {number} of package {folder}."""\n\n'
        "from __future__ import annotations\n\n\n"
        f"def value_{number}(items: list[int]) -> int:\n"
        f'    """The sum of ``items`` plus {number}."""\n'
        f"    total = {number}\n"
        "    for item in items:\n"
        "        total += item\n"
        "    return total\n\n\n"
        f"class Thing{number}:\n"
        f'    """Thing {number}: a name and a count."""\n\n'
        "    def __init__(self, name: str, count: int = 0) -> None:\n"
        "        self.name = name\n"
        "        self.count = count\n\n"
        "    def bump(self) -> int:\n"
        '        """One more."""\n'
        "        self.count += 1\n"
        "        return self.count\n"
    )


def build(path: Path, files: int) -> None:
    """Write ``files`` modules under ``path``, ``PER_FOLDER`` to a folder."""
    for number in range(files):
        folder = path / f"pkg{number // PER_FOLDER:03d}"
        if number % PER_FOLDER == 0:
            folder.mkdir()
        (folder / f"mod{number % PER_FOLDER:03d}.py").write_text(module(number // PER_FOLDER, number))


Seconds = tuple[float, float]  # wall clock, CPU


def now() -> Seconds:
    """Wall-clock seconds, and the CPU seconds of this process and its finished children."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter(), own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def since(start: Seconds) -> Seconds:
    """Wall-clock and CPU seconds since ``start``."""
    wall, cpu = now()
    return wall - start[0], cpu - start[1]


def median(samples: list[Seconds]) -> Seconds:
    """The median wall-clock and the median CPU seconds of ``samples``."""
    return statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)


def plain_copy(source: Path, dest: Path) -> Seconds:
    """``shutil.copytree`` of ``source`` minus what a snapshot ignores, timed (``dest`` removed after)."""
    start = now()
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns(*IGNORED))
    seconds = since(start)
    shutil.rmtree(dest)
    return seconds


async def measure(root: Path, files: int, rounds: int, copies: int) -> None:
    """Build the workspace in ``root``, time everything and print the table."""
    template = root / "template"
    template.mkdir()
    ws = Workspace.create(template, root / "workspace", root / "shadow.git")
    build(ws.path, files)
    size = sum(p.stat().st_size for p in ws.path.rglob("*.py"))
    copy = [plain_copy(ws.path, root / "copy") for _ in range(copies)]

    exports = KeptExport(ws, root / "scratch" / "export")
    dest = root / "run" / "ws"
    dest.parent.mkdir()
    owner = (os.getuid(), os.getgid())

    async def snapshot_and_export() -> tuple[Seconds, Seconds]:
        """A snapshot, and a test run's export of it (as the runner takes and gives it back), timed."""
        start = now()
        tree = await ws.snapshot()
        snapshot, start = since(start), now()
        await exports.take(tree, dest, owner)
        exports.give_back(dest)
        return snapshot, since(start)

    first_snapshot, first_export = await snapshot_and_export()
    snapshots, exported = [], []
    changed = ws.path / "pkg000" / "mod000.py"
    for number in range(rounds):
        changed.write_text(module(0, 0) + f"\nROUND = {number}\n")
        snapshot, export = await snapshot_and_export()
        snapshots.append(snapshot)
        exported.append(export)

    baseline = median(copy)[0]
    rows = [
        ("plain copy (shutil.copytree)", median(copy)),
        ("first snapshot (whole workspace)", first_snapshot),
        ("first export (whole snapshot)", first_export),
        ("snapshot after a one-file change", median(snapshots)),
        ("export after a one-file change", median(exported)),
    ]
    print(f"workspace: {files:,} files, {size / 1e6:.1f} MB   rounds: {rounds}   plain copies: {copies}")
    print(f"{'':36}{'wall s':>9}{'of copy':>9}{'CPU s':>9}")
    for label, (wall, cpu) in rows:
        print(f"{label:36}{wall:9.3f}{wall / baseline:9.1%}{cpu:9.3f}")
    met = all(wall <= GOAL_SECONDS and wall <= GOAL_SHARE * baseline for _, (wall, _) in rows[-2:])
    print(
        f"goal: snapshot and export after a one-file change each <= {GOAL_SECONDS} s and "
        f"<= {GOAL_SHARE:.0%} of the plain copy: {'met' if met else 'NOT met'}"
    )
    command = f"--files {files} --rounds {rounds} --copies {copies}"
    print(f"reproduce: .venv/bin/python benchmarks/snapshot.py {command}")


def main() -> None:
    """Parse the options and run the benchmark in a temporary folder."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=int, default=10_000, help="files in the workspace")
    parser.add_argument("--rounds", type=int, default=5, help="one-file changes timed")
    parser.add_argument("--copies", type=int, default=3, help="plain copies timed")
    args = parser.parse_args()
    if args.files < 1 or args.rounds < 1 or args.copies < 1:
        parser.error("--files, --rounds and --copies take a number of at least 1")
    with tempfile.TemporaryDirectory(prefix="changeup-snapshot-bench-") as root:
        anyio.run(measure, Path(root), args.files, args.rounds, args.copies)


if __name__ == "__main__":
    main()
