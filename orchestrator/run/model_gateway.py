"""The session's model gateway, started with the session and stopped with it.

:func:`model_gateway` starts the gateway (:mod:`orchestrator.gateway`) a run was told to use,
gives the agent's sandbox its variables and token and withholds the real keys from it, takes
the keys out of the seeded HOME, and writes the gateway's records to the run's log: one
``gateway.started``, then one ``model.request`` per request, at the session's time. With a
budget, each request the budget refuses is told to the session (``spent``), which ends. With
``--agent-network model`` the gateway listens on a Unix socket too: the sandbox's one way out
(:meth:`~orchestrator.grading.agent_sandbox.AgentSandbox.reach_model`). Its traffic is recorded
under the run folder's ``model/`` (:mod:`orchestrator.gateway.recording`); a run told to replay
one answers from that recording (``model.replaying``), and logs a ``model.diverged`` where it
cannot, and a ``model.forked`` where a fork takes over.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from orchestrator.gateway.access import GatewaySettings, agent_variables, scrub_home
from orchestrator.gateway.budget import Budget
from orchestrator.gateway.proxy import Gateway
from orchestrator.gateway.recording import FOLDER, Divergence, Recorder, Tape
from orchestrator.grading.agent_sandbox import AgentSandbox
from orchestrator.log.eventlog import EventLog
from orchestrator.log.records import GatewayStarted, ModelDiverged, ModelForked, ModelReplaying, ModelRequest

__all__ = ["model_gateway"]


@contextlib.asynccontextmanager
async def model_gateway(
    settings: GatewaySettings | None,
    log: EventLog,
    box: AgentSandbox,
    clock: Callable[[], float],
    spent: Callable[[str], None],
) -> AsyncIterator[Gateway | None]:
    """For the block, the run's gateway (None: the run uses none); ``clock`` is the session's
    time; ``spent`` is told why, each time the budget refuses a request."""
    if settings is None:
        yield None
        return

    def record(request: ModelRequest) -> None:
        log.append(request, max(clock(), log.last_t))

    def diverged(divergence: Divergence) -> None:
        run = str(settings.replay)
        found = ModelDiverged(divergence.number, divergence.recorded or 0, run, divergence.reason)
        log.append(found, max(clock(), log.last_t))

    fork = settings.fork

    def forked(number: int) -> None:
        log.append(ModelForked(number, fork.trigger if fork else ""), max(clock(), log.last_t))

    upstreams = settings.upstreams
    tape = None
    if settings.replay is not None:
        tape = Tape(
            settings.replay, diverged, fork=fork.text if fork else "", on_fork=forked, here=log.path.parent
        )
        replaying = ModelReplaying(
            str(settings.replay),
            fork.trigger if fork else "",
            fork.file if fork else "",
            fork.text if fork else "",
        )
        log.append(replaying, log.last_t)
    limits = settings.budget
    budget = Budget(limits) if limits is not None else None
    # Short (a Unix socket's path is at most 107 bytes), only changeup's (0700), gone at the end.
    with tempfile.TemporaryDirectory(prefix="changeup-model-") as folder:
        unix = Path(folder) / "gateway.sock" if settings.model_only else None
        gateway = Gateway(
            upstreams, settings.prices, record, budget=budget, on_exhausted=spent, unix=unix, tape=tape
        )
        gateway.recorder = Recorder(log.path.parent / FOLDER, upstreams.secrets(), gateway.token)
        async with gateway:
            box.give(agent_variables(gateway.url, gateway.token), upstreams.secrets())
            if unix is not None:
                box.reach_model(unix, gateway.port)
            scrub_home(box.view.home, upstreams.secrets(), gateway.token)
            upstream = (
                f"replay:{settings.replay}" if settings.replay is not None else upstreams.override or ""
            )
            started = GatewayStarted(
                gateway.url,
                upstream,
                tuple(sorted(upstreams.keys)),
                settings.prices.describe(),
                limits.describe() if limits is not None else "",
            )
            log.append(started, log.last_t)
            yield gateway
