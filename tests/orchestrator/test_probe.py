"""The probe of prohibited effects (``grading/probe.py``), in a real interpreter: what it notes, what not.

Each test starts a fresh ``python -I`` that loads the probe as the bootstrap does, makes some
attempts, and exits; the effects file it leaves is read back with ``read_effects``. The
workspace, the temporary folder and "outside" are folders of the test's own, so nothing here
touches the machine; connections go to TEST-NET-3 (no one answers) without waiting, and name
lookups are audit events raised by hand, so no resolver is asked.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from orchestrator.grading.effects import EFFECTS, MOST, PROBE, read_effects
from orchestrator.grading.harness import BOOTSTRAP
from orchestrator.log.records import Effect

#: Run in the child before the attempts: load the probe as ``bootstrap._probe`` does.
PROLOGUE = """
import importlib.util, json, os, socket, sys
config = json.loads(sys.argv[1])
spec = importlib.util.spec_from_file_location("changeup_probe", config["probe"])
probe = importlib.util.module_from_spec(spec)
spec.loader.exec_module(probe)
probe.watch(config)
"""


def attempt(
    tmp_path: Path, code: str, watch: tuple[str, ...] = ("network", "writes-outside-workspace")
) -> set[Effect]:
    """Run ``code`` in a watched interpreter (its cwd the workspace, TMPDIR the temporary folder);
    the effects noted. Folders: ``ws``, ``out`` (temporary), ``elsewhere`` (outside)."""
    for name in ("ws", "out", "elsewhere"):
        (tmp_path / name).mkdir(exist_ok=True)
    config = {
        "probe": str(PROBE),
        "file": str(tmp_path / "out" / EFFECTS),
        "watch": list(watch),
        "most": MOST,
        "allowed": [str(tmp_path / "ws")],
        "temporary": str(tmp_path / "out"),
        "own": [str(tmp_path / "out" / "junit.xml")],
    }
    script = PROLOGUE + textwrap.dedent(code)
    done = subprocess.run(
        [sys.executable, "-I", "-c", script, json.dumps(config)],
        cwd=tmp_path / "ws",
        env={
            "TMPDIR": str(tmp_path / "out"),
            "PATH": "/usr/bin:/bin",
            "OUTSIDE": str(tmp_path / "elsewhere"),
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    effects = read_effects(tmp_path / "out" / EFFECTS, lambda test: f"renamed:{test}")
    assert effects is not None, "the probe never said it was watching"
    return set(effects)


def details(effects: set[Effect], kind: str) -> set[str]:
    """The details of the effects of one kind."""
    return {e.detail for e in effects if e.effect == kind}


def test_writes_inside_the_workspace_and_the_temporary_folders_are_no_effect(tmp_path: Path) -> None:
    """Files written in the workspace, tempfile's files and folders, an O_TMPFILE file and the
    harness's own JUnit file: none is noted; nor is reading a file outside."""
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "read.txt").write_text("data")
    found = attempt(
        tmp_path,
        """
        import shutil, tempfile
        open("result.txt", "w").write("x")
        os.makedirs("sub/deeper"); os.replace("result.txt", "sub/result.txt"); shutil.rmtree("sub")
        handle, name = tempfile.mkstemp(); os.close(handle); os.remove(name)
        shutil.rmtree(tempfile.mkdtemp())
        tempfile.TemporaryFile().close()
        open(os.path.join(os.environ["TMPDIR"], "junit.xml"), "w").close()
        assert open(os.path.join(os.environ["OUTSIDE"], "read.txt")).read() == "data"
        """,
    )
    assert found == set()


def test_every_kind_of_write_outside_is_noted_with_its_path(tmp_path: Path) -> None:
    """Opening for writing, making and removing folders (by a dir_fd, as shutil.rmtree does),
    renaming, linking, a sqlite database and a dot-file in the temporary folder (HOME there)."""
    outside = tmp_path / "elsewhere"
    found = attempt(
        tmp_path,
        """
        import pathlib, shutil, sqlite3
        out = os.environ["OUTSIDE"]
        open(os.path.join(out, "written.txt"), "w").close()
        os.mkdir(os.path.join(out, "folder")); open(os.path.join(out, "folder", "x"), "w").close()
        shutil.rmtree(os.path.join(out, "folder"))
        open("here.txt", "w").close(); os.replace("here.txt", os.path.join(out, "moved.txt"))
        os.symlink("/etc/hostname", os.path.join(out, "link"))
        sqlite3.connect(pathlib.Path(out) / "app.db").close()
        sqlite3.connect(":memory:").close()
        open(os.path.join(os.environ["TMPDIR"], ".cache"), "w").close()
        try:
            open("/proc/changeup-cannot-write-here", "w")
        except OSError:
            pass  # refused by the system: the attempt is still noted
        """,
    )
    writes = details(found, "writes-outside-workspace")
    assert f"open {outside}/written.txt for writing" in writes
    assert f"make folder {outside}/folder" in writes
    assert f"remove {outside}/folder/x" in writes  # relative to its dir_fd
    assert f"remove folder {outside}/folder" in writes
    assert f"rename {outside}/moved.txt" in writes
    assert f"link at {outside}/link" in writes
    assert f"open the database {outside}/app.db" in writes
    assert f"open {tmp_path / 'out'}/.cache for writing" in writes
    assert "open /proc/changeup-cannot-write-here for writing" in writes
    assert not any("memory" in w for w in writes)


def test_reaching_beyond_loopback_is_noted_and_loopback_is_not(tmp_path: Path) -> None:
    """A connection, a datagram and a wildcard bind to or on internet addresses, a lookup of an
    outside name: noted. Loopback connections and binds, a lookup of localhost, a Unix socket
    pair: not."""
    found = attempt(
        tmp_path,
        """
        def attempt_connect(address, family=socket.AF_INET):
            with socket.socket(family, socket.SOCK_STREAM) as s:
                s.setblocking(False)
                try:
                    s.connect(address)
                except OSError:
                    pass
        attempt_connect(("203.0.113.7", 443))
        attempt_connect(("127.0.0.1", 9))
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            try:
                s.sendto(b"x", ("203.0.113.7", 9))
            except OSError:
                pass
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
        with socket.socket() as s:
            s.bind(("0.0.0.0", 0))
        sys.audit("socket.getaddrinfo", "api.example.com", 443, 0, 0, 0)
        sys.audit("socket.getaddrinfo", "localhost", 443, 0, 0, 0)
        sys.audit("socket.getaddrinfo", "203.0.113.7", 443, 0, 0, 0)  # a number: its connect says it
        a, b = socket.socketpair(); a.close(); b.close()
        """,
    )
    assert details(found, "network") == {
        "connect to 203.0.113.7:443",
        "send a datagram to 203.0.113.7:9",
        "listen on 0.0.0.0:0",
        "look up api.example.com",
    }


def test_only_the_effects_watched_are_noted_and_each_names_its_test(tmp_path: Path) -> None:
    """Watching the network alone, a write outside is not noted; what pytest says it runs
    (``PYTEST_CURRENT_TEST``) becomes the effect's test, through the run's renaming."""
    found = attempt(
        tmp_path,
        """
        os.environ["PYTEST_CURRENT_TEST"] = "phase1_0123456789ab/test_x.py::test_y (call)"
        open(os.path.join(os.environ["OUTSIDE"], "written.txt"), "w").close()
        sys.audit("socket.gethostbyname", "api.example.com")
        """,
        watch=("network",),
    )
    assert found == {
        Effect("network", "look up api.example.com", "renamed:phase1_0123456789ab/test_x.py::test_y")
    }


def test_a_run_the_probe_never_watched_is_not_a_clean_one(tmp_path: Path) -> None:
    """No file, or a file without the probe's first line: not watched (None), never "nothing seen"."""
    assert read_effects(tmp_path / "missing.jsonl", str) is None
    forged = tmp_path / "forged.jsonl"
    forged.write_text(json.dumps({"effect": "network", "detail": "x", "test": ""}) + "\n")
    assert read_effects(forged, str) is None


def test_a_probe_that_will_not_start_leaves_the_run_going(tmp_path: Path) -> None:
    """The bootstrap's loader says why on stderr and goes on: no effects file, so the run reads as
    not watched, and the test process is not cut short (which would void its verdicts)."""
    script = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('bootstrap', {str(BOOTSTRAP)!r})\n"
        "bootstrap = importlib.util.module_from_spec(spec); spec.loader.exec_module(bootstrap)\n"
        f"bootstrap._probe({{'probe': {str(tmp_path / 'missing.py')!r}, 'file': {str(tmp_path / 'e')!r}}})\n"
        "print('went on')\n"
    )
    done = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "went on\n"
    assert "the prohibited-effects probe did not start" in done.stderr
    assert read_effects(tmp_path / "e", str) is None
