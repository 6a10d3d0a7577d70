"""The random-projection measurement in the report: one sentence in the body on its √(n/k) scale
(never read as a finding), each run's table in the appendix computed from its saved summary;
a run that could not measure it says why."""

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


def test_nothing_renders_without_a_measurement(tmp_path: Path) -> None:
    from attnspec.report.approx_part import random_projection_note
    from attnspec.report.projection import run_projection_lines

    results = tmp_path / "results"
    exp = _study(results, "c", model="smollm2", data="imdb", causal=True, errors=None)
    assert random_projection_note([exp], results) == []
    assert "every layer is causal" in run_projection_lines(results / "c")[0]


def test_the_random_projection_is_one_sentence_on_its_scale_not_a_finding(
    studies: tuple[list[Experiment], Path],
) -> None:
    from attnspec.report.approx_part import random_projection_note
    from attnspec.report.projection import run_projection_lines

    exps, results = studies
    note = random_projection_note(exps, results)
    assert len(note) == 2 and "√(n/k) whatever P is" in note[0] and "no evidence" in note[0]
    assert "not a finding" in run_projection_lines(results / "a")[0]


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
