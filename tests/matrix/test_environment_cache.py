"""The environment cache under concurrent builds: real processes race real builds of one environment."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from orchestrator.system.venvs import READY, cached, check_seal, freeze, grading_environment, remove, seal
from tests.cli import REPO, environment

#: A builder: it says it is ready, waits for the word go, then asks for the grading environment.
BUILDER = """
import pathlib, sys, time
from orchestrator.system.venvs import grading_environment
gate = pathlib.Path(sys.argv[1])
(gate / f"ready-{sys.argv[2]}").touch()
while not (gate / "go").exists():
    time.sleep(0.005)
print(grading_environment([]).prefix)
"""


def builder(cache: Path, gate: Path, name: str) -> subprocess.Popen[str]:
    """A process that builds (or finds) the grading environment in ``cache`` once ``gate/go`` exists."""
    return subprocess.Popen(
        [sys.executable, "-c", BUILDER, str(gate), name],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment({"CHANGEUP_CACHE": str(cache)}),
        start_new_session=True,
    )


def builds(folder: Path) -> list[Path]:
    """The build folders in a cache folder (not the published link, the lock or a staged link)."""
    return sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink())


@pytest.mark.slow
def test_racing_builders_build_once_and_all_get_the_same_sealed_build(tmp_path: Path) -> None:
    """Three processes released at once for the same environment: one builds it, the others
    wait and take it; one build folder, published by the link, its seal intact."""
    cache, gate = tmp_path / "cache", tmp_path / "gate"
    gate.mkdir()
    processes = [builder(cache, gate, str(n)) for n in range(3)]
    deadline = time.monotonic() + 120  # a bound on a stuck start, never a condition of the test
    while len(list(gate.glob("ready-*"))) < 3:
        assert time.monotonic() < deadline, "the builders never started"
        time.sleep(0.01)
    (gate / "go").touch()
    prefixes = set()
    for process in processes:
        out, err = process.communicate(timeout=600)
        assert process.returncode == 0, err
        prefixes.add(out.strip())
    (prefix,) = prefixes
    folder = cache / "grading"
    assert builds(folder) == [Path(prefix)]
    (link,) = [p for p in folder.iterdir() if p.is_symlink()]
    assert link.resolve() == Path(prefix).resolve()
    assert (Path(prefix) / READY).exists()
    assert check_seal(Path(prefix)) == []


@pytest.mark.slow
def test_a_builder_killed_mid_build_publishes_nothing_and_the_next_build_clears_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGKILL while the build folder is being filled: no link names it, so nobody can use a
    half-built environment; the next request removes it and builds a sealed one."""
    cache, gate = tmp_path / "cache", tmp_path / "gate"
    gate.mkdir()
    (gate / "go").touch()
    process = builder(cache, gate, "killed")
    folder = cache / "grading"
    deadline = time.monotonic() + 120
    # Killed once its build folder has a venv in the making: evidence, not a timer.
    while not (folder.is_dir() and any((p / "pyvenv.cfg").exists() for p in builds(folder))):
        assert process.poll() is None, "the build ended before it could be killed"
        assert time.monotonic() < deadline, "the build never started"
        time.sleep(0.005)
    os.killpg(process.pid, signal.SIGKILL)
    process.communicate(timeout=60)
    (unfinished,) = builds(folder)
    assert not (unfinished / READY).exists()
    assert not any(p.is_symlink() for p in folder.iterdir()), "a half-built environment was published"
    monkeypatch.setenv("CHANGEUP_CACHE", str(cache))
    prefix = grading_environment([]).prefix
    assert prefix != unfinished, "the killed build's folder was handed out"
    assert builds(folder) == [prefix]
    assert check_seal(prefix) == []


@pytest.mark.slow
def test_a_rebuild_leaves_the_build_a_running_session_uses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build whose seal broke is rebuilt aside: the next caller gets a new folder, and the
    old one is still there, whole, for the session that was graded on it."""
    monkeypatch.setenv("CHANGEUP_CACHE", str(tmp_path / "cache"))
    old = grading_environment([]).prefix
    site = next(old.glob("lib/python*/site-packages"))
    site.chmod(0o755)
    (site / "planted.pth").write_text("import os\n")
    site.chmod(0o555)
    assert check_seal(old) != []
    new = grading_environment([]).prefix
    assert new != old
    assert check_seal(new) == []
    assert (old / "bin" / "python").exists()
    assert (site / "planted.pth").exists()
    assert grading_environment([]).prefix == new  # the rebuild is what is published now


def toy(content: str) -> Callable[[Path], None]:
    """A build that writes one file holding ``content``, then freezes and seals it."""

    def build(target: Path) -> None:
        (target / "file").write_text(content)
        freeze(target)
        seal(target, {})

    return build


def test_a_published_build_is_reused_and_a_build_left_by_an_earlier_changeup_too(tmp_path: Path) -> None:
    """The second request gets the first build; a sealed folder at the link's place (how builds
    were made before, in place) is used as it is, not rebuilt."""
    first = cached(tmp_path, "k", toy("one"))
    assert cached(tmp_path, "k", toy("two")) == first
    assert (tmp_path / "k").resolve() == first.resolve()
    legacy = tmp_path / "old"
    legacy.mkdir()
    toy("legacy")(legacy)
    assert cached(tmp_path, "old", toy("new")) == legacy


def test_an_unfinished_build_in_place_is_removed_and_built_aside(tmp_path: Path) -> None:
    """A folder at the link's place with no .ready (an earlier changeup killed mid-build) is
    removed under the lock and the build published by a link instead."""
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "half").write_text("")
    built = cached(tmp_path, "old", toy("new"))
    assert (tmp_path / "old").is_symlink()
    assert (built / "file").read_text() == "new"
    remove(built)


def test_a_failed_build_leaves_nothing_published(tmp_path: Path) -> None:
    """A build that raises publishes nothing; the next request builds again."""

    def failing(target: Path) -> None:
        remove(target)
        raise RuntimeError("pip failed")

    with pytest.raises(RuntimeError, match="pip failed"):
        cached(tmp_path, "k", failing)
    assert not (tmp_path / "k").exists()
    assert (cached(tmp_path, "k", toy("ok")) / "file").read_text() == "ok"
