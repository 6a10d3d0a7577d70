"""The Linformer-projection part of the report's "Beyond Figure 1": the body table and its reading
are computed from a run's saved summary (never typed), fit the body's budget, and say what the
measurement does not test; a run that could not measure it is named with the reason."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from attnspec.report.experiments import Experiment
from attnspec.storage.results import write_table


def _errors(rise: float, seed: int) -> pd.DataFrame:
    """Per (n, k, input, layer, head) errors of 6 inputs, 2 layers, 2 heads; the random-projection
    error grows by ``rise`` from n = 256 to n = 512."""
    rng = np.random.default_rng(seed)
    rows = []
    for n in (256, 512):
        for k in (64, 128, 256):
            if k >= n:
                continue
            for i in range(6):
                for layer in range(2):
                    for h in range(2):
                        base = 0.4 + (rise if n == 512 else 0.0) + 0.01 * rng.standard_normal()
                        rows.append(
                            {
                                "n": n,
                                "k": k,
                                "input": i,
                                "layer": layer,
                                "head": h,
                                "linformer_error": base,
                                "best_rank_error": 0.1 - k / 5000,
                            }
                        )
    return pd.DataFrame(rows)


def _study(results: Path, name: str, *, model: str, data: str, causal: bool, errors: pd.DataFrame | None) -> Experiment:
    from attnspec.spectra.projection import summarise

    run = results / name
    (run / "n512").mkdir(parents=True)
    (run / "meta.json").write_text(json.dumps({"kind": "spectrum-scaling", "lengths": [256, 512]}))
    (run / "n512" / "meta.json").write_text(
        json.dumps({"model": model, "causal": causal, "identity": {"model": model, "data": data}})
    )
    if errors is not None:
        write_table(run, "projection_summary", summarise(errors, seed=0, resamples=400))
    return Experiment(
        name=name,
        path=Path(f"{name}.toml"),
        title=f"Scaling: {model} on {data}",
        paper="linformer",
        command="spectrum",
        args={},
    )


@pytest.fixture()
def studies(tmp_path: Path) -> tuple[list[Experiment], Path]:
    results = tmp_path / "results"
    exps = [
        _study(results, "a", model="minilm", data="imdb", causal=False, errors=_errors(0.2, 0)),
        _study(results, "b", model="minilm", data="wiki103", causal=False, errors=_errors(0.0, 1)),
        _study(results, "c", model="smollm2", data="imdb", causal=True, errors=None),
    ]
    return exps, results


def test_the_body_table_is_computed_from_the_saved_summaries(studies: tuple[list[Experiment], Path]) -> None:
    from attnspec.report.appendix import MAX_BODY_ROWS
    from attnspec.report.projection import projection_part
    from attnspec.storage.results import read_table

    exps, results = studies
    md = projection_part(exps, results)
    table = [line for line in md if line.startswith("|")]
    a = read_table(results / "a", "projection_summary")
    assert len(table) - 2 == len(a) <= MAX_BODY_ROWS  # one row per (k, n) measured
    assert len(md) <= 14  # what the body pays for: a paragraph, the table, a reading
    for r in a.itertuples():
        row = next(line for line in table if line.startswith(f"| {r.k} | {r.n} |"))
        assert f"{r.linformer_error:.3f} [{r.linformer_error_low:.3f}, {r.linformer_error_high:.3f}]" in row
        assert f"| {r.best_rank_error:.3f} |" in row
    assert "MiniLM" in table[0] and "imdb" in table[0] and "wiki103" in table[0]


def test_the_reading_says_how_the_error_moves_and_what_is_not_tested(studies: tuple[list[Experiment], Path]) -> None:
    from attnspec.report.projection import projection_part
    from attnspec.storage.results import read_table

    exps, results = studies
    reading = projection_part(exps, results)[-2]
    a = read_table(results / "a", "projection_summary")
    t = a[a["k"] == 128].sort_values("n")
    assert (
        f"{t['linformer_error'].iloc[0]:.3f} at n = 256 to {t['linformer_error'].iloc[-1]:.3f} at n = 512 on "
        "MiniLM-L6 · imdb (a rise"
    ) in reading
    assert "wiki103 (no change shown" in reading  # run b: the same error at both lengths
    assert "Linformer trains E and F" in reading and "may do much better" in reading
    assert "Not measured for SmolLM2-135M (every layer is causal" in reading  # the decoder, named with the reason
    assert "above 1" not in reading  # these errors are below 1


def test_nothing_renders_without_a_measurement(tmp_path: Path) -> None:
    from attnspec.report.projection import projection_part, run_projection_lines

    results = tmp_path / "results"
    exp = _study(results, "c", model="smollm2", data="imdb", causal=True, errors=None)
    assert projection_part([exp], results) == []
    assert "every layer is causal" in run_projection_lines(results / "c")[0]


def test_a_runs_appendix_table_has_every_k_and_n(studies: tuple[list[Experiment], Path]) -> None:
    from attnspec.report.projection import run_projection_lines
    from attnspec.storage.results import read_table

    _, results = studies
    lines = run_projection_lines(results / "a")
    a = read_table(results / "a", "projection_summary")
    rows = [line for line in lines if line.startswith("| ") and line[2].isdigit()]
    assert len(rows) == len(a)
    r = a.sort_values(["k", "n"]).iloc[0]
    assert rows[0].startswith(f"| {r['k']} | {r['n']} | {r['inputs']} | {r['linformer_error']:.3f}")


def test_the_scaling_table_gives_k90_over_n_of_every_null_the_study_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    import attnspec.spectra.scaling_fit as scaling_fit
    from attnspec.report.beyond import _shares
    from attnspec.spectra.nulls import SHORT

    table = pd.DataFrame(
        {
            "source": ["real", "entropy-matched", "uniform", "random-init"],
            "share_n256": [0.3, 0.6, 0.9, 0.5],
            "share_n512": [0.321, 0.634, 0.95, 0.48],
        }
    )
    monkeypatch.setattr(scaling_fit, "null_comparison", lambda run, **kw: table)
    cell = _shares(Path("unused"))
    assert cell == " · ".join(
        ["0.32", *(f"{SHORT[s]} {v:.2g}" for s, v in zip(table["source"][1:], table["share_n512"][1:]))]
    )


def test_the_summary_says_what_linformer_needs_and_what_was_measured(studies: tuple[list[Experiment], Path]) -> None:
    from attnspec.numerics.stats import format_interval
    from attnspec.report.projection import READ_K
    from attnspec.report.summary import _linformer_finding
    from attnspec.storage.results import read_table

    exps, results = studies
    line = _linformer_finding(exps, results, linear=True)
    assert line.startswith("**For Linformer.** Error against PV, random E = F")
    for name in ("a", "b"):
        t = read_table(results / name, "projection_summary")
        t = t[t["k"] == READ_K].sort_values("n")
        ci = format_interval(t["linformer_error_low"].iloc[-1], t["linformer_error_high"].iloc[-1])
        corpus = "imdb" if name == "a" else "wiki103"
        assert f"{t['linformer_error'].iloc[0]:.2f}→{t['linformer_error'].iloc[-1]:.2f} {ci} ({corpus})" in line
    assert "MiniLM-L6 " in line and "as n = 256→512" in line and "zero" not in line  # errors below 1 here
    assert "95% CI over documents" in line and "not a finding" in line and "√(n/k)" in line
    # without the measurement: what the spectrum alone says, and that the learned projections are untested
    assert "Not tested: Linformer's learned projections" in _linformer_finding(exps[2:], results, linear=True)


def test_the_random_projection_error_is_read_as_its_scale_not_as_a_finding(tmp_path: Path) -> None:
    from attnspec.report.summary import _linformer_finding

    results = tmp_path / "results"
    above = _errors(1.5, 0).assign(linformer_error=lambda f: f["linformer_error"] + 2.5)
    exp = _study(results, "a", model="minilm", data="imdb", causal=False, errors=above)
    line = _linformer_finding([exp], results, linear=True)
    # an error above 1 with E = F = R is the √(n/k) scale of RV, not "worse than outputting zero"
    assert "zero" not in line and "grows as √(n/k) whatever P is" in line and "approximation study" in line


def test_runs_left_out_are_named_by_reason_and_a_model_alone_only_when_none_of_its_runs_holds_it() -> None:
    from attnspec.report.projection import _by_reason

    causal = "every layer is causal"
    missing = [("SmolLM2-135M · imdb", causal), ("SmolLM2-135M · wiki103", causal), ("MiniLM-L6 · wiki103", "not run")]
    assert _by_reason(missing, ["MiniLM-L6 · imdb"]) == {causal: ["SmolLM2-135M"], "not run": ["MiniLM-L6 · wiki103"]}
