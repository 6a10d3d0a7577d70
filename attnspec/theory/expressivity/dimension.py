"""Claims about the dimension: the JL union bound over the pairs (i, j) and the JL dimension
(read with a Chernoff ceiling, :class:`attnspec.theorem.ceiling.Ceiling`), and whether the
measured d* is below L (the width of the exact choice ``X = (B, I)``, which has zero error)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from attnspec.theorem.measured import indicators, read_off
from attnspec.theory.expressivity import claims as C
from attnspec.theory.expressivity.bounds import jl_failure_bound, pairs_log_union_bound
from attnspec.theory.expressivity.registration import PAPER
from attnspec.verdicts.classify import VerdictRow


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
    :func:`~.bounds.eps_jl_paper`). Both claims are read against a computable upper bound on
    their true failure probability (:func:`~.bounds.pairs_log_union_bound`), so 0 failures in
    the trials can still show looseness.

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
    n, at = len(trials), {**params, "d": d_jl}

    def ceiling(allowance: float, relative: bool) -> float:
        return pairs_log_union_bound(B, d_jl, allowance=allowance, relative=relative, factorization=factorization)

    pairs = {
        "fails": indicators(int(np.sum(trials["jl_ratio"] > eps_jl)), n),
        "claimed": jl_failure_bound(L, d_jl, eps_jl),
        "log_ceiling": ceiling(eps_jl, True),
        "eps_jl": eps_jl,
    }
    dimension = {
        "fails": indicators(int(np.sum(trials["err_inf"] > delta)), n),
        "beta": beta,
        "log_ceiling": ceiling(delta, False),
        "d_jl": d_jl,
        "d_star": d_star,
        "d_rownorm": d_rownorm or 0,
    }
    return [
        *read_off(C.JL_PAIRS, at, pairs, paper=PAPER, seed=seed),
        *read_off(C.DIMENSION, at, dimension, paper=PAPER, seed=seed),
    ]


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
    numbers = {"d_star": float(d_star), "L": float(L), "trials": trials, "d_per_k_log_L": d_star / (k * math.log(L))}
    return read_off(C.WIDTH, {**params, "d": d_star}, numbers, paper=PAPER, seed=seed, readings=(projection,))
