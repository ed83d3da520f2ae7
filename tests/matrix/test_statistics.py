"""The comparison's arithmetic against values worked out by hand, and against brute force."""

from __future__ import annotations

import itertools
import statistics

import pytest

from orchestrator.matrix.statistics import difference, pass_all_k, pass_at_k, rate, t975


def test_a_rate_over_three_challenges_matches_the_hand_computed_clustered_error() -> None:
    """2/3, 0/3, 3/3: r = 5/9; residuals 1/3, -5/3, 4/3 sum to 42/9 squared; se = sqrt(1.5 * 42/9) / 9."""
    got = rate([(2, 3), (0, 3), (3, 3)])
    assert (got.successes, got.trials, got.challenges) == (5, 9, 3)
    assert got.rate == pytest.approx(5 / 9)
    assert got.se == pytest.approx(0.293972, abs=1e-6)
    assert (got.low, got.high) == (0.0, 1.0)  # 5/9 ± 4.303 * 0.294, clipped to what a rate can be
    assert got.note.startswith("only 3 challenges")


def test_unequal_trials_weigh_each_trial_once() -> None:
    """1/2, 2/2, 0/1, 3/4: r = 6/9; squared residuals sum to 10/9; se = sqrt(4/3 * 10/9) / 9 = 0.13524."""
    got = rate([(1, 2), (2, 2), (0, 1), (3, 4)])
    assert got.rate == pytest.approx(2 / 3)
    assert got.se == pytest.approx(0.135240, abs=1e-6)
    assert got.low == pytest.approx(2 / 3 - 3.182 * 0.135240, abs=1e-5)
    assert got.high == 1.0


def test_with_equal_trials_the_error_is_that_of_the_per_challenge_rates_mean() -> None:
    """The clustered error, with 3 trials each, equals sd(per-challenge rates) / sqrt(G)."""
    clusters = [(3, 3), (1, 3), (2, 3), (0, 3), (3, 3), (2, 3)]
    rates = [s / n for s, n in clusters]
    got = rate(clusters)
    se = statistics.stdev(rates) / len(rates) ** 0.5
    assert got.se == pytest.approx(se)
    assert got.low == pytest.approx(statistics.mean(rates) - t975(5) * se)


def test_one_challenge_gives_no_interval_and_says_why() -> None:
    """Trials of one challenge are one cluster: a rate, no interval, and a plain note."""
    got = rate([(2, 3)])
    assert got.rate == pytest.approx(2 / 3)
    assert (got.se, got.low, got.high) == (None, None, None)
    assert "1 challenge: no interval" in got.note


def test_challenges_without_valid_trials_are_left_out() -> None:
    """A challenge whose trials were all invalid is no cluster; none at all is no rate (not 0)."""
    assert rate([(1, 2), (0, 0), (2, 2)]).challenges == 2
    empty = rate([(0, 0)])
    assert (empty.rate, empty.trials) == (None, 0)


def test_a_paired_difference_matches_the_hand_computed_paired_error() -> None:
    """a: 1/2, 2/2, 0/2; b: 2/2, 2/2, 1/2. d = 5/6 - 1/2 = 1/3; per-challenge differences
    0.5, 0, 0.5 have sd 0.288675, so se = 0.288675 / sqrt(3) = 1/6."""
    got = difference([((1, 2), (2, 2)), ((2, 2), (2, 2)), ((0, 2), (1, 2))])
    assert got.difference == pytest.approx(1 / 3)
    assert got.rate_a == pytest.approx(0.5)
    assert got.rate_b == pytest.approx(5 / 6)
    assert got.se == pytest.approx(1 / 6)
    assert got.low == pytest.approx(1 / 3 - 4.303 / 6)
    assert got.high == 1.0


def test_a_difference_pairs_only_challenges_both_agents_have() -> None:
    """A challenge where one agent has no valid trial is left out of both rates."""
    got = difference([((1, 2), (2, 2)), ((0, 0), (2, 2)), ((0, 2), (1, 2))])
    assert got.challenges == 2
    assert got.rate_b == pytest.approx(3 / 4)


def test_pass_at_k_and_pass_all_k_by_hand() -> None:
    """n=3, c=1, k=2: 1 - C(2,2)/C(3,2) = 2/3 and C(1,2)/C(3,2) = 0; n=5, c=3, k=2: 0.9 and 0.3."""
    assert pass_at_k(3, 1, 2) == pytest.approx(2 / 3)
    assert pass_all_k(3, 1, 2) == 0
    assert pass_at_k(5, 3, 2) == pytest.approx(0.9)
    assert pass_all_k(5, 3, 2) == pytest.approx(0.3)
    assert pass_at_k(5, 3, 1) == pass_all_k(5, 3, 1) == pytest.approx(0.6)


@pytest.mark.parametrize("n", range(1, 7))
def test_pass_k_equal_the_share_of_k_subsets_of_the_trials(n: int) -> None:
    """Against brute force: pass@k is the share of k-subsets with a success, pass^k of those all successes."""
    for c in range(n + 1):
        outcomes = [True] * c + [False] * (n - c)
        for k in range(1, n + 1):
            subsets = list(itertools.combinations(outcomes, k))
            assert pass_at_k(n, c, k) == pytest.approx(sum(any(s) for s in subsets) / len(subsets))
            assert pass_all_k(n, c, k) == pytest.approx(sum(all(s) for s in subsets) / len(subsets))


def test_pass_k_refuses_k_beyond_the_trials() -> None:
    """pass@k needs k trials to draw from."""
    with pytest.raises(ValueError, match="k <= n"):
        pass_at_k(2, 1, 3)


def test_the_worked_example_of_docs_compare_md() -> None:
    """A: 2/3, 0/3, 3/3; B: 3/3, 1/3, 3/3. B's se is 2/9; B - A is 2/9 with se 1/9, so its
    interval is 2/9 ± 4.303/9 = [-26%, +70%]; A's pass^2 on c1 is 1/3."""
    a, b = [(2, 3), (0, 3), (3, 3)], [(3, 3), (1, 3), (3, 3)]
    assert rate(b).rate == pytest.approx(7 / 9)
    assert rate(b).se == pytest.approx(2 / 9)
    got = difference(list(zip(a, b, strict=True)))
    assert got.difference == pytest.approx(2 / 9)
    assert got.se == pytest.approx(1 / 9)
    assert got.low == pytest.approx(-0.2559, abs=1e-4)
    assert got.high == pytest.approx(0.7003, abs=1e-4)
    assert [pass_at_k(3, 2, k) for k in (1, 2, 3)] == [pytest.approx(2 / 3), 1.0, 1.0]
    assert [pass_all_k(3, 2, k) for k in (1, 2, 3)] == [pytest.approx(2 / 3), pytest.approx(1 / 3), 0.0]
