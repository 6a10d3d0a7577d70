"""Figures of the OSA training check (``attnspec osa-train``), from saved results only.

* ``osa_train_curves``: training loss (mean mini-batch loss per epoch), test loss and
  test accuracy against epochs, mean over replicates with a ±1 sd band (the paper's
  Figure 1, plus accuracy);
* ``osa_train_accuracy``: test accuracy per model, bar = mean over seeds with its 95 % interval
  over seeds, dots = the seeds, dotted line = chance; the paper's Table 2 (MNIST) as open diamonds
  on an MNIST run, on a panel of its own otherwise;
* ``osa_train_signal``: RMS of the token representations through the network at
  initialisation (embedding, after each attention and MLP sub-layer, logits' sd).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import seaborn as sns

from attnspec.plots import PAGE_IN, legend_below, paper_figure, readable_log_ticks, save_figure, style
from attnspec.storage.results import read_table, read_table_if_held

CURVES_TABLE = "osa_train"
RUNS_TABLE = "osa_train_runs"
SIGNAL_TABLE = "osa_train_signal"


SUMMARY_TABLE = "osa_train_summary"
PAPER_TABLE = "osa_train_paper"
#: Display names of the models, read from the saved summary table (its ``label`` column)
#: by :func:`plot_osa_train`; plots never import the theory package.
_LABELS: dict[str, str] = {}


def _labels(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    out["Model"] = out["model"].map(lambda m: _LABELS.get(m, m))
    return out


def epoch_curves(curves: pd.DataFrame) -> pd.DataFrame:
    """Tidy per-(model, replicate, epoch) curves: train loss (mean mini-batch loss over the
    epoch), test loss and test accuracy (evaluated after the epoch; epoch 0 = at init).

    Parameters
    ----------
    curves : pandas.DataFrame
        The training curves (the ``osa_train`` table): train rows per mini-batch, test
        rows per epoch.

    Returns
    -------
    pandas.DataFrame
        One row per (model, replicate, split, epoch): ``model, replicate, split, epoch,
        loss, accuracy``.
    """
    train = (
        curves[curves["split"] == "train"]
        .groupby(["model", "replicate", "epoch"], as_index=False)
        .agg(loss=("loss", "mean"), accuracy=("accuracy", "mean"))
    )
    train["split"] = "train"
    test = curves.loc[curves["split"] == "test", ["model", "replicate", "epoch", "loss", "accuracy"]].copy()
    test["split"] = "test"
    return pd.concat([train, test], ignore_index=True)[["model", "replicate", "split", "epoch", "loss", "accuracy"]]


def plot_curves(curves: pd.DataFrame, stem: Path, data: str = "digits") -> list[Path]:
    """Train loss, test loss and test accuracy against epoch; one line per model.

    Parameters
    ----------
    curves : pandas.DataFrame
        The training curves (the ``osa_train`` table).
    stem : Path
        The figure's path without suffix: ``stem.png`` and ``stem.svg`` are written.
    data : str
        The data set the runs were trained on (``digits`` or ``mnist``), for the title.

    Returns
    -------
    list of Path
        The files written (PNG and SVG).
    """
    style()
    ep = _labels(epoch_curves(curves))
    order = list(dict.fromkeys(curves["model"]))
    hue_order = [_LABELS.get(m, m) for m in order]
    fig, axes = paper_figure(1, 3, width=PAGE_IN, height=2.9)
    axes = axes[0]
    panels = [
        ("train", "loss", "train loss (mean mini-batch, per epoch)"),
        ("test", "loss", "test loss"),
        ("test", "accuracy", "test accuracy"),
    ]
    for ax, (split, col, title) in zip(axes, panels):
        sub = ep[ep["split"] == split]
        sns.lineplot(
            data=sub,
            x="epoch",
            y=col,
            hue="Model",
            hue_order=hue_order,
            style="Model",
            style_order=hue_order,
            errorbar="sd",
            ax=ax,
            legend=ax is axes[-1],
        )
        ax.set_title(title)
        ax.set_ylabel(col)
        if col == "loss" and (sub[col] > 0).all():
            ax.set_yscale("log")
            readable_log_ticks(ax, "y")
    # the legend goes below the panels, where it covers no curve
    handles, labels = axes[-1].get_legend_handles_labels()
    axes[-1].get_legend().remove()
    n_rep = curves["replicate"].nunique()
    fig.suptitle(f"osa-train · {DATA_LABELS.get(data, data)} · {n_rep} replicate(s)")
    fig.legend(handles, labels, loc="outside lower center", ncol=min(3, len(labels)), frameon=False)
    return save_figure(fig, stem)


#: Okabe–Ito colours (readable with every common colour-vision deficiency), told apart by
#: marker shape as well.
_MEASURED, _SEED, _PAPER = "#000000", "#999999", "#D55E00"
#: Width the accuracy figure is printed at (inches): a column of a two-column paper.
ACCURACY_WIDTH_IN = 3.3


#: Chance accuracy of a 10-class problem (the dotted line of the accuracy figure).
CHANCE = 0.1
#: How each data set is named in the figures (mirrors attnspec.theory.osa.train_sources.DATA_LABELS).
DATA_LABELS: dict[str, str] = {"digits": "8×8 digits", "mnist": "MNIST"}
#: The data set of a run whose meta.json names none: ``osa-train --data``'s default.
DEFAULT_DATA = "digits"
PAPER_LABEL = "paper, Table 2 (MNIST)"


def trained_data(meta: Mapping[str, Any]) -> str:
    """The data set an osa-train run trained on, as its meta.json names it: the run's identity
    first (what keys the run), then its configuration; :data:`DEFAULT_DATA` when neither names one
    (an empty meta, a run without a meta.json).

    Parameters
    ----------
    meta : mapping
        The run's meta.json (``{}`` when it has none).

    Returns
    -------
    str
        A key of :data:`DATA_LABELS` for every run osa-train writes.
    """
    for part in ("identity", "config"):
        data = (meta.get(part) or {}).get("data")
        if data:
            return str(data)
    return DEFAULT_DATA


def _error_bars(stats: pd.DataFrame, models: list[str], paper: pd.DataFrame | None) -> tuple[np.ndarray, str]:
    """The bars' error bars, (2, models) below and above the mean: the 95% interval over seeds the
    saved Table 2 comparison holds (the body table's interval), else ± 1 sd over seeds."""
    columns = {"model", "accuracy_ci_low", "accuracy_ci_high"}
    if paper is not None and columns <= set(paper.columns):
        ci = paper.set_index("model")
        if all(m in ci.index and np.isfinite(ci.loc[m, "accuracy_ci_low"]) for m in models):
            mean = np.array([float(stats.loc[m, "mean"]) for m in models])
            low = np.array([float(ci.loc[m, "accuracy_ci_low"]) for m in models])
            high = np.array([float(ci.loc[m, "accuracy_ci_high"]) for m in models])
            return np.vstack([mean - low, high - mean]).clip(min=0), "95% CI over seeds"
    sds = np.array([float(stats.loc[m, "std"]) if stats.loc[m, "count"] > 1 else 0.0 for m in models])
    return np.vstack([sds, sds]), "± 1 sd"


def plot_accuracy(
    runs: pd.DataFrame, stem: Path, paper: pd.DataFrame | None = None, data: str = "digits"
) -> list[Path]:
    """Final test accuracy per model: a bar at the mean over seeds with its 95% interval over seeds
    (the saved Table 2 comparison's; ± 1 sd where the run has none), one
    grey dot per seed, and a dotted chance line (10 classes). The paper's Table 2 values
    (``paper``, the saved ``osa_train_paper`` table) are MNIST accuracies: on an MNIST run they
    are open diamonds on the same axis; on any other data they get their own panel below, on
    an MNIST axis of their own, so no MNIST value is read on another data set's axis.

    Parameters
    ----------
    runs : pandas.DataFrame
        One row per (model, seed) run (``osa_train_runs``).
    stem : Path
        The figure's path without suffix: ``stem.png`` and ``stem.svg`` are written.
    paper : pandas.DataFrame, optional
        The paper's Table 2 values (``osa_train_paper``).
    data : str
        The data set the runs were trained on (``digits`` or ``mnist``).

    Returns
    -------
    list of Path
        The files written (PNG and SVG).
    """
    style()
    r = _labels(runs)
    order = list(dict.fromkeys(r["Model"]))
    models = list(dict.fromkeys(r["model"]))
    pv = None if paper is None or "paper_accuracy" not in paper else paper.set_index("model")["paper_accuracy"]
    own_panel = pv is not None and data != "mnist"
    fig, axes = paper_figure(1 + own_panel, 1, width=ACCURACY_WIDTH_IN, height=2.9 + 1.9 * own_panel)
    ax = axes[0, 0]
    stats = r.groupby("model")["test_accuracy"].agg(["mean", "std", "count"])
    ys = [float(stats.loc[m, "mean"]) for m in models]
    ax.bar(range(len(models)), ys, width=0.6, color="#DDDDDD", edgecolor=_MEASURED, lw=0.8, zorder=1, label="mean")
    yerr, bar_label = _error_bars(stats, models, paper)
    ax.errorbar(
        range(len(models)), ys, yerr=yerr, fmt="none", ecolor=_MEASURED, capsize=3, lw=1.2, zorder=3, label=bar_label
    )
    # seeds side by side at fixed offsets (seaborn's jitter draws from numpy's global random
    # state: the committed figure would change at every redraw)
    reps = sorted(r["replicate"].unique())
    spread = dict(zip(reps, np.linspace(-0.18, 0.18, len(reps)) if len(reps) > 1 else [0.0], strict=True))
    ax.scatter(
        [order.index(m) + spread[k] for m, k in zip(r["Model"], r["replicate"], strict=True)],
        r["test_accuracy"],
        color=_SEED,
        s=10,
        marker="o",
        zorder=2,
        label="one seed",
    )
    if pv is not None and not own_panel:
        xs = [i for i, m in enumerate(models) if m in pv.index]
        ax.scatter(
            xs,
            [float(pv[models[i]]) for i in xs],
            marker="D",
            s=28,
            facecolors="none",
            edgecolors=_PAPER,
            linewidths=1.3,
            zorder=4,
            label=PAPER_LABEL,
        )
    ax.set_title(f"attnspec, {DATA_LABELS.get(data, data)}, {len(reps)} seed(s)")
    ax.set_ylabel(f"{DATA_LABELS.get(data, data)} test accuracy")
    panels = [ax]
    if own_panel:
        pax = axes[1, 0]
        xs = [i for i, m in enumerate(models) if m in pv.index]
        pax.bar(
            xs,
            [float(pv[models[i]]) for i in xs],
            width=0.6,
            color="none",
            edgecolor=_PAPER,
            hatch="///",
            lw=1.0,
            label=PAPER_LABEL,
        )
        pax.set_title(PAPER_LABEL)
        pax.set_ylabel("MNIST test accuracy")
        panels.append(pax)
    for a in panels:
        a.axhline(CHANCE, color=_MEASURED, ls=":", lw=1.0, zorder=0, label="chance (10 classes)" if a is ax else None)
        a.set_ylim(0.0, 1.0)
        a.set_xlim(-0.6, len(models) - 0.4)
        a.set_xticks(range(len(order)), order, rotation=30, ha="right")
        a.set_xlabel("")
    handles, labels = [], []
    for a in panels:
        h, lab = a.get_legend_handles_labels()
        handles += h
        labels += lab
    fig.legend(handles, labels, loc="outside lower center", ncol=2, frameon=False)
    return save_figure(fig, stem)


def plot_signal(signal: pd.DataFrame, stem: Path) -> list[Path]:
    """RMS of the representations at initialisation, stage by stage, log scale.

    Parameters
    ----------
    signal : pandas.DataFrame
        The signal-propagation table (``osa_train_signal``).
    stem : Path
        The figure's path without suffix: ``stem.png`` and ``stem.svg`` are written.

    Returns
    -------
    list of Path
        The files written (PNG and SVG).
    """
    style()
    s = _labels(signal)
    stages = s[["stage", "block"]].drop_duplicates()
    names = [
        ("embed" if st == "embed" else "logits (sd)" if st == "logits" else f"{st} {b}")
        for st, b in stages.itertuples(index=False)
    ]
    pos = {tuple(k): i for i, k in enumerate(stages.itertuples(index=False))}
    s["position"] = [pos[(st, b)] for st, b in zip(s["stage"], s["block"])]
    fig, axes = paper_figure(width=PAGE_IN, height=3.2)
    ax = axes[0, 0]
    order = list(dict.fromkeys(s["Model"]))
    sns.lineplot(
        data=s,
        x="position",
        y="rms",
        hue="Model",
        hue_order=order,
        style="Model",
        style_order=order,
        markers=True,
        errorbar=("pi", 100),
        ax=ax,
    )
    ax.set_yscale("log")
    readable_log_ticks(ax, "y")
    ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
    ax.set_xlabel("")
    ax.set_ylabel("RMS of token representations")
    ax.set_title("osa-train · at initialisation")
    handles, labels = ax.get_legend_handles_labels()
    ax.get_legend().remove()
    legend_below(fig, handles, labels)
    return save_figure(fig, stem)


def plot_osa_train(out_dir: Path) -> list[Path]:
    """Make every figure from the tables saved in ``out_dir``.

    Parameters
    ----------
    out_dir : Path
        A results directory written by ``attnspec osa-train --out``; the figures are written into it.

    Returns
    -------
    list of Path
        The files written (PNG and SVG).
    """
    out_dir = Path(out_dir)
    if (out_dir / f"{SUMMARY_TABLE}.parquet").is_file():
        summary = read_table(out_dir, SUMMARY_TABLE)
        if "label" in summary:
            _LABELS.update(zip(summary["model"], summary["label"]))
    curves = read_table(out_dir, CURVES_TABLE)
    runs = read_table(out_dir, RUNS_TABLE)
    paper = read_table_if_held(out_dir, PAPER_TABLE)
    meta = out_dir / "meta.json"
    data = trained_data(json.loads(meta.read_text()) if meta.is_file() else {})
    paths = plot_curves(curves, out_dir / "osa_train_curves", data) + plot_accuracy(
        runs, out_dir / "osa_train_accuracy", paper, data
    )
    if (out_dir / f"{SIGNAL_TABLE}.parquet").is_file():
        paths += plot_signal(read_table(out_dir, SIGNAL_TABLE), out_dir / "osa_train_signal")
    return paths
