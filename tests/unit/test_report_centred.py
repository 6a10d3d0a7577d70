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


def _overall(c_centred: float | None, low: float = 0.0, high: float = 0.0) -> pd.DataFrame:
    """A run's statistics (attnspec.spectra.decoder_study.run_statistics) with only the overall rows."""
    rows = [{"quantity": "c_at", "layer": -1, "mean": 0.8, "low": 0.79, "high": 0.81, "n": 64, "at": 16}]
    if c_centred is not None:  # n = 64 keeps the triangle's closed form quick
        rows.append(
            {"quantity": "c_centred", "layer": -1, "mean": c_centred, "low": low, "high": high, "n": 64, "at": 16}
        )
    return pd.DataFrame(rows)


def test_the_decoder_says_its_centred_measure_beside_the_encoder_and_the_triangle_or_that_it_lacks_it() -> None:
    from pathlib import Path

    from attnspec.report.decoder import _centred_note
    from attnspec.spectra.centred import uniform_centred_at
    from attnspec.spectra.decoder_study import Run

    encoder = Run(Path("x"), "spectrum-minilm-wiki103", "minilm", "wiki103", 512, 400, False, 6, 12, None)
    shape = uniform_centred_at(64, 16, causal=True)
    text = _centred_note(_overall(0.70, 0.69, 0.71), encoder, _overall(0.826, 0.825, 0.827))
    assert (
        text.startswith(" Centred measure (P less its mean row")
        and "c_centred at index 16: 0.700 [0.690, 0.710]" in text
    )
    assert "MiniLM" in text and "at the same n: 0.826 [0.825, 0.827]" in text
    assert f"the triangle's shape alone: {shape:.3f} — below it" in text and "no learned low-rank" in text
    above = _centred_note(_overall(0.99, 0.985, 0.995), encoder, _overall(None))
    assert "at the same n: not measured" in above and "above it" in above
    assert "contains it" in _centred_note(_overall(shape, shape - 0.01, shape + 0.01), None, None)
    assert "not measured in this run's results" in _centred_note(_overall(None), encoder, _overall(0.826))


def test_the_uniform_p_s_centred_value_is_one_for_an_encoder_and_the_triangle_s_for_a_decoder() -> None:
    import pytest

    from attnspec.spectra.centred import centred_curve, uniform_centred_at

    assert uniform_centred_at(64, 16, causal=False) == 1.0
    tri = np.tril(np.ones((64, 64))) / np.arange(1, 65)[:, None]
    assert uniform_centred_at(64, 16, causal=True) == pytest.approx(centred_curve(tri)[15])
    assert 0.5 < uniform_centred_at(512, 128, causal=True) < 1.0
    with pytest.raises(ValueError, match="at in 1..n, got n = 8, at = 9"):
        uniform_centred_at(8, 9, causal=True)
