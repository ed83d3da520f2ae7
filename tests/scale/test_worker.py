"""A session host without Ray: a real session run from a parcel, on a node's disk of its own.

:class:`SessionHost` is what the Ray backend places on a worker; here it is called directly, in
this process, as the actor would be: the session itself runs in its own process, for real.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from orchestrator.challenge.loader import load_challenge
from orchestrator.log.cells import Cell, SessionOrder, order_from_json, order_to_json
from orchestrator.matrix.backends import SessionFailed
from orchestrator.matrix.parcel import pack, unpack
from orchestrator.matrix.worker import ROOT, SessionHost, sweep
from tests.cli import REPO

pytestmark = pytest.mark.slow

#: The agent writes, in the workspace, the variable the driver sent and a Ray variable of the node's.
SEES = 'command:printf \'%s\\n\' "$SENT_BY_DRIVER" "${RAY_ADDRESS:-none}" > seen.txt'


def order(agent: str) -> SessionOrder:
    """An order as the driver makes it: its paths are the driver's, which the node does not have."""
    return SessionOrder(
        cell=Cell("normalize-tags", "a", "evolving", 1),
        attempt=1,
        challenge=Path("/driver/only/challenges/normalize-tags"),
        agent=agent,
        out=Path("/driver/only/results/runs"),
        name="normalize-tags--a--evolving--t1--a1",
        shares=("/x:rw",),
    )


def test_an_order_round_trips_through_json() -> None:
    """What the host writes for its session process is the order it was given."""
    given = order("scripted")
    assert order_from_json(order_to_json(given)) == given


def test_the_host_runs_the_session_from_the_parcel_and_sends_back_its_run_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The challenge comes only as a parcel; the agent sees the variable sent with it and none of
    Ray's; the run folder comes back whole, and the node's work folder is gone."""
    node = tmp_path / "node"
    monkeypatch.setenv(ROOT, str(node))
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.1:6379")
    challenge = load_challenge(REPO / "challenges" / "normalize-tags")
    answer = SessionHost().run(order(SEES), pack(challenge.root), {"SENT_BY_DRIVER": "sent along"}, 600.0)
    assert (answer["status"], answer["detail"]) == ("ended", "")
    folder = unpack(answer["parcel"], tmp_path / "back")
    report = json.loads((folder / "report.json").read_text())
    assert report["run"]["status"] == "completed"
    assert (folder / "workspace" / "seen.txt").read_text() == "sent along\nnone\n"
    assert (folder / "challenge" / "challenge.yaml").read_text() == (
        challenge.root / "challenge.yaml"
    ).read_text()
    assert list(node.iterdir()) == []


def test_a_session_that_cannot_run_fails_with_the_end_of_its_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A variant the challenge does not have: the host raises SessionFailed saying so."""
    monkeypatch.setenv(ROOT, str(tmp_path / "node"))
    challenge = load_challenge(REPO / "challenges" / "normalize-tags")
    with pytest.raises(SessionFailed, match="has no variant 'broken/nope'"):
        SessionHost().run(order("scripted:broken/nope"), pack(challenge.root), {}, 600.0)


def test_a_work_folder_is_swept_once_its_host_is_gone(tmp_path: Path) -> None:
    """A work folder whose owner process ended is removed; one whose owner lives is kept."""
    gone = subprocess.Popen(["true"])
    gone.wait()
    dead, live = tmp_path / "session-dead", tmp_path / "session-live"
    for folder, pid in ((dead, gone.pid), (live, os.getpid())):
        folder.mkdir()
        (folder / "owner").write_text(str(pid))
    assert sweep(tmp_path) == [dead]
    assert live.is_dir()
