"""Performer's FAVOR+ (Choromanski et al., "Rethinking Attention with Performers", ICLR 2021).

The softmax kernel SM(x, y) = exp(xᵀy) is estimated from m random features ω_1..ω_m:

* positive (Lemma 1): SM⁺_m = (1/m) Σ exp(ωᵢᵀx − ‖x‖²/2) exp(ωᵢᵀy − ‖y‖²/2), ωᵢ ~ N(0, I_d);
  hyperbolic (Lemma 1, l = 2): SM^hyp+_m = Λ (1/m) Σ cosh(ωᵢᵀz), z = x + y,
  Λ = exp(−(‖x‖² + ‖y‖²)/2); both unbiased.
* trigonometric: SM^trig_m = exp((‖x‖² + ‖y‖²)/2) (1/m) Σ cos(ωᵢᵀ(x − y)).
* Lemma 2 gives their mean squared errors in closed form (i.i.d. ωᵢ):
  MSE(trig) = exp(‖z‖²) SM⁻² (1 − exp(−‖x − y‖²))² / (2m),
  MSE(SM⁺)  = exp(‖z‖²) SM² (1 − exp(−‖z‖²)) / m,
  MSE(hyp)  = (1 − exp(−‖z‖²)) MSE(SM⁺) / 2.
* Theorem 2: with orthogonal ωᵢ (m <= d, each of Gaussian length),
  MSE(SM^ort+_m) <= MSE(SM⁺_m) − 2(m − 1)/(m(d + 2)) (SM − Λ)².

Every claim is read against one seeded draw of m features per trial, at x, y of length r drawn
once per grid point. The whole check is declared against :mod:`attnspec.theorem`.
"""

from __future__ import annotations

import numpy as np

from attnspec.theorem import AtMost, Check, Claim, Covers, Option, Paper

PAPER = Paper(
    "performer",
    "Choromanski, Likhosherstov, Dohan, Song, Gane, Sarlos, Hawkins, Davis, Mohiuddin, Kaiser, Belanger, "
    "Colwell & Weller",
    "Rethinking Attention with Performers",
    year=2021,
    where="ICLR 2021, arXiv 2009.14794",
)


def grid(o):
    """One point per input length r: the kernel's value and the estimators' spread grow with it."""
    return [{"d": o["d"], "m": o["m"], "r": float(r)} for r in o["r"]]


def validate(o):
    from attnspec.errors import InputError

    if o["m"] > o["d"]:
        raise InputError(f"--m {o['m']} must be <= --d {o['d']}: at most d orthogonal features exist")


def setup(p, rng):
    """x, y of length r in random directions, and every closed form the claims compare with."""
    d, m, r = p["d"], p["m"], p["r"]
    x, y = (r * v / np.linalg.norm(v) for v in rng.standard_normal((2, d)))
    sm, lam, z2 = np.exp(x @ y), np.exp(-(x @ x + y @ y) / 2), (x + y) @ (x + y)
    mse_prf = np.exp(z2) * sm**2 * -np.expm1(-z2) / m
    return {
        "x": x, "y": y,  # (d,) each: handed to every trial, not tabulated
        "sm": sm,
        "mse_trig": np.exp(z2) / sm**2 * np.expm1(-(x - y) @ (x - y)) ** 2 / (2 * m),
        "mse_prf": mse_prf,
        "mse_hyp": -np.expm1(-z2) * mse_prf / 2,
        "orf_bound": mse_prf - 2 * (m - 1) / (m * (d + 2)) * (sm - lam) ** 2,
    }  # fmt: skip


def orthogonal(m, d, rng):
    """m orthogonal directions (Haar), each scaled by the length of an independent N(0, I_d) draw."""
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    q = q * np.sign(np.diag(r))  # (d, d), Haar distributed
    return q[:m] * np.linalg.norm(rng.standard_normal((m, d)), axis=1, keepdims=True)


def trial(p, inst, rng):
    """One draw of m features: each estimator of SM(x, y) and its squared error."""
    d, m, x, y = p["d"], p["m"], inst["x"], inst["y"]
    half = (x @ x + y @ y) / 2
    w = rng.standard_normal((m, d))  # (m, d) i.i.d. features
    est = {
        "prf": np.mean(np.exp(w @ (x + y) - half)),
        "hyp": np.exp(-half) * np.mean(np.cosh(w @ (x + y))),
        "trig": np.exp(half) * np.mean(np.cos(w @ (x - y))),
        "orf": np.mean(np.exp(orthogonal(m, d, rng) @ (x + y) - half)),
    }
    return {**est, **{f"{k}_se": (v - inst["sm"]) ** 2 for k, v in est.items()}}


def _claim(id, where, statement, reading, label):
    return Claim(f"performer.{id}", where, statement, reading, label=label,
                 hypotheses="x, y in R^d; omega_i ~ N(0, I_d) independent (Theorem 2: orthogonal, m <= d)")  # fmt: skip


LEVEL = 0.999  # each interval's level: the 15 rows of Lemmas 1-2 share a 1.5 % error budget
CLAIMS = (
    _claim("lemma1.positive", "Lemma 1, eq. (7), Sec. 2.3", "SM(x, y) = E[exp(wᵀx − ‖x‖²/2) exp(wᵀy − ‖y‖²/2)]: "
           "the positive random features estimate the softmax kernel without bias.",
           Covers(value="prf", target="sm", level=LEVEL, description="mean of SM⁺_m covers exp(xᵀy)"), "Lemma 1, SM⁺"),
    _claim("lemma1.hyperbolic", "Lemma 1, eq. (7), Sec. 2.3", "SM(x, y) = Λ E[cosh(wᵀz)], z = x + y: the hyperbolic "
           "positive features are unbiased too.",
           Covers(value="hyp", target="sm", level=LEVEL, description="mean of SM^hyp+_m covers exp(xᵀy)"),
           "Lemma 1, hyp+"),
    _claim("lemma2.trig", "Lemma 2, eq. (8), Sec. 3", "MSE(SM^trig_m) = exp(‖x+y‖²) SM⁻² (1 − exp(−‖x−y‖²))² / (2m).",
           Covers(value="trig_se", target="mse_trig", level=LEVEL, description="mean squared error covers the formula"),
           "Lemma 2, trig"),
    _claim("lemma2.positive", "Lemma 2, eq. (8), Sec. 3", "MSE(SM⁺_m) = exp(‖x+y‖²) SM² (1 − exp(−‖x+y‖²)) / m.",
           Covers(value="prf_se", target="mse_prf", level=LEVEL, description="mean squared error covers the formula"),
           "Lemma 2, SM⁺"),
    _claim("lemma2.hyperbolic", "Lemma 2, eq. (8), Sec. 3", "MSE(SM^hyp+_m) = (1 − exp(−‖x+y‖²)) MSE(SM⁺_m) / 2.",
           Covers(value="hyp_se", target="mse_hyp", level=LEVEL, description="mean squared error covers the formula"),
           "Lemma 2, hyp+"),
    _claim("thm2.orthogonal", "Theorem 2, eq. (10), Sec. 3", "MSE(SM^ort+_m) <= MSE(SM⁺_m) − 2(m−1)/(m(d+2)) (SM − Λ)².",
           (AtMost(value="orf_se", bound="orf_bound", level=0.99, description="MSE of the orthogonal estimator at "
                   "most the bound (nearly tight at small r: the trials may not resolve it)"),
            AtMost(name="below-iid", value="orf_se", bound="mse_prf", level=0.99, loose_factor=None,
                   description="the weaker consequence: MSE of the orthogonal estimator below the i.i.d. one")),
           "Theorem 2, ORF"),
)  # fmt: skip

CHECK = Check(
    command="favor",
    paper=PAPER,
    claims=CLAIMS,
    options=(
        Option("d", "int", 8, "Dimension d of x and y, >= 2.", low=2),
        Option("m", "int", 8, "Random features m, in [1, d] (orthogonal features need m <= d).", low=1),
        Option(
            "r", "floats", (0.2, 0.35, 0.5), "Lengths ‖x‖ = ‖y‖ = r, one grid point each (> 0).", low=0.0, low_open=True
        ),
        Option("trials", "int", 10_000, "Draws of m features per grid point, >= 2.", low=2),
    ),
    grid=grid,
    setup=setup,
    trial=trial,
    validate=validate,
    summary="Check Performer's FAVOR+ lemmas: unbiased positive features, closed-form MSEs, orthogonal features.",
).register()
