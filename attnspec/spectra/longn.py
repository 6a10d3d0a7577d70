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

Cost per matrix: about b·(3·power + 4) + 2·probes·steps products of P (or Pᵀ) with a vector
(2,080 with the defaults: 2·n²·2,080 flops, 70 GFLOP at n = 4096 against about 230 GFLOP for
the exact ``gram``), batched as (m, n, n) @ (m, n, columns) matmuls, plus QRs of n × b·(power+1)
blocks. Extra memory: O(m · n · b · (power + 1)) floats beside the stack (64 MB for 9 heads
at n = 4096). A matrix whose σ₁² holds at least half of ‖P‖_F² (an attention sink) is computed
in float64: float32 rounding, about ε₃₂·σ₁ per product, would swamp its small values and is not
part of the bound below. That costs a float64 copy of the matrix and about twice the time.

Random draws. Each matrix's Ω and probes come from its own seed (``seeds``; the spectrum job
derives it from the input's token ids, the layer and the head: :func:`input_seeds`), so a
result does not depend on the batch, the shard or the order it was computed in.

Error. Every matrix gets an a-posteriori bound ε on the partial sums F_i = σ_1 + ... + σ_i,
computed from the run (``return_error=True``), and from it bounds on the curves:

* **Top block** (deterministic). With P V = U Σ̃ Wᵀ, in the bases [U, U⊥] and [VW, V⊥]
  P = [[Σ̃, E], [0, U⊥ᵀ P V⊥]] with E = Uᵀ P V⊥. By Mirsky's theorem (trace norm) the sorted
  union of Σ̃ and σ(P V⊥) is within 2‖E‖_* of σ(P) in ℓ1, hence in every partial sum. ‖E‖_* is
  computed (one more product Pᵀ U): small once the Krylov space holds the top directions.
* **The rest** (statistical). For sorted non-negative values, F is concave and its conjugate is
  G(τ) = Σ_i (σ_i − τ)_+ (τ >= 0); sup_i |F_i − F̂_i| <= sup_τ |G(τ) − Ĝ(τ)| (the Legendre
  transform is a sup-norm isometry). G_ρ(τ) = tr φ_τ(A), φ_τ(λ) = (√λ − τ)_+, is a trace of a
  continuous function, estimated by the same probes and Gauss rules at every τ of a grid of
  GRID + 1 points (with zᵀAz as control variate), with a margin of ERROR_SIGMAS standard errors
  over the probes plus the quadrature's own error (the change from the rule of half the steps);
  between grid points both G decrease, which bounds what the grid misses. ε_rest is the largest
  gap between that band and Ĝ of the returned rest.
* ε = 2‖E‖_* + ε_rest bounds every |F_i − F̂_i|, so |Σσ − Σσ̂| <= ε, the cumulative curve is within
  2ε / (Σσ̂ − ε) and the curve without σ₁ within 4ε / (Σσ̂ − σ̂₁ − 2ε) (1 where that is not positive).

The statistical part makes these bounds hold with high probability, not surely: their coverage
is measured on planted spectra (tests/unit/test_longn.py) and on real SmolLM2 attention
(benchmarks/bench_long_context.py), and stated with the run (attnspec.spectra.run_error). The
bound is dominated by the probes' spread, which falls as 1/√(probes · n); the energy Σσ̂² = ‖P‖_F²
is exact, and a matrix of rank <= k + oversample is found exactly. The metrics read from the
curves (effective rank, reach index, ...) are not bounded by the method.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch

from attnspec.errors import InputError
from attnspec.spectra.deflation import _dominated

#: Standard errors in the statistical part of the returned bounds: two-sided ≈ 99.3% at each τ
#: for 8 probes (Student's t, 6 degrees of freedom: q − 2, the control variate's β is fitted on
#: the same probes), ≈ 99.99% for many probes (normal).
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
        """Refuse parameters the method cannot run with.

        Returns
        -------
        LongnParams
            ``self``, unchanged.

        Raises
        ------
        InputError
            ``k``, ``steps`` < 1, ``probes`` < 2 (the error estimate needs a spread), or
            ``oversample``, ``power`` < 0.
        """
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
        """The parameters as a dict, as meta.json records them.

        Returns
        -------
        dict
            Field name → value.
        """
        return asdict(self)


def _tmul(p: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Pᵀ x for P (m, r, c) and x (m, r, q), as (xᵀ P)ᵀ: a batched ``p.mT @ x`` with few
    columns takes a slow strided path (10× slower at n = 2048, 8 columns, measured)."""
    return (x.mT @ p).mT


def _orth(y: torch.Tensor) -> torch.Tensor:
    """Orthonormal basis of the columns of each (m, n, b) block (reduced QR)."""
    return torch.linalg.qr(y, mode="reduced").Q


def _top(
    p: torch.Tensor, omega: torch.Tensor, keep: int, power: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Top ``keep`` (<= b) Rayleigh–Ritz values of P (m, r, c) from a block Krylov space.

    Left space K = [P Ω, (P Pᵀ) P Ω, ..., (P Pᵀ)^power P Ω] (m, r, b·(power + 1)), Ω (m, c, b)
    Gaussian, each block orthonormalised (Musco & Musco 2015): it holds the top b singular
    directions far better than subspace iteration with the same products. Returns the
    singular values of P V (m, keep) descending, float64, the orthonormal right basis V
    (m, c, keep) of the top Ritz vectors, ‖P V‖_F² (m,), and the nuclear norm of the
    coupling E = Uᵀ P (I − VVᵀ) (m,), float64, where P V = U Σ̃ Wᵀ: in the bases [U, U⊥] and
    [VW, V⊥], P = [[Σ̃, E], [0, U⊥ᵀ P V⊥]], so E is all that separates σ(P) from the union of
    Σ̃ and σ(P V⊥) (module docstring, "Error").
    """
    blocks = [_orth(p @ omega)]  # each (m, r, b)
    for _ in range(power):
        blocks.append(_orth(p @ _tmul(p, blocks[-1])))
    q = _orth(torch.cat(blocks, dim=-1)) if power else blocks[0]  # (m, r, ≤ b(power+1))
    # right Ritz vectors of Qᵀ P (D × c): with Pᵀ Q = Q_r R (c × D, reduced QR) and R = U Σ Wᵀ,
    # Qᵀ P = W Σ (Q_r U)ᵀ, so they are Q_r U (an SVD of a D × D matrix instead of D × c)
    q_r, r_f = torch.linalg.qr(_tmul(p, q), mode="reduced")  # (m, c, D), (m, D, D)
    u = torch.linalg.svd(r_f.double()).U[..., :keep]  # (m, D, keep): top ``keep``, descending
    v = _orth(q_r @ u.to(p.dtype))  # (m, c, keep), orthonormal columns (re-orthonormalised in p's precision)
    pv = p @ v  # (m, r, keep)
    lu, s, _ = torch.linalg.svd(pv.double(), full_matrices=False)  # Rayleigh–Ritz values on span V, descending
    # E^T = (I − VVᵀ) Pᵀ U (m, c, keep), U = the left Ritz vectors (columns of zero σ̃ carry no mass)
    pt_u = _tmul(p, lu.to(p.dtype))
    e_t = pt_u - v @ (v.mT @ pt_u)
    e_nuclear = torch.linalg.svdvals(e_t.double()).sum(-1)
    return s, v, (pv.double() ** 2).sum(dim=(1, 2)), e_nuclear


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


def _draws(seeds: list[int], c: int, b: int, probes: int, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """Each matrix's own random draws from its own seed: Ω (m, c, b) Gaussian, then z (m, c, probes)
    Rademacher. A matrix's draws depend on its seed only, never on the stack it came in; drawn
    row-major, so the first rows of a longer draw are a shorter one's (a zero-padded matrix sees
    the same draws on its real positions)."""
    omega, z = [], []
    for seed in seeds:
        gen = torch.Generator().manual_seed(int(seed))
        omega.append(torch.randn(c, b, generator=gen, dtype=dtype))
        z.append((torch.randint(0, 2, (c, probes), generator=gen, dtype=torch.int8) * 2 - 1).to(dtype))
    return torch.stack(omega), torch.stack(z)


def matrix_seeds(seed: int, count: int) -> list[int]:
    """Default per-matrix seeds when the caller names none: matrix i of the stack gets (seed, i).
    A caller whose stacks vary (batches, shards) passes :func:`input_seeds` instead.

    Parameters
    ----------
    seed : int
        The run's seed, >= 0.
    count : int
        The number of matrices in the stack.

    Returns
    -------
    list of int
        One seed in [0, 2**63) per matrix.
    """
    return [int(np.random.SeedSequence([seed, i]).generate_state(1, np.uint64)[0] >> 1) for i in range(count)]


def input_seeds(tokens: list[list[int]], layer: int, num_heads: int, seed: int = LongnParams.seed) -> torch.Tensor:
    """Seeds (B, H) for the matrices of one layer of a batch, each from its own input alone.

    Matrix (input b, layer, head h) gets a seed from the SHA-256 of input b's token ids, the
    layer, the head and ``seed``: the same input gives the same draws whatever batch, shard or
    order it is computed in, so a longn result does not depend on them.

    Parameters
    ----------
    tokens : list of list of int
        The batch's inputs' token ids (B inputs).
    layer : int
        The layer, 0-based.
    num_heads : int
        H, the layer's number of heads.
    seed : int
        The run's seed (default: :class:`LongnParams`' seed, 0).

    Returns
    -------
    torch.Tensor of int64, shape (B, H)
        Seeds in [0, 2**63).
    """
    out = torch.empty(len(tokens), num_heads, dtype=torch.int64)
    for i, ids in enumerate(tokens):
        digest = hashlib.sha256(np.asarray(ids, dtype=np.int64).tobytes()).digest()
        key = [int.from_bytes(digest[j : j + 4], "little") for j in range(0, 16, 4)]
        for h in range(num_heads):
            out[i, h] = int(np.random.SeedSequence([*key, seed, layer, h]).generate_state(1, np.uint64)[0] >> 1)
    return out


#: Points of the τ grid on which the rest's bound is checked: G_r̂ drops by Σr̂ / GRID between two
#: of them, which bounds what the grid can miss (module docstring, "Error").
GRID = 4096


def _excess(desc: np.ndarray, taus: np.ndarray) -> np.ndarray:
    """G(τ) = Σ_i (v_i − τ)_+ at each τ, for values ``desc`` (a,) sorted descending; taus (T,) -> (T,)."""
    cum = np.concatenate([[0.0], np.cumsum(desc)])  # (a + 1,)
    above = desc.size - np.searchsorted(desc[::-1], taus, side="right")  # #{v > τ}
    return np.maximum(cum[above] - above * taus, 0.0)


def _tau_grid(desc: np.ndarray, top: float) -> np.ndarray:
    """τ values (ascending) at which G_r̂ takes GRID + 1 equally spaced levels from Σr̂ to 0, plus ``top``."""
    k = np.arange(1, desc.size + 1)
    g_at = np.concatenate([np.cumsum(desc) - k * desc, [desc.sum()]])  # G at τ = v_k, then at τ = 0: increasing
    at = np.concatenate([desc, [0.0]])
    levels = np.linspace(0.0, float(desc.sum()), GRID + 1)
    return np.unique(np.concatenate([np.interp(levels, g_at, at), [0.0, top]]))


def _rest_bound(
    rest: torch.Tensor,
    theta: torch.Tensor,
    w: torch.Tensor,
    theta_half: torch.Tensor,
    w_half: torch.Tensor,
    znorm2: torch.Tensor,
    y: torch.Tensor,
    tr_a: float,
) -> float:
    """ε_rest ≥ sup_τ |G_ρ(τ) − G_r̂(τ)| for one matrix, at ERROR_SIGMAS standard errors (module docstring).

    rest : (a,) the returned rest values r̂; theta, w : (q, s) each probe's Gauss rule of A;
    theta_half, w_half : (q, s') the rules from the first half of the Lanczos steps; znorm2, y :
    (q,) ‖z_j‖² and z_jᵀ A z_j; tr_a : tr A. G_ρ(τ) = tr φ_τ(A), φ_τ(λ) = (√λ − τ)_+, is estimated on
    a grid of τ per probe (x_j(τ) = ‖z_j‖² Σ w (√θ − τ)_+, with y as control variate), with a
    margin of ERROR_SIGMAS standard errors over the probes plus the quadrature's own error
    (estimated by the change from the half-step rule); between grid points both G decrease.
    """
    desc = torch.sort(rest, descending=True).values.numpy()
    top = max(float(theta.max().clamp_min(0).sqrt()), float(desc[0]) if desc.size else 0.0)
    if top <= 0:
        return 0.0
    taus = torch.from_numpy(_tau_grid(desc, top))  # (T,) ascending

    def per_probe(th: torch.Tensor, wt: torch.Tensor) -> torch.Tensor:  # (q, T): x_j(τ)
        return znorm2[:, None] * (wt[:, None, :] * (th.sqrt()[:, None, :] - taus[None, :, None]).clamp_min(0)).sum(-1)

    x, x_half = per_probe(theta, w), per_probe(theta_half, w_half)
    q = x.shape[0]
    dy = y - y.mean()
    vy = float((dy**2).sum())
    beta = (dy[:, None] * (x - x.mean(0))).sum(0) / vy if vy > 0 else torch.zeros(x.shape[1], dtype=torch.float64)
    resid = x - beta[None, :] * (y - tr_a)[:, None]  # (q, T): control-variate estimates of G_ρ(τ)
    est = resid.mean(0)
    # β was fitted on the same q probes: the residuals keep q − 2 degrees of freedom
    se = ((resid - est) ** 2).sum(0).div(max(q - 2, 1)).sqrt() / q**0.5
    margin = ERROR_SIGMAS * se + (x.mean(0) - x_half.mean(0)).abs()
    upper, lower = est + margin, (est - margin).clamp_min(0)
    g_hat = torch.from_numpy(_excess(desc, taus.numpy()))
    at_points = torch.maximum(upper - g_hat, g_hat - lower)  # (T,)
    # on [τ_a, τ_b] both G's lie between their values at the ends (both decrease in τ)
    between = torch.maximum(upper[:-1] - g_hat[1:], g_hat[:-1] - lower[1:])
    beyond = torch.maximum(upper[-1:], g_hat[-1:])  # τ past the grid: both in [0, their value at its end]
    return float(torch.cat([at_points, between, beyond]).max())


def _stack(p: torch.Tensor, seed_list: list[int], params: LongnParams) -> tuple[torch.Tensor, torch.Tensor]:
    """Values (m, c) float64 (unsorted: top block, then the rest) and ε (m,) of a (m, r, c) stack."""
    m, r, c = p.shape
    b = min(params.k + params.oversample, c)
    omega, z = _draws(seed_list, c, b, params.probes, p.dtype)  # (m, c, b), (m, c, q)
    # all k + oversample Ritz values are kept: deflating only the top k puts more mass in the
    # estimated rest (curve error 5.9e-3 instead of 4.1e-3 on real SmolLM2 P at n = 1024)
    top, v, top_energy, e_nuclear = _top(p, omega, b, params.power)  # (m, b), (m, c, b), (m,), (m,)
    out = torch.zeros(m, c, dtype=torch.float64)
    eps = 2 * e_nuclear  # (m,) ε: the top block's part (module docstring, "Error")
    out[:, :b] = top
    rest = c - b
    if rest > 0:
        # ‖P‖_F² in float64, one matrix at a time (a float64 copy of the whole stack would add
        # 2 × 8·m·r·c bytes: 2.4 GB for a 9-head layer at n = 4096, measured)
        frob = torch.stack([torch.linalg.vector_norm(p[i], dtype=torch.float64) ** 2 for i in range(m)])
        tr_a = (frob - top_energy).clamp_min(0)  # exact trace of the deflated operator
        z = z - v @ (v.mT @ z)  # off the top subspace (A annihilates it)
        znorm2 = (z.double() ** 2).sum(dim=1)  # (m, q)
        alpha, beta = _lanczos(p, v, z, min(params.steps, rest))
        theta, w = _quadrature(alpha, beta)  # (m, q, s)
        half = max(1, alpha.shape[-1] // 2)
        theta_h, w_h = _quadrature(alpha[..., :half], beta[..., : half - 1])  # the half-step rules (m, q, half)
        x = znorm2 * (w * theta.sqrt()).sum(-1)  # (m, q): estimates of zᵀ A^½ z
        y = znorm2 * alpha[..., 0]  # zᵀ A z, exact up to rounding
        for i in range(m):
            xi, yi = x[i], y[i]
            vy = yi.var()
            beta_cv = (
                ((xi - xi.mean()) * (yi - yi.mean())).mean() * len(yi) / (len(yi) - 1) / vy
                if float(vy) > 0
                else torch.tensor(0.0, dtype=torch.float64)
            )
            resid = xi - beta_cv * (yi - tr_a[i])
            # Cauchy–Schwarz: the rest's c − b values with energy tr A sum to at most √((c − b) tr A)
            t_hat = min(float(resid.mean().clamp_min(0)), (rest * float(tr_a[i])) ** 0.5)
            vals = _quantiles(theta[i].reshape(-1), (znorm2[i, :, None] * w[i]).reshape(-1), rest)
            out[i, b:] = _match_masses(vals, t_hat, float(tr_a[i]))
            eps[i] += _rest_bound(out[i, b:], theta[i], w[i], theta_h[i], w_h[i], znorm2[i], yi, float(tr_a[i]))
    return out, eps


def longn_singular_values(
    probs: torch.Tensor,
    params: LongnParams | None = None,
    *,
    seeds: torch.Tensor | list[int] | None = None,
    return_error: bool = False,
) -> torch.Tensor | tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Approximate all singular values of each matrix of a stack (see the module docstring).

    Parameters
    ----------
    probs : Tensor, shape (..., r, c)
        Finite matrices (validated by the caller, :func:`attnspec.spectra.engine.singular_values`).
    params : LongnParams, optional
        Defaults: ``LongnParams()``.
    seeds : int tensor or list, shape (...), optional
        One seed per matrix: its random draws come from it alone, so a matrix's result does
        not depend on the stack it came in. Default: :func:`matrix_seeds` (``params.seed``,
        position in the stack).
    return_error : bool
        Also return per-matrix error bounds (module docstring, "Error"), each of shape (...),
        float64: ``curve`` bounds max_i |ĉ_i − c_i| of the cumulative curve, ``tail_curve`` that
        of the curve without σ₁, ``nuclear`` |Σσ̂ − Σσ| / Σσ̂, ``partial_sums`` ε itself.

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
    if seeds is None:
        seed_list = matrix_seeds(params.seed, m)
    else:
        seed_list = [int(x) for x in torch.as_tensor(seeds).reshape(-1).tolist()]
        if len(seed_list) != m:
            raise InputError(
                f"longn needs one seed per matrix: {m} matrices of shape {tuple(lead)}, got {len(seed_list)} seeds"
            )
    # float32 products carry rounding of about ε₃₂·σ₁ per entry; where σ₁ dominates (an attention
    # sink) that floor swamps the small values of the rest, so those matrices are computed in float64
    dominated = _dominated(p) if p.dtype == torch.float32 else torch.zeros(m, dtype=torch.bool)
    out = torch.zeros(m, c, dtype=torch.float64)
    eps = torch.zeros(m, dtype=torch.float64)
    for group in (~dominated, dominated):
        idx = torch.nonzero(group).reshape(-1)
        if idx.numel() == 0:
            continue
        sub = p if idx.numel() == m else p[idx]
        sub = sub.double().contiguous() if bool(dominated[idx[0]]) else sub
        out[idx], eps[idx] = _stack(sub, [seed_list[i] for i in idx.tolist()], params)
    sv, _ = torch.sort(out.clamp_min(0), dim=-1, descending=True)
    if not return_error:
        return sv.reshape(*lead, c)
    total = sv.sum(-1)
    tail_total = total - sv[:, 0]

    # |F − F̂| <= ε at every index (F the partial sums), so |Σσ − Σσ̂| <= ε and
    # |c_i − ĉ_i| <= (|F_i − F̂_i| + ĉ_i |Σσ − Σσ̂|) / Σσ <= 2ε / (Σσ̂ − ε); the σ₁-less sums move by 2ε
    def ratio(num: torch.Tensor, den: torch.Tensor) -> torch.Tensor:
        return torch.where(den > 0, (num / den.clamp_min(1e-300)).clamp_max(1.0), torch.ones_like(num))

    bounds = {
        "curve": ratio(2 * eps, total - eps),
        "tail_curve": ratio(4 * eps, tail_total - 2 * eps),
        "nuclear": ratio(eps, total),
        "partial_sums": eps,
    }
    return sv.reshape(*lead, c), {k: t.reshape(lead) for k, t in bounds.items()}
