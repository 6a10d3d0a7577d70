"""`attnspec compare`: Welch intervals from stored statistics cover the true difference at their rate."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from attnspec.spectra.compare import layer_statistics, welch_interval


def _simulated_run(mu: np.ndarray, m: int, rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-head (mean, std, count) and per-input head means of X = mu + shared input effect + head noise.

    mu: (L, H). The input effect is shared by the heads of a layer, so heads are correlated.
    """
    L, H = mu.shape
    x = mu[None] + rng.normal(0, 1.0, size=(m, L, 1)) + rng.normal(0, 0.5, size=(m, L, H))  # (m, L, H)
    layer, head = np.meshgrid(np.arange(L), np.arange(H), indexing="ij")
    per_head = pd.DataFrame(
        {
            "layer": layer.ravel(),
            "head": head.ravel(),
            "mean": x.mean(0).ravel(),
            "std": x.std(0, ddof=1).ravel(),
            "count": m,
        }
    )
    per_input = pd.DataFrame(
        {"input": np.repeat(np.arange(m), L), "layer": np.tile(np.arange(L), m), "v": x.mean(axis=2).ravel()}
    )
    return per_head, per_input


def test_welch_intervals_cover_the_true_difference_at_the_stated_rate() -> None:
    rng = np.random.default_rng(2024)
    L, H, reps = 2, 4, 100
    mu_a = rng.normal(0, 1, size=(L, H))
    mu_b = mu_a + np.array([[0.3], [-0.2]])
    true = (mu_b - mu_a).mean(axis=1)  # per layer
    misses = {"per-input": 0, "bound": 0}
    for _ in range(reps):
        ha, ia = _simulated_run(mu_a, 25, rng)
        hb, ib = _simulated_run(mu_b, 40, rng)  # unequal sizes: Welch, not pooled
        for method, (sa, sb) in {
            "per-input": (layer_statistics(ha, ia, "v"), layer_statistics(hb, ib, "v")),
            "bound": (layer_statistics(ha), layer_statistics(hb)),
        }.items():
            assert set(sa["method"]) == {method}
            for layer in range(L):
                a, b = sa.set_index("layer").loc[layer], sb.set_index("layer").loc[layer]
                _, lo, hi = welch_interval(b["mean"], b["se"], b["dof"], a["mean"], a["se"], a["dof"])
                misses[method] += not lo <= true[layer] <= hi
    trials = reps * L
    # exact intervals: misses ~ Binomial(200, 0.05); accept the central 99.9% of that law
    lo_ok, hi_ok = stats.binom.ppf([0.0005, 0.9995], trials, 0.05)
    assert lo_ok <= misses["per-input"] <= hi_ok, misses
    # the bounded standard error can only widen the interval: at most the nominal miss rate
    assert misses["bound"] <= hi_ok and misses["bound"] <= misses["per-input"], misses


def test_overall_row_and_degenerate_cases() -> None:
    rng = np.random.default_rng(0)
    h, i = _simulated_run(np.zeros((3, 2)), 10, rng)
    st = layer_statistics(h, i, "v")
    assert list(st["layer"]) == [0, 1, 2, -1]
    assert st.set_index("layer").loc[-1, "mean"] == pytest.approx(i["v"].mean())
    assert welch_interval(1.0, 0.0, 5, 1.0, 0.0, 5) == (0.0, 0.0, 0.0)


def test_the_compared_metrics_are_the_metrics_table() -> None:
    from attnspec.spectra.compare import METRICS
    from attnspec.spectra.metric_table import METRIC_TABLE

    assert METRICS == tuple(m.name for m in METRIC_TABLE) and "c_centred" in METRICS
