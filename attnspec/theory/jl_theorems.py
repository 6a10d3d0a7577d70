"""Linformer Theorems 1 and 2 (Wang et al. 2020): Monte Carlo with exact reduced samplers.

**Theorem 1** (eq. 3; Appendix A, eqs. 16–20). For P = softmax(QKᵀ/√d), any column w of
V W^V and R ∈ R^{k×n} with i.i.d. N(0, 1/k) entries, P̃ = P RᵀR satisfies

    Pr(‖P̃wᵀ − Pwᵀ‖ <= ε‖Pwᵀ‖) > 1 − o(1),   k = 5 ln(n)/(ε² − ε³),

via a union bound over the rows of P: failure <= 2n·e^{−(ε² − ε³)k/4} (eq. 20).
Readings: ``relative`` (as stated) and ``additive`` (tolerance ε‖P‖_F‖w‖, which is what
the union bound over eq. 12's product reading gives).

**Theorem 2** (eq. 8; Appendix B, eqs. 21–24). E = δR, F = e^{−δ}R, δ = 1/(2n); for any
row w of A = QKᵀ/√d,

    Pr(‖softmax(wEᵀ) F V − softmax(w) V‖ <= ε‖softmax(w)‖‖V‖) > 1 − o(1),

‖V‖ read as spectral and as Frobenius norm, compared with the union over the n·d
(row, column) pairs of eq. 21, 2nd·e^{−(ε² − ε³)k/4}; E = F = R ("plain") for comparison;
and eq. 21 itself, |exp(xEᵀ) F yᵀ − exp(x) yᵀ| <= ε|exp(x) yᵀ| w.p. > 1 − 2e^{−(ε² − ε³)k/4}.

The samplers are exact in distribution (see :mod:`attnspec.theory.jl_samplers`); the
vectors w include adversarial ones the toolkit searches for.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from attnspec.errors import InputError, check_range
from attnspec.stats import numpy_rng
from attnspec.theory import jl_samplers as S
from attnspec.theory.jl import (
    _mc_columns,
    check_eps,
    check_ks,
    check_n,
    lemma1_inner_bound,
    subseed,
    theorem1_union_bound,
    theorem2_union_bound,
)

ATTENTION_KINDS: tuple[str, ...] = ("softmax", "uniform", "near_identity")
W_KINDS: tuple[str, ...] = ("value", "random", "adv_bottom", "adv_top")
THM2_ROWS: tuple[str, ...] = ("row0", "peaked", "flat")
THM2_CONSTRUCTIONS: tuple[str, ...] = ("paper", "plain")


# ----------------------------------------------------------------------------- Theorem 1


def attention_matrix(kind: str, n: int, *, seed: int, d: int = 64, temperature: float = 1.0) -> np.ndarray:
    """A synthetic attention matrix P (n×n, rows summing to 1).

    ``softmax``: softmax(QKᵀ/(√d·temperature)) with Q, K ∈ R^{n×d} standard normal;
    ``uniform``: every entry 1/n; ``near_identity``: softmax(β I) with β = ln(n) + 4
    (diagonal ≈ 0.98).
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
        check_range("temperature", temperature, low=0.0, low_open=True)
        rng = numpy_rng(seed)
        Q = rng.standard_normal((n, d))
        K = rng.standard_normal((n, d))
        A = Q @ K.T / (math.sqrt(d) * temperature)
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
        if wk not in W_KINDS:
            raise InputError(f"w kind must be one of {', '.join(W_KINDS)}, got {wk!r}")
    rows: list[dict] = []
    samples: list[pd.DataFrame] = []
    for name, P in attention.items():
        P = np.asarray(P, dtype=np.float64)
        if P.ndim != 2 or P.shape[0] != P.shape[1]:
            raise InputError(f"attention {name!r} must be a square matrix, got shape {P.shape}")
        n = check_n(P.shape[0])
        s_vec = subseed(seed, "thm1", "vectors", name)
        vecs = theorem1_vectors(P, seed=s_vec)
        vecs = {wk: vecs[wk] for wk in w_kinds}
        W = np.stack(list(vecs.values()), axis=1)  # (n, m)
        s_parts = subseed(seed, "thm1", "parts", name)
        parts = S.theorem1_reduced_parts(P, W, trials, seed=s_parts)
        pf = float(np.linalg.norm(P))
        for j, wk in enumerate(vecs):
            wn = parts["wnorm"][j]
            pw = math.sqrt(parts["unorm2"][j]) * wn
            for k in ks:
                s_k = subseed(seed, "thm1", "chi", name, wk, int(k))
                err = S.theorem1_errors_from_parts(parts, j, int(k), seed=s_k)
                rel = err / pw if pw > 0 else np.where(err > 0, np.inf, 0.0)
                common = {"attention": name, "w": wk, "n": n, "k": int(k), "eps": eps,
                          "bound": float(theorem1_union_bound(n, k, eps)), "exact": np.nan}
                for reading, fails in (("relative", int((err > eps * pw).sum())),
                                       ("additive", int((err > eps * pf * wn).sum()))):
                    rows.append({"claim": "thm1.eq3", "reading": reading, **common, **_mc_columns(fails, trials),
                                 "seed": s_k, "parts_seed": s_parts, "vectors_seed": s_vec,
                                 "pw_ratio": pw / (pf * wn)})
                if int(k) in set(int(x) for x in sample_ks):
                    v = rel[:sample_size]
                    samples.append(pd.DataFrame({"claim": "thm1.eq3", "reading": "relative", "attention": name,
                                                 "w": wk, "k": int(k), "sample": np.arange(v.size), "value": v}))
    return pd.DataFrame(rows), (pd.concat(samples, ignore_index=True) if samples else pd.DataFrame())


# ----------------------------------------------------------------------------- Theorem 2


def theorem2_setup(n: int, d: int, *, seed: int) -> dict[str, np.ndarray]:
    """Random Q, K, V ∈ R^{n×d} (standard normal; W's absorbed as in Appendix A); A = QKᵀ/√d
    is formed by rows when needed (:func:`theorem2_rows`)."""
    rng = numpy_rng(seed)
    return {"Q": rng.standard_normal((n, d)), "K": rng.standard_normal((n, d)), "V": rng.standard_normal((n, d))}


def theorem2_rows(Q: np.ndarray, K: np.ndarray, block: int = 512) -> dict[str, int]:
    """Indices of the rows w of A = QKᵀ/√d checked: ``row0``, the most ``peaked``
    softmax(w) (largest ‖softmax(w)‖) and the ``flat``-test one (smallest)."""
    d = Q.shape[1]
    peaks = np.empty(Q.shape[0])
    for s in range(0, Q.shape[0], block):
        A = Q[s : s + block] @ K.T / math.sqrt(d)  # (b, n)
        A -= A.max(1, keepdims=True)
        E = np.exp(A)
        peaks[s : s + block] = np.linalg.norm(E, axis=1) / E.sum(1)
    return {"row0": 0, "peaked": int(np.argmax(peaks)), "flat": int(np.argmin(peaks))}


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max())
    return e / e.sum()


def simulate_theorem2(n: int, d: int, eps: float, ks: Sequence[int], *, trials: int = 10_000, seed: int = 0,
                      sample_ks: Sequence[int] = (), sample_size: int = 2000) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Monte Carlo of Theorem 2 (eq. 8 under both readings of ‖V‖, both constructions) and eq. 21.

    Returns
    -------
    table : DataFrame, one row per (claim, reading, construction, row, k).
    samples : relative errors ‖out − softmax(w)V‖/(‖softmax(w)‖‖V‖_2) at ``sample_ks``.
    """
    check_n(n)
    check_range("d", d, low=2)
    check_eps(eps)
    ks = check_ks(ks)
    check_range("trials", trials, low=1)
    s_setup = subseed(seed, "thm2", "setup")
    setup = theorem2_setup(n, d, seed=s_setup)
    Q, K, V = setup["Q"], setup["K"], setup["V"]
    row_index = theorem2_rows(Q, K)
    v2 = float(np.linalg.norm(V, 2))
    vf = float(np.linalg.norm(V))
    delta = 1.0 / (2 * n)
    rows: list[dict] = []
    samples: list[pd.DataFrame] = []
    sample_ks = set(int(k) for k in sample_ks)
    for rname, i in row_index.items():
        w = Q[i] @ K.T / math.sqrt(d)  # (n,): row i of A
        s = _softmax(w)
        target = s @ V  # (d,)
        sn = float(np.linalg.norm(s))
        zero_err = float(np.linalg.norm(target))
        sd = subseed(seed, "thm2", rname)
        res = S.theorem2_reduced_all(w, V, ks, trials, delta=delta, seed=sd)
        for cons in THM2_CONSTRUCTIONS:
            err = np.linalg.norm(res[cons] - target, axis=2)  # (len(ks), T)
            for ik, k in enumerate(ks):
                for reading, vnorm in (("spectral", v2), ("frobenius", vf)):
                    tol = eps * sn * vnorm
                    rows.append({"claim": "thm2.eq8", "reading": reading, "construction": cons, "row": rname,
                                 "row_index": i, "n": n, "d": d, "k": int(k), "eps": eps,
                                 "bound": float(theorem2_union_bound(n, d, k, eps)), "exact": np.nan,
                                 **_mc_columns(int((err[ik] > tol).sum()), trials), "seed": sd,
                                 "setup_seed": s_setup, "zero_output_passes": bool(zero_err <= tol)})
                if int(k) in sample_ks:
                    v = err[ik][:sample_size] / (sn * v2)
                    samples.append(pd.DataFrame({"claim": "thm2.eq8", "reading": "spectral", "construction": cons,
                                                 "row": rname, "k": int(k), "sample": np.arange(v.size), "value": v}))
        # eq. 21: the single (row, column) statement with unnormalised exp, y = V[:, 0]
        tgt = float(np.exp(w) @ V[:, 0])
        for ik, k in enumerate(ks):
            fails = int((np.abs(res["eq21"][ik] - tgt) > eps * abs(tgt)).sum())
            rows.append({"claim": "thm2.eq21", "reading": "as_stated", "construction": "paper", "row": rname,
                         "row_index": i, "n": n, "d": d, "k": int(k), "eps": eps,
                         "bound": float(lemma1_inner_bound(k, eps)), "exact": np.nan,
                         **_mc_columns(fails, trials), "seed": sd, "setup_seed": s_setup,
                         "zero_output_passes": False})
    return pd.DataFrame(rows), (pd.concat(samples, ignore_index=True) if samples else pd.DataFrame())
