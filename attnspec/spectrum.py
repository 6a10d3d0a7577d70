"""Singular values of attention matrices, their cumulative curves, and mergeable aggregates.

The quantity (Linformer, Wang et al. 2020, Section 3 and Figure 1): for P ∈ R^{n×n} with
singular values σ_1 >= ... >= σ_n, the normalised cumulative curve

    c_i = (σ_1 + ... + σ_i) / (σ_1 + ... + σ_n),   i = 1..n,

averaged over inputs per (layer, head, i).

Engine (:func:`singular_values`), on (..., n, n) stacks; every method computes the full
spectrum (no truncation, no randomisation):

* ``lapack`` — LAPACK's divide-and-conquer SVD, values only (``?gesdd``, jobz = "N"), in
  the input's precision, from the OpenBLAS that SciPy ships, called on many matrices at
  once from a thread pool (ctypes releases the GIL; one BLAS thread per call, because at
  n = 512 one factorisation parallelises poorly and independent ones perfectly). Float32
  bidiagonalisation is backward stable: each σ is off by about ε₃₂·σ₁, so the curve is
  within ~1e-7 of float64 SVD on real attention (tolerance 1e-4; tested).
* ``svd``  — ``torch.linalg.svdvals`` in the input's precision, on its device.
* ``gram`` — the eigenvalues λ of G = P Pᵀ formed in float64 (LAPACK's two-stage
  ``dsyevd_2stage`` on the CPU, ``torch.linalg.eigvalsh`` elsewhere), σ = √λ. Squaring
  costs √ε₆₄ ≈ 1e-8·σ₁ per value: the most accurate route, slower than ``lapack`` on float32.
* ``longn`` — approximate, for long n: the top values from a block Krylov space, the rest
  estimated by stochastic Lanczos quadrature (:mod:`attnspec.spectra.longn`: algorithm,
  cost, measured error). Not exact: its curve error is stated in meta.json.
* ``auto`` (default) — ``lapack`` on the CPU (``svd`` if SciPy's OpenBLAS is missing),
  ``svd`` on CUDA.

Aggregation (:class:`SpectrumAccumulator`): per (layer, head, index) the count, mean and
sum of squared deviations (Chan et al.'s pairwise update), so shards computed anywhere
merge into the statistics of the union (equal to a single run up to float64 rounding).
The same holds for the energy curve e_k = Σ_{i<=k}σ_i²/Σσ², the curve without σ_1, and the
per-matrix metrics (effective and stable rank, σ_2/σ_1, numerical rank, the rank needed
for a relative Frobenius error ε, row entropy), all from the one set of singular values
(plus P itself for the row entropy).
"""

from __future__ import annotations

import ctypes
import glob
import os
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from attnspec.errors import InputError, ResultsError

METHODS: tuple[str, ...] = ("auto", "lapack", "svd", "gram", "longn")
#: The level at which the "index where the mean curve reaches" metric is read.
REACH_LEVEL = 0.9
#: Linformer's Figure 1 reads the cumulative curve at index 128 of n = 512.
PAPER_READING = (128, 512)


def default_at(seq_len: int) -> int:
    """The index at which a cumulative curve of length n is read: 128 when n = 512 (the
    paper's reading point), else n / 4 (rounded, at least 1)."""
    at, n = PAPER_READING
    return at if seq_len == n else max(1, round(seq_len / 4))


def check_at(at: int, seq_len: int, name: str = "--at") -> int:
    """``at`` an integer (not a bool, a float or a string) in 1..n, else :class:`InputError` naming it."""
    import numbers

    if isinstance(at, bool) or not isinstance(at, numbers.Integral):
        raise InputError(f"{name} must be an integer index in 1..{seq_len}, got {at!r}")
    if not 1 <= at <= seq_len:
        raise InputError(f"{name} must be in 1..{seq_len} (the run's seq_len), got {at!r}")
    return int(at)


def short_input_note(meta: dict[str, Any], at: int) -> str | None:
    """Why c_at is not defined for a run, or None when it is.

    A matrix shorter than the run's seq_len counts as zero-extended: its cumulative curve
    is 1 past its real length by construction, not by measurement. c_at is defined only
    when every input has at least ``at`` tokens (``meta["corpus"]["input_lengths"]``)."""
    lengths = (meta.get("corpus") or {}).get("input_lengths") or {}
    shortest = lengths.get("min")
    if isinstance(shortest, (int, float)) and shortest < at:
        return (f"c_{at} is not defined: the shortest input has {int(shortest)} tokens (lengths "
                f"{lengths_text(meta)}), and a curve is 1 past its input's length by construction")
    return None


def lengths_text(meta: dict[str, Any]) -> str:
    """``"min 18, median 20, max 22"`` of a run's real input lengths ("" when not recorded)."""
    lengths = (meta.get("corpus") or {}).get("input_lengths") or {}
    return ", ".join(f"{k} {lengths[k]:g}" for k in ("min", "median", "max") if isinstance(lengths.get(k), (int, float)))


# ---------------------------------------------------------------------------------------
# Engine
# ---------------------------------------------------------------------------------------
_INT, _CHAR, _PTR = ctypes.c_int, ctypes.c_char, ctypes.c_void_p
#: LAPACKE signatures used here (row-major layout, jobz = "N": values only).
_SIGNATURES: dict[str, list[Any]] = {
    # lapack_int LAPACKE_?gesdd(int layout, char jobz, lapack_int m, lapack_int n, T* a, lapack_int lda,
    #                           T* s, T* u, lapack_int ldu, T* vt, lapack_int ldvt)
    "sgesdd": [_INT, _CHAR, _INT, _INT, _PTR, _INT, _PTR, _PTR, _INT, _PTR, _INT],
    "dgesdd": [_INT, _CHAR, _INT, _INT, _PTR, _INT, _PTR, _PTR, _INT, _PTR, _INT],
    # lapack_int LAPACKE_dsyevd_2stage(int layout, char jobz, char uplo, lapack_int n, double* a,
    #                                  lapack_int lda, double* w)
    "dsyevd_2stage": [_INT, _CHAR, _CHAR, _INT, _PTR, _INT, _PTR],
}
_ROW_MAJOR = 101


@lru_cache(maxsize=None)
def _lapack(routine: str) -> Any | None:
    """``LAPACKE_<routine>`` from the OpenBLAS that SciPy ships (32-bit ints), or None when absent.

    SciPy's wheels bundle ``libscipy_openblas`` with its symbols prefixed ``scipy_``;
    calling it through ctypes releases the GIL, so independent problems run in parallel
    on a thread pool.
    """
    try:
        import scipy
    except ImportError:  # pragma: no cover - scipy is a dependency
        return None
    base = Path(scipy.__file__).parent
    patterns = [str(base.parent / "scipy.libs" / "libscipy_openblas*.so*"), str(base / ".dylibs" / "libscipy_openblas*.dylib")]
    for pattern in patterns:
        for path in sorted(glob.glob(pattern)):
            try:
                lib = ctypes.CDLL(path)
            except OSError:
                continue
            for name in (f"scipy_LAPACKE_{routine}", f"LAPACKE_{routine}"):
                fn = getattr(lib, name, None)
                if fn is not None:
                    fn.restype = ctypes.c_int
                    fn.argtypes = _SIGNATURES[routine]
                    return fn
    return None


def _run_pool(call: Any, m: int, workers: int, what: str) -> None:
    """Run ``call(i)`` for i < m on ``workers`` threads, one BLAS thread each.

    At n = 512 one factorisation parallelises poorly inside BLAS; independent ones
    parallelise perfectly across threads.
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        if workers > 1 and m > 1:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                infos = list(pool.map(call, range(m)))
        else:
            infos = [call(i) for i in range(m)]
    bad = [i for i, info in enumerate(infos) if info != 0]
    if bad:
        raise np.linalg.LinAlgError(f"{what} failed on matrices {bad[:5]} (info {infos[bad[0]]})")


def _svdvals_gesdd(a: np.ndarray, workers: int) -> np.ndarray:
    """Singular values (descending) of a (m, r, c) C-contiguous float32/float64 stack; destroys ``a``."""
    routine = "sgesdd" if a.dtype == np.float32 else "dgesdd"
    fn = _lapack(routine)
    m, r, c = a.shape
    out = np.empty((m, min(r, c)), dtype=a.dtype)

    def one(i: int) -> int:
        return fn(_ROW_MAJOR, b"N", r, c, a[i].ctypes.data, c, out[i].ctypes.data, None, 1, None, 1)

    _run_pool(one, m, workers, routine)
    return out


def _eigvalsh_2stage(gram: np.ndarray, workers: int) -> np.ndarray:
    """Eigenvalues (ascending) of a (m, n, n) float64 C-contiguous symmetric stack; destroys ``gram``."""
    fn = _lapack("dsyevd_2stage")
    m, n, _ = gram.shape
    out = np.empty((m, n), dtype=np.float64)

    def one(i: int) -> int:
        return fn(_ROW_MAJOR, b"N", b"L", n, gram[i].ctypes.data, n, out[i].ctypes.data)

    _run_pool(one, m, workers, "dsyevd_2stage")
    return out


def resolve_method(method: str, device: torch.device | str) -> str:
    """``auto`` → ``lapack`` on the CPU (``svd`` where SciPy's OpenBLAS is missing), ``svd`` on CUDA."""
    if method not in METHODS:
        raise InputError(f"--svd-method must be one of {', '.join(METHODS)}, got {method!r}")
    if method == "auto":
        if torch.device(device).type == "cuda" or _lapack("sgesdd") is None:
            return "svd"
        return "lapack"
    return method


def singular_values(probs: torch.Tensor, method: str = "auto", *, workers: int | None = None) -> torch.Tensor:
    """All singular values of each matrix in a stack, in descending order.

    Parameters
    ----------
    probs : Tensor, shape (..., r, c)
        Matrices (any float dtype, any device); square for self-attention, r = n_dec by
        c = n_enc for the cross-attention of an encoder-decoder.
    method : {"auto", "lapack", "svd", "gram", "longn"}
        See the module docstring (``longn`` is approximate).
    workers : int, optional
        Threads for the CPU LAPACK paths (default: ``torch.get_num_threads()``).

    Returns
    -------
    Tensor, shape (..., min(r, c)), float64, on the CPU, descending, non-negative.
    """
    if probs.dim() < 2:
        raise InputError(f"expected a stack of matrices (..., r, c), got shape {tuple(probs.shape)}")
    if not bool(torch.isfinite(probs).all()):  # LAPACK would return garbage or fail on NaN/inf entries
        bad = int((~torch.isfinite(probs)).sum())
        raise InputError(f"singular_values needs finite matrices; got {bad} NaN or infinite entries in a stack of "
                         f"shape {tuple(probs.shape)}")
    method = resolve_method(method, probs.device)
    lead, r, c = probs.shape[:-2], probs.shape[-2], probs.shape[-1]
    if r < c:  # the same singular values; the routines below then see (m, n, k) with n >= k
        probs = probs.mT
        r, c = c, r
    n = c  # how many singular values
    flat = probs.reshape(-1, r, c)  # (m, r, c), r >= c
    if flat.dtype not in (torch.float32, torch.float64):
        flat = flat.float()  # bfloat16/float16 models: factorise in float32
    workers = workers or torch.get_num_threads()
    if method == "longn":  # approximate; its parameters and measured error: attnspec.spectra.longn
        from attnspec.spectra.longn import longn_singular_values

        sv = longn_singular_values(flat)
    elif method == "svd":
        sv = torch.linalg.svdvals(flat).to(torch.float64).cpu()  # descending already
    elif method == "lapack":
        if _lapack("sgesdd") is None:
            raise InputError("--svd-method lapack needs SciPy's bundled OpenBLAS, which was not found; use svd or gram")
        a = np.ascontiguousarray(flat.detach().cpu().numpy()).copy()  # gesdd overwrites its input
        sv = torch.from_numpy(_svdvals_gesdd(a, workers)).to(torch.float64)
    else:  # gram
        x = flat.to(torch.float64)
        # (m, c, c), symmetric positive semi-definite: P Pᵀ when square, else the smaller Pᵀ P
        gram = x @ x.mT if r == c else x.mT @ x
        if gram.device.type == "cpu" and _lapack("dsyevd_2stage") is not None:
            lam = torch.from_numpy(_eigvalsh_2stage(np.ascontiguousarray(gram.numpy()), workers))
        else:
            lam = torch.linalg.eigvalsh(gram).cpu()
        sv = lam.clamp_min(0).sqrt().flip(-1)  # ascending eigenvalues -> descending σ
    return sv.clamp_min(0).reshape(*lead, n)


def cumulative_curve(sv: torch.Tensor) -> torch.Tensor:
    """c_i = (σ_1 + ... + σ_i) / Σσ along the last axis; shape unchanged."""
    total = sv.sum(dim=-1, keepdim=True)
    if bool((total <= 0).any()):
        raise InputError("a matrix with all singular values zero has no normalised curve")
    return sv.cumsum(dim=-1) / total


def effective_rank(sv: torch.Tensor) -> torch.Tensor:
    """exp(entropy of p = σ/Σσ) along the last axis (Roy & Vetterli 2007); shape (...)."""
    p = sv / sv.sum(dim=-1, keepdim=True)
    ent = -(p * torch.where(p > 0, p.log(), torch.zeros_like(p))).sum(dim=-1)
    return ent.exp()


def stable_rank(sv: torch.Tensor) -> torch.Tensor:
    """‖P‖_F² / ‖P‖_2² = Σσ² / σ_1² along the last axis; shape (...)."""
    return (sv**2).sum(dim=-1) / sv[..., 0] ** 2


def reach_index(curves: torch.Tensor, level: float = REACH_LEVEL) -> torch.Tensor:
    """1-based first index i with c_i >= level, along the last axis; shape (...)."""
    return (curves < level - 1e-12).sum(dim=-1) + 1


#: Default relative tolerance of :func:`numerical_rank`: σ_i counts when σ_i > tol·σ_1.
#: 1e-3 sits four orders of magnitude above the float32 SVD error (~1e-7·σ_1), so the
#: count reflects the matrix, not rounding, while still resolving slowly decaying spectra.
RANK_TOL = 1e-3
#: Relative Frobenius errors ε at which :func:`rank_for_error` is recorded.
ERROR_LEVELS: tuple[float, ...] = (0.1, 0.2)


def energy_curve(sv: torch.Tensor) -> torch.Tensor:
    """e_k = (σ_1² + ... + σ_k²) / Σσ² along the last axis; shape unchanged.

    By Eckart–Young, 1 − e_k is the squared relative Frobenius error of the best rank-k
    approximation: ‖P − P_k‖_F² / ‖P‖_F².
    """
    sq = sv**2
    total = sq.sum(dim=-1, keepdim=True)
    if bool((total <= 0).any()):
        raise InputError("a matrix with all singular values zero has no energy curve")
    return sq.cumsum(dim=-1) / total


def tail_curve(sv: torch.Tensor) -> torch.Tensor:
    """The cumulative curve with σ_1 removed, along the last axis; shape unchanged.

    t_1 = 0 and t_i = (σ_2 + ... + σ_i) / (σ_2 + ... + σ_n) for i >= 2. A row-stochastic
    P has σ_1 >= 1, so σ_1 alone can dominate the ordinary curve; t shows how the rest of
    the spectrum is spread. A matrix of rank one (nothing beyond σ_1) has t_i = 1 for i >= 2.
    """
    rest = sv[..., 1:]
    total = rest.sum(dim=-1, keepdim=True)  # (..., 1)
    safe = torch.where(total > 0, total, torch.ones_like(total))
    cum = torch.where(total > 0, rest.cumsum(dim=-1) / safe, torch.ones_like(rest))
    return torch.cat([torch.zeros_like(sv[..., :1]), cum], dim=-1)


def sigma_ratio(sv: torch.Tensor) -> torch.Tensor:
    """σ_2 / σ_1 along the last axis (the spectral gap as a ratio: small = large gap); shape (...)."""
    if sv.shape[-1] < 2:
        return torch.zeros(sv.shape[:-1], dtype=sv.dtype)
    return sv[..., 1] / sv[..., 0]


def numerical_rank(sv: torch.Tensor, tol: float = RANK_TOL) -> torch.Tensor:
    """Number of singular values above ``tol``·σ_1 along the last axis; shape (...)."""
    if not 0 < tol < 1:
        raise InputError(f"--rank-tol must be in (0, 1), got {tol}")
    return (sv > tol * sv[..., :1]).sum(dim=-1)


def rank_for_error(sv: torch.Tensor, eps: float) -> torch.Tensor:
    """Smallest k whose best rank-k approximation has relative Frobenius error <= ``eps``.

    Eckart–Young: that error is sqrt(1 − e_k), so k is the first index with
    e_k >= 1 − eps². Shape (...), 1-based.
    """
    if not 0 < eps < 1:
        raise InputError(f"eps must be in (0, 1), got {eps}")
    return reach_index(energy_curve(sv), 1.0 - eps**2)


def eckart_young_error(sv: torch.Tensor, k: int) -> torch.Tensor:
    """Relative Frobenius error of the best rank-k approximation, from singular values.

    Parameters
    ----------
    sv : Tensor, shape (..., n)
        Singular values, descending (e.g. from :func:`singular_values`).
    k : int
        Rank, >= 0 (k >= n gives 0).

    Returns
    -------
    Tensor, shape (...): ‖P − P_k‖_F / ‖P‖_F = sqrt(σ_{k+1}² + ... + σ_n²) / sqrt(Σσ²),
    the smallest error any rank-k matrix can reach (Eckart & Young 1936).
    """
    if k < 0:
        raise InputError(f"k must be >= 0, got {k}")
    sq = sv.to(torch.float64) ** 2
    total = sq.sum(dim=-1)
    return (sq[..., k:].sum(dim=-1) / total).clamp_min(0).sqrt()


def best_rank_k_errors(P: np.ndarray, ks: Sequence[int], vectors: dict[str, np.ndarray] | None = None) -> pd.DataFrame:
    """What the best rank-k approximation P_k of P achieves, for each k (one float64 SVD).

    Parameters
    ----------
    P : array, shape (n, n)
        One matrix.
    ks : sequence of int
        Ranks, >= 0 (k >= n gives 0 error).
    vectors : mapping name -> array (n,), optional
        Vectors w on which to measure ‖(P − P_k)w‖ / ‖Pw‖ as well.

    Returns
    -------
    DataFrame, one row per (k, w) (per k when ``vectors`` is None): ``k``,
    ``eckart_young_error`` = ‖P − P_k‖_F/‖P‖_F (the smallest relative Frobenius error of
    any rank-k matrix), and with vectors ``w`` and ``eckart_young_w_error``. P_k is the
    Frobenius- and spectral-norm optimum; on a given w another rank-k matrix can do better.
    """
    P = np.asarray(P, dtype=np.float64)
    if P.ndim != 2 or P.shape[0] != P.shape[1]:
        raise InputError(f"P must be a square matrix, got shape {P.shape}")
    u, s, vt = np.linalg.svd(P)
    sv = torch.from_numpy(s)
    coords = {name: s * (vt @ np.asarray(w, dtype=np.float64)) for name, w in (vectors or {}).items()}  # (n,): Uᵀ P w
    rows = []
    for k in ks:
        k = int(k)
        fro = float(eckart_young_error(sv, k))
        if not coords:
            rows.append({"k": k, "eckart_young_error": fro})
        for name, c in coords.items():
            total = float(np.linalg.norm(c))  # ‖Pw‖ (U is orthogonal)
            rows.append({"k": k, "w": name, "eckart_young_error": fro,
                         "eckart_young_w_error": float(np.linalg.norm(c[k:])) / total if total > 0 else float("nan")})
    return pd.DataFrame(rows)


def row_entropy(probs: torch.Tensor, mask: torch.Tensor | None = None, *, causal: bool = False,
                window: int | None = None, workspace: torch.Tensor | None = None) -> torch.Tensor:
    """Mean normalised entropy of the rows of P, per matrix.

    Row i of P over its allowed positions has entropy H_i = −Σ_j P_ij log P_ij; it is
    divided by log(ℓ_i), where ℓ_i is the number of positions row i may attend to: the
    input's real length for bidirectional attention, and the real positions up to i for
    causal attention (row i of a causal P has i + 1 entries), at most ``window`` of them for
    a causal sliding window (ℓ_i = min(i + 1, w): the layer cannot attend further back; see
    :mod:`attnspec.windows`). The result is 1 for rows uniform over their allowed positions
    and 0 for one-hot rows, comparable across rows of different lengths.

    A row of length 1 has no choice to make (its entropy and its maximum are both 0); it
    is left out of the mean. A matrix with no row longer than 1 (a one-token input) gets 1,
    the value of a row that is uniform over its allowed positions.

    Parameters
    ----------
    probs : Tensor, shape (B, H, n, n)
        Row-stochastic P; rows and columns of padding positions are zero.
    mask : Tensor of bool, shape (B, n), optional
        True on real tokens (default: all real).
    causal : bool
        Whether row i may only attend to positions <= i.
    window : int, optional
        The layer's causal sliding window w (row i attends to i − w < j <= i); needs
        ``causal``. None: no window. Padding lies on one side of each input, so the window
        holds min(real positions <= i, w) real positions.
    workspace : Tensor, optional
        Scratch space for −p log p: float32, on P's device, at least one row long. P is
        then processed in pieces of as many rows as fit, with no allocation: a job passes
        the same small buffer (4 MB) for every layer, which spares it a fresh P-sized
        tensor per layer (its allocation and page faults were about 40 % of this
        function's time at n = 512) and keeps the pieces in cache. The result is the same
        to the last bit.

    Returns
    -------
    Tensor, shape (B, H), float64, on the CPU.
    """
    if probs.dim() != 4 or probs.shape[-1] != probs.shape[-2]:
        raise InputError(f"expected probabilities of shape (B, H, n, n), got {tuple(probs.shape)}")
    if window is not None and (not causal or isinstance(window, bool) or not isinstance(window, int) or window < 1):
        raise InputError(f"window must be a positive int on causal attention, got window={window!r}, causal={causal}")
    B, _, n, _ = probs.shape
    p = probs.detach().to(torch.float32)
    # −Σ p log p per row, (B, H, n). Clamping at the smallest normal float makes 0·log 0 = 0;
    # this vectorised log is ~20× faster than torch.special.entr, which matters at n = 512.
    tiny = torch.finfo(torch.float32).tiny
    if workspace is not None and workspace.dtype == torch.float32 and workspace.device == p.device \
            and workspace.numel() >= n and p.is_contiguous():
        rows = p.view(-1, n)  # (B·H·n, n)
        ent = torch.empty(rows.shape[0], dtype=torch.float32, device=p.device)  # (B·H·n,)
        step = workspace.numel() // n
        for start in range(0, rows.shape[0], step):
            piece = rows[start:start + step]
            plogp = workspace.view(-1)[:piece.numel()].view(piece.shape)
            torch.clamp_min(piece, tiny, out=plogp)
            torch.sum(plogp.log_().mul_(piece), dim=-1, out=ent[start:start + piece.shape[0]])
        ent = ent.view(p.shape[:-1]).neg_().to(torch.float64).cpu()
    else:
        ent = p.clamp_min(tiny).log_().mul_(p).sum(dim=-1).neg_().to(torch.float64).cpu()
    real = torch.ones(B, n, dtype=torch.bool) if mask is None else mask.detach().cpu().bool()
    if causal:
        lengths = real.to(torch.float64).cumsum(dim=-1)  # (B, n): real positions <= i
        if window is not None:
            lengths = lengths.clamp_max(float(window))  # (B, n): real positions in (i − w, i]
    else:
        lengths = real.sum(dim=-1, keepdim=True).to(torch.float64).expand(B, n)
    use = real & (lengths > 1)  # (B, n) rows that count
    norm = torch.where(use, lengths.clamp_min(2).log(), torch.ones_like(lengths))  # (B, n)
    per_row = ent / norm[:, None, :]  # (B, H, n)
    w = use.to(torch.float64)[:, None, :]
    rows = w.sum(dim=-1)  # (B, 1)
    mean = (per_row * w).sum(dim=-1) / rows.clamp_min(1)
    return torch.where(rows > 0, mean, torch.ones_like(mean))


# ---------------------------------------------------------------------------------------
# Aggregation
# ---------------------------------------------------------------------------------------
class _Moments:
    """count, mean and M2 (sum of squared deviations) over a leading sample axis.

    ``count`` has shape ``shape[:-1]`` when values carry a trailing index axis, so one
    count serves every index of a (layer, head) curve.
    """

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.count = np.zeros(shape[:2], dtype=np.int64)  # (L, H)
        self.mean = np.zeros(shape, dtype=np.float64)
        self.m2 = np.zeros(shape, dtype=np.float64)

    def _bcast(self, c: np.ndarray) -> np.ndarray:
        return c.reshape(c.shape + (1,) * (self.mean.ndim - 2)).astype(np.float64)

    def merge_stats(self, count: np.ndarray, mean: np.ndarray, m2: np.ndarray, where: tuple[Any, ...] = ()) -> None:
        """Chan et al. (1979) pairwise merge of (count, mean, m2) into the slice ``where``."""
        na = self._bcast(self.count[where])
        nb = self._bcast(np.asarray(count))
        n = na + nb
        with np.errstate(invalid="ignore", divide="ignore"):
            delta = mean - self.mean[where]
            frac = np.where(n > 0, nb / np.where(n > 0, n, 1), 0.0)
            self.mean[where] = self.mean[where] + delta * frac
            self.m2[where] = self.m2[where] + m2 + delta**2 * na * frac
        self.count[where] = self.count[where] + count

    def add_samples(self, values: np.ndarray, where: tuple[Any, ...]) -> None:
        """Add samples ``values`` of shape (m, *slice_shape) to the slice ``where``."""
        m = values.shape[0]
        mean = values.mean(axis=0)
        m2 = ((values - mean) ** 2).sum(axis=0)
        count = np.full(self.count[where].shape, m, dtype=np.int64)
        self.merge_stats(count, mean, m2, where)

    def std(self) -> np.ndarray:
        c = self._bcast(self.count)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(c > 1, np.sqrt(np.maximum(self.m2, 0) / np.maximum(c - 1, 1)), np.nan)


@dataclass(frozen=True)
class SpectrumTables:
    """The finished aggregates as tidy tables."""

    spectrum: pd.DataFrame  # one row per (layer, head, index)
    metrics: pd.DataFrame  # one row per (layer, head)
    inputs: pd.DataFrame | None = None  # one row per (input, layer), head means


class SpectrumAccumulator:
    """Streaming statistics of spectral curves and rank metrics per (layer, head).

    Every statistic is a :class:`_Moments` (count, mean, M2) in one of two dictionaries,
    ``curve_stats`` (per index) and ``metrics`` (per matrix), so persistence, merging and
    verification treat them all alike. Per-input summaries (layer means over heads of
    :attr:`PER_INPUT`), recorded by :meth:`add_batch`, serve bootstrap intervals.

    Parameters
    ----------
    num_layers, num_heads, seq_len : int
        Shape of the aggregate: curves have ``seq_len`` indices.
    rank_tol : float
        Relative tolerance of the numerical rank (default :data:`RANK_TOL`).
    """

    #: Curves per (layer, head, index): ``curve`` is c_i (state keys count/mean/m2, as
    #: before), ``energy`` e_k, ``tail`` the curve without σ_1.
    CURVES: tuple[str, ...] = ("curve", "energy", "tail")
    METRICS: tuple[str, ...] = (
        "effective_rank", "stable_rank", "reach_index", "sigma2_over_sigma1", "numerical_rank",
        *(f"rank_for_error_{e:g}" for e in ERROR_LEVELS), "row_entropy",
    )
    #: Metrics that lie in [0, 1] (the others are ranks or indices in [1, seq_len]).
    UNIT_METRICS: tuple[str, ...] = ("sigma2_over_sigma1", "row_entropy")
    #: Metrics kept per input (mean over heads, per layer) for bootstrap intervals.
    PER_INPUT: tuple[str, ...] = ("reach_index", *(f"rank_for_error_{e:g}" for e in ERROR_LEVELS), "effective_rank")

    def __init__(self, num_layers: int, num_heads: int, seq_len: int, rank_tol: float = RANK_TOL) -> None:
        for name, v in (("num_layers", num_layers), ("num_heads", num_heads), ("seq_len", seq_len)):
            if v < 1:
                raise InputError(f"{name} must be >= 1, got {v}")
        if not 0 < rank_tol < 1:
            raise InputError(f"--rank-tol must be in (0, 1), got {rank_tol}")
        self.shape = (num_layers, num_heads, seq_len)
        self.rank_tol = float(rank_tol)
        self.curve_stats = {name: _Moments(self.shape) for name in self.CURVES}
        self.metrics = {name: _Moments((num_layers, num_heads)) for name in self.METRICS}
        self.input_index = np.zeros(0, dtype=np.int64)  # (m,) position of each input in the run's selection
        self.per_input = {name: np.zeros((0, num_layers)) for name in self.PER_INPUT}  # each (m, L)

    @property
    def curves(self) -> _Moments:
        return self.curve_stats["curve"]

    @property
    def count(self) -> np.ndarray:
        return self.curves.count

    def _per_matrix(self, sv: torch.Tensor, entropy: torch.Tensor | None) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
        """Curves (each (B, H, n)) and metrics (each (B, H)) of zero-extended singular values (B, H, n)."""
        curves = {"curve": cumulative_curve(sv), "energy": energy_curve(sv), "tail": tail_curve(sv)}
        metrics = {
            "effective_rank": effective_rank(sv),
            "stable_rank": stable_rank(sv),
            "reach_index": reach_index(curves["curve"]).to(torch.float64),
            "sigma2_over_sigma1": sigma_ratio(sv),
            "numerical_rank": numerical_rank(sv, self.rank_tol).to(torch.float64),
        }
        for e in ERROR_LEVELS:  # reuses the energy curve: no second factorisation
            metrics[f"rank_for_error_{e:g}"] = reach_index(curves["energy"], 1.0 - e**2).to(torch.float64)
        if entropy is not None:
            metrics["row_entropy"] = entropy.to(torch.float64).cpu()
        return curves, metrics

    def _check(self, layer: int, sv: torch.Tensor, entropy: torch.Tensor | None) -> torch.Tensor:
        L, H, n = self.shape
        if not 0 <= layer < L:
            raise InputError(f"layer must be in 0..{L - 1}, got {layer}")
        if sv.dim() != 3 or sv.shape[1] != H or sv.shape[2] > n:
            raise InputError(f"singular values must have shape (B, {H}, <= {n}), got {tuple(sv.shape)}")
        if entropy is not None and tuple(entropy.shape) != tuple(sv.shape[:2]):
            raise InputError(f"row entropy must have shape {tuple(sv.shape[:2])}, got {tuple(entropy.shape)}")
        if sv.shape[2] < n:
            sv = torch.nn.functional.pad(sv, (0, n - sv.shape[2]))
        return sv

    def add(self, layer: int, sv: torch.Tensor, row_entropy: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
        """Add one layer's singular values, shape (B, H, l) with l <= seq_len.

        Curves of matrices shorter than ``seq_len`` (inputs shorter than the window) are
        those of the zero-extended matrix: c_i = 1 for i beyond their length.
        ``row_entropy`` (B, H) comes from :func:`row_entropy` on the same P; without it
        the row-entropy statistic receives no samples. Returns the per-matrix metrics.
        """
        sv = self._check(layer, sv, row_entropy)
        curves, metrics = self._per_matrix(sv, row_entropy)
        for name, values in curves.items():  # each (B, H, n)
            self.curve_stats[name].add_samples(values.numpy(), (layer,))
        for name, values in metrics.items():  # each (B, H)
            self.metrics[name].add_samples(values.numpy(), (layer,))
        return metrics

    def add_batch(self, items: Sequence[tuple[int, torch.Tensor, torch.Tensor | None]], input_index: Sequence[int]) -> None:
        """Add one batch for every layer and record its per-input summaries.

        ``items`` holds (layer, singular values (B, H, l), row entropy (B, H) or None),
        exactly one per layer; ``input_index`` (B,) says which inputs of the run's
        selection the batch holds (so shards merge into one table of inputs).
        """
        L = self.shape[0]
        if sorted(layer for layer, _, _ in items) != list(range(L)):
            raise InputError(f"add_batch needs exactly one entry per layer 0..{L - 1}")
        idx = np.asarray(input_index, dtype=np.int64)
        for layer, sv, ent in items:
            if sv.shape[0] != idx.size:
                raise InputError(f"input_index has {idx.size} entries but the batch holds {sv.shape[0]} inputs")
        rows = {name: np.empty((idx.size, L)) for name in self.PER_INPUT}
        for layer, sv, ent in items:
            metrics = self.add(layer, sv, ent)
            for name in self.PER_INPUT:
                rows[name][:, layer] = metrics[name].numpy().mean(axis=1)  # mean over heads
        self.input_index = np.concatenate([self.input_index, idx])
        for name in self.PER_INPUT:
            self.per_input[name] = np.concatenate([self.per_input[name], rows[name]])

    def merge(self, other: SpectrumAccumulator) -> None:
        """Fold ``other`` (a shard of the same shape) into this accumulator."""
        if other.shape != self.shape:
            raise ResultsError(f"cannot merge aggregates of shape {other.shape} into {self.shape}")
        if other.rank_tol != self.rank_tol:
            raise ResultsError(f"cannot merge aggregates with rank_tol {other.rank_tol} into rank_tol {self.rank_tol}")
        for group, theirs in ((self.curve_stats, other.curve_stats), (self.metrics, other.metrics)):
            for name, mom in group.items():
                o = theirs[name]
                mom.merge_stats(o.count, o.mean, o.m2)
        overlap = np.intersect1d(self.input_index, other.input_index)
        if overlap.size:
            raise ResultsError(f"the aggregates share inputs {overlap[:5].tolist()}; shards must be disjoint")
        order = np.argsort(np.concatenate([self.input_index, other.input_index]), kind="stable")
        self.input_index = np.concatenate([self.input_index, other.input_index])[order]
        for name in self.PER_INPUT:
            self.per_input[name] = np.concatenate([self.per_input[name], other.per_input[name]])[order]

    # -- persistence -------------------------------------------------------------------
    def _state_keys(self) -> dict[str, _Moments]:
        """Every moment container under its state-file prefix (``curve`` keeps the bare names)."""
        out = {"": self.curves}
        out.update({f"{name}.": mom for name, mom in self.curve_stats.items() if name != "curve"})
        out.update({f"{name}.": mom for name, mom in self.metrics.items()})
        return out

    def state(self) -> dict[str, np.ndarray]:
        out = {"shape": np.asarray(self.shape), "rank_tol": np.asarray(self.rank_tol)}
        for prefix, mom in self._state_keys().items():
            out[f"{prefix}count"] = mom.count
            out[f"{prefix}mean"] = mom.mean
            out[f"{prefix}m2"] = mom.m2
        out["per_input.input_index"] = self.input_index
        for name, values in self.per_input.items():
            out[f"per_input.{name}"] = values
        return out

    @classmethod
    def from_state(cls, state: dict[str, np.ndarray]) -> SpectrumAccumulator:
        try:
            acc = cls(*(int(v) for v in state["shape"]), rank_tol=float(state["rank_tol"]))
            for prefix, mom in acc._state_keys().items():
                mom.count[...] = state[f"{prefix}count"]
                mom.mean[...] = state[f"{prefix}mean"]
                mom.m2[...] = state[f"{prefix}m2"]
            acc.input_index = np.asarray(state["per_input.input_index"], dtype=np.int64)
            for name in acc.PER_INPUT:
                values = np.asarray(state[f"per_input.{name}"], dtype=np.float64)
                if values.shape != (acc.input_index.size, acc.shape[0]):
                    raise ValueError(f"per_input.{name} has shape {values.shape}")
                acc.per_input[name] = values
        except (KeyError, ValueError, TypeError, InputError) as e:
            raise ResultsError(f"aggregate state is incomplete or has the wrong shape (made by an older attnspec?): {e}") from None
        return acc

    def copy(self) -> SpectrumAccumulator:
        """An independent copy (the run updates a copy, then swaps it in: see spectrum_run)."""
        return SpectrumAccumulator.from_state({k: np.array(v, copy=True) for k, v in self.state().items()})

    def verify(self, inputs_done: int | None = None, *, tol: float = 1e-9) -> None:
        """Check the invariants every honest aggregate satisfies; raise :class:`ResultsError` if not.

        The message starts with the name of the failed check ("finite check: ...").
        Generic over the state's arrays (every float array finite, every count equal to
        ``inputs_done``), then specific to the statistics: a mean cumulative curve lies
        in [0, 1], does not decrease, and ends at 1; squared deviations are >= 0; mean
        effective and stable rank and reach index lie in [1, seq_len].
        """
        state = self.state()
        for name, a in state.items():
            if np.issubdtype(a.dtype, np.floating) and not np.all(np.isfinite(a)):
                raise ResultsError(f"finite check: '{name}' holds NaN or infinite values")
        # every input adds one matrix per (layer, head): every count equals inputs_done
        counts = {name: a for name, a in state.items() if name == "count" or name.endswith(".count")}
        if not counts.get("row_entropy.count", np.ones(1)).any():  # row entropy needs P; add() may omit it
            counts.pop("row_entropy.count")
        values = np.unique(np.concatenate([a.ravel() for a in counts.values()])) if counts else np.array([])
        if np.any(values < 0):
            raise ResultsError("count check: negative counts")
        if len(values) > 1:
            raise ResultsError(f"count check: the statistics disagree on how many matrices they hold "
                               f"({values[:4].tolist()})")
        if inputs_done is not None and len(values) and values[0] != inputs_done:
            raise ResultsError(f"count check: the statistics hold {values[0]} matrices per head, but the state "
                               f"records {inputs_done} inputs done")
        seen = self.curves.count > 0  # (L, H)
        if not seen.any():
            return
        mean = self.curves.mean[seen]  # (m, n)
        if mean.min() < -tol or mean.max() > 1 + tol:
            raise ResultsError(f"range check: a mean cumulative value lies outside [0, 1] "
                               f"(min {mean.min():.6g}, max {mean.max():.6g})")
        if np.any(np.diff(mean, axis=-1) < -tol):
            raise ResultsError("range check: a mean cumulative curve decreases")
        if np.any(np.abs(mean[:, -1] - 1) > 1e-6):
            raise ResultsError("range check: a mean cumulative curve does not end at 1")
        scale = np.maximum(1.0, self.curves.count[seen].max())
        if np.any(self.curves.m2[seen] < -tol * scale):
            raise ResultsError("range check: negative squared deviations in 'm2'")
        for name, mom in self.curve_stats.items():  # energy and tail curves: the same invariants
            if name == "curve":
                continue
            m = mom.mean[seen]
            if m.min() < -tol or m.max() > 1 + tol or np.any(np.diff(m, axis=-1) < -tol) or np.any(np.abs(m[:, -1] - 1) > 1e-6):
                raise ResultsError(f"range check: a mean {name} curve leaves [0, 1], decreases or does not end at 1")
            if np.any(mom.m2[seen] < -tol * scale):
                raise ResultsError(f"range check: negative squared deviations in '{name}.m2'")
        n = self.shape[2]
        for name in self.METRICS:
            mom = self.metrics[name]
            m = mom.mean[mom.count > 0]
            low, high = (0.0, 1.0) if name in self.UNIT_METRICS else (1.0, float(n))
            if m.size and (m.min() < low - 1e-6 or m.max() > high + 1e-6):
                raise ResultsError(f"range check: mean {name} outside [{low:g}, {high:g}] (min {m.min():.6g}, max {m.max():.6g})")
            if np.any(mom.m2 < -tol * scale):
                raise ResultsError(f"range check: negative squared deviations in '{name}.m2'")

    # -- output ------------------------------------------------------------------------
    def tables(self) -> SpectrumTables:
        L, H, n = self.shape
        layer, head, index = np.meshgrid(np.arange(L), np.arange(H), np.arange(1, n + 1), indexing="ij")
        count = np.broadcast_to(self.curves.count[:, :, None], self.shape)
        columns = {
            "layer": layer.ravel(),
            "head": head.ravel(),
            "index": index.ravel(),
            "mean": self.curves.mean.ravel(),
            "std": self.curves.std().ravel(),
            "count": count.ravel(),
        }
        for name, mom in self.curve_stats.items():
            if name != "curve":
                columns[f"{name}_mean"] = mom.mean.ravel()
                columns[f"{name}_std"] = mom.std().ravel()
        spectrum = pd.DataFrame(columns)
        lh_layer, lh_head = np.meshgrid(np.arange(L), np.arange(H), indexing="ij")
        metrics = pd.DataFrame({"layer": lh_layer.ravel(), "head": lh_head.ravel(), "count": self.curves.count.ravel()})
        mean_curve = torch.from_numpy(self.curves.mean)
        metrics[f"index_at_{REACH_LEVEL:g}_of_mean_curve"] = reach_index(mean_curve).numpy().ravel()
        for name, mom in self.metrics.items():
            metrics[f"{name}_mean"] = np.where(mom.count > 0, mom.mean, np.nan).ravel()
            metrics[f"{name}_std"] = mom.std().ravel()
        metrics.loc[metrics["count"] == 0, f"index_at_{REACH_LEVEL:g}_of_mean_curve"] = -1
        return SpectrumTables(spectrum=spectrum, metrics=metrics, inputs=self.inputs_table())

    def inputs_table(self) -> pd.DataFrame:
        """One row per (input, layer): the :attr:`PER_INPUT` metrics averaged over heads."""
        m, L = self.input_index.size, self.shape[0]
        frame = pd.DataFrame({"input": np.repeat(self.input_index, L), "layer": np.tile(np.arange(L), m)})
        for name, values in self.per_input.items():
            frame[name] = values.ravel()
        return frame


#: Name of the digest entry stored inside every state file.
DIGEST_KEY = "digest"


def state_digest(arrays: dict[str, np.ndarray]) -> str:
    """SHA-256 over every array of a state (name, dtype, shape and bytes), except the digest.

    Generic on purpose: whatever arrays the accumulator or the run adds to the state are
    covered without listing them here.
    """
    import hashlib

    h = hashlib.sha256()
    for name in sorted(arrays):
        if name == DIGEST_KEY:
            continue
        a = np.ascontiguousarray(np.asarray(arrays[name]))
        h.update(f"{name}\0{a.dtype.str}\0{a.shape}\0".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def save_state(path: Path, acc: SpectrumAccumulator, extra: dict[str, np.ndarray] | None = None) -> None:
    """Write the accumulator and ``extra`` arrays to ``path`` as ONE atomic .npz with a digest.

    Everything a resume or a merge needs (the aggregate, how many and which inputs it
    covers, the run's identity) goes into this one file, so the aggregate and the record
    of what it covers can never disagree after an interruption.
    """
    from attnspec.results import atomic_path

    arrays = {**acc.state(), **{k: np.asarray(v) for k, v in (extra or {}).items()}}
    clash = set(acc.state()) & set(extra or {})
    if clash or DIGEST_KEY in arrays:
        raise InputError(f"state entries {sorted(clash | ({DIGEST_KEY} & set(arrays)))} are reserved")
    arrays[DIGEST_KEY] = np.asarray(state_digest(arrays))
    with atomic_path(Path(path)) as tmp:
        with open(tmp, "wb") as f:  # a file object: np.savez would append ".npz" to a name
            np.savez(f, **arrays)
            f.flush()
            os.fsync(f.fileno())


def read_state_arrays(path: Path) -> dict[str, np.ndarray]:
    """Every array of the state file at ``path``, digest verified; :class:`ResultsError` otherwise."""
    path = Path(path)
    if not path.is_file():
        raise ResultsError(f"{path.parent} has no aggregate state ({path.name})")
    try:
        with np.load(path, allow_pickle=False) as z:
            state = {k: z[k] for k in z.files}
    except Exception as e:  # BadZipFile, EOFError, zlib.error, ValueError, OSError: all mean "damaged"
        reason = (str(e).splitlines() or [""])[0] or type(e).__name__
        raise ResultsError(f"checkpoint {path} is unreadable (truncated or not a state file): {reason}") from None
    if DIGEST_KEY not in state:
        raise ResultsError(f"checkpoint {path} fails the digest check: it has no digest (written by an older "
                           "attnspec, or not a state file), so it cannot be verified; recompute with --overwrite")
    if str(state[DIGEST_KEY]) != state_digest(state):
        raise ResultsError(f"checkpoint {path} fails the digest check: its contents were altered or damaged "
                           "after it was written")
    return state


def load_state(path: Path, *, inputs_done: int | None = None) -> tuple[SpectrumAccumulator, dict[str, np.ndarray]]:
    """Read and verify a state written by :func:`save_state`.

    Checks, in order: readable .npz; digest; every accumulator array present with the
    right shape; :meth:`SpectrumAccumulator.verify` against the stored ``inputs_done``
    (or the ``inputs_done`` given). Any failure raises :class:`ResultsError` naming the
    file and the failed check; nothing is modified.

    Returns
    -------
    (SpectrumAccumulator, dict)
        The aggregate, and the other arrays of the state (``inputs_done``, ...).
    """
    path = Path(path)
    state = read_state_arrays(path)
    try:
        acc = SpectrumAccumulator.from_state(state)
    except ResultsError as e:
        raise ResultsError(f"checkpoint {path} fails the structure check: {e}") from None
    own = set(acc.state())
    extra = {k: v for k, v in state.items() if k not in own and k != DIGEST_KEY}
    if inputs_done is None and "inputs_done" in extra:
        inputs_done = int(extra["inputs_done"])
    try:
        acc.verify(inputs_done)
    except ResultsError as e:
        raise ResultsError(f"checkpoint {path} fails the {e}") from None
    return acc, extra


def merge_accumulators(accs: Sequence[SpectrumAccumulator]) -> SpectrumAccumulator:
    if not accs:
        raise ResultsError("nothing to merge")
    out = SpectrumAccumulator(*accs[0].shape, rank_tol=accs[0].rank_tol)
    for a in accs:
        out.merge(a)
    return out


# ---------------------------------------------------------------------------------------
# `attnspec.spectrum(...)`: the Python API's entry point shares this module's name
# ---------------------------------------------------------------------------------------
class _CallableModule(type(os)):  # type(os) is types.ModuleType
    """Importing ``attnspec.spectrum`` binds this module to ``attnspec.spectrum``, hiding a
    function of that name; calling the module runs :func:`attnspec.api.spectrum` instead."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from attnspec.api import spectrum

        return spectrum(*args, **kwargs)


def __getattr__(name: str) -> Any:
    # What notebooks show for `attnspec.spectrum(`: the API function's signature, looked up
    # only when asked, so this low-level module never imports the API layer above it.
    if name == "__signature__":
        import inspect

        from attnspec.api import spectrum

        return inspect.signature(spectrum)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


sys.modules[__name__].__class__ = _CallableModule
