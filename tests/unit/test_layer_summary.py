"""The per-layer summary of a spectrum run: one function behind `SpectrumResult.per_layer` and
the table `attnspec spectrum` prints."""

from __future__ import annotations

import numpy as np
import pandas as pd

from attnspec.spectra.layer_summary import per_layer, reading_index

REACH = "index_at_0.9_of_mean_curve"


def _tables(layers: int = 2, heads: int = 3, n: int = 8) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(0)
    curves = pd.DataFrame(
        [
            {"layer": l, "head": h, "index": i, "mean": rng.uniform(), "std": 0.0, "count": 4}
            for l in range(layers)
            for h in range(heads)
            for i in range(1, n + 1)
        ]
    )
    metrics = pd.DataFrame(
        [
            {
                "layer": l,
                "head": h,
                REACH: float(rng.integers(1, n + 1)),
                "effective_rank_mean": rng.uniform(1, n),
                "stable_rank_mean": rng.uniform(1, n),
            }
            for l in range(layers)
            for h in range(heads)
        ]
    )
    return curves, metrics


def test_heads_are_averaged_and_the_reach_is_the_median_head() -> None:
    curves, metrics = _tables()
    meta = {"corpus": {"input_lengths": {"min": 8, "median": 8, "max": 8}}}
    table = per_layer(curves, metrics, meta, 3)
    assert list(table.columns) == ["layer", f"median_{REACH}", "effective_rank_mean", "stable_rank_mean", "mean_c_3"]
    for layer in (0, 1):
        row = table[table["layer"] == layer].iloc[0]
        c = curves[(curves["layer"] == layer) & (curves["index"] == 3)]["mean"].mean()
        m = metrics[metrics["layer"] == layer]
        assert np.isclose(row["mean_c_3"], c) and row[f"median_{REACH}"] == m[REACH].median()
        assert np.isclose(row["stable_rank_mean"], m["stable_rank_mean"].mean())


def test_c_at_beyond_the_shortest_input_is_nan_and_nulls_keep_their_order() -> None:
    curves, metrics = _tables()
    nulls = pd.concat(
        [
            metrics.assign(baseline=name, **{REACH: metrics[REACH] + k})
            for k, name in enumerate(("uniform", "entropy-matched"), start=1)
        ]
    )
    meta = {"corpus": {"input_lengths": {"min": 2, "median": 5, "max": 8}}}
    table = per_layer(curves, metrics, meta, 3, baseline_metrics=nulls)
    assert table["mean_c_3"].isna().all()
    assert list(table.columns[1:4]) == [
        f"median_{REACH}",
        f"median_{REACH}_uniform_null",
        f"median_{REACH}_entropy-matched_null",
    ]
    assert (table[f"median_{REACH}_uniform_null"] == table[f"median_{REACH}"] + 1).all()


def test_the_reading_index_is_the_recorded_one_unless_asked() -> None:
    assert reading_index({}, 512, None) == 128 and reading_index({}, 64, None) == 16
    assert reading_index({"figures": {"at": 5}}, 64, None) == 5 and reading_index({"figures": {"at": 5}}, 64, 7) == 7
