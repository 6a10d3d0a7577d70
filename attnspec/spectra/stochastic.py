"""P as captured is a probability matrix: finite, non-negative, each real row summing to 1.

A model whose weights hold ``inf`` or NaN (a damaged or badly converted checkpoint, an
overflow in a low-precision dtype) gives NaN or degenerate P, whose singular values would
enter the aggregate as numbers. Each layer's P is checked as it is captured, before its
singular values are taken, and the run is refused naming the layer and the head.

The check reads P twice (its row sums and its row minima, O(B·H·n²)) against the SVD's
O(B·H·n³): benchmarks/bench_p_check.py measures it against the rest of the per-layer work.
The tolerance is loose on purpose: it separates a probability matrix from a degenerate one,
not one rounding from another.
"""

from __future__ import annotations

from typing import Any

from attnspec.errors import ModelLoadError


def tolerance(dtype: Any) -> float:
    """Allowed |row sum − 1| and most negative entry: 3e-2 for 16-bit P (bfloat16 keeps 8 bits
    of each entry), 1e-3 otherwise.

    Parameters
    ----------
    dtype : torch.dtype
        P's dtype.

    Returns
    -------
    float
    """
    import torch

    return 3e-2 if dtype in (torch.bfloat16, torch.float16) else 1e-3


def check_stochastic(probs: Any, mask: Any, *, layer: int, model: str) -> None:
    """Refuse (:class:`ModelLoadError`, one line naming layer and head) a P that is not finite,
    has an entry below ``-tol`` or a real row whose sum is not 1 within ``tol``.

    Parameters
    ----------
    probs : torch.Tensor, shape (B, H, n, n)
        One layer's P, padding rows and columns zero.
    mask : torch.Tensor of bool, shape (B, n)
        True on real tokens (a padding row must sum to 0).
    layer : int
        The layer, named by the message.
    model : str
        The model, named by the message.

    Raises
    ------
    ModelLoadError
        P is not row-stochastic within :func:`tolerance`.
    """
    import torch

    tol = tolerance(probs.dtype)
    acc = torch.float32 if probs.dtype in (torch.bfloat16, torch.float16) else probs.dtype
    sums = probs.sum(dim=-1, dtype=acc)  # (B, H, n)
    lows = probs.amin(dim=-1).to(acc)  # (B, H, n)
    want = mask[:, None, :].to(acc)  # (B, 1, n): 1 on real rows, 0 on padding rows
    finite = torch.isfinite(sums)  # NaN or ±inf anywhere in a row makes its sum non-finite
    bad = ~finite | ((sums - want).abs() > tol) | (lows < -tol)  # (B, H, n)
    if not bool(bad.any()):
        return
    b, h, row = (int(v) for v in torch.nonzero(bad)[0])
    if not bool(finite[b, h, row]):
        what = "holds NaN or infinite values"
    elif float(lows[b, h, row]) < -tol:
        what = f"has a negative entry ({float(lows[b, h, row]):.3g})"
    else:
        what = f"has a row summing to {float(sums[b, h, row]):.6g}, not {int(want[b, 0, row])} (tolerance {tol:g})"
    raise ModelLoadError(
        f"layer {layer}, head {h} of {model}: P {what} on input {b} of the batch, row {row}; "
        "it is not a probability matrix (are the weights finite? a float16/bfloat16 overflow?), "
        "so its spectrum would be meaningless"
    )
