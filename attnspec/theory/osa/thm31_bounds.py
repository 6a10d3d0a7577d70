"""The right-hand sides of OSA Theorem 3.1's bounds (10) and (11) on ||YᵀY − I||₂, in closed form."""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch


def bound_10(s_norm: float, sigmas: Sequence[float] | torch.Tensor) -> float:
    """Right-hand side of Theorem 3.1 eq. (10): (e^{||S||₂} − 1)² max_i |σ_i²(σ_i² − 1)|.

    Parameters
    ----------
    s_norm : float
        ||S||₂.
    sigmas : sequence of float or Tensor (r,)
        The singular values of B.

    Returns
    -------
    float
        inf where (e^{||S||₂} − 1)² overflows float64.
    """
    sv = torch.as_tensor(sigmas, dtype=torch.float64)
    growth = _growth(s_norm)
    factor = float((sv**2 * (sv**2 - 1)).abs().max()) if sv.numel() else 0.0
    return growth * factor if factor > 0 else 0.0


def bound_11(s_norm: float) -> float:
    """Right-hand side of Theorem 3.1 eq. (11): ¼ (e^{||S||₂} − 1)².

    Parameters
    ----------
    s_norm : float
        ||S||₂.

    Returns
    -------
    float
        inf where it overflows float64.
    """
    return 0.25 * _growth(s_norm)


def _growth(s_norm: float) -> float:
    """(e^{||S||₂} − 1)², infinite where it overflows float64 (||S||₂ > ~354.9)."""
    try:
        return math.expm1(s_norm) ** 2
    except OverflowError:
        return math.inf
