"""Curves and metrics from singular values (and the row entropy from P itself).

The quantity (Linformer, Wang et al. 2020, Section 3 and Figure 1): for P ∈ R^{n×n} with
singular values σ_1 >= ... >= σ_n, the normalised cumulative curve

    c_i = (σ_1 + ... + σ_i) / (σ_1 + ... + σ_n),   i = 1..n,

averaged over inputs per (layer, head, i) by :mod:`attnspec.spectra.aggregate`. Beside it:
the energy curve e_k = Σ_{i<=k}σ_i²/Σσ², the curve without σ_1, and the per-matrix metrics
(effective and stable rank, σ_2/σ_1, numerical rank, the rank needed for a relative
Frobenius error ε, row entropy), all from the one set of singular values
(plus P itself for the row entropy).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import torch

from attnspec.errors import InputError
from attnspec.spectra.reading import REACH_LEVEL, first_reach


def _share_curve(values: torch.Tensor, what: str) -> torch.Tensor:
    """Partial sums of ``values`` over their total along the last axis; ``what`` names the curve
    in the refusal of a matrix whose singular values are all zero."""
    total = values.sum(dim=-1, keepdim=True)
    if bool((total <= 0).any()):
        raise InputError(f"a matrix with all singular values zero has no {what}")
    return values.cumsum(dim=-1) / total


def cumulative_curve(sv: torch.Tensor) -> torch.Tensor:
    """c_i = (σ_1 + ... + σ_i) / Σσ along the last axis; shape unchanged.

    Parameters
    ----------
    sv : torch.Tensor, shape (..., n)
        Singular values of each matrix, descending along the last axis.

    Returns
    -------
    torch.Tensor, shape (..., n)
        The curve, rising to 1 at i = n.

    Raises
    ------
    InputError
        A matrix whose singular values are all zero.
    """
    return _share_curve(sv, "normalised curve")


def effective_rank(sv: torch.Tensor) -> torch.Tensor:
    """exp(entropy of p = σ/Σσ) along the last axis (Roy & Vetterli 2007).

    Parameters
    ----------
    sv : torch.Tensor, shape (..., n)
        Singular values of each matrix, descending along the last axis.

    Returns
    -------
    torch.Tensor, shape (...)
        The effective rank, in [1, n].
    """
    p = sv / sv.sum(dim=-1, keepdim=True)
    ent = -(p * torch.where(p > 0, p.log(), torch.zeros_like(p))).sum(dim=-1)
    return ent.exp()


def stable_rank(sv: torch.Tensor) -> torch.Tensor:
    """‖P‖_F² / ‖P‖_2² = Σσ² / σ_1² along the last axis.

    Parameters
    ----------
    sv : torch.Tensor, shape (..., n)
        Singular values of each matrix, descending along the last axis.

    Returns
    -------
    torch.Tensor, shape (...)
        The stable rank, in [1, n].
    """
    return (sv**2).sum(dim=-1) / sv[..., 0] ** 2


def reach_index(curves: torch.Tensor, level: float = REACH_LEVEL) -> torch.Tensor:
    """1-based first index i with c_i >= level, along the last axis.

    Parameters
    ----------
    curves : torch.Tensor, shape (..., n)
        Non-decreasing curves (:func:`cumulative_curve`, :func:`energy_curve`).
    level : float
        The level to reach (default 0.9, the reading of Figure 1); 1e-12 of slack absorbs
        rounding in the curve.

    Returns
    -------
    torch.Tensor of int, shape (...)
        The index, in 1..n (n + 1 when a curve never reaches ``level``).
    """
    return first_reach(curves, level)


#: Default relative tolerance of :func:`numerical_rank`: σ_i counts when σ_i > tol·σ_1.
#: 1e-3 sits four orders of magnitude above the float32 SVD error (~1e-7·σ_1), so the
#: count reflects the matrix, not rounding, while still resolving slowly decaying spectra.
RANK_TOL = 1e-3


def energy_curve(sv: torch.Tensor) -> torch.Tensor:
    """e_k = (σ_1² + ... + σ_k²) / Σσ² along the last axis; shape unchanged.

    By Eckart–Young, 1 − e_k is the squared relative Frobenius error of the best rank-k
    approximation: ‖P − P_k‖_F² / ‖P‖_F².

    Parameters
    ----------
    sv : torch.Tensor, shape (..., n)
        Singular values of each matrix, descending along the last axis.

    Returns
    -------
    torch.Tensor, shape (..., n)
        The energy curve, rising to 1 at k = n.

    Raises
    ------
    InputError
        A matrix whose singular values are all zero.
    """
    return _share_curve(sv**2, "energy curve")


def tail_curve(sv: torch.Tensor) -> torch.Tensor:
    """The cumulative curve with σ_1 removed, along the last axis; shape unchanged.

    t_1 = 0 and t_i = (σ_2 + ... + σ_i) / (σ_2 + ... + σ_n) for i >= 2. A row-stochastic
    P has σ_1 >= 1, so σ_1 alone can dominate the ordinary curve; t shows how the rest of
    the spectrum is spread. A matrix of rank one (nothing beyond σ_1) has t_i = 1 for i >= 2.

    Parameters
    ----------
    sv : torch.Tensor, shape (..., n)
        Singular values of each matrix, descending along the last axis.

    Returns
    -------
    torch.Tensor, shape (..., n)
        The curve t.
    """
    rest = sv[..., 1:]
    total = rest.sum(dim=-1, keepdim=True)  # (..., 1)
    safe = torch.where(total > 0, total, torch.ones_like(total))
    cum = torch.where(total > 0, rest.cumsum(dim=-1) / safe, torch.ones_like(rest))
    return torch.cat([torch.zeros_like(sv[..., :1]), cum], dim=-1)


def sigma_ratio(sv: torch.Tensor) -> torch.Tensor:
    """σ_2 / σ_1 along the last axis (the spectral gap as a ratio: small = large gap).

    Parameters
    ----------
    sv : torch.Tensor, shape (..., n)
        Singular values of each matrix, descending along the last axis.

    Returns
    -------
    torch.Tensor, shape (...)
        σ_2 / σ_1 in [0, 1]; 0 for 1 × 1 matrices (n = 1).
    """
    if sv.shape[-1] < 2:
        return torch.zeros(sv.shape[:-1], dtype=sv.dtype)
    return sv[..., 1] / sv[..., 0]


def numerical_rank(sv: torch.Tensor, tol: float = RANK_TOL) -> torch.Tensor:
    """Number of singular values above ``tol``·σ_1 along the last axis.

    Parameters
    ----------
    sv : torch.Tensor, shape (..., n)
        Singular values of each matrix, descending along the last axis.
    tol : float
        Relative tolerance, in (0, 1); default :data:`RANK_TOL` (1e-3).

    Returns
    -------
    torch.Tensor of int, shape (...)
        The numerical rank, in 1..n.

    Raises
    ------
    InputError
        ``tol`` outside (0, 1).
    """
    if not 0 < tol < 1:
        raise InputError(f"--rank-tol must be in (0, 1), got {tol}")
    return (sv > tol * sv[..., :1]).sum(dim=-1)


def rank_for_error(sv: torch.Tensor, eps: float) -> torch.Tensor:
    """Smallest k whose best rank-k approximation has relative Frobenius error <= ``eps``.

    Eckart–Young: that error is sqrt(1 − e_k), so k is the first index with
    e_k >= 1 − eps².

    Parameters
    ----------
    sv : torch.Tensor, shape (..., n)
        Singular values of each matrix, descending along the last axis.
    eps : float
        Relative Frobenius error ‖P − P_k‖_F / ‖P‖_F to reach, in (0, 1).

    Returns
    -------
    torch.Tensor of int, shape (...)
        k, 1-based.

    Raises
    ------
    InputError
        ``eps`` outside (0, 1).
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
            rows.append(
                {
                    "k": k,
                    "w": name,
                    "eckart_young_error": fro,
                    "eckart_young_w_error": float(np.linalg.norm(c[k:])) / total if total > 0 else float("nan"),
                }
            )
    return pd.DataFrame(rows)


def row_entropy(
    probs: torch.Tensor,
    mask: torch.Tensor | None = None,
    *,
    causal: bool = False,
    window: int | None = None,
    workspace: torch.Tensor | None = None,
) -> torch.Tensor:
    """Mean normalised entropy of the rows of P, per matrix.

    Row i of P over its allowed positions has entropy H_i = −Σ_j P_ij log P_ij; it is
    divided by log(ℓ_i), where ℓ_i is the number of positions row i may attend to: the
    input's real length for bidirectional attention, and the real positions up to i for
    causal attention (row i of a causal P has i + 1 entries), at most ``window`` of them for
    a causal sliding window (ℓ_i = min(i + 1, w): the layer cannot attend further back; see
    :mod:`attnspec.spectra.layer_windows`). The result is 1 for rows uniform over their allowed positions
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
        Scratch space for −p log p: of P's working dtype (float32, or float64 for float64 P; else
        unused), on P's device, at least one row long. P is
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
    # float64 P (a float64 model) stays float64; any other precision is summed in float32
    p = probs.detach() if probs.dtype == torch.float64 else probs.detach().to(torch.float32)
    # −Σ p log p per row, (B, H, n). Clamping at the smallest normal float makes 0·log 0 = 0;
    # this vectorised log is ~20× faster than torch.special.entr, which matters at n = 512.
    tiny = torch.finfo(p.dtype).tiny
    if (
        workspace is not None
        and workspace.dtype == p.dtype
        and workspace.device == p.device
        and workspace.numel() >= n
        and p.is_contiguous()
    ):
        rows = p.view(-1, n)  # (B·H·n, n)
        ent = torch.empty(rows.shape[0], dtype=p.dtype, device=p.device)  # (B·H·n,)
        step = workspace.numel() // n
        for start in range(0, rows.shape[0], step):
            piece = rows[start : start + step]
            plogp = workspace.view(-1)[: piece.numel()].view(piece.shape)
            torch.clamp_min(piece, tiny, out=plogp)
            torch.sum(plogp.log_().mul_(piece), dim=-1, out=ent[start : start + piece.shape[0]])
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
