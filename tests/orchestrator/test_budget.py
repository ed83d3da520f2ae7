"""The model budget (orchestrator.gateway.budget): reading ``--budget``, counting, and refusing."""

from __future__ import annotations

import pytest

from orchestrator.gateway.budget import Budget, BudgetError, Limits, Spent
from orchestrator.gateway.providers import quota_refusal


@pytest.mark.parametrize(
    ("text", "limits"),
    [
        ("requests=3", Limits(requests=3)),
        ("tokens=5000", Limits(tokens=5000)),
        ("cost=2.50", Limits(cost_usd=2.5)),
        ("cost=$0.1", Limits(cost_usd=0.1)),
        (" cost = 1 , requests=2,tokens=10 ", Limits(2, 10, 1.0)),
    ],
)
def test_a_budget_reads_any_subset_in_any_order(text: str, limits: Limits) -> None:
    """Each part alone or all together, spaces and a dollar sign allowed; describe() reads back."""
    assert Limits.parse(text) == limits
    assert Limits.parse(limits.describe()) == limits


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("", "'' is not NAME=VALUE"),
        ("requests", "'requests' is not NAME=VALUE"),
        ("dollars=3", "'dollars=3' is not NAME=VALUE with NAME one of requests, tokens, cost"),
        ("requests=3,,tokens=4", "'' is not NAME=VALUE"),
        ("requests=0", "requests='0' is not a whole number of at least 1"),
        ("tokens=1.5", "tokens='1.5' is not a whole number"),
        ("tokens=-2", "tokens='-2' is not a whole number"),
        ("tokens=²", "tokens='²' is not a whole number"),
        ("cost=0", "cost='0' is not a positive amount"),
        ("cost=nan", "cost='nan' is not a positive amount"),
        ("cost=inf", "cost='inf' is not a positive amount"),
        ("cost=lots", "cost='lots' is not a positive amount"),
        ("requests=2,requests=3", "requests is given twice"),
    ],
)
def test_a_bad_budget_names_its_bad_part(text: str, named: str) -> None:
    """The error quotes the budget and the part that is wrong, and what would be valid."""
    with pytest.raises(BudgetError) as caught:
        Limits.parse(text)
    assert named in str(caught.value)
    assert repr(text) in str(caught.value)


def test_requests_count_when_admitted_and_the_one_after_the_last_is_refused() -> None:
    """requests=2: two admitted (even before either ends), the third and every later one refused."""
    budget = Budget(Limits(requests=2))
    assert budget.admit() is None
    assert budget.admit() is None
    assert budget.spent == Spent(requests=2)
    assert budget.exhausted is None
    refusal = budget.admit()
    assert refusal == "the session's budget of 2 model requests is spent"
    assert budget.exhausted == refusal
    assert budget.admit() == refusal
    assert budget.spent.requests == 2  # a refused request never counts


def test_tokens_count_when_a_request_ends_and_one_in_flight_may_go_over() -> None:
    """tokens=100: a request admitted at 90 finishes at 150; the next is refused, naming the use."""
    budget = Budget(Limits(tokens=100))
    assert budget.admit() is None
    budget.settle(90, 0.01)
    assert budget.admit() is None  # 90 < 100: it may go on
    budget.settle(60, None)
    assert budget.spent == Spent(requests=2, tokens=150, cost_usd=0.01, unpriced=1)
    assert budget.admit() == "the session's budget of 100 tokens is spent (150 used)"


def test_cost_counts_the_priced_requests() -> None:
    """cost=0.05: unpriced requests add nothing (counted apart); reaching the limit exactly spends it."""
    budget = Budget(Limits(cost_usd=0.05))
    for cost in (0.02, None, 0.03):
        assert budget.admit() is None
        budget.settle(10, cost)
    assert budget.spent == Spent(requests=3, tokens=30, cost_usd=0.05, unpriced=1)
    assert budget.admit() == "the session's budget of $0.05 is spent ($0.0500 used)"


def test_the_first_spent_limit_is_the_reason() -> None:
    """With several limits, the one spent is named; requests first when several are."""
    budget = Budget(Limits(requests=5, tokens=10, cost_usd=1.0))
    assert budget.admit() is None
    budget.settle(10, 0.5)
    assert budget.admit() == "the session's budget of 10 tokens is spent (10 used)"
    both = Budget(Limits(requests=1, tokens=1))
    assert both.admit() is None
    both.settle(5, None)
    assert both.admit() == "the session's budget of 1 model requests is spent"


def test_no_limit_never_refuses() -> None:
    """A budget with no limit (only reachable in code) admits everything."""
    budget = Budget(Limits())
    for _ in range(50):
        assert budget.admit() is None
        budget.settle(10**6, 100.0)
    assert budget.exhausted is None


@pytest.mark.parametrize(
    ("provider", "status", "body"),
    [
        ("anthropic", 400, {"type": "error", "error": {"type": "invalid_request_error", "message": "m"}}),
        (
            "openai",
            429,
            {
                "error": {
                    "message": "m",
                    "type": "insufficient_quota",
                    "param": None,
                    "code": "insufficient_quota",
                }
            },
        ),
        ("gemini", 429, {"error": {"code": 429, "message": "m", "status": "RESOURCE_EXHAUSTED"}}),
    ],
)
def test_each_provider_refuses_in_its_own_documented_shape(
    provider: str, status: int, body: dict[str, object]
) -> None:
    """Anthropic's spend-limit error, OpenAI's insufficient_quota, Gemini's RESOURCE_EXHAUSTED."""
    assert quota_refusal(provider, "m") == (status, body)
