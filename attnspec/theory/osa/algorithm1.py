"""Algorithm 1 (Appendix B): uniform sampling on the Stiefel manifold, and why the sign fix.

Algorithm 1 draws Z (n, m) with iid N(0, 1) entries, takes the reduced QR Z = Q R and
returns Q diag(sign R_ii). With the fix, Q is Haar-distributed on V_m(R^n), so Q₁₁ is the
first coordinate of a uniform unit vector in R^n: mean 0, E[Q₁₁²] = 1/n. Without it, the
law of Q depends on the QR routine's sign convention: LAPACK's Householder QR makes
R₁₁ = −sign(Z₁₁)·||Z[:, 0]||, so Q₁₁ = −|Z₁₁|/||Z[:, 0]|| < 0 always, with mean
−E|u₁| = −Γ(n/2) / (√π Γ((n+1)/2)) (claim ``osa.alg1``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd
import torch

from attnspec.numerics.linalg import sample_stiefel
from attnspec.numerics.stats import spawn_seeds, torch_generator
from attnspec.theorem.measured import Instance, InstanceResidual, Measure
from attnspec.verdicts.classify import VerdictRow

#: A sample mean farther than this many standard errors from the exact mean is a failure
#: (two-sided false-alarm probability 6e-5 for a normal mean).
Z_TOL = 4.0


def abs_coordinate_mean(n: int) -> float:
    """E|u₁| for u uniform on the unit sphere of R^n: Γ(n/2) / (√π Γ((n+1)/2)).

    Parameters
    ----------
    n : int

    Returns
    -------
    float
    """
    return math.exp(math.lgamma(n / 2) - math.lgamma((n + 1) / 2)) / math.sqrt(math.pi)


def q11_samples(n: int, m: int, draws: int, seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Q₁₁ with and without the sign fix, from the same Gaussian draws.

    Parameters
    ----------
    n, m : int
        n >= m >= 1.
    draws : int
    seed : int

    Returns
    -------
    fixed, raw : Tensor (draws,)
        Q₁₁ of :func:`attnspec.numerics.linalg.sample_stiefel` (Algorithm 1) and of the plain QR.
    r11 : Tensor (draws,)
        R₁₁ of the plain QR.
    """
    fixed = sample_stiefel(n, m, seed, dtype=torch.float64, batch=(draws,))  # (draws, n, m)
    z = torch.randn(draws, n, m, generator=torch_generator(seed), dtype=torch.float64)  # the same Z
    q, r = torch.linalg.qr(z, mode="reduced")
    return fixed[:, 0, 0], q[:, 0, 0], r[:, 0, 0]


def algorithm1_table(
    seed: int, shapes: Sequence[tuple[int, int]] = ((2, 1), (4, 2), (16, 4)), draws: int = 20000
) -> pd.DataFrame:
    """One row per (shape, sign fix): mean and mean square of Q₁₁ against their exact values.

    Parameters
    ----------
    seed : int
    shapes : sequence of (n, m)
    draws : int

    Returns
    -------
    DataFrame
        n, m, sign_fix, draws, seed, mean, exact_mean, se, z, mean_sq, exact_mean_sq,
        frac_q11_negative_raw (of the plain QR's Q₁₁), frac_r11_negative, haar_z (the
        z-score of the mean against the Haar mean 0).
    """
    recs = []
    for (n, m), s in zip(shapes, spawn_seeds(seed, len(shapes))):
        fixed, raw, r11 = q11_samples(n, m, draws, s)
        neg = float((raw < 0).double().mean())
        for fix, q in ((True, fixed), (False, raw)):
            if fix:
                exact = 0.0
            elif neg in (0.0, 1.0):  # one sign throughout (the QR convention): Q₁₁ = ∓|u₁|
                exact = (-1.0 if neg == 1.0 else 1.0) * abs_coordinate_mean(n)
            else:
                exact = math.nan
            mean, sd = float(q.mean()), float(q.std())
            se = sd / math.sqrt(draws)
            recs.append(
                {
                    "n": n,
                    "m": m,
                    "sign_fix": fix,
                    "draws": draws,
                    "seed": s,
                    "mean": mean,
                    "exact_mean": exact,
                    "se": se,
                    "z": (mean - exact) / se if se > 0 else math.inf,
                    "mean_sq": float((q**2).mean()),
                    "exact_mean_sq": 1.0 / n,
                    "frac_q11_negative_raw": neg,
                    "frac_r11_negative": float((r11 < 0).double().mean()),
                    "haar_z": mean / math.sqrt(1.0 / n / draws),
                }
            )
    return pd.DataFrame(recs)


def algorithm1_rows(frame: pd.DataFrame, seed: int) -> list[VerdictRow]:
    """``osa.alg1``, per sign fix at the shape with the largest |z|: with the fix, Q₁₁'s mean
    against the Haar value 0 (an identity within :data:`Z_TOL` standard errors); without it,
    the mean against the exact value of the QR convention (a measurement).

    Parameters
    ----------
    frame : DataFrame
        The table of :func:`algorithm1_table`.
    seed : int

    Returns
    -------
    list of VerdictRow
    """
    rows = []
    for fix, grp in frame.groupby("sign_fix", sort=False):
        w = grp.loc[grp.z.abs().idxmax()]
        shapes = "; ".join(
            f"n={int(r.n)}: mean {r['mean']:+.4f} (exact {r.exact_mean:+.4f}, z {r.z:+.2f}; vs Haar 0: "
            f"z {r.haar_z:+.1f}), E[Q₁₁²] {r.mean_sq:.4f} (1/n = {r.exact_mean_sq:.4f})"
            for _, r in grp.iterrows()
        )
        values = {
            "mean": float(w["mean"]), "exact": float(w.exact_mean), "draws": int(w.draws), "shapes": shapes,
            "residual": abs(float(w["mean"]) - float(w.exact_mean)), "tol": Z_TOL * float(w.se),
            "negative": f"{grp.frac_q11_negative_raw.min():.0%}",
        }  # fmt: skip
        params = {"n,m": ";".join(f"{int(r.n)},{int(r.m)}" for _, r in grp.iterrows()), "draws": int(w.draws)}
        reading = _with_fix(values["tol"]) if fix else WITHOUT_FIX
        rows.append(reading.row("osa.alg1", Instance(params, values, seed)))
    return rows


#: Without the fix: the mean of Q₁₁ set beside the exact value of LAPACK's sign convention.
WITHOUT_FIX = Measure(
    "without-sign-fix", value="mean", exact="exact", trials="draws",
    sentence="plain QR (no sign fix) is not Haar: Q₁₁ < 0 in {negative} of the draws (LAPACK's Householder "
    "convention: Q₁₁ = −|Z₁₁|/||Z[:, 0]||, mean −Γ(n/2)/(√π Γ((n+1)/2))); {shapes}",
)  # fmt: skip


def _with_fix(tol: float) -> InstanceResidual:
    """With the fix: |mean − 0| within ``tol`` (:data:`Z_TOL` standard errors of the mean)."""
    return InstanceResidual(
        "with-sign-fix", residual="residual", tol=tol, estimate="mean", exact="exact", bound="tol",
        trials="draws", text=f"{{reason}} ({Z_TOL:g} standard errors); {{shapes}}",
    )  # fmt: skip
