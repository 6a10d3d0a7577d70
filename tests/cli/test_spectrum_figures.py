"""What a newcomer's spectrum run records and draws: `--at` kept in meta.json for redraws,
`--num-sentences all` and a default that fits a small corpus, 1-based labelled figures,
partial runs marked as such, and a comparison figure with one colour bar."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers import save_tiny_roberta
from typer.testing import CliRunner

from attnspec.cli.main import app
from attnspec.plots.spectrum import run_label

runner = CliRunner()


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_tiny_roberta(tmp_path_factory.mktemp("tiny-roberta-figs"))


@pytest.fixture(scope="module")
def jsonl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = np.random.default_rng(2)
    words = "the attention of a movie was low rank and the music was good".split()
    path = tmp_path_factory.mktemp("data") / "reviews.jsonl"
    path.write_text("\n".join(json.dumps({"text": " ".join(rng.choice(words, 40))}) for _ in range(6)) + "\n")
    return path  # 6 documents, each longer than 24 tokens: 6 inputs at --seq-len 24


def _spectrum(model_dir: Path, jsonl: Path, out: Path, *extra: str):
    return runner.invoke(app, ["spectrum", "--model", str(model_dir), "--data", str(jsonl), "--seq-len", "24",
                               "--device", "cpu", "-q", "--out", str(out), *extra])


def _meta(run: Path) -> dict:
    return json.loads((run / "meta.json").read_text())


def test_default_count_fits_a_small_corpus_and_all_takes_every_input(model_dir, jsonl, tmp_path) -> None:
    r = _spectrum(model_dir, jsonl, tmp_path / "default", "--no-plots")
    assert r.exit_code == 0, r.output
    meta = _meta(tmp_path / "default")
    assert meta["inputs_done"] == 6 and meta["identity"]["num_sentences"] == "up to 1000"
    r = _spectrum(model_dir, jsonl, tmp_path / "all", "--num-sentences", "all", "--no-plots")
    assert r.exit_code == 0, r.output
    assert _meta(tmp_path / "all")["inputs_done"] == 6 and _meta(tmp_path / "all")["corpus"]["num_requested"] == "all"
    r = _spectrum(model_dir, jsonl, tmp_path / "seven", "--num-sentences", "7", "--no-plots")
    assert r.exit_code == 1
    assert "only 6 windows of 24 tokens" in r.stderr and "--num-sentences all" in r.stderr


def test_at_is_kept_in_meta_and_plot_redraws_with_it(model_dir, jsonl, tmp_path) -> None:
    run = tmp_path / "run"
    r = _spectrum(model_dir, jsonl, run, "--num-sentences", "4", "--at", "5", "--no-plots")
    assert r.exit_code == 0, r.output
    assert _meta(run)["figures"]["at"] == 5 and "mean c_5" in r.stdout
    r = runner.invoke(app, ["plot", "spectrum", str(run)])
    assert r.exit_code == 0, r.output
    svg = (run / "figures" / "spectrum_layers.svg").read_text()
    assert "index 5 (read in the heatmap)" in svg  # the dotted line is explained in the legend
    heat = (run / "figures" / "spectrum_heatmap.svg").read_text()
    assert "cumulative value at index 5" in heat and "layer (1 = first)" in heat and "head (1 = first)" in heat
    # an explicit --at redraws there and is recorded for the next redraw
    r = runner.invoke(app, ["plot", "spectrum", str(run), "--at", "7", "--format", "pdf"])
    assert r.exit_code == 0, r.output
    assert _meta(run)["figures"] == {**_meta(run)["figures"], "at": 7, "formats": ["png", "pdf"]}
    (run / "figures" / "spectrum_heatmap.pdf").unlink()
    r = runner.invoke(app, ["plot", "spectrum", str(run)])  # redraws what was drawn last: index 7, PNG + PDF
    assert r.exit_code == 0, r.output
    assert (run / "figures" / "spectrum_heatmap.pdf").is_file()
    assert _meta(run)["figures"]["at"] == 7


def test_partial_run_says_so_and_comparison_has_one_colour_bar(model_dir, jsonl, tmp_path) -> None:
    assert run_label({"identity": {"model": "m", "data": "d", "seq_len": 8}, "status": "partial",
                      "inputs_done": 12, "inputs_total": 200}) == "m · d (n=8, partial: 12 of 200 inputs)"
    a, b = tmp_path / "a", tmp_path / "b"
    for run, seed in ((a, "0"), (b, "1")):
        r = _spectrum(model_dir, jsonl, run, "--num-sentences", "3", "--seed", seed, "--no-plots")
        assert r.exit_code == 0, r.output
    meta = _meta(b)
    meta["status"], meta["inputs_total"] = "partial", 5  # as a --max-time stop leaves it
    (b / "meta.json").write_text(json.dumps(meta))
    r = runner.invoke(app, ["plot", "spectrum", str(a), str(b), "--out", str(tmp_path / "cmp")])
    assert r.exit_code == 0, r.output
    svg = (tmp_path / "cmp" / "spectrum_compare.svg").read_text()
    assert svg.count("partial: 3 of 5 inputs") == 2  # both panels of run b name it
    assert svg.count("(n=24, 3 inputs") == 2  # both panels of run a (then "; encoder")
    assert svg.count("cumulative value at index 6") == 1  # one colour bar
    assert svg.count("index 6 (read in the heatmap)") == 1  # the legend on the first panel only
