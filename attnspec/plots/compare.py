"""Spectrum runs side by side with confidence intervals, from :func:`attnspec.spectra.compare.compare_runs`.

* ``compare_runs``: one panel per quantity; per layer (and "all"), each run's mean with its
  interval, runs offset side by side;
* ``compare_diff``: the same panels for the differences from the first run (Welch intervals),
  with the zero line.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from attnspec.plots import COLUMN_IN, OKABE_ITO, PAGE_IN, fit_title, paper_figure, save_figure, style

LABELS = {
    "c_at": "mean c at index {at}",
    "reach_index": "index where c reaches 0.9",
    "effective_rank": "effective rank",
    "stable_rank": "stable rank",
    "sigma2_over_sigma1": "σ₂/σ₁",
    "numerical_rank": "numerical rank",
    "rank_for_error_0.1": "rank for error ≤ 0.1",
    "rank_for_error_0.2": "rank for error ≤ 0.2",
    "row_entropy": "row entropy (normalised)",
}


def _panels(
    table: pd.DataFrame, value: str, low: str, high: str, out: Path, stem: str, zero: bool, formats: Sequence[str]
) -> list[Path]:
    quantities = list(dict.fromkeys(table["quantity"]))
    runs = list(dict.fromkeys(table["run"]))
    if zero:
        runs = runs[1:]  # the reference's difference from itself is 0
    cols = min(3, len(quantities))
    rows = int(np.ceil(len(quantities) / cols))
    fig, axes = paper_figure(rows, cols, width=PAGE_IN if cols > 1 else COLUMN_IN, height=2.2 * rows + 0.7)
    palette = OKABE_ITO
    width = 0.7 / max(len(runs), 1)
    for ax, q in zip(axes.ravel(), quantities):
        d = table[table["quantity"] == q]
        layers = sorted(v for v in d["layer"].unique() if v >= 0)
        pos = {layer: i for i, layer in enumerate(layers)} | {-1: len(layers)}
        for j, (run, color) in enumerate(zip(runs, palette)):
            g = d[d["run"] == run].copy()
            x = g["layer"].map(pos).to_numpy() + (j - (len(runs) - 1) / 2) * width
            ax.errorbar(
                x,
                g[value],
                yerr=[g[value] - g[low], g[high] - g[value]],
                fmt="o",
                ms=3,
                capsize=2,
                color=color,
                label=g["label"].iloc[0],
            )
        if zero:
            ax.axhline(0, color="grey", lw=0.8)
        ax.set_xticks(range(len(layers) + 1), [str(v + 1) for v in layers] + ["all"])
        ax.set_xlabel("layer")
        ax.set_title(
            fit_title(
                LABELS.get(q, q).format(at=int(d["at"].iloc[0])) + (" − reference" if zero else ""),
                ax.figure.get_figwidth() / cols - 0.5,
                8,
            )
        )
    for ax in axes.ravel()[len(quantities) :]:
        ax.axis("off")
    handles, labels = axes.ravel()[0].get_legend_handles_labels()
    level = float(table["level"].iloc[0])
    fig.legend(
        handles,
        labels,
        loc="outside lower center",
        ncol=min(2, len(labels)),
        frameon=False,
        title=f"{level:.0%} intervals" + ("; reference: " + table["label"].iloc[0] if zero else ""),
    )
    return save_figure(fig, Path(out) / stem, formats)


def plot_comparison(table: pd.DataFrame, out: Path, *, formats: Sequence[str] = ("png", "svg")) -> list[Path]:
    """``compare_runs`` (each run's means) and ``compare_diff`` (differences from the first run).

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`attnspec.spectra.compare.compare_runs`'s output.
    out : Path
        The folder the figures are written to.
    formats : sequence of str
        The file formats (matplotlib's names), one file each.

    Returns
    -------
    list of Path
        The files written.
    """
    style()
    paths = _panels(table, "mean", "low", "high", out, "compare_runs", False, formats)
    return paths + _panels(table, "diff", "diff_low", "diff_high", out, "compare_diff", True, formats)
