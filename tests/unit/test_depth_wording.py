"""Statements about a model's layers take the layers as their unit: a trend over depth is named
only when the permutation test over the layer means supports it, otherwise the sentence says
"no trend shown" (the rule itself: tests/unit/test_depth_permutation.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from attnspec.numerics.depth import depth_permutation_test, depth_sentence


def test_a_zigzag_over_six_layers_is_worded_no_trend_shown() -> None:
    # six layer means that are not monotone (layer 2 < layer 1), as MiniLM's c_128 on IMDB
    trend = depth_permutation_test(np.array([0.80, 0.74, 0.83, 0.79, 0.86, 0.81]))
    assert trend.p > 0.1
    text = depth_sentence("c at n/4", trend)
    assert "no trend shown" in text and "rises" not in text and "720 orderings of 6 layer means" in text
    assert "this model on this corpus" in text


def test_a_monotone_profile_over_many_layers_is_named_a_trend() -> None:
    means = np.linspace(0.1, 0.9, 30) + 0.01 * np.random.default_rng(0).standard_normal(30)
    assert "rises with depth" in depth_sentence("k90/n", depth_permutation_test(means))
    assert "falls with depth" in depth_sentence("k90/n", depth_permutation_test(-means))


def test_depth_trends_of_a_comparison_carry_the_layer_level_statement() -> None:
    from attnspec.spectra.compare import depth_trends

    zigzag = [0.80, 0.74, 0.83, 0.79, 0.86, 0.81]
    table = pd.DataFrame({"quantity": "c_at", "run": "r", "label": "c at n/4", "layer": range(6), "mean": zigzag})
    row = depth_trends(table).iloc[0]
    assert row["orderings"] == 720 and row["p"] > 0.1
    assert row["phrase"] == "no trend shown" and "no trend shown" in row["statement"]
