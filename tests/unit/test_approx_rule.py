"""The fixed-k study's split, rule, summaries, reading and figure, on small synthetic tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from attnspec.errors import InputError
from attnspec.spectra.approx.measure import split_documents
from attnspec.spectra.approx.rule import (
    NO_BETTER,
    NO_BETTER_THAN_ZERO,
    THRESHOLD,
    VERDICTS,
    final_verdict,
    rule_table,
    slopes,
    summarise,
    tables,
    verdict,
)


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


def _table(
    slope_per_doubling: float, noise: float, docs: int = 8, seed: int = 0, method: str = "m", level: float = 0.5
) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for doc in range(docs):
        base = level + 0.05 * rng.standard_normal()
        for n in (128, 256, 512):
            err = base + slope_per_doubling * np.log2(n / 128) + noise * rng.standard_normal()
            for layer in range(2):
                rows.append([n, 64, method, doc, layer, 0, err, "no bias"])
    return pd.DataFrame(rows, columns=["n", "k", "method", "input", "layer", "head", "error", "scores"])


def _with_uniform(table: pd.DataFrame, level: float = 0.8, slope: float = -0.05) -> pd.DataFrame:
    """``table`` beside a uniform reference on the same documents (its own draws, seed 1)."""
    return pd.concat([table, _table(slope, 0.002, seed=1, method="uniform", level=level)], ignore_index=True)


def _verdict(rule: pd.DataFrame, method: str = "m") -> str:
    return rule.loc[rule["method"] == method, "verdict"].item()


def test_the_rule_reads_the_slope_interval_against_the_threshold():
    assert verdict(-0.01, 0.01) == "a fixed k holds"
    assert verdict(0.03, 0.05) == "grows"
    assert verdict(0.01, 0.03) == "unresolved" and verdict(np.nan, np.nan) == "unresolved"
    flat, growing = slopes(_with_uniform(_table(0.0, 0.002))), slopes(_with_uniform(_table(0.1, 0.002)))
    assert _verdict(flat) == "a fixed k holds" and flat.loc[flat["method"] == "m", "slope_high"].item() < THRESHOLD
    assert _verdict(growing) == "grows"
    assert growing.loc[growing["method"] == "m", "slope"].item() == pytest.approx(0.1, abs=0.005)
    assert _verdict(slopes(_with_uniform(_table(0.02, 0.2)))) == "unresolved"  # too noisy to tell
    one_length = _with_uniform(_table(0.0, 0.01))
    assert _verdict(slopes(one_length[one_length["n"] == 128])) == "unresolved"


def test_a_fixed_k_holds_only_below_uniform_attention_at_every_n():
    # uniform attention itself has a flat (here falling) error: it is the null, not a method that holds
    below = slopes(_with_uniform(_table(0.0, 0.002, level=0.5)))
    assert _verdict(below, "uniform") == "the null" and below.loc[below["method"] == "uniform", "slope_high"].item() < 0
    assert _verdict(below) == "a fixed k holds" and below.loc[below["method"] == "m", "uniform_gap_high"].item() < 0
    # flat, but at uniform's level: the slope passes, the comparison does not
    level = slopes(_with_uniform(_table(0.0, 0.002, level=0.8), slope=0.0))
    assert level.loc[level["method"] == "m", "slope_verdict"].item() == "a fixed k holds"
    assert _verdict(level) == "no better than uniform"
    # below uniform at n = 128 and 256 but not at 512 (uniform falls faster): not below at every n
    late = slopes(_with_uniform(_table(0.0, 0.002, level=0.6), level=0.8, slope=-0.15))
    assert _verdict(late) == "no better than uniform" and late.loc[late["method"] == "m", "uniform_gap_high"].item() > 0
    # a growing method grows whatever uniform does; without the null the rule cannot grant "holds"
    assert _verdict(slopes(_with_uniform(_table(0.1, 0.002), level=2.0))) == "grows"
    assert _verdict(slopes(_table(0.0, 0.002))) == "unresolved"
    assert final_verdict("a fixed k holds", 1.0, 1.0) == "a fixed k holds"
    assert final_verdict("a fixed k holds", 0.0, 1.0) == "no better than uniform"
    assert final_verdict("unresolved", 0.0, 1.0) == "unresolved"
    assert final_verdict("grows", 1.0, 1.0, null=True) == "the null"


def test_a_method_whose_error_is_not_below_one_at_every_n_is_no_better_than_zero_output():
    # flat and below uniform (which sits above 1 here, as on MPNet), but at 1.1: worse than outputting zero
    above = slopes(_with_uniform(_table(0.0, 0.002, level=1.1), level=1.2, slope=0.0))
    row = above[above["method"] == "m"].iloc[0]
    assert row["slope_verdict"] == "a fixed k holds" and row["below_uniform"] == 1.0
    assert row["below_zero_output"] == 0.0 and row["zero_gap_high"] > 0
    assert row["verdict"] == NO_BETTER_THAN_ZERO
    # below 1 at n = 128 only: not below at every n, whatever the slope (here growing)
    crossing = slopes(_with_uniform(_table(0.2, 0.002, level=0.9), level=2.0))
    assert crossing.loc[crossing["method"] == "m", "slope_verdict"].item() == "grows"
    assert _verdict(crossing) == NO_BETTER_THAN_ZERO
    # just below 1 with an interval reaching 1: the interval, not the mean, decides
    noisy = _with_uniform(_table(0.0, 0.3, level=0.97), level=1.5)
    mean = summarise(noisy[noisy["method"] == "m"])
    assert (mean["error"] < 1).all() and (mean["error_high"] >= 1).any()
    assert _verdict(slopes(noisy)) == NO_BETTER_THAN_ZERO
    # below both references: the slope decides; the null keeps its word even above 1
    assert _verdict(slopes(_with_uniform(_table(0.0, 0.002, level=0.5)))) == "a fixed k holds"
    assert (
        _verdict(above, "uniform") == "the null" and above.loc[above["method"] == "uniform", "zero_gap_high"].item() > 0
    )
    # above both references (uniform at 0.8): zero output takes precedence over uniform
    both = slopes(_with_uniform(_table(0.0, 0.002, level=1.1), level=0.8, slope=0.0))
    assert both.loc[both["method"] == "m", "below_uniform"].item() == 0.0 and _verdict(both) == NO_BETTER_THAN_ZERO
    # zero output's error is 1 by construction, so its comparison needs no reference in the table
    alone = slopes(_table(0.0, 0.002, level=1.1))
    assert _verdict(alone) == NO_BETTER_THAN_ZERO and np.isnan(alone["uniform_gap_high"].item())


def test_the_precedence_of_the_two_references_and_the_slope():
    # zero output first: above 1 and above uniform reads "no better than zero output"
    assert final_verdict("a fixed k holds", 0.0, 0.0) == NO_BETTER_THAN_ZERO
    assert final_verdict("grows", 0.0, 0.0) == NO_BETTER_THAN_ZERO
    assert final_verdict("unresolved", 1.0, 0.0) == NO_BETTER_THAN_ZERO
    # then the slope: a growing method below 1 grows whether or not it beats uniform
    assert final_verdict("grows", 0.0, 1.0) == "grows" and final_verdict("grows", float("nan"), 1.0) == "grows"
    # then uniform, for a slope that holds; a comparison that could not be made grants nothing
    assert final_verdict("a fixed k holds", 0.0, 1.0) == NO_BETTER
    assert final_verdict("a fixed k holds", float("nan"), 1.0) == "unresolved"
    assert final_verdict("a fixed k holds", 1.0, float("nan")) == "unresolved"
    assert final_verdict("a fixed k holds", 0.0, 0.0, null=True) == "the null"
    # one vocabulary, in the order of precedence, each word with one short form
    assert list(VERDICTS)[:2] == ["the null", NO_BETTER_THAN_ZERO] and len(set(VERDICTS.values())) == len(VERDICTS)


def test_summaries_resample_documents_and_read_back_as_one_row_per_k_and_method(tmp_path):
    from attnspec.spectra.approx.reading import verdict_sentence, verdict_table

    errors = _table(0.1, 0.01)
    s = summarise(errors)
    assert len(s) == 3 and (s["error_low"] <= s["error"]).all() and (s["error"] <= s["error_high"]).all()
    assert (s["resampled"] == "held-out documents").all() and (s["inputs"] == 8).all()
    assert len(summarise(errors, by_layer=True)) == 6
    errors = _with_uniform(errors.assign(method="performer"), level=2.0)
    e2e = (
        errors.groupby(["n", "k", "method", "input"], as_index=False)["error"]
        .mean()
        .rename(columns={"error": "cosine"})
    )
    saved = {"approx": errors, "approx_end_to_end": e2e}
    saved.update(tables(saved))
    v = verdict_table(saved, {"k": [64], "refused": {"nystrom": "nystrom has no causal form"}})
    assert list(v["method"]) == ["nystrom", "performer", "uniform"] and v.iloc[0]["note"].startswith("nystrom has no")
    text = verdict_sentence(v[v["method"] == "performer"].iloc[0])
    assert "at n = 128" in text and "at n = 512" in text and "grows by the rule" in text and "8 held-out" in text
    assert "below uniform attention's at every n" in text
    # a rule saved without the comparison with uniform is read again from the raw errors
    old = saved["approx_rule"].drop(columns=["uniform_gap_high", "below_uniform", "slope_verdict"])
    again = verdict_table({**saved, "approx_rule": old.assign(verdict="a fixed k holds")}, {"k": [64]})
    assert list(again["verdict"]) == ["grows", "the null"]


def test_a_rule_saved_without_the_zero_output_columns_is_read_again(tmp_path):
    import json

    from attnspec.spectra.approx.reading import read_verdicts
    from attnspec.spectra.approx.saved import read_approx
    from attnspec.storage.results import write_table

    # flat, below uniform (1.2), at 1.1: saved with "holds" and without the zero-output columns
    errors = _with_uniform(_table(0.0, 0.002, level=1.1, method="performer"), level=1.2, slope=0.0)
    saved = {"approx": errors, **tables({"approx": errors}, seed=5)}
    old = saved["approx_rule"].drop(columns=["zero_gap_high", "below_zero_output"])
    old["verdict"] = old["verdict"].replace(NO_BETTER_THAN_ZERO, "a fixed k holds")
    for name, frame in {**saved, "approx_rule": old}.items():
        write_table(tmp_path, name, frame)
    (tmp_path / "meta.json").write_text(json.dumps({"approx": {"k": [64], "seed": 5}}))
    rule = read_approx(tmp_path)["approx_rule"]
    pd.testing.assert_frame_equal(rule, saved["approx_rule"])  # read again with the plan's seed
    v = read_verdicts(tmp_path)
    assert v.set_index("method").loc["performer", "verdict"] == NO_BETTER_THAN_ZERO
    assert v.set_index("method").loc["performer", "zero_gap_high"] > 0
    # a rule that holds every deciding column is read as saved
    pd.testing.assert_frame_equal(rule_table({**saved, "approx_rule": saved["approx_rule"]}), saved["approx_rule"])


def test_the_figure_is_print_ready(monkeypatch):
    import matplotlib.pyplot as plt
    from test_plots_readable import assert_print_ready

    import attnspec.plots.approx as module
    from attnspec.plots import COLUMN_IN

    kept = []
    monkeypatch.setattr(module, "save_figure", lambda fig, stem, formats=(): kept.append(fig) or [])
    errors = pd.concat([_table(0.1, 0.01).assign(method=m) for m in ("performer", "uniform")])
    errors = pd.concat([errors, errors.assign(k=128)])
    errors = pd.concat([errors, _table(0.0, 0.002, level=0.8, method="nystrom")])
    saved = tables({"approx": errors})
    assert (saved["approx_rule"].query("method == 'nystrom'")["verdict"] == "no better than uniform").all()
    module.plot_approx(saved["approx_summary"], "unused", rule=saved["approx_rule"], title="model · corpus")
    assert kept
    texts = [t.get_text() for t in kept[0].legends[0].get_texts()]
    assert module.HOLLOW_LABEL in texts and "zero output (error 1)" in texts
    assert_print_ready(kept[0], "approx_errors")
    assert kept[0].get_figwidth() == pytest.approx(COLUMN_IN)  # one column, as the report prints it
    plt.close(kept[0])
