"""Linformer Theorem 1 (eq. 3; Appendix A, eqs. 16–20): Monte Carlo with an exact reduced sampler.

For P = softmax(QKᵀ/√d), any column w of V W^V and R ∈ R^{k×n} with i.i.d. N(0, 1/k)
entries, P̃ = P RᵀR satisfies

    Pr(‖P̃wᵀ − Pwᵀ‖ <= ε‖Pwᵀ‖) > 1 − o(1),   k = 5 ln(n)/(ε² − ε³),

via a union bound over the rows of P: failure <= 2n·e^{−(ε² − ε³)k/4} (eq. 20).
Readings: ``relative`` (as stated) and ``additive`` (tolerance ε‖P‖_F‖w‖, which is what
the union bound over eq. 12's product reading gives). Where ‖Pw‖ <= ε‖P‖_F‖w‖ the zero
matrix meets the additive tolerance (column ``zero_output_passes``).

The theorem's quantifier and Appendix A's k = log n are in :mod:`.quantifier`.
The sampler is exact in distribution (:mod:`attnspec.theory.linformer.samplers`); the
vectors w include adversarial ones the toolkit searches for.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from attnspec.errors import InputError, check_choice, check_range
from attnspec.stats import child_seed, numpy_rng
from attnspec.theory.linformer import samplers as S
from attnspec.theory.linformer.dimensions import check_eps, check_ks, check_n, theorem1_union_bound
from attnspec.theory.linformer.lemma1 import mc_columns

ATTENTION_KINDS: tuple[str, ...] = ("softmax", "uniform", "near_identity")
W_KINDS: tuple[str, ...] = ("value", "random", "adv_bottom", "adv_top")


def attention_logits(n: int, *, seed: int, d: int = 64, temperature: float = 1.0) -> np.ndarray:
    """The logits A = QKᵀ/(√d·temperature) behind the ``softmax`` attention kind.

    Q, K ∈ R^{n×d} are standard normal, drawn from ``seed`` in that order.

    Returns
    -------
    A : ndarray of shape (n, n), float64
    """
    check_n(n)
    check_range("temperature", temperature, low=0.0, low_open=True)
    rng = numpy_rng(seed)
    Q = rng.standard_normal((n, d))
    K = rng.standard_normal((n, d))
    return Q @ K.T / (math.sqrt(d) * temperature)


def attention_matrix(kind: str, n: int, *, seed: int, d: int = 64, temperature: float = 1.0) -> np.ndarray:
    """A synthetic attention matrix P (n×n, rows summing to 1).

    ``softmax``: softmax(QKᵀ/(√d·temperature)) with Q, K ∈ R^{n×d} standard normal;
    ``uniform``: every entry 1/n; ``near_identity``: softmax(β I) with β = ln(n) + 4
    (diagonal ≈ 0.98).

    Parameters
    ----------
    kind : str
        One of :data:`ATTENTION_KINDS`.
    n : int
    seed : int
        Seed of Q, K (``softmax`` only).
    d : int
    temperature : float

    Returns
    -------
    P : ndarray of shape (n, n), float64, rows summing to 1
    """
    check_n(n)
    if kind == "uniform":
        return np.full((n, n), 1.0 / n)
    if kind == "near_identity":
        beta = math.log(n) + 4.0
        P = np.ones((n, n))
        np.fill_diagonal(P, math.exp(beta))
        return P / P.sum(1, keepdims=True)
    if kind == "softmax":
        A = attention_logits(n, seed=seed, d=d, temperature=temperature)
        A -= A.max(1, keepdims=True)
        P = np.exp(A)
        return P / P.sum(1, keepdims=True)
    raise InputError(f"attention kind must be one of {', '.join(ATTENTION_KINDS)}, got {kind!r}")


def theorem1_vectors(P: np.ndarray, *, seed: int, d: int = 64, iterations: int = 8) -> dict[str, np.ndarray]:
    """The vectors w checked against P.

    ``value``: a column of V W^V with token embeddings sharing a mean (V = 1μᵀ + Z);
    ``random``: N(0, I_n); ``adv_bottom``: the toolkit's search for the w minimising
    ‖Pw‖/‖w‖ (inverse iteration on PᵀP, which makes the relative claim hardest);
    ``adv_top``: the w maximising it (power iteration; the hardest for the additive one).

    Parameters
    ----------
    P : ndarray of shape (n, n)
    seed : int
    d : int
        Embedding dimension of the ``value`` column.
    iterations : int
        Inverse-iteration steps (power iteration uses four times as many).

    Returns
    -------
    dict of str to ndarray of shape (n,)
        By kind: ``value``, ``random``, ``adv_bottom``, ``adv_top``.
    """
    from scipy import linalg as sla

    n = P.shape[0]
    rng = numpy_rng(seed)
    mu = rng.standard_normal(d)
    Z = rng.standard_normal((n, d))
    Wv = rng.standard_normal((d, d)) / math.sqrt(d)
    value = ((np.ones((n, 1)) * mu + Z) @ Wv)[:, 0]
    random = rng.standard_normal(n)
    # smallest right singular vector: x <- (PᵀP)^{-1} x through an LU of P + σI
    shift = 1e-10 * max(1.0, float(np.abs(P).max()))
    lu = sla.lu_factor(P + shift * np.eye(n), check_finite=False)
    x = rng.standard_normal(n)
    for _ in range(iterations):
        y = sla.lu_solve(lu, x, trans=1, check_finite=False)
        x = sla.lu_solve(lu, y, check_finite=False)
        x /= np.linalg.norm(x)
    bottom = x
    x = rng.standard_normal(n)
    for _ in range(4 * iterations):
        x = P.T @ (P @ x)
        x /= np.linalg.norm(x)
    return {"value": value, "random": random, "adv_bottom": bottom, "adv_top": x}


def simulate_theorem1(attention: Mapping[str, np.ndarray], eps: float, ks: Sequence[int], *,
                      trials: int = 10_000, seed: int = 0, w_kinds: Sequence[str] = W_KINDS,
                      sample_ks: Sequence[int] = (), sample_size: int = 2000,
                      ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Monte Carlo of Theorem 1 (Gaussian R) for each attention matrix and each w.

    Parameters
    ----------
    attention : mapping name -> ndarray (n, n)
        Row-stochastic matrices P (synthetic kinds or captured ones).
    ks : the projection dimensions (k > n allowed: the law is still defined).

    Returns
    -------
    table : DataFrame, one row per (reading, attention, w, k): bound 2n e^{−c(ε)k},
        failures, trials, estimate and 95% CI, plus ``pw_ratio`` = ‖Pw‖/(‖P‖_F‖w‖).
    samples : relative errors ‖P̃w − Pw‖/‖Pw‖ at ``sample_ks``.
    """
    check_eps(eps)
    ks = check_ks(ks)
    check_range("trials", trials, low=1)
    for wk in w_kinds:
        check_choice("w kind", wk, W_KINDS)
    rows: list[dict] = []
    samples: list[pd.DataFrame] = []
    for name, P in attention.items():
        P = np.asarray(P, dtype=np.float64)
        if P.ndim != 2 or P.shape[0] != P.shape[1]:
            raise InputError(f"attention {name!r} must be a square matrix, got shape {P.shape}")
        n = check_n(P.shape[0])
        s_vec = child_seed(seed, "thm1", "vectors", name)
        vecs = theorem1_vectors(P, seed=s_vec)
        vecs = {wk: vecs[wk] for wk in w_kinds}
        W = np.stack(list(vecs.values()), axis=1)  # (n, m)
        s_parts = child_seed(seed, "thm1", "parts", name)
        parts = S.theorem1_reduced_parts(P, W, trials, seed=s_parts)
        pf = float(np.linalg.norm(P))
        for j, wk in enumerate(vecs):
            wn = parts["wnorm"][j]
            pw = math.sqrt(parts["unorm2"][j]) * wn
            for k in ks:
                s_k = child_seed(seed, "thm1", "chi", name, wk, int(k))
                err = S.theorem1_errors_from_parts(parts, j, int(k), seed=s_k)
                rel = err / pw if pw > 0 else np.where(err > 0, np.inf, 0.0)
                common = {"attention": name, "w": wk, "n": n, "k": int(k), "eps": eps,
                          "bound": float(theorem1_union_bound(n, k, eps)), "exact": np.nan}
                for reading, fails, zero_ok in (("relative", int((err > eps * pw).sum()), False),
                                                ("additive", int((err > eps * pf * wn).sum()), pw <= eps * pf * wn)):
                    # zero_ok: P̃ = 0 meets the tolerance (‖Pw‖ <= tolerance), so the
                    # existence claim cannot fail at this w.
                    rows.append({"claim": "linformer.thm1.eq3", "reading": reading, **common,
                                 **mc_columns(fails, trials), "seed": s_k, "parts_seed": s_parts,
                                 "vectors_seed": s_vec, "pw_ratio": pw / (pf * wn),
                                 "zero_output_passes": bool(zero_ok)})
                if int(k) in set(int(x) for x in sample_ks):
                    v = rel[:sample_size]
                    samples.append(pd.DataFrame({"claim": "linformer.thm1.eq3", "reading": "relative", "attention": name,
                                                 "w": wk, "k": int(k), "sample": np.arange(v.size), "value": v}))
    return pd.DataFrame(rows), (pd.concat(samples, ignore_index=True) if samples else pd.DataFrame())
