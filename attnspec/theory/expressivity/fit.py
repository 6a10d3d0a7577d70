"""Fitted quantities: d* against k log L over the (L, k) sweep, and the notes' formula
``d = O(M² k log L / ε')`` (the exponent of 1/ε', which "M").

A quantity fitted on some draws is never tested on those draws: exponents and least-squares
constants are reported as ``measured`` rows; the claims are tested (``...heldout`` readings)
by fitting a constant on one part of the data and testing the bound it implies on
independent draws.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from attnspec.theorem.cases import Cases
from attnspec.theorem.measured import indicators, read_off
from attnspec.theory.expressivity import claims as C
from attnspec.theory.expressivity.bounds import dimension_stated
from attnspec.theory.expressivity.registration import PAPER
from attnspec.verdicts.classify import VerdictRow


def _loglog_slope(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """Least-squares slope of log y on log x with a 95% t interval."""
    from scipy import stats as sps

    res = sps.linregress(np.log(x), np.log(y))
    q = sps.t.ppf(0.975, len(x) - 2)
    return float(res.slope), float(res.slope - q * res.stderr), float(res.slope + q * res.stderr)


def fit_d_star(sw: pd.DataFrame) -> pd.DataFrame:
    """Least-squares fits through the origin of the Gaussian asymptotic d* of a sweep.

    Models: ``d* = C k log L``, ``d* = C max‖b_i‖² log L / δ²`` (the JL scale of the
    instance) and ``d* = C M_B² k log L / δ`` (M_B = max|B|, the notes' formula).

    Parameters
    ----------
    sw : DataFrame, the output of :func:`attnspec.theory.expressivity.sweep.sweep`

    Returns
    -------
    DataFrame with one row per model: kind = "fit", model, C, r2, max_rel_residual, n
    """
    g = gaussian_sweep(sw)
    y = g["d"].to_numpy().astype(float)
    models = {
        "k log L": g["k_log_L"].to_numpy(),
        "max‖b_i‖² log L / δ²": g["max_row_norm"].to_numpy() ** 2
        * np.log(g["L"].to_numpy())
        / g["delta"].to_numpy() ** 2,
        "max|B|² k log L / δ": g["max_abs_B"].to_numpy() ** 2 * g["k_log_L"].to_numpy() / g["delta"].to_numpy(),
    }
    rows = []
    for name, x in models.items():
        c = float(np.dot(x, y) / np.dot(x, x))
        res = y - c * x
        r2 = 1.0 - float(np.sum(res**2) / np.sum((y - y.mean()) ** 2)) if len(y) > 1 else float("nan")
        rows.append(
            {
                "kind": "fit",
                "model": name,
                "C": c,
                "r2": r2,
                "max_rel_residual": float(np.max(np.abs(res) / y)),
                "n": len(y),
            }
        )
    return pd.DataFrame(rows)


def check_stated_measured(frame: pd.DataFrame, *, eps: float, delta: float, M: float) -> list[VerdictRow]:
    """The measured readings of :data:`~.claims.STATED` from the scaling sweeps of a run.

    Parameters
    ----------
    frame : DataFrame with the ``scaling_delta``, ``scaling_eps`` and ``scaling_M`` rows of
        :func:`attnspec.theory.expressivity.measure.measure`
    eps, delta, M : float, the run's

    Returns
    -------
    list of VerdictRow (eps-exponent, m-max-a, m-max-b), all ``measured``
    """
    sd = frame.query("kind == 'scaling_delta'").sort_values("delta")
    x = 1.0 / sd["delta"].to_numpy()
    dhi = sd["d"].to_numpy().astype(float)
    dlo = np.maximum(sd["d_low"].to_numpy().astype(float), 1.0)
    span = math.log(x.max() / x.min())
    # each exact d* is only known to its bisection bracket (d_low, d]: the slopes of the
    # extreme end points bound the exponent
    numbers = {
        "p": _loglog_slope(x, np.sqrt(dhi * dlo))[0], "p_low": math.log(dlo[0] / dhi[-1]) / span,
        "p_high": math.log(dhi[0] / dlo[-1]) / span, "trials": int(sd["trials"].iloc[0]),
        "d_delta_large": dhi[-1] * sd["delta"].iloc[-1], "d_delta_small": dhi[0] * sd["delta"].iloc[0],
    }  # fmt: skip
    P = {"L": int(sd["L"].iloc[0]), "k": int(sd["k"].iloc[0]), "eps": eps, "delta": None,
         "varied": f"delta {sd['delta'].min():.3g}..{sd['delta'].max():.3g}"}  # fmt: skip
    out = read_off(C.STATED, P, numbers, paper=PAPER, seed=int(sd["seed"].iloc[0]), readings=("eps-exponent",))
    se = frame.query("kind == 'scaling_eps'")
    L_s, k_s = int(se["L"].iloc[0]), int(se["k"].iloc[0])
    dd = se["d"].to_numpy().astype(float)
    cst = dd / (se["max_abs_B"].to_numpy() ** 2 * k_s * math.log(L_s) / delta)
    numbers = {
        "d_max": float(dd.max()), "d_stated": dimension_stated(L_s, k_s, M, delta), "trials": int(se["trials"].iloc[0]),
        "M": M, "grow": dd.max() / dd.min(), "eps_max": se["eps"].max(), "eps_min": se["eps"].min(),
        "B_min": se["max_abs_B"].min(), "B_max": se["max_abs_B"].max(), "c_min": cst.min(), "c_max": cst.max(),
    }  # fmt: skip
    sm = frame.query("kind == 'scaling_M'").sort_values("M_over_m") if "M_over_m" in frame else frame.iloc[:0]
    if len(sm) >= 2:
        numbers["M_ratio"] = float(sm["M_over_m"].iloc[-1] / sm["M_over_m"].iloc[0])
        numbers["M_growth"] = float(sm["d"].iloc[-1] / sm["d"].iloc[0])
    P = {"L": L_s, "k": k_s, "eps": None, "delta": delta, "varied": f"eps {se['eps'].min():.3g}..{se['eps'].max():.3g}"}
    return out + read_off(
        C.STATED, P, numbers, paper=PAPER, seed=int(se["seed"].iloc[0]), readings=("m-max-a", "m-max-b")
    )


def sweep_params(g: pd.DataFrame) -> dict:
    """The parameters of the rows read off a sweep: its ranges of L and k, its eps and δ.

    Parameters
    ----------
    g : pandas.DataFrame
        :func:`gaussian_sweep` of the sweep.

    Returns
    -------
    dict
    """
    return {
        "L": f"{g['L'].min()}..{g['L'].max()}",
        "k": f"{g['k'].min()}..{g['k'].max()}",
        "eps": float(g["eps"].iloc[0]),
        "delta": float(g["delta"].iloc[0]),
    }


def gaussian_sweep(sw: pd.DataFrame) -> pd.DataFrame:
    """The Gaussian, asymptotic-law rows of a sweep (one per configuration).

    Parameters
    ----------
    sw : pandas.DataFrame
        The output of :func:`attnspec.theory.expressivity.sweep.sweep`.

    Returns
    -------
    pandas.DataFrame
    """
    return sw[(sw["kind"] == "sweep") & (sw["projection"] == "gaussian") & (sw["method"] == "asymptotic")]


def check_klogl_measured(sw: pd.DataFrame, fits: pd.DataFrame) -> list[VerdictRow]:
    """The measured readings of :data:`~.claims.KLOGL`: exponents of k and log L, the LS fit.

    Parameters
    ----------
    sw : DataFrame, the sweep
    fits : DataFrame, :func:`fit_d_star` of it

    Returns
    -------
    list of VerdictRow, all ``measured``
    """
    g = gaussian_sweep(sw)
    numbers: dict = {"configurations": len(g), "trials": int(g["trials"].min())}
    readings: list[str] = []
    if len(g) >= 4 and g["k"].nunique() > 1 and g["L"].nunique() > 1:
        from scipy import stats as sps

        X = np.column_stack([np.ones(len(g)), np.log(g["k"]), np.log(np.log(g["L"]))])
        y = np.log(g["d"].to_numpy().astype(float))
        coef, *_ = np.linalg.lstsq(X, y, rcond=None)
        res = y - X @ coef
        dof = max(1, len(y) - 3)
        cov = np.linalg.inv(X.T @ X) * float(res @ res) / dof
        q = sps.t.ppf(0.975, dof)
        for name, j in (("k", 1), ("log L", 2)):
            half = q * math.sqrt(cov[j, j])
            numbers |= {
                name: float(coef[j]),
                f"{name}_low": float(coef[j] - half),
                f"{name}_high": float(coef[j] + half),
            }
        readings += ["k-exponent", "logl-exponent"]
    by = {r.model: r for r in fits.itertuples()}
    if "k log L" in by:
        f = by["k log L"]
        numbers |= {"C": f.C, "r2": f.r2, "max_rel_residual": f.max_rel_residual}
        for q, model in C.OTHER_FITS:
            numbers |= {f"C_{q}": by[model].C, f"r2_{q}": by[model].r2}
        readings.append("ls-fit")
    return read_off(C.KLOGL, sweep_params(g), numbers, paper=PAPER, seed=int(g["seed"].iloc[0]), readings=readings)


def check_stated_heldout(frame: pd.DataFrame, *, beta: float) -> list[VerdictRow]:
    """The held-out readings of :data:`~.claims.STATED` (``eps-heldout``, ``m-max-a-heldout``).

    Each ``heldout`` row of ``frame`` (:func:`attnspec.theory.expressivity.measure.heldout`)
    tested the bound implied by a constant fitted on other scaling points, on independent
    draws: the claim "d = bound gives ‖B − B̂‖∞ <= δ with probability >= 1 − β" is decided
    from its failure count by :func:`~attnspec.verdicts.classify.classify_probability`.

    Parameters
    ----------
    frame : DataFrame with ``heldout`` rows (fit, d, failures, trials, C, train, seed)
    beta : float

    Returns
    -------
    list of VerdictRow
    """
    out = []
    for r in frame.query("kind == 'heldout'").itertuples():
        numbers = {"fails": indicators(r.failures, r.trials), "beta": float(beta), "C": float(r.C)}
        if r.fit == "delta":
            reading = "eps-heldout"
            numbers |= {"exponent": float(r.exponent), "train": Cases([float(x) for x in r.train.split(",")])}
        else:
            reading, numbers["train"] = "m-max-a-heldout", float(r.train)
        P = {"L": int(r.L), "k": int(r.k), "eps": float(r.eps), "delta": float(r.delta), "d": int(r.d)}
        out += read_off(C.STATED, P, numbers, paper=PAPER, seed=int(r.seed), readings=(reading,))
    return out


def check_klogl_heldout(sw: pd.DataFrame) -> list[VerdictRow]:
    """The ``heldout`` reading of :data:`~.claims.KLOGL`: fit on small L, test on the largest.

    ``C = max d*/(k log L)`` over the configurations with L below the grid's largest (the
    smallest constant with ``d* <= C k log L`` there); each configuration at the largest L
    (its own independent draws) is tested through the lower end of its 95% order-statistic
    interval: violated if some held-out d* is significantly above ``C k log L``. No row when
    the grid has a single L.

    Parameters
    ----------
    sw : DataFrame, the sweep

    Returns
    -------
    list of VerdictRow (zero or one)
    """
    g = gaussian_sweep(sw)
    if g["L"].nunique() < 2:
        return []
    top = int(g["L"].max())
    train, test = g[g["L"] < top], g[g["L"] == top]
    low = (test["ci_low"] / test["k_log_L"]).to_numpy()
    t = test.iloc[int(np.argmax(low))]
    numbers = {
        "c_fit": float((train["d"] / train["k_log_L"]).max()), "measured": float(t["d"] / t["k_log_L"]),
        "low_end": float(low.max()), "high_end": float(t["ci_high"] / t["k_log_L"]), "k_worst": int(t["k"]),
        "configurations": len(train), "trials": int(test["trials"].min()), "bounded": float(np.any(test["ci_low"] > 0)),
    }  # fmt: skip
    P = {
        "L": top,
        "k": f"{test['k'].min()}..{test['k'].max()}",
        "eps": float(g["eps"].iloc[0]),
        "delta": float(g["delta"].iloc[0]),
        "varied": f"fit on L = {int(train['L'].min())}..{int(train['L'].max())}",
    }
    return read_off(C.KLOGL, P, numbers, paper=PAPER, seed=int(t["seed"]), readings=("heldout",))
