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
    return runner.invoke(
        app,
        [
            "spectrum",
            "--model",
            str(model_dir),
            "--data",
            str(jsonl),
            "--seq-len",
            "24",
            "--device",
            "cpu",
            "-q",
            "--out",
            str(out),
            *extra,
        ],
    )


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
    assert "only 6 windows of 24 tokens" in r.stderr and "--num-inputs all" in r.stderr


def test_at_is_kept_in_meta_and_plot_redraws_with_it(model_dir, jsonl, tmp_path) -> None:
    run = tmp_path / "run"
    r = _spectrum(model_dir, jsonl, run, "--num-sentences", "4", "--at", "5", "--no-plots")
    assert r.exit_code == 0, r.output
    assert _meta(run)["figures"]["at"] == 5 and "mean c_5" in r.stdout
    r = runner.invoke(app, ["plot", "spectrum", str(run)])
    assert r.exit_code == 0, r.output
    svg = (run / "figures" / "spectrum_layers.svg").read_text()
    assert "index 5 (heatmap)" in svg  # the dotted line is explained in the legend
    heat = (run / "figures" / "spectrum_heatmap.svg").read_text()
    assert "c at index 5 (share of Σσ)" in heat and "layer (1 = first)" in heat and "head (1 = first)" in heat
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
    assert (
        run_label(
            {
                "identity": {"model": "m", "data": "d", "seq_len": 8},
                "status": "partial",
                "inputs_done": 12,
                "inputs_total": 200,
            }
        )
        == "m · d · n = 8 · partial: 12 of 200 inputs"
    )
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
    assert svg.count("3 inputs") == 2  # both panels of run a
    assert svg.count("c at index 6 (one scale)") == 1  # one colour bar
    assert svg.count("index 6 (heatmap)") == 1  # the legend on the first panel only


def test_titles_name_runs_by_alias_never_a_path_and_label_overrides(model_dir, jsonl, tmp_path) -> None:
    run = tmp_path / "run"
    r = _spectrum(model_dir, jsonl, run, "--num-sentences", "3", "--no-plots")
    assert r.exit_code == 0, r.output
    title = run_label(_meta(run))
    assert title == f"{model_dir.name} · reviews · n = 24 · 3 inputs · encoder"
    assert str(tmp_path) not in title
    r = runner.invoke(app, ["plot", "spectrum", str(run), "--label", "tiny RoBERTa on reviews"])
    assert r.exit_code == 0, r.output
    svg = (run / "figures" / "spectrum_layers.svg").read_text()
    assert "tiny RoBERTa on reviews" in svg and str(tmp_path) not in svg
    assert _meta(run)["figures"]["label"] == "tiny RoBERTa on reviews"  # kept for the next redraw
    r = runner.invoke(
        app, ["plot", "spectrum", str(run), str(run), "--label", "only one", "--out", str(tmp_path / "c")]
    )
    assert r.exit_code == 1 and "--label must be given once per run: 1 labels for 2 runs" in r.stderr


def test_runs_plotted_together_share_one_heatmap_scale(model_dir, jsonl, tmp_path) -> None:
    import matplotlib.pyplot as plt

    from attnspec.plots import spectrum as sp
    from attnspec.storage.results import read_meta, read_table

    a, b = tmp_path / "a", tmp_path / "b"
    for run, seed in ((a, "0"), (b, "3")):
        assert _spectrum(model_dir, jsonl, run, "--num-sentences", "2", "--seed", seed, "--no-plots").exit_code == 0
    seen: list[tuple[float, float]] = []
    original = sp.run_figures

    def spy(*args, **kwargs):
        figs = original(*args, **kwargs)
        seen.append(figs["spectrum_heatmap"].axes[0].collections[0].get_clim())
        return figs

    sp.run_figures = spy
    try:
        r = runner.invoke(app, ["plot", "spectrum", str(a), str(b), "--out", str(tmp_path / "cmp")])
    finally:
        sp.run_figures = original
    assert r.exit_code == 0, r.output
    at = _meta(a)["figures"]["at"] if "figures" in _meta(a) else 6
    own = [sp.heat_range([read_table(x, "spectrum")], at) for x in (a, b)]
    assert own[0] != own[1]  # the runs differ, so a per-run scale would differ
    common = (min(o[0] for o in own), max(o[1] for o in own))
    assert seen == [common, common]
    plt.close("all")
    assert read_meta(a)  # untouched by drawing elsewhere


def test_a_plain_savefig_clips_no_title(model_dir, jsonl, tmp_path) -> None:
    """`res.plot()` figures saved with a plain `savefig` (no bbox_inches) keep their titles."""
    import matplotlib.pyplot as plt

    from attnspec.plots.spectrum import run_figures
    from attnspec.storage.results import read_meta, read_table

    run = tmp_path / "run"
    assert (
        _spectrum(
            model_dir,
            jsonl,
            run,
            "--num-sentences",
            "2",
            "--no-plots",
            "--label",
            "a deliberately long title that names the model, the corpus and far more",
        ).exit_code
        == 0
    )
    for name, fig in run_figures(read_table(run, "spectrum"), read_meta(run)).items():
        fig.savefig(tmp_path / f"{name}.png")  # what a user does: constrained layout has run
        fig.canvas.draw()  # measure at the figure's own dpi (savefig drew at savefig.dpi)
        renderer = fig.canvas.get_renderer()
        box = fig.bbox
        for text in [t for ax in fig.axes for t in (ax.title, ax.xaxis.label, ax.yaxis.label)] + fig.texts:
            if text.get_text():
                ext = text.get_window_extent(renderer)
                assert (
                    ext.x0 >= box.x0 - 1 and ext.x1 <= box.x1 + 1 and ext.y1 <= box.y1 + 1 and ext.y0 >= box.y0 - 1
                ), (name, text.get_text())
        plt.close(fig)


def test_rerunning_a_complete_run_is_up_to_date_overwrite_recomputes_other_params_refused(
    model_dir, jsonl, tmp_path
) -> None:
    run = tmp_path / "run"
    r = _spectrum(model_dir, jsonl, run, "--num-sentences", "3")
    assert r.exit_code == 0, r.output
    state = (run / "state.npz").stat().st_mtime_ns
    r = _spectrum(model_dir, jsonl, run, "--num-sentences", "3")  # the same command again
    assert r.exit_code == 0, r.output
    assert "up to date" in r.stdout and "spectrum per layer" in r.stdout and "--overwrite recomputes" in r.stdout
    assert (run / "state.npz").stat().st_mtime_ns == state  # nothing computed
    r = _spectrum(model_dir, jsonl, run, "--num-sentences", "3", "--overwrite")
    assert r.exit_code == 0, r.output
    assert "up to date" not in r.stdout and (run / "state.npz").stat().st_mtime_ns != state
    r = _spectrum(model_dir, jsonl, run, "--num-sentences", "2")  # other parameters, same --out
    assert r.exit_code == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --out") and "holds a different run" in lines[0]
    assert "num_sentences: 3 there vs 2 now" in lines[0]


def test_a_complete_scaling_run_asked_again_is_up_to_date(model_dir, jsonl, tmp_path) -> None:
    out = tmp_path / "scaling"
    args = [
        "spectrum",
        "--model",
        str(model_dir),
        "--data",
        str(jsonl),
        "--seq-len",
        "12,24",
        "--num-sentences",
        "2",
        "--device",
        "cpu",
        "-q",
        "--no-plots",
        "--out",
        str(out),
    ]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    stamp = (out / "n24" / "state.npz").stat().st_mtime_ns
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    assert "up to date" in r.stdout and (out / "n24" / "state.npz").stat().st_mtime_ns == stamp
    r = runner.invoke(app, [*args[:-2], "--seed", "1", "--out", str(out)])  # other parameters: refused in one line
    assert r.exit_code == 1 and len(r.stderr.strip().splitlines()) == 1 and "different run" in r.stderr
