"""Exact distribution functions the checks need, on SciPy's special-function ufuncs.

Why not ``scipy.stats``: importing it takes about 0.7 s (it builds every distribution's
docstring), a large share of a checking command that should answer in seconds. Each
function here calls the ufunc that ``scipy.stats`` itself calls for that distribution
(``chi2._cdf`` is ``chdtr``, ``beta._sf`` is ``betaincc``, ``binom._pmf`` is ``_binom_pmf``,
...) and applies the same rules outside the support (and, for the binomial, the same clip to
[0, 1]), so the values are the same to the last bit (``tests/unit/test_laws.py`` compares them
with ``scipy.stats`` on grids that include the edges of every support).

Arguments are scalars or arrays (broadcast); parameters are assumed valid (the callers check
them), so no NaN is produced for a bad shape parameter as ``scipy.stats`` would.
"""

from __future__ import annotations

import numpy as np
from scipy import special
from scipy.special import _ufuncs  # the binomial's Boost ufuncs, which scipy.stats.binom calls


def _floats(*values):  # noqa: ANN002, ANN202 - scalars or arrays in, broadcast float arrays out
    return np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in values))


def _scalar_or_array(out: np.ndarray) -> np.ndarray | float:
    return out[()] if out.ndim == 0 else out


def chi2_cdf(x, k):  # noqa: ANN001, ANN201 - scalars or arrays
    """P(χ²_k <= x).

    Parameters
    ----------
    x : float or array_like
        Where the law is evaluated (0 for x <= 0).
    k : float or array_like
        Degrees of freedom, > 0.

    Returns
    -------
    float or numpy.ndarray
        The probability, in [0, 1]; a float for scalar arguments, else an array of their broadcast shape.
    """
    x, k = _floats(x, k)
    out = np.where(x > 0, special.chdtr(k, np.where(x > 0, x, 1.0)), 0.0)  # 0 on x <= 0 (support (0, ∞))
    return _scalar_or_array(out)


def chi2_sf(x, k):  # noqa: ANN001, ANN201
    """P(χ²_k > x).

    Parameters
    ----------
    x : float or array_like
        Where the law is evaluated (1 for x <= 0).
    k : float or array_like
        Degrees of freedom, > 0.

    Returns
    -------
    float or numpy.ndarray
        The probability, in [0, 1]; a float for scalar arguments, else an array of their broadcast shape.
    """
    x, k = _floats(x, k)
    out = np.where(x > 0, special.chdtrc(k, np.where(x > 0, x, 1.0)), 1.0)
    return _scalar_or_array(out)


def beta_cdf(x, a, b):  # noqa: ANN001, ANN201
    """P(Beta(a, b) <= x).

    Parameters
    ----------
    x : float or array_like
        Where the law is evaluated (0 for x <= 0, 1 for x >= 1).
    a, b : float or array_like
        The shape parameters, > 0.

    Returns
    -------
    float or numpy.ndarray
        The probability, in [0, 1]; a float for scalar arguments, else an array of their broadcast shape.
    """
    x, a, b = _floats(x, a, b)
    inside = (x > 0) & (x < 1)
    out = np.where(inside, special.betainc(a, b, np.where(inside, x, 0.5)), np.where(x >= 1, 1.0, 0.0))
    return _scalar_or_array(out)


def beta_sf(x, a, b):  # noqa: ANN001, ANN201
    """P(Beta(a, b) > x).

    Parameters
    ----------
    x : float or array_like
        Where the law is evaluated (1 for x <= 0, 0 for x >= 1).
    a, b : float or array_like
        The shape parameters, > 0.

    Returns
    -------
    float or numpy.ndarray
        The probability, in [0, 1]; a float for scalar arguments, else an array of their broadcast shape.
    """
    x, a, b = _floats(x, a, b)
    inside = (x > 0) & (x < 1)
    out = np.where(inside, special.betaincc(a, b, np.where(inside, x, 0.5)), np.where(x >= 1, 0.0, 1.0))
    return _scalar_or_array(out)


def binom_pmf(x, n, p):  # noqa: ANN001, ANN201
    """P(Binomial(n, p) = x); 0 off the integers 0..n.

    Parameters
    ----------
    x : float or array_like
        The count.
    n : float or array_like
        Trials, an integer >= 0.
    p : float or array_like
        The success probability, in [0, 1].

    Returns
    -------
    float or numpy.ndarray
        The probability, in [0, 1]; a float for scalar arguments, else an array of their broadcast shape.
    """
    x, n, p = _floats(x, n, p)
    inside = (x >= 0) & (x <= n) & (x == np.floor(x))
    out = np.where(inside, np.clip(_ufuncs._binom_pmf(np.where(inside, x, 0.0), n, p), 0, 1), 0.0)
    return _scalar_or_array(out)


def binom_cdf(x, n, p):  # noqa: ANN001, ANN201
    """P(Binomial(n, p) <= x).

    Parameters
    ----------
    x : float or array_like
        The count (rounded down).
    n : float or array_like
        Trials, an integer >= 0.
    p : float or array_like
        The success probability, in [0, 1].

    Returns
    -------
    float or numpy.ndarray
        The probability, in [0, 1]; a float for scalar arguments, else an array of their broadcast shape.
    """
    x, n, p = _floats(x, n, p)
    k = np.floor(x)
    inside = (k >= 0) & (k < n)
    out = np.where(
        inside, np.clip(_ufuncs._binom_cdf(np.where(inside, k, 0.0), n, p), 0, 1), np.where(k >= n, 1.0, 0.0)
    )
    return _scalar_or_array(out)


def binom_sf(x, n, p):  # noqa: ANN001, ANN201
    """P(Binomial(n, p) > x).

    Parameters
    ----------
    x : float or array_like
        The count (rounded down).
    n : float or array_like
        Trials, an integer >= 0.
    p : float or array_like
        The success probability, in [0, 1].

    Returns
    -------
    float or numpy.ndarray
        The probability, in [0, 1]; a float for scalar arguments, else an array of their broadcast shape.
    """
    x, n, p = _floats(x, n, p)
    k = np.floor(x)
    inside = (k >= 0) & (k < n)
    out = np.where(inside, np.clip(_ufuncs._binom_sf(np.where(inside, k, 0.0), n, p), 0, 1), np.where(k < 0, 1.0, 0.0))
    return _scalar_or_array(out)


def t_ppf(q, df):  # noqa: ANN001, ANN201
    """The q-quantile of Student's t with ``df`` degrees of freedom (0 < q < 1).

    Parameters
    ----------
    q : float or array_like
        The probability, in [0, 1] (q = 0 gives -inf, q = 1 gives inf; outside [0, 1], NaN).
    df : float or array_like
        Degrees of freedom, > 0.

    Returns
    -------
    float or numpy.ndarray
        The quantile; a float for scalar arguments, else an array of their broadcast shape.
    """
    q, df = _floats(q, df)
    inside = (q > 0) & (q < 1)
    out = np.where(inside, special.stdtrit(df, np.where(inside, q, 0.5)), np.where(q >= 1, np.inf, -np.inf))
    out = np.where((q < 0) | (q > 1) | np.isnan(q), np.nan, out)
    return _scalar_or_array(out)
