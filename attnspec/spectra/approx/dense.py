"""Exact attention on one layer's heads: the P V every approximation is measured against.

Scores S = s·Q Kᵀ + B (B optional), causal rows masked to the visible prefix, P = softmax(S)
row-wise; the relative error of an approximate output Ŷ is ‖Ŷ − P V‖_F / ‖P V‖_F per head.
"""

from __future__ import annotations

import torch

from attnspec.spectra.approx.protocol import Heads


def score_matrix(
    queries: torch.Tensor, keys: torch.Tensor, scaling: float, bias: torch.Tensor | None = None
) -> torch.Tensor:
    """s·Q Kᵀ + B for any rows of queries and keys (a method's landmarks or projected keys among them).

    Parameters
    ----------
    queries : Tensor, shape (H, a, d)
    keys : Tensor, shape (H, b, d)
    scaling : float
        The score scaling s (``heads.scaling``).
    bias : Tensor, shape (H, a, b), optional
        An additive score bias, already projected as the keys were.

    Returns
    -------
    Tensor, shape (H, a, b)
    """
    s = scaling * (queries @ keys.mT)  # (H, a, b)
    if bias is not None:
        s = s + bias
    return s


def attention_weights(
    queries: torch.Tensor, keys: torch.Tensor, scaling: float, bias: torch.Tensor | None = None
) -> torch.Tensor:
    """softmax(s·Q Kᵀ + B) row-wise (no mask): the weights a method spreads over its keys.

    Parameters
    ----------
    queries : Tensor, shape (H, a, d)
    keys : Tensor, shape (H, b, d)
    scaling : float
        The score scaling s.
    bias : Tensor, shape (H, a, b), optional
        An additive score bias.

    Returns
    -------
    Tensor, shape (H, a, b), rows summing to 1.
    """
    return torch.softmax(score_matrix(queries, keys, scaling, bias), dim=-1)


def scores(heads: Heads) -> torch.Tensor:
    """S = s·Q Kᵀ + B, with −inf above the diagonal when causal.

    Parameters
    ----------
    heads : Heads

    Returns
    -------
    Tensor, shape (H, n, n)
    """
    s = score_matrix(heads.q, heads.k, heads.scaling, heads.bias)  # (H, n, n)
    if heads.causal:
        n = heads.n
        above = torch.ones(n, n, dtype=torch.bool, device=s.device).triu(1)  # (n, n) future columns
        s = s.masked_fill(above, float("-inf"))
    return s


def probabilities(heads: Heads) -> torch.Tensor:
    """P = softmax(S) row-wise.

    Parameters
    ----------
    heads : Heads

    Returns
    -------
    Tensor, shape (H, n, n), rows summing to 1.
    """
    return torch.softmax(scores(heads), dim=-1)


def exact_output(heads: Heads) -> torch.Tensor:
    """P V.

    Parameters
    ----------
    heads : Heads

    Returns
    -------
    Tensor, shape (H, n, d)
    """
    return probabilities(heads) @ heads.v


def relative_error(approx: torch.Tensor, exact: torch.Tensor) -> torch.Tensor:
    """‖Ŷ − P V‖_F / ‖P V‖_F per head.

    Parameters
    ----------
    approx, exact : Tensor, shape (H, n, d)

    Returns
    -------
    Tensor, shape (H,)
    """
    diff = (approx.to(exact.dtype) - exact).flatten(1).norm(dim=-1)  # (H,)
    return diff / exact.flatten(1).norm(dim=-1)
