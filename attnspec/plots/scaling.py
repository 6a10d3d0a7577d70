"""Figures of a scaling run (spectrum at several n on the same documents), from saved results.

* ``scaling_k90``: against n on log–log axes, the index where a layer's mean curve reaches
  0.9 and the effective rank: the mean over layers with the min–max band over layers, the
  first, middle and last layer, each null baseline's band and mean, and the slopes β = 0 and
  β = 1 for reference (readable for 30 layers as for 6);
* ``scaling_beta``: per layer and overall, the fitted exponent β of k ∝ n^β with its
  bootstrap interval, for k90 and the ranks needed for relative Frobenius error 0.1 and
  0.2, against the thresholds of the verdict;
* ``scaling_grid``: one small panel per study (model · corpus), k90/n against n, where linear
  growth is a flat line: the layers' mean and min–max band beside each null's layer mean.

k90 is read per input (the first index where that input's curve reaches 0.9, averaged over
heads, then over inputs): the one k90 of the tables, the fits and the summary.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from attnspec.plots import save_figure, style

MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p")
#: The scaling table's k90: per input, then averaged (never the index where a mean curve reaches 0.9).
K90 = "reach_index_input_mean"


def full_title(title: str, table: pd.DataFrame, fits: pd.DataFrame) -> str:
    """``title`` (model · corpus) with the lengths and the input count the fits rest on.

    Parameters
    ----------
    title : str
        The run's name; may be empty.
    table : pandas.DataFrame
        :func:`attnspec.spectra.scaling_fit.scaling_table`'s output (its ``n``).
    fits : pandas.DataFrame
        :func:`attnspec.spectra.scaling_fit.fit_scaling`'s output (its ``inputs``).

    Returns
    -------
    str
    """
    ns = sorted(int(n) for n in table["n"].unique())
    parts = [title] if title else []
    parts.append(f"n = {ns[0]}–{ns[-1]}" if len(ns) > 1 else f"n = {ns[0]}")
    if "inputs" in fits.columns and len(fits) and "inputs" not in title:
        parts.append(f"{int(fits['inputs'].iloc[0])} inputs")
    return " · ".join(parts)


def highlighted_layers(layers: Sequence[int]) -> list[int]:
    """The first, middle and last layer (fewer when there are fewer layers).

    Parameters
    ----------
    layers : sequence of int
        The layers, in order.

    Returns
    -------
    list of int
    """
    layers = sorted(layers)
    return sorted({layers[0], layers[len(layers) // 2], layers[-1]})


def _layer_summary(table: pd.DataFrame, col: str) -> pd.DataFrame:
    """Per n: mean, min and max over layers of ``col``."""
    return table.groupby("n")[col].agg(["mean", "min", "max"]).sort_index()


def plot_scaling(
    table: pd.DataFrame,
    fits: pd.DataFrame,
    out: Path,
    *,
    title: str = "",
    formats: Sequence[str] = ("png", "svg"),
    nulls: dict[str, pd.DataFrame] | None = None,
) -> list[Path]:
    """Draw both figures from :func:`attnspec.spectra.scaling_fit.scaling_table` and :func:`~attnspec.spectra.scaling_fit.fit_scaling`.

    ``title`` names the run (model · corpus); the lengths and the number of inputs are added.
    ``nulls``: null baseline name → its scaling table (``scaling_table(..., source=name)``),
    drawn as a band (min–max over layers) with its layer mean. Every point sits at its own n:
    nothing is offset along the log axis; layers are summarised by their mean and min–max band,
    with the first, middle and last layer drawn on their own.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`attnspec.spectra.scaling_fit.scaling_table`'s output.
    fits : pandas.DataFrame
        :func:`attnspec.spectra.scaling_fit.fit_scaling`'s output.
    out : Path
        The folder the figures are written to; it must exist.
    title : str
        The run's name (model · corpus); may be empty.
    formats : sequence of str
        The file formats (matplotlib's names), one file each; default PNG and SVG.
    nulls : dict of str to pandas.DataFrame, optional
        Null baseline name → its scaling table; None or empty for none.

    Returns
    -------
    list of Path
        The files written: ``out/scaling_k90.*`` (k90 and effective rank against n) and
        ``out/scaling_beta.*`` (β per layer and overall, with its bootstrap interval), each
        in each format.
    """
    style()
    title = full_title(title, table, fits)
    layers = sorted(table["layer"].unique())
    paths = _plot_k90(table, layers, Path(out), title=title, formats=formats, nulls=nulls)
    return paths + _plot_beta(fits, layers, Path(out), title=title, formats=formats)


def _plot_k90(
    table: pd.DataFrame,
    layers: list[int],
    out: Path,
    *,
    title: str,
    formats: Sequence[str],
    nulls: dict[str, pd.DataFrame] | None,
) -> list[Path]:
    """``scaling_k90``: k90 and effective rank against n, the layers' band and mean, three layers, nulls and references."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter, NullLocator

    from attnspec.plots import PAGE_IN, fit_title, paper_figure, readable_log_ticks
    from attnspec.plots.layer_band import draw_layers, draw_null, null_colour
    from attnspec.spectra.nulls import LABELS

    shown = highlighted_layers(layers)
    ns = np.array(sorted(table["n"].unique()), dtype=float)
    fig, axes = paper_figure(1, 2, width=PAGE_IN, height=4.2)
    for ax, col, label in (
        (axes[0, 0], K90, "k90 per input (mean over inputs, heads)"),
        (axes[0, 1], "effective_rank", "effective rank (mean over heads)"),
    ):
        for name, null in (nulls or {}).items():
            s = _layer_summary(null, col)
            band = f"{LABELS.get(name, name)}: layer min–max"
            ax.fill_between(s.index, s["min"], s["max"], color=null_colour(name), alpha=0.25, lw=0, label=band)
            draw_null(ax, name, s.index, s["mean"].to_numpy(), lw=1.1)  # its mean over layers
        s = _layer_summary(table, col)
        draw_layers(
            ax,
            s.index,
            s["mean"],
            s["min"],
            s["max"],
            label="real: layer mean",
            band_label=f"real: min–max over {len(layers)} layers",
            marker="o",
            lw=1.8,
        )
        for layer, marker, ls in zip(shown, ("s", "^", "D"), ((0, (1, 1)), (0, (4, 1.5)), (0, (2, 1, 1, 1)))):
            d = table[table["layer"] == layer].sort_values("n")
            ax.plot(d["n"], d[col], marker=marker, ls=ls, color="0.25", lw=0.9, ms=3, label=f"real: layer {layer + 1}")
        # the references go through the data's geometric centre: slope 0 and slope 1 there
        v = table[col].to_numpy(float)
        v = v[np.isfinite(v) & (v > 0)]
        centre_n, centre_v = float(np.exp(np.log(ns).mean())), float(np.exp(np.log(v).mean()))
        ax.plot(ns, np.full_like(ns, centre_v), color="0.6", ls=":", lw=1.0, label="β = 0 (no growth)")
        ax.plot(ns, centre_v * ns / centre_n, color="0.6", ls="--", lw=1.0, label="β = 1 (linear)")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.xaxis.set_major_locator(FixedLocator(ns))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _p: f"{x:g}"))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.xaxis.set_minor_formatter(NullFormatter())
        readable_log_ticks(ax, "y")
        ax.set_xlabel("sequence length n (tokens)")
        ax.set_ylabel(label)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=3, frameon=False)  # off the data, below the panels
    fig.suptitle(fit_title(title, PAGE_IN, 8.5))
    return save_figure(fig, Path(out) / "scaling_k90", formats)


def _plot_beta(fits: pd.DataFrame, layers: list[int], out: Path, *, title: str, formats: Sequence[str]) -> list[Path]:
    """``scaling_beta``: the fitted β per layer and over layers, with its bootstrap interval, per fitted metric."""
    from attnspec.plots import COLUMN_IN, OKABE_ITO, PAGE_IN, fit_title, paper_figure
    from attnspec.spectra.reading import FITTED, LINEAR_ABOVE, NO_GROWTH_BELOW

    metrics = [m for m in FITTED if m in set(fits["metric"])]
    # a column while a layer's group of error bars keeps 0.2 in, else the page
    fig, axes = paper_figure(width=COLUMN_IN if 0.2 * (len(layers) + 1) + 1.0 <= COLUMN_IN else PAGE_IN, height=3.2)
    ax = axes[0, 0]
    width = 0.8 / max(len(metrics), 1)
    xs = np.arange(len(layers) + 1)  # layers, then "all"
    for j, (metric, color, marker) in enumerate(zip(metrics, OKABE_ITO, MARKERS)):
        f = fits[fits["metric"] == metric].copy()
        f["pos"] = f["layer"].where(f["layer"] >= 0, len(layers))
        f = f.sort_values("pos")
        x = f["pos"].to_numpy() + (j - (len(metrics) - 1) / 2) * width
        ax.errorbar(
            x,
            f["beta"],
            yerr=[f["beta"] - f["low"], f["high"] - f["beta"]],
            fmt=marker,
            ms=3.5,
            capsize=2,
            color=color,
            label=FITTED[metric],
        )
    for y in (0.0, 1.0):
        ax.axhline(y, color="grey", lw=0.7)
    for y in (NO_GROWTH_BELOW, LINEAR_ABOVE):
        ax.axhline(y, color="grey", lw=0.7, ls=":")
    ax.set_xticks(xs, [str(l + 1) for l in layers] + ["all"])
    ax.set_xlabel("layer (1 = first; all = mean over layers)")
    ax.set_ylabel("β in k ∝ n^β (95% bootstrap CI)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), frameon=False)  # below: the points fill the panel
    ax.set_title(fit_title(title, ax.figure.get_figwidth(), 8))
    return save_figure(fig, Path(out) / "scaling_beta", formats)


def plot_scaling_grid(
    panels: Sequence[tuple[str, pd.DataFrame, dict[str, pd.DataFrame]]],
    out: Path,
    *,
    formats: Sequence[str] = ("png", "svg"),
) -> list[Path]:
    """``scaling_grid``: one panel per study, k90/n against n (log₂ axis), at one column's width.

    Each panel draws the mean over layers of k90/n with the layers' min–max band, and each
    null's mean over layers; a flat line is linear growth of k90 with n, a falling one slower
    growth. Panels share the y axis, so the studies compare by eye.

    Parameters
    ----------
    panels : sequence of (str, pandas.DataFrame, dict of str to pandas.DataFrame)
        Per study: its title (model · corpus), its scaling table
        (:func:`attnspec.spectra.scaling_fit.scaling_table`) and each null's scaling table by name.
    out : Path
        The folder the figure is written to; it must exist.
    formats : sequence of str
        The file formats, one file each.

    Returns
    -------
    list of Path
        The files written, ``out/scaling_grid.*``.

    Raises
    ------
    ValueError
        No panel.
    """
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    from attnspec.plots import COLUMN_IN, fit_title, legend_below, paper_figure
    from attnspec.plots.layer_band import draw_layers, draw_null

    if not panels:
        raise ValueError("plot_scaling_grid needs at least one panel, got none")
    style()
    cols = min(2, len(panels))
    rows = -(-len(panels) // cols)
    fig, axes = paper_figure(rows, cols, width=COLUMN_IN, height=1.35 * rows + 0.9, sharey=True)
    for ax in axes.ravel()[len(panels) :]:
        ax.set_visible(False)
    for ax, (title, table, nulls) in zip(axes.ravel(), panels):
        for name, null in nulls.items():
            s = null.assign(share=null[K90] / null["n"]).groupby("n")["share"].mean()
            draw_null(ax, name, s.index, s.to_numpy(), lw=1.1)
        s = table.assign(share=table[K90] / table["n"]).groupby("n")["share"].agg(["mean", "min", "max"])
        draw_layers(
            ax,
            s.index,
            s["mean"],
            s["min"],
            s["max"],
            label="real: layer mean",
            band_label="real: layers min–max",
            marker="o",
        )
        ns = sorted(int(n) for n in table["n"].unique())
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_locator(FixedLocator(ns))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _p, shown=ns[::2]: f"{x:g}" if int(x) in shown else ""))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_ylim(0, 0.75)
        ax.set_title(fit_title(title, COLUMN_IN / cols, 8), fontsize=7.5)
    for ax in axes[-1, :]:
        ax.set_xlabel("n (tokens)")
    for ax in axes[:, 0]:
        ax.set_ylabel("k90 / n")
    handles, labels = {}, []
    for ax in axes.ravel()[: len(panels)]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in handles:
                handles[lab] = h
                labels.append(lab)
    legend_below(fig, [handles[lab] for lab in labels], labels, ncol=2)
    return save_figure(fig, Path(out) / "scaling_grid", formats)
