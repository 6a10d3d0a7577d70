"""Linformer Theorem 2 (eq. 8; Appendix B, eqs. 21–24): Monte Carlo with exact reduced samplers.

E = δR, F = e^{−δ}R, δ = 1/(2n); for any row w of A = QKᵀ/√d,

    Pr(‖softmax(wEᵀ) F V − softmax(w) V‖ <= ε‖softmax(w)‖‖V‖) > 1 − o(1),

‖V‖ read as spectral and as Frobenius norm, compared with the union over the n·d
(row, column) pairs of eq. 21, 2nd·e^{−(ε² − ε³)k/4}; E = F = R ("plain") for comparison;
and eq. 21 itself, |exp(xEᵀ) F yᵀ − exp(x) yᵀ| <= ε|exp(x) yᵀ| w.p. > 1 − 2e^{−(ε² − ε³)k/4}.
Where the zero output meets the tolerance of eq. 8 (‖softmax(w)V‖ <= ε‖softmax(w)‖‖V‖),
the column ``zero_output_passes`` says so: there the existence claim cannot fail.

The proof's step (23), the tolerances' triviality and the (ε, k) sweep are in
:mod:`.proof_steps`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from attnspec.errors import check_range
from attnspec.stats import child_seed, numpy_rng
from attnspec.theory.linformer import samplers as S
from attnspec.theory.linformer.dimensions import (
    check_eps,
    check_ks,
    check_n,
    lemma1_inner_bound,
    theorem2_union_bound,
)
from attnspec.theory.linformer.lemma1 import mc_columns

THM2_ROWS: tuple[str, ...] = ("row0", "peaked", "flat")
THM2_CONSTRUCTIONS: tuple[str, ...] = ("paper", "plain")


def theorem2_setup(n: int, d: int, *, seed: int) -> dict[str, np.ndarray]:
    """Random Q, K, V ∈ R^{n×d} (standard normal; W's absorbed as in Appendix A); A = QKᵀ/√d
    is formed by rows when needed (:func:`theorem2_rows`).

    Returns
    -------
    dict
        ``Q``, ``K``, ``V``: ndarrays of shape (n, d).
    """
    rng = numpy_rng(seed)
    return {"Q": rng.standard_normal((n, d)), "K": rng.standard_normal((n, d)), "V": rng.standard_normal((n, d))}


def theorem2_rows(Q: np.ndarray, K: np.ndarray, block: int = 512) -> dict[str, int]:
    """Indices of the rows w of A = QKᵀ/√d checked: ``row0``, the most ``peaked``
    softmax(w) (largest ‖softmax(w)‖) and the ``flat``-test one (smallest).

    Parameters
    ----------
    Q, K : ndarray of shape (n, d)
    block : int
        Rows of A formed at a time (memory: block × n).

    Returns
    -------
    dict of str to int
    """
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
    s_setup = child_seed(seed, "thm2", "setup")
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
        sd = child_seed(seed, "thm2", rname)
        res = S.theorem2_reduced_all(w, V, ks, trials, delta=delta, seed=sd)
        for cons in THM2_CONSTRUCTIONS:
            err = np.linalg.norm(res[cons] - target, axis=2)  # (len(ks), T)
            for ik, k in enumerate(ks):
                for reading, vnorm in (("spectral", v2), ("frobenius", vf)):
                    tol = eps * sn * vnorm
                    rows.append({"claim": "linformer.thm2.eq8", "reading": reading, "construction": cons, "row": rname,
                                 "row_index": i, "n": n, "d": d, "k": int(k), "eps": eps,
                                 "bound": float(theorem2_union_bound(n, d, k, eps)), "exact": np.nan,
                                 **mc_columns(int((err[ik] > tol).sum()), trials), "seed": sd,
                                 "setup_seed": s_setup, "zero_output_passes": bool(zero_err <= tol)})
                if int(k) in sample_ks:
                    v = err[ik][:sample_size] / (sn * v2)
                    samples.append(pd.DataFrame({"claim": "linformer.thm2.eq8", "reading": "spectral", "construction": cons,
                                                 "row": rname, "k": int(k), "sample": np.arange(v.size), "value": v}))
        # eq. 21: the single (row, column) statement with unnormalised exp, y = V[:, 0]
        tgt = float(np.exp(w) @ V[:, 0])
        for ik, k in enumerate(ks):
            fails = int((np.abs(res["eq21"][ik] - tgt) > eps * abs(tgt)).sum())
            rows.append({"claim": "linformer.thm2.eq21", "reading": "as-stated", "construction": "paper", "row": rname,
                         "row_index": i, "n": n, "d": d, "k": int(k), "eps": eps,
                         "bound": float(lemma1_inner_bound(k, eps)), "exact": np.nan,
                         **mc_columns(fails, trials), "seed": sd, "setup_seed": s_setup,
                         "zero_output_passes": False})
    return pd.DataFrame(rows), (pd.concat(samples, ignore_index=True) if samples else pd.DataFrame())
