"""The fixed-k study's split, rule, summaries, reading and figure, on small synthetic tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from attnspec.errors import InputError
from attnspec.spectra.approx.measure import split_documents
from attnspec.spectra.approx.rule import THRESHOLD, slopes, summarise, tables, verdict


def test_train_and_held_out_documents_are_disjoint_and_drawn_by_seed():
    train, held = split_documents(20, 8, 8, seed=3)
    assert len(train) == 8 and len(held) == 8 and not set(train) & set(held)
    assert split_documents(20, 8, 8, seed=3) == (train, held)
    assert split_documents(20, 8, 8, seed=4) != (train, held)
    assert set(train) | set(held) <= set(range(20))
    with pytest.raises(InputError, match="8 training \\+ 8 held-out documents, but the study has 12"):
        split_documents(12, 8, 8, seed=0)
    with pytest.raises(InputError, match=">= 2 held-out"):
        split_documents(12, 4, 1, seed=0)


def _table(slope_per_doubling: float, noise: float, docs: int = 8, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for doc in range(docs):
        base = 0.5 + 0.05 * rng.standard_normal()
        for n in (128, 256, 512):
            err = base + slope_per_doubling * np.log2(n / 128) + noise * rng.standard_normal()
            for layer in range(2):
                rows.append([n, 64, "m", doc, layer, 0, err, "no bias"])
    return pd.DataFrame(rows, columns=["n", "k", "method", "input", "layer", "head", "error", "scores"])


def test_the_rule_reads_the_slope_interval_against_the_threshold():
    assert verdict(-0.01, 0.01) == "a fixed k holds"
    assert verdict(0.03, 0.05) == "grows"
    assert verdict(0.01, 0.03) == "unresolved" and verdict(np.nan, np.nan) == "unresolved"
    flat, growing = slopes(_table(0.0, 0.002)), slopes(_table(0.1, 0.002))
    assert flat["verdict"].item() == "a fixed k holds" and flat["slope_high"].item() < THRESHOLD
    assert growing["verdict"].item() == "grows" and growing["slope"].item() == pytest.approx(0.1, abs=0.005)
    assert slopes(_table(0.02, 0.2))["verdict"].item() == "unresolved"  # too noisy to tell
    one_length = _table(0.0, 0.01)
    assert slopes(one_length[one_length["n"] == 128])["verdict"].item() == "unresolved"


def test_summaries_resample_documents_and_read_back_as_one_row_per_k_and_method(tmp_path):
    from attnspec.spectra.approx.reading import verdict_sentence, verdict_table

    errors = _table(0.1, 0.01)
    s = summarise(errors)
    assert len(s) == 3 and (s["error_low"] <= s["error"]).all() and (s["error"] <= s["error_high"]).all()
    assert (s["resampled"] == "held-out documents").all() and (s["inputs"] == 8).all()
    assert len(summarise(errors, by_layer=True)) == 6
    errors = errors.assign(method="performer")
    e2e = (
        errors.groupby(["n", "k", "method", "input"], as_index=False)["error"]
        .mean()
        .rename(columns={"error": "cosine"})
    )
    saved = {"approx": errors, "approx_end_to_end": e2e}
    saved.update(tables(saved))
    v = verdict_table(saved, {"k": [64], "refused": {"nystrom": "nystrom has no causal form"}})
    assert list(v["method"]) == ["nystrom", "performer"] and v.iloc[0]["note"].startswith("nystrom has no causal")
    text = verdict_sentence(v[v["method"] == "performer"].iloc[0])
    assert "at n = 128" in text and "at n = 512" in text and "grows by the rule" in text and "8 held-out" in text


def test_the_figure_is_print_ready(monkeypatch):
    import matplotlib.pyplot as plt
    from test_plots_readable import assert_print_ready

    import attnspec.plots.approx as module
    from attnspec.plots import COLUMN_IN

    kept = []
    monkeypatch.setattr(module, "save_figure", lambda fig, stem, formats=(): kept.append(fig) or [])
    errors = pd.concat([_table(0.1, 0.01).assign(method=m) for m in ("performer", "uniform")])
    errors = pd.concat([errors, errors.assign(k=128)])
    module.plot_approx(tables({"approx": errors})["approx_summary"], "unused", title="model · corpus")
    assert kept
    assert_print_ready(kept[0], "approx_errors")
    assert kept[0].get_figwidth() == pytest.approx(COLUMN_IN)  # one column, as the report prints it
    plt.close(kept[0])
