"""``longn``: an approximate full singular-value vector for long n, in O(n² k) instead of O(n³).

Why: every exact method of :func:`attnspec.spectra.engine.singular_values` costs order n³ per
matrix (at n = 4096 about a minute per matrix on the project's CPU, hours per input of a
30 × 9 model). This method returns a vector of all n singular values, descending, so every
curve, metric and the accumulator work unchanged, but only its top part is computed to
working precision; the rest is estimated.

Algorithm, per matrix P (r × c, r >= c; all matrices of a stack at once, float32 matmuls):

1. **Top b = k + oversample values** (block Krylov, Musco & Musco 2015): the left space
   K = [P Ω, (P Pᵀ) P Ω, ..., (P Pᵀ)^power P Ω] (r × b·(power + 1); Ω Gaussian c × b; each block
   orthonormalised), then the top b right Ritz vectors V (c × b) of Kᵀ P. The values kept
   are the singular values of P V, the Rayleigh–Ritz values on span V: lower bounds of
   σ_1..σ_b (interlacing), converged where the spectrum has decayed within the Krylov space.
2. **The rest** (the c − b values of P with span V projected out, i.e. the eigenvalues of
   A = (I − VVᵀ) Pᵀ P (I − VVᵀ), square-rooted). Their energy is exact and cheap:
   tr A = ‖P‖_F² − ‖P V‖_F². Their sum T = tr A^½ is estimated by stochastic Lanczos
   quadrature (SLQ, Ubaru, Chen & Saad 2017): ``probes`` Rademacher vectors z_j, projected
   off V, and ``steps`` Lanczos steps on A from each give a Gauss rule (nodes θ, weights w) of
   the spectral measure of A seen from z_j; x_j = ‖z_j‖² Σ w √θ estimates z_jᵀ A^½ z_j, whose
   mean over Rademacher z is T. The same rule gives y_j = z_jᵀ A z_j exactly (a degree-1
   polynomial), whose mean is the known tr A, so T̂ = mean(x) − β (mean(y) − tr A), with
   β = cov(x, y) / var(y) (a control variate: on real SmolLM2 P corr(x, y) ≈ 0.93–0.97, 8–16×
   less variance). The c − b values are the quantiles of the pooled quadrature measure (all
   probes' nodes, weights ‖z_j‖² w), log σ interpolated between the nodes, then bent by the
   one power γ (a·v^γ) that makes their sum T̂ and their energy tr A.

The result is sorted descending and clamped at 0: shape (..., min(r, c)), float64, CPU.

Cost per matrix: about b·(3·power + 3) + 2·probes·steps products of P (or Pᵀ) with a vector
(1,936 with the defaults: 2·n²·1,936 flops, 65 GFLOP at n = 4096 against about 230 GFLOP for
the exact ``gram``), batched as (m, n, n) @ (m, n, columns) matmuls, plus QRs of n × b·(power+1)
blocks. Extra memory: O(m · n · b · (power + 1)) floats beside the stack (64 MB for 9 heads
at n = 4096).

Error. What the method promises (tests/unit/test_longn.py checks each on known spectra):
a matrix of rank <= b is found exactly; Σσ̂² = ‖P‖_F² (when γ is inside [1/4, 4]); Σσ̂ is
within the per-matrix bound returned with ``return_error=True``, ERROR_SIGMAS standard
errors of T̂ over the probes (divided by Σσ̂), and so is the curve on the first k indices
(there |ĉ_i − c_i| <= |Σσ̂ − Σσ| / Σσ̂ once the top values have converged). Past k the
curve's error comes from the shape of the rest, which the quadrature resolves to roughly one
part in probes·steps of the rest's mass; that error is not bounded by the method, it is
measured against the exact engine on real SmolLM2 attention (benchmarks/bench_long_context.py;
attnspec.spectra.config.SVD_METHOD_ERROR["longn"], recorded in meta.json; docs/spectrum.md).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch

from attnspec.errors import InputError

#: Standard errors in the returned bound of Σσ: two-sided ≈ 99.5% per matrix for 8 probes
#: (Student's t, 7 degrees of freedom), ≈ 99.99% for many probes (normal).
ERROR_SIGMAS = 4.0


@dataclass(frozen=True)
class LongnParams:
    """Parameters of the ``longn`` method (recorded in meta.json)."""

    k: int = 128  # singular values computed to working precision (the top block is k + oversample)
    oversample: int = 16
    power: int = 2  # Krylov blocks beyond the first
    probes: int = 8  # Rademacher vectors of the SLQ estimate of the rest
    steps: int = 40  # Lanczos steps per probe (quadrature nodes per probe)
    seed: int = 0

    def check(self) -> LongnParams:
        for name in ("k", "probes", "steps"):
            if getattr(self, name) < 1:
                raise InputError(f"longn {name} must be >= 1, got {getattr(self, name)}")
        for name in ("oversample", "power"):
            if getattr(self, name) < 0:
                raise InputError(f"longn {name} must be >= 0, got {getattr(self, name)}")
        if self.probes < 2:
            raise InputError(f"longn probes must be >= 2 (the error estimate needs a spread), got {self.probes}")
        return self

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _tmul(p: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Pᵀ x for P (m, r, c) and x (m, r, q), as (xᵀ P)ᵀ: a batched ``p.mT @ x`` with few
    columns takes a slow strided path (10× slower at n = 2048, 8 columns, measured)."""
    return (x.mT @ p).mT


def _orth(y: torch.Tensor) -> torch.Tensor:
    """Orthonormal basis of the columns of each (m, n, b) block (reduced QR)."""
    return torch.linalg.qr(y, mode="reduced").Q


def _top(p: torch.Tensor, b: int, keep: int, power: int,
         gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Top ``keep`` (<= b) Rayleigh–Ritz values of P (m, r, c) from a block Krylov space.

    Left space K = [P Ω, (P Pᵀ) P Ω, ..., (P Pᵀ)^power P Ω] (m, r, b·(power + 1)), Ω Gaussian
    (c × b), each block orthonormalised (Musco & Musco 2015): it holds the top b singular
    directions far better than subspace iteration with the same products. Returns the
    singular values of P V (m, keep) descending, float64, the orthonormal right basis V
    (m, c, keep) of the top Ritz vectors, and ‖P V‖_F² (m,).
    """
    m, r, c = p.shape
    omega = torch.randn(m, c, b, generator=gen, dtype=p.dtype)
    blocks = [_orth(p @ omega)]  # each (m, r, b)
    for _ in range(power):
        blocks.append(_orth(p @ _tmul(p, blocks[-1])))
    q = _orth(torch.cat(blocks, dim=-1)) if power else blocks[0]  # (m, r, ≤ b(power+1))
    # right Ritz vectors of Qᵀ P (D × c): with Pᵀ Q = Q_r R (c × D, reduced QR) and R = U Σ Wᵀ,
    # Qᵀ P = W Σ (Q_r U)ᵀ, so they are Q_r U (an SVD of a D × D matrix instead of D × c)
    q_r, r_f = torch.linalg.qr(_tmul(p, q), mode="reduced")  # (m, c, D), (m, D, D)
    u = torch.linalg.svd(r_f.double()).U[..., :keep]  # (m, D, keep): top ``keep``, descending
    v = _orth(q_r @ u.to(p.dtype))  # (m, c, keep), orthonormal columns (re-orthonormalised in p's precision)
    pv = (p @ v).double()  # (m, r, b)
    s = torch.linalg.svdvals(pv)  # Rayleigh–Ritz values on span V, descending
    return s, v, (pv**2).sum(dim=(1, 2))


def _lanczos(p: torch.Tensor, v: torch.Tensor, z: torch.Tensor, steps: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Lanczos on A = (I − VVᵀ) Pᵀ P (I − VVᵀ) from each column of z (m, c, q), all at once.

    No reorthogonalisation: lost orthogonality only repeats converged nodes, and the Gauss
    rule of the measure stays accurate (Knizhnerman 1996; Chen, Trogdon & Ubaru 2021).

    Returns the tridiagonal coefficients alpha (m, q, s) and beta (m, q, s − 1), float64,
    with s <= ``steps`` (stops early where every probe's Krylov space is exhausted; a
    probe whose β vanishes keeps zeros, which add nodes of zero weight).
    """
    def apply(x: torch.Tensor) -> torch.Tensor:
        x = x - v @ (v.mT @ x)
        y = _tmul(p, p @ x)
        return y - v @ (v.mT @ y)

    q_prev = torch.zeros_like(z)
    q_cur = z / z.norm(dim=1, keepdim=True)
    alphas, betas = [], []
    beta = torch.zeros(z.shape[0], 1, z.shape[2], dtype=z.dtype)
    for i in range(steps):
        w = apply(q_cur)
        alpha = (q_cur * w).sum(dim=1, keepdim=True)
        w = w - alpha * q_cur - beta * q_prev
        alphas.append(alpha[:, 0].double())
        if i == steps - 1:
            break
        beta_new = w.norm(dim=1, keepdim=True)
        betas.append(beta_new[:, 0].double())
        if bool((beta_new <= 1e-7 * alpha.abs().clamp_min(1e-30)).all()):
            break
        q_prev, q_cur = q_cur, torch.where(beta_new > 0, w / beta_new.clamp_min(1e-30), torch.zeros_like(w))
        beta = beta_new
    a = torch.stack(alphas, dim=-1)  # (m, q, s)
    bt = torch.stack(betas[: a.shape[-1] - 1], dim=-1) if a.shape[-1] > 1 else a[..., :0]
    return a, bt


def _quadrature(alpha: torch.Tensor, beta: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Gauss rule of each tridiagonal: nodes θ (m, q, s) >= 0 and weights w (m, q, s) summing to 1."""
    t = torch.diag_embed(alpha) + torch.diag_embed(beta, 1) + torch.diag_embed(beta, -1)
    theta, vec = torch.linalg.eigh(t)
    return theta.clamp_min(0), vec[..., 0, :] ** 2


def _quantiles(nodes: torch.Tensor, mass: torch.Tensor, count: int) -> torch.Tensor:
    """``count`` values, descending: the quantiles of a discrete measure on √θ, one matrix.

    nodes, mass : (a,) the pooled quadrature atoms (θ, weight); the measure is rescaled to
    total mass ``count`` and the t-th value (t = 1..count) is read at cumulative mass t − ½
    from the piecewise-linear interpolation through each atom's mid-mass point.
    """
    sig = nodes.sqrt()
    order = torch.argsort(sig, descending=True)
    sig, mass = sig[order], mass[order]
    mass = mass * (count / mass.sum())
    mid = torch.cumsum(mass, 0) - mass / 2  # where each atom sits on the index axis
    t = torch.arange(count, dtype=torch.float64) + 0.5
    # log σ is interpolated: spectra of attention decay roughly exponentially past the top,
    # so between two atoms the values follow a geometric, not a linear, progression
    floor = float(sig[0]) * 1e-12 if float(sig[0]) > 0 else 1e-300
    logs = np.log(np.maximum(sig.numpy(), floor))
    vals = np.exp(np.interp(t.numpy(), mid.numpy(), logs))  # flat past the first and last atoms
    return torch.from_numpy(np.where(vals <= floor * 1.0000001, 0.0, vals))


def _match_masses(vals: torch.Tensor, nuclear: float, energy: float) -> torch.Tensor:
    """a · vals^γ with Σ = ``nuclear`` and, where some γ in [1/4, 4] allows it, Σ² = ``energy``.

    Both masses of the rest are known (the energy exactly, the nuclear mass as T̂); the
    quadrature's shape is bent by the one power γ that fits both (Σv^{2γ} / (Σv^γ)² rises
    with γ for a non-constant v, so bisection finds it), else the nearest end of the range.
    """
    pos = vals > 0
    if nuclear <= 0 or not bool(pos.any()):
        return torch.zeros_like(vals)
    lv = torch.where(pos, vals, torch.ones_like(vals)).log()
    lv = lv - lv[pos].max()  # scale-free: v / max v

    def ratio(g: float) -> float:
        e = torch.where(pos, (g * lv).exp(), torch.zeros_like(lv))
        return float((e**2).sum() / e.sum() ** 2)

    target = energy / nuclear**2
    lo, hi = 0.25, 4.0
    if ratio(lo) >= target:
        g = lo
    elif ratio(hi) <= target:
        g = hi
    else:
        for _ in range(40):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if ratio(mid) < target else (lo, mid)
        g = (lo + hi) / 2
    e = torch.where(pos, (g * lv).exp(), torch.zeros_like(lv))
    return e * (nuclear / float(e.sum()))


def longn_singular_values(probs: torch.Tensor, params: LongnParams | None = None, *,
                          return_error: bool = False) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """Approximate all singular values of each matrix of a stack (see the module docstring).

    Parameters
    ----------
    probs : Tensor, shape (..., r, c)
        Finite matrices (validated by the caller, :func:`attnspec.spectra.engine.singular_values`).
    params : LongnParams, optional
        Defaults: ``LongnParams()``.
    return_error : bool
        Also return, per matrix (shape (...)), the bound of the relative error of Σσ:
        ERROR_SIGMAS standard errors of the estimated rest mass T̂ over the probes, divided by
        Σσ̂. It bounds the curve's error on the first k indices too; past them the shape of
        the rest adds an error the method does not bound (measured: docs/spectrum.md).

    Returns
    -------
    Tensor, shape (..., min(r, c)), float64, CPU, descending, non-negative.
    """
    params = (params or LongnParams()).check()
    lead, r, c = probs.shape[:-2], probs.shape[-2], probs.shape[-1]
    p = probs.mT if r < c else probs
    r, c = max(r, c), min(r, c)
    p = p.reshape(-1, r, c).detach().cpu()
    if p.dtype not in (torch.float32, torch.float64):
        p = p.float()
    p = p.contiguous()
    m = p.shape[0]
    b = min(params.k + params.oversample, c)
    gen = torch.Generator().manual_seed(params.seed)
    # all k + oversample Ritz values are kept: deflating only the top k puts more mass in the
    # estimated rest (curve error 5.9e-3 instead of 4.1e-3 on real SmolLM2 P at n = 1024)
    top, v, top_energy = _top(p, b, b, params.power, gen)  # (m, b), (m, c, b), (m,)
    out = torch.zeros(m, c, dtype=torch.float64)
    err = torch.zeros(m, dtype=torch.float64)
    out[:, :b] = top
    rest = c - b
    if rest > 0:
        # ‖P‖_F² in float64, one matrix at a time (a float64 copy of the whole stack would add
        # 2 × 8·m·r·c bytes: 2.4 GB for a 9-head layer at n = 4096, measured)
        frob = torch.stack([torch.linalg.vector_norm(p[i], dtype=torch.float64) ** 2 for i in range(m)])
        tr_a = (frob - top_energy).clamp_min(0)  # exact trace of the deflated operator
        z = (torch.randint(0, 2, (m, c, params.probes), generator=gen, dtype=torch.int8) * 2 - 1).to(p.dtype)
        z = z - v @ (v.mT @ z)  # off the top subspace (A annihilates it)
        znorm2 = (z.double() ** 2).sum(dim=1)  # (m, q)
        alpha, beta = _lanczos(p, v, z, min(params.steps, rest))
        theta, w = _quadrature(alpha, beta)  # (m, q, s)
        x = znorm2 * (w * theta.sqrt()).sum(-1)  # (m, q): estimates of zᵀ A^½ z
        y = znorm2 * alpha[..., 0]  # zᵀ A z, exact up to rounding
        for i in range(m):
            xi, yi = x[i], y[i]
            vy = yi.var()
            beta_cv = (((xi - xi.mean()) * (yi - yi.mean())).mean() * len(yi) / (len(yi) - 1) / vy
                       if float(vy) > 0 else torch.tensor(0.0, dtype=torch.float64))
            resid = xi - beta_cv * (yi - tr_a[i])
            t_hat = float(resid.mean().clamp_min(0))
            se = float(resid.std() / len(resid) ** 0.5)
            vals = _quantiles(theta[i].reshape(-1), (znorm2[i, :, None] * w[i]).reshape(-1), rest)
            out[i, b:] = _match_masses(vals, t_hat, float(tr_a[i]))
            err[i] = ERROR_SIGMAS * se / max(float(out[i].sum()), 1e-300)
    sv, _ = torch.sort(out.clamp_min(0), dim=-1, descending=True)
    sv = sv.reshape(*lead, c)
    return (sv, err.reshape(lead)) if return_error else sv
