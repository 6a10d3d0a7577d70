"""The spectrum of P with its mean row removed: what attention does beyond averaging.

A row-stochastic P = 1·p̄ᵀ + C splits into its mean row p̄ = (1ᵀP)/n repeated on every row (a
rank-one matrix: every query attends alike) and the centred rest C = P − 1·p̄ᵀ = (I − 11ᵀ/n)P,
whose rows sum to 0 and whose columns sum to 0. Averaging puts Σσ of P in σ₁: the uniform P
is 1·p̄ᵀ exactly (C = 0), a re-initialised model's near-uniform rows leave C small, and both
read "low rank" on the curve of P. C carries only what differs between queries, so its curve
and its size say how much structure there is beyond averaging and how many directions it needs:

* :func:`centred_singular_values` — σ(C) per matrix, descending;
* :func:`centred_curve` — C's normalised cumulative singular-value curve (NaN for C = 0, which
  has none);
* :func:`centred_share` — Σσ(C) / Σσ(P) in [0, 2]: 0 for a matrix whose rows are all equal;
* :func:`centred_stack` and :func:`centred_curve_at` — the same on the spectrum run's batched,
  padded torch stacks (B, H, n, n): C of each input's real rows and columns, and C's curve at
  one index (the metric ``c_centred`` of :mod:`attnspec.spectra.metric_table`);
* :func:`uniform_centred_at` — the uniform P's value, closed form: 1 for an encoder, the
  triangle's shape alone for a causal P.

For a causal (lower-triangular) P the mean row is taken over the rows as they are (row i covers
positions 0…i); C then keeps the triangle's shape difference as structure, so compare causal
runs with their own uniform (lower-triangular) null.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np


def _check(P: np.ndarray) -> np.ndarray:
    P = np.asarray(P, dtype=float)
    if P.ndim < 2 or P.shape[-1] != P.shape[-2] or P.shape[-1] < 2:
        raise ValueError(f"P must be a stack of square n × n matrices with n >= 2, got shape {P.shape}")
    if not np.all(np.isfinite(P)):
        raise ValueError("P contains NaN or infinity")
    return P


def centre_rows(P: np.ndarray) -> np.ndarray:
    """C = P − 1·(1ᵀP/n): every row minus the mean row, per matrix.

    Parameters
    ----------
    P : numpy.ndarray, shape (..., n, n)
        Attention matrices (any stack of square matrices), finite, n >= 2.

    Returns
    -------
    numpy.ndarray, shape (..., n, n)
        The centred matrices; their columns and (for row-stochastic P) rows sum to 0.

    Raises
    ------
    ValueError
        Not a stack of square matrices with n >= 2, or a NaN or infinite entry.
    """
    P = _check(P)
    return P - P.mean(axis=-2, keepdims=True)  # (..., n, n) minus the mean row (..., 1, n)


def centred_singular_values(P: np.ndarray) -> np.ndarray:
    """σ(C), C = :func:`centre_rows` (P), descending along the last axis.

    Parameters
    ----------
    P : numpy.ndarray, shape (..., n, n)
        Attention matrices, finite, n >= 2.

    Returns
    -------
    numpy.ndarray, shape (..., n)
        Singular values of each centred matrix; the last is 0 (C has rank at most n − 1).

    Raises
    ------
    ValueError
        As :func:`centre_rows`.
    """
    return np.linalg.svd(centre_rows(P), compute_uv=False)


def centred_curve(P: np.ndarray, *, atol: float = 1e-12) -> np.ndarray:
    """C's normalised cumulative singular-value curve, NaN where C is zero (all rows equal).

    Parameters
    ----------
    P : numpy.ndarray, shape (..., n, n)
        Attention matrices, finite, n >= 2.
    atol : float
        C counts as zero when Σσ(C) <= atol · n (rows equal up to rounding).

    Returns
    -------
    numpy.ndarray, shape (..., n)
        c_i = (σ₁ + … + σ_i)/Σσ of C, reaching 1 at i = n − 1; NaN rows for C = 0.

    Raises
    ------
    ValueError
        As :func:`centre_rows`, or ``atol`` negative.
    """
    if atol < 0:
        raise ValueError(f"atol must be >= 0, got {atol}")
    sv = centred_singular_values(P)
    total = sv.sum(axis=-1, keepdims=True)  # (..., 1)
    zero = total <= atol * sv.shape[-1]
    with np.errstate(invalid="ignore", divide="ignore"):
        curve = np.cumsum(sv, axis=-1) / total
    return np.where(zero, np.nan, curve)


def centred_share(P: np.ndarray) -> np.ndarray:
    """Σσ(C) / Σσ(P): the size of what differs between queries, against the whole of P.

    Parameters
    ----------
    P : numpy.ndarray, shape (..., n, n)
        Attention matrices, finite, n >= 2, none all zero.

    Returns
    -------
    numpy.ndarray, shape (...)
        0 when every row is the mean row; for the identity it is (n − 1)/n.

    Raises
    ------
    ValueError
        As :func:`centre_rows`, or a matrix that is all zero.
    """
    P = _check(P)
    whole = np.linalg.svd(P, compute_uv=False).sum(axis=-1)
    if np.any(whole <= 0):
        raise ValueError("a matrix of P is all zero: its share is undefined")
    return centred_singular_values(P).sum(axis=-1) / whole


def centred_stack(probs: Any, mask: Any = None) -> Any:
    """C of each matrix of a padded batch: every real row minus the mean of the real rows.

    Parameters
    ----------
    probs : torch.Tensor, shape (B, H, n, n)
        Attention matrices; padding rows and columns zero (as the capture hands them).
    mask : torch.Tensor, shape (B, n), optional
        True at real tokens (default: all real).

    Returns
    -------
    torch.Tensor, shape (B, H, n, n)
        The zero-extension of each input's C (padding rows and columns stay zero), so its
        singular values are C's followed by zeros.
    """
    import torch

    if mask is None:
        mask = torch.ones(probs.shape[0], probs.shape[-1], dtype=torch.bool, device=probs.device)
    rows = mask.to(probs.dtype)  # (B, n)
    count = rows.sum(dim=-1).clamp(min=1)[:, None, None, None]  # (B, 1, 1, 1) real rows
    mean_row = probs.sum(dim=-2, keepdim=True) / count  # (B, H, 1, n): padding rows are zero
    return probs - rows[:, None, :, None] * mean_row  # (B, H, n, n)


def centred_curve_at(sv: Any, at: int, *, atol: float = 1e-12) -> Any:
    """C's normalised cumulative curve at index ``at``: (σ₁ + … + σ_at)/Σσ of C, per matrix.

    Parameters
    ----------
    sv : torch.Tensor, shape (..., n)
        Singular values of C, descending (zero-extended).
    at : int
        The index, 1..n.
    atol : float
        C counts as zero when Σσ(C) <= atol · n; its value is then 1 (what differs between the
        queries needs no direction).

    Returns
    -------
    torch.Tensor, shape (...)
        In [0, 1].

    Raises
    ------
    ValueError
        ``at`` outside 1..n.
    """
    import torch

    n = sv.shape[-1]
    if not 1 <= at <= n:
        raise ValueError(f"at must be in 1..{n}, got {at}")
    total = sv.sum(dim=-1)  # (...)
    head = sv[..., :at].sum(dim=-1)  # (...)
    zero = total <= atol * n
    safe = torch.where(zero, torch.ones_like(total), total)
    return torch.where(zero, torch.ones_like(total), head / safe)


@lru_cache(maxsize=32)  # one SVD of an n × n matrix per (n, at, causal)
def uniform_centred_at(n: int, at: int, *, causal: bool) -> float:
    """The uniform P's centred c at index ``at``: the value averaging alone gives.

    Every row uniform over the positions it may attend to: for an encoder every row is the mean
    row, C = 0 and the value is 1 (as :func:`centred_curve_at` reads a zero C); for a causal P row
    i is uniform over positions 0…i, and C keeps the triangle's shape, the reference a causal
    run's centred c is read against.

    Parameters
    ----------
    n : int
        The length, >= 2.
    at : int
        The index, 1..n.
    causal : bool
        Lower-triangular (a decoder's P) or full (an encoder's).

    Returns
    -------
    float
        In [0, 1].

    Raises
    ------
    ValueError
        ``n`` below 2 or ``at`` outside 1..n.
    """
    if n < 2 or not 1 <= at <= n:
        raise ValueError(f"n must be >= 2 and at in 1..n, got n = {n}, at = {at}")
    if not causal:
        return 1.0
    rows = np.arange(1, n + 1, dtype=float)[:, None]  # (n, 1): row i sees i + 1 positions
    P = np.tril(np.ones((n, n))) / rows  # (n, n), rows sum to 1
    return float(centred_curve(P)[at - 1])
