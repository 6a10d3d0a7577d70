"""Theorem 2's proof and parameters, measured: step (23), the tolerances, the k formulas, the
(ε, k) grid of eq. (8) and the proof steps; each claim and its readings are declared in :mod:`.claims`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from attnspec.numerics.stats import mean_ci, numpy_rng
from attnspec.theorem.measured import Instance, instance_rows
from attnspec.theory.linformer.claims import ORIENTATION, PROOF, STEP23, THM2_K, TOLERANCE
from attnspec.theory.linformer.dimensions import (
    THEOREM2_FORMULAS,
    check_eps,
    check_n,
    theorem2_formulas,
    union_bound_min_k,
)
from attnspec.verdicts.classify import VerdictRow

#: The ε grid of the eq. (8) sweep: 2/3 maximises c(ε) = (ε² − ε³)/4, the rate of every bound.
SWEEP_EPS: tuple[float, ...] = (0.25, 0.5, 2.0 / 3.0, 0.9)


# ----------------------------------------------------------------------------- step (23)


def step23_ratios(x: np.ndarray, ks: Sequence[int], trials: int, *, delta: float, seed: int) -> np.ndarray:
    """Samples of r = ‖e^{−δ}exp(δRx) − R exp(x)‖/‖exp(x)‖ for Gaussian R (k×n, N(0, 1/k)).

    The rows j of (Rx, R exp(x)) are i.i.d. bivariate normal with covariance Σ/k,
    Σ = [[‖x‖², ⟨x, e⟩], [⟨x, e⟩, ‖e‖²]] (e = exp(x)), so r is sampled exactly from that law
    without forming R.

    Parameters
    ----------
    x : ndarray of shape (n,)
        A row of A (or 0).
    ks : sequence of int
        Projection dimensions.
    trials : int
        Draws of R per k.
    delta : float
        The paper's δ (= 1/(2n)).
    seed : int

    Returns
    -------
    ndarray of shape (len(ks), trials)
    """
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x)
    en = float(np.linalg.norm(e))
    cov = np.array([[x @ x, x @ e], [x @ e, e @ e]])
    lam, U = np.linalg.eigh(cov)
    L = U * np.sqrt(np.clip(lam, 0.0, None))  # (2, 2): L Lᵀ = Σ (Σ may be singular: x = 0)
    rng = numpy_rng(seed)
    out = np.empty((len(ks), trials))
    for i, k in enumerate(ks):
        z = rng.standard_normal((trials, int(k), 2)) @ L.T / math.sqrt(k)  # (T, k, 2): rows of (Rx, Re)
        diff = math.exp(-delta) * np.exp(delta * z[:, :, 0]) - z[:, :, 1]
        out[i] = np.linalg.norm(diff, axis=1) / en
    return out


def step23_rows(
    x_by_name: dict[str, np.ndarray], ks: Sequence[int], trials: int, *, delta: float, eps: float, seed: int
) -> list[VerdictRow]:
    """``measured`` rows of claim ``linformer.thm2.step23``, one per (x, k): the mean ratio and its t-interval.

    Parameters
    ----------
    x_by_name : dict of str to ndarray of shape (n,)
        The vectors x (rows of A, or 0), by reading name.
    ks : sequence of int
        Projection dimensions.
    trials : int
        Draws of R per k (an interval needs 2).
    delta : float
        The paper's δ (= 1/(2n)).
    eps : float
        Distortion ε, recorded.
    seed : int
        Seed of the draws.

    Returns
    -------
    list of VerdictRow
    """
    n = len(next(iter(x_by_name.values())))
    out = []
    for name, x in x_by_name.items():
        r = step23_ratios(x, ks, trials, delta=delta, seed=seed)
        for i, k in enumerate(ks):
            ci = mean_ci(r[i]) if trials >= 2 else None
            values = {
                "mean": float(r[i].mean()), "low": r[i].min(), "high": r[i].max(), "trials": trials,
                "ci_low": ci.low if ci else None, "ci_high": ci.high if ci else None,
                "mean_square": (k * math.exp(-2 * delta) + n) / n,  # exact E[r²] at x = 0
            }  # fmt: skip
            out.append(Instance({"n": n, "k": int(k), "eps": eps}, values, seed, name))
    return instance_rows(STEP23, out)


# ----------------------------------------------------------------------------- tolerances


def zero_output_fractions(
    Q: np.ndarray, K: np.ndarray, V: np.ndarray, eps: float, block: int = 512
) -> dict[str, tuple[int, int]]:
    """How often the zero output meets the tolerances of eqs. (8) and (22) on one instance.

    Parameters
    ----------
    Q, K, V : ndarray of shape (n, d)
        A = QKᵀ/√d.
    eps : float
    block : int
        Rows of A formed at a time (memory).

    Returns
    -------
    dict
        ``eq8-spectral`` and ``eq8-frobenius``: (rows w of A where ‖softmax(w)V‖ <=
        ε‖softmax(w)‖‖V‖, n); ``eq22-pair``: ((row, column) pairs with |⟨exp(x), y⟩| <=
        ε‖exp(x)‖‖y‖, n·d).
    """
    n, d = Q.shape
    v2, vf = float(np.linalg.norm(V, 2)), float(np.linalg.norm(V))
    vcol = np.linalg.norm(V, axis=0)  # (d,)
    spec = frob = pairs = 0
    for s in range(0, n, block):
        A = Q[s : s + block] @ K.T / math.sqrt(d)  # (b, n)
        E = np.exp(A - A.max(1, keepdims=True))  # (b, n)
        # Every tolerance is invariant under a row scale, so softmax(w) = E/ΣE is not formed:
        # ‖softmax(w)V‖ <= ε‖softmax(w)‖‖V‖  ⟺  ‖EV‖ <= ε‖E‖‖V‖, row by row.
        EV = E @ V  # (b, d)
        en = np.linalg.norm(E, axis=1)  # (b,)
        out = np.linalg.norm(EV, axis=1)  # (b,)
        spec += int((out <= eps * en * v2).sum())
        frob += int((out <= eps * en * vf).sum())
        pairs += int((np.abs(EV) <= eps * en[:, None] * vcol).sum())
    return {"eq8-spectral": (spec, n), "eq8-frobenius": (frob, n), "eq22-pair": (pairs, n * d)}


def gaussian_v_fraction(n: int, d: int, eps: float, draws: int, *, seed: int) -> int:
    """How many of ``draws`` standard Gaussian V (n×d) have ‖V‖₂ <= ε‖V‖_F (then the zero
    output meets eq. (8)'s Frobenius tolerance at every row w).

    Only VᵀV matters (‖V‖₂² = λmax(VᵀV), ‖V‖_F² = tr(VᵀV)), a Wishart_d(n, I) matrix, drawn
    exactly by Bartlett's decomposition VᵀV = TTᵀ with T lower-triangular, T_ii² ~ χ²_{n−i+1}
    and T_ij ~ N(0, 1) below the diagonal: d(d+1)/2 draws instead of n·d (requires n >= d;
    else V is drawn in full).

    Parameters
    ----------
    n, d : int
        V's shape.
    eps : float
        Distortion ε.
    draws : int
        Draws of V.
    seed : int
        Seed of the draws.

    Returns
    -------
    int
        The count.
    """
    rng = numpy_rng(seed)
    if n < d:
        hits = 0
        for _ in range(draws):
            gram = (V := rng.standard_normal((n, d))).T @ V
            hits += int(
                math.sqrt(max(float(np.linalg.eigvalsh(gram)[-1]), 0.0)) <= eps * math.sqrt(float(np.trace(gram)))
            )
        return hits
    T = np.tril(rng.standard_normal((draws, d, d)), -1)  # (draws, d, d)
    diag = np.sqrt(rng.chisquare(n - np.arange(d), size=(draws, d)))  # T_ii² ~ χ²_{n−i+1}, i = 1..d
    T[:, np.arange(d), np.arange(d)] = diag
    gram = T @ np.swapaxes(T, 1, 2)  # (draws, d, d) = VᵀV in law
    tr = np.einsum("bii->b", gram)
    limit = eps * eps * tr  # hit iff λmax <= ε² tr
    # max diagonal <= λmax <= largest Gershgorin row sum: most draws are decided without an
    # eigenvalue problem; the rest get one
    low = np.einsum("bii->bi", gram).max(1)
    high = np.abs(gram).sum(2).max(1)
    hit = high <= limit
    unsure = np.flatnonzero(~hit & (low <= limit))
    if unsure.size:
        lmax = np.linalg.eigvalsh(gram[unsure])[:, -1]
        hit[unsure] = lmax <= limit[unsure]
    return int(hit.sum())


def tolerance_rows(
    Q: np.ndarray, K: np.ndarray, V: np.ndarray, eps: float, *, draws: int, seed: int, setup_seed: int
) -> list[VerdictRow]:
    """``measured`` rows of claim ``linformer.thm2.tolerance``: the fractions where zero meets each tolerance.

    Parameters
    ----------
    Q, K, V : ndarray of shape (n, d)
        The instance (A = QKᵀ/√d).
    eps : float
        Distortion ε.
    draws : int
        Draws of the Gaussian-V reading.
    seed : int
        Seed of those draws.
    setup_seed : int
        The seed of the instance, recorded on its rows.

    Returns
    -------
    list of VerdictRow
    """
    n, d = Q.shape
    counts = zero_output_fractions(Q, K, V, eps)
    counts["gaussian-v"] = (gaussian_v_fraction(n, d, eps, draws, seed=seed), draws)
    return instance_rows(
        TOLERANCE,
        [
            Instance(
                {"n": n, "d": d, "eps": eps},
                {"hits": hits, "total": total, "n": n, "d": d},
                seed if reading == "gaussian-v" else setup_seed,
                reading,
            )
            for reading, (hits, total) in counts.items()
        ],
    )


# ----------------------------------------------------------------------------- k formulas


def formula_rows(n: int, d: int, eps: float) -> list[VerdictRow]:
    """One row of claim ``linformer.thm2.k`` per formula: its k, its union bound, vacuous or measured.

    Parameters
    ----------
    n : int
        Sequence length.
    d : int
        Head dimension.
    eps : float
        Distortion ε.

    Returns
    -------
    list of VerdictRow
    """
    out = []
    for reading, f in theorem2_formulas(n, d, eps).items():
        where, formula, pairs_name, _ = THEOREM2_FORMULAS[reading]
        values = {"where": where, "formula": formula, "pairs_name": pairs_name, "pairs": int(f["pairs"]),
                  "k": f["k"], "bound": f["union_bound"], "n": n}  # fmt: skip
        out.append(Instance({"n": n, "d": d, "eps": eps, "k": int(math.ceil(f["k"]))}, values, reading=reading))
    return instance_rows(THM2_K, out)


# ----------------------------------------------------------------------------- (ε, k) grid


def eq8_grid(n: int, d: int, eps_values: Sequence[float] = SWEEP_EPS, points: int = 3) -> dict[float, list[int]]:
    """For each ε, up to ``points`` k < n (geometric from the smallest k whose union bound
    2nd·e^{−c(ε)k} is < 1, to n − 1); an empty list where no such k is below n.

    Parameters
    ----------
    n : int
        Sequence length.
    d : int
        Head dimension.
    eps_values : sequence of float
        The ε of the grid.
    points : int
        The most k per ε.

    Returns
    -------
    dict of float to list of int
    """
    check_n(n)
    out = {}
    for eps in eps_values:
        check_eps(eps)
        k0 = union_bound_min_k(n, eps, pairs=n * d)
        if k0 >= n:
            out[float(eps)] = []
            continue
        out[float(eps)] = sorted({int(round(k)) for k in np.geomspace(k0, n - 1, points)})
    return out


# ----------------------------------------------------------------------------- proof steps as written


def orientation_row(n: int, k: int, eps: float) -> VerdictRow:
    """Claim ``linformer.thm2.orientation`` (:data:`.claims.ORIENTATION`) at (n, k).

    Parameters
    ----------
    n : int
        Sequence length.
    k : int
        Projection dimension.
    eps : float
        Distortion ε, recorded.

    Returns
    -------
    VerdictRow
        ``violated`` unless k = n (then ``measured``).
    """
    return instance_rows(ORIENTATION, [Instance({"n": n, "k": k, "eps": eps}, {"n": n, "k": k, "square": n == k})])[0]


def proof_step_rows(
    Q: np.ndarray, K: np.ndarray, V: np.ndarray, eps: float, *, seed: int, size: int = 256
) -> list[VerdictRow]:
    """Claim ``linformer.thm2.proof`` (:data:`.claims.PROOF`, one row per reading): Theorem 2's
    proof steps that do not follow as written, each measured on the instance's first ``size``
    rows and columns (to keep the SVDs small).

    Parameters
    ----------
    Q, K, V : ndarray of shape (n, d)
        The instance (A = QKᵀ/√d).
    eps : float
        Distortion ε.
    seed : int
        Seed of the Gaussian matrix of the frobenius-rows reading (recorded on every row).
    size : int
        The block measured: the instance's first ``size`` rows and columns.

    Returns
    -------
    list of VerdictRow
    """
    n, d = Q.shape
    m = min(n, size)
    A = Q[:m] @ K[:m].T / math.sqrt(d)  # (m, m), rank <= d
    E = np.exp(A - A.max())  # entrywise exp, scaled (rank is scale-free)
    sv = np.linalg.svd(E, compute_uv=False)
    tol = sv[0] * m * np.finfo(float).eps
    rank = {"rank_exp": int((sv > tol).sum()), "rank_a": int(np.linalg.matrix_rank(A)), "tol": tol, "m": m, "d": d}
    # Γ with conformable shapes: exp(A)V = Γ exp(A_s)V, A_s = 2d rows of A (the first 2d of the block)
    EV = E @ V[:m]  # (m, d)
    G = EV @ np.linalg.pinv(EV[: 2 * d])  # (m, 2d)
    gamma = float(np.linalg.norm(G, axis=1).max())
    M = numpy_rng(seed).standard_normal((2 * d, d))
    fro, rowsum = float(np.linalg.norm(M)), float(np.linalg.norm(M, axis=1).sum())
    block, whole = {"n": m, "d": d, "eps": eps}, {"n": n, "d": d, "eps": eps}
    return instance_rows(
        PROOF,
        [
            Instance(block, rank, seed, "exp-low-rank"),
            Instance(whole, {"rows": 4 * d, "d": d}, reading="inverse-4d-by-d"),
            Instance(
                block,
                {"gamma": gamma, "gamma_per_d": gamma / d, "rows_s": 2 * d, "m": m, "d": d},
                seed,
                "gamma-theta-d",
            ),
            Instance(
                {"n": 2 * d, "d": d, "eps": eps},
                {
                    "fro": fro,
                    "rowsum": rowsum,
                    "gap": abs(rowsum - fro) / fro,
                    "ratio": rowsum / fro,
                    "rows_m": 2 * d,
                    "d": d,
                },
                seed,
                "frobenius-rows",
            ),
        ],
    )
