"""Claims of the reduction to logits (notes p. 2): on S, off S, and what it does to SAN
(:data:`~.claims.ONSUPPORT`, :data:`~.claims.OFFSUPPORT`, :data:`~.claims.SAN_MASS`; their
formulas in :mod:`.bounds`), read off the trials of the construction at d* and d_JL."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from attnspec.numerics.stats import clopper_pearson
from attnspec.theorem.cases import Cases
from attnspec.theorem.measured import read_off
from attnspec.theory.expressivity import claims as C
from attnspec.theory.expressivity.bounds import (
    bound_off_support,
    bound_on_support,
    bound_san_off_mass,
    exact_on_support,
)
from attnspec.theory.expressivity.registration import PAPER
from attnspec.verdicts.classify import VerdictRow


def check_on_support(
    trials: pd.DataFrame, *, M: float, m: float, delta: float, params: dict, seed: int
) -> list[VerdictRow]:
    """The three readings of :data:`~.claims.ONSUPPORT` from per-trial measures.

    Parameters
    ----------
    trials : DataFrame
        One row per trial with ``err_inf``, ``on_abs``, ``on_rel`` (:mod:`.sampling`).
    M, m, delta : float
    params : dict, the instance's parameters for the rows
    seed : int, the seed of the draws

    Returns
    -------
    list of VerdictRow
    """
    ok = trials[trials["err_inf"] <= delta]
    b = bound_on_support(M, delta)
    # realised-δ reading: every trial, δ_t = its own ||B − B̂||_∞
    err, on = trials["err_inf"].to_numpy(), trials["on_abs"].to_numpy()
    bt = M * np.exp(err) * err
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(bt > 0, on / bt, np.where(on > 0, np.inf, 0.0))
        inverse = bt / on
    numbers = {
        "met": len(ok), "m": m, "on_bound": b, "exact_on": exact_on_support(M, delta),
        "relative_bound": math.exp(delta) * delta, "relative_exact": math.expm1(delta), "on_abs": math.nan,
        "on_rel": math.nan, "on_all": Cases(on), "realised_bound": float(bt.max()), "realised_ratio": Cases(ratio),
        "inverse_low": float(np.nanmin(inverse)), "inverse_high": float(np.nanmax(inverse)),
    }  # fmt: skip
    if len(ok):
        worst, typical = float(ok["on_abs"].max()), float(ok["on_abs"].median())
        # tightest case (the worst trial, on which a deterministic bound's label rests) and
        # typical case (the median trial), as bound/observed
        numbers |= {
            "on_abs": Cases(ok["on_abs"]), "on_rel": Cases(ok["on_rel"]),
            "tightest": b / worst if worst > 0 else math.inf, "typical": b / typical if typical > 0 else math.inf,
        }  # fmt: skip
    return read_off(
        C.ONSUPPORT, params, numbers, paper=PAPER, seed=seed, readings=("given-delta", "relative", "realised-delta")
    )


def check_off_support(
    trials: pd.DataFrame, *, L: int, k: int, m: float, eps: float, delta: float, params: dict, seed: int, A_seed: int
) -> list[VerdictRow]:
    """The two readings of :data:`~.claims.OFFSUPPORT` and :data:`~.claims.SAN_MASS`.

    Parameters
    ----------
    trials : DataFrame
        One row per trial with ``err_inf``, ``off_max``, ``off_min``, ``off_argmax``,
        ``san_off_mass``, ``trial``, ``d`` and ``seed``.
    L, k : int
    m, eps, delta : float
    params : dict
    seed, A_seed : int, the seeds of the draws and of A (named in the evidence)

    Returns
    -------
    list of VerdictRow (empty if A has no zero entry)
    """
    if not trials["off_max"].notna().any():
        return []  # k = L: no entry off S
    ok = trials[trials["err_inf"] <= delta]
    lo_b, hi_b = bound_off_support(eps, delta)
    context: dict = {}
    numbers = {
        "met": len(ok), "off_low": lo_b, "off_high": hi_b, "san_bound": bound_san_off_mass(L, k, m, eps, delta),
        "eps": eps, "off_sum": (L - k) * eps, "on_sum": k * m, "off_max": math.nan, "off_min": math.nan,
        "off_ratio": math.nan, "san_off_mass": math.nan,
    }  # fmt: skip
    if len(ok):
        mx, mn = float(ok["off_max"].max()), float(ok["off_min"].min())
        # two-sided range: the worst of max/upper end and lower end/min, against 1
        numbers |= {
            "off_max": Cases(ok["off_max"]), "off_min": mn, "off_ratio": max(mx / hi_b, lo_b / mn),
            "san_off_mass": Cases(ok["san_off_mass"]),
        }  # fmt: skip
        # the interval of the share of trials with an off-S entry above eps, and the worst entry
        # named exactly: its trial's seed and A's are 63-bit integers a float would round
        over = int(np.sum(ok["off_max"] > eps))
        ci = clopper_pearson(over, len(ok))
        worst = int(np.argmax(ok["off_max"].to_numpy()))
        numbers |= {"over_low": ci.low, "over_high": ci.high}
        context = {
            "over": over, "trial": int(ok["trial"].iloc[worst]), "ij": divmod(int(ok["off_argmax"].iloc[worst]), L),
            "d": int(ok["d"].iloc[worst]), "seed": int(ok["seed"].astype(np.uint64).to_numpy()[worst]),
            "A_seed": A_seed,
        }  # fmt: skip
    return [
        *read_off(
            C.OFFSUPPORT, params, numbers, paper=PAPER, seed=seed, readings=("range", "literal"), context=context
        ),
        *read_off(C.SAN_MASS, params, numbers, paper=PAPER, seed=seed, readings=("bound",)),
    ]
