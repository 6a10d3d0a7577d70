"""Sequential Monte Carlo: stop drawing once every verdict is decided.

The one stopping rule of every check (jl-check's claim groups and the probability readings of
:mod:`attnspec.theorem`). A Monte Carlo point is run in *looks* of ``look`` trials, up to ``trials`` (at most
``ceil(trials / look)`` looks, J). After each look a row is **settled** when more trials
could not change its verdict except with small probability:

* its verdict does not depend on the trials (a precondition: vacuous, hypothesis-unmet, the
  zero output meets the tolerance, an exact law decides it, or the claimed probability is
  so close to 1 that even ``trials``/``trials`` failures could not contradict it);
* or its Clopper–Pearson interval at level 1 − ALPHA/J (Bonferroni over the J looks) lies
  on one side of each threshold of :func:`attnspec.verdicts.classify.classify_probability`:
  above the claim (violated), below claim/10 (loose), or inside [claim/10, claim] (holds);
* or its claim is beyond what the trials resolve and the violation search below is done.

**Beyond resolution: a violation search.** A row whose claimed probability is below what
``trials`` trials resolve (even 0 failures leave the 95% interval's upper end above the
claim, so neither "holds" nor "loose" can ever be shown) can only come out ``violated`` or
``measured``: its Monte Carlo is a search for violations. It stops, with no failure seen,
once a failure rate of :data:`SEARCH_RATE` or more would have given at least one failure with
probability >= 1 − :data:`SEARCH_BETA` (:func:`search_trials` trials: 1,840); its evidence
says so. This is the rule's one departure from the full run's verdict: a violation rarer than
SEARCH_RATE, which the full budget might still have met, is not searched for.

**Near the resolution limit: the whole budget.** A claim within a factor :data:`NEAR_FACTOR`
below the resolution limit (the 95% upper end of 0/``trials``) is not searched for a short
while: its row draws every trial (:func:`near_resolution`). There a bound that is off by a
modest factor gives a failure rate between the claim and SEARCH_RATE, the band a short search
misses and the full budget shows (a true rate of 0.001 ends ``measured`` in about 13.5% of
2,000-trial searches, in well under 0.1% of full runs: :func:`simulated_miss_rate`); far
below the limit such a rate would need the bound to be off by many orders of magnitude. The
trials the short searches save pay for these rows.

**Error rate.** The J intervals cover the true failure probability simultaneously with
probability >= 1 − ALPHA (Bonferroni), so a row that stops early carries the verdict of
the full run's classifier — computed on the counts at the stop with the usual 95% interval,
which is narrower than the stopping interval and so on the same side of every threshold —
and that verdict is wrong with probability at most ALPHA = 0.01 (tested in
``tests/unit/test_jl_sequential.py``). A row that never settles runs all ``trials`` and is
classified exactly as a fixed-size run. Fixed seeds give the same looks, the same stops
and the same table every time.

**Curtailment of a threshold test.** A search that asks, at each candidate, whether a success
rate over a fixed ``trials`` reaches a target (sa-check's minimal width d*: success >= 1 − β)
stops drawing at a candidate once :func:`curtailed` says the rest of its trials cannot change
the answer; :func:`threshold_passed` is then the answer all ``trials`` would give. No error is
added: the decision is the one the full budget gives on the same draws.

The functions below name a row's numbers alike: ``failures`` and ``trials``, the counts drawn
so far; ``claimed``, the claimed failure probability; ``trials_max``, the most trials the row
may draw; ``n_looks``, the looks planned (J). A threshold test counts ``successes`` among
``drawn`` of its fixed ``trials``, against the success rate ``target``.
"""

from __future__ import annotations

import math

from attnspec.numerics.stats import clopper_pearson  # cached there: the same interval is asked for at every look
from attnspec.verdicts.classify import LOOSE_FACTOR

#: the total probability that some stopping interval misses the truth (Bonferroni over looks)
ALPHA = 0.01


def looks(trials: int, look: int) -> int:
    """The number J of looks of ``look`` trials needed for ``trials``.

    Parameters
    ----------
    trials : int
        The trials wanted.
    look : int
        Trials per look (at least 1 is taken).

    Returns
    -------
    int
        J >= 1.
    """
    return max(1, math.ceil(trials / max(1, look)))


def fixed_verdict(
    claimed: float, *, trials_max: int, exact: float | None = None, vacuous: bool = False, trivial: bool = False
) -> bool:
    """True when the verdict of a row does not depend on its Monte Carlo counts.

    Parameters
    ----------
    claimed : float
    trials_max : int
    exact : float, optional
        The exact failure probability, where a law gives it (the verdict is read from it).
    vacuous : bool
        The row is vacuous.
    trivial : bool
        A trivial output meets the tolerance (the row cannot fail).

    Returns
    -------
    bool
    """
    if vacuous or trivial or exact is not None or not math.isfinite(claimed) or claimed >= 1.0:
        return True
    # "cannot-fail" by the trial count: even trials_max/trials_max failures leave the lower
    # 95% end below the claim, so no outcome of up to trials_max trials can contradict it
    return clopper_pearson(int(trials_max), int(trials_max), 0.95).low <= claimed


#: The violation search's power: a failure rate of SEARCH_RATE or more shows a failure with
#: probability >= 1 − SEARCH_BETA before the search stops.
SEARCH_RATE = 0.0025
SEARCH_BETA = 0.01


def miss_rate(rate: float, trials: int) -> float:
    """The probability that ``trials`` independent trials at true failure rate ``rate`` show
    no failure: (1 − rate)^trials. A violation search stopped at ``trials`` ends ``measured``
    with this probability where the claim is in fact violated at that rate.

    Parameters
    ----------
    rate : float
        The true failure rate, in [0, 1).
    trials : int
        Independent trials.

    Returns
    -------
    float
    """
    return math.exp(trials * math.log1p(-rate))


def beyond_resolution(claimed: float, *, trials_max: int) -> bool:
    """True when no count of up to ``trials_max`` trials could show the claim to hold or be
    loose: 0/trials_max already leaves the 95% upper end above ``claimed``.

    Parameters
    ----------
    claimed : float
    trials_max : int

    Returns
    -------
    bool
    """
    return _resolution_limit(trials_max) > claimed


def _resolution_limit(trials_max: int) -> float:
    """The smallest claim ``trials_max`` trials can show to hold: the 95% upper end of 0 failures."""
    return clopper_pearson(0, int(trials_max), 0.95).high


def search_trials(rate: float = SEARCH_RATE, beta: float = SEARCH_BETA) -> int:
    """The fewest trials t with (1 − rate)^t <= beta: after them, a failure rate >= ``rate``
    would have shown a failure with probability >= 1 − beta.

    Parameters
    ----------
    rate : float
        The failure rate to catch, in (0, 1).
    beta : float
        The probability allowed of missing it, in (0, 1).

    Returns
    -------
    int
    """
    return math.ceil(math.log(beta) / math.log1p(-rate))


#: A claim at least the resolution limit over NEAR_FACTOR is near the limit: its row draws every trial.
NEAR_FACTOR = 1000.0


def near_resolution(claimed: float, *, trials_max: int) -> bool:
    """True when ``claimed`` is beyond resolution but within :data:`NEAR_FACTOR` of the limit
    (the 95% upper end of 0 failures in ``trials_max`` trials): the row draws every trial
    rather than stopping after a short search.

    Parameters
    ----------
    claimed : float
    trials_max : int

    Returns
    -------
    bool
    """
    limit = _resolution_limit(trials_max)
    return limit > claimed and claimed * NEAR_FACTOR >= limit


def searched(failures: int, trials: int, claimed: float, *, trials_max: int) -> bool:
    """True when a row beyond resolution, and not near it, has drawn :func:`search_trials`
    trials without a failure.

    Parameters
    ----------
    failures, trials : int
    claimed : float
    trials_max : int

    Returns
    -------
    bool
    """
    return (
        failures == 0
        and trials >= search_trials()
        and beyond_resolution(claimed, trials_max=trials_max)
        and not near_resolution(claimed, trials_max=trials_max)
    )


def can_stop(failures: int, trials: int, claimed: float, *, n_looks: int, trials_max: int) -> bool:
    """True when a row whose verdict depends on its counts may stop drawing: :func:`settled`,
    or :func:`searched` where its claim is beyond resolution.

    Parameters
    ----------
    failures, trials : int
    claimed : float
    n_looks, trials_max : int

    Returns
    -------
    bool
    """
    return settled(failures, trials, claimed, n_looks=n_looks) or searched(
        failures, trials, claimed, trials_max=trials_max
    )


def settled(
    failures: int,
    trials: int,
    claimed: float,
    *,
    n_looks: int,
    alpha: float = ALPHA,
    loose_factor: float = LOOSE_FACTOR,
) -> bool:
    """True when the interval at level 1 − alpha/n_looks is on one side of every threshold.

    The thresholds are the claim (violated above it) and the claim over ``loose_factor``
    (loose below it); between them the row holds.

    Parameters
    ----------
    failures, trials : int
    claimed : float
    n_looks : int
    alpha : float
        The error rate allowed over all looks (default :data:`ALPHA`).
    loose_factor : float
        How many times larger than the failure probability a claim may be before it is loose.

    Returns
    -------
    bool
    """
    ci = clopper_pearson(int(failures), int(trials), 1.0 - alpha / max(1, n_looks))
    if ci.low > claimed:
        return True  # violated
    ref = claimed / loose_factor
    if ci.high < ref:
        return True  # loose
    return ci.low >= ref and ci.high <= claimed  # holds


def simulated_miss_rate(
    rate: float, claimed: float, *, trials_max: int, look: int, reps: int = 20_000, seed: int = 0
) -> float:
    """The share of ``reps`` simulated rows, true failure rate ``rate``, that the sequential rule
    (looks of ``look`` up to ``trials_max``, stopping when :func:`can_stop`) leaves not
    ``violated``: a miss when ``rate`` exceeds ``claimed``. Binomial draws per look from ``seed``.

    Parameters
    ----------
    rate : float
        The simulated rows' true failure probability, in [0, 1].
    claimed : float
        The claimed failure probability the rows are judged against.
    trials_max : int
        The most trials a row may draw.
    look : int
        Trials per look (the last look draws what remains of ``trials_max``).
    reps : int
        Rows simulated.
    seed : int
        Seed of the binomial draws.

    Returns
    -------
    float
        The share, in [0, 1], of rows whose 95% Clopper–Pearson lower end at the stop is
        ``<= claimed`` (not ``violated``); its Monte Carlo error is about
        sqrt(p(1 − p)/reps).
    """
    import numpy as np

    from attnspec.numerics.stats import numpy_rng

    n_looks = looks(trials_max, look)
    sizes = np.minimum(look, trials_max - look * np.arange(n_looks))  # (J,) trials of each look
    draws = numpy_rng(seed).binomial(sizes, rate, size=(reps, n_looks))  # (reps, J) failures per look
    missed = 0
    for row in draws:
        failures = trials = 0
        for f, c in zip(row, sizes):
            failures, trials = failures + int(f), trials + int(c)
            if can_stop(failures, trials, claimed, n_looks=n_looks, trials_max=trials_max):
                break
        missed += clopper_pearson(failures, trials, 0.95).low <= claimed
    return missed / reps


def curtailed(successes: int, drawn: int, trials: int, target: float) -> bool:
    """True when the test "successes over ``trials`` trials >= ``target``" is decided after
    ``drawn`` of them: it passes even if every remaining trial fails, or fails even if every
    remaining trial succeeds.

    Parameters
    ----------
    successes, drawn, trials : int
    target : float

    Returns
    -------
    bool
    """
    return successes / trials >= target or (successes + trials - drawn) / trials < target


def threshold_passed(successes: int, drawn: int, trials: int, target: float) -> bool:
    """The answer of the test "successes over ``trials`` trials >= ``target``", from a run that
    drew ``drawn`` trials and stopped where :func:`curtailed` allowed (or drew them all): a
    stop that passed passed, and a stop that failed (or a full run below the target) failed.

    Parameters
    ----------
    successes, drawn, trials : int
    target : float

    Returns
    -------
    bool
    """
    return successes / trials >= target
