"""``budget.exhausted``: an engine event that ends the session ``budget_exhausted``, as it is logged."""

from __future__ import annotations

from triggers import BudgetExhausted, EndSession, Engine, SessionStarted, decode
from triggers.spec import build_spec


def test_a_budget_exhausted_ends_the_session_and_nothing_after_it_decides() -> None:
    """The event ends the session with its detail; the engine takes nothing more; the record decodes."""
    engine = Engine(build_spec(["p1"], [], briefing="Do p1.", time_limit=600.0))
    engine.step(SessionStarted(0.0, ("a.py",)))
    event = BudgetExhausted(3.5, "the session's budget of 2 model requests is spent")
    assert engine.step(event) == (EndSession("budget_exhausted", event.detail),)
    assert engine.ended == EndSession("budget_exhausted", event.detail)
    assert engine.step(BudgetExhausted(4.0, "again")) == ()
    assert decode(event.to_record()) == event
