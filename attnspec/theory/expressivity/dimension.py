"""Claims about the dimension: the JL union bound over the pairs (i, j), the JL dimension
with its constant, and whether the measured d* is below L (the width of the exact choice
``X = (B, I)``, which has zero error).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from attnspec.stats import clopper_pearson
from attnspec.theory.expressivity import claims as C
from attnspec.theory.expressivity.bounds import jl_failure_bound
from attnspec.verdicts import VerdictRow, classify_bound, classify_probability


def check_jl_dimension(trials: pd.DataFrame, *, L: int, d_jl: int, eps_jl: float, delta: float, beta: float,
                       d_star: int, params: dict, seed: int) -> list[VerdictRow]:
    """:data:`~.claims.JL_PAIRS` and :data:`~.claims.DIMENSION` from the trials at d_JL.

    Parameters
    ----------
    trials : DataFrame
        One row per trial at d = d_JL with ``jl_ratio`` and ``err_inf``.
    L, d_jl : int
    eps_jl, delta, beta : float
    d_star : int, the measured d* (named in the evidence)
    params : dict
    seed : int

    Returns
    -------
    list of two VerdictRow
    """
    fails = int(np.sum(trials["jl_ratio"] > eps_jl))
    claimed = jl_failure_bound(L, d_jl, eps_jl)
    dec = classify_probability(claimed=claimed, failures=fails, trials=len(trials))
    ci = clopper_pearson(fails, len(trials))
    out = [VerdictRow(C.JL_PAIRS.id, dec.verdict, {**params, "d": d_jl}, bound=claimed, estimate=ci.estimate,
                      ci_low=ci.low, ci_high=ci.high, trials=len(trials), seed=seed, reading="union-bound",
                      evidence=f"ε = δ/max‖b1_i‖ = {eps_jl:.4g}; {dec.reason}")]
    fails_inf = int(np.sum(trials["err_inf"] > delta))
    dec = classify_probability(claimed=beta, failures=fails_inf, trials=len(trials))
    ci = clopper_pearson(fails_inf, len(trials))
    out.append(VerdictRow(C.DIMENSION.id, dec.verdict, {**params, "d": d_jl}, bound=beta, estimate=ci.estimate,
                          ci_low=ci.low, ci_high=ci.high, trials=len(trials), seed=seed, reading="jl-constant",
                          evidence=f"{dec.reason}; d_JL / d* = {d_jl / d_star:.3g}"))
    return out


def check_width(d_star: int, *, L: int, k: int, projection: str, params: dict, trials: int,
                seed: int) -> VerdictRow:
    """:data:`~.claims.WIDTH` at one instance: is the measured d* below L?

    d* >= L (orthogonal: >= L − 1, where R is a rotation up to one dimension) makes the
    claim vacuous here: the exact choice d = L is narrower and has zero error.

    Parameters
    ----------
    d_star : int
    L, k : int
    projection : {"gaussian", "orthogonal"}, also the reading
    params : dict
    trials, seed : int

    Returns
    -------
    VerdictRow
    """
    limit = L if projection == "gaussian" else L - 1
    vac = (f"d* = {d_star} >= {'L' if projection == 'gaussian' else 'L − 1'} = {limit}: the exact choice d = L "
           f"(zero error) beats the construction") if d_star >= limit else None
    dec = classify_bound(observed=float(d_star), bound=float(L), loose_factor=None, vacuous=vac)
    ev = dec.reason if vac else f"d* = {d_star} < L = {L}; d*/(k log L) = {d_star / (k * math.log(L)):.3g}"
    return VerdictRow(C.WIDTH.id, dec.verdict, {**params, "d": d_star}, bound=float(L), estimate=float(d_star),
                      trials=trials, seed=seed, reading=projection, evidence=ev)
