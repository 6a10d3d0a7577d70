"""Linformer's Lemma 1 (Appendix A, eqs. 11–12, "from Arriaga & Vempala 2006"): exact laws and Monte Carlo.

The statements and their readings are claims ``linformer.lemma1.eq11`` and ``eq12`` (:mod:`.claims`).

Exact laws, each stated where it is computed: χ²_k for Gaussian R (eq. 11), a difference of
two χ²_k for eq. 12 (:func:`inner_product_failure_exact`), Beta for Haar rows, Binomial for the
discrete families on a coordinate vector.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
from scipy import special

from attnspec.errors import InputError, check_range
from attnspec.numerics import laws
from attnspec.numerics.stats import child_seed, numpy_rng, torch_generator
from attnspec.theorem.shared import SubPoint, draw_shared, sample_frame
from attnspec.theory.linformer import samplers as S
from attnspec.theory.linformer.dimensions import (
    check_eps,
    check_ks,
    check_n,
    lemma1_inner_bound,
    lemma1_norm_bound,
    theorem1_union_bound,
)

NORM_READINGS: tuple[str, ...] = ("norm-upper", "norm-two-sided", "squared-upper", "squared-two-sided")
INNER_READINGS: tuple[str, ...] = ("product", "absolute")
DEFAULT_RHOS: tuple[float, ...] = (0.0, 0.1, 0.5, 0.9, 1.0)

# ----------------------------------------------------------------------------- exact laws


def _norm_thresholds(eps: float, reading: str) -> tuple[float, float | None]:
    """(upper, lower) thresholds on q = ‖Rx‖²/‖x‖²: failure iff q > upper or q < lower."""
    if reading == "norm-upper":
        return (1 + eps) ** 2, None
    if reading == "norm-two-sided":
        return (1 + eps) ** 2, (1 - eps) ** 2
    if reading == "squared-upper":
        return 1 + eps, None
    if reading == "squared-two-sided":
        return 1 + eps, 1 - eps
    raise InputError(f"reading must be one of {', '.join(NORM_READINGS)}, got {reading!r}")


def _outside(above: Callable, below: Callable, eps: float, reading: str) -> float:
    """P(q > upper) + P(q < lower) for the thresholds of ``reading`` (:func:`_norm_thresholds`),
    from the law's upper tail ``above(t)`` = P(q > t) and lower tail ``below(t)`` = P(q < t)."""
    hi, lo = _norm_thresholds(eps, reading)
    p = float(above(hi))
    if lo is not None:
        p += float(below(lo))
    return p


def norm_failure_events(q: np.ndarray, eps: float, reading: str) -> np.ndarray:
    """Boolean failures of eq. 11 under ``reading`` from q = ‖Rx‖²/‖x‖².

    Parameters
    ----------
    q : ndarray of shape (T,)
        Squared-norm ratios, one per trial.
    eps : float
    reading : str
        One of :data:`NORM_READINGS`.

    Returns
    -------
    ndarray of bool, shape (T,)
    """
    hi, lo = _norm_thresholds(eps, reading)
    fail = q > hi
    if lo is not None:
        fail |= q < lo
    return fail


def norm_failure_exact(k: int, eps: float, reading: str = "squared-two-sided") -> float:
    """Exact failure probability of eq. 11 under ``reading`` for Gaussian R (χ²_k law).

    Parameters
    ----------
    k : int
        Rows of R, >= 1.
    eps : float
    reading : str
        One of :data:`NORM_READINGS`.

    Returns
    -------
    float
    """
    check_range("k", k, low=1)
    check_eps(eps)
    return _outside(lambda t: laws.chi2_sf(k * t, k), lambda t: laws.chi2_cdf(k * t, k), eps, reading)


def orthogonal_norm_failure_exact(n: int, k: int, eps: float, reading: str = "squared-two-sided") -> float:
    """Exact failure probability of eq. 11 for scaled Haar rows: ‖Rx‖² = (n/k)·Beta(k/2, (n−k)/2).

    Parameters
    ----------
    n : int
        Ambient dimension (sequence length), >= 1.
    k : int
        Rows of R, in 1..n.
    eps : float
        Distortion ε, in (0, 1).
    reading : str
        One of :data:`NORM_READINGS`.

    Returns
    -------
    float
        The probability, in [0, 1].
    """
    S.check_dims(n, k, family="orthogonal")
    check_eps(eps)
    _norm_thresholds(eps, reading)  # the reading is checked whatever k
    if k == n:
        return 0.0  # R is sqrt(n/k)·orthogonal = orthogonal: norms are preserved exactly
    a, b = k / 2, (n - k) / 2
    return _outside(lambda t: laws.beta_sf(t * k / n, a, b), lambda t: laws.beta_cdf(t * k / n, a, b), eps, reading)


def discrete_spiky_norm_failure_exact(
    family: str, n: int, k: int, eps: float, reading: str = "squared-two-sided"
) -> float:
    """Exact failure probability of eq. 11 for Achlioptas / very sparse R and x = e1.

    ‖Re1‖² = (m²/k)·N with N ~ Binomial(k, p) (p, m: the family's density and magnitude).

    Parameters
    ----------
    family : {"achlioptas", "sparse"}
        The projection family.
    n : int
        Ambient dimension (sequence length), >= 1.
    k : int
        Rows of R, >= 1.
    eps : float
        Distortion ε, in (0, 1).
    reading : str
        One of :data:`NORM_READINGS`.

    Returns
    -------
    float
        The probability, in [0, 1].
    """
    if family not in ("achlioptas", "sparse"):
        raise InputError(f"family must be achlioptas or sparse here, got {family!r}")
    S.check_dims(n, k)
    check_eps(eps)
    p, mag = S._discrete_params(family, n)
    # failure iff N > hi·k/m² (or N < lo·k/m²), N ~ Binomial(k, p)
    return _outside(
        lambda t: laws.binom_sf(math.floor(t * k / mag**2), k, p),
        lambda t: laws.binom_cdf(math.ceil(t * k / mag**2) - 1, k, p),
        eps,
        reading,
    )


def discrete_spiky_orthogonal_failure_exact(family: str, n: int, k: int) -> float:
    """Exact failure probability of eq. 12's ``absolute`` reading for x = e1, y = e2
    (ρ = 0, tolerance 0) under Achlioptas / very sparse R: 1 − P(⟨Re1, Re2⟩ = 0).

    k⟨Re1, Re2⟩/m² = Σ_j a_j b_j, a sum of N ~ Binomial(k, p²) independent signs, which
    is 0 iff N is even and half the signs are +.

    Parameters
    ----------
    family : {"achlioptas", "sparse"}
        The projection family.
    n : int
        Ambient dimension (sequence length), >= 1.
    k : int
        Rows of R, >= 1.

    Returns
    -------
    float
        The probability, in [0, 1].
    """
    if family not in ("achlioptas", "sparse"):
        raise InputError(f"family must be achlioptas or sparse here, got {family!r}")
    S.check_dims(n, k)
    p, _ = S._discrete_params(family, n)
    N = np.arange(0, k + 1, 2)
    zero = float(np.sum(laws.binom_pmf(N, k, p * p) * laws.binom_pmf(N // 2, N, 0.5)))
    return 1.0 - zero


def diff_chi2_sf(a: float, b: float, k: int, t: float) -> float:
    """P(a X − b Y > t) for independent X, Y ~ χ²_k and a, b >= 0 (not both 0).

    With Y = v² (v ~ χ_k) the probability is ∫ f_χk(v) · P(X > (t + b v²)/a) dv, whose
    log-integrand is concave. It is located on a coarse vectorised grid and integrated by
    composite Simpson's rule on 2001 points over the window where it is within e^{−60} of
    its maximum (a few ms a call; agrees with adaptive quadrature at epsrel 1e-13 to ~1e-10
    relative, tested; adaptive quadrature at epsrel 1e-10 is off by up to 2e-6 relative for
    ρ near 1). Where the coarse grid cannot resolve the peak, and for k = 1, the
    adaptive quadrature (:func:`_diff_chi2_sf_quad`) is used.

    Parameters
    ----------
    a, b : float
        The weights, >= 0 and not both 0.
    k : int
        Degrees of freedom of X and Y, >= 1.
    t : float
        The threshold.

    Returns
    -------
    float
        The probability, in [0, 1].
    """
    if a < 0 or b < 0 or (a == 0 and b == 0):
        raise InputError(f"a and b must be >= 0 and not both 0, got a={a}, b={b}")
    if b == 0:
        return float(laws.chi2_sf(t / a, k))
    if a == 0:
        return float(laws.chi2_cdf(-t / b, k))
    # k = 1: the tail P(χ²_1 > x) has a square-root kink where x reaches 0, which Simpson's
    # rule resolves slowly; the adaptive quadrature handles it
    got = _diff_chi2_sf_grid(a, b, k, t) if k >= 2 else None
    return _diff_chi2_sf_quad(a, b, k, t) if got is None else got


def _diff_chi2_logf(a: float, b: float, k: int, t: float):  # noqa: ANN202 - a vectorised function
    """log of the integrand f_χk(v)·P(χ²_k > (t + b v²)/a), vectorised over v."""
    half = k / 2.0
    chi_const = -(half - 1.0) * math.log(2.0) - math.lgamma(half)

    def logf_vec(v: np.ndarray) -> np.ndarray:
        v = np.asarray(v, dtype=float)
        x = np.maximum((t + b * v * v) / a, 0.0)
        with np.errstate(divide="ignore"):
            return (k - 1) * np.log(v) - v * v / 2 + chi_const + np.log(special.gammaincc(half, x / 2))

    return logf_vec


def _simpson_log(logf, lo: float, hi: float, points: int, lmax: float) -> float:  # noqa: ANN001
    """∫_lo^hi exp(logf(v) − lmax) dv by composite Simpson's rule on ``points`` (odd) points."""
    if hi <= lo:
        return 0.0
    v = np.linspace(lo, hi, points)
    fv = logf(v)
    y = np.exp(np.where(np.isfinite(fv), fv, -np.inf) - lmax)
    w = np.ones(points)
    w[1:-1:2], w[2:-1:2] = 4.0, 2.0
    return float((v[1] - v[0]) / 3.0 * (w @ y))


def _diff_chi2_sf_grid(a: float, b: float, k: int, t: float, points: int = 2001) -> float | None:
    """:func:`diff_chi2_sf` by Simpson's rule on the e^{−60} window (split at the kink
    v = sqrt(−t/b) where the tail probability reaches 1 when t < 0); None if the coarse grid
    does not resolve the peak (fewer than 40 coarse points inside the window, or the window
    reaching the grid's end)."""
    logf = _diff_chi2_logf(a, b, k, t)
    vmax = math.sqrt(k) + 60.0
    grid = np.linspace(1e-12, vmax, 2001)
    vals = logf(grid)
    finite = np.isfinite(vals)
    if not np.any(finite):
        return 0.0
    vals = np.where(finite, vals, -np.inf)
    lmax = float(vals.max())
    inside = np.flatnonzero(vals >= lmax - 60.0)
    if inside.size < 40 or inside[-1] == grid.size - 1:
        return None
    lo = float(grid[max(int(inside[0]) - 1, 0)])
    hi = float(grid[int(inside[-1]) + 1])
    kink = math.sqrt(-t / b) if t < 0 else None
    if kink is not None and lo < kink < hi:
        val = _simpson_log(logf, lo, kink, points, lmax) + _simpson_log(logf, kink, hi, points, lmax)
    else:
        val = _simpson_log(logf, lo, hi, points, lmax)
    return float(min(1.0, val * math.exp(lmax)))


def _diff_chi2_sf_quad(a: float, b: float, k: int, t: float) -> float:
    """:func:`diff_chi2_sf` by adaptive quadrature around the mode (the reference; slower)."""
    logf_vec = _diff_chi2_logf(a, b, k, t)

    def logf(v: float) -> float:
        return float(logf_vec(np.array([v]))[0])

    vmax = math.sqrt(k) + 60.0
    grid = np.linspace(1e-12, vmax, 4001)
    vals = logf_vec(grid)
    if not np.any(np.isfinite(vals)):
        return 0.0
    i = int(np.nanargmax(np.where(np.isfinite(vals), vals, -np.inf)))
    lo_b, hi_b = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    from scipy import optimize  # here, not at the top: 0.3 s of import that `jl-check` pays after its fork

    res = optimize.minimize_scalar(
        lambda v: -logf(v), bounds=(lo_b, hi_b), method="bounded", options={"xatol": 1e-12 * max(1.0, hi_b)}
    )
    vstar = float(res.x)
    lmax = max(logf(vstar), float(vals[i]))
    if not math.isfinite(lmax):
        return 0.0

    def edge(direction: int) -> float:
        step = 1e-4
        v = vstar
        while True:
            nv = v + direction * step
            if nv <= 0:
                return 0.0
            if nv >= vmax * 2:
                return vmax * 2
            if logf(nv) < lmax - 60:
                return nv
            v = nv
            step *= 2

    lo, hi = edge(-1), edge(+1)
    from scipy import integrate

    val, _ = integrate.quad(
        lambda v: math.exp(logf(v) - lmax), lo, hi, points=[vstar], limit=400, epsabs=0.0, epsrel=1e-10
    )
    return float(min(1.0, val * math.exp(lmax)))


def inner_product_failure_exact(k: int, eps: float, rho: float, tolerance: str = "product") -> float:
    """Exact failure probability of eq. 12 for Gaussian R, unit x and y with cosine ``rho``.

    Failure is |⟨Rx, Ry⟩ − ρ| > τ with τ = ε (``product``: ε‖x‖‖y‖) or τ = ε|ρ|
    (``absolute``: ε|⟨x, y⟩|). By rotational invariance the law depends on (k, ρ) only:
    k⟨Rx, Ry⟩ = a χ²_k − b χ'²_k with a = (1+ρ)/2, b = (1−ρ)/2.

    Parameters
    ----------
    k : int
        Rows of R, >= 1.
    eps : float
        Distortion ε, in (0, 1).
    rho : float
        The cosine ⟨x, y⟩, in [-1, 1].
    tolerance : {"product", "absolute"}
        Which tolerance τ the reading takes.

    Returns
    -------
    float
        The probability, in [0, 1] (1 when τ = 0: a continuous law misses a point).
    """
    check_range("k", k, low=1)
    check_eps(eps)
    check_range("rho", rho, low=-1.0, high=1.0)
    if tolerance not in INNER_READINGS:
        raise InputError(f"tolerance must be one of {', '.join(INNER_READINGS)}, got {tolerance!r}")
    tau = eps if tolerance == "product" else eps * abs(rho)
    if tau == 0.0:
        return 1.0  # a continuous law misses a single point with probability 1
    a, b = (1 + rho) / 2, (1 - rho) / 2
    upper = diff_chi2_sf(a, b, k, k * (rho + tau))
    lower = diff_chi2_sf(b, a, k, k * (tau - rho)) if a > 0 or b > 0 else 0.0
    return float(min(1.0, upper + lower))


def inner_failure_events(z: np.ndarray, eps: float, rho: float, tolerance: str) -> np.ndarray:
    """Boolean failures of eq. 12 from z = ⟨Rx, Ry⟩ for unit x, y with cosine rho.

    Parameters
    ----------
    z : ndarray of shape (T,)
    eps, rho : float
    tolerance : str
        ``"product"`` or ``"absolute"``.

    Returns
    -------
    ndarray of bool, shape (T,)
    """
    tau = eps if tolerance == "product" else eps * abs(rho)
    return np.abs(z - rho) > tau


# ----------------------------------------------------------------------------- Lemma 1


def _discrete_exact_inner(family: str, vectors: str, n: int, k: int, reading: str, rho: float) -> float:
    """The exact eq.-12 failure probability where one is known for a non-Gaussian family."""
    if reading != "absolute" or rho != 0:
        return np.nan
    if family == "orthogonal":
        return 1.0  # Haar images have a density: a zero tolerance is missed with probability 1
    if vectors == "spiky":
        return discrete_spiky_orthogonal_failure_exact(family, n, k)
    return np.nan


def simulate_lemma1(
    n: int,
    eps: float,
    ks: Sequence[int],
    *,
    families: Sequence[str] = ("gaussian",),
    trials: int = 10_000,
    trials_other: int | None = None,
    rhos: Sequence[float] = DEFAULT_RHOS,
    seed: int = 0,
    sample_ks: Sequence[int] = (),
    sample_size: int = 2000,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Monte Carlo of Lemma 1 (every reading of eqs. 11 and 12) for each family.

    Gaussian R uses the exact chi-square reductions; the other families the reduced pair
    sampler (:func:`attnspec.theory.linformer.samplers.reduced_pair_units`) with the ``spiky``
    and ``flat`` vector pairs, for k <= n only (Lemma 1's range).

    Parameters
    ----------
    n : int
        Ambient dimension (sequence length), >= 2.
    eps : float
        Distortion ε, in (0, 1).
    ks : sequence of int
        Projection dimensions k, >= 1.
    families : sequence of str
        Projection families, of :data:`attnspec.theory.linformer.samplers.FAMILIES`.
    trials : int
        Monte Carlo trials per point for Gaussian R, >= 1.
    trials_other : int, optional
        Trials per point for the other families (default: ``trials``).
    rhos : sequence of float
        The cosines ρ of the vector pairs of eq. 12, each in [-1, 1].
    seed : int
        Seed of every draw.
    sample_ks : sequence of int
        The k at which relative errors are kept for the figures.
    sample_size : int
        How many relative errors are kept per (reading, family, vectors, ρ, k).

    Returns
    -------
    table : DataFrame, one row per (claim, reading, family, vectors, rho, k) with the
        bound, the exact probability (where a law is known, else NaN) and the Monte Carlo
        estimate with its 95% Clopper–Pearson interval.
    samples : DataFrame of relative errors (‖Rx‖² − 1, ⟨Rx, Ry⟩ − ρ) at ``sample_ks``.
    """
    check_n(n)
    check_eps(eps)
    ks = check_ks(ks)
    check_range("trials", trials, low=1)
    trials_other = trials if trials_other is None else trials_other
    check_range("trials_other", trials_other, low=1)
    for f in families:
        S.check_family(f)
    for r in rhos:
        check_range("rho", r, low=-1.0, high=1.0)
    out = _Collector(n, eps, {int(k) for k in sample_ks}, sample_size)
    for family in families:
        if family == "gaussian":
            _lemma1_gaussian(out, ks, trials, rhos, seed)
        else:
            _lemma1_family(out, family, ks, trials_other, rhos, seed)
    table = pd.DataFrame(out.rows)
    samp = pd.concat(out.samples, ignore_index=True) if out.samples else pd.DataFrame()
    return table, samp


class _Collector:
    """The rows and error samples of :func:`simulate_lemma1`, with the shared columns."""

    def __init__(self, n: int, eps: float, sample_ks: set[int], sample_size: int) -> None:
        self.n, self.eps, self.sample_ks, self.sample_size = n, eps, sample_ks, sample_size
        self.rows: list[dict] = []
        self.samples: list[pd.DataFrame] = []

    def sub_points(
        self, family: str, vectors: str, k: int, rhos: Sequence[float], seed: int, exact: Callable
    ) -> list[SubPoint]:
        """The sub-points of one k: eq. (11) per reading, then eq. (12) per ρ and reading, each
        against the printed bound; ``exact(eq, reading, rho)`` is the exact probability or NaN."""
        points = [("eq11", reading, None) for reading in NORM_READINGS]
        points += [("eq12", reading, float(rho)) for rho in rhos for reading in INNER_READINGS]
        bounds = {"eq11": lemma1_norm_bound(k, self.eps), "eq12": lemma1_inner_bound(k, self.eps)}
        head = {"family": family, "vectors": vectors}
        return [
            SubPoint(
                (eq, reading, rho, k),
                {
                    "claim": f"linformer.lemma1.{eq}",
                    "reading": reading,
                    **head,
                    "rho": np.nan if rho is None else rho,
                    "n": self.n,
                    "eps": self.eps,
                    "k": k,
                    "bound": float(bounds[eq]),
                    "exact": exact(eq, reading, rho),
                },
                {"seed": seed},
            )
            for eq, reading, rho in points
        ]

    def failures(self, k: int, q: np.ndarray, zs: dict[float, np.ndarray]) -> dict[tuple, int]:
        """The failures at one k of every reading: eq. (11) from q = ‖Rx‖² (T,), eq. (12) from
        z = ⟨Rx, Ry⟩ (T,) per ρ."""
        out = {("eq11", r, None, k): int(norm_failure_events(q, self.eps, r).sum()) for r in NORM_READINGS}
        for rho, z in zs.items():
            for r in INNER_READINGS:
                out[("eq12", r, rho, k)] = int(inner_failure_events(z, self.eps, rho, r).sum())
        return out

    def add_samples(self, family: str, vectors: str, k: int, q: np.ndarray, zs: dict[float, np.ndarray]) -> None:
        """The relative errors ‖Rx‖² − 1 and ⟨Rx, Ry⟩ − ρ per ρ at one k, when k is a sample k."""
        if k not in self.sample_ks:
            return
        errors = [("linformer.lemma1.eq11", "squared", np.nan, q - 1)]
        errors += [("linformer.lemma1.eq12", "inner", rho, z - rho) for rho, z in zs.items()]
        for claim, reading, rho, vals in errors:
            columns = {"claim": claim, "reading": reading, "family": family, "vectors": vectors, "rho": rho, "k": k}
            self.samples.append(sample_frame(vals, self.sample_size, columns))


def _lemma1_gaussian(out: _Collector, ks: np.ndarray, trials: int, rhos: Sequence[float], seed: int) -> None:
    """Gaussian R through the chi-square laws: k‖Rx‖² ~ χ²_k, k⟨Rx, Ry⟩ = aχ²_k − bχ'²_k; one
    look of ``trials`` per k, from its own seed."""
    eps = out.eps

    def exact(k: int) -> Callable:
        return lambda eq, reading, rho: (
            norm_failure_exact(k, eps, reading) if eq == "eq11" else inner_product_failure_exact(k, eps, rho, reading)
        )

    for k in (int(k) for k in ks):
        s = child_seed(seed, "lemma1", "gaussian", k)
        rng = numpy_rng(s)
        subs = out.sub_points("gaussian", "any", k, rhos, s, exact(k))

        def look(size: int, _first: bool, _active: frozenset, k: int = k, rng: np.random.Generator = rng) -> dict:
            q = rng.chisquare(k, size=size) / k  # ‖Rx‖² for unit x
            zs = {}
            for rho in rhos:
                a, b = (1 + rho) / 2, (1 - rho) / 2
                zs[float(rho)] = (a * rng.chisquare(k, size=size) - b * rng.chisquare(k, size=size)) / k
            out.add_samples("gaussian", "any", k, q, zs)
            return out.failures(k, q, zs)

        out.rows += draw_shared(look, subs, trials=trials, size=trials, sequential=False).rows(subs)


def _lemma1_family(
    out: _Collector, family: str, ks: np.ndarray, trials_other: int, rhos: Sequence[float], seed: int
) -> None:
    """A non-Gaussian family through the reduced pair sampler, k <= n only (Lemma 1's range):
    per vector pair, ``trials_other`` draws at the largest k serve every k (its first k rows)."""
    fam_ks = ks[ks <= out.n]  # k > n is outside Lemma 1 (and impossible for orthogonal rows)
    if fam_ks.size == 0:
        return
    n, eps = out.n, out.eps
    k_max = int(fam_ks.max())
    chunk = max(1, min(trials_other, int(4e6 // (2 * k_max))))  # memory: 2 k_max floats per trial
    for vectors in ("any",) if family in S.INVARIANT_FAMILIES else S.VECTOR_PAIRS:
        s = child_seed(seed, "lemma1", family, vectors)
        gen = torch_generator(s)
        kept: dict[int, list[tuple]] = {int(k): [] for k in fam_ks if int(k) in out.sample_ks}  # the figures' k

        def exact(eq: str, reading: str, rho: float | None, k: int, vectors: str = vectors) -> float:
            if eq == "eq12":  # Haar images have a density; discrete R can hit <x, y> exactly
                return _discrete_exact_inner(family, vectors, n, k, reading, rho)
            if family == "orthogonal":
                return orthogonal_norm_failure_exact(n, k, eps, reading)
            return discrete_spiky_norm_failure_exact(family, n, k, eps, reading) if vectors == "spiky" else np.nan

        subs = [
            p
            for k in fam_ks
            for p in out.sub_points(family, vectors, int(k), rhos, s, functools.partial(exact, k=int(k)))
        ]

        def look(size: int, _first: bool, _active: frozenset, vectors: str = vectors, gen=gen, kept=kept) -> dict:  # noqa: ANN001
            units, scales = S.reduced_pair_units(
                family, n, k_max, size, vectors="spiky" if vectors == "any" else vectors, seed=gen
            )
            st = S.prefix_pair_stats(units, fam_ks, which=("aa", "ab"), scales=scales)  # (len(ks), size) each
            fails = {}
            for i, k in enumerate(int(k) for k in fam_ks):
                q = st["aa"][i]
                zs = {float(rho): rho * q + math.sqrt(max(0.0, 1 - rho * rho)) * st["ab"][i] for rho in rhos}
                if k in kept:
                    kept[k].append((q, zs))
                fails.update(out.failures(k, q, zs))
            return fails

        out.rows += draw_shared(look, subs, trials=trials_other, size=chunk, sequential=False).rows(subs)
        for k, parts in kept.items():
            zs = {float(rho): np.concatenate([z[float(rho)] for _, z in parts]) for rho in rhos}
            out.add_samples(family, vectors, k, np.concatenate([q for q, _ in parts]), zs)


# ----------------------------------------------------------------------------- exact curves


def exact_curves(n: int, eps: float, ks: Sequence[int], rhos: Sequence[float] = (1.0,)) -> pd.DataFrame:
    """Bounds and exact failure probabilities (Gaussian R) on a dense k grid, for figures.

    Parameters
    ----------
    n : int
    eps : float
    ks : sequence of int
    rhos : sequence of float
        Cosines for eq. 12's curves.

    Returns
    -------
    DataFrame
        One row per (claim, reading, rho, k): ``bound`` and ``exact`` (NaN where no law).
    """
    check_n(n)
    check_eps(eps)
    rows = []
    for k in check_ks(ks):
        for reading in NORM_READINGS:
            rows.append(
                {
                    "claim": "linformer.lemma1.eq11",
                    "reading": reading,
                    "rho": np.nan,
                    "k": int(k),
                    "bound": float(lemma1_norm_bound(k, eps)),
                    "exact": norm_failure_exact(int(k), eps, reading),
                }
            )
        for rho in rhos:
            rows.append(
                {
                    "claim": "linformer.lemma1.eq12",
                    "reading": "product",
                    "rho": float(rho),
                    "k": int(k),
                    "bound": float(lemma1_inner_bound(k, eps)),
                    "exact": inner_product_failure_exact(int(k), eps, float(rho), "product"),
                }
            )
        rows.append(
            {
                "claim": "linformer.thm1.eq3",
                "reading": "union-bound",
                "rho": np.nan,
                "k": int(k),
                "bound": float(theorem1_union_bound(n, k, eps)),
                "exact": np.nan,
            }
        )
    return pd.DataFrame(rows)
