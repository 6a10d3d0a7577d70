"""Saved results are foreign input: a meta.json or a table of the wrong shape is
ONE `error:` line naming the file (exit 1) in every reader — merge, plot spectrum, plot
scaling, compare — and a ResultsError from attnspec.load; never a traceback, never a
figure or comparison of NaN means. One case per class of damage."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import save_tiny_roberta
from typer.testing import CliRunner

import attnspec
from attnspec.cli.main import app
from attnspec.errors import ResultsError

SEQ = 16


def _run(*args: str):
    return CliRunner().invoke(app, list(args))


def _one_error(r, *fragments: str) -> str:
    assert r.exit_code == 1, (r.exit_code, r.output, r.exception)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    for f in fragments:
        assert f in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A whole run, four shards of it (the last holds no input) and a two-length scaling run."""
    root = tmp_path_factory.mktemp("foreign-results")
    model = save_tiny_roberta(root / "m")
    rng = np.random.default_rng(1)
    words = "the attention of a movie was low rank and the music was good".split()
    (root / "d.jsonl").write_text("\n".join(json.dumps({"text": " ".join(rng.choice(words, 50))}) for _ in range(6)))
    common = ["--model", str(model), "--data", str(root / "d.jsonl"), "--num-sentences", "3", "--device", "cpu", "-q"]
    assert _run("spectrum", *common, "--seq-len", str(SEQ), "--out", str(root / "full"), "--no-plots").exit_code == 0
    for i in range(4):
        r = _run(
            "spectrum", *common, "--seq-len", str(SEQ), "--shard", f"{i}/4", "--out", str(root / f"sh{i}"), "--no-plots"
        )
        assert r.exit_code == 0, r.output
    assert _run("spectrum", *common, "--seq-len", f"12,{SEQ}", "--out", str(root / "sc"), "--no-plots").exit_code == 0
    return root


def _meta_list(run: Path) -> str:
    (run / "meta.json").write_text("[1, 2, 3]")
    return "not an object"


def _figures_garbage(run: Path) -> str:
    meta = json.loads((run / "meta.json").read_text())
    meta["figures"] = "garbage"
    (run / "meta.json").write_text(json.dumps(meta))
    return "'figures' is str"


def _curves_hold_metrics(run: Path) -> str:
    shutil.copy(run / "metrics.parquet", run / "spectrum.parquet")
    return "holds a metrics table"


def _edit_curves(edit, says: str):
    def apply(run: Path) -> str:
        frame = pd.read_parquet(run / "spectrum.parquet")
        edit(frame).to_parquet(run / "spectrum.parquet", index=False)
        return says

    return apply


DAMAGE = {
    "meta-list": _meta_list,
    "figures-garbage": _figures_garbage,
    "curves-hold-metrics": _curves_hold_metrics,
    "no-count-column": _edit_curves(lambda f: f.drop(columns="count"), "no 'count' column"),
    "zero-counts": _edit_curves(lambda f: f.assign(count=0), "counts [0]"),
    "zero-rows": _edit_curves(lambda f: f.iloc[:0], "has no rows"),
    "nan-means": _edit_curves(lambda f: f.assign(mean=np.nan), "NaN or infinite"),
    "wrong-dtype": _edit_curves(lambda f: f.assign(layer=f["layer"].astype(str)), "not an integer dtype"),
}


@pytest.fixture
def damaged(made: Path, tmp_path: Path, request: pytest.FixtureRequest) -> tuple[Path, str]:
    run = tmp_path / "run"
    shutil.copytree(made / "full", run)
    says = DAMAGE[request.param](run)
    return run, says


@pytest.mark.parametrize("damaged", list(DAMAGE), indirect=True)
def test_plot_spectrum_refuses_a_damaged_run(damaged: tuple[Path, str], tmp_path: Path) -> None:
    run, says = damaged
    _one_error(_run("plot", "spectrum", str(run), "--out", str(tmp_path / "figs")), says, str(run))
    assert not (tmp_path / "figs").exists()  # refused before anything was drawn


@pytest.mark.parametrize("damaged", list(DAMAGE), indirect=True)
def test_compare_refuses_a_damaged_run(made: Path, damaged: tuple[Path, str], tmp_path: Path) -> None:
    run, says = damaged
    _one_error(_run("compare", str(made / "full"), str(run), "--out", str(tmp_path / "cmp"), "--no-plots"), says)


@pytest.mark.parametrize("damaged", list(DAMAGE), indirect=True)
def test_load_refuses_a_damaged_run(damaged: tuple[Path, str]) -> None:
    run, says = damaged
    with pytest.raises(ResultsError, match=says.replace("[", r"\[").replace("(", r"\(")):
        attnspec.load(run)


@pytest.mark.parametrize(
    "damage", ["meta-list", "figures-garbage", "curves-hold-metrics", "no-count-column", "zero-counts", "zero-rows"]
)
def test_merge_refuses_a_damaged_shard(made: Path, tmp_path: Path, damage: str) -> None:
    shards = []
    for i in range(4):
        shutil.copytree(made / f"sh{i}", tmp_path / f"sh{i}")
        shards.append(str(tmp_path / f"sh{i}"))
    says = DAMAGE[damage](tmp_path / "sh1")
    _one_error(_run("merge", *shards, "--out", str(tmp_path / "merged")), says, "sh1")
    assert not (tmp_path / "merged").exists()


def test_a_zero_input_shard_merges_and_alone_is_refused(made: Path, tmp_path: Path) -> None:
    shards = [str(made / f"sh{i}") for i in range(4)]
    assert json.loads((made / "sh3" / "meta.json").read_text())["inputs_done"] == 0  # 3 inputs, 4 shards
    r = _run("merge", *shards, "--out", str(tmp_path / "merged"), "--no-plots")
    assert r.exit_code == 0, r.output
    a = pd.read_parquet(made / "full" / "spectrum.parquet")
    b = pd.read_parquet(tmp_path / "merged" / "spectrum.parquet")
    np.testing.assert_allclose(a["mean"], b["mean"], rtol=1e-9)  # the empty shard changes nothing
    _one_error(_run("plot", "spectrum", str(made / "sh3"), "--out", str(tmp_path / "f")), "holds no inputs")


def test_plot_scaling_refuses_lengths_that_contradict_the_tables(made: Path, tmp_path: Path) -> None:
    sc = tmp_path / "sc"
    shutil.copytree(made / "sc", sc)
    # the n12 run replaced by the n16 one: meta.json of the scaling directory still says 12
    shutil.rmtree(sc / "n12")
    shutil.copytree(sc / f"n{SEQ}", sc / "n12")
    _one_error(
        _run("plot", "scaling", str(sc), "--out", str(tmp_path / "f"), "--resamples", "200"),
        "records length 12",
        "seq_len 16",
    )
    # a run's own meta.json edited to agree: its curve table still has 16 indices
    meta = json.loads((sc / "n12" / "meta.json").read_text())
    meta["identity"]["seq_len"] = 12
    (sc / "n12" / "meta.json").write_text(json.dumps(meta))
    _one_error(_run("plot", "scaling", str(sc), "--out", str(tmp_path / "f"), "--resamples", "200"), "indices 1..12")
