"""The construction of Likhosherstov, Choromanski & Weller (2021), as in the notes.

A positive L×L matrix A with k nonzeros per row (entries in [m, M] on its support S) is
turned into logits ``B = log(A / eps)`` on S (0 off S); ``B = B1 B2ᵀ`` is factorised
(row sparsity: B1 = B, B2 = I_L), a projection ``R ∈ R^{d×L}`` gives ``B̂1 = B1 Rᵀ``,
``B̂2 = B2 Rᵀ``, and with ``X = (B̂1, B̂2)`` (L × 2d), ``W_Q = I_{2d}``,
``W_K = [[0, 0], [I_d, 0]]``:

    X W_Q W_Kᵀ Xᵀ = B̂1 B̂2ᵀ = B1 Rᵀ R B2ᵀ      (exactly; model width 2d).

``SA(X) = exp(X W_Q W_Kᵀ Xᵀ)`` then approximates ``A / eps`` and ``Â = eps · SA(X)``
approximates A; SAN (the row softmax) does not see the factor eps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from attnspec.errors import InputError, check_range
from attnspec.numerics.stats import Seed, numpy_rng, torch_generator
from attnspec.theory.expressivity.params import (
    FACTORIZATIONS,
    PROJECTIONS,
    SUPPORTS,
    check_choice,
    check_int,
    check_params,
)


def sparse_target(
    L: int, k: int, *, m: float = 0.1, M: float = 1.0, support: str = "random", seed: Seed = 0
) -> np.ndarray:
    """A positive L×L matrix with exactly k nonzeros per row, entries uniform in [m, M].

    Parameters
    ----------
    L, k : int
        Size and nonzeros per row, ``1 <= k <= L``.
    m, M : float
        ``0 < m <= M``; the nonzero entries are uniform on [m, M].
    support : {"random", "banded", "both", "dense-column"}
        ``random``: each row's k columns uniform without replacement. ``banded``: the
        cyclic band ``j = i − ⌊k/2⌋, ..., i − ⌊k/2⌋ + k − 1 (mod L)`` (local attention).
        ``both``: exactly k nonzeros in every row *and* every column (cyclic band of a
        random permutation of columns, rows permuted too). ``dense-column``: the ``both``
        matrix of the same seed with one column made dense (each row that misses it moves
        one of its k entries there): k nonzeros per row, L in that column — row sparsity
        only, the notes' hypothesis but not the paper's.
    seed : int or generator

    Returns
    -------
    A : ndarray of shape (L, L), float64
    """
    check_params(L=L, k=k, m=m, M=M, eps=1.0)
    check_choice("support", support, SUPPORTS)
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
        if support in ("both", "dense-column"):
            col_perm = rng.permutation(L)
            row_perm = rng.permutation(L)
            idx = col_perm[idx][row_perm]
        if support == "dense-column":
            dense = idx[0, 0]
            missing = ~(idx == dense).any(axis=1)
            idx[missing, 0] = dense
    A = np.zeros((L, L))
    A[rows, idx] = rng.uniform(m, M, size=(L, k))
    return A


def log_targets(A: np.ndarray, eps: float) -> np.ndarray:
    """The target logits ``B = log(A / eps)`` on the support of A, 0 elsewhere.

    Parameters
    ----------
    A : array of shape (L, L), nonnegative
    eps : float > 0

    Returns
    -------
    B : ndarray of shape (L, L), float64
    """
    A = check_matrix(A)
    check_range("eps", eps, low=0, low_open=True)
    B = np.zeros_like(A)
    S = A > 0
    B[S] = np.log(A[S] / eps)
    return B


def check_matrix(A: np.ndarray) -> np.ndarray:
    """A as a float64 (L, L) array; InputError unless square, finite and nonnegative.

    Parameters
    ----------
    A : array_like, shape (L, L)
        The target matrix.

    Returns
    -------
    numpy.ndarray of float64, shape (L, L)
    """
    A = np.asarray(A, dtype=np.float64)
    if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] < 1:
        raise InputError(f"A must be a square L×L matrix, got shape {A.shape}")
    if not np.all(np.isfinite(A)):
        raise InputError("A must be finite, got NaN or infinity")
    if np.any(A < 0):
        raise InputError(f"A must be nonnegative, got min entry {A.min():.4g}")
    return A


def factorize(B: np.ndarray, factorization: str = "row") -> tuple[np.ndarray, np.ndarray]:
    """``B = B1 B2ᵀ``: row sparsity (B1 = B, B2 = I) or column sparsity (B1 = I, B2 = Bᵀ).

    Parameters
    ----------
    B : array of shape (L, L)
    factorization : {"row", "column"}

    Returns
    -------
    B1, B2 : ndarrays of shape (L, L)
    """
    check_choice("factorization", factorization, FACTORIZATIONS)
    eye = np.eye(B.shape[0])
    return (B, eye) if factorization == "row" else (eye, B.T.copy())


def projection_matrix(
    d: int, L: int, projection: str = "gaussian", *, seed: Seed = 0, dtype: torch.dtype = torch.float64
) -> torch.Tensor:
    """R ∈ R^{d×L} with E[RᵀR] = I_L.

    Parameters
    ----------
    d, L : int >= 1
    projection : {"gaussian", "orthogonal"}
        ``gaussian``: i.i.d. N(0, 1/d). ``orthogonal``: ``sqrt(L/d) Qᵀ`` with Q (L×d) the
        Q factor of a Gaussian matrix, sign-fixed so that Q is Haar; needs d <= L. (The
        notes write R^ort = Q without the scale: :data:`~.claims.JL_ORTH_NORM`.)
    seed : int or generator
    dtype : torch dtype

    Returns
    -------
    R : tensor of shape (d, L)
    """
    check_int("d", d, 1)
    check_int("L", L, 1)
    check_choice("projection", projection, PROJECTIONS)
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
        """B̂ = X W_Q W_Kᵀ Xᵀ = (X W_Q)(X W_K)ᵀ, shape (L, L).

        Returns
        -------
        torch.Tensor, shape (L, L)
        """
        return _logits(self.X, self.W_Q, self.W_K)

    def approximation(self) -> torch.Tensor:
        """Â = eps · SA(X), shape (L, L).

        Returns
        -------
        torch.Tensor, shape (L, L)
        """
        return self.eps * sa(self.X, self.W_Q, self.W_K)


def _weights(d: int, sparse: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """W_Q = I_{2d}, W_K = [[0, 0], [I_d, 0]] (dense, or sparse COO for large d)."""
    if sparse:
        i = torch.arange(d)
        W_Q = torch.sparse_coo_tensor(
            torch.stack([torch.arange(2 * d)] * 2),
            torch.ones(2 * d, dtype=torch.float64),
            (2 * d, 2 * d),
            check_invariants=True,
        ).coalesce()
        W_K = torch.sparse_coo_tensor(
            torch.stack([i + d, i]), torch.ones(d, dtype=torch.float64), (2 * d, 2 * d), check_invariants=True
        ).coalesce()
        return W_Q, W_K
    W_Q = torch.eye(2 * d, dtype=torch.float64)
    W_K = torch.zeros(2 * d, 2 * d, dtype=torch.float64)
    W_K[d:, :d] = torch.eye(d, dtype=torch.float64)  # [[0, 0], [I_d, 0]]
    return W_Q, W_K


def _logits(X: torch.Tensor, W_Q: torch.Tensor, W_K: torch.Tensor) -> torch.Tensor:
    """X W_Q W_Kᵀ Xᵀ = (X W_Q)(X W_K)ᵀ, shape (L, L)."""
    return _matmul(X, W_Q) @ _matmul(X, W_K).T


def _matmul(X: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    """X @ W for a dense or sparse (COO) W."""
    if W.is_sparse:
        return torch.sparse.mm(W.t().coalesce(), X.T).T
    return X @ W


def construct(
    A: np.ndarray,
    d: int,
    eps: float,
    *,
    projection: str = "gaussian",
    factorization: str = "row",
    seed: Seed = 0,
    sparse_weights: bool | None = None,
) -> Construction:
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
    A = check_matrix(A)
    check_int("d", d, 1)
    check_range("eps", eps, low=0, low_open=True)
    B = torch.from_numpy(log_targets(A, eps))
    B1, B2 = (torch.from_numpy(x) for x in factorize(B.numpy(), factorization))
    L = A.shape[0]
    R = projection_matrix(d, L, projection, seed=seed)
    X = torch.cat([B1 @ R.T, B2 @ R.T], dim=1)  # (L, 2d)
    W_Q, W_K = _weights(d, 2 * d > 2048 if sparse_weights is None else bool(sparse_weights))
    return Construction(X=X, W_Q=W_Q, W_K=W_K, R=R, B=B, B1=B1, B2=B2, eps=float(eps), d=d)


def exact_construction(A: np.ndarray, eps: float) -> Construction:
    """The d = L choice ``X = (B, I)`` (R = I_L): ``X W_Q W_Kᵀ Xᵀ = B`` exactly.

    Parameters
    ----------
    A : array of shape (L, L), nonnegative
    eps : float > 0

    Returns
    -------
    Construction with X (L, 2L), W_Q, W_K (2L, 2L), R = I_L.
    """
    A = check_matrix(A)
    L = A.shape[0]
    B = torch.from_numpy(log_targets(A, eps))
    eye = torch.eye(L, dtype=torch.float64)
    W_Q, W_K = _weights(L, sparse=False)
    return Construction(X=torch.cat([B, eye], dim=1), W_Q=W_Q, W_K=W_K, R=eye, B=B, B1=B, B2=eye, eps=float(eps), d=L)


def sa(X: torch.Tensor, W_Q: torch.Tensor, W_K: torch.Tensor) -> torch.Tensor:
    """Unnormalised self-attention ``exp(X W_Q W_Kᵀ Xᵀ)`` (entrywise exp).

    Parameters
    ----------
    X : tensor of shape (L, D)
    W_Q, W_K : tensors of shape (D, D), dense or sparse COO

    Returns
    -------
    tensor of shape (L, L)
    """
    return torch.exp(_logits(X, W_Q, W_K))


def san(X: torch.Tensor, W_Q: torch.Tensor, W_K: torch.Tensor) -> torch.Tensor:
    """Row-normalised self-attention ``diag(SA 1)⁻¹ SA`` (a row softmax, computed stably).

    Parameters
    ----------
    X, W_Q, W_K : as :func:`sa`

    Returns
    -------
    tensor of shape (L, L), rows summing to 1
    """
    return torch.softmax(_logits(X, W_Q, W_K), dim=-1)
