"""docs/scale.md covers what the code offers: every backend key, the agent keys for Ray, the limits."""

from __future__ import annotations

from orchestrator.matrix.budget import FDS_PER_SESSION
from orchestrator.matrix.driver import LOST_RETRIES
from orchestrator.matrix.ray_backend import SHIPPING, WORKER
from orchestrator.matrix.session_process import MARGIN
from orchestrator.matrix.spec import BackendModel
from tests.cli import REPO

DOC = (REPO / "docs" / "scale.md").read_text()


def test_every_backend_key_and_ray_agent_key_is_documented() -> None:
    """Each field of ``backend:``, and an agent's ``resources`` and ``send_env``, appear as `key`."""
    for name in [*BackendModel.model_fields, "resources", "send_env"]:
        assert f"`{name}`" in DOC, name


def test_the_numbers_the_doc_states_are_the_code_s() -> None:
    """The timeout's margin, the host's time to ship, the lost-session retries, the open files a
    session, the worker file."""
    assert f"`limits.session` + {MARGIN / 60:g}min" in DOC
    assert f"within {SHIPPING / 60:g} minutes of that limit" in DOC
    assert f"up to {LOST_RETRIES} times in a row" in DOC
    assert f"about {FDS_PER_SESSION} open files a session" in DOC
    assert f"`{WORKER}`" in DOC
