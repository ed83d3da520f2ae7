"""SlopCodeBench's own references, imported and run through changeup: how many reach full marks.

Reads the problems of a local copy of SprocketLab/slop-code-bench (a bare git directory, as
`fetch` leaves it, or a checkout), extracts each ``problems/<name>/`` with git, imports it
with ``changeup import slopcode`` and runs its reference with ``changeup run --agent
scripted`` (or ``changeup calibrate --trials 0`` with ``--calibrate``), the CLI's own path.
Per problem it prints whether the reference reaches full marks under the benchmark's pass
policy (core cases, as imported: ``passes: [core]``), the score, and otherwise what the
report names: the run's refusal, the grading's detail, or the first failing tests. A second
column says whether it reaches full marks as the benchmark itself counts: each checkpoint on
its tests while it is the current one, the earlier checkpoints' tests at later ones left out
(they are REGRESSION there); changeup's final grading counts those too.

A problem whose files git lists but cannot read (a blob the copy lacks) is incomplete at
the source: it is refused, naming the file, and never imported. Nothing of the benchmark is
kept in this repository: everything is written under ``--work``.

    python benchmarks/slopcode_reference.py --source /work/.mirror/SprocketLab+slop-code-bench/repo \\
        [--work /tmp/changeup-slopcode] [--calibrate] [problem ...]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

GOAL = 14  # of the 16 complete problems, issue 26


@dataclass
class Outcome:
    """One problem's result: full marks or not, the score, and what stands in the way."""

    problem: str
    state: str  # "full marks", "short", "refused", "incomplete", "import failed", "run failed"
    score: float | None = None
    seconds: float = 0.0
    missing: str = ""
    #: every checkpoint passed while it was the current one: the benchmark's own count
    benchmark: bool = False


def git(source: Path, *args: str) -> bytes:
    """The output of git on ``source`` (a bare repository or a checkout)."""
    return subprocess.run(
        ["git", f"--git-dir={_git_dir(source)}", *args], capture_output=True, check=True
    ).stdout


def _git_dir(source: Path) -> Path:
    return source / ".git" if (source / ".git").exists() else source


def problems(source: Path) -> list[str]:
    """The problem folders of the copy at ``source``."""
    listing = git(source, "ls-tree", "--name-only", "HEAD", "problems/").decode()
    return [line.removeprefix("problems/") for line in listing.splitlines() if line]


def extract(source: Path, problem: str, target: Path) -> str:
    """Write ``problems/<problem>/`` into ``target``; the first file git cannot read ("" if none)."""
    shutil.rmtree(target, ignore_errors=True)
    listing = git(source, "ls-tree", "-r", "-z", "HEAD", f"problems/{problem}/").decode()
    for entry in filter(None, listing.split("\0")):
        meta, path = entry.split("\t", 1)
        _, kind, blob = meta.split()
        if kind != "blob":
            continue
        read = subprocess.run(
            ["git", f"--git-dir={_git_dir(source)}", "cat-file", "blob", blob], capture_output=True
        )
        if read.returncode != 0:
            return path
        file = target / Path(path).relative_to(f"problems/{problem}")
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(read.stdout)
    return ""


def changeup(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """The CLI, as a user runs it."""
    command = [sys.executable, "-m", "orchestrator", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)


def _last(text: str, lines: int = 3) -> str:
    return " | ".join(line.strip() for line in text.strip().splitlines()[-lines:])


def named(report: dict[str, Any]) -> str:
    """What a report that is not full marks names: its status, the grading, the failing tests."""
    parts = []
    if report["run"]["status"] != "completed":
        parts.append(f"run {report['run']['status']}: {report['run']['detail'][-300:]}")
    if report["score"]["grading_status"] != "ok":
        parts.append(
            f"grading {report['score']['grading_status']}: {report['score']['grading_detail'][-300:]}"
        )
    for phase in report["phases"]:
        if phase["unlocked"] and phase["full_marks"]:
            continue
        if not phase["unlocked"]:
            parts.append(f"{phase['id']} locked")
            continue
        policy = [f"{g['name']} {g['passed']}/{g['total']}" for g in phase["groups"] if g["in_policy"]]
        first = phase["failing"][:2]
        why = "; ".join(
            f"{f['id']}: {f['detail'].strip().splitlines()[-1][:200]}" for f in first if f["detail"]
        )
        parts.append(f"{phase['id']} {', '.join(policy) or phase['scored']} (e.g. {why or 'no detail'})")
    return "; ".join(parts)


def as_the_benchmark_counts(report: dict[str, Any]) -> bool:
    """Every checkpoint passed its policy while it was the current one (its ``_passed`` trigger
    fired on the verdict of its turn), the last at the final grading: the benchmark's own pass
    policy, which leaves a checkpoint's tests at later checkpoints out (they are its REGRESSION
    group there). changeup's final grading counts them: a reference that regresses on an earlier
    checkpoint's tests is short there and full here."""
    phases = report["phases"]
    fired = {t["id"] for t in report["triggers"] if t["fired"]}
    return all(f"{p['id']}_passed" in fired for p in phases[:-1]) and bool(phases[-1]["full_marks"])


def declared(dest: Path) -> str:
    """What the import declared of the environment (tools, data), for a reader of a shortfall: a
    test that fails on a missing program may wait for the grading sandbox to provide it."""
    testing = yaml.safe_load((dest / "challenge.yaml").read_text())["challenge"].get("testing", {})
    needs = [f"{key}: {', '.join(testing[key])}" for key in ("tools", "data") if testing.get(key)]
    return f" [declared {'; '.join(needs)}]" if needs else ""


def run_one(source: Path, problem: str, work: Path, calibrate: bool) -> Outcome:
    """Extract, import and run one problem's reference."""
    started = time.monotonic()
    folder, dest, runs = work / "source" / problem, work / "challenges" / problem, work / "runs" / problem
    unreadable = extract(source, problem, folder)
    if unreadable:
        return Outcome(problem, "incomplete", missing=f"{unreadable}: listed by git, absent from the copy")
    imported = changeup("import", "slopcode", str(folder), str(dest), "--force", timeout=300)
    if imported.returncode != 0:
        return Outcome(problem, "import failed", missing=_last(imported.stderr or imported.stdout))
    shutil.rmtree(runs, ignore_errors=True)
    if calibrate:
        ran = changeup("calibrate", str(dest), "--trials", "0", "--out", str(runs), timeout=7200)
    else:
        ran = changeup("run", str(dest), "--agent", "scripted", "--out", str(runs), "-q", timeout=7200)
    seconds = round(time.monotonic() - started, 1)
    reports = sorted(runs.glob("*reference*/report.json")) if runs.is_dir() else []
    if not reports:
        state = "refused" if ran.returncode == 2 else "run failed"
        return Outcome(problem, state, None, seconds, _last(ran.stderr or ran.stdout, 4))
    report = json.loads(reports[0].read_text())
    full = report["score"]["full_success"]
    missing = "" if full else named(report) + declared(dest)
    if calibrate and ran.returncode != 0:
        misses = [line for line in ran.stdout.splitlines() if line.startswith("MISS")]
        missing = "; ".join([missing, *misses] if missing else misses)
    state = "full marks" if full and (not calibrate or ran.returncode == 0) else "short"
    counted = as_the_benchmark_counts(report)
    return Outcome(problem, state, report["score"]["total"], seconds, missing, counted)


def main() -> None:
    """Run the references and print the table."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--source", type=Path, required=True, help="a copy of SprocketLab/slop-code-bench (git)"
    )
    parser.add_argument("--work", type=Path, default=Path("/tmp/changeup-slopcode"), help="where to write")
    parser.add_argument("--calibrate", action="store_true", help="changeup calibrate --trials 0, not one run")
    parser.add_argument("problems", nargs="*", help="problem folder names (default: all)")
    args = parser.parse_args()
    names = args.problems or problems(args.source)
    outcomes = []
    for name in names:
        outcome = run_one(args.source, name, args.work, args.calibrate)
        outcomes.append(outcome)
        score = "—" if outcome.score is None else f"{outcome.score * 100:.0f}%"
        benchmark = "full" if outcome.benchmark else "—" if outcome.score is None else "short"
        line = f"{name:30} {outcome.state:12} {score:>5} {benchmark:>6} {outcome.seconds:6.0f}s"
        print(f"{line}  {outcome.missing}", flush=True)
    args.work.mkdir(parents=True, exist_ok=True)
    (args.work / "results.json").write_text(json.dumps([asdict(o) for o in outcomes], indent=2) + "\n")
    complete = [o for o in outcomes if o.state != "incomplete"]
    full = [o for o in complete if o.state == "full marks"]
    counted = [o for o in complete if o.benchmark]
    print(
        f"\nfull marks: {len(full)} of {len(complete)} complete problems at changeup's final grading, "
        f"{len(counted)} as the benchmark counts (each checkpoint while current) (goal {GOAL} of 16); "
        f"incomplete at the source: {len(outcomes) - len(complete)}"
    )
    print(f"command: {' '.join([sys.executable, *sys.argv])}")


if __name__ == "__main__":
    main()
