"""Random instances shared by the OSA checks, and the tolerances every check uses.

An *instance* is a reproducible (X, W_Q, W_K) in float64 (:func:`make_instance`); each
check records the seed of every instance in its table, so any row can be recomputed.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from attnspec.errors import InputError
from attnspec.numerics.linalg import Coefficients, sample_stiefel
from attnspec.numerics.stats import spawn_seeds, torch_generator
from attnspec.theory.osa.layer import init_qk, init_vo
from attnspec.verdicts.numbers import param_text

#: Absolute tolerance of a float64 identity between orthogonal N×N matrices (entries <= 1).
F64_TOL = 1e-10
#: Relative slack for rounding when comparing a float64 measurement with a bound.
BOUND_RTOL = 1e-9
#: Absolute floor: an exactly orthogonal Y evaluates to ||YᵀY − I||₂ ~ 1e-15..1e-13 in float64.
BOUND_ATOL = 1e-12

WEIGHT_LAWS: tuple[str, ...] = ("stiefel", "gaussian")
#: Extra law for Theorem 2.1 only: W_K = W_Q O (O orthogonal), so span(K) = span(Q) and
#: M = [Q, K] has rank d_v < 2 d_v (the basis then has more columns than rank(S)).
SHARED_SPAN = "shared-span"


def make_instance(
    seed: int, n: int, d: int, d_v: int, weights: str = "stiefel", x_scale: float = 1.0
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A reproducible instance (X, W_Q, W_K) in float64.

    Parameters
    ----------
    seed : int
    n, d, d_v : int
    weights : {"stiefel", "gaussian", "shared-span"}
        The paper's initialisation (needs 2 d_v <= d), iid N(0, 1/d) entries (a generic
        trained-like layer), or W_K = W_Q O (span(K) = span(Q), rank[Q, K] = d_v).
    x_scale : float
        X has iid N(0, x_scale²/d) entries (tokens of norm ≈ x_scale).

    Returns
    -------
    x : Tensor (n, d)
    w_q, w_k : Tensor (d, d_v)
    """
    if weights not in WEIGHT_LAWS + (SHARED_SPAN,):
        raise InputError(f"weights must be one of {', '.join(WEIGHT_LAWS + (SHARED_SPAN,))}, got {weights!r}")
    g = torch_generator(seed)
    x = torch.randn(n, d, generator=g, dtype=torch.float64) * (x_scale / math.sqrt(d))
    if weights == SHARED_SPAN:
        w_q = torch.randn(d, d_v, generator=g, dtype=torch.float64) / math.sqrt(d)
        o = sample_stiefel(d_v, d_v, g, dtype=torch.float64)
        return x, w_q, w_q @ o
    if weights == "stiefel":
        w_q, w_k = init_qk(d, d_v, 1, g, torch.float64)
        return x, w_q[0], w_k[0]
    w = torch.randn(2, d, d_v, generator=g, dtype=torch.float64) / math.sqrt(d)
    return x, w[0], w[1]


def vec(m: torch.Tensor) -> torch.Tensor:
    """Column-major vec of a (rows, cols) matrix, as in the paper.

    Parameters
    ----------
    m : Tensor (rows, cols)

    Returns
    -------
    Tensor (rows · cols,)
    """
    return m.mT.reshape(-1)


def instance_label(**kw: object) -> str:
    """``k=v, ...`` for evidence strings (values as :func:`attnspec.verdicts.numbers.param_text`
    writes them: a whole float as an integer, another to 4 significant digits).

    Parameters
    ----------
    **kw : object
        The parameters, in order.

    Returns
    -------
    str
    """
    return ", ".join(f"{k}={param_text(v)}" for k, v in kw.items())


def schedule_name(c: Coefficients) -> str:
    """A schedule's display name: its name, or ``custom(a,b;a,b,c)`` for coefficients.

    Parameters
    ----------
    c : str or tuple or list of tuples

    Returns
    -------
    str
    """
    if isinstance(c, str):
        return c
    seq = list(c)
    steps = [seq] if all(isinstance(v, (int, float)) for v in seq) else seq
    return "custom(" + ";".join(",".join(f"{float(v):g}" for v in s) for s in steps) + ")"


def effective_condition(m: torch.Tensor, rtol: float = 1e-10) -> tuple[float, int, float, float]:
    """κ(M) = σ_max / σ_min>0, the paper's effective condition number (footnote 4).

    Parameters
    ----------
    m : Tensor (rows, cols)
    rtol : float
        σ counts as zero below ``rtol · σ_max``.

    Returns
    -------
    tuple
        (κ, numerical rank, smallest nonzero σ, largest σ).
    """
    kappa, rank, smin, smax = conditions(torch.linalg.svdvals(m.to(torch.float64))[None], rtol)
    return float(kappa[0]), int(rank[0]), float(smin[0]), float(smax[0])


def conditions(sv: torch.Tensor, rtol: float = 1e-10) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`effective_condition` of a batch, from its singular values.

    Parameters
    ----------
    sv : Tensor (B, k)
        Each matrix's singular values, descending.
    rtol : float
        σ counts as zero below ``rtol · σ_max``.

    Returns
    -------
    tuple of ndarray (B,)
        κ, numerical rank, smallest nonzero σ, largest σ.
    """
    smax = sv[:, 0]
    nz = sv > rtol * smax[:, None]
    smin = torch.where(nz, sv, torch.full_like(sv, math.inf)).min(-1).values
    return ((smax / smin).numpy(), nz.sum(-1).numpy(), smin.numpy(), smax.numpy())


def multihead_vo_condition(d_model: int, heads: int, draws: int, seed: int) -> np.ndarray:
    """κ(Σ_h W_V,h W_O,h) under the Sec. 4.1 initialisation (d_v = d_model / heads), per draw.

    As alpha → 0 every A_h → I and the multihead Jacobian tends to (Σ_h W_V,h W_O,h)ᵀ ⊗ I_N,
    so this is the limit of κ(J) for the multihead layer.

    Parameters
    ----------
    d_model, heads, draws, seed : int

    Returns
    -------
    ndarray (draws,)
    """
    out = []
    for s in spawn_seeds(seed, draws):
        w_v, w_o = init_vo(d_model, d_model // heads, heads, s, torch.float64)
        out.append(effective_condition(sum(w_v[h] @ w_o[h] for h in range(heads)))[0])
    return np.asarray(out)
