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


def test_the_scaling_study_reads_beta_over_depth_by_the_one_rule() -> None:
    import pandas as pd

    from attnspec.report.beyond import beta_depth_sentence

    def fits(betas):  # noqa: ANN001, ANN202
        return pd.DataFrame({"metric": "reach_index", "layer": range(len(betas)), "beta": betas})

    rising = beta_depth_sentence(fits([0.90, 0.93, 0.95, 0.97, 0.99, 1.02]))
    assert "β of k90 rises with depth" in rising and "720 orderings" in rising
    assert "no trend shown in β of k90" in beta_depth_sentence(fits([0.95, 1.01, 0.93, 1.00, 0.96, 0.99]))
    assert beta_depth_sentence(fits([0.9, 1.0, 1.1])) == ""  # too few layers to say anything of depth
