"""Claims about the dimension: the JL union bound over the pairs (i, j), the JL dimension
with its constant, and whether the measured d* is below L (the width of the exact choice
``X = (B, I)``, which has zero error).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from attnspec.numerics.stats import clopper_pearson
from attnspec.theory.expressivity import claims as C
from attnspec.theory.expressivity.bounds import jl_failure_bound, pairs_log_union_bound
from attnspec.verdicts.classify import VerdictRow, classify_probability


def _exact_or_none(log_bound: float, claimed: float) -> tuple[float | None, str]:
    """The union of exact per-pair Chernoff bounds as the classifier's ``exact``: it bounds the
    true probability from above, so it can show looseness but never a violation; where it is
    not below the claim it is not passed (the trials decide, and looseness stays unresolved)."""
    log10 = log_bound / math.log(10)
    what = (
        f"true failure probability <= 10^{log10:.1f} (exact inner-product law of every pair, "
        f"Chernoff, union over the L² pairs)"
    )
    if log_bound < math.log(claimed):
        return max(math.exp(log_bound), 5e-324), what
    return None, what + ", not below the claim: the trials decide"


def _chernoff_words(reason: str, exact: float | None) -> str:
    """The classifier's reason with its ``exact`` named for what it is here: an upper bound
    (the union of exact per-pair Chernoff bounds), not the exact probability."""
    if exact is None:
        return reason
    return reason.replace("vs exact", "vs its Chernoff upper bound").replace(
        "exact failure probability", "Chernoff upper bound on the failure probability"
    )


def check_jl_dimension(
    trials: pd.DataFrame,
    *,
    B: np.ndarray,
    L: int,
    d_jl: int,
    eps_jl: float,
    delta: float,
    beta: float,
    d_star: int,
    params: dict,
    seed: int,
    factorization: str = "row",
    d_rownorm: int | None = None,
) -> list[VerdictRow]:
    """:data:`~.claims.JL_PAIRS` and :data:`~.claims.DIMENSION` from the trials at d_JL.

    d_JL is the notes' dimension ``8 ln(4L²/β) k max|B|²/δ²`` (ε = δ/(√k max|B|),
    :func:`~.bounds.eps_jl_paper`). Both claims are judged against a computable upper
    bound on their true failure probability (:func:`~.bounds.pairs_log_union_bound`), so
    0 failures in the trials no longer leave the looseness unresolved.

    Parameters
    ----------
    trials : DataFrame
        One row per trial at d = d_JL with ``jl_ratio`` and ``err_inf``.
    B : array (L, L), the target logits
    L, d_jl : int
    eps_jl, delta, beta : float
    d_star : int, the measured d* (named in the evidence)
    params : dict
    seed : int
    factorization : str
    d_rownorm : int, optional, the dimension with max‖b1_i‖² instead of k max|B|² (evidence)

    Returns
    -------
    list of two VerdictRow (both at the paper's own parameters: its d and its ε)
    """
    n = len(trials)
    fails = int(np.sum(trials["jl_ratio"] > eps_jl))
    claimed = jl_failure_bound(L, d_jl, eps_jl)
    exact, what = _exact_or_none(
        pairs_log_union_bound(B, d_jl, allowance=eps_jl, relative=True, factorization=factorization), claimed
    )
    dec = classify_probability(claimed=claimed, failures=fails, trials=n, exact=exact)
    ci = clopper_pearson(fails, n)
    out = [
        VerdictRow(
            C.JL_PAIRS.id,
            dec.verdict,
            {**params, "d": d_jl},
            bound=claimed,
            exact=exact,
            estimate=ci.estimate,
            ci_low=ci.low,
            ci_high=ci.high,
            trials=n,
            seed=seed,
            reading="union-bound",
            value_name="Chernoff bound" if exact is not None else None,
            at_paper_params=True,
            evidence=f"ε = δ/(√k max|B|) = {eps_jl:.4g}; {what}; {_chernoff_words(dec.reason, exact)}",
        )
    ]
    fails_inf = int(np.sum(trials["err_inf"] > delta))
    exact, what = _exact_or_none(
        pairs_log_union_bound(B, d_jl, allowance=delta, relative=False, factorization=factorization), beta
    )
    dec = classify_probability(claimed=beta, failures=fails_inf, trials=n, exact=exact)
    ci = clopper_pearson(fails_inf, n)
    rn = (
        (
            f"; with max‖b_i‖² (what polarisation needs) in place of k max|B|² the dimension would be "
            f"{d_rownorm} ({d_jl / d_rownorm:.3g}× smaller)"
        )
        if d_rownorm
        else ""
    )
    out.append(
        VerdictRow(
            C.DIMENSION.id,
            dec.verdict,
            {**params, "d": d_jl},
            bound=beta,
            exact=exact,
            estimate=ci.estimate,
            ci_low=ci.low,
            ci_high=ci.high,
            trials=n,
            seed=seed,
            reading="jl-constant",
            value_name="Chernoff bound" if exact is not None else None,
            at_paper_params=True,
            evidence=f"d_JL = 8 ln(4L²/β) k max|B|²/δ² = {d_jl}; {what}; {_chernoff_words(dec.reason, exact)}; "
            f"d_JL / d* = {d_jl / d_star:.3g}{rn}",
        )
    )
    return out


def check_width(d_star: int, *, L: int, k: int, projection: str, params: dict, trials: int, seed: int) -> list:
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
    list of one VerdictRow
    """
    from attnspec.theorem.measured import read_off
    from attnspec.theory.expressivity.registration import PAPER

    numbers = {"d_star": float(d_star), "L": float(L), "trials": trials, "d_per_k_log_L": d_star / (k * math.log(L))}
    return read_off(C.WIDTH, {**params, "d": d_star}, numbers, paper=PAPER, seed=seed, readings=(projection,))
