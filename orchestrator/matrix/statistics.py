"""The arithmetic of a comparison: rates with challenges as clusters, paired differences, pass@k.

Repeated trials of one challenge are not independent evidence: an agent that fails a
challenge tends to fail it again. So the uncertainty of a rate treats each challenge as a
cluster (Liang and Zeger's cluster-robust variance with the usual G/(G-1) correction, as in
Miller, "Adding Error Bars to Evals", 2024). For a rate r = S/N over G challenges, with s_c
successes in n_c trials of challenge c::

    se(r) = sqrt( G/(G-1) * sum_c (s_c - r*n_c)^2 ) / N

With equal trials per challenge this is the standard error of the mean of the per-challenge
rates. A difference between two agents is paired on the challenges both ran: with
u_c = (s_Bc - r_B*n_Bc)/N_B - (s_Ac - r_A*n_Ac)/N_A, se(r_B - r_A) = sqrt(G/(G-1) * sum u_c^2).
Intervals are 95%, ``estimate ± t * se`` with Student's t on G-1 degrees of freedom (few
clusters make the interval wider, as they should), clipped to what a rate can be. One
challenge gives no interval at all; fewer than :data:`FEW_CHALLENGES` get a plain warning.

pass@k (Chen et al., 2021: at least one of k trials succeeds) and pass^k (Yao et al., 2024:
all k succeed) are estimated per challenge from n trials with c successes, without bias:
``1 - C(n-c, k)/C(n, k)`` and ``C(c, k)/C(n, k)``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from orchestrator.log.comparison import DifferenceEstimate, RateEstimate

__all__ = ["FEW_CHALLENGES", "Difference", "Rate", "difference", "pass_all_k", "pass_at_k", "rate", "t975"]

#: Below this many challenges, an interval says little: the report says so in words.
FEW_CHALLENGES = 10

# Student's t, 97.5th percentile, for 1..30 degrees of freedom; beyond, the normal's 1.96 is
# within 2% (standard tables, e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2).
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


def t975(df: int) -> float:
    """The two-sided 95% critical value of Student's t with ``df`` degrees of freedom."""
    if df < 1:
        raise ValueError("t needs at least 1 degree of freedom")
    return _T975[df - 1] if df <= len(_T975) else 1.96


def _note(clusters: int) -> str:
    if clusters == 0:
        return "no valid trial: nothing to estimate"
    if clusters == 1:
        return "1 challenge: no interval; the rate describes these trials of one challenge only"
    if clusters < FEW_CHALLENGES:
        return (
            f"only {clusters} challenges: the interval is wide and means little; add challenges, not trials"
        )
    return ""


@dataclass(frozen=True, slots=True)
class Rate:
    """A success rate over trials, challenges as clusters."""

    successes: int
    trials: int
    challenges: int
    rate: float | None
    se: float | None
    low: float | None
    high: float | None
    note: str

    def row(self) -> RateEstimate:
        """As the comparison shows it, rounded to 4 places."""
        return RateEstimate(
            successes=self.successes,
            trials=self.trials,
            challenges=self.challenges,
            rate=_round(self.rate),
            se=_round(self.se),
            low=_round(self.low),
            high=_round(self.high),
            note=self.note,
        )


@dataclass(frozen=True, slots=True)
class Difference:
    """``b``'s rate minus ``a``'s, paired on the challenges both have valid trials of."""

    rate_a: float | None
    rate_b: float | None
    difference: float | None
    se: float | None
    low: float | None
    high: float | None
    challenges: int
    note: str

    def row(self) -> DifferenceEstimate:
        """As the comparison shows it, rounded to 4 places."""
        return DifferenceEstimate(
            rate_a=_round(self.rate_a),
            rate_b=_round(self.rate_b),
            difference=_round(self.difference),
            se=_round(self.se),
            low=_round(self.low),
            high=_round(self.high),
            challenges=self.challenges,
            note=self.note,
        )


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def rate(clusters: Sequence[tuple[int, int]]) -> Rate:
    """The rate of ``(successes, trials)`` per challenge; challenges with no valid trial are left out."""
    kept = [(s, n) for s, n in clusters if n > 0]
    successes, trials, g = sum(s for s, _ in kept), sum(n for _, n in kept), len(kept)
    if g == 0:
        return Rate(0, 0, 0, None, None, None, None, _note(0))
    r = successes / trials
    if g == 1:
        return Rate(successes, trials, 1, r, None, None, None, _note(1))
    se = math.sqrt(g / (g - 1) * sum((s - r * n) ** 2 for s, n in kept)) / trials
    half = t975(g - 1) * se
    return Rate(successes, trials, g, r, se, max(0.0, r - half), min(1.0, r + half), _note(g))


def difference(pairs: Sequence[tuple[tuple[int, int], tuple[int, int]]]) -> Difference:
    """``b - a`` from ``((s_a, n_a), (s_b, n_b))`` per challenge; challenges where either has no
    valid trial are left out, so both rates are over the same challenges."""
    kept = [(a, b) for a, b in pairs if a[1] > 0 and b[1] > 0]
    g = len(kept)
    if g == 0:
        return Difference(None, None, None, None, None, None, 0, _note(0))
    total_a = sum(a[1] for a, _ in kept)
    total_b = sum(b[1] for _, b in kept)
    r_a = sum(a[0] for a, _ in kept) / total_a
    r_b = sum(b[0] for _, b in kept) / total_b
    d = r_b - r_a
    if g == 1:
        return Difference(r_a, r_b, d, None, None, None, 1, _note(1))
    u = [(b[0] - r_b * b[1]) / total_b - (a[0] - r_a * a[1]) / total_a for a, b in kept]
    se = math.sqrt(g / (g - 1) * sum(x * x for x in u))
    half = t975(g - 1) * se
    return Difference(r_a, r_b, d, se, max(-1.0, d - half), min(1.0, d + half), g, _note(g))


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of ``k`` trials succeeds, from ``c`` successes in ``n`` (k <= n)."""
    _check(n, c, k)
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_all_k(n: int, c: int, k: int) -> float:
    """pass^k: the chance that all ``k`` trials succeed, from ``c`` successes in ``n`` (k <= n)."""
    _check(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def _check(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"needs 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")
