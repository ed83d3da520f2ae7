"""Room for K sessions at once: the open-file limit raised where it can be, a K that cannot fit refused."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from orchestrator.matrix.budget import FDS_PER_SESSION, inotify_free
from tests.cli import REPO, changeup

#: Lowers this process's open-file limits, then asks for room for 30 sessions.
ROOM = """\
import resource, sys
resource.setrlimit(resource.RLIMIT_NOFILE, (256, int(sys.argv[1])))
from orchestrator.matrix.budget import make_room
from orchestrator.matrix.backends import BackendError
try:
    make_room(30)
except BackendError as error:
    print("refused:", error)
else:
    print("soft limit:", resource.getrlimit(resource.RLIMIT_NOFILE)[0])
"""


def room(hard: int) -> str:
    """What :func:`make_room` does for 30 sessions with limits 256 (soft) and ``hard``."""
    done = subprocess.run(
        [sys.executable, "-c", ROOM, str(hard)], cwd=REPO, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_the_open_file_limit_is_raised_to_what_the_sessions_need() -> None:
    """256 open files do not hold 30 sessions: the soft limit is raised, within the hard one."""
    assert room(4096) == f"soft limit: {64 + FDS_PER_SESSION * 30}"


def test_sessions_past_the_hard_open_file_limit_are_refused_saying_how_many_fit() -> None:
    """A hard limit of 300 holds (300 - 64) // 12 = 19 sessions: 30 are refused, saying so."""
    assert room(300) == (
        "refused: --concurrency 30 needs about 424 open files, and this process may have at most 300 "
        "(ulimit -Hn): raise the limit, or lower --concurrency (about 19 fit)"
    )


def test_more_sessions_than_inotify_instances_are_refused_before_anything_runs(tmp_path: Path) -> None:
    """One watcher a session: a --concurrency past the user's inotify instances exits 2, naming the
    sysctl, with no RESULTS made."""
    free = inotify_free()
    assert free is not None  # Linux, where the suite runs
    too_many = free[1] + 1
    results = tmp_path / "results"
    done = changeup(
        "run",
        "challenges/normalize-tags",
        "--trials",
        "1",
        "--concurrency",
        str(too_many),
        "--out",
        str(results),
    )
    assert done.returncode == 2
    assert f"--concurrency {too_many} needs {too_many} inotify instances" in done.stderr
    assert "fs.inotify.max_user_instances" in done.stderr
    assert not results.exists()
