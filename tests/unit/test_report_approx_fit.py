"""The appendix sets a fitted method's training error beside its held-out error."""

from __future__ import annotations

import pandas as pd

from attnspec.report.approx_part import _fit_lines


def _verdicts(note: str = "") -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "method": "linformer-fit",
                "k": 16,
                "note": note,
                "n_first": 32,
                "n_last": 64,
                "error_first": 0.9,
                "error_last": 1.1,
            }
        ]
    )


def _fits(tmp_path):
    rows = [
        {
            "n": n,
            "k": 16,
            "method": "linformer-fit",
            "layer": layer,
            "optimizer": "Adam",
            "steps": 5,
            "init": "segment means",
            "train_error": err,
            "train_inputs": 2,
        }
        for n, errs in ((32, (0.5, 0.7)), (64, (0.6, 0.8)))
        for layer, err in enumerate(errs)
    ]
    pd.DataFrame(rows).to_parquet(tmp_path / "approx_fits.parquet")


def test_training_and_held_out_error_side_by_side(tmp_path):
    _fits(tmp_path)
    (line,) = _fit_lines(tmp_path, _verdicts())
    assert "training error 0.600 (n = 32) → 0.700 (n = 64) on 2 documents" in line
    assert "(Adam, 5 steps, initialised at segment means)" in line
    assert "held-out 0.900 → 1.100, +0.400 above training at n = 64" in line


def test_nothing_without_fits_or_for_a_method_not_applied(tmp_path):
    assert _fit_lines(tmp_path, _verdicts()) == []
    _fits(tmp_path)
    assert _fit_lines(tmp_path, _verdicts(note="not causal")) == []
