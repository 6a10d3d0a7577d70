"""Random projections and the exact reduced samplers behind Linformer's Lemma 1 and Theorems 1–2.

Projection families (every one scaled so that E[RᵀR] = I_n):

* ``gaussian``   — i.i.d. N(0, 1/k) entries: the R ∈ R^{k×n} of Linformer's Lemma 1;
* ``orthogonal`` — sqrt(n/k) times k orthonormal rows of a Haar-random n×n rotation (k <= n);
* ``achlioptas`` — sqrt(3/k) · {+1, 0, −1} with probabilities {1/6, 2/3, 1/6}
  (Achlioptas 2003);
* ``sparse``     — very sparse projections of Li, Hastie & Church (2006): s = sqrt(n),
  sqrt(s/k) · {+1, 0, −1} with probabilities {1/(2s), 1 − 1/s, 1/(2s)}.

Two kinds of sampler are provided and tested against each other:

*Direct* samplers materialise R (k×n) for every trial and multiply. They are the
reference, and cost O(kn) per trial (about 0.15 s at 4621×4096).

*Reduced* samplers draw only what a statistic depends on, exactly in distribution:

* Lemma 1 for a unit pair x1 ⟂ x2: only the two columns R x1, R x2 ∈ R^k matter.
  For Gaussian and Haar R they do not depend on which pair (rotational invariance);
  for the discrete families they do, so two extreme pairs are offered (:func:`pair_vectors`):
  ``spiky`` (the images are two columns of R) and ``flat`` (each image entry is a signed
  count of non-zero entries over a half, drawn with two binomials). Rows of R are i.i.d.,
  so the images for every k <= k_max come from the first k rows of one draw of k_max rows
  (each k is exact in distribution; different k share draws).
* Gaussian R for a single statistic reduces further to the chi-square laws of
  :mod:`attnspec.theory.linformer.lemma1`.
* Theorem 1: :mod:`attnspec.theory.linformer.theorem1_samplers` (reduced, NumPy only);
  its direct reference is :func:`theorem1_direct_errors` here.
* Theorem 2: :mod:`attnspec.theory.linformer.theorem2_samplers`.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING

import numpy as np

from attnspec.errors import InputError, check_choice, check_range
from attnspec.numerics.stats import Seed, torch_generator

if TYPE_CHECKING:
    import torch

# torch is imported in the functions that draw with it, not here: `jl-check` imports this module
# before it forks, and only the process that computes a torch group should pay torch's import
# (see .battery.plan: the forked process computes the torch-free groups and never loads it).

FAMILIES: tuple[str, ...] = ("gaussian", "orthogonal", "achlioptas", "sparse")
VECTOR_PAIRS: tuple[str, ...] = ("spiky", "flat")
#: families whose law is invariant under rotations of R^n (the vector pair does not matter)
INVARIANT_FAMILIES: frozenset[str] = frozenset({"gaussian", "orthogonal"})


def check_family(family: str) -> str:
    """``family`` if it is one of :data:`FAMILIES`, else :class:`InputError`.

    Parameters
    ----------
    family : str

    Returns
    -------
    str
    """
    return check_choice("family", family, FAMILIES)


def check_dims(n: int, k: int, *, family: str = "gaussian") -> None:
    """Validate n >= 1 and k >= 1 (and k <= n for ``orthogonal``).

    Parameters
    ----------
    n : int
        Ambient dimension.
    k : int
        Output dimension (rows of R).
    family : str
        The projection family.

    Raises
    ------
    InputError
        A dimension out of range.
    """
    check_range("n", n, low=1)
    check_range("k", k, low=1)
    if family == "orthogonal" and k > n:
        raise InputError(f"k must be <= n = {n} for orthogonal projections, got {k}")


def _discrete_params(family: str, n: int) -> tuple[float, float]:
    """(probability of a non-zero entry, magnitude of a non-zero entry before 1/sqrt(k))."""
    if family == "achlioptas":
        return 1.0 / 3.0, math.sqrt(3.0)
    s = math.sqrt(n)  # Li, Hastie & Church: s = sqrt(n)
    return 1.0 / s, math.sqrt(s)


def sparse_density(n: int) -> float:
    """Probability that an entry of a very sparse projection is non-zero (1/sqrt(n)).

    Parameters
    ----------
    n : int
        Ambient dimension.

    Returns
    -------
    float
    """
    return _discrete_params("sparse", n)[0]


def _discrete_entries(
    family: str, n: int, shape: tuple[int, ...], gen: torch.Generator, *, units: bool = False
) -> torch.Tensor:
    """Unscaled entries (±magnitude or 0; ±1 or 0 with ``units``), float64, before 1/sqrt(k)."""
    import torch

    p, mag = _discrete_params(family, n)
    u = torch.rand(shape, generator=gen, dtype=torch.float64)
    out = torch.zeros(shape, dtype=torch.float64)
    m = 1.0 if units else mag
    out[u < p / 2] = m
    out[(u >= p / 2) & (u < p)] = -m
    return out


def projection_matrix(family: str, k: int, n: int, seed: Seed) -> np.ndarray:
    """One projection matrix R of the family.

    Parameters
    ----------
    family : {"gaussian", "orthogonal", "achlioptas", "sparse"}
    k, n : int
        Output and input dimensions; ``orthogonal`` needs k <= n.
    seed : int or generator

    Returns
    -------
    R : ndarray of shape (k, n), float64, with E[RᵀR] = I_n.
    """
    import torch

    check_family(family)
    check_dims(n, k, family=family)
    gen = torch_generator(seed)
    if family == "gaussian":
        return (torch.randn((k, n), generator=gen, dtype=torch.float64) / math.sqrt(k)).numpy()
    if family == "orthogonal":
        g = torch.randn((n, k), generator=gen, dtype=torch.float64)
        q, r = torch.linalg.qr(g)  # q: (n, k) orthonormal columns
        q = q * torch.sign(torch.diagonal(r))  # sign fix: Haar-distributed frame
        return (math.sqrt(n / k) * q.T).numpy()
    return (_discrete_entries(family, n, (k, n), gen) / math.sqrt(k)).numpy()


def pair_vectors(n: int, vectors: str) -> np.ndarray:
    """The unit orthogonal pair (x1, x2) as the columns of an (n, 2) array.

    ``spiky``: e1, e2. ``flat``: 1/sqrt(n) everywhere, and +1/sqrt(2m) on the first m
    coordinates, −1/sqrt(2m) on the next m (m = n // 2; a last coordinate 0 when n is odd).

    Parameters
    ----------
    n : int
        Ambient dimension.
    vectors : {"spiky", "flat"}
        Which pair.

    Returns
    -------
    numpy.ndarray, shape (n, 2)
    """
    if n < 2:
        raise InputError(f"n must be >= 2 for a pair of orthogonal vectors, got {n}")
    if vectors not in VECTOR_PAIRS:
        raise InputError(f"vectors must be one of {', '.join(VECTOR_PAIRS)}, got {vectors!r}")
    x = np.zeros((n, 2))
    if vectors == "spiky":
        x[0, 0] = 1.0
        x[1, 1] = 1.0
        return x
    m = n // 2
    x[:, 0] = 1.0 / math.sqrt(n)
    x[:m, 1] = 1.0 / math.sqrt(2 * m)
    x[m : 2 * m, 1] = -1.0 / math.sqrt(2 * m)
    return x


def direct_pair_images(family: str, n: int, k: int, trials: int, *, vectors: str = "spiky", seed: Seed) -> np.ndarray:
    """Reference sampler: draw R (k×n) per trial and return R x1, R x2.

    Parameters
    ----------
    family : {"gaussian", "orthogonal", "achlioptas", "sparse"}
        The projection family.
    n : int
        Ambient dimension.
    k : int
        Rows of R.
    trials : int
        Draws.
    vectors : {"spiky", "flat"}
        The pair (:func:`pair_vectors`).
    seed : int or generator
        Seed of the draws.

    Returns
    -------
    images : ndarray of shape (trials, k, 2)
    """
    import torch

    check_family(family)
    check_dims(n, k, family=family)
    check_range("trials", trials, low=1)
    x = torch.from_numpy(pair_vectors(n, vectors))  # (n, 2)
    gen = torch_generator(seed)
    out = np.empty((trials, k, 2))
    for t in range(trials):
        r = torch.from_numpy(projection_matrix(family, k, n, gen))  # (k, n)
        out[t] = (r @ x).numpy()
    return out


def reduced_pair_units(
    family: str, n: int, k_max: int, trials: int, *, vectors: str = "spiky", seed: Seed
) -> tuple[torch.Tensor, tuple[float, float]]:
    """Reduced sampler: the unscaled images of the pair for the first k_max rows, as
    ``units * scales`` (one factor per column).

    The images under the projection with k rows are ``(units * scales)[:, :k, :] / sqrt(k)``
    for every k <= k_max (for ``orthogonal`` the factor sqrt(n/k) is folded in as sqrt(n), so
    the same ``/ sqrt(k)`` applies). ``units`` is integer-valued for the discrete families, so
    sums of products are exact and an inner product that is exactly 0 stays 0 (floating-point
    rounding would otherwise hide those atoms).

    Parameters
    ----------
    family : {"gaussian", "orthogonal", "achlioptas", "sparse"}
        The projection family.
    n : int
        Ambient dimension.
    k_max : int
        The most rows of R.
    trials : int
        Draws.
    vectors : {"spiky", "flat"}
        The pair (:func:`pair_vectors`).
    seed : int or generator
        Seed of the draws.

    Returns
    -------
    units : torch.Tensor of shape (trials, k_max, 2), float64
    scales : the factor of each column
    """
    import torch

    check_family(family)
    check_dims(n, k_max, family=family)
    check_range("trials", trials, low=1)
    if vectors not in VECTOR_PAIRS:
        raise InputError(f"vectors must be one of {', '.join(VECTOR_PAIRS)}, got {vectors!r}")
    gen = torch_generator(seed)
    if family == "gaussian":
        return torch.randn((trials, k_max, 2), generator=gen, dtype=torch.float64), (1.0, 1.0)
    if family == "orthogonal":
        # The first two columns of a Haar n×n rotation: Gram–Schmidt on an n×2 Gaussian.
        g = torch.randn((trials, n, 2), generator=gen, dtype=torch.float64)
        q1 = g[:, :, 0] / torch.linalg.vector_norm(g[:, :, 0], dim=1, keepdim=True)  # (T, n)
        g2 = g[:, :, 1] - (q1 * g[:, :, 1]).sum(1, keepdim=True) * q1
        q2 = g2 / torch.linalg.vector_norm(g2, dim=1, keepdim=True)
        root = math.sqrt(n)
        return torch.stack([q1[:, :k_max], q2[:, :k_max]], dim=2), (root, root)  # (T, k_max, 2)
    p, mag = _discrete_params(family, n)
    if vectors == "spiky":
        return _discrete_entries(family, n, (trials, k_max, 2), gen, units=True), (mag, mag)
    # flat pair: per row, signed counts of non-zero entries over the two halves (and the
    # odd coordinate when n is odd); each half of size h has N_nz ~ Bin(h, p), N+ | N_nz ~
    # Bin(N_nz, 1/2), and sum = mag (N+ − (N_nz − N+)).
    m = n // 2
    sizes = [m, m] + ([n - 2 * m] if n - 2 * m else [])
    sums = []
    for h in sizes:
        # the signed count S over a part of size h, drawn by inverse CDF from its exact law
        # (one uniform per entry; the binomial pair N_nz ~ Bin(h, p), N+ | N_nz ~ Bin(N_nz, 1/2)
        # it replaces cost two slow torch.binomial calls)
        values, cdf = signed_count_law(h, p)
        u = torch.rand((trials, k_max), generator=gen, dtype=torch.float64)
        idx = np.minimum(inverse_cdf_index(cdf, u.reshape(-1).numpy()), len(values) - 1)
        sums.append(torch.from_numpy(values[idx]).reshape(trials, k_max))  # integer-valued
    total = sum(sums)
    return torch.stack([total, sums[0] - sums[1]], dim=2), (mag / math.sqrt(n), mag / math.sqrt(2 * m))


#: buckets of the inverse-CDF lookup table (a power of 2: u·M and b/M are exact in float64)
_CDF_BUCKETS = 2**16


@functools.lru_cache(maxsize=16)
def _cdf_buckets(cdf_bytes: bytes) -> tuple[np.ndarray, np.ndarray]:
    """For bucket b = [b/M, (b+1)/M): lo = #{cdf <= b/M}, hi = #{cdf < (b+1)/M}."""
    cdf = np.frombuffer(cdf_bytes, dtype=np.float64)
    edges = np.arange(_CDF_BUCKETS + 1, dtype=np.float64) / _CDF_BUCKETS
    return np.searchsorted(cdf, edges[:-1], side="right"), np.searchsorted(cdf, edges[1:], side="left")


def inverse_cdf_index(cdf: np.ndarray, u: np.ndarray) -> np.ndarray:
    """``np.searchsorted(cdf, u, side="right")`` (the number of cdf entries <= u) for u in [0, 1),
    exactly, through a bucket table: for u in bucket b the answer lies in [lo_b, hi_b], so it
    is lo_b wherever lo_b == hi_b (all but the <= len(cdf) buckets holding a cdf value); the
    rest go through the binary search. About 20× faster than the search alone for millions of u.

    Parameters
    ----------
    cdf : numpy.ndarray
        A non-decreasing cdf.
    u : numpy.ndarray
        Uniform draws in [0, 1), any shape.

    Returns
    -------
    numpy.ndarray of int, of ``u``'s shape
    """
    lo, hi = _cdf_buckets(np.ascontiguousarray(cdf, dtype=np.float64).tobytes())
    b = np.minimum((u * _CDF_BUCKETS).astype(np.int64), _CDF_BUCKETS - 1)  # floor(u·M), exact
    idx = lo[b]
    odd = np.flatnonzero(lo[b] != hi[b])
    if odd.size:
        idx[odd] = np.searchsorted(cdf, u[odd], side="right")
    return idx


@functools.lru_cache(maxsize=16)
def signed_count_law(h: int, p: float) -> tuple[np.ndarray, np.ndarray]:
    """The exact law of S = Σ_{i<=h} X_i with X_i = ±1 w.p. p/2 each and 0 otherwise.

    P(S = s) = Σ_N Bin(N; h, p)·Bin((N + s)/2; N, 1/2) over N ≡ s (mod 2); N and S are
    kept within 12 standard deviations of their means (the rest has probability < 1e-30, far
    below the 2^-53 resolution of the inverse-CDF draw).

    Parameters
    ----------
    h : int
        The number of terms.
    p : float
        The probability that a term is non-zero.

    Returns
    -------
    values : ndarray of float64, the support (integers)
    cdf : ndarray of float64, P(S <= value), the last entry exactly 1
    """
    from scipy import special

    from attnspec.numerics.laws import binom_pmf

    mean, sd = h * p, math.sqrt(max(h * p * (1 - p), 1e-12))
    lo, hi = max(0, int(mean - 12 * sd) - 1), min(h, int(mean + 12 * sd) + 2)
    N = np.arange(lo, hi + 1)
    wN = binom_pmf(N, h, p)  # (len(N),)
    # |S| beyond 12 standard deviations (sd = sqrt(h p)) has probability < 1e-30 as well
    smax = int(min(N.max(), 12 * math.sqrt(h * p) + 2))
    values = np.arange(-smax, smax + 1)
    plus = (N[:, None] + values[None, :]) / 2.0  # (len(N), len(values))
    ok = (plus == np.floor(plus)) & (plus >= 0) & (plus <= N[:, None])
    pl = np.where(ok, plus, 0.0)
    Nf = N[:, None].astype(float)
    logpm = special.gammaln(Nf + 1) - special.gammaln(pl + 1) - special.gammaln(Nf - pl + 1) - Nf * math.log(2.0)
    pm = np.where(ok, np.exp(logpm), 0.0)
    pmf = wN @ pm
    keep = pmf > 0
    values, pmf = values[keep], pmf[keep]
    cdf = np.cumsum(pmf)
    cdf /= cdf[-1]
    return values.astype(np.float64), cdf


def prefix_pair_stats(
    images: torch.Tensor,
    ks: np.ndarray,
    which: tuple[str, ...] = ("aa", "bb", "ab"),
    scales: tuple[float, float] = (1.0, 1.0),
) -> dict[str, np.ndarray]:
    """From unscaled images (T, k_max, 2) (times ``scales`` per column), the Gram entries
    for every k in ``ks``. Integer-valued images are summed exactly before scaling.

    Parameters
    ----------
    images : torch.Tensor, shape (T, k_max, 2)
        Unscaled images (the ``units`` of :func:`reduced_pair_units`).
    ks : numpy.ndarray of int
        The numbers of rows k, each <= k_max.
    which : tuple of str
        The entries wanted, of ``"aa"``, ``"bb"``, ``"ab"``.
    scales : (float, float)
        The factor of each column.

    Returns
    -------
    dict of str to numpy.ndarray, shape (len(ks), T)
        ``aa`` = ‖R x1‖², ``bb`` = ‖R x2‖², ``ab`` = ⟨R x1, R x2⟩, under the projection with
        k rows.
    """
    import torch

    a = images[:, :, 0]
    b = images[:, :, 1]
    idx = torch.as_tensor(np.asarray(ks, dtype=np.int64) - 1)
    kk = torch.as_tensor(np.asarray(ks, dtype=np.float64))[:, None]
    out = {}
    sa, sb = scales
    for name, (x, y, f) in (("aa", (a, a, sa * sa)), ("bb", (b, b, sb * sb)), ("ab", (a, b, sa * sb))):
        if name not in which:
            continue
        c = torch.cumsum(x * y, dim=1)  # (T, k_max)
        out[name] = (c[:, idx].T * f / kk).numpy()  # (len(ks), T)
    return out


# --------------------------------------------------------------------------- Theorem 1


def theorem1_direct_errors(P: np.ndarray, w: np.ndarray, k: int, trials: int, *, seed: Seed) -> np.ndarray:
    """Reference sampler: ‖P RᵀR w − P w‖ with R drawn in full each trial (Gaussian).

    Parameters
    ----------
    P : numpy.ndarray, shape (n, n)
        The attention matrix.
    w : numpy.ndarray, shape (n,)
        The vector.
    k : int
        Rows of R.
    trials : int
        Draws.
    seed : int or generator
        Seed of the draws.

    Returns
    -------
    errors : ndarray of shape (trials,)
    """
    import torch

    n = P.shape[0]
    gen = torch_generator(seed)
    Pt = torch.from_numpy(np.asarray(P, dtype=np.float64))
    wt = torch.from_numpy(np.asarray(w, dtype=np.float64))
    target = Pt @ wt
    out = np.empty(trials)
    for t in range(trials):
        r = torch.randn((k, n), generator=gen, dtype=torch.float64) / math.sqrt(k)  # (k, n)
        approx = Pt @ (r.T @ (r @ wt))  # (n,): P Rᵀ R w, cheapest order
        out[t] = float(torch.linalg.vector_norm(approx - target))
    return out
