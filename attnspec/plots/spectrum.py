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

from attnspec.figure_record import family_note, figure_choices, record_figure_choices
from attnspec.plots import save_figure, style
from attnspec.results import read_meta, read_table


def layer_curves(spectrum: pd.DataFrame) -> pd.DataFrame:
    """Per (layer, index): mean over heads and the pooled std over (input, head).

    With c the count per head (equal across heads of a run), the pooled second moment is
    the mean over heads of var_h·(c−1)/c + mean_h², so the std is that of all (input, head)
    curves of the layer.
    """
    df = spectrum[spectrum["count"] > 0].copy()
    c = df["count"].astype(float)
    var = df["std"].fillna(0.0) ** 2 * np.where(c > 1, (c - 1) / c, 0.0)
    df["second"] = var + df["mean"] ** 2
    g = df.groupby(["layer", "index"], as_index=False).agg(mean=("mean", "mean"), second=("second", "mean"))
    g["std"] = np.sqrt(np.maximum(g["second"] - g["mean"] ** 2, 0.0))
    return g.drop(columns="second")


def heat_at(spectrum: pd.DataFrame, at: int) -> pd.DataFrame:
    """Layer × head table of the mean cumulative value at index ``at``."""
    return spectrum[spectrum["index"] == at].pivot(index="layer", columns="head", values="mean")


def run_label(meta: dict[str, Any]) -> str:
    """``model · data (n=512, 400 inputs; encoder)``; a run that did not finish says so:
    ``partial: 12 of 200 inputs``."""
    ident = meta.get("identity", {})
    done, total = meta.get("inputs_done"), meta.get("inputs_total")
    if meta.get("status", "complete") != "complete" and total is not None:
        count = f"partial: {done} of {total} inputs"
    else:
        count = f"{done} inputs"
    note = family_note(meta)
    return (f"{ident.get('model', meta.get('model'))} · {ident.get('data')} (n={ident.get('seq_len')}, "
            f"{count}{'; ' + note if note else ''})")


def _reading_line(ax: Any, at: int) -> Any:
    """The dotted vertical line at the heatmap's reading index; returns its legend handle."""
    return ax.axvline(at, color="0.35", lw=0.9, ls=":", label=f"index {at} (read in the heatmap)")


def _draw_curves(ax: Any, spectrum: pd.DataFrame, title: str) -> None:
    import seaborn as sns

    curves = layer_curves(spectrum)
    layers = sorted(curves["layer"].unique())
    palette = sns.color_palette("viridis", n_colors=len(layers))
    for color, layer in zip(palette, layers):
        d = curves[curves["layer"] == layer]
        # figures number layers and heads from 1 (the tables store them 0-based)
        ax.plot(d["index"], d["mean"], color=color, lw=1.3, label=f"layer {layer + 1}")
        ax.fill_between(d["index"], (d["mean"] - d["std"]).clip(0, 1), (d["mean"] + d["std"]).clip(0, 1), color=color, alpha=0.12, lw=0)
    ax.set_xlabel("singular value index i (1 = largest)")
    ax.set_ylabel("normalised cumulative singular value")
    ax.set_ylim(0, 1.01)
    ax.set_xlim(1, int(curves["index"].max()))
    ax.set_title(title, fontsize=9)


def _legend(ax: Any, n_layers: int) -> None:
    ax.legend(fontsize=7, ncol=2 if n_layers > 6 else 1, loc="lower right", title="mean ± 1 sd (input, head)",
              title_fontsize=7, framealpha=0.9)


def _annotation_size(cell_width_in: float, cell_height_in: float) -> float | None:
    """Font size (pt) for the cell values, or None when they would be unreadable (< 6 pt)."""
    # "0.84" is about 2.3 em wide; leave a margin inside the cell
    size = min(cell_width_in * 72 / 2.8, cell_height_in * 72 / 1.8, 8.0)
    return size if size >= 6.0 else None


def _draw_heat(ax: Any, spectrum: pd.DataFrame, at: int, title: str, *, vmin: float | None = None,
               vmax: float | None = None, annot_size: float | None = None, cbar: bool = True) -> Any:
    import seaborn as sns

    table = heat_at(spectrum, at)
    # 1-based labels in figures, as in the paper (the tables stay 0-based); the axis labels say so
    table.index = [i + 1 for i in table.index]
    table.columns = [h + 1 for h in table.columns]
    sns.heatmap(table, ax=ax, cmap="rocket_r", vmin=vmin, vmax=vmax, annot=annot_size is not None, fmt=".2f",
                annot_kws={"fontsize": annot_size or 6}, cbar=cbar,
                cbar_kws={"label": f"cumulative value at index {at}"} if cbar else None)
    ax.set_xlabel("head (1 = first)")
    ax.set_ylabel("layer (1 = first)")
    ax.set_title(title, fontsize=9)
    return ax.collections[0]


def run_figures(spectrum: pd.DataFrame, meta: dict[str, Any], *, at: int | None = None) -> dict[str, Any]:
    """The two figures of one run, drawn from its tables: ``{"spectrum_layers": fig, "spectrum_heatmap": fig}``.

    ``spectrum`` is the run's spectrum table (one row per layer, head, index); ``meta`` its
    meta.json, whose recorded ``figures.at`` is used when ``at`` is None. Nothing is
    written; :func:`plot_run` saves them.
    """
    import matplotlib.pyplot as plt

    style()
    n = int(spectrum["index"].max())
    at = figure_choices(meta, n, at=at)["at"]
    label = run_label(meta)
    L, H = spectrum["layer"].nunique(), spectrum["head"].nunique()

    fig_curves, ax = plt.subplots(figsize=(5.2, 4))
    _draw_curves(ax, spectrum, label)
    _reading_line(ax, at)
    _legend(ax, L)

    cell_w, cell_h = 0.5, 0.36
    fig_heat, ax = plt.subplots(figsize=(max(4.5, cell_w * H + 2), max(3.2, cell_h * L + 1.2)))
    _draw_heat(ax, spectrum, at, label, annot_size=_annotation_size(cell_w, cell_h))
    return {"spectrum_layers": fig_curves, "spectrum_heatmap": fig_heat}


def plot_run(run: Path, out: Path | None = None, *, at: int | None = None,
             formats: Sequence[str] | None = None) -> list[Path]:
    """Per-layer curves and the layer × head heatmap of one results directory.

    ``at`` and ``formats`` default to what ``meta.json`` recorded (key ``figures``), else
    to :func:`attnspec.spectrum.default_at` and PNG + SVG. Drawing into the run's own
    ``figures/`` records the choices used, so a later ``attnspec plot spectrum RUN``
    redraws the same figures.
    """
    run = Path(run)
    meta = read_meta(run)
    spectrum = read_table(run, "spectrum")
    choices = figure_choices(meta, int(spectrum["index"].max()), at=at, formats=formats)
    out = Path(out) if out is not None else run / "figures"
    paths: list[Path] = []
    for name, fig in run_figures(spectrum, meta, at=choices["at"]).items():
        paths += save_figure(fig, out / name, choices["formats"])
    if out.resolve() == (run / "figures").resolve():
        record_figure_choices(run, choices)
    return paths


def plot_compare(runs: Sequence[Path], out: Path, *, at: int | None = None,
                 formats: Sequence[str] | None = None) -> list[Path]:
    """Figure 1 side by side: one column per run, curves on top, heatmaps below.

    Every panel names its run; the layer legend (with the reading-index line) is on the
    first panel only; the heatmaps share one colour scale and one colour bar. Cell values
    are printed only while they stay readable (at most two runs of at most 12 heads).
    """
    import matplotlib.pyplot as plt

    style()
    metas = [read_meta(r) for r in runs]
    tables = [read_table(r, "spectrum") for r in runs]
    n = min(int(t["index"].max()) for t in tables)
    choices = figure_choices(metas[0], n, at=at, formats=formats)
    at = choices["at"]
    heats = [heat_at(t, at) for t in tables]
    vmin = min(float(h.min().min()) for h in heats)
    vmax = max(float(h.max().max()) for h in heats)
    k = len(runs)
    L = max(t["layer"].nunique() for t in tables)
    H = max(t["head"].nunique() for t in tables)
    width = 4.6
    cell_w = (width - 0.8) / H
    cell_h = min(3.4 / L, cell_w)
    annot = _annotation_size(cell_w, cell_h) if k <= 2 else None
    fig, axes = plt.subplots(2, k, figsize=(width * k + 0.9, 4.0 + cell_h * L + 1.0), squeeze=False,
                             layout="constrained", height_ratios=[4.0, cell_h * L + 0.6])
    mappable = None
    for j, (meta, table) in enumerate(zip(metas, tables)):
        label = run_label(meta)
        _draw_curves(axes[0, j], table, label)
        _reading_line(axes[0, j], at)
        if j == 0:
            _legend(axes[0, j], table["layer"].nunique())
        mappable = _draw_heat(axes[1, j], table, at, f"{label}\nc at index {at} of {int(table['index'].max())}",
                              vmin=vmin, vmax=vmax, annot_size=annot, cbar=False)
    cb = fig.colorbar(mappable, ax=list(axes[1, :]), shrink=0.9, pad=0.01)
    cb.set_label(f"cumulative value at index {at}")
    return save_figure(fig, Path(out) / "spectrum_compare", choices["formats"])
