"""A saved table against its recomputed twin: bit for bit by default, within a tolerance when
asked, the columns a later metric adds named, and every other difference named per column."""

from __future__ import annotations

import numpy as np
import pandas as pd

from attnspec.spectra.recompute import compare_table


def _saved() -> pd.DataFrame:
    return pd.DataFrame({"layer": [0, 1], "baseline": ["uniform", "uniform"], "mean": [0.5, 2.0], "std": [np.nan, 0.1]})


def test_the_same_values_are_identical_and_a_later_metric_s_columns_are_added() -> None:
    fresh = _saved().assign(c_centred_mean=[0.7, 0.8])
    check = compare_table("metrics", _saved(), fresh)
    assert check.bit_identical and check.identical and check.added == ["c_centred_mean"] and check.within == {}


def test_a_difference_in_the_last_digits_fails_bit_for_bit_and_passes_within_its_tolerance() -> None:
    fresh = _saved()
    fresh.loc[1, "mean"] = 2.0 + 1e-7
    strict = compare_table("metrics", _saved(), fresh)
    assert not strict.identical and strict.differing == ["mean (largest difference 1e-07)"]
    loose = compare_table("metrics", _saved(), fresh, rtol=1e-6)
    assert loose.identical and not loose.bit_identical and loose.within["mean"] == np.float64(2.0 + 1e-7) - 2.0
    assert not compare_table("metrics", _saved(), fresh, rtol=1e-9).identical


def test_nan_labels_dtypes_rows_and_missing_columns_are_differences() -> None:
    fresh = _saved()
    fresh.loc[0, "std"] = 0.2
    assert compare_table("t", _saved(), fresh, rtol=1.0).differing == ["std (NaN in one table only)"]
    labels = _saved().assign(baseline=["uniform", "entropy-matched"])
    assert compare_table("t", _saved(), labels).differing == ["baseline (values differ)"]
    ints = _saved().assign(layer=[0.0, 1.0])
    assert compare_table("t", _saved(), ints).differing == ["layer (dtype int64 against float64)"]
    assert compare_table("t", _saved(), _saved().iloc[:1]).differing == ["rows (2 saved, 1 recomputed)"]
    assert compare_table("t", _saved(), _saved().drop(columns="std")).missing == ["std"]


def test_an_exempt_column_s_difference_is_recorded_and_does_not_count() -> None:
    fresh = _saved()
    fresh.loc[0, "mean"] = 0.55  # the tail curve of a rank-one P: rounding over rounding
    check = compare_table("baseline_spectrum", _saved(), fresh, exempt=["mean"])
    assert check.identical and not check.bit_identical and check.exempt == {"mean": np.float64(0.55) - 0.5}
    assert not compare_table("baseline_spectrum", _saved(), fresh).identical


def test_a_single_length_run_is_refused_as_not_a_scaling_study_before_any_computation(tmp_path) -> None:  # noqa: ANN001
    import json

    import pytest

    from attnspec.errors import ResultsError
    from attnspec.spectra.recompute import recompute_length

    (tmp_path / "meta.json").write_text(json.dumps({"kind": "spectrum", "status": "complete"}))
    with pytest.raises(ResultsError, match=r"is not a scaling study \(meta.json kind 'spectrum'\)"):
        recompute_length(tmp_path, 64, scratch=tmp_path / "again")
    assert not (tmp_path / "again").exists()
