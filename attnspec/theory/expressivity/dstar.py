"""The measured minimal width d*: the least d with ``P(||B − B̂||_∞ <= δ) >= 1 − β``.

From the exact sampler by galloping and geometric bisection with common random numbers
(:func:`find_d_star`; d* is known to its bracket ``(d_low, d*]``), or from draws of the
``d → ∞`` law with a distribution-free order-statistic interval (:func:`asymptotic_d_star`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from attnspec.errors import InputError, check_range
from attnspec.numerics.stats import Seed
from attnspec.theorem.sequential import curtailed, threshold_passed
from attnspec.theory.expressivity.construction import check_matrix
from attnspec.theory.expressivity.sampling import sample_errors

#: Trials per batch of the search's exact sampler: after each batch the search stops
#: drawing at that d if its verdict is already certain
#: (:func:`attnspec.theorem.sequential.curtailed`: no error added).
CURTAIL_BATCH = 25


def asymptotic_d_star(lam: np.ndarray, delta: float, beta: float, level: float = 0.95) -> tuple[int, float, float]:
    """d* = min{d : P̂(Λ <= δ sqrt(d)) >= 1 − β} from the asymptotic draws, with a
    distribution-free order-statistic interval for the (1 − β)-quantile of Λ.

    Parameters
    ----------
    lam : array of shape (trials,)
        Draws of Λ (:func:`attnspec.theory.expressivity.sampling.asymptotic_errors`).
    delta, beta : float
    level : float

    Returns
    -------
    (d*, low, high) : (int, float, float)
        An end is 0 or inf when too few draws bound it (e.g. high = inf for 20 draws and
        β = 0.1: the sample maximum exceeds the 0.9-quantile with probability only
        1 − 0.9²⁰ = 0.88).
    """
    from scipy import stats as sps

    x = np.sort(np.asarray(lam, dtype=float))
    n = x.size
    r = int(math.ceil((1.0 - beta) * n))  # the r-th order statistic (1-based)
    d = int(math.ceil((x[r - 1] / delta) ** 2))
    a = (1 - level) / 2
    lo_i = int(sps.binom.ppf(a, n, 1 - beta))  # P(Bin >= lo_i) >= 1 − a: X_(lo_i) <= q
    hi_i = int(sps.binom.ppf(1 - a, n, 1 - beta)) + 1  # P(Bin <= hi_i − 1) >= 1 − a: X_(hi_i) >= q
    low = float(math.ceil((x[lo_i - 1] / delta) ** 2)) if lo_i >= 1 else 0.0
    high = float(math.ceil((x[hi_i - 1] / delta) ** 2)) if hi_i <= n else math.inf
    return d, low, high


@dataclass
class DStar:
    """Result of :func:`find_d_star`: the minimal d with success >= 1 − β on the grid."""

    d_star: int
    success: float  # estimated success probability at d_star
    evaluations: list[tuple[int, float]]  # (d, success) in the order evaluated
    frame: pd.DataFrame | None = None  # the per-trial measures at d_star (None if exact, d = L)
    d_low: int = 0  # the largest evaluated d below d_star that failed (0 if none): d* ∈ (d_low, d_star]
    #: d -> (successes, trials drawn): the search stops drawing at a d once its verdict is
    #: certain (curtailment), so the trials drawn may be fewer than asked
    counts: dict[int, tuple[int, int]] | None = None


def find_d_star(
    A: np.ndarray,
    *,
    eps: float,
    delta: float,
    beta: float,
    trials: int,
    projection: str = "gaussian",
    factorization: str = "row",
    seed: Seed = 0,
    d_hint: int | None = None,
    rel: float = 2**0.125,
    dtype: torch.dtype = torch.float32,
    full_stats: bool = False,
) -> DStar:
    """Minimal d with P̂(||B − B̂||_∞ <= δ) >= 1 − β, by galloping then bisection.

    The same seed is used at every d (common random numbers). The search assumes the
    success probability increases with d. Gaussian: gallop from ``d_hint`` (default L) by
    factors of 2 (2^¼ when a hint is given) until the bracket [lo, hi] has a failure at
    lo and a success at hi, then bisect geometrically until ``hi <= rel·lo``; d* = hi.
    Orthogonal: d = L is exact, so the search runs on the complement s = L − d (1, 2, 4,
    ... then bisection), each trial costing O(L² min(d, L − d)). With ``full_stats`` every
    measure of :func:`sample_errors` is kept for d* (``DStar.frame``), otherwise only
    ``err_inf`` is measured.

    Parameters
    ----------
    A : array of shape (L, L), nonnegative
    eps, delta, beta : float
    trials : int, trials per evaluated d
    projection, factorization : str
    seed : int or generator
    d_hint : int, optional, the starting point (e.g. the asymptotic d*)
    rel : float > 1, the relative width of the final bracket
    dtype : torch.dtype
        Working dtype of the sampler.
    full_stats : bool
        Keep every measure of :func:`sample_errors` at d* (``DStar.frame``), not only ``err_inf``.

    Returns
    -------
    DStar
    """
    A = check_matrix(A)
    L = A.shape[0]
    check_range("beta", beta, low=0, high=1, low_open=True, high_open=True)
    check_range("delta", delta, low=0, low_open=True)
    if rel <= 1:
        raise InputError(f"rel must be > 1, got {rel}")
    evals: list[tuple[int, float]] = []
    cache: dict[int, float] = {}
    counts: dict[int, tuple[int, int]] = {}
    dec: dict[int, bool] = {}
    frames: dict[int, pd.DataFrame] = {}

    def decided(err: np.ndarray) -> bool:
        # curtailment: the verdict "success >= 1 − β over all `trials`" is already certain
        return curtailed(int(np.sum(err <= delta)), int(err.size), trials, target)

    def success(d: int) -> float:
        if d not in cache:
            df = sample_errors(
                A,
                d,
                eps=eps,
                trials=trials,
                projection=projection,
                factorization=factorization,
                seed=seed,
                dtype=dtype,
                only_max=not full_stats,
                stop=None if full_stats else decided,
                batch=CURTAIL_BATCH,
            )
            frames[d] = df
            ok = df["err_inf"].to_numpy() <= delta
            counts[d] = (int(ok.sum()), len(df))
            # the decision over all `trials` (curtailed or not); the estimate from the trials done
            cache[d] = float(np.mean(ok))
            dec[d] = threshold_passed(int(ok.sum()), len(df), trials, target)
            evals.append((d, cache[d]))
        return cache[d]

    def succeeds(d: int) -> bool:
        success(d)
        return dec[d]

    def done(d: int) -> DStar:
        below = [x for x in cache if x < d and not dec[x]]
        return DStar(d, cache[d], evals, frames.get(d), max(below, default=0), counts=dict(counts))

    target = 1.0 - beta
    if projection == "gaussian":
        step = rel if d_hint else 2.0
        hi = max(1, int(d_hint) if d_hint else L)
        lo = hi
        while not succeeds(hi):
            lo, hi = hi, max(hi + 1, int(math.ceil(hi * step)))
        if lo == hi:  # the start succeeded: walk down
            while lo > 1 and succeeds(lo):
                hi = lo
                lo = max(1, int(lo / step))
            if succeeds(lo):
                return done(lo)
        while hi > lo + 1 and hi > lo * rel:
            mid = int(round(math.sqrt(lo * hi)))
            mid = min(max(mid, lo + 1), hi - 1)
            if succeeds(mid):
                hi = mid
            else:
                lo = mid
        return done(hi)
    # orthogonal: d = L is exact
    cache[L], dec[L], counts[L] = 1.0, True, (trials, trials)
    return done(_orthogonal_search(succeeds, L, rel))


def _orthogonal_search(ok: Callable[[int], bool], L: int, rel: float) -> int:
    """The least d with ``ok(d)`` for orthogonal R, searching the complement s = L − d
    (success decreasing in s, s = 0 exact): galloping 1, 2, 4, ..., then bisection until
    the bracket is tight both in d (small d) and in s (d near L)."""
    s_ok, s_bad = 0, None
    s = 1
    while s < L:
        if ok(L - s):
            s_ok = s
            s *= 2
        else:
            s_bad = s
            break
    if s_bad is None:  # every tried d succeeded, down to d = L − 2^j >= 1
        if ok(1):
            return 1
        s_bad = L - 1
    while s_bad > s_ok + 1 and (s_bad > s_ok * rel or (L - s_ok) > (L - s_bad) * rel):
        if (L - s_ok) > (L - s_bad) * rel:  # bisect geometrically in d
            d_mid = int(round(math.sqrt((L - s_ok) * (L - s_bad))))
            mid = L - d_mid
        else:  # geometrically in s
            mid = int(round(math.sqrt(max(s_ok, 1) * s_bad)))
        mid = min(max(mid, s_ok + 1), s_bad - 1)
        if ok(L - mid):
            s_ok = mid
        else:
            s_bad = mid
    return L - s_ok


#: The exact check of the asymptotic d* at the run's L: grid points d_asym·2^(j/8).
GRID_STEPS = (-1, 0, 1)
GRID_REL = 2**0.125


def grid_d_star(
    A: np.ndarray,
    *,
    eps: float,
    delta: float,
    beta: float,
    trials: int,
    d_hint: int,
    extra: tuple[int, ...] = (),
    factorization: str = "row",
    seed: Seed = 0,
    max_passes: int = 3,
) -> tuple[DStar, dict[int, pd.DataFrame]]:
    """d* from the exact sampler on a geometric grid around ``d_hint`` (>= L), one pass of
    common draws per grid (:func:`~.sampling.sample_errors_grid`), every measure kept.

    The grid is ``d_hint·2^(j/8)`` for j in :data:`GRID_STEPS`; d* is its least point whose
    success, and that of every larger grid point, is >= 1 − β, and ``d_low`` the point
    below it (d* ∈ (d_low, d*], a 2^(1/8) bracket, as :func:`find_d_star`). When every
    point fails (or succeeds) the grid moves up (down) by its width, at most
    ``max_passes`` times; ``d_low = 0`` if it never brackets from below.

    Parameters
    ----------
    A : array (L, L)
    eps, delta, beta : float
    trials : int, trials per grid point (the same draws at every point of a pass)
    d_hint : int >= L, e.g. the asymptotic d*
    extra : further d (>= L) measured in the same pass (e.g. d_JL), frames returned
    factorization : str
    seed : int
    max_passes : int
        How many times the grid may move up or down when it does not bracket d*.

    Returns
    -------
    (DStar, frames) : frames maps every evaluated d (grid and ``extra``) to its per-trial frame
    """
    from attnspec.theory.expressivity.sampling import sample_errors_grid

    L = A.shape[0]
    target = 1.0 - beta
    evals: list[tuple[int, float]] = []
    frames: dict[int, pd.DataFrame] = {}
    succ: dict[int, float] = {}
    shift = 0
    for p in range(max_passes):
        grid = sorted({max(L, int(round(d_hint * GRID_REL ** (j + shift)))) for j in GRID_STEPS})
        want = [d for d in grid if d not in succ] + ([int(x) for x in extra if int(x) not in frames] if p == 0 else [])
        _, fr = sample_errors_grid(
            A,
            want,
            eps=eps,
            trials=trials,
            factorization=factorization,
            seed=int(seed) + p,  # a fresh stream per pass
            full_at=tuple(want),
        )
        frames.update(fr)
        for d in want:
            if d in grid:
                succ[d] = float(np.mean(fr[d]["err_inf"].to_numpy() <= delta))
                evals.append((d, succ[d]))
        pts = sorted(succ)
        ok = [succ[d] >= target for d in pts]
        if not any(ok):
            shift += len(GRID_STEPS)
            continue
        # least point from which every larger grid point succeeds
        i = len(ok)
        while i > 0 and ok[i - 1]:
            i -= 1
        if i == 0 and pts[0] > L and p < max_passes - 1:
            shift -= len(GRID_STEPS)
            continue
        d_star = pts[i]
        d_low = pts[i - 1] if i > 0 else 0
        return DStar(d_star, succ[d_star], evals, frames[d_star], d_low), frames
    # never succeeded: the largest point tried, unbracketed from above (success < 1 − β)
    d_star = max(succ)
    return DStar(d_star, succ[d_star], evals, frames[d_star], d_star), frames
