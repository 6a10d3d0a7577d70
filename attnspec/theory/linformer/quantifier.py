"""Theorem 1's quantifier as written (claim ``linformer.thm1.quantifier``, :data:`.claims.QUANTIFIER`).

As written, P̃ may depend on w, so the rank-1 witness P̃ = P w wᵀ/‖w‖² meets it exactly
(``as-written``); the proof's one P̃ = PRᵀR for every w at once (``uniform``) fails at any
w in the kernel of R, where P̃w = 0.
"""

from __future__ import annotations

import numpy as np

from attnspec.numerics.stats import child_seed, numpy_rng
from attnspec.theorem.measured import Instance, instance_rows
from attnspec.theory.linformer.claims import QUANTIFIER
from attnspec.theory.linformer.dimensions import check_eps
from attnspec.verdicts.classify import VerdictRow

CLAIM = QUANTIFIER.id


def rank_one_witness_error(P: np.ndarray, w: np.ndarray) -> float:
    """Relative error ‖P̃w − Pw‖/‖Pw‖ of the witness P̃ = P w wᵀ/‖w‖² built from w itself.

    Parameters
    ----------
    P : ndarray of shape (n, n)
    w : ndarray of shape (n,), non-zero

    Returns
    -------
    float
        0 up to round-off (0 when Pw = 0, where the tolerance is 0 too).
    """
    P = np.asarray(P, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    Pt = np.outer(P @ w, w) / float(w @ w)  # (n, n), rank 1
    target = P @ w
    err = float(np.linalg.norm(Pt @ w - target))
    norm = float(np.linalg.norm(target))
    return err / norm if norm > 0 else (0.0 if err == 0 else np.inf)


def kernel_vector_error(P: np.ndarray, k: int, *, seed: int) -> tuple[float, float]:
    """For one Gaussian R (k×n, k < n): a w in ker R and the relative error of P̃ = PRᵀR there.

    w = g − Rᵀ(RRᵀ)^{−1}Rg for a Gaussian g (the projection of g on ker R).

    Parameters
    ----------
    P : numpy.ndarray, shape (n, n)
        The attention matrix.
    k : int
        Rows of R, below n.
    seed : int
        Seed of R and g.

    Returns
    -------
    (relative_error, kernel_residual)
        ‖P̃w − Pw‖/‖Pw‖ (1 up to round-off) and ‖Rw‖/‖w‖ (round-off).
    """
    n = P.shape[0]
    rng = numpy_rng(seed)  # NumPy, not torch: Theorem 1's group runs without torch (see .battery.plan)
    R = rng.standard_normal((k, n)) / np.sqrt(k)  # (k, n)
    g = rng.standard_normal(n)
    w = g - R.T @ np.linalg.solve(R @ R.T, R @ g)
    Pw = P @ w
    approx = P @ (R.T @ (R @ w))
    return float(np.linalg.norm(approx - Pw) / np.linalg.norm(Pw)), float(np.linalg.norm(R @ w) / np.linalg.norm(w))


def check_quantifier(
    P: np.ndarray, vectors: dict[str, np.ndarray], eps: float, ks: list[int], *, name: str, seed: int, draws: int = 3
) -> list[VerdictRow]:
    """Both readings of Theorem 1's quantifier on one attention matrix.

    Parameters
    ----------
    P : ndarray of shape (n, n)
        A row-stochastic attention matrix.
    vectors : dict of str to ndarray of shape (n,)
        The w checked for the ``as-written`` reading.
    eps : float
    ks : list of int
        Ranks for the ``uniform`` reading (those < n are checked).
    name : str
        The matrix's name (parameter ``attention``).
    seed : int
        Parent seed of the R and g draws (draw j at rank k: ``child_seed(seed, k, j)``).
    draws : int
        R matrices per k.

    Returns
    -------
    list of VerdictRow
        One ``as-written`` row (worst over ``vectors``) and one ``uniform`` row per k < n.
    """
    check_eps(eps)
    n = P.shape[0]
    errs = {wk: rank_one_witness_error(P, w) for wk, w in vectors.items()}
    errors = ", ".join(f"{k}: {v:.2g}" for k, v in errs.items())
    out = [
        Instance(
            {"n": n, "eps": eps, "attention": name, "k": 1},
            {"error": max(errs.values()), "eps": eps, "errors": errors},
            reading="as-written",
        )
    ]
    for k in sorted({int(k) for k in ks if 1 <= k < n}):
        results = [kernel_vector_error(P, k, seed=child_seed(seed, k, j)) for j in range(draws)]
        values = {
            "error": min(r for r, _ in results),  # the least bad draw: still fails
            "kernel": max(r for _, r in results), "eps": eps, "draws": draws,
        }  # fmt: skip
        out.append(Instance({"n": n, "eps": eps, "attention": name, "k": k}, values, seed, "uniform"))
    return instance_rows(QUANTIFIER, out)
