"""The report's "For Linformer" section and summary line, from the approximation study's saved
tables: per model a table at the read k whose numbers are the saved ones, the rule's verdict per
method and k, the references in the same table, the end-to-end effect, and fields a study saved
without read as "not measured"."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from attnspec.report.experiments import Experiment

LENGTHS = (256, 512, 1024)
#: Error of each method at n = 256 and its change per doubling of n.
METHODS = {"linformer-fit": (0.5, 0.0), "nystrom": (0.4, 0.15), "uniform": (0.9, 0.0), "best-rank-k": (0.1, 0.01)}


def _raw(seed: int) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    errors, e2e = [], []
    for n in LENGTHS:
        doublings = np.log2(n / LENGTHS[0])
        for k in (64, 128):
            for method, (base, rise) in METHODS.items():
                for i in range(4):
                    for layer in range(2):
                        for head in range(1):
                            value = base + rise * doublings + 0.005 * rng.standard_normal()
                            errors.append((n, k, method, i, layer, head, value, "no bias"))
                    e2e.append((n, k, method, i, 0.99 - 0.1 * base + 0.001 * rng.standard_normal()))
    return {
        "approx": pd.DataFrame(errors, columns=["n", "k", "method", "input", "layer", "head", "error", "scores"]),
        "approx_end_to_end": pd.DataFrame(e2e, columns=["n", "k", "method", "input", "cosine"]),
    }


def _study(results: Path, name: str, *, model: str, data: str, seed: int) -> Experiment:
    from attnspec.spectra.approx.rule import slopes, summarise
    from attnspec.storage.results import write_table

    run = results / name
    (run / f"n{LENGTHS[-1]}").mkdir(parents=True)
    plan = {"methods": list(METHODS), "k": [64, 128], "train": 4, "held_out": 6, "seed": 0, "status": "complete"}
    (run / "meta.json").write_text(json.dumps({"kind": "spectrum-scaling", "lengths": list(LENGTHS), "approx": plan}))
    (run / f"n{LENGTHS[-1]}" / "meta.json").write_text(json.dumps({"model": model, "identity": {"data": data}}))
    raw = _raw(seed)
    summary = summarise(raw["approx"], resamples=200)  # the saved summaries, at few resamples
    summary.insert(3, "reference", summary["method"].isin(["uniform", "best-rank-k"]))
    saved = {
        "approx_summary": summary,
        "approx_rule": slopes(raw["approx"], resamples=200),
        "approx_end_to_end_summary": summarise(raw["approx_end_to_end"], "cosine", resamples=200),
    }
    for table_name, frame in {**raw, **saved}.items():
        write_table(run, table_name, frame)
    return Experiment(name=name, path=Path(f"{name}.toml"), title=name, paper="linformer", command="spectrum", args={})


@pytest.fixture(scope="module")
def studies(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Experiment], Path]:
    results = tmp_path_factory.mktemp("approx") / "results"
    exps = [
        _study(results, "approx-minilm-imdb", model="minilm", data="imdb", seed=0),
        _study(results, "approx-minilm-wiki103", model="minilm", data="wiki103", seed=1),
        _study(results, "approx-mpnet-imdb", model="mpnet", data="imdb", seed=2),
    ]
    return exps, results


def test_an_approximation_study_is_read_by_its_section_not_by_the_scaling_study(studies) -> None:  # noqa: ANN001
    from attnspec.report.experiments import spectrum_runs

    exps, results = studies
    assert [e.name for e in spectrum_runs(exps, results, "approx")] == [e.name for e in exps]
    assert spectrum_runs(exps, results, "scaling") == []


def test_each_models_table_holds_the_saved_numbers_verdicts_and_references(studies) -> None:  # noqa: ANN001
    from attnspec.numerics.stats import format_interval
    from attnspec.report.appendix import MAX_BODY_ROWS
    from attnspec.report.approx_part import READ_K, SHORT_VERDICT, model_table
    from attnspec.report.approx_part import studies as read_studies
    from attnspec.storage.results import read_table

    exps, results = studies
    found = read_studies(exps, results)
    minilm = [(corpus, v) for model, corpus, _, v in found if model == "MiniLM-L6"]
    md = model_table("MiniLM-L6", minilm, READ_K)
    rows = [line for line in md if line.startswith("| imdb") or line.startswith("| wiki103")]
    assert len(rows) == 2 * len(METHODS) <= MAX_BODY_ROWS  # every method and both references, per corpus
    assert "error at n = 256" in md[2] and "error at n = 1024" in md[2]
    summary = read_table(results / "approx-minilm-imdb", "approx_summary")
    rule = read_table(results / "approx-minilm-imdb", "approx_rule")
    for method in METHODS:
        row = next(r for r in rows if r.startswith(f"| imdb | {method}"))
        s = summary[(summary["k"] == READ_K) & (summary["method"] == method)].sort_values("n").iloc[-1]
        assert f"{s['error']:.3f} {format_interval(s['error_low'], s['error_high'], 3)}" in row
        verdicts = rule[rule["method"] == method].sort_values("k")["verdict"]
        assert " · ".join(SHORT_VERDICT.get(v, v) for v in verdicts) in row  # the verdict at every k
    assert "(reference)" in next(r for r in rows if "| uniform" in r)
    assert "| grows |" in " ".join(r for r in rows if "nystrom" in r) or "grows" in rows[1]
    assert all("cos 0." in r for r in rows)  # the end-to-end cosine at the largest n


def test_fields_saved_without_read_not_measured() -> None:
    from attnspec.report.approx_part import below_uniform, end_to_end

    row = {"reference": False, "cosine_last": float("nan")}
    assert below_uniform(row) == "not measured" and end_to_end(row) == "not measured"
    assert below_uniform({**row, "uniform_gap_high": -0.01}) == "yes"
    assert below_uniform({**row, "uniform_gap_high": 0.02}) == "no"
    assert below_uniform({"reference": True}) == "—"
    loss = {"loss_change_last": 0.25, "loss_change_last_low": 0.2, "loss_change_last_high": 0.3}
    assert end_to_end({**row, **loss}) == "Δloss 0.250 [0.200, 0.300]"


def test_the_summary_line_gives_each_models_verdicts_at_the_read_k(studies) -> None:  # noqa: ANN001
    from attnspec.report.summary import _linformer_finding

    exps, results = studies
    line = _linformer_finding(exps, results, linear=True)
    assert line.startswith("**For Linformer** (fixed k = 128")
    minilm, mpnet = line.split("MiniLM-L6: ")[1].split("MPNet-base: ")
    assert "nystrom grows" in minilm and "linformer-fit holds" in minilm
    assert "uniform" not in minilm.split("; below uniform")[0]  # the references are not verdicts of a method
    assert "below uniform at every n: " in mpnet  # the comparison with the null, per model
    assert "random" not in line and "√" not in line
    assert line.endswith("[→](#for-linformer-does-a-fixed-k-suffice)")


def test_the_section_reads_the_study_and_draws_each_models_first_figure(studies, tmp_path, monkeypatch) -> None:  # noqa: ANN001
    import attnspec.plots.approx as plots
    from attnspec.report.approx_part import HEADING, approx_section

    drawn: list[Path] = []
    monkeypatch.setattr(plots, "plot_approx", lambda summary, out, **kw: drawn.append(out / "approx_errors.png"))
    exps, results = studies
    md = approx_section(exps, results, tmp_path / "figures")
    text = "\n".join(md)
    assert md[0] == f"## {HEADING}"
    assert "Reading at k = 128: on MiniLM-L6, " in text and "; on MPNet-base, " in text
    body, every = text.split("### Every k")
    assert body.count("approx_errors.png") == 2  # one figure per model in the body, the rest with every k
    assert every.count("approx_errors.png") == 1
    assert tmp_path / "figures" / "approx-minilm-wiki103" / "approx_errors.png" in drawn
    assert every.count("| 64 | ") == 3 * len(METHODS) and every.count("| 128 | ") == 3 * len(METHODS)
