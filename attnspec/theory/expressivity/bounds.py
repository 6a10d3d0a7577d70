"""The formulas of the notes: error bounds of the reduction, JL failure bounds and the
dimensions they imply, with the exact worst cases and laws they are compared against.

Notation: ``m <= A_ij <= M`` on the support S, ``B = log(A / eps)`` on S, ``Â = eps e^{B̂}``,
``δ`` a bound on ``||B − B̂||_∞`` (the notes' ε'), ``ε`` (``eps_jl``) the JL distortion.
"""

from __future__ import annotations

import math

import numpy as np

from attnspec.errors import InputError, check_range
from attnspec.theory.expressivity.construction import factorize
from attnspec.theory.expressivity.params import PROJECTIONS, check_choice, check_int


def bound_on_support(M: float, delta: float) -> float:
    """The notes' bound on S: ``|Â_ij − A_ij| <= M e^δ δ`` whenever ``||B − B̂||_∞ <= δ``.

    Parameters
    ----------
    M : float
        The largest entry of A.
    delta : float
        The bound δ on ``||B − B̂||_∞``.

    Returns
    -------
    float
    """
    return float(M * math.exp(delta) * delta)


def exact_on_support(M: float, delta: float) -> float:
    """The exact worst case on S: ``max |Â − A| = M (e^δ − 1)`` (A_ij = M, B̂_ij = B_ij + δ).

    Parameters
    ----------
    M, delta : float

    Returns
    -------
    float
    """
    return float(M * math.expm1(delta))


def bound_off_support(eps: float, delta: float) -> tuple[float, float]:
    """Off S, ``Â_ij = eps e^{B̂_ij}`` with |B̂_ij| <= δ: the range [eps e^{-δ}, eps e^{δ}].

    Parameters
    ----------
    eps, delta : float

    Returns
    -------
    (low, high) : floats
    """
    return float(eps * math.exp(-delta)), float(eps * math.exp(delta))


def bound_san_off_mass(L: int, k: int, m: float, eps: float, delta: float) -> float:
    """Largest SAN mass outside S in a row when ``||B − B̂||_∞ <= δ`` (k nonzeros >= m per row).

    ``(L − k) eps e^δ / ((L − k) eps e^δ + k m e^{−δ})``; 0 when k = L.

    Parameters
    ----------
    L, k : int
    m, eps, delta : float

    Returns
    -------
    float in [0, 1)
    """
    off = (L - k) * eps * math.exp(delta)
    return float(off / (off + k * m * math.exp(-delta))) if L > k else 0.0


def jl_failure_bound(L: int, d: int, eps_jl: float) -> float:
    """Gaussian JL bound on P(∃ i, j: |⟨Rb1_i, Rb2_j⟩ − ⟨b1_i, b2_j⟩| > ε‖b1_i‖‖b2_j‖).

    ``2 n exp(−ε² d / 8)`` with n = 2L² vectors u_i ± v_j (notes' lemma + polarisation +
    union bound), capped at 1.

    Parameters
    ----------
    L, d : int
    eps_jl : float

    Returns
    -------
    float in (0, 1]
    """
    return float(min(1.0, 4.0 * L * L * math.exp(-eps_jl * eps_jl * d / 8.0)))


def orthogonal_failure_bound(L: int, d: int, eps_jl: float, c: float) -> float:
    """The orthogonal variant's bound ``2 (1 − 1/(L+2)) exp(−c ε² d)`` (c unspecified in the notes).

    Parameters
    ----------
    L, d : int
    eps_jl, c : float

    Returns
    -------
    float (not capped at 1)
    """
    return float(2.0 * (1.0 - 1.0 / (L + 2)) * math.exp(-c * eps_jl * eps_jl * d))


def exact_jl_deviation(L: int, d: int, eps_jl: float, projection: str = "gaussian", *, scaled: bool = True) -> float:
    """Exact P(|‖Ru‖² − ‖u‖²| >= ε‖u‖²) for one fixed u ∈ R^L (the notes' lemma).

    Gaussian R = P/sqrt(d): ‖Ru‖²/‖u‖² ~ χ²_d / d. Orthogonal R = sqrt(L/d) Qᵀ (Q Haar,
    L×d): ‖Ru‖²/‖u‖² = (L/d) X with X ~ Beta(d/2, (L − d)/2) (X = 1 at d = L); with
    ``scaled=False`` R = Qᵀ as the notes write it (R^ort = Q), and the ratio is X itself
    (mean d/L: norms shrink).

    Parameters
    ----------
    L, d : int, 1 <= d (<= L for orthogonal)
    eps_jl : float > 0
    projection : {"gaussian", "orthogonal"}
    scaled : bool, orthogonal only: include the factor sqrt(L/d)

    Returns
    -------
    float, the probability
    """
    check_int("d", d, 1)
    return float(exact_jl_deviation_curve(L, np.array([d]), eps_jl, projection, scaled=scaled)[0])


def exact_jl_deviation_curve(
    L: int, ds: np.ndarray, eps_jl: float, projection: str = "gaussian", *, scaled: bool = True
) -> np.ndarray:
    """:func:`exact_jl_deviation` at every d of ``ds`` at once (one vectorised scipy call).

    Parameters
    ----------
    L : int
    ds : array of int, 1 <= d (<= L for orthogonal)
    eps_jl, projection, scaled : as :func:`exact_jl_deviation`

    Returns
    -------
    ndarray of shape ds.shape, the probabilities
    """
    from scipy import stats as sps

    check_range("eps_jl", eps_jl, low=0, low_open=True)
    check_choice("projection", projection, PROJECTIONS)
    d = np.asarray(ds, dtype=float)
    if projection == "gaussian":
        return sps.chi2.cdf(d * (1 - eps_jl), d) + sps.chi2.sf(d * (1 + eps_jl), d)
    if np.any(d > L) or np.any(d < 1):
        raise InputError(f"d must be in [1, L={L}] for orthogonal projections, got d={d[(d > L) | (d < 1)][0]:g}")
    out = np.zeros_like(d)
    below = d < L  # d = L: the ratio is exactly 1 (scaled) -> probability 0
    a, b = d[below] / 2, (L - d[below]) / 2
    s = d[below] / L if scaled else 1.0
    out[below] = sps.beta.cdf(s * (1 - eps_jl), a, b) + sps.beta.sf(s * (1 + eps_jl), a, b)
    return out


def jl_norm_moments(L: int, d: int, projection: str = "gaussian", *, scaled: bool = True) -> tuple[float, float]:
    """Exact mean and variance of ``‖Ru‖² / ‖u‖²`` for a fixed u ∈ R^L (the laws of
    :func:`exact_jl_deviation`).

    Gaussian: mean 1, variance 2/d. Orthogonal: mean d/L, variance 2 d (L − d) / (L² (L + 2));
    scaled, mean 1 and variance ``2 (L − d) / (d (L + 2))``, the Gaussian one times
    ``(L − d)/(L + 2)``.

    Parameters
    ----------
    L, d, projection, scaled : as :func:`exact_jl_deviation`

    Returns
    -------
    (mean, variance) : floats
    """
    check_int("d", d, 1)
    check_choice("projection", projection, PROJECTIONS)
    if projection == "gaussian":
        return 1.0, 2.0 / d
    if d > L:
        raise InputError(f"d must be in [1, L={L}] for orthogonal projections, got d={d}")
    mean, var = d / L, 2.0 * d * (L - d) / (L * L * (L + 2))
    if scaled:
        return mean * L / d, var * (L / d) ** 2
    return mean, var


def dimension_jl(L: int, eps_jl: float, beta: float) -> int:
    """Smallest d with ``4 L² exp(−ε² d / 8) <= β``: ``⌈8 ln(4 L² / β) / ε²⌉``.

    Parameters
    ----------
    L : int
    eps_jl, beta : float

    Returns
    -------
    int
    """
    return int(math.ceil(8.0 * math.log(4.0 * L * L / beta) / (eps_jl * eps_jl)))


def dimension_stated(L: int, k: int, M: float, delta: float, C: float = 1.0) -> float:
    """The notes' ``d = C M² k log L / ε'`` (ε' = δ; C the unknown constant).

    Parameters
    ----------
    L, k : int
    M, delta : float
    C : float, the constant (1 by default)

    Returns
    -------
    float
    """
    return float(C * M * M * k * math.log(L) / delta)


def eps_jl_needed(B: np.ndarray, delta: float, factorization: str = "row") -> float:
    """The JL ε that guarantees ``||B − B̂||_∞ <= δ``: ``δ / (max_i ‖b1_i‖ max_j ‖b2_j‖)``.

    Parameters
    ----------
    B : array of shape (L, L)
    delta : float > 0
    factorization : {"row", "column"}

    Returns
    -------
    float
    """
    B1, B2 = factorize(B, factorization)
    n1 = np.linalg.norm(B1, axis=1).max()
    n2 = np.linalg.norm(B2, axis=1).max()
    return float(delta / (n1 * n2))


def eps_jl_paper(B: np.ndarray, delta: float, factorization: str = "row") -> float:
    """The notes' JL ε: ``δ / (√k max|B_ij|)``, k the most nonzeros in a row of B (row
    factorization) or a column (column factorization).

    The notes bound ‖b1_i‖ by "O(√k M), M a sup of the coefficients" (of B); the polarisation
    step only needs the smaller ``max‖b1_i‖ max‖b2_j‖`` (:func:`eps_jl_needed`).

    Parameters
    ----------
    B, delta, factorization : as :func:`eps_jl_needed`

    Returns
    -------
    float
    """
    check_choice("factorization", factorization, ("row", "column"))
    nz = (B != 0).sum(axis=1 if factorization == "row" else 0)
    k = max(1, int(nz.max()))
    bmax = float(np.abs(B).max())
    if bmax == 0:
        return math.inf
    return float(delta / (math.sqrt(k) * bmax))


def pair_log_tail(rho: np.ndarray, x: np.ndarray, d: int) -> np.ndarray:
    """Chernoff bound, natural log, on ``P(⟨Ru, Rv⟩ − ρ >= x)`` for unit u, v with ⟨u, v⟩ = ρ.

    For Gaussian R = P/√d (d×L), ``d⟨Ru, Rv⟩ = Σ_r a_r c_r`` with (a_r, c_r) i.i.d. standard
    normal pairs of correlation ρ, and ``a c = ((1+ρ)/2) U² − ((1−ρ)/2) V²`` (U, V
    independent N(0, 1)): the cumulant generating function is
    ``Λ(t) = −½ log(1 − 2ρt − (1 − ρ²)t²)`` on ``(−1/(1−ρ), 1/(1+ρ))``. The bound is
    ``−d sup_t (t(ρ + x) − Λ(t))`` (the exact rate of the inner-product law; the sup is the
    root of a quadratic, closed form). The lower tail is this with ρ → −ρ.

    Parameters
    ----------
    rho : array, in [−1, 1]
    x : array, > 0 (broadcast with rho)
    d : int >= 1

    Returns
    -------
    ndarray, log of the bound (−inf where the event is impossible), <= 0
    """
    rho = np.clip(np.asarray(rho, dtype=float), -1.0, 1.0)
    x = np.asarray(x, dtype=float)
    y = rho + x
    one = 1.0 - rho * rho
    a, b, c = y * one, 2.0 * rho * y + one, rho - y
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        disc = np.sqrt(np.maximum(b * b - 4.0 * a * c, 0.0))
        den = b + disc
        t = np.where(den > 0, -2.0 * c / den, np.inf)  # the positive root, stable form
        q = 1.0 - 2.0 * rho * t - one * t * t
        rate = np.where(np.isfinite(t) & (q > 0), t * y + 0.5 * np.log(q), np.inf)
    return np.minimum(0.0, -d * rate)


def pairs_log_union_bound(
    B: np.ndarray, d: int, *, allowance: float, relative: bool, factorization: str = "row"
) -> float:
    """Natural log of an upper bound on the true ``P(∃ i, j: |(B̂ − B)_ij| > a_ij)``, Gaussian R.

    The union over the L² pairs of :func:`pair_log_tail` (both tails): every term is the
    Chernoff bound of that pair's exact inner-product law, so the sum bounds the true
    probability from above (no Monte Carlo). ``relative``: ``a_ij = allowance ·
    ‖b1_i‖‖b2_j‖`` (the per-pair JL condition with ε = allowance); otherwise ``a_ij =
    allowance`` (‖B − B̂‖∞ > δ with δ = allowance).

    Parameters
    ----------
    B : array of shape (L, L), the target logits
    d : int >= 1
    allowance : float > 0
    relative : bool
    factorization : {"row", "column"}

    Returns
    -------
    float, log of the bound (may be far below the float range: that is why it is a log)
    """
    B1, B2 = factorize(B, factorization)
    n1 = np.linalg.norm(B1, axis=1)  # (L,)
    n2 = np.linalg.norm(B2, axis=1)  # (L,)
    L = B.shape[0]
    terms: list[np.ndarray] = []
    # the pairs on the support of B: their own ρ; (B1 B2ᵀ)_ij = B_ij
    i, j = np.nonzero(B)
    scale = n1[i] * n2[j]
    rho = B[i, j] / scale
    x = np.full(rho.shape, allowance) if relative else allowance / scale
    terms += [pair_log_tail(rho, x, d), pair_log_tail(-rho, x, d)]
    # off the support ρ = 0 and the pair law depends only on x: count the pairs per row
    # (B2 = I, ‖b2_j‖ = 1) or per column (B1 = I)
    zero_row = n1 == 0
    off_per_row = L - (B != 0).sum(1)
    off_per_col = L - (B != 0).sum(0)
    if factorization == "row":
        keep = ~zero_row & (off_per_row > 0)
        xo = np.full(keep.sum(), allowance) if relative else allowance / n1[keep]
        terms.append(math.log(2.0) + np.log(off_per_row[keep]) + pair_log_tail(0.0 * xo, xo, d))
    else:
        keep = (n2 > 0) & (off_per_col > 0)
        xo = np.full(keep.sum(), allowance) if relative else allowance / n2[keep]
        terms.append(math.log(2.0) + np.log(off_per_col[keep]) + pair_log_tail(0.0 * xo, xo, d))
    allt = np.concatenate([np.atleast_1d(t).ravel() for t in terms])
    allt = allt[np.isfinite(allt)]
    if allt.size == 0:
        return -math.inf
    mx = float(allt.max())
    return mx + math.log(float(np.exp(allt - mx).sum()))
