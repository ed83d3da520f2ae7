"""The session's model gateway, started with the session and stopped with it.

:func:`model_gateway` starts the gateway (:mod:`orchestrator.gateway`) a run was told to use,
gives the agent's sandbox its variables and token and withholds the real keys from it, takes
the keys out of the seeded HOME, and writes the gateway's records to the run's log: one
``gateway.started``, then one ``model.request`` per request, at the session's time. With a
budget, each request the budget refuses is told to the session (``spent``), which ends.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable

from orchestrator.gateway.access import GatewaySettings, agent_variables, scrub_home
from orchestrator.gateway.budget import Budget
from orchestrator.gateway.proxy import Gateway
from orchestrator.grading.agent_sandbox import AgentSandbox
from orchestrator.log.eventlog import EventLog
from orchestrator.log.records import GatewayStarted, ModelRequest

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

    upstreams = settings.upstreams
    limits = settings.budget
    budget = Budget(limits) if limits is not None else None
    async with Gateway(upstreams, settings.prices, record, budget=budget, on_exhausted=spent) as gateway:
        box.give(agent_variables(gateway.url, gateway.token), upstreams.secrets())
        scrub_home(box.view.home, upstreams.secrets(), gateway.token)
        started = GatewayStarted(
            gateway.url,
            upstreams.override or "",
            tuple(sorted(upstreams.keys)),
            settings.prices.describe(),
            limits.describe() if limits is not None else "",
        )
        log.append(started, log.last_t)
        yield gateway
