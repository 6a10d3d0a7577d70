"""osa-train's stopping rule, validation split, schedule and comparison with the paper's Table 2."""

from __future__ import annotations

import itertools
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from attnspec.errors import InputError
from attnspec.numerics.stats import mean_ci
from attnspec.theory.osa import train as ot
from attnspec.theory.osa import train_paper as tp
from attnspec.theory.osa.train_battery import budget
from attnspec.theory.osa.train_stopping import PatienceStop

TINY = dict(seeds=2, depth=1, dim=16, heads=2, batch_size=128)
PAPER_TEXT = Path("/work/shared/papers/orthogonal-self-attention.txt")


@pytest.fixture(scope="module")
def digits() -> ot.DigitsSplit:
    return ot.load_digits_split(patch_size=2, test_fraction=0.2, seed=11, val_fraction=0.15)


# ----------------------------------------------------------------------------- the rule


def test_patience_counts_evaluations_since_the_last_strict_improvement() -> None:
    rule = PatienceStop(3)
    seen = []
    for epoch, acc in enumerate([0.1, 0.5, 0.5, 0.6, 0.6, 0.55, 0.6, 0.9]):
        rule.update(epoch, acc)
        seen.append(rule.exhausted)
        if rule.exhausted:
            break
    # 0.6 first reached at epoch 3; the tie at 4 and 6 is not an improvement: out of patience at epoch 6
    assert seen == [False, False, False, False, False, False, True]
    assert (rule.best, rule.best_epoch, rule.since_best) == (0.6, 3, 3)


def test_nan_is_never_a_best_and_patience_zero_never_stops() -> None:
    rule = PatienceStop(0)
    assert rule.update(0, 0.3)
    for e in range(1, 50):
        assert not rule.update(e, float("nan"))
        assert not rule.exhausted
    assert rule.best_epoch == 0
    with pytest.raises(InputError, match=r"patience must be in \[0, inf\), got -1"):
        PatienceStop(-1)


# ----------------------------------------------------------------------------- the data


def test_validation_split_is_carved_from_the_training_split(digits: ot.DigitsSplit) -> None:
    fit, val, test = set(digits.train_index), set(digits.val_index), set(digits.test_index)
    assert not (fit & val) and not (fit & test) and not (val & test)
    assert len(fit | val | test) == 1797
    assert len(test) == math.ceil(0.2 * 1797) and len(val) == math.ceil(0.15 * (1797 - len(test)))
    assert set(digits.y_val.tolist()) == set(range(10))
    # the test split does not depend on the validation share, and the pixels are scaled by the fit split only
    other = ot.load_digits_split(2, 0.2, 11, val_fraction=0.3)
    assert np.array_equal(np.sort(other.test_index), np.sort(digits.test_index))
    from sklearn.datasets import load_digits

    images = load_digits().images.astype(np.float32)
    assert digits.mean == pytest.approx(float(images[digits.train_index].mean()))
    assert digits.mean != pytest.approx(float(images[np.r_[digits.train_index, digits.val_index]].mean()), abs=1e-6)


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"val_fraction": 0.0}, r"val_fraction must be in \(0, 1\), got 0.0"),
        ({"val_fraction": 0.001}, r"val_fraction must be in \(0.006263, 0.993\] so that the fit and validation"),
        ({"val_fraction": 0.999}, r"val_fraction must be in \(0.006263, 0.993\]"),
        ({"test_fraction": 0.99, "val_fraction": 0.5}, r"test_fraction 0.99 leaves too few training images"),
        ({"patience": -1}, r"patience must be in \[0, inf\), got -1"),
        ({"patience": 1.5}, "patience must be an integer"),
        ({"schedule": "step"}, "schedule must be one of constant, cosine, got 'step'"),
    ],
)
def test_bad_stopping_options_name_the_value(kw: dict, match: str) -> None:
    with pytest.raises(InputError, match=match):
        ot.TrainConfig(**kw)


# ----------------------------------------------------------------------------- in training


def _split_rows(res: ot.RunResult, split: str) -> pd.DataFrame:
    c = pd.DataFrame(res.curves)
    return c[c["split"] == split].sort_values("epoch")


def test_a_model_that_cannot_learn_stops_after_patience_epochs(digits: ot.DigitsSplit) -> None:
    # lr 1e-12: the weights barely move, so no epoch beats the initial validation accuracy
    cfg = ot.TrainConfig(**TINY, epochs=20, patience=3, lr=1e-12, models=("vit",))
    res = ot.train_model("vit", cfg, digits, init_seed=0, order_seed=1)
    s = res.summary
    per_epoch = math.ceil(len(digits.y_train) / cfg.batch_size)
    assert (s["stopped_by"], s["epochs_done"], s["best_epoch"], s["steps"]) == ("patience", 3, 0, 3 * per_epoch)
    val = _split_rows(res, "val")
    assert list(val["epoch"]) == [0, 1, 2, 3]
    assert s["test_accuracy"] == _split_rows(res, "test")["accuracy"].iloc[0]  # the epoch-0 checkpoint


def test_patience_zero_runs_the_whole_budget_and_reports_the_last_model(digits: ot.DigitsSplit) -> None:
    cfg = ot.TrainConfig(**TINY, epochs=4, patience=0, lr=1e-12, models=("vit",))
    res = ot.train_model("vit", cfg, digits, init_seed=0, order_seed=1)
    s = res.summary
    assert (s["stopped_by"], s["epochs_done"], s["best_epoch"]) == ("budget", 4, 4)
    assert s["steps"] == budget(cfg)["max_steps"] == 4 * math.ceil(len(digits.y_train) / cfg.batch_size)
    assert s["test_accuracy"] == _split_rows(res, "test")["accuracy"].iloc[-1]


def test_the_reported_model_is_the_best_validation_checkpoint(digits: ot.DigitsSplit) -> None:
    # a constant, large learning rate: the validation accuracy rises, then wobbles, and the rule fires
    cfg = ot.TrainConfig(**TINY, epochs=15, patience=2, lr=3e-2, schedule="constant", models=("vit",))
    res = ot.train_model("vit", cfg, digits, init_seed=2, order_seed=3)
    s = res.summary
    val, test = _split_rows(res, "val"), _split_rows(res, "test")
    best = int(val["epoch"].iloc[int(np.argmax(val["accuracy"].to_numpy()))])  # argmax: the earliest maximum
    assert best > 0 and s["best_epoch"] == best
    assert s["val_accuracy"] == val["accuracy"].max()
    assert s["test_accuracy"] == test.loc[test["epoch"] == best, "accuracy"].item()
    assert s["epochs_done"] == val["epoch"].max() == best + cfg.patience
    assert s["best_step"] == val.loc[val["epoch"] == best, "step"].item()
    # the summary re-evaluates the weights it reports: the last epoch's weights score lower on the
    # validation split, so equal numbers show that the best checkpoint was restored
    assert val["accuracy"].iloc[-1] < s["val_accuracy"]
    assert s["val_loss"] == pytest.approx(val.loc[val["epoch"] == best, "loss"].item(), rel=1e-6)


def test_the_cosine_schedule_decays_to_zero_over_the_budget() -> None:
    assert ot.lr_factor("cosine", 0, 600) == 1.0
    assert ot.lr_factor("cosine", 300, 600) == pytest.approx(0.5)
    assert ot.lr_factor("cosine", 600, 600) == pytest.approx(0.0, abs=1e-12)
    assert ot.lr_factor("cosine", 900, 600) == pytest.approx(0.0, abs=1e-12)
    assert all(ot.lr_factor("constant", t, 600) == 1.0 for t in (0, 300, 600))
    f = [ot.lr_factor("cosine", t, 50) for t in range(51)]
    assert all(a > b for a, b in itertools.pairwise(f))


# ----------------------------------------------------------------------------- the paper's Table 2


def test_table2_is_the_papers_text() -> None:
    if not PAPER_TEXT.is_file():
        pytest.skip(f"{PAPER_TEXT} not present")
    text = PAPER_TEXT.read_text()
    i = text.index("Table 2: Test accuracy for OSA-Transformer and ViT models trained on MNIST")
    head, values = text[i:].splitlines()[1:3]
    assert head == "Model OSA (QR) OSA (NS) ViT ViT (no skip) ViT (no skip, no LN)"
    printed = re.findall(r"(\d+\.\d)%", values)
    assert printed == [f"{100 * v:.1f}" for v in tp.PAPER_TABLE2.values()]
    assert printed == ["97.2", "96.9", "97.2", "94.6", "79.6"]
    assert list(tp.PAPER_TABLE2) == ["osa-qr", "osa-ns", "vit", "vit-noskip", "vit-noskip-noln"]


def _runs(acc: dict[str, list[float]]) -> pd.DataFrame:
    return pd.DataFrame(
        [{"model": m, "replicate": r, "test_accuracy": a} for m, values in acc.items() for r, a in enumerate(values)]
    )


def test_orderings_are_judged_by_the_paired_interval_over_seeds() -> None:
    runs = _runs(
        {
            "osa-qr": [0.95, 0.96, 0.97],  # paper: = ViT
            "osa-ns": [0.93, 0.99, 0.90],  # paper: below QR and ViT, above the rest
            "vit": [0.90, 0.91, 0.92],
            "vit-noskip": [0.91, 0.92, 0.93],  # paper: below ViT; here above it in every seed
            "vit-noskip-noln": [0.50, 0.55, 0.60],
        }
    )
    o = tp.orderings(runs).set_index(["a", "b"])
    assert len(o) == 10 and (o["paper_diff"] >= 0).all()
    assert o.loc[("osa-qr", "vit"), "outcome"] == "not reproduced"  # paper equal, +0.05 in every seed
    assert o.loc[("vit", "vit-noskip"), "outcome"] == "reversed"  # −0.01 in every seed
    assert o.loc[("vit", "vit-noskip-noln"), "outcome"] == "reproduced"
    assert o.loc[("osa-qr", "osa-ns"), "outcome"] == "not resolved"  # +0.02, −0.03, +0.07
    d = np.array([0.95 - 0.93, 0.96 - 0.99, 0.97 - 0.90])
    ci = mean_ci(d)
    row = o.loc[("osa-qr", "osa-ns")]
    assert (row["diff_mean"], row["diff_ci_low"], row["diff_ci_high"]) == pytest.approx((d.mean(), ci.low, ci.high))
    same = _runs({"osa-qr": [0.95, 0.96, 0.97], "vit": [0.96, 0.95, 0.97]})
    assert tp.orderings(same)["outcome"].tolist() == ["consistent"]
    one = _runs({"osa-qr": [0.95], "vit": [0.96]})
    assert tp.orderings(one)["outcome"].tolist() == ["no interval"]


def test_paper_table_sets_each_model_beside_table2() -> None:
    runs = pd.DataFrame(
        {
            "model": ["vit"] * 3 + ["osa-qr"] * 3,
            "replicate": [0, 1, 2] * 2,
            "test_accuracy": [0.9, 0.8, 0.7, 0.95, 0.9, 0.85],
            "test_loss": 0.1,
            "train_loss": 0.1,
            "train_accuracy": 1.0,
            "diverged": False,
            "steps": 10,
            "n_params": 1,
            "wall_seconds": 1.0,
        }
    )
    t = tp.paper_table(ot.summarise(runs, ["vit", "osa-qr"])).set_index("model")
    assert list(t.index) == ["osa-qr", "vit"]  # Table 2's order
    ci = mean_ci(np.array([0.9, 0.8, 0.7]))
    assert t.loc["vit", "paper_accuracy"] == 0.972
    assert (t.loc["vit", "accuracy_ci_low"], t.loc["vit", "accuracy_ci_high"]) == pytest.approx((ci.low, ci.high))
    assert t.loc["osa-qr", "minus_paper"] == pytest.approx(0.9 - 0.972)
    assert (t.loc["osa-qr", "rank"], t.loc["vit", "rank"]) == (1, 2)
    assert (t.loc["osa-qr", "paper_rank"], t.loc["vit", "paper_rank"]) == (1, 1)  # a tie in the paper
    lines = tp.ordering_sentence(tp.orderings(runs), {"vit": "ViT", "osa-qr": "OSA (QR)"})
    assert lines == ["consistent (1): OSA (QR) = ViT"]  # paired differences 0.05, 0.10, 0.15: the interval holds 0


def test_the_accuracy_figure_prints_at_a_column_width_with_the_papers_values(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import matplotlib.pyplot as plt
    from matplotlib.text import Text

    from attnspec.plots import MIN_FONT_PT
    from attnspec.plots import osa_train as po

    kept = []
    monkeypatch.setattr(po, "save_figure", lambda fig, stem, formats=("png", "svg"): kept.append(fig) or [])
    runs = _runs({"osa-qr": [0.95, 0.96, 0.97], "vit": [0.96, 0.95, 0.97], "vit-noskip-noln": [0.80, 0.85, 0.9]})
    summary = ot.summarise(
        runs.assign(
            test_loss=0.1, train_loss=0.1, train_accuracy=1.0, diverged=False, steps=10, n_params=1, wall_seconds=1.0
        ),
        ["vit", "vit-noskip-noln", "osa-qr"],
    )
    po.plot_accuracy(runs, tmp_path / "acc", tp.paper_table(summary), "mnist")  # the paper's values share an MNIST axis
    fig = kept[0]
    assert fig.get_figwidth() == pytest.approx(3.3)
    fig.canvas.draw()
    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text()]
    assert texts and min(t.get_fontsize() for t in texts) >= MIN_FONT_PT
    ax = fig.axes[0]
    diamonds = [c for c in ax.collections if c.get_label() == "paper, Table 2 (MNIST)"]
    assert len(diamonds) == 1
    # x follows the order in which the runs list the models, y is the paper's value of each
    xy = {round(x): y for x, y in diamonds[0].get_offsets()}
    order = list(dict.fromkeys(runs["model"]))
    assert {order[x]: y for x, y in xy.items()} == pytest.approx({m: tp.PAPER_TABLE2[m] for m in order})
    assert ax.get_ylim()[0] < 0.796  # the lowest paper value is inside the axes
    plt.close(fig)
