"""The single-vector JL lemmas of the notes against their exact laws (:func:`~.bounds.exact_jl_deviation_curve`),
at every d = 1..L (at most 200, geometric), each decided by :class:`attnspec.theorem.tightest.ExactBound`;
and the norm laws of the orthogonal projection, checked by Monte Carlo."""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from attnspec.theory.expressivity import claims as C
from attnspec.theory.expressivity.bounds import exact_jl_deviation_curve
from attnspec.verdicts.classify import VerdictRow


def _d_grid(L: int) -> np.ndarray:
    """The d at which the lemmas are judged: 1..L, geometric, at most 200 values."""
    return np.unique(np.geomspace(1, L, min(L, 200)).astype(int))


@functools.lru_cache(maxsize=8)
def _curves(L: int, eps_jl: float) -> dict[str, np.ndarray]:
    """The exact laws and the bounds along :func:`_d_grid` (one vectorised scipy call each)."""
    ds = _d_grid(L)
    pg = exact_jl_deviation_curve(L, ds, eps_jl, "gaussian")
    po = exact_jl_deviation_curve(L, ds, eps_jl, "orthogonal")
    pu = exact_jl_deviation_curve(L, ds, eps_jl, "orthogonal", scaled=False)
    cst = 2 * (1 - 1 / (L + 2))  # the orthogonal bound's constant, read with the Gaussian c = 1/8

    def largest_c(p: np.ndarray) -> np.ndarray:  # c with cst exp(−c ε² d) = p: the bound holds for every c' <= c
        with np.errstate(divide="ignore", over="ignore"):
            return np.where(p > 0, np.log(cst / np.where(p > 0, p, 1.0)) / (eps_jl**2 * ds), math.inf)

    return {
        "p_gaussian": pg,
        "p_orthogonal": po,
        "p_unscaled": pu,
        "bound_gaussian": np.minimum(1.0, 2 * np.exp(-(eps_jl**2) * ds / 8)),
        "bound_orthogonal": np.minimum(1.0, cst * np.exp(-(eps_jl**2) * ds / 8)),
        "c_orthogonal": largest_c(po),
        "c_unscaled": largest_c(pu),
        "orthogonal_below_gaussian": (po <= pg + 1e-15).astype(float),
    }


def _exact_laws(point: dict[str, Any], rng: Any) -> dict[str, float]:
    ds = _d_grid(point["L"])
    i = int(np.searchsorted(ds, point["d"]))
    return {name: float(curve[i]) for name, curve in _curves(point["L"], point["eps_jl"]).items()}


def _grid(options: Mapping[str, Any]) -> list[dict[str, Any]]:
    L, e = int(options["L"]), float(options["eps_jl"])
    varied = f"JL ε = {e:g}, d = 1..{L}"
    return [{"L": L, "eps": None, "eps_jl": e, "varied": varied, "d": int(d)} for d in _d_grid(L)]


def lemma_check() -> Any:
    """The single-vector lemmas as a declared check (:class:`attnspec.theorem.declare.Check`):
    its grid is d = 1..L (at most 200, geometric) at one JL ε, its setup the exact laws at d.

    Returns
    -------
    attnspec.theorem.declare.Check
        Not registered: ``sa-check`` runs it inside its own battery.
    """
    from attnspec.options.declaration import Option
    from attnspec.theorem.declare import Check
    from attnspec.theory.expressivity.registration import PAPER

    return Check(
        command=C.COMMAND,
        paper=PAPER,
        claims=(C.JL_GAUSSIAN, C.JL_ORTHOGONAL),
        options=(
            Option("L", "int", 512, "Sequence length L, >= 2.", low=2),
            Option("eps_jl", "float", 0.1, "JL ε, in (0, 1).", low=0.0, high=1.0, low_open=True, high_open=True),
        ),
        grid=_grid,
        setup=_exact_laws,
        summary="The single-vector JL lemmas of the notes against their exact laws.",
    )


def check_jl_lemma(L: int, eps_jl: float = 0.1) -> list[VerdictRow]:
    """:data:`~.claims.JL_GAUSSIAN` and :data:`~.claims.JL_ORTHOGONAL` (readings ``scaled`` and
    ``unscaled``), run by :func:`attnspec.theorem.runner.run_check` over d = 1..L.

    Gaussian ``2 exp(−ε²d/8)``; orthogonal ``2 (1 − 1/(L+2)) exp(−c ε² d)`` read with the
    Gaussian constant c = 1/8, reporting the largest c that holds at every d. Each is decided by
    :class:`attnspec.theorem.tightest.ExactBound`.

    Parameters
    ----------
    L : int >= 1
    eps_jl : float in (0, 1)

    Returns
    -------
    list of three VerdictRow
    """
    from attnspec.theorem.runner import run_check

    config = {"L": int(L), "eps_jl": float(eps_jl), "seed": 0, "trials": 2, "jobs": 1}
    return run_check(lemma_check(), config).verdicts


#: The size at which the orthogonal norm laws are checked by Monte Carlo.
ORTH_NORM_MAX_L = 128


def check_orthogonal_norms(L: int, *, trials: int = 2000, seed: int = 0) -> list[VerdictRow]:
    """:data:`~.claims.JL_ORTH_NORM`: does R^ort = Q preserve norms, and its variance.

    At L' = min(L, :data:`ORTH_NORM_MAX_L`) (the laws hold at every L; the Monte Carlo
    costs a QR per draw) and d = max(1, L' // 8): the exact mean of ``‖Ru‖²/‖u‖²`` for R = Qᵀ (d/L) and for
    R = √(L/d) Qᵀ (1) against 1, and the scaled variance ``2(L−d)/(d(L+2))`` against the
    Gaussian ``2/d``; ``trials`` Monte Carlo draws of ‖R e_1‖² (through the sampler of
    :mod:`.sampling`) check both laws (evidence; the tests assert the agreement).

    Parameters
    ----------
    L : int >= 2
    trials : int, Monte Carlo draws for the evidence
    seed : int

    Returns
    -------
    list of three VerdictRow
    """
    from attnspec.numerics.stats import mean_ci
    from attnspec.theorem.measured import read_off
    from attnspec.theory.expressivity.bounds import jl_norm_moments
    from attnspec.theory.expressivity.registration import PAPER
    from attnspec.theory.expressivity.sampling import gram_diagonal_draws

    L = min(L, ORTH_NORM_MAX_L)
    d = max(1, L // 8)
    P = {"L": L, "eps": None, "d": d}
    x_orth = gram_diagonal_draws(L, d, "orthogonal", trials, seed)  # ‖√(L/d) Qᵀ e_1‖², shape (trials,)
    x_gauss = gram_diagonal_draws(L, d, "gaussian", trials, seed + 1)
    out = []
    for reading, scale in (("unscaled", d / L), ("scaled", 1.0)):
        mean, _ = jl_norm_moments(L, d, "orthogonal", scaled=reading == "scaled")
        mc = mean_ci(x_orth * scale)
        numbers = {"mean": mean, "residual": abs(mean - 1.0), "mc_mean": mc.estimate, "mc_low": mc.low,
                   "mc_high": mc.high, "trials": trials}  # fmt: skip
        out += read_off(C.JL_ORTH_NORM, P, numbers, paper=PAPER, seed=seed, readings=(reading,))
    numbers = {
        "var_orthogonal": jl_norm_moments(L, d, "orthogonal")[1], "var_gaussian": jl_norm_moments(L, d, "gaussian")[1],
        "mc_var": float(np.var(x_orth, ddof=1)), "mc_var_gaussian": float(np.var(x_gauss, ddof=1)), "trials": trials,
    }  # fmt: skip
    return out + read_off(C.JL_ORTH_NORM, P, numbers, paper=PAPER, seed=seed, readings=("variance",))
