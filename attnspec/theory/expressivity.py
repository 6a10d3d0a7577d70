"""Sparse expressivity of self-attention (Likhosherstov, Choromanski & Weller 2021,
"On the expressive power of self-attention matrices", arXiv 2106.03764), as summarised in
``shared/papers/expressive-power-notes-fr.txt`` and issue 4.

The claim
---------
Unnormalised self-attention is ``SA[W_Q, W_K](X) = exp(X W_Q W_Kᵀ Xᵀ)`` (entrywise exp),
the normalised one ``SAN = diag(SA 1)⁻¹ SA``. The paper: with width ``d = O(k log L)`` a
*fixed* pair W_Q, W_K lets SA approximate every positive L×L matrix A with at most k
nonzeros per row. The notes' argument, checked step by step here:

1. **Reduction to logits.** Let ``m <= A_ij <= M`` on ``S = {A_ij > 0}``; fix ``eps > 0``;
   ``B_ij = log(A_ij / eps)`` on S, 0 off S. If ``||B − B̂||_∞ <= δ`` and
   ``Â = eps · exp(B̂)`` then on S ``|Â_ij − A_ij| <= M e^δ δ`` and off S "the error is
   eps" (notes, p. 2). The exact worst case on S is ``M (e^δ − 1)``; off S,
   ``Â_ij = eps e^{B̂_ij} ∈ [eps e^{-δ}, eps e^{δ}]``. Note that SA(X) itself approximates
   ``A / eps``; ``Â = eps · SA(X)`` (SAN is invariant to the factor).
2. **Construction.** ``B = B1 B2ᵀ`` (row sparsity: B1 = B, B2 = I_L; column: B1 = I_L,
   B2 = Bᵀ), ``R ∈ R^{d×L}``, ``B̂1 = B1 Rᵀ``, ``B̂2 = B2 Rᵀ``, ``X = (B̂1, B̂2)``
   (L × 2d), ``W_Q = I_{2d}``, ``W_K = [[0, 0], [I_d, 0]]``; then
   ``X W_Q W_Kᵀ Xᵀ = B̂1 B̂2ᵀ = B1 Rᵀ R B2ᵀ`` exactly. The model width is 2d.
3. **Dimension.** JL (Gaussian ``R = P / sqrt(d)``): ``P(|‖Ru‖² − ‖u‖²| >= ε‖u‖²) <=
   2 exp(−ε² d / 8)``; by polarisation and a union bound over the 2L² vectors
   ``u_i ± v_j`` (unit u_i, v_j), ``|⟨R b1_i, R b2_j⟩ − ⟨b1_i, b2_j⟩| <= ε ‖b1_i‖‖b2_j‖``
   for all i, j with probability >= ``1 − 4 L² exp(−ε² d / 8)``. With k nonzeros per row,
   ``‖b1_i‖ <= sqrt(k) max|B|`` and ``‖b2_j‖ = 1``, so ``||B − B̂||_∞ <= ε'`` needs
   ``ε = ε' / (sqrt(k) max|B|)``, i.e. ``d = 8 ln(4L²/β) k max|B|² / ε'²``. The notes
   write ``d = O(M² k log L / ε')``: one power of ε', and "M" for the sup of the
   coefficients (of A? of B?). Every reading is measured.
4. **Orthogonal variant.** ``R = sqrt(L/d) Qᵀ`` with Q (L×d) Haar orthonormal columns
   (QR of a Gaussian matrix); claimed failure bound ``2 (1 − 1/(L+2)) exp(−c ε² d)`` with
   an unspecified c. At d = L it is exact (``RᵀR = I``).

What is computed
----------------
One claim, three functions: :func:`bound_on_support`, :func:`bound_off_support`,
:func:`jl_failure_bound`, :func:`dimension_jl`, :func:`dimension_stated` are the
formulas; :func:`exact_on_support` is the exact worst case; :func:`simulate` /
:func:`sample_errors` are the Monte Carlo, vectorised over trials (batched matmuls;
Gaussian projections with d >= L are drawn through the Wishart law of ``RᵀR`` by
Bartlett's decomposition, orthogonal ones with d > L/2 through the complement
projection, so the cost never depends on d beyond L). :func:`asymptotic_errors` is the
``d → ∞`` law ``sqrt(d)(RᵀR − I) → Z`` (symmetric, N(0,1) off the diagonal, N(0,2) on it),
which gives the whole Gaussian success curve from one set of draws; it is validated
against the exact sampler (tests, and the ``method`` column of :func:`sweep`).
:func:`check` turns the measurements into verdict rows.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from attnspec.errors import InputError, check_range
from attnspec.stats import Seed, clopper_pearson, numpy_rng, spawn_seeds, torch_generator
from attnspec.verdicts import VerdictRow, classify_failure_probability

SUPPORTS: tuple[str, ...] = ("random", "banded", "both")
PROJECTIONS: tuple[str, ...] = ("gaussian", "orthogonal")
FACTORIZATIONS: tuple[str, ...] = ("row", "column")
METHODS: tuple[str, ...] = ("exact", "asymptotic")

#: Per-trial statistics returned by :func:`sample_errors` (columns of its frame).
TRIAL_COLUMNS: tuple[str, ...] = (
    "err_inf",  # ||B − B̂||_∞
    "err_on",  # max over S of |B − B̂|
    "err_off",  # max over the complement of S of |B − B̂|
    "jl_ratio",  # max_ij |E_ij| / (||b1_i|| ||b2_j||): the JL ε this draw achieves
    "on_abs",  # max over S of |Â − A|
    "on_rel",  # max over S of |Â − A| / A
    "off_max",  # max over the complement of S of Â (Â = eps exp(B̂))
    "off_min",  # min over the complement of S of Â
    "off_argmax",  # flat index i*L + j of that max
    "san_off_mass",  # max over rows of the SAN mass outside S
)


# --------------------------------------------------------------------------------------
# validation helpers


def _check_int(name: str, value: int, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InputError(f"{name} must be an integer, got {value!r}")
    if value < low or (high is not None and value > high):
        hi = "inf" if high is None else str(high)
        raise InputError(f"{name} must be in [{low}, {hi}], got {value}")
    return int(value)


def _check_choice(name: str, value: str, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise InputError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    return value


def check_params(*, L: int, k: int, m: float, M: float, eps: float, delta: float | None = None,
                 beta: float | None = None) -> None:
    """Validate the problem parameters; raise :class:`InputError` naming the bad value."""
    _check_int("L", L, 1)
    _check_int("k", k, 1)
    if k > L:
        raise InputError(f"k must be in [1, L={L}], got k={k}")
    check_range("m", m, low=0, low_open=True)
    check_range("M", M, low=0, low_open=True)
    if m > M:
        raise InputError(f"m must be <= M, got m={m} > M={M}")
    check_range("eps", eps, low=0, low_open=True)
    if delta is not None:
        check_range("delta", delta, low=0, low_open=True)
    if beta is not None:
        check_range("beta", beta, low=0, high=1, low_open=True, high_open=True)


# --------------------------------------------------------------------------------------
# 1. test matrices


def sparse_target(L: int, k: int, *, m: float = 0.1, M: float = 1.0, support: str = "random",
                  seed: Seed = 0) -> np.ndarray:
    """A positive L×L matrix with exactly k nonzeros per row, entries uniform in [m, M].

    Parameters
    ----------
    L, k : int
        Size and nonzeros per row, ``1 <= k <= L``.
    m, M : float
        ``0 < m <= M``; the nonzero entries are uniform on [m, M].
    support : {"random", "banded", "both"}
        ``random``: each row's k columns uniform without replacement. ``banded``: the
        cyclic band ``j = i − ⌊k/2⌋, ..., i − ⌊k/2⌋ + k − 1 (mod L)`` (local attention).
        ``both``: exactly k nonzeros in every row *and* every column (cyclic band of a
        random permutation of columns, rows permuted too).
    seed : int or generator

    Returns
    -------
    A : ndarray of shape (L, L), float64
    """
    check_params(L=L, k=k, m=m, M=M, eps=1.0)
    _check_choice("support", support, SUPPORTS)
    rng = numpy_rng(seed)
    rows = np.arange(L)[:, None]
    if support == "random":
        if k == L:
            idx = np.tile(np.arange(L), (L, 1))
        else:
            keys = rng.random((L, L), dtype=np.float32)
            idx = np.argpartition(keys, k - 1, axis=1)[:, :k]  # (L, k)
    else:
        offsets = np.arange(k) - k // 2
        idx = (rows + offsets[None, :]) % L  # (L, k) cyclic band
        if support == "both":
            col_perm = rng.permutation(L)
            row_perm = rng.permutation(L)
            idx = col_perm[idx][row_perm]
    A = np.zeros((L, L))
    A[rows, idx] = rng.uniform(m, M, size=(L, k))
    return A


def log_targets(A: np.ndarray, eps: float) -> np.ndarray:
    """``B = log(A / eps)`` on the support of A, 0 elsewhere. A: (L, L) nonnegative."""
    A = _check_matrix(A)
    check_range("eps", eps, low=0, low_open=True)
    B = np.zeros_like(A)
    S = A > 0
    B[S] = np.log(A[S] / eps)
    return B


def _check_matrix(A: np.ndarray) -> np.ndarray:
    A = np.asarray(A, dtype=np.float64)
    if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] < 1:
        raise InputError(f"A must be a square L×L matrix, got shape {A.shape}")
    if not np.all(np.isfinite(A)):
        raise InputError("A must be finite, got NaN or infinity")
    if np.any(A < 0):
        raise InputError(f"A must be nonnegative, got min entry {A.min():.4g}")
    return A


def factorize(B: np.ndarray, factorization: str = "row") -> tuple[np.ndarray, np.ndarray]:
    """``B = B1 B2ᵀ``: row sparsity (B1 = B, B2 = I) or column sparsity (B1 = I, B2 = Bᵀ)."""
    _check_choice("factorization", factorization, FACTORIZATIONS)
    eye = np.eye(B.shape[0])
    return (B, eye) if factorization == "row" else (eye, B.T.copy())


# --------------------------------------------------------------------------------------
# 2. construction


def projection_matrix(d: int, L: int, projection: str = "gaussian", *, seed: Seed = 0,
                      dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """R ∈ R^{d×L} with E[RᵀR] = I_L.

    ``gaussian``: i.i.d. N(0, 1/d). ``orthogonal``: ``sqrt(L/d) Qᵀ`` with Q (L×d) the Q
    factor of a Gaussian matrix, sign-fixed so that Q is Haar; needs d <= L.
    """
    _check_int("d", d, 1)
    _check_int("L", L, 1)
    _check_choice("projection", projection, PROJECTIONS)
    g = torch_generator(seed)
    if projection == "gaussian":
        return torch.randn(d, L, generator=g, dtype=dtype) / math.sqrt(d)
    if d > L:
        raise InputError(f"d must be in [1, L={L}] for orthogonal projections, got d={d}")
    G = torch.randn(L, d, generator=g, dtype=dtype)
    Q, Rq = torch.linalg.qr(G)  # Q: (L, d)
    Q = Q * torch.sign(torch.diagonal(Rq)).unsqueeze(0)  # Haar sign fix
    return math.sqrt(L / d) * Q.T


@dataclass
class Construction:
    """The output of :func:`construct`; arrays are float64 torch tensors."""

    X: torch.Tensor  # (L, 2d)
    W_Q: torch.Tensor  # (2d, 2d)
    W_K: torch.Tensor  # (2d, 2d)
    R: torch.Tensor  # (d, L)
    B: torch.Tensor  # (L, L) target logits
    B1: torch.Tensor  # (L, L)
    B2: torch.Tensor  # (L, L)
    eps: float
    d: int

    def logits(self) -> torch.Tensor:
        """B̂ = X W_Q W_Kᵀ Xᵀ = (X W_Q)(X W_K)ᵀ, shape (L, L)."""
        return _matmul(self.X, self.W_Q) @ _matmul(self.X, self.W_K).T

    def approximation(self) -> torch.Tensor:
        """Â = eps · SA(X), shape (L, L)."""
        return self.eps * sa(self.X, self.W_Q, self.W_K)


def _weights(d: int, sparse: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """W_Q = I_{2d}, W_K = [[0, 0], [I_d, 0]] (dense, or sparse COO for large d)."""
    if sparse:
        i = torch.arange(d)
        W_Q = torch.sparse_coo_tensor(torch.stack([torch.arange(2 * d)] * 2), torch.ones(2 * d, dtype=torch.float64),
                                      (2 * d, 2 * d), check_invariants=True).coalesce()
        W_K = torch.sparse_coo_tensor(torch.stack([i + d, i]), torch.ones(d, dtype=torch.float64),
                                      (2 * d, 2 * d), check_invariants=True).coalesce()
        return W_Q, W_K
    W_Q = torch.eye(2 * d, dtype=torch.float64)
    W_K = torch.zeros(2 * d, 2 * d, dtype=torch.float64)
    W_K[d:, :d] = torch.eye(d, dtype=torch.float64)  # [[0, 0], [I_d, 0]]
    return W_Q, W_K


def _matmul(X: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    """X @ W for a dense or sparse (COO) W."""
    if W.is_sparse:
        return torch.sparse.mm(W.t().coalesce(), X.T).T
    return X @ W


def construct(A: np.ndarray, d: int, eps: float, *, projection: str = "gaussian",
              factorization: str = "row", seed: Seed = 0, sparse_weights: bool | None = None) -> Construction:
    """The notes' construction: X = (B1 Rᵀ, B2 Rᵀ), W_Q = I_{2d}, W_K = [[0, 0], [I_d, 0]].

    Parameters
    ----------
    A : array of shape (L, L), nonnegative
    d : int >= 1
        Projection dimension (the model width is 2d). Orthogonal projections need d <= L.
    eps : float > 0
    projection : {"gaussian", "orthogonal"}
    factorization : {"row", "column"}
    seed : int or generator
    sparse_weights : bool or None
        Store W_Q, W_K as sparse COO tensors (4d² dense numbers are too many for large d);
        default: sparse when 2d > 2048.

    Returns
    -------
    Construction with X (L, 2d), W_Q (2d, 2d), W_K (2d, 2d), R (d, L), B, B1, B2 (L, L).
    """
    A = _check_matrix(A)
    _check_int("d", d, 1)
    check_range("eps", eps, low=0, low_open=True)
    B = torch.from_numpy(log_targets(A, eps))
    B1, B2 = (torch.from_numpy(x) for x in factorize(B.numpy(), factorization))
    L = A.shape[0]
    R = projection_matrix(d, L, projection, seed=seed)
    X = torch.cat([B1 @ R.T, B2 @ R.T], dim=1)  # (L, 2d)
    W_Q, W_K = _weights(d, 2 * d > 2048 if sparse_weights is None else bool(sparse_weights))
    return Construction(X=X, W_Q=W_Q, W_K=W_K, R=R, B=B, B1=B1, B2=B2, eps=float(eps), d=d)


def exact_construction(A: np.ndarray, eps: float) -> Construction:
    """The d = L choice ``X = (B, I)`` (R = I_L): ``X W_Q W_Kᵀ Xᵀ = B`` exactly."""
    A = _check_matrix(A)
    L = A.shape[0]
    B = torch.from_numpy(log_targets(A, eps))
    eye = torch.eye(L, dtype=torch.float64)
    W_K = torch.zeros(2 * L, 2 * L, dtype=torch.float64)
    W_K[L:, :L] = eye
    return Construction(X=torch.cat([B, eye], dim=1), W_Q=torch.eye(2 * L, dtype=torch.float64),
                        W_K=W_K, R=eye, B=B, B1=B, B2=eye, eps=float(eps), d=L)


def sa(X: torch.Tensor, W_Q: torch.Tensor, W_K: torch.Tensor) -> torch.Tensor:
    """Unnormalised self-attention exp(X W_Q W_Kᵀ Xᵀ); X (L, D), W_Q, W_K (D, D) → (L, L).
    W_Q, W_K may be dense or sparse COO."""
    return torch.exp(_matmul(X, W_Q) @ _matmul(X, W_K).T)


def san(X: torch.Tensor, W_Q: torch.Tensor, W_K: torch.Tensor) -> torch.Tensor:
    """Row-normalised self-attention diag(SA 1)⁻¹ SA (a row softmax, computed stably)."""
    return torch.softmax(_matmul(X, W_Q) @ _matmul(X, W_K).T, dim=-1)


# --------------------------------------------------------------------------------------
# 3. formulas (the paper's bounds) and exact worst cases


def bound_on_support(M: float, delta: float) -> float:
    """The notes' bound on S: ``|Â_ij − A_ij| <= M e^δ δ`` whenever ||B − B̂||_∞ <= δ."""
    return float(M * math.exp(delta) * delta)


def exact_on_support(M: float, delta: float) -> float:
    """The exact worst case on S: ``max |Â − A| = M (e^δ − 1)`` (A_ij = M, B̂_ij = B_ij + δ)."""
    return float(M * math.expm1(delta))


def bound_off_support(eps: float, delta: float) -> tuple[float, float]:
    """Off S, ``Â_ij = eps e^{B̂_ij}`` with |B̂_ij| <= δ: the range [eps e^{-δ}, eps e^{δ}]."""
    return float(eps * math.exp(-delta)), float(eps * math.exp(delta))


def bound_san_off_mass(L: int, k: int, m: float, eps: float, delta: float) -> float:
    """Largest SAN mass outside S in a row when ||B − B̂||_∞ <= δ (k nonzeros >= m per row)."""
    off = (L - k) * eps * math.exp(delta)
    return float(off / (off + k * m * math.exp(-delta))) if L > k else 0.0


def jl_failure_bound(L: int, d: int, eps_jl: float) -> float:
    """Gaussian JL bound on P(∃ i, j: |⟨Rb1_i, Rb2_j⟩ − ⟨b1_i, b2_j⟩| > ε‖b1_i‖‖b2_j‖).

    ``2 n exp(−ε² d / 8)`` with n = 2L² vectors u_i ± v_j (notes' lemma + polarisation +
    union bound), capped at 1.
    """
    return float(min(1.0, 4.0 * L * L * math.exp(-eps_jl * eps_jl * d / 8.0)))


def orthogonal_failure_bound(L: int, d: int, eps_jl: float, c: float) -> float:
    """The orthogonal variant's bound ``2 (1 − 1/(L+2)) exp(−c ε² d)`` (c unspecified)."""
    return float(2.0 * (1.0 - 1.0 / (L + 2)) * math.exp(-c * eps_jl * eps_jl * d))


def exact_jl_deviation(L: int, d: int, eps_jl: float, projection: str = "gaussian") -> float:
    """Exact P(|‖Ru‖² − ‖u‖²| >= ε‖u‖²) for one fixed u ∈ R^L (the notes' lemma).

    Gaussian R = P/sqrt(d): ‖Ru‖²/‖u‖² ~ χ²_d / d. Orthogonal R = sqrt(L/d) Qᵀ (Q Haar,
    L×d): ‖Ru‖²/‖u‖² = (L/d) X with X ~ Beta(d/2, (L − d)/2) (X = 1 at d = L).
    """
    from scipy import stats as sps

    _check_int("d", d, 1)
    check_range("eps_jl", eps_jl, low=0, low_open=True)
    if projection == "gaussian":
        return float(sps.chi2.cdf(d * (1 - eps_jl), d) + sps.chi2.sf(d * (1 + eps_jl), d))
    _check_choice("projection", projection, PROJECTIONS)
    if d > L:
        raise InputError(f"d must be in [1, L={L}] for orthogonal projections, got d={d}")
    if d == L:
        return 0.0
    law = sps.beta(d / 2, (L - d) / 2)
    return float(law.cdf(d * (1 - eps_jl) / L) + law.sf(d * (1 + eps_jl) / L))


def check_jl_lemma(L: int, eps_jl: float = 0.1) -> list[VerdictRow]:
    """The single-vector JL lemma of the notes against its exact law, for d = 1..L:
    Gaussian ``2 exp(−ε²d/8)``, and the orthogonal variant ``2 (1 − 1/(L+2)) exp(−c ε² d)``
    read with the Gaussian constant c = 1/8, reporting the largest c that holds at every d."""
    ds = np.unique(np.geomspace(1, L, min(L, 200)).astype(int))
    pg = np.array([exact_jl_deviation(L, int(d), eps_jl, "gaussian") for d in ds])
    po = np.array([exact_jl_deviation(L, int(d), eps_jl, "orthogonal") for d in ds])
    bg = np.minimum(1.0, 2 * np.exp(-eps_jl**2 * ds / 8))
    P = {"L": L, "eps": None, "eps_jl": eps_jl, "varied": f"JL ε = {eps_jl:g}, d = 1..{L}"}
    out = []
    worst = int(np.argmax(pg / bg))
    useful = bg < 1
    ratio = float(np.min(bg[useful] / np.maximum(pg[useful], 1e-300))) if useful.any() else math.inf
    out.append(VerdictRow(
        "JL lemma (Gaussian): P(|‖Ru‖²−‖u‖²| >= ε‖u‖²) <= 2 exp(−ε²d/8), exact χ² law, d = 1..L",
        "violated" if (pg > bg * (1 + 1e-12)).any() else ("vacuous" if not useful.any() else
                                                          ("loose" if ratio > 10 else "holds")),
        {**P, "d": int(ds[worst])}, bound=float(bg[worst]), exact=float(pg[worst]),
        evidence=(f"bound < 1 only from d = {int(ds[useful][0])}" if useful.any() else
                  f"2 exp(−ε²d/8) >= 1 for every d <= L = {L}: the lemma says nothing here")
        + (f"; where it says something it exceeds the exact probability by >= {ratio:.3g}×" if useful.any() else "")))
    cst = 2 * (1 - 1 / (L + 2))
    pos = po > 0
    with np.errstate(divide="ignore"):
        cmax = float(np.min(np.log(cst / po[pos]) / (eps_jl**2 * ds[pos]))) if pos.any() else math.inf
    bo = np.minimum(1.0, cst * np.exp(-eps_jl**2 * ds / 8))
    w = int(np.argmax(po / bo))
    out.append(VerdictRow(
        "JL, orthogonal R: P(deviation) <= 2(1−1/(L+2)) exp(−c ε² d) with c = 1/8, exact Beta law, d = 1..L",
        "violated" if (po > bo * (1 + 1e-12)).any() else ("vacuous" if (bo >= 1).all() else "holds"),
        {**P, "d": int(ds[w])}, bound=float(bo[w]), exact=float(po[w]),
        evidence=f"largest c for which the bound holds at every d <= L: {cmax:.4g} (c is unspecified in the notes); "
                 f"orthogonal <= Gaussian exact probability at {int(np.sum(po <= pg + 1e-15))}/{len(ds)} d"))
    return out


def dimension_jl(L: int, eps_jl: float, beta: float) -> int:
    """Smallest d with ``4 L² exp(−ε² d / 8) <= β``: ``⌈8 ln(4 L² / β) / ε²⌉``."""
    return int(math.ceil(8.0 * math.log(4.0 * L * L / beta) / (eps_jl * eps_jl)))


def dimension_stated(L: int, k: int, M: float, delta: float, C: float = 1.0) -> float:
    """The notes' ``d = C M² k log L / ε'`` (ε' = δ; C the unknown constant)."""
    return float(C * M * M * k * math.log(L) / delta)


def eps_jl_needed(B: np.ndarray, delta: float, factorization: str = "row") -> float:
    """The JL ε that guarantees ||B − B̂||_∞ <= δ: ``δ / (max_i ‖b1_i‖ max_j ‖b2_j‖)``."""
    B1, B2 = factorize(B, factorization)
    n1 = np.linalg.norm(B1, axis=1).max()
    n2 = np.linalg.norm(B2, axis=1).max()
    return float(delta / (n1 * n2))


# --------------------------------------------------------------------------------------
# 4. Monte Carlo


def _sparse_left(Bs: torch.Tensor, M: torch.Tensor) -> torch.Tensor:
    """``B @ M[i]`` for each i, B a sparse CSR (L, L) matrix, M (t, L, n) → (t, L, n)."""
    return torch.stack([Bs @ M[i] for i in range(M.shape[0])])


def _project_batch(B: torch.Tensor, t: int, d: int, projection: str, g: torch.Generator,
                   rng: np.random.Generator, dtype: torch.dtype, direct: bool = False,
                   Bs: torch.Tensor | None = None) -> torch.Tensor:
    """Draw t projections R (d×L) and return ``B RᵀR``, shape (t, L, L), batched.

    ``Bs`` is B as a sparse CSR tensor (k nonzeros per row): products ``B @ M`` then cost
    O(k L n) instead of O(L² n); the remaining dense product is one batched matmul.
    """
    L = B.shape[-1]

    def left(M: torch.Tensor) -> torch.Tensor:  # B @ M, M (t, L, n)
        return B @ M if Bs is None else _sparse_left(Bs, M)

    def randn(*shape: int) -> torch.Tensor:
        # always drawn in float64, so float32 and float64 runs see the same numbers
        return torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)

    if projection == "gaussian":
        if d < L or direct:
            R = randn(t, d, L) / math.sqrt(d)  # (t, d, L)
            return left(R.mT.contiguous()) @ R  # (t, L, d) @ (t, d, L) -> (t, L, L)
        # d >= L: RᵀR ~ Wishart_L(d, I) / d; Bartlett: W = T Tᵀ with T lower triangular,
        # T_ii = sqrt(χ²_{d−i}) (i = 0..L−1), N(0, 1) below the diagonal.
        T = randn(t, L, L).tril_(-1)  # (t, L, L)
        chi = np.sqrt(rng.chisquare(d - np.arange(L), size=(t, L)))  # (t, L)
        T.diagonal(dim1=-2, dim2=-1).copy_(torch.from_numpy(chi).to(dtype))
        T *= 1.0 / math.sqrt(d)
        return left(T) @ T.mT  # (B T) Tᵀ, (t, L, L)
    # orthogonal: RᵀR = (L/d) P, P the projection on a uniform d-dim subspace (span of a
    # Gaussian L×d matrix); for d > L/2 draw the complement: P = I − Qc Qcᵀ.
    if d > L:
        raise InputError(f"d must be in [1, L={L}] for orthogonal projections, got d={d}")
    if d == L:
        return B.expand(t, L, L).clone()
    complement = L - d < d
    r = L - d if complement else d
    Q = torch.linalg.qr(randn(t, L, r)).Q  # (t, L, r)
    low = left(Q) @ Q.mT  # (t, L, L) = B Q Qᵀ
    return (L / d) * (B - low) if complement else (L / d) * low


def _trial_stats(E: torch.Tensor, A: torch.Tensor, S: torch.Tensor, idx: torch.Tensor, eps: float,
                 n1: torch.Tensor, n2: torch.Tensor) -> dict[str, np.ndarray]:
    """Per-trial statistics of E = B̂ − B, shape (t, L, L); E is overwritten.

    ``idx`` (L, kmax) lists each row's support (padded by repeating an entry), so the
    on-support statistics are computed on (t, L, kmax) gathers; a handful of full passes
    remain (|E|, masked maxima, exp).
    """
    t, L, _ = E.shape
    rows = torch.arange(L)[:, None]
    E_on = E[:, rows, idx]  # (t, L, kmax)
    A_on = A[rows, idx]  # (L, kmax)
    exp_on = torch.exp(E_on)
    on_dev = (A_on * (exp_on - 1.0)).abs()
    on_rel = (exp_on - 1.0).abs()
    has_off = bool((~S).any())
    nan = np.full(t, np.nan)
    # off-support extremes of E (S masked out), then |E|
    Emask = E.masked_fill(S, -math.inf)
    off_max_E, off_arg = Emask.flatten(1).max(1)
    off_min_E = E.masked_fill(S, math.inf).flatten(1).amin(1)
    absE = E.abs_()  # (t, L, L), in place
    rowmax = absE.amax(-1)  # (t, L)
    if bool(torch.all(n2 == 1)):
        jl = (rowmax / n1).amax(-1)
    elif bool(torch.all(n1 == 1)):
        jl = (absE.amax(-2) / n2).amax(-1)
    else:
        jl = (absE / (n1[:, None] * n2[None, :])).flatten(1).amax(1)
    err_off = absE.masked_fill_(S, 0.0).flatten(1).amax(1) if has_off else None
    # SAN mass off S: sum_{j∉S} eps e^{E_ij} / (that + sum_{j∈S} A_ij e^{E_ij})
    off_sum = torch.exp(Emask).sum(-1) * eps  # exp(-inf) = 0 on S
    on_sum = (A_on * exp_on * _first_mask(idx)).sum(-1)  # (t, L), padding counted once
    mass = off_sum / (off_sum + on_sum)

    def np_(x: torch.Tensor) -> np.ndarray:
        return x.double().numpy()

    return {
        "err_inf": np_(rowmax.amax(-1)),
        "err_on": np_(E_on.abs().flatten(1).amax(1)),
        "err_off": np_(err_off) if has_off else nan,
        "jl_ratio": np_(jl),
        "on_abs": np_(on_dev.flatten(1).amax(1)),
        "on_rel": np_(on_rel.flatten(1).amax(1)),
        "off_max": np_(eps * torch.exp(off_max_E)) if has_off else nan,
        "off_min": np_(eps * torch.exp(off_min_E)) if has_off else nan,
        "off_argmax": off_arg.numpy().astype(np.int64) if has_off else np.full(t, -1),
        "san_off_mass": np_(mass.amax(-1)),
    }


def _support_index(A: np.ndarray) -> torch.Tensor:
    """(L, kmax) column indices of each row's nonzeros, padded by repeating the first one."""
    S = A > 0
    kmax = max(1, int(S.sum(1).max()))
    order = np.argsort(~S, axis=1, kind="stable")[:, :kmax]  # nonzeros first
    nz = S.sum(1)
    pad = np.arange(kmax)[None, :] >= nz[:, None]
    order = np.where(pad, order[:, :1], order)
    return torch.from_numpy(order.astype(np.int64))


def _first_mask(idx: torch.Tensor) -> torch.Tensor:
    """1 where an index appears for the first time in its row (padding repeats count 0)."""
    first = torch.ones_like(idx, dtype=torch.bool)
    first[:, 1:] = idx[:, 1:] != idx[:, :1]
    return first.to(torch.get_default_dtype())


def _csr(B: torch.Tensor) -> torch.Tensor:
    import warnings

    with warnings.catch_warnings():  # "sparse CSR support is in beta"
        warnings.simplefilter("ignore", UserWarning)
        return B.to_sparse_csr()


def sample_errors(A: np.ndarray, d: int, *, eps: float, trials: int, projection: str = "gaussian",
                  factorization: str = "row", seed: Seed = 0,
                  dtype: torch.dtype = torch.float32, direct: bool = False,
                  only_max: bool = False) -> pd.DataFrame:
    """Exact Monte Carlo of the construction: one row per trial with :data:`TRIAL_COLUMNS`.

    Each trial draws R (d×L) and measures E = B̂ − B (B̂ = B1 RᵀR B2ᵀ) and Â = eps exp(B̂),
    without forming X: only ``RᵀR`` matters. Trials are batched; Gaussian R with d >= L is
    drawn through the Wishart law of RᵀR (Bartlett), orthogonal R with d > L/2 through
    the complement subspace, so one trial costs O(L² min(d, L)).

    Parameters
    ----------
    A : array (L, L), nonnegative
    d : int >= 1 (<= L for orthogonal)
    eps : float > 0
    trials : int >= 1
    projection, factorization : see :func:`construct`
    seed : int or generator; the same seed gives the same draws for every d.
    dtype : torch dtype of the batched products (float32 by default). The normals are
        drawn in float64 either way, so both dtypes see the same draws; the statistics
        agree to ~1e-5 relative (see the tests).
    direct : bool
        Draw R itself even when d >= L (the reference the Wishart shortcut is tested
        against; costs O(d L²) per trial).
    only_max : bool
        Measure only ``err_inf`` (what a search for d* needs; one pass instead of ~8).

    Returns
    -------
    DataFrame with columns ``trial`` and :data:`TRIAL_COLUMNS`, ``trials`` rows.
    """
    A = _check_matrix(A)
    L = A.shape[0]
    _check_int("d", d, 1, L if projection == "orthogonal" else None)
    _check_int("trials", trials, 1)
    _check_choice("projection", projection, PROJECTIONS)
    _check_choice("factorization", factorization, FACTORIZATIONS)
    check_range("eps", eps, low=0, low_open=True)
    Bn = log_targets(A, eps)
    B1, B2 = factorize(Bn, factorization)
    n1 = torch.from_numpy(np.linalg.norm(B1, axis=1)).to(dtype)
    n2 = torch.from_numpy(np.linalg.norm(B2, axis=1)).to(dtype)
    # row: B̂ = B RᵀR; column: B̂ = RᵀR B = (Bᵀ RᵀR)ᵀ (RᵀR is symmetric)
    B = torch.from_numpy(Bn).to(dtype)
    Bl = B if factorization == "row" else B.T.contiguous()
    sparse = L >= 128 and float((Bl != 0).float().mean()) < 0.25
    Bs = _csr(Bl) if sparse else None
    At = torch.from_numpy(A).to(dtype)
    S = At > 0
    idx = _support_index(A)
    g = torch_generator(seed)
    rng = numpy_rng(int(torch.randint(0, 2**62, (1,), generator=g)))
    elem = torch.finfo(dtype).bits // 8
    per = max(1, (192 * 2**20) // (5 * L * max(L, d if direct else min(d, L)) * elem))
    parts = []
    done = 0
    while done < trials:
        t = min(per, trials - done)
        Bh = _project_batch(Bl, t, d, projection, g, rng, dtype, direct, Bs)
        if factorization == "column":
            Bh = Bh.mT.contiguous()
        E = Bh.sub_(B)  # (t, L, L), in place
        if only_max:
            parts.append({"err_inf": E.abs_().flatten(1).amax(1).double().numpy()})
        else:
            parts.append(_trial_stats(E, At, S, idx, eps, n1, n2))
        done += t
    cols = ("err_inf",) if only_max else TRIAL_COLUMNS
    out = {c: np.concatenate([p[c] for p in parts]) for c in cols}
    return pd.DataFrame({"trial": np.arange(trials), **out})


def measures(A: np.ndarray, B_hat: torch.Tensor | np.ndarray, eps: float) -> dict[str, float]:
    """The error measures of one approximation B̂ (L, L) of B = log(A/eps): the
    :data:`TRIAL_COLUMNS` for a single draw (row factorization norms for ``jl_ratio``)."""
    A = _check_matrix(A)
    Bn = log_targets(A, eps)
    Bh = torch.as_tensor(np.asarray(B_hat, dtype=np.float64))
    E = (Bh - torch.from_numpy(Bn)).unsqueeze(0)  # (1, L, L)
    n1 = torch.from_numpy(np.linalg.norm(Bn, axis=1))
    n2 = torch.ones(A.shape[0], dtype=torch.float64)
    st = _trial_stats(E, torch.from_numpy(A), torch.from_numpy(A > 0), _support_index(A), eps, n1, n2)
    return {c: float(v[0]) for c, v in st.items()}


def asymptotic_errors(A: np.ndarray, *, eps: float, trials: int, factorization: str = "row",
                      seed: Seed = 0, dtype: torch.dtype = torch.float32) -> np.ndarray:
    """The d → ∞ law of Gaussian projections: ``sqrt(d) ||B − B̂||_∞ → max |B Z|`` (row) or
    ``max |Z B|`` (column), Z symmetric with N(0, 1) off and N(0, 2) on the diagonal.

    Returns the ``trials`` draws of ``Λ = max|BZ|``; ``P(||B − B̂||_∞ <= δ) ≈ P(Λ <= δ sqrt(d))``.
    Cost per draw O(L²) plus a sparse product with B (k nonzeros per row).
    """
    A = _check_matrix(A)
    L = A.shape[0]
    _check_int("trials", trials, 1)
    _check_choice("factorization", factorization, FACTORIZATIONS)
    Bn = log_targets(A, eps)
    B = torch.from_numpy(Bn if factorization == "row" else Bn.T.copy()).to(dtype)
    Bs = _csr(B) if L >= 256 else B
    g = torch_generator(seed)
    out = np.empty(trials)
    for t in range(trials):  # each draw is one O(L²) sparse product; batching adds nothing
        N = torch.randn(L, L, generator=g, dtype=dtype)
        Z = (N + N.T) * (1.0 / math.sqrt(2.0))  # (L, L) symmetric, var 1 off / 2 on diagonal
        # column factorization: Z B = (Bᵀ Z)ᵀ, same max
        out[t] = float((Bs @ Z).abs().amax())
    return out


def success_ci(errors: np.ndarray, delta: float, level: float = 0.95) -> tuple[int, int, float, float, float]:
    """(successes, trials, estimate, low, high) of P(error <= delta) from per-trial errors."""
    n = int(errors.size)
    s = int(np.sum(errors <= delta))
    ci = clopper_pearson(s, n, level)
    return s, n, ci.estimate, ci.low, ci.high


def asymptotic_d_star(lam: np.ndarray, delta: float, beta: float, level: float = 0.95) -> tuple[int, float, float]:
    """d* = min{d : P̂(Λ <= δ sqrt(d)) >= 1 − β} from the asymptotic draws, with a
    distribution-free order-statistic interval for the (1 − β)-quantile of Λ. Returns
    (d*, low, high); an end is 0 or inf when too few draws bound it (e.g. high = inf for
    20 draws and β = 0.1: the sample maximum exceeds the 0.9-quantile with probability
    only 1 − 0.9²⁰ = 0.88)."""
    from scipy import stats as sps

    x = np.sort(np.asarray(lam, dtype=float))
    n = x.size
    r = int(math.ceil((1.0 - beta) * n))  # the r-th order statistic (1-based)
    d = int(math.ceil((x[r - 1] / delta) ** 2))
    a = (1 - level) / 2
    lo_i = int(sps.binom.ppf(a, n, 1 - beta))  # P(Bin >= lo_i) >= 1 − a: X_(lo_i) <= q
    hi_i = int(sps.binom.ppf(1 - a, n, 1 - beta)) + 1  # P(Bin <= hi_i − 1) >= 1 − a: X_(hi_i) >= q
    low = float(math.ceil((x[lo_i - 1] / delta) ** 2)) if lo_i >= 1 else 0.0
    high = float(math.ceil((x[hi_i - 1] / delta) ** 2)) if hi_i <= n else math.inf
    return d, low, high


@dataclass
class DStar:
    """Result of :func:`find_d_star`: the minimal d with success >= 1 − β on the grid."""

    d_star: int
    success: float  # estimated success probability at d_star
    evaluations: list[tuple[int, float]]  # (d, success) in the order evaluated
    frame: pd.DataFrame | None = None  # the per-trial measures at d_star (None if exact, d = L)
    d_low: int = 0  # the largest evaluated d below d_star that failed (0 if none): d* ∈ (d_low, d_star]


def find_d_star(A: np.ndarray, *, eps: float, delta: float, beta: float, trials: int,
                projection: str = "gaussian", factorization: str = "row", seed: Seed = 0,
                d_hint: int | None = None, rel: float = 2 ** 0.125,
                dtype: torch.dtype = torch.float32, full_stats: bool = False) -> DStar:
    """Minimal d with P̂(||B − B̂||_∞ <= δ) >= 1 − β, by galloping then bisection.

    The same seed is used at every d (common random numbers). The search assumes the
    success probability increases with d. Gaussian: gallop from ``d_hint`` (default L) by
    factors of 2 (2^¼ when a hint is given) until the bracket [lo, hi] has a failure at
    lo and a success at hi, then bisect geometrically until ``hi <= rel·lo``; d* = hi.
    Orthogonal: d = L is exact, so the search runs on the complement s = L − d (1, 2, 4,
    ... then bisection), each trial costing O(L² min(d, L − d)). With ``full_stats`` every
    measure of :func:`sample_errors` is kept for d* (``DStar.frame``), otherwise only
    ``err_inf`` is measured.
    """
    A = _check_matrix(A)
    L = A.shape[0]
    check_range("beta", beta, low=0, high=1, low_open=True, high_open=True)
    check_range("delta", delta, low=0, low_open=True)
    if rel <= 1:
        raise InputError(f"rel must be > 1, got {rel}")
    evals: list[tuple[int, float]] = []
    cache: dict[int, float] = {}
    frames: dict[int, pd.DataFrame] = {}

    def success(d: int) -> float:
        if d not in cache:
            df = sample_errors(A, d, eps=eps, trials=trials, projection=projection,
                               factorization=factorization, seed=seed, dtype=dtype, only_max=not full_stats)
            frames[d] = df
            cache[d] = float(np.mean(df["err_inf"].to_numpy() <= delta))
            evals.append((d, cache[d]))
        return cache[d]

    def done(d: int) -> DStar:
        below = [x for x, p in cache.items() if x < d and p < target]
        return DStar(d, cache[d], evals, frames.get(d), max(below, default=0))

    target = 1.0 - beta
    if projection == "gaussian":
        step = rel if d_hint else 2.0
        hi = max(1, int(d_hint) if d_hint else L)
        lo = hi
        while success(hi) < target:
            lo, hi = hi, max(hi + 1, int(math.ceil(hi * step)))
        if lo == hi:  # the start succeeded: walk down
            while lo > 1 and success(lo) >= target:
                hi = lo
                lo = max(1, int(lo / step))
            if success(lo) >= target:
                return done(lo)
        while hi > lo + 1 and hi > lo * rel:
            mid = int(round(math.sqrt(lo * hi)))
            mid = min(max(mid, lo + 1), hi - 1)
            if success(mid) >= target:
                hi = mid
            else:
                lo = mid
        return done(hi)
    # orthogonal: search the complement s = L − d, success decreasing in s; s = 0 is exact.
    cache[L] = 1.0
    s_ok, s_bad = 0, None
    s = 1
    while s < L:
        if success(L - s) >= target:
            s_ok = s
            s *= 2
        else:
            s_bad = s
            break
    if s_bad is None:  # every tried d succeeded, down to d = L − 2^j >= 1
        if success(1) >= target:
            return done(1)
        s_bad = L - 1
    # stop when the bracket is tight both in d (small d) and in s = L − d (d near L)
    while s_bad > s_ok + 1 and (s_bad > s_ok * rel or (L - s_ok) > (L - s_bad) * rel):
        if (L - s_ok) > (L - s_bad) * rel:  # bisect geometrically in d
            d_mid = int(round(math.sqrt((L - s_ok) * (L - s_bad))))
            mid = L - d_mid
        else:  # geometrically in s
            mid = int(round(math.sqrt(max(s_ok, 1) * s_bad)))
        mid = min(max(mid, s_ok + 1), s_bad - 1)
        if success(L - mid) >= target:
            s_ok = mid
        else:
            s_bad = mid
    return done(L - s_ok)


# --------------------------------------------------------------------------------------
# the run: simulate + sweep + verdicts


@dataclass
class Config:
    """Parameters of one ``sa-check`` run."""

    L: int = 512
    k: int = 8
    eps: float = 0.01
    delta: float = 0.1
    m: float = 0.1
    M: float = 1.0
    beta: float = 0.1
    trials: int = 200
    support: str = "random"
    factorization: str = "row"
    seed: int = 0
    scaling_L: int = 64  # size of the δ and eps scaling sweeps (exact sampler)
    d: int | None = None  # also measure every error at this d (Gaussian; orthogonal too if d <= L)

    def validate(self) -> None:
        check_params(L=self.L, k=self.k, m=self.m, M=self.M, eps=self.eps, delta=self.delta, beta=self.beta)
        _check_int("trials", self.trials, 10)
        _check_choice("support", self.support, SUPPORTS)
        _check_choice("factorization", self.factorization, FACTORIZATIONS)
        _check_int("seed", self.seed, 0)
        _check_int("scaling_L", self.scaling_L, 2)
        if self.d is not None:
            _check_int("d", self.d, 1)


def _row(kind: str, cfg: Config, **values: object) -> dict[str, object]:
    base = {"kind": kind, "L": cfg.L, "k": cfg.k, "eps": cfg.eps, "delta": cfg.delta, "m": cfg.m,
            "M": cfg.M, "beta": cfg.beta, "support": cfg.support, "factorization": cfg.factorization,
            "projection": "gaussian", "method": "exact", "d": np.nan, "seed": cfg.seed}
    base.update(values)
    return base


def simulate(cfg: Config, *, progress: Callable[[str], None] | None = None) -> tuple[pd.DataFrame, list[VerdictRow]]:
    """Run every measurement of issue 4 at one parameter set.

    Returns a tidy frame (one row per measured configuration; ``kind`` says which
    measurement) and the verdict rows. ``kind`` values: ``curve`` (success probability vs
    d, exact and asymptotic), ``d_star`` (Gaussian, orthogonal), ``at_d`` (all error
    measures at one d), ``scaling_delta`` and ``scaling_eps`` (d* as δ or eps vary),
    ``scaling_M`` (d* as M/m varies at fixed m).
    """
    cfg.validate()
    say = progress or (lambda s: None)
    seeds = spawn_seeds(cfg.seed, 8)
    A = sparse_target(cfg.L, cfg.k, m=cfg.m, M=cfg.M, support=cfg.support, seed=seeds[0])
    B = log_targets(A, cfg.eps)
    L = cfg.L
    rows: list[dict[str, object]] = []
    eps_jl = eps_jl_needed(B, cfg.delta, cfg.factorization)
    maxB = float(np.abs(B).max())

    # -- Gaussian: asymptotic law (whole curve), then exact bisection around it
    say("asymptotic law of Gaussian projections")
    lam = asymptotic_errors(A, eps=cfg.eps, trials=cfg.trials, factorization=cfg.factorization, seed=seeds[1])
    d_asym, d_asym_lo, d_asym_hi = asymptotic_d_star(lam, cfg.delta, cfg.beta)
    say(f"exact bisection for d* (hint {d_asym})")
    ds = find_d_star(A, eps=cfg.eps, delta=cfg.delta, beta=cfg.beta, trials=cfg.trials, projection="gaussian",
                     factorization=cfg.factorization, seed=seeds[2], d_hint=d_asym, full_stats=True)
    grid = sorted({int(x) for x in np.unique(np.geomspace(max(1, min(d[0] for d in ds.evaluations) // 4),
                                                          max(d[0] for d in ds.evaluations) * 2, 40).astype(int))})
    for d in grid:
        s = int(np.sum(lam <= cfg.delta * math.sqrt(d)))
        ci = clopper_pearson(s, lam.size)
        rows.append(_row("curve", cfg, method="asymptotic", d=d, estimate=ci.estimate, ci_low=ci.low,
                         ci_high=ci.high, trials=lam.size, seed=seeds[1]))
    for d, p in sorted(ds.evaluations):
        ci = clopper_pearson(int(round(p * cfg.trials)), cfg.trials)
        rows.append(_row("curve", cfg, d=d, estimate=ci.estimate, ci_low=ci.low, ci_high=ci.high,
                         trials=cfg.trials, seed=seeds[2]))
    # a few exact points below L, where the construction would actually save width
    for d in sorted({max(1, L // 8), max(1, L // 4), max(1, L // 2)}):
        if d in dict(ds.evaluations):
            continue
        df = sample_errors(A, d, eps=cfg.eps, trials=min(cfg.trials, 50), seed=seeds[2],
                           factorization=cfg.factorization)
        s = int(np.sum(df["err_inf"] <= cfg.delta))
        ci = clopper_pearson(s, len(df))
        rows.append(_row("curve", cfg, d=d, estimate=ci.estimate, ci_low=ci.low, ci_high=ci.high,
                         trials=len(df), seed=seeds[2]))
    rows.append(_row("d_star", cfg, method="exact", d=ds.d_star, estimate=ds.d_star, d_low=ds.d_low, success=ds.success,
                     trials=cfg.trials, seed=seeds[2], evaluations=len(ds.evaluations)))
    rows.append(_row("d_star", cfg, method="asymptotic", d=d_asym, estimate=d_asym, ci_low=d_asym_lo,
                     ci_high=d_asym_hi, trials=cfg.trials, seed=seeds[1]))

    # -- orthogonal projections
    say("orthogonal projections: bisection on L − d")
    do = find_d_star(A, eps=cfg.eps, delta=cfg.delta, beta=cfg.beta, trials=cfg.trials, projection="orthogonal",
                     factorization=cfg.factorization, seed=seeds[3])
    for d, p in sorted(do.evaluations):
        ci = clopper_pearson(int(round(p * cfg.trials)), cfg.trials)
        rows.append(_row("curve", cfg, projection="orthogonal", d=d, estimate=ci.estimate, ci_low=ci.low,
                         ci_high=ci.high, trials=cfg.trials, seed=seeds[3]))
    rows.append(_row("d_star", cfg, projection="orthogonal", d=do.d_star, estimate=do.d_star, d_low=do.d_low,
                     success=do.success, trials=cfg.trials, seed=seeds[3], evaluations=len(do.evaluations)))

    # -- all error measures at d* (Gaussian) and at the JL dimension
    d_jl = dimension_jl(L, eps_jl, cfg.beta)
    at: dict[str, pd.DataFrame] = {}
    for name, d in (("d_star", ds.d_star), ("d_jl", d_jl)):
        say(f"error measures at d = {d} ({name})")
        if name == "d_star" and ds.frame is not None:
            df, sd = ds.frame, seeds[2]  # the bisection's draws at d*
        else:
            df, sd = sample_errors(A, d, eps=cfg.eps, trials=cfg.trials, factorization=cfg.factorization,
                                   seed=seeds[4]), seeds[4]
        at[name] = df.assign(seed=sd)
        summary = {c: float(np.nanmax(df[c])) for c in TRIAL_COLUMNS if c != "off_argmax"}
        s = int(np.sum(df["err_inf"] <= cfg.delta))
        ci = clopper_pearson(s, len(df))
        jl_fail = int(np.sum(df["jl_ratio"] > eps_jl))
        rows.append(_row("at_d", cfg, d=d, at=name, estimate=ci.estimate, ci_low=ci.low, ci_high=ci.high,
                         trials=len(df), seed=sd, jl_failures=jl_fail, eps_jl=eps_jl,
                         **{f"max_{c}": v for c, v in summary.items()},
                         min_off_min=float(np.nanmin(df["off_min"]))))

    if cfg.d is not None:
        for proj in ("gaussian", "orthogonal") if cfg.d <= L else ("gaussian",):
            say(f"error measures at the requested d = {cfg.d} ({proj})")
            df = sample_errors(A, cfg.d, eps=cfg.eps, trials=cfg.trials, projection=proj,
                               factorization=cfg.factorization, seed=seeds[4])
            summary = {c: float(np.nanmax(df[c])) for c in TRIAL_COLUMNS if c != "off_argmax"}
            ci = clopper_pearson(int(np.sum(df["err_inf"] <= cfg.delta)), len(df))
            rows.append(_row("at_d", cfg, projection=proj, d=cfg.d, at="user", estimate=ci.estimate, ci_low=ci.low,
                             ci_high=ci.high, trials=len(df), seed=seeds[4], eps_jl=eps_jl,
                             jl_failures=int(np.sum(df["jl_ratio"] > eps_jl)),
                             **{f"max_{c}": v for c, v in summary.items()},
                             min_off_min=float(np.nanmin(df["off_min"]))))

    # -- scaling in δ (exponent of 1/δ) and in eps (which "M"), exact sampler, smaller L
    Ls = min(cfg.scaling_L, L)
    ks = min(cfg.k, Ls)
    As = sparse_target(Ls, ks, m=cfg.m, M=cfg.M, support=cfg.support, seed=seeds[5])
    st = max(50, cfg.trials // 2)
    for delta in (cfg.delta * f for f in (0.25, 0.5, 1.0, 2.0, 4.0)):
        say(f"scaling in delta: {delta:.3g}")
        lam_s = asymptotic_errors(As, eps=cfg.eps, trials=st, factorization=cfg.factorization, seed=seeds[6])
        hint = asymptotic_d_star(lam_s, delta, cfg.beta)[0]
        r = find_d_star(As, eps=cfg.eps, delta=delta, beta=cfg.beta, trials=st, factorization=cfg.factorization,
                        seed=seeds[6], d_hint=hint, rel=2 ** (1 / 16))
        rows.append(_row("scaling_delta", cfg, L=Ls, k=ks, delta=delta, d=r.d_star, estimate=r.d_star, d_low=r.d_low,
                         success=r.success, trials=st, seed=seeds[6], d_asymptotic=hint,
                         max_abs_B=float(np.abs(log_targets(As, cfg.eps)).max())))
    for ratio in (1.0, 4.0, 16.0, 64.0):
        M_r = cfg.m * ratio
        say(f"scaling in M/m: {ratio:g}")
        Ar = sparse_target(Ls, ks, m=cfg.m, M=M_r, support=cfg.support, seed=seeds[5])
        lam_s = asymptotic_errors(Ar, eps=cfg.eps, trials=st, factorization=cfg.factorization, seed=seeds[6])
        hint = asymptotic_d_star(lam_s, cfg.delta, cfg.beta)[0]
        r = find_d_star(Ar, eps=cfg.eps, delta=cfg.delta, beta=cfg.beta, trials=st, factorization=cfg.factorization,
                        seed=seeds[6], d_hint=hint, rel=2 ** (1 / 16))
        rows.append(_row("scaling_M", cfg, L=Ls, k=ks, M=M_r, d=r.d_star, estimate=r.d_star, d_low=r.d_low,
                         success=r.success, trials=st, seed=seeds[6], d_asymptotic=hint, M_over_m=ratio,
                         max_abs_B=float(np.abs(log_targets(Ar, cfg.eps)).max())))
    for eps in (cfg.m * f for f in (0.5, 1e-1, 1e-2, 1e-3, 1e-4)):
        say(f"scaling in eps: {eps:.3g}")
        lam_s = asymptotic_errors(As, eps=eps, trials=st, factorization=cfg.factorization, seed=seeds[6])
        hint = asymptotic_d_star(lam_s, cfg.delta, cfg.beta)[0]
        r = find_d_star(As, eps=eps, delta=cfg.delta, beta=cfg.beta, trials=st, factorization=cfg.factorization,
                        seed=seeds[6], d_hint=hint, rel=2 ** (1 / 16))
        Bs = log_targets(As, eps)
        rows.append(_row("scaling_eps", cfg, L=Ls, k=ks, eps=eps, d=r.d_star, estimate=r.d_star, d_low=r.d_low,
                         success=r.success, trials=st, seed=seeds[6], d_asymptotic=hint,
                         max_abs_B=float(np.abs(Bs).max()),
                         max_row_norm=float(np.linalg.norm(Bs, axis=1).max())))

    frame = pd.DataFrame(rows)
    verdicts = check(cfg, frame, at, lam=lam, eps_jl=eps_jl, d_jl=d_jl, max_abs_B=maxB, A=A, seeds=seeds)
    for e in (0.1, 0.25, 0.5):
        verdicts += check_jl_lemma(L, e)
    return frame, verdicts


def error_map(cfg: Config, frame: pd.DataFrame | None = None, size: int = 64) -> pd.DataFrame:
    """One instance for the error maps: A, Â = eps SA(X) and SAN, on a ``size``×``size``
    problem with the run's k, m, M, eps, at the d* of the asymptotic law for it, capped so
    that X (L × 2d) holds at most 4e6 numbers (tidy: one row per entry; ``d``, ``d_star``
    and the realised ``err_inf`` are recorded)."""
    cfg.validate()
    Ls = min(size, cfg.L)
    ks = min(cfg.k, Ls)
    seeds = spawn_seeds(cfg.seed, 8)
    A = sparse_target(Ls, ks, m=cfg.m, M=cfg.M, support=cfg.support, seed=seeds[0])
    lam = asymptotic_errors(A, eps=cfg.eps, trials=100, factorization=cfg.factorization, seed=seeds[1])
    d_star = asymptotic_d_star(lam, cfg.delta, cfg.beta)[0]
    # the construction materialises X (L × 2d): cap d so that X holds <= 4e6 numbers
    d = min(d_star, 2_000_000 // Ls)
    c = construct(A, d, cfg.eps, factorization=cfg.factorization, seed=seeds[7])
    Ahat = c.approximation().numpy()
    P = san(c.X, c.W_Q, c.W_K).numpy()
    Pt = A / A.sum(1, keepdims=True)
    i, j = np.meshgrid(np.arange(Ls), np.arange(Ls), indexing="ij")
    err = float(np.abs(c.logits().numpy() - log_targets(A, cfg.eps)).max())
    return pd.DataFrame({"L": Ls, "k": ks, "d": d, "d_star": d_star, "err_inf": err, "seed": seeds[7],
                         "i": i.ravel(), "j": j.ravel(),
                         "support": (A > 0).ravel(), "A": A.ravel(), "A_hat": Ahat.ravel(),
                         "san_target": Pt.ravel(), "san": P.ravel()})


def _m_ratio_note(frame: pd.DataFrame) -> str:
    sm = frame.query("kind == 'scaling_M'").sort_values("M_over_m") if "M_over_m" in frame else frame.iloc[:0]
    if len(sm) < 2:
        return ""
    g = float(sm["d"].iloc[-1] / sm["d"].iloc[0])
    r = float(sm["M_over_m"].iloc[-1] / sm["M_over_m"].iloc[0])
    return (f"; at fixed m, M/m ×{r:g} makes M² grow ×{r * r:g} but d* only ×{g:.3g} (d* follows "
            f"max|log(A/eps)|², not M²)")


def _loglog_slope(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """Least-squares slope of log y on log x with a 95% t interval."""
    from scipy import stats as sps

    res = sps.linregress(np.log(x), np.log(y))
    q = sps.t.ppf(0.975, len(x) - 2)
    return float(res.slope), float(res.slope - q * res.stderr), float(res.slope + q * res.stderr)


def check(cfg: Config, frame: pd.DataFrame, at: dict[str, pd.DataFrame], *, lam: np.ndarray, eps_jl: float,
          d_jl: int, max_abs_B: float, A: np.ndarray, seeds: list[int]) -> list[VerdictRow]:
    """Verdict rows from the measurements of :func:`simulate`."""
    L, k, eps, delta, M, m = cfg.L, cfg.k, cfg.eps, cfg.delta, cfg.M, cfg.m
    P = {"L": L, "k": k, "eps": eps, "delta": delta}
    out: list[VerdictRow] = []
    dstar = int(frame.query("kind == 'd_star' and projection == 'gaussian' and method == 'exact'")["d"].iloc[0])
    dorth = int(frame.query("kind == 'd_star' and projection == 'orthogonal'")["d"].iloc[0])
    dfs = pd.concat([at["d_star"].assign(d=dstar), at["d_jl"].assign(d=d_jl)], ignore_index=True)
    dfs["seed"] = dfs["seed"].astype(np.uint64)
    sd_star = int(at["d_star"]["seed"].iloc[0])
    sd_jl = int(at["d_jl"]["seed"].iloc[0])

    # (1) on S: |Â − A| <= M e^δ δ whenever ||B − B̂||_∞ <= δ, two readings of δ
    ok = dfs[dfs["err_inf"] <= delta]
    b = bound_on_support(M, delta)
    if len(ok):
        worst = float(ok["on_abs"].max())
        bad = ok[ok["on_abs"] > b * (1 + 1e-9)]
        verdict = "violated" if len(bad) else ("loose" if b / max(worst, 1e-300) > 10 else "holds")
        out.append(VerdictRow("on S: |Â−A| <= M e^δ δ (trials with ‖B−B̂‖∞ <= δ)", verdict,
                              {**P, "d": dstar}, bound=b, exact=exact_on_support(M, delta), estimate=worst,
                              trials=len(ok), seed=sd_star,
                              evidence=(f"{len(bad)} of {len(ok)} trials exceed" if len(bad) else
                                        f"max over {len(ok)} trials {worst:.4g} <= {b:.4g} "
                                        f"(bound/observed {b / max(worst, 1e-300):.3g}; "
                                        f"exact worst case M(e^δ−1) = {exact_on_support(M, delta):.4g})")))
    # realised-δ reading: every trial, δ_t = its own ||B − B̂||_∞
    bt = M * np.exp(dfs["err_inf"]) * dfs["err_inf"]
    ratio = bt / dfs["on_abs"]
    nbad = int(np.sum(dfs["on_abs"] > bt * (1 + 1e-9)))
    out.append(VerdictRow("on S: |Â−A| <= M e^δ δ with δ = realised ‖B−B̂‖∞ (every trial)",
                          "violated" if nbad else "holds", {**P, "d": dstar}, bound=float(bt.max()),
                          estimate=float(dfs["on_abs"].max()), trials=len(dfs), seed=sd_star,
                          evidence=(f"{nbad} trials exceed" if nbad else
                                    f"all {len(dfs)} trials within; bound/observed in "
                                    f"[{ratio.min():.3g}, {ratio.max():.3g}]")))
    # relative reading on S: |Â/A − 1| <= e^δ δ
    if len(ok):
        rel = float(ok["on_rel"].max())
        out.append(VerdictRow("on S, relative: |Â/A−1| <= e^δ δ (‖B−B̂‖∞ <= δ)",
                              "violated" if rel > math.exp(delta) * delta * (1 + 1e-9) else "holds",
                              {**P, "d": dstar}, bound=math.exp(delta) * delta, exact=math.expm1(delta),
                              estimate=rel, trials=len(ok), seed=sd_star,
                              evidence=f"max relative error {rel:.4g}; M e^δ δ / m = {b / m:.4g} is the absolute bound "
                                       f"divided by the smallest entry"))

    # (2) off S, three readings
    lo_b, hi_b = bound_off_support(eps, delta)
    if len(ok) and ok["off_max"].notna().any():
        mx, mn = float(ok["off_max"].max()), float(ok["off_min"].min())
        viol = not (lo_b * (1 - 1e-9) <= mn and mx <= hi_b * (1 + 1e-9))
        out.append(VerdictRow("off S: eps e^-δ <= Â <= eps e^δ (‖B−B̂‖∞ <= δ)", "violated" if viol else "holds",
                              {**P, "d": dstar}, bound=hi_b, estimate=mx, trials=len(ok), seed=sd_star,
                              evidence=f"off-S entries in [{mn:.4g}, {mx:.4g}] ⊂ [{lo_b:.4g}, {hi_b:.4g}]"))
        # literal reading: error off S <= eps
        first = ok.iloc[int(np.argmax(ok["off_max"].to_numpy()))]
        first_seed = int(ok["seed"].astype(np.uint64).to_numpy()[int(np.argmax(ok["off_max"].to_numpy()))])
        over = int(np.sum(ok["off_max"] > eps))
        ij = divmod(int(first["off_argmax"]), L)
        ci = clopper_pearson(over, len(ok))
        out.append(VerdictRow("off S, literal: error <= eps", "violated" if over else "holds",
                              {**P, "d": dstar}, bound=eps, estimate=mx, ci_low=ci.low, ci_high=ci.high,
                              trials=len(ok), seed=sd_star,
                              evidence=(f"{over}/{len(ok)} trials have an off-S entry > eps; worst: trial "
                                        f"{int(first['trial'])}, (i, j) = {ij}, Â_ij = {mx:.4g} = "
                                        f"{mx / eps:.4g}·eps (d = {int(first['d'])}, seed {first_seed}, "
                                        f"A from seed {seeds[0]})" if over else
                                        "no off-S entry above eps")))
        # SAN: the row mass that falls outside S
        mass = float(ok["san_off_mass"].max())
        bm = bound_san_off_mass(L, k, m, eps, delta)
        out.append(VerdictRow("SAN: row mass off S <= (L−k)eps e^δ/((L−k)eps e^δ + k m e^-δ)",
                              "violated" if mass > bm * (1 + 1e-9) else "holds", {**P, "d": dstar},
                              bound=bm, estimate=mass, trials=len(ok), seed=sd_star,
                              evidence=f"worst row puts {mass:.1%} of its SAN mass off S: 'error eps per entry' "
                                       f"sums to (L−k)·eps = {(L - k) * eps:.3g} per row vs k·m = {k * m:.3g} on S"))

    # (3) JL inner products at d_JL (explicit constant)
    dj = at["d_jl"]
    fails = int(np.sum(dj["jl_ratio"] > eps_jl))
    claimed = jl_failure_bound(L, d_jl, eps_jl)
    verdict, why = classify_failure_probability(claimed=claimed, failures=fails, trials=len(dj))
    ci = clopper_pearson(fails, len(dj))
    out.append(VerdictRow("JL: P(∃ij |⟨Rb1_i,Rb2_j⟩−⟨b1_i,b2_j⟩| > ε‖b1_i‖‖b2_j‖) <= 4L² e^{-ε²d/8}",
                          verdict, {**P, "d": d_jl}, bound=claimed, estimate=ci.estimate, ci_low=ci.low,
                          ci_high=ci.high, trials=len(dj), seed=sd_jl,
                          evidence=f"ε = δ/max‖b1_i‖ = {eps_jl:.4g}; {why}"))
    fails_inf = int(np.sum(dj["err_inf"] > delta))
    verdict, why = classify_failure_probability(claimed=cfg.beta, failures=fails_inf, trials=len(dj))
    ci = clopper_pearson(fails_inf, len(dj))
    out.append(VerdictRow("JL dimension d = 8 ln(4L²/β) k max|B|²/δ² gives P(‖B−B̂‖∞ > δ) <= β", verdict,
                          {**P, "d": d_jl}, bound=cfg.beta, estimate=ci.estimate, ci_low=ci.low, ci_high=ci.high,
                          trials=len(dj), seed=sd_jl,
                          evidence=f"{why}; d_JL / d* = {d_jl / dstar:.3g}"))

    # (4) dimension below L?  d* >= L means X = (B, I) with d = L is exact and narrower
    for proj, dd in (("gaussian", dstar), ("orthogonal", dorth)):
        vac = dd >= L if proj == "gaussian" else dd >= L - 1
        out.append(VerdictRow(f"d = O(k log L) < L: construction narrower than exact X = (B, I), {proj} R",
                              "vacuous" if vac else "holds", {**P, "d": dd}, bound=float(L), estimate=float(dd),
                              trials=cfg.trials, seed=seeds[2] if proj == "gaussian" else seeds[3],
                              evidence=(f"d* = {dd} >= L = {L}: the exact choice d = L (zero error) beats the "
                                        f"construction" if vac else f"d* = {dd} < L = {L}; d*/(k log L) = "
                                        f"{dd / (k * math.log(L)):.3g}")))

    # (5) the stated d = O(M² k log L / ε'): exponent of 1/δ, and which M
    sd = frame.query("kind == 'scaling_delta'").sort_values("delta")
    x = 1.0 / sd["delta"].to_numpy()
    dhi = sd["d"].to_numpy().astype(float)
    dlo = np.maximum(sd["d_low"].to_numpy().astype(float), 1.0)
    p = _loglog_slope(x, np.sqrt(dhi * dlo))[0]
    span = math.log(x.max() / x.min())
    # each exact d* is only known to its bisection bracket (d_low, d]: the slopes of the
    # extreme end points bound the exponent
    plo = math.log(dlo[0] / dhi[-1]) / span
    phi = math.log(dhi[0] / dlo[-1]) / span
    out.append(VerdictRow("d = O(M² k log L / ε'): d* grows like 1/ε' (ε' = δ)",
                          "violated" if plo > 1 else ("holds" if phi >= 1 else "loose"),
                          {"L": int(sd["L"].iloc[0]), "k": int(sd["k"].iloc[0]), "eps": eps, "delta": None,
                           "varied": f"delta {sd['delta'].min():.3g}..{sd['delta'].max():.3g}"},
                          bound=1.0, estimate=p, ci_low=plo, ci_high=phi, trials=int(sd["trials"].iloc[0]),
                          seed=int(sd["seed"].iloc[0]),
                          evidence=f"exponent of 1/δ in d* = {p:.3g}, bracketed in [{plo:.3g}, {phi:.3g}] by the "
                                   f"bisection brackets (JL predicts 2); d*·δ grows from "
                                   f"{dhi[-1] * sd['delta'].iloc[-1]:.4g} to {dhi[0] * sd['delta'].iloc[0]:.4g} as δ "
                                   f"shrinks: no constant C makes d* <= C/δ"))
    se = frame.query("kind == 'scaling_eps'")
    dd_ = se["d"].to_numpy().astype(float)
    grow = dd_.max() / dd_.min()
    # reading "M = sup of A": the bound C M² k log L / ε' does not depend on eps
    out.append(VerdictRow("d = O(M² k log L / ε') with M = max A_ij (independent of eps)",
                          "violated" if grow > 2 else "holds",
                          {"L": int(se["L"].iloc[0]), "k": int(se["k"].iloc[0]), "eps": None, "delta": delta,
                           "varied": f"eps {se['eps'].min():.3g}..{se['eps'].max():.3g}"},
                          bound=dimension_stated(int(se["L"].iloc[0]), int(se["k"].iloc[0]), M, delta),
                          estimate=float(dd_.max()), trials=int(se["trials"].iloc[0]), seed=int(se["seed"].iloc[0]),
                          evidence=f"at fixed M = {M:g}, d* grows ×{grow:.3g} as eps goes from {se['eps'].max():.3g} to "
                                   f"{se['eps'].min():.3g} (max|B| {se['max_abs_B'].min():.3g} → "
                                   f"{se['max_abs_B'].max():.3g}); any fixed C is exceeded as eps → 0"
                                   + _m_ratio_note(frame)))
    # reading "M = max |B_ij|": d*/(max|B|² k log L / δ) should stay bounded
    cst = dd_ / (se["max_abs_B"].to_numpy() ** 2 * int(se["k"].iloc[0]) * math.log(int(se["L"].iloc[0])) / delta)
    out.append(VerdictRow("d = O(M² k log L / ε') with M = max|B_ij| = max|log(A/eps)|",
                          "holds" if cst.max() / cst.min() < 10 else "violated",
                          {"L": int(se["L"].iloc[0]), "k": int(se["k"].iloc[0]), "eps": None, "delta": delta,
                           "varied": f"eps {se['eps'].min():.3g}..{se['eps'].max():.3g}"},
                          estimate=float(cst.max()), trials=int(se["trials"].iloc[0]), seed=int(se["seed"].iloc[0]),
                          evidence=f"fitted C = d*·δ/(max|B|² k log L) in [{cst.min():.3g}, {cst.max():.3g}] over eps "
                                   f"(bounded here; the δ-exponent row shows C must grow like 1/δ)"))
    return out


def _config_seeds(seed: int, L: int, k: int, count: int) -> list[int]:
    """Independent seeds for configuration (L, k) of a sweep, derived from the run seed."""
    ss = np.random.SeedSequence([int(seed), int(L), int(k)])
    return [int(x >> 1) for x in ss.generate_state(count, dtype=np.uint64)]


def sweep(Ls: Sequence[int], ks: Sequence[int], *, eps: float, delta: float, m: float, M: float, beta: float,
          trials: int, support: str = "random", factorization: str = "row", seed: int = 0,
          exact_max_L: int = 128, orthogonal_max_L: int = 2048, large_L: int = 2048, large_trials: int = 40,
          progress: Callable[[str], None] | None = None) -> pd.DataFrame:
    """d* over a grid of (L, k).

    Gaussian R: the asymptotic law for every L (d* with an order-statistic 95% interval,
    and the success curve, ``kind = 'sweep_curve'``), plus the exact bisection for
    L <= ``exact_max_L`` (validation of the asymptotic law). Orthogonal R: exact search on
    L − d for L <= ``orthogonal_max_L``. ``trials`` per configuration, ``large_trials``
    from L >= ``large_L`` on (one draw costs O(k L²) there). One row per
    (L, k, projection, method) with ``kind = 'sweep'``.
    """
    say = progress or (lambda s: None)
    rows: list[dict[str, object]] = []
    for L in Ls:
        for k in ks:
            if k > L:
                continue
            check_params(L=L, k=k, m=m, M=M, eps=eps, delta=delta, beta=beta)
            n = trials if L < large_L else min(trials, large_trials)
            cfg_seed = _config_seeds(seed, L, k, 4)
            A = sparse_target(L, k, m=m, M=M, support=support, seed=cfg_seed[0])
            B = log_targets(A, eps)
            B1, B2 = factorize(B, factorization)
            rn = float(np.linalg.norm(B1, axis=1).max() * np.linalg.norm(B2, axis=1).max())
            base = {"kind": "sweep", "L": L, "k": k, "eps": eps, "delta": delta, "m": m, "M": M, "beta": beta,
                    "support": support, "factorization": factorization,
                    "max_abs_B": float(np.abs(B).max()), "max_row_norm": rn, "k_log_L": k * math.log(L)}
            say(f"sweep L={L} k={k}: asymptotic ({n} draws)")
            lam = asymptotic_errors(A, eps=eps, trials=n, factorization=factorization, seed=cfg_seed[1])
            d, lo, hi = asymptotic_d_star(lam, delta, beta)
            rows.append({**base, "projection": "gaussian", "method": "asymptotic", "d": d, "ci_low": lo,
                         "ci_high": hi, "trials": n, "seed": cfg_seed[1]})
            for dd in np.unique(np.geomspace(max(1, d // 3), d * 2, 24).astype(int)):
                ci = clopper_pearson(int(np.sum(lam <= delta * math.sqrt(dd))), n)
                rows.append({**base, "kind": "sweep_curve", "projection": "gaussian", "method": "asymptotic",
                             "d": int(dd), "estimate": ci.estimate, "ci_low": ci.low, "ci_high": ci.high,
                             "trials": n, "seed": cfg_seed[1]})
            if L <= exact_max_L:
                say(f"sweep L={L} k={k}: exact bisection")
                r = find_d_star(A, eps=eps, delta=delta, beta=beta, trials=n, factorization=factorization,
                                seed=cfg_seed[2], d_hint=d)
                rows.append({**base, "projection": "gaussian", "method": "exact", "d": r.d_star, "d_low": r.d_low,
                             "success": r.success, "trials": n, "seed": cfg_seed[2]})
            if L <= orthogonal_max_L:
                say(f"sweep L={L} k={k}: orthogonal")
                r = find_d_star(A, eps=eps, delta=delta, beta=beta, trials=n, projection="orthogonal",
                                factorization=factorization, seed=cfg_seed[3])
                rows.append({**base, "projection": "orthogonal", "method": "exact", "d": r.d_star, "d_low": r.d_low,
                             "success": r.success, "trials": n, "seed": cfg_seed[3]})
    return pd.DataFrame(rows)


def check_sweep(sw: pd.DataFrame, fits: pd.DataFrame) -> list[VerdictRow]:
    """Verdicts from a sweep: the k log L scaling of d*, d* < L, Gaussian vs orthogonal,
    and the asymptotic law against the exact search."""
    out: list[VerdictRow] = []
    g = sw[(sw["kind"] == "sweep") & (sw["projection"] == "gaussian") & (sw["method"] == "asymptotic")]
    P = {"L": f"{g['L'].min()}..{g['L'].max()}", "k": f"{g['k'].min()}..{g['k'].max()}",
         "eps": float(g["eps"].iloc[0]), "delta": float(g["delta"].iloc[0])}
    seed = int(g["seed"].iloc[0])
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
            se = math.sqrt(cov[j, j])
            lo, hi = coef[j] - q * se, coef[j] + q * se
            out.append(VerdictRow(f"d* = O(k log L): exponent of {name} in d* <= 1",
                                  "violated" if lo > 1 else "holds", P, bound=1.0, estimate=float(coef[j]),
                                  ci_low=float(lo), ci_high=float(hi), trials=int(g["trials"].min()), seed=seed,
                                  evidence=f"log d* = a + p log k + q log log L over {len(g)} configurations: "
                                           f"{name} exponent {coef[j]:.3g} [{lo:.3g}, {hi:.3g}]"))
    f = fits[fits["model"] == "k log L"]
    if len(f):
        out.append(VerdictRow("d* ∝ k log L on the grid: least squares d* = C k log L has R² >= 0.9",
                              "holds" if float(f["r2"].iloc[0]) >= 0.9 else "violated", P,
                              estimate=float(f["C"].iloc[0]),
                              trials=int(g["trials"].min()), seed=seed,
                              evidence=f"C = {float(f['C'].iloc[0]):.4g}, R² = {float(f['r2'].iloc[0]):.3f}, max relative "
                                       f"residual {float(f['max_rel_residual'].iloc[0]):.2f}; other fits: "
                                       + "; ".join(f"d* = {r.C:.4g}·{r.model} (R² {r.r2:.3f})"
                                                   for r in fits.itertuples() if r.model != "k log L")))
    below = g[g["d"] < g["L"]]
    out.append(VerdictRow("d* < L somewhere on the grid (Gaussian): the construction ever beats X = (B, I)",
                          "vacuous" if len(below) == 0 else "holds", P, estimate=float(len(below)),
                          trials=int(g["trials"].min()), seed=seed,
                          evidence=f"{len(below)}/{len(g)} configurations have d* < L; smallest d*/L = "
                                   f"{float((g['d'] / g['L']).min()):.3g}"))
    o = sw[(sw["kind"] == "sweep") & (sw["projection"] == "orthogonal")]
    if len(o):
        mg = o.merge(g, on=["L", "k"], suffixes=("_o", "_g"))
        out.append(VerdictRow("orthogonal R needs a smaller d than Gaussian R", "holds"
                              if bool((mg["d_o"] <= mg["d_g"]).all()) else "violated", P,
                              estimate=float((mg["d_o"] / mg["d_g"]).max()), trials=int(o["trials"].min()),
                              seed=int(o["seed"].iloc[0]),
                              evidence=f"d*_orth/d*_gauss in [{(mg['d_o'] / mg['d_g']).min():.3g}, "
                                       f"{(mg['d_o'] / mg['d_g']).max():.3g}]; orthogonal d* = L (only the exact "
                                       f"choice works) in {int((o['d'] >= o['L']).sum())}/{len(o)} configurations"))
    e = sw[(sw["kind"] == "sweep") & (sw["projection"] == "gaussian") & (sw["method"] == "exact")]
    if len(e):
        mg = e.merge(g, on=["L", "k"], suffixes=("_e", "_a"))
        # the exact d* is known to its bracket (d_low, d]; the asymptotic one to its CI
        # both d* are quantile estimates from the same number of draws: if the law is right,
        # their ratio lies (conservatively) within [low/high, high/low] of the asymptotic
        # interval; the exact one is further only known to its bracket (d_low, d]
        with np.errstate(divide="ignore"):
            lowx = mg["d_a"] * mg["ci_low_a"] / mg["ci_high_a"]
            highx = mg["d_a"] * mg["ci_high_a"] / mg["ci_low_a"]
        ok = (mg["d_e"] >= lowx) & (mg["d_low_e"] <= highx)
        out.append(VerdictRow("asymptotic law sqrt(d)(RᵀR − I) → Z reproduces the exact d*",
                              "holds" if bool(ok.all()) else "violated", P,
                              estimate=float((mg["d_e"] / mg["d_a"]).max()), trials=int(e["trials"].min()),
                              seed=int(e["seed"].iloc[0]),
                              evidence=f"exact/asymptotic d* in [{(mg['d_e'] / mg['d_a']).min():.3g}, "
                                       f"{(mg['d_e'] / mg['d_a']).max():.3g}] over {len(mg)} configurations with "
                                       f"L <= {int(e['L'].max())}; {int((~ok).sum())} disagree beyond the CI and "
                                       f"bisection bracket"))
    return out


def fit_d_star(sw: pd.DataFrame) -> pd.DataFrame:
    """Least-squares fits of the Gaussian asymptotic d* of a sweep: ``d* = C k log L``
    (through the origin), ``d* = C max‖b_i‖² log L / δ²`` and ``d* = C M_B² k log L / δ``
    (M_B = max|B|, the notes' formula). One row per model with C, R² and the max relative
    residual."""
    g = sw[(sw["kind"] == "sweep") & (sw["projection"] == "gaussian") & (sw["method"] == "asymptotic")]
    y = g["d"].to_numpy().astype(float)
    models = {
        "k log L": g["k_log_L"].to_numpy(),
        "max‖b_i‖² log L / δ²": g["max_row_norm"].to_numpy() ** 2 * np.log(g["L"].to_numpy()) / g["delta"].to_numpy() ** 2,
        "max|B|² k log L / δ": g["max_abs_B"].to_numpy() ** 2 * g["k_log_L"].to_numpy() / g["delta"].to_numpy(),
    }
    rows = []
    for name, x in models.items():
        C = float(np.dot(x, y) / np.dot(x, x))
        res = y - C * x
        r2 = 1.0 - float(np.sum(res**2) / np.sum((y - y.mean()) ** 2)) if len(y) > 1 else float("nan")
        rows.append({"kind": "fit", "model": name, "C": C, "r2": r2,
                     "max_rel_residual": float(np.max(np.abs(res) / y)), "n": len(y)})
    return pd.DataFrame(rows)
