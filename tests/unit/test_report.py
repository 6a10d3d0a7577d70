"""`attnspec report`: experiment files, staleness, verdict summaries, and the report itself."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from attnspec.cli.main import app
from attnspec.errors import InputError
from attnspec.report.experiments import _cli_args, load_experiments
from attnspec.report.markdown import summarise_verdicts

TINY = """
title = "tiny sparse construction"
paper = "expressivity"
command = "sa-check"
verdicts = true

[args]
L = 16
k = 1
trials = 10
seed = {seed}
no-plots = true

[quick]
trials = 12
"""


def _write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / f"{name}.toml"
    p.write_text(text)
    return p


def test_cli_args_from_toml_values() -> None:
    assert _cli_args({"seq-len": 512, "csv": True, "timing": False, "alpha": [0.1, 1], "sweep": "default"}) == [
        "--seq-len",
        "512",
        "--csv",
        "--no-timing",
        "--alpha",
        "0.1",
        "--alpha",
        "1",
    ]


def test_bad_experiment_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not a directory"):
        load_experiments(tmp_path / "missing")
    (tmp_path / "e").mkdir()
    with pytest.raises(InputError, match="no \\*.toml"):
        load_experiments(tmp_path / "e")
    _write(tmp_path / "e", "bad", 'command = "frobnicate"\n')
    with pytest.raises(InputError, match="command must be one of.*frobnicate"):
        load_experiments(tmp_path / "e")
    _write(tmp_path / "e", "bad", 'command = "sa-check"\npaper = "other"\n')
    with pytest.raises(InputError, match="paper must be one of"):
        load_experiments(tmp_path / "e")
    _write(tmp_path / "e", "bad", "command = \n")
    with pytest.raises(InputError, match="not valid TOML"):
        load_experiments(tmp_path / "e")


def test_key_changes_with_arguments_and_mode(tmp_path: Path) -> None:
    _write(tmp_path, "a", TINY.format(seed=0).replace("no-plots = true", ""))
    (exp,) = load_experiments(tmp_path)
    assert exp.key(False) != exp.key(True)
    _write(tmp_path, "a", TINY.format(seed=1).replace("no-plots = true", ""))
    (exp2,) = load_experiments(tmp_path)
    assert exp2.key(False) != exp.key(False)
    # a comment does not change the experiment
    _write(tmp_path, "a", "# why\n" + TINY.format(seed=1).replace("no-plots = true", ""))
    (exp3,) = load_experiments(tmp_path)
    assert exp3.key(False) == exp2.key(False)


def test_asking_a_spectrum_experiment_for_nulls_keeps_its_results_fresh(tmp_path: Path) -> None:
    # nulls come from the saved tables (attnspec.spectra.baselines): the run itself is unchanged
    spectrum = 'title = "t"\npaper = "linformer"\ncommand = "spectrum"\n\n[args]\nmodel = "minilm"\nseq-len = 64\n'
    _write(tmp_path, "s", spectrum)
    (plain,) = load_experiments(tmp_path)
    _write(tmp_path, "s", spectrum + 'baseline = "entropy-matched"\n')
    (nulls,) = load_experiments(tmp_path)
    assert nulls.key(False) == plain.key(False)
    _write(tmp_path, "s", spectrum.replace("seq-len = 64", "seq-len = 128"))
    (other,) = load_experiments(tmp_path)
    assert other.key(False) != plain.key(False)  # any other argument still makes it stale


def test_summary_of_many_rows_groups_by_claim() -> None:
    rows = [
        {
            "claim": "c1",
            "n": i,
            "verdict": "holds" if i else "violated",
            "bound": 0.1,
            "exact": None,
            "estimate": 0.5,
            "ci_low": 0.4,
            "ci_high": 0.6,
            "trials": 10,
            "seed": 0,
            "evidence": f"row {i}",
        }
        for i in range(50)
    ]
    md = summarise_verdicts(rows, max_rows=10)
    assert "50 parameter sets" in md
    line = [l for l in md.splitlines() if l.startswith("| c1")][0]
    assert "| 50 | 49 | 1 | 0 | 0 |" in line and "row 0" in line  # the violation is the row shown
    few = summarise_verdicts(rows[:3], max_rows=10)
    assert few.count("\n| c1") == 3 and "**violated**" in few


@pytest.mark.slow
def test_report_runs_reuses_and_reruns_stale(tmp_path: Path) -> None:
    exps = tmp_path / "experiments"
    _write(exps, "tiny", TINY.format(seed=0).replace("no-plots = true", ""))
    runner = CliRunner()
    out = tmp_path / "reports"
    r = runner.invoke(app, ["report", "--experiments", str(exps), "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "tiny: ran" in r.stderr
    report = (out / "REPORT.md").read_text()
    assert "Likhosherstov" in report and "tiny sparse construction" in report
    assert re.search(r"\*\*(holds|violated|vacuous|loose)\*\*", report)
    rec = json.loads((out / "results" / "tiny" / "report_run.json").read_text())
    assert rec["returncode"] == 0 and rec["command"][:2] == ["attnspec", "sa-check"] and rec["how"] == "in-process"
    assert (out / "results" / "tiny" / "verdicts.json").is_file()
    r = runner.invoke(app, ["report", "--experiments", str(exps), "--out", str(out)])
    assert "tiny: reused" in r.stderr
    _write(exps, "tiny", TINY.format(seed=3).replace("no-plots = true", ""))
    r = runner.invoke(app, ["report", "--experiments", str(exps), "--out", str(out)])
    assert "tiny: ran" in r.stderr
    r = runner.invoke(app, ["report", "--experiments", str(exps), "--out", str(out), "--only", "nope"])
    assert r.exit_code == 1 and "no such experiment" in r.stderr


def test_a_spectrum_result_drawn_by_another_rule_is_stale(tmp_path: Path) -> None:
    """The default input selection changed once (documents -> pool): results drawn by the
    other rule are rerun even though their experiment key is unchanged."""
    from attnspec.report.experiments import Experiment
    from attnspec.report.runner import _drawn_otherwise
    from attnspec.spectra.data.selection import POOL_RULE

    documents_rule = "documents in the order numpy.random.default_rng(seed).permutation(documents); the first ..."

    def exp(**args) -> Experiment:  # noqa: ANN003
        return Experiment(
            name="x",
            path=tmp_path / "x.toml",
            title="x",
            paper="linformer",
            command="spectrum",
            args={"data": "imdb", **args},
        )

    def save(d: Path, selection: str, *, state: bool) -> None:
        d.mkdir(parents=True, exist_ok=True)
        (d / "meta.json").write_text(json.dumps({"corpus": {"selection": selection}}))
        if state:
            (d / "state.npz").write_bytes(b"")

    single, scaling = tmp_path / "single", tmp_path / "scaling"
    save(single, documents_rule, state=True)
    assert _drawn_otherwise(exp(), single, quick=False)
    assert not _drawn_otherwise(exp(selection="documents"), single, quick=False)
    save(single, POOL_RULE, state=True)
    assert not _drawn_otherwise(exp(), single, quick=False)
    save(scaling / "n32", POOL_RULE + ", drawn at seq_len 64 and cut to the first 30 text tokens", state=True)
    save(scaling / "n64", documents_rule, state=True)
    assert _drawn_otherwise(exp(), scaling, quick=False)  # one length drawn otherwise is enough
    save(scaling / "n64", POOL_RULE, state=True)
    assert not _drawn_otherwise(exp(), scaling, quick=False)
    assert _drawn_otherwise(exp(), tmp_path / "empty", quick=False)  # nothing to reuse
    other = Experiment(name="j", path=tmp_path / "j.toml", title="j", paper="linformer", command="jl-check", args={})
    assert not _drawn_otherwise(other, tmp_path / "empty", quick=False)


def test_a_fresh_spectrum_experiment_gets_the_nulls_it_now_asks_for_from_its_saved_tables(tmp_path: Path) -> None:
    """Asking a finished experiment for a null adds it beside the run (reused, not recomputed:
    the run's own tables stay byte for byte); asking again adds nothing."""
    from helpers import save_tiny_roberta

    from attnspec.report.experiments import Experiment
    from attnspec.report.runner import run_experiment

    model = save_tiny_roberta(tmp_path / "m")
    data = tmp_path / "d.jsonl"
    data.write_text(
        "\n".join(json.dumps({"text": f"the attention of movie {i} was low rank and quick " * 4}) for i in range(4))
    )
    args = {"model": str(model), "data": str(data), "num-sentences": 4, "seq-len": 16, "batch-size": 2, "device": "cpu"}

    def exp(**more) -> Experiment:  # noqa: ANN003
        return Experiment(
            name="s", path=tmp_path / "s.toml", title="s", paper="linformer", command="spectrum", args={**args, **more}
        )

    results = tmp_path / "results"
    results.mkdir()

    def run(e: Experiment):  # noqa: ANN202
        return run_experiment(e, results, quick=False, force=False, data_dir=str(tmp_path), log=lambda m: None)

    assert run(exp()).status == "ran"
    run_dir = results / "s"
    tables = {p.name: p.read_bytes() for p in run_dir.glob("*.parquet")}
    assert "baseline_spectrum.parquet" not in tables
    rec = run(exp(baseline="uniform"))
    assert (rec.status, rec.detail) == ("reused", "fresh results reused, nulls added")
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["baselines"]["names"] == ["uniform"]
    assert (run_dir / "baseline_spectrum.parquet").is_file()
    assert {name: (run_dir / name).read_bytes() for name in tables} == tables  # the run itself untouched
    rec = run(exp(baseline="uniform"))
    assert (rec.status, rec.detail) == ("reused", "fresh results reused")
