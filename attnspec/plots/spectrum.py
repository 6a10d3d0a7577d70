"""Figure 1 of the Linformer paper, from saved spectrum results only.

* per-layer curves: the mean normalised cumulative singular-value curve of each layer
  (heads pooled), shaded ± one standard deviation over (input, head);
* heatmap: layer × head, the mean cumulative value at index ``at``
  (the paper reads index 128 of n = 512);
* comparison: several runs side by side (e.g. base vs large, wiki103 vs imdb).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from attnspec.plots import COLUMN_IN, MIN_FONT_PT, PAGE_IN, fit_title, paper_figure, save_figure, short_name, style
from attnspec.spectra.figure_record import FIGURES_KEY, family_note, figure_choices, record_figure_choices
from attnspec.storage.results import read_meta, read_table


def layer_curves(spectrum: pd.DataFrame) -> pd.DataFrame:
    """Per (layer, index): mean over heads and the pooled std over (input, head).

    With c the count per head (equal across heads of a run), the pooled second moment is
    the mean over heads of var_h·(c−1)/c + mean_h², so the std is that of all (input, head)
    curves of the layer.

    Parameters
    ----------
    spectrum : pandas.DataFrame
        A run's spectrum table (one row per layer, head, index).

    Returns
    -------
    pandas.DataFrame
        ``layer, index, mean, std``; heads that counted no input are left out.
    """
    df = spectrum[spectrum["count"] > 0].copy()
    c = df["count"].astype(float)
    var = df["std"].fillna(0.0) ** 2 * np.where(c > 1, (c - 1) / c, 0.0)
    df["second"] = var + df["mean"] ** 2
    g = df.groupby(["layer", "index"], as_index=False).agg(mean=("mean", "mean"), second=("second", "mean"))
    g["std"] = np.sqrt(np.maximum(g["second"] - g["mean"] ** 2, 0.0))
    return g.drop(columns="second")


def heat_at(spectrum: pd.DataFrame, at: int) -> pd.DataFrame:
    """Layer × head table of the mean cumulative value at index ``at``.

    Parameters
    ----------
    spectrum : pandas.DataFrame
        A run's spectrum table (one row per layer, head, index).
    at : int
        The index read, in 1..n.

    Returns
    -------
    pandas.DataFrame
        Indexed by layer, one column per head.
    """
    return spectrum[spectrum["index"] == at].pivot(index="layer", columns="head", values="mean")


def run_label(meta: dict[str, Any], label: str | None = None) -> str:
    """A run as a figure names it: ``minilm · wiki103 · n = 512 · 400 inputs · encoder``.

    Model and corpus by alias, hub id or the last component of a local path (never an
    absolute path); a run that did not finish says so (``partial: 12 of 200 inputs``).
    ``label`` (``--label``), else the label the run recorded in meta.json, replaces it.

    Parameters
    ----------
    meta : dict
        The run's meta.json.
    label : str, optional
        A label that replaces the run's own.

    Returns
    -------
    str
    """
    label = label if label is not None else (meta.get(FIGURES_KEY) or {}).get("label")
    if label:
        return str(label)
    ident = meta.get("identity", {})
    done, total = meta.get("inputs_done"), meta.get("inputs_total")
    if meta.get("status", "complete") != "complete" and total is not None:
        count = f"partial: {done} of {total} inputs"
    else:
        count = f"{done} inputs"
    note = family_note(meta)
    parts = [
        short_name(ident.get("model", meta.get("model"))),
        short_name(ident.get("data")),
        f"n = {ident.get('seq_len')}",
        count,
    ] + ([note] if note else [])
    return " · ".join(parts)


def _reading_line(ax: Any, at: int) -> Any:
    """The dotted vertical line at the heatmap's reading index; returns its legend handle."""
    return ax.axvline(at, color="0.35", lw=0.9, ls=":", label=f"index {at} (heatmap)")


#: How a figure names a layer's kind of attention when a model has more than one
#: (an encoder–decoder: meta.json's ``layers`` records each layer's kind).
KIND_SHORT = {"encoder_self": "enc", "decoder_self_causal": "dec", "cross": "cross"}


def layer_names(meta: dict[str, Any], layers: Sequence[int]) -> dict[int, str]:
    """Each layer's name in a figure: its number from 1, and, when the run mixes kinds of
    attention (encoder self, decoder causal self, cross), the kind: ``"3 cross"``.

    Parameters
    ----------
    meta : dict
        The run's meta.json (its ``layers`` record each layer's kind).
    layers : sequence of int
        The layers, 0-based.

    Returns
    -------
    dict of int to str
    """
    kinds = {int(d["layer"]): str(d.get("kind")) for d in meta.get("layers") or [] if "layer" in d}
    mixed = len(set(kinds.values())) > 1
    return {
        int(layer): f"{int(layer) + 1} {KIND_SHORT.get(kinds.get(int(layer), ''), kinds.get(int(layer), '?'))}"
        if mixed
        else str(int(layer) + 1)
        for layer in layers
    }


def _draw_curves(
    ax: Any, spectrum: pd.DataFrame, title: str, width_in: float, meta: dict[str, Any] | None = None
) -> None:
    curves = layer_curves(spectrum)
    layers = sorted(curves["layer"].unique())
    names = layer_names(meta or {}, layers)
    palette = viridis_colors(len(layers))
    for color, layer in zip(palette, layers):
        d = curves[curves["layer"] == layer]
        # figures number layers and heads from 1 (the tables store them 0-based)
        ax.plot(d["index"], d["mean"], color=color, lw=1.2, label=f"layer {names[int(layer)]}")
        ax.fill_between(
            d["index"],
            (d["mean"] - d["std"]).clip(0, 1),
            (d["mean"] + d["std"]).clip(0, 1),
            color=color,
            alpha=0.12,
            lw=0,
        )
    ax.set_xlabel("singular value index i (1 = largest)")
    ax.set_ylabel("share of Σσ in the first i values")
    ax.set_ylim(0, 1.01)
    ax.set_xlim(1, int(curves["index"].max()))
    ax.set_title(fit_title(title, width_in, 8), fontsize=8)


def viridis_colors(count: int) -> list[tuple[float, float, float]]:
    """``count`` colours of viridis, evenly inside its ends (seaborn's ``color_palette("viridis", count)``).

    Parameters
    ----------
    count : int
        How many colours (one per layer).

    Returns
    -------
    list of (r, g, b)
    """
    from matplotlib import colormaps

    inside = np.linspace(0, 1, int(count) + 2)[1:-1]  # (count,) both ends left out, as seaborn does
    return [tuple(float(x) for x in rgba[:3]) for rgba in colormaps["viridis"](inside)]


def _legend(ax: Any, n_layers: int) -> None:
    """The layer key below the figure's panels, where it covers no curve."""
    from attnspec.plots import legend_below

    handles, labels = ax.get_legend_handles_labels()
    legend_below(ax.figure, handles, labels, title="mean ± 1 sd over (input, head)")


def _annotation_size(cell_width_in: float, cell_height_in: float) -> float | None:
    """Font size (pt) for the cell values, or None when they would be smaller than MIN_FONT_PT."""
    # "0.84" is about 2.2 em wide; leave a small margin inside the cell
    size = min(cell_width_in * 72 / 2.4, cell_height_in * 72 / 1.5, 8.0)
    return size if size >= MIN_FONT_PT else None


def heat_range(tables: Sequence[pd.DataFrame], at: int) -> tuple[float, float]:
    """One colour scale for heatmaps that are compared: the range of every run's values at ``at``.

    Parameters
    ----------
    tables : sequence of pandas.DataFrame
        The runs' spectrum tables.
    at : int
        The index read.

    Returns
    -------
    vmin, vmax : float
    """
    heats = [heat_at(t, at) for t in tables]
    return min(float(h.min().min()) for h in heats), max(float(h.max().max()) for h in heats)


def _draw_heat(
    ax: Any,
    spectrum: pd.DataFrame,
    at: int,
    title: str,
    width_in: float,
    *,
    vmin: float | None = None,
    vmax: float | None = None,
    annot_size: float | None = None,
    cbar: bool = True,
    meta: dict[str, Any] | None = None,
) -> Any:
    from attnspec.plots.heatmap import heatmap

    table = heat_at(spectrum, at)
    # 1-based labels in figures, as in the paper (the tables stay 0-based); the axis labels say
    # so; an encoder–decoder's rows also name their kind
    names = layer_names(meta or {}, list(table.index))
    table.index = [names[int(i)] for i in table.index]
    table.columns = [h + 1 for h in table.columns]
    mesh = heatmap(
        ax,
        table,
        cmap="viridis",
        vmin=vmin,
        vmax=vmax,
        annot_size=annot_size,
        cbar_label=f"c at index {at} (share of Σσ)" if cbar else None,
    )
    ax.set_xlabel("head (1 = first)")
    ax.set_ylabel("layer (1 = first)")
    ax.set_title(fit_title(title, width_in, 8), fontsize=8)
    return mesh


def _heat_width(heads: int) -> float:
    """Width (in) of a one-run heatmap: a column, or the page when a column's cells would be
    narrower than 0.15 in."""
    return COLUMN_IN if (COLUMN_IN - 1.3) / max(heads, 1) >= 0.15 else PAGE_IN


def run_figures(
    spectrum: pd.DataFrame,
    meta: dict[str, Any],
    *,
    at: int | None = None,
    label: str | None = None,
    vmin: float | None = None,
    vmax: float | None = None,
) -> dict[str, Any]:
    """The two figures of one run, drawn from its tables: ``{"spectrum_layers": fig, "spectrum_heatmap": fig}``.

    ``spectrum`` is the run's spectrum table (one row per layer, head, index); ``meta`` its
    meta.json, whose recorded ``figures.at`` (and ``figures.label``) are used when ``at``
    (``label``) is None. ``vmin``/``vmax`` fix the heatmap's colour scale (shared when runs
    are compared). Figures are drawn at print size with constrained layout, so a plain
    ``fig.savefig(path)`` clips nothing. Nothing is written; :func:`plot_run` saves them.

    Parameters
    ----------
    spectrum : pandas.DataFrame
        A run's spectrum table (one row per layer, head, index).
    meta : dict
        The run's meta.json.
    at : int, optional
        The index the heatmap reads.
    label : str, optional
        A title that replaces the run's own label.
    vmin, vmax : float, optional
        The heatmap's colour scale (default: its own range).

    Returns
    -------
    dict of str to matplotlib.figure.Figure
    """
    style()
    n = int(spectrum["index"].max())
    choices = figure_choices(meta, n, at=at, label=label)
    at = choices["at"]
    title = run_label(meta, choices.get("label"))
    L, H = spectrum["layer"].nunique(), spectrum["head"].nunique()

    fig_curves, axes = paper_figure(width=COLUMN_IN, height=3.0 + 0.15 * ((L + 3) // 4))
    _draw_curves(axes[0, 0], spectrum, title, COLUMN_IN, meta)
    _reading_line(axes[0, 0], at)
    _legend(axes[0, 0], L)

    width = _heat_width(H)
    cell_w = (width - 1.3) / H
    cell_h = 0.3
    fig_heat, axes = paper_figure(width=width, height=cell_h * L + 1.1)
    _draw_heat(
        axes[0, 0],
        spectrum,
        at,
        title,
        width,
        vmin=vmin,
        vmax=vmax,
        annot_size=_annotation_size(cell_w, cell_h),
        meta=meta,
    )
    return {"spectrum_layers": fig_curves, "spectrum_heatmap": fig_heat}


def plot_run(
    run: Path,
    out: Path | None = None,
    *,
    at: int | None = None,
    formats: Sequence[str] | None = None,
    label: str | None = None,
    vmin: float | None = None,
    vmax: float | None = None,
) -> list[Path]:
    """Per-layer curves and the layer × head heatmap of one results directory.

    ``at``, ``formats`` and ``label`` default to what ``meta.json`` recorded (key
    ``figures``), else to :func:`attnspec.spectra.reading.default_at`, PNG + SVG and the run's own
    label. Drawing into the run's own ``figures/`` records the choices used, so a later
    ``attnspec plot spectrum RUN`` redraws the same figures. ``vmin``/``vmax``: a colour
    scale shared with other runs (``attnspec plot spectrum A B`` passes the common range).

    Parameters
    ----------
    run : Path
        A spectrum results directory.
    out : Path, optional
        The folder the figures are written to (default: ``run/figures``).
    at : int, optional
        The index the heatmap reads.
    formats : sequence of str, optional
        The file formats.
    label : str, optional
        A title that replaces the run's own label.
    vmin, vmax : float, optional
        The heatmap's colour scale.

    Returns
    -------
    list of Path
        The files written.
    """
    run = Path(run)
    meta = read_meta(run)
    spectrum = read_table(run, "spectrum")
    choices = figure_choices(meta, int(spectrum["index"].max()), at=at, formats=formats, label=label)
    out = Path(out) if out is not None else run / "figures"
    paths: list[Path] = []
    for name, fig in run_figures(
        spectrum, meta, at=choices["at"], label=choices.get("label"), vmin=vmin, vmax=vmax
    ).items():
        paths += save_figure(fig, out / name, choices["formats"])
    if out.resolve() == (run / "figures").resolve():
        record_figure_choices(run, choices)
    return paths


def plot_compare(
    runs: Sequence[Path],
    out: Path,
    *,
    at: int | None = None,
    formats: Sequence[str] | None = None,
    labels: Sequence[str] | None = None,
) -> list[Path]:
    """Figure 1 side by side: one column per run, curves on top, heatmaps below.

    Every panel names its run (``labels`` override, one per run); the layer legend (with the
    reading-index line) is on the first panel only; the heatmaps share one colour scale and
    one colour bar. Cell values are printed only while they stay readable (>= 7 pt).

    Parameters
    ----------
    runs : sequence of Path
        Spectrum results directories.
    out : Path
        The folder the figure ``spectrum_compare`` is written to.
    at : int, optional
        The index the heatmaps read (default: the first run's recorded choice, else the
        reading point of the shortest run).
    formats : sequence of str, optional
        The file formats (default: the first run's recorded choice, else PNG and SVG).
    labels : sequence of str, optional
        One title per run, replacing the runs' own labels.

    Returns
    -------
    list of Path
        The files written.
    """
    style()
    metas = [read_meta(r) for r in runs]
    tables = [read_table(r, "spectrum") for r in runs]
    n = min(int(t["index"].max()) for t in tables)
    choices = figure_choices(metas[0], n, at=at, formats=formats)
    at = choices["at"]
    vmin, vmax = heat_range(tables, at)
    k = len(runs)
    L = max(t["layer"].nunique() for t in tables)
    H = max(t["head"].nunique() for t in tables)
    width = COLUMN_IN if k == 1 else PAGE_IN
    col = (width - 0.7) / k  # a column's share of the page, the colour bar taken off
    cell_w = (col - 0.5) / H
    cell_h = min(0.3, 2.6 / L)
    annot = _annotation_size(cell_w, cell_h)
    fig, axes = plt_subplots_compare(k, width, cell_h * L)
    mappable = None
    for j, (meta, table) in enumerate(zip(metas, tables)):
        label = run_label(meta, labels[j] if labels else None)
        _draw_curves(axes[0, j], table, label, col, meta)
        _reading_line(axes[0, j], at)
        if j == 0:
            _legend(axes[0, j], table["layer"].nunique())
        else:
            axes[0, j].set_ylabel("")
        mappable = _draw_heat(
            axes[1, j],
            table,
            at,
            f"{label} · c at index {at} of {int(table['index'].max())}",
            col,
            vmin=vmin,
            vmax=vmax,
            annot_size=annot,
            cbar=False,
            meta=meta,
        )
        if j:
            axes[1, j].set_ylabel("")
    cb = axes[1, 0].figure.colorbar(mappable, ax=list(axes[1, :]), shrink=0.9, pad=0.01)
    cb.set_label(f"c at index {at} (one scale)")
    return save_figure(axes[0, 0].figure, Path(out) / "spectrum_compare", choices["formats"])


def plt_subplots_compare(k: int, width: float, heat_h: float):  # noqa: ANN201
    """Curves on top, heatmaps below, ``k`` columns, at print size with constrained layout.

    Parameters
    ----------
    k : int
        Columns (runs).
    width : float
        Figure width, inches.
    heat_h : float
        Height of the heatmaps' row, inches.

    Returns
    -------
    fig : matplotlib.figure.Figure
    axes : numpy.ndarray of Axes, shape (2, k)
    """
    return paper_figure(2, k, width=width, height=2.9 + heat_h + 0.9, height_ratios=[2.9, heat_h + 0.6])
