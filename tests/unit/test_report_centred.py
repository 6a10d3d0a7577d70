"""The report reads the centred measure under the name the metrics table saves it."""

from __future__ import annotations

import numpy as np
import pandas as pd


def test_the_centred_measure_is_read_from_c_centred() -> None:
    from attnspec.report.null_values import centred_value

    held = pd.DataFrame({"c_at_mean": [0.8, 0.9], "c_centred_mean": [0.5, 0.7]})
    assert centred_value(held) == ("c_centred", 0.6)
    older = pd.DataFrame({"c_at_mean": [0.8, 0.9], "c_centred_mean": [np.nan, np.nan]})
    assert centred_value(older) is None and centred_value(older.drop(columns="c_centred_mean")) is None


def _null(source: str, c_at: float, centred: float = float("nan")):  # noqa: ANN202
    from attnspec.report.null_values import NullValue

    return NullValue(source=source, c_at=c_at, k90=0.3, row_entropy=0.99, where="x", c_centred=centred)


def test_the_random_init_model_is_read_in_the_sentence_that_gives_the_real_value() -> None:
    from attnspec.report.null_values import null_reading

    above = null_reading(0.78, 0.40, {"random-init": _null("random-init", 0.865)}, at=128)
    assert above.startswith("c at index 128: the real P 0.780") and "0.865" in above
    assert "above the trained P" in above and "averaging gives" in above and ". " not in above  # one sentence
    below = null_reading(0.90, 0.40, {"random-init": _null("random-init", 0.865)}, at=128)
    assert "below the trained P" in below


def test_the_centred_measure_is_read_against_the_nulls_that_hold_it_and_lacking_runs_are_named() -> None:
    from dataclasses import dataclass

    from attnspec.report.figure1 import _centred_sentence

    @dataclass
    class Exp:
        name: str

    runs = [Exp("mpnet"), Exp("minilm")]
    statements = {"mpnet": {"at": 128, "centred": ("c_centred", 0.769)}, "minilm": {"at": 128, "centred": None}}
    nulls = {
        "mpnet": {
            "entropy-matched": _null("entropy-matched", 0.53),
            "uniform": _null("uniform", 1.0),
            "random-init": _null("random-init", 0.865, 0.819),
        }
    }
    text = _centred_sentence(runs, statements, nulls)
    assert "`mpnet` 0.769 (random init 0.819)" in text
    assert "not measured in `minilm`" in text
    assert "not held by the entropy null, uniform null" in text
    assert "re-initialised model still keeps more" in text
    statements["minilm"]["centred"] = ("c_centred", 0.81)
    nulls["minilm"] = {"random-init": _null("random-init", 0.97)}  # its study saved without the measure
    assert "`minilm` 0.810 (random init not measured)" in _centred_sentence(
        runs, statements, nulls
    )  # 0.819 > 0.769: no structure shown beyond averaging
    nulls["mpnet"]["random-init"] = _null("random-init", 0.865, 0.70)
    assert "structure beyond averaging that training adds" in _centred_sentence(runs, statements, nulls)


def test_the_decoder_says_its_centred_measure_or_that_its_runs_lack_it(tmp_path) -> None:  # noqa: ANN001
    from attnspec.report.decoder import _centred_note

    pd.DataFrame({"layer": [0, 1], "c_centred_mean": [0.6, 0.8]}).to_parquet(tmp_path / "metrics.parquet")
    assert _centred_note(tmp_path) == " Centred measure (P less its mean row), c_centred at index n/4: 0.700."
    pd.DataFrame({"layer": [0, 1], "c_at_mean": [0.6, 0.8]}).to_parquet(tmp_path / "metrics.parquet")
    assert "not measured in this run's results" in _centred_note(tmp_path)
