"""attnspec plug-in: local attention, three ways, through the spectrum wing's public doors.

* an **approximation** of attention (``--approx sliding-window``): each query attends to the
  k keys nearest to it (its own position and the ones around it; the k latest when causal),
  Longformer's sliding window (Beltagy et al. 2020) without the global tokens;
* a **null baseline** (``--baseline banded``): every row uniform over the positions within
  :data:`BAND` of the diagonal that the head may attend to: what a purely local head would give;
* a **metric** of every P (columns ``participation_ratio_mean`` / ``_std``): the participation
  ratio (Σσ²)² / Σσ⁴ of its singular values, an effective dimension in [1, rank P].

Importing this module registers all three; the entry points of its ``pyproject.toml`` make
attnspec import it (``pip install --no-deps -e examples/attnspec-local``). Only the documented
API is used: :func:`attnspec.spectra.approx.protocol.approximation` and
:func:`attnspec.spectra.approx.dense.score_matrix` (docs/approximations.md),
:func:`attnspec.spectra.metric_table.register_metric` and
:func:`attnspec.spectra.nulls.register_null` (docs/spectrum.md).
"""

from __future__ import annotations

from typing import Any

import torch

from attnspec.spectra.approx.dense import score_matrix
from attnspec.spectra.approx.protocol import Heads, approximation
from attnspec.spectra.baselines import NullRequest
from attnspec.spectra.metric_table import Metric, MetricInputs, register_metric
from attnspec.spectra.nulls import Null, register_null

#: Half-width of the banded null: row i spreads over |i − j| <= BAND.
BAND = 4


def window_mask(n: int, k: int, causal: bool) -> torch.Tensor:
    """Which keys each query sees: the k positions around it, or the k latest when causal.

    Parameters
    ----------
    n : int
        Sequence length.
    k : int
        Keys per query (fewer at the edges).
    causal : bool
        Only positions j <= i.

    Returns
    -------
    Tensor, shape (n, n), bool
    """
    i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]  # (n, 1), (1, n)
    if causal:
        return (j <= i) & (j > i - k)
    first = i - (k - 1) // 2  # (n, 1): the window [first, first + k) is centred on i
    return (j >= first) & (j < first + k)


@approximation("sliding-window", label="sliding window: each query sees its k nearest keys", causal=True, bias=True)
def sliding_window(heads: Heads, *, k: int, state: Any, seed: int) -> torch.Tensor:
    """softmax(S restricted to the window) V, S = s·Q Kᵀ + B.

    Parameters
    ----------
    heads : Heads
        One layer's heads on one document.
    k : int
        Keys per query.
    state : Any
        Unused (nothing is fitted).
    seed : int
        Unused (nothing is drawn).

    Returns
    -------
    Tensor, shape (H, n, d)
    """
    s = score_matrix(heads.q, heads.k, heads.scaling, heads.bias)  # (H, n, n)
    outside = ~window_mask(heads.n, k, heads.causal).to(s.device)
    return torch.softmax(s.masked_fill(outside, float("-inf")), dim=-1) @ heads.v


def participation_ratio(x: MetricInputs) -> torch.Tensor:
    """(Σσ²)² / Σσ⁴ per matrix: 1 for rank one, n for equal singular values.

    Parameters
    ----------
    x : MetricInputs
        ``sv``: singular values (B, H, n), zero-extended.

    Returns
    -------
    Tensor, shape (B, H), float64
    """
    s2 = x.sv.to(torch.float64).square()  # (B, H, n)
    return s2.sum(dim=-1).square() / s2.square().sum(dim=-1)


def banded_matrices(request: NullRequest) -> tuple[torch.Tensor, None]:
    """The banded null's sampler: rows uniform over the allowed positions within BAND of the diagonal.

    Parameters
    ----------
    request : NullRequest
        One layer's shape (n, heads), causal mask and sliding window.

    Returns
    -------
    (Tensor, None)
        P of shape (1, H, n, n), every head alike; no logit scale.
    """
    n = request.n
    i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
    allowed = (i - j).abs() <= BAND  # (n, n)
    if request.causal:
        allowed &= j <= i
    if request.window is not None:
        allowed &= j > i - request.window
    p = allowed.to(torch.float64) / allowed.sum(dim=-1, keepdim=True)  # (n, n), rows sum to 1
    return p.expand(1, request.heads, n, n), None


register_metric(Metric("participation_ratio", "σ: (Σσ²)²/Σσ⁴ (participation ratio)", participation_ratio))
register_null(
    Null(
        "banded",
        f"every row uniform over the allowed positions within {BAND} of the diagonal (a purely local head)",
        "banded null",
        "banded null",
        deterministic=True,
        sampler=f"{__name__}:banded_matrices",
    )
)
