"""Statements about a model's layers take the layers as their unit: a trend over depth is named
only when the layer-level interval excludes 0, otherwise the sentence says "no trend shown"."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from attnspec.numerics.stats import depth_statement, layer_bootstrap_trend


def test_a_layer_level_interval_containing_zero_is_worded_no_trend_shown() -> None:
    # six layer means that are not monotone (layer 2 < layer 1), as MiniLM's c_128 on IMDB
    means = np.array([0.80, 0.74, 0.83, 0.79, 0.86, 0.81])
    rho, low, high = layer_bootstrap_trend(means, resamples=2000, seed=0)
    assert low < 0 < high
    text = depth_statement("c at n/4", rho, low, high, layers=6)
    assert "no trend shown" in text and "rises" not in text and "resampling its 6 layers" in text
    assert "this model on this corpus" in text


def test_a_monotone_profile_over_many_layers_is_named_a_trend() -> None:
    means = np.linspace(0.1, 0.9, 30) + 0.01 * np.random.default_rng(0).standard_normal(30)
    rho, low, high = layer_bootstrap_trend(means, resamples=2000, seed=0)
    assert low > 0
    assert "rises with depth" in depth_statement("k90/n", rho, low, high, layers=30)
    assert "falls with depth" in depth_statement("k90/n", -rho, -high, -low, layers=30)


def test_bootstrap_is_seeded_and_refuses_too_few_layers() -> None:
    means = np.array([0.3, 0.1, 0.4, 0.2, 0.5])
    assert layer_bootstrap_trend(means, seed=4) == layer_bootstrap_trend(means, seed=4)
    with pytest.raises(ValueError, match="at least 4"):
        layer_bootstrap_trend(np.array([0.1, 0.2, 0.3]))


def test_depth_trends_of_a_comparison_carry_the_layer_level_statement() -> None:
    from attnspec.spectra.compare import depth_trends

    zigzag = [0.80, 0.74, 0.83, 0.79, 0.86, 0.81]
    table = pd.DataFrame({"quantity": "c_at", "run": "r", "label": "c at n/4", "layer": range(6), "mean": zigzag})
    row = depth_trends(table).iloc[0]
    assert row["orderings"] == 720 and row["p"] > 0.1
    assert row["phrase"] == "no trend shown" and "no trend shown" in row["statement"]
