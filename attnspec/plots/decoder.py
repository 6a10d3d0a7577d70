"""Figures of the decoder study (:mod:`attnspec.spectra.decoder_study`), from saved results only.

* ``decoder_depth``: one panel per quantity (c at n/4, k90/n, effective rank/n, row
  entropy), the layer means with their 95% intervals against relative depth (0 = first
  layer, 1 = last), one line per model and corpus at the same n — a 30-layer decoder and a
  6-layer encoder on one axis;
* ``decoder_beta``: β of k90 ∝ n^β per layer against relative depth with its bootstrap
  interval, one series per model and corpus, with the thresholds of the verdict.

Colour is the model, the line style the corpus.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from attnspec.plots import COLUMN_IN, PAGE_IN, fit_title, paper_figure, save_figure, style

DEPTH_QUANTITIES: tuple[str, ...] = ("c_at", "reach_index", "effective_rank", "row_entropy")
LINESTYLES = ("-", "--", ":", "-.")


def _styles(frame: pd.DataFrame) -> tuple[dict[str, str], dict[str, str]]:
    from attnspec.plots import OKABE_ITO

    models = list(dict.fromkeys(frame["model"]))
    corpora = list(dict.fromkeys(frame["data"]))
    colours = {m: OKABE_ITO[i % len(OKABE_ITO)] for i, m in enumerate(models)}
    return colours, {c: LINESTYLES[i % len(LINESTYLES)] for i, c in enumerate(corpora)}


def plot_depth(
    stats: pd.DataFrame,
    out: Path,
    *,
    title: str = "",
    quantities: Sequence[str] = DEPTH_QUANTITIES,
    formats: Sequence[str] = ("png", "svg"),
) -> list[Path]:
    """Layer means against relative depth, one panel per quantity.

    ``stats``: rows of :func:`attnspec.spectra.decoder_study.run_statistics` of several runs with
    ``model`` (display name), ``data`` and ``n`` added; the overall rows (layer −1) are
    left out.

    Parameters
    ----------
    stats : pandas.DataFrame
        The rows described above.
    out : Path
        The folder the figure ``decoder_depth`` is written to.
    title : str
        The figure's title; may be empty.
    quantities : sequence of str
        The quantities drawn, one panel each.
    formats : sequence of str
        The file formats (matplotlib's names), one file each.

    Returns
    -------
    list of Path
        The files written.
    """
    style()
    d = stats[stats["layer"] >= 0]
    quantities = [q for q in quantities if q in set(d["quantity"])]
    colours, lines = _styles(d)
    cols = min(2, max(len(quantities), 1))
    rows = int(np.ceil(len(quantities) / cols))
    fig, axes = paper_figure(rows, cols, width=PAGE_IN, height=2.3 * rows + 0.8)
    for ax, q in zip(axes.ravel(), quantities):
        g = d[d["quantity"] == q]
        for (model, data), s in g.groupby(["model", "data"], sort=False):
            s = s.sort_values("depth")
            ax.plot(
                s["depth"],
                s["mean"],
                color=colours[model],
                ls=lines[data],
                lw=1.1,
                marker="o",
                ms=2.2,
                label=f"{model} · {data} (n = {int(s['n'].iloc[0])})",
            )
            ax.fill_between(s["depth"], s["low"], s["high"], color=colours[model], alpha=0.2, lw=0)
        label = g["label"].iloc[0]
        at = int(g["at"].iloc[0]) if q == "c_at" and g["n"].nunique() == 1 else None
        ax.set_title(label + (f" (index {at})" if at else ""))
        ax.set_xlabel("relative depth (0 = first layer, 1 = last)")
        ax.set_xlim(-0.03, 1.03)
    for ax in axes.ravel()[len(quantities) :]:
        ax.axis("off")
    handles, labels = axes.ravel()[0].get_legend_handles_labels()
    fig.legend(
        handles,
        labels,
        loc="outside lower center",
        ncol=2,
        frameon=False,
        title="layer means, 95% intervals over inputs (bands)",
    )
    if title:
        fig.suptitle(fit_title(title, PAGE_IN, 8.5))
    return save_figure(fig, Path(out) / "decoder_depth", formats)


def plot_betas(
    fits: pd.DataFrame, out: Path, *, title: str = "", formats: Sequence[str] = ("png", "svg")
) -> list[Path]:
    """β of k90 ∝ n^β per layer against relative depth, one series per model and corpus.

    ``fits``: rows of :func:`attnspec.spectra.decoder_study.beta_fits` with ``model`` and ``data``
    added; the overall fit (layer −1) of each series is drawn as a horizontal band at the
    right edge and named in the legend.

    Parameters
    ----------
    fits : pandas.DataFrame
        The rows described above.
    out : Path
        The folder the figure ``decoder_beta`` is written to.
    title : str
        The figure's title; may be empty.
    formats : sequence of str
        The file formats (matplotlib's names), one file each.

    Returns
    -------
    list of Path
        The files written.
    """
    from attnspec.spectra.reading import LINEAR_ABOVE, NO_GROWTH_BELOW

    style()
    colours, lines = _styles(fits)
    fig, axes = paper_figure(width=COLUMN_IN, height=3.6)  # one column: it carries a summary line
    ax = axes[0, 0]
    series = list(fits.groupby(["model", "data", "lengths"], sort=False))
    for j, ((model, data, _lengths), s) in enumerate(series):
        per = s[s["layer"] >= 0].sort_values("depth")
        allr = s[s["layer"] < 0].iloc[0]
        x = per["depth"].to_numpy() + (j - (len(series) - 1) / 2) * 0.006  # side by side where layers meet
        ax.errorbar(
            x,
            per["beta"],
            yerr=[per["beta"] - per["low"], per["high"] - per["beta"]],
            fmt="o",
            ms=2.5,
            capsize=1.5,
            lw=0.8,
            color=colours[model],
            ls="none",
        )
        ax.plot(
            x,
            per["beta"],
            color=colours[model],
            ls=lines[data],
            lw=0.9,
            label=f"{model} · {data}: all layers β = {allr['beta']:.2f} [{allr['low']:.2f}, {allr['high']:.2f}]",
        )
    for y in (0.0, 1.0):
        ax.axhline(y, color="grey", lw=0.7)
    for y in (NO_GROWTH_BELOW, LINEAR_ABOVE):
        ax.axhline(y, color="grey", lw=0.7, ls=":")
    ax.set_xlabel("relative depth (0 = first layer, 1 = last)")
    ax.set_ylabel("β of k90 ∝ n^β (95% CI)")
    ax.set_xlim(-0.03, 1.03)
    fig.legend(loc="outside lower center", ncol=1, frameon=False)
    if title:
        ax.set_title(fit_title(title, COLUMN_IN, 8))
    return save_figure(fig, Path(out) / "decoder_beta", formats)
