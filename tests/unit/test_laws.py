"""attnspec.numerics.laws gives scipy.stats' values to the last bit, edges of every support included."""

from __future__ import annotations

import numpy as np
from scipy import stats as sps

from attnspec.numerics import laws


def _same(a, b) -> None:  # noqa: ANN001
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and np.array_equal(a, b, equal_nan=True), (a, b)


def test_chi2_matches_scipy_stats() -> None:
    x = np.array([-1.0, 0.0, 1e-300, 1e-8, 0.5, 1.0, 3.0, 40.0, 1e3, 5e4, np.inf])
    for k in (1, 2, 7, 64, 4095, 10_000):
        _same(laws.chi2_cdf(x, k), sps.chi2.cdf(x, k))
        _same(laws.chi2_sf(x, k), sps.chi2.sf(x, k))
        for xi in x:  # scalars come back as scalars
            assert laws.chi2_sf(float(xi), k) == sps.chi2.sf(float(xi), k)
            assert isinstance(laws.chi2_sf(float(xi), k), float | np.floating)


def test_beta_matches_scipy_stats() -> None:
    x = np.array([-0.5, 0.0, 1e-12, 0.01, 0.3, 0.5, 0.99, 1.0 - 1e-15, 1.0, 2.0])
    for a, b in ((0.5, 0.5), (2.0, 2047.0), (8.0, 2040.0), (2047.5, 0.5), (1.0, 1.0)):
        _same(laws.beta_cdf(x, a, b), sps.beta(a, b).cdf(x))
        _same(laws.beta_sf(x, a, b), sps.beta(a, b).sf(x))


def test_binomial_matches_scipy_stats() -> None:
    x = np.array([-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 9.0, 9.5, 10.0, 10.5, 11.0, 500.0])
    for n, p in ((10, 0.5), (10, 0.001), (4096, 1 / 64), (4621, 0.0156), (1, 0.3)):
        _same(laws.binom_pmf(x, n, p), sps.binom.pmf(x, n, p))
        _same(laws.binom_cdf(x, n, p), sps.binom.cdf(x, n, p))
        _same(laws.binom_sf(x, n, p), sps.binom.sf(x, n, p))
    N = np.arange(0, 41, 2)
    _same(laws.binom_pmf(N // 2, N, 0.5), sps.binom.pmf(N // 2, N, 0.5))  # broadcast n


def test_t_quantile_matches_scipy_stats() -> None:
    q = np.array([-0.1, 0.0, 1e-12, 0.025, 0.5, 0.975, 0.995, 1 - 1e-12, 1.0, 1.2])
    for df in (1, 2, 3, 7, 15, 199, 9999):
        _same(laws.t_ppf(q, df), sps.t.ppf(q, df))
        assert laws.t_ppf(0.975, df) == sps.t.ppf(0.975, df)
