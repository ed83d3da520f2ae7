"""The red team against changeup's own hands: what an agent leaves where changeup reads and writes
its files (message files, the inbox, .git, the watched workspace) is data, never a way out.

Each case is a real session through the CLI with an attacking agent of tests/fixtures/redteam-agents;
the host files it aims at are hashed before and after, and the run's event log must read whole.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from orchestrator.log.eventlog import read_log
from tests.cli import changeup
from tests.redteam.common import (
    AGENTS,
    NEUTRALISED,
    TARGET,
    needs_bubblewrap,
    needs_root,
    outcome,
    records,
    run,
    tree_digest,
)

pytestmark = pytest.mark.slow

#: What the root-only host file holds: it reads like a commit id, so a HEAD linked to it would show.
HOST_LINE = "c0ffee" * 6 + "c0ff"


def root_only_file(tmp_path: Path) -> Path:
    """A host file only root may read or write, outside every run."""
    path = tmp_path / "host" / "root-only.txt"
    path.parent.mkdir()
    path.write_text(HOST_LINE + "\n")
    path.chmod(0o600)
    return path


def three_messages(tmp_path: Path) -> Path:
    """The red-team target with a second and a third message, sent whatever the tests say."""
    challenge = tmp_path / "target"
    shutil.copytree(TARGET, challenge)
    file = challenge / "challenge.yaml"
    data = yaml.safe_load(file.read_text())
    data["challenge"]["triggers"] = [
        {"id": "second", "at": "2s", "message": "Second message: carry on."},
        {"id": "third", "after": "second", "at": "4s", "message": "Third message: carry on."},
    ]
    file.write_text(yaml.safe_dump(data, sort_keys=False))
    return challenge


class Watches(threading.Thread):
    """Samples the inotify watches of a run's changeup process and its descendants while it runs,
    and the inodes of the workspace's folders at the same moment."""

    def __init__(self, out: Path) -> None:
        super().__init__(daemon=True)
        self.out = out
        self.samples = 0
        self.outside: set[int] = set()  # watched inodes that were no folder of the workspace
        self._done = threading.Event()

    def run(self) -> None:
        """Sample until stopped."""
        while not self._done.is_set():
            pids = list(self.out.glob("*/pid"))
            if pids:
                watched = _inotify_inodes(int(pids[0].read_text()))
                folders = _folder_inodes(pids[0].parent / "workspace")
                if watched:
                    self.samples += 1
                    self.outside |= watched - folders
            time.sleep(0.05)

    def stop(self) -> None:
        """Stop sampling."""
        self._done.set()
        self.join()


def _inotify_inodes(pid: int) -> set[int]:
    """The inodes watched by ``pid``'s inotify instances and its descendants'."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rpartition(")")[2].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    family, grew = {pid}, True
    while grew:
        more = {child for child, parent in parents.items() if parent in family} - family
        family |= more
        grew = bool(more)
    inodes: set[int] = set()
    for member in family:
        try:
            fds = list(Path(f"/proc/{member}/fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                if "inotify" not in os.readlink(fd):
                    continue
                info = Path(f"/proc/{member}/fdinfo/{fd.name}").read_text()
            except OSError:
                continue
            for line in info.splitlines():
                if line.startswith("inotify wd:"):
                    inodes.add(int(line.split("ino:")[1].split()[0], 16))
    return inodes


def _folder_inodes(workspace: Path) -> set[int]:
    """The inodes of the workspace and every folder in it (no link followed)."""
    inodes = set()
    for root, _, _ in os.walk(workspace):
        try:
            inodes.add(os.lstat(root).st_ino)
        except OSError:
            continue
    return inodes


@needs_bubblewrap
@needs_root
def test_links_fifos_sockets_and_odd_names_in_the_agents_files_are_data(tmp_path: Path) -> None:
    """The agent links its next message files to a root-only host file and to the run's own
    events.jsonl, makes .git/HEAD a FIFO, then its refs and packed-refs, then a link to the host
    file; moves a link to / into the workspace; leaves a FIFO, a socket and a name that is not
    UTF-8. The host file is byte-identical, each message file is written anew, the session ends
    completed with its log whole, no commit is read from the host file, changeup never watches a
    folder outside the workspace nor reports a change there, and the odd name is shown escaped
    and replays."""
    host = root_only_file(tmp_path)
    before = tree_digest(host.parent)
    watches = Watches(tmp_path / "runs")
    watches.start()
    try:
        report, folder = run(
            three_messages(tmp_path),
            f"command:python3 {AGENTS / 'plants_links.py'}",
            tmp_path / "runs",
            env={"REDTEAM_HOST_FILE": str(host)},
        )
    finally:
        watches.stop()
    assert tree_digest(host.parent) == before
    read_log(folder / "events.jsonl")  # whole: every line a record of its kind
    assert outcome(report) == NEUTRALISED, report["run"]
    attempts = (folder / "workspace" / "attempts.txt").read_text()
    for trap in ("link message-002", "link message-003", "HEAD as a FIFO", "refs/heads/main as a FIFO"):
        assert f"DONE {trap}" in attempts, attempts  # the trap was set
    assert "refused hard-link message-004" in attempts
    for turn, message in ((2, "Second message: carry on."), (3, "Third message: carry on.")):
        assert f"turn {turn}: message file is a - of {len(message)} bytes" in attempts  # a new file
        assert f"turn {turn}: message reads {message!r}" in attempts
    assert "DONE HEAD as a link to the host file" in attempts
    logged = records(folder)
    assert not [r for r in logged if r["kind"] == "git.commit" and HOST_LINE in r["sha"]]
    paths = {c["path"] for r in logged if r["kind"] == "fs.changed" for c in r["changes"]}
    assert "hostroot" in paths  # the link itself is a changed file
    assert not [p for p in paths if p.startswith("hostroot/")]
    assert {"pipe.fifo", "socket.sock", "\udcff\udcfe-bytes.py", "odd-\udcff.py"} <= paths
    assert watches.samples > 0, "the sampler never saw changeup's watches"
    assert not watches.outside, f"inotify watches outside the workspace: {sorted(watches.outside)[:10]}"
    shown = changeup("show", str(folder))
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert "odd-\\xff.py" in shown.stdout
    replayed = changeup("replay", str(folder))  # the odd names are in the decisions' inputs
    assert replayed.returncode == 0, replayed.stdout[-2000:] + replayed.stderr[-2000:]


@needs_bubblewrap
@needs_root
def test_an_inbox_worker_cannot_make_changeup_write_through_its_links(tmp_path: Path) -> None:
    """A worker of an inbox session, as the agent's user, links each next message's name (and
    the temporary name changeup once wrote through) to a root-only host file and tries a hard
    link: every message still arrives as a regular file of its own, and the host file is
    byte-identical."""
    host = root_only_file(tmp_path)
    before = tree_digest(host.parent)
    worker = subprocess.Popen(
        [sys.executable, str(AGENTS / "inbox_worker.py"), str(tmp_path / "runs"), str(host)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        report, folder = run(three_messages(tmp_path), "inbox", tmp_path / "runs")
        said, _ = worker.communicate(timeout=60)
    finally:
        worker.kill()
    assert tree_digest(host.parent) == before
    read_log(folder / "events.jsonl")
    assert report["run"]["status"] == "completed", report["run"]["detail"]
    notes = (folder / "workspace" / "inbox-worker.txt").read_text()
    assert "DONE link .changeup/inbox/002.md to the host file" in notes, said + notes
    assert "refused writing the host file" in notes
    assert "refused hard link" in notes
    for number, text in ((2, "Second message"), (3, "Third message")):
        assert f"message {number}: a regular file reading '{text}" in notes, notes
