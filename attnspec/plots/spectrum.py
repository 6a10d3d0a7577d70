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

from attnspec.plots import save_figure, style
from attnspec.results import read_meta, read_table
from attnspec.spectrum import check_at, default_at  # the reading index lives beside the computation


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


def family_note(meta: dict[str, Any]) -> str:
    """``"decoder, causal P"`` / ``"encoder"`` from a run's meta (empty for runs made before it was recorded)."""
    family = meta.get("family")
    if family is None:
        return ""
    return f"{family}, causal P" if meta.get("causal") else str(family)


def _label(meta: dict[str, Any]) -> str:
    ident = meta.get("identity", {})
    note = family_note(meta)
    return (f"{ident.get('model', meta.get('model'))} · {ident.get('data')} (n={ident.get('seq_len')}, "
            f"{meta.get('inputs_done')} inputs{'; ' + note if note else ''})")


def _draw_curves(ax: Any, spectrum: pd.DataFrame, title: str) -> None:
    import seaborn as sns

    curves = layer_curves(spectrum)
    layers = sorted(curves["layer"].unique())
    palette = sns.color_palette("viridis", n_colors=len(layers))
    for color, layer in zip(palette, layers):
        d = curves[curves["layer"] == layer]
        ax.plot(d["index"], d["mean"], color=color, lw=1.3, label=f"layer {layer + 1}")
        ax.fill_between(d["index"], (d["mean"] - d["std"]).clip(0, 1), (d["mean"] + d["std"]).clip(0, 1), color=color, alpha=0.12, lw=0)
    ax.set_xlabel("singular value index")
    ax.set_ylabel("normalised cumulative singular value")
    ax.set_ylim(0, 1.01)
    ax.set_xlim(1, int(curves["index"].max()))
    ax.set_title(title, fontsize=9)


def _draw_heat(ax: Any, spectrum: pd.DataFrame, at: int, title: str, vmin: float | None = None, vmax: float | None = None) -> None:
    import seaborn as sns

    table = heat_at(spectrum, at)
    # 1-based labels in figures, as in the paper (the tables stay 0-based)
    table.index = [i + 1 for i in table.index]
    table.columns = [h + 1 for h in table.columns]
    sns.heatmap(table, ax=ax, cmap="rocket_r", vmin=vmin, vmax=vmax, annot=table.shape[1] <= 16, fmt=".2f",
                annot_kws={"fontsize": 5}, cbar_kws={"label": f"cumulative value at index {at}"})
    ax.set_xlabel("head")
    ax.set_ylabel("layer")
    ax.set_title(title, fontsize=9)


def run_figures(spectrum: pd.DataFrame, meta: dict[str, Any], *, at: int | None = None) -> dict[str, Any]:
    """The two figures of one run, drawn from its tables: ``{"spectrum_layers": fig, "spectrum_heatmap": fig}``.

    ``spectrum`` is the run's spectrum table (one row per layer, head, index); ``meta`` its
    meta.json. Nothing is written; :func:`plot_run` saves them.
    """
    import matplotlib.pyplot as plt

    style()
    n = int(spectrum["index"].max())
    at = check_at(default_at(n) if at is None else at, n)
    fig_curves, ax = plt.subplots(figsize=(5.2, 4))
    _draw_curves(ax, spectrum, _label(meta))
    ax.axvline(at, color="grey", lw=0.8, ls=":")
    ax.legend(fontsize=6, ncol=2, loc="lower right")

    L, H = spectrum["layer"].nunique(), spectrum["head"].nunique()
    fig_heat, ax = plt.subplots(figsize=(max(4.5, 0.45 * H + 2), max(3.2, 0.35 * L + 1.2)))
    _draw_heat(ax, spectrum, at, _label(meta))
    return {"spectrum_layers": fig_curves, "spectrum_heatmap": fig_heat}


def plot_run(run: Path, out: Path | None = None, *, at: int | None = None, formats: Sequence[str] = ("png", "svg")) -> list[Path]:
    """Per-layer curves and the layer × head heatmap of one results directory."""
    run = Path(run)
    figures = run_figures(read_table(run, "spectrum"), read_meta(run), at=at)
    out = Path(out) if out is not None else run / "figures"
    paths: list[Path] = []
    for name, fig in figures.items():
        paths += save_figure(fig, out / name, formats)
    return paths


def plot_compare(runs: Sequence[Path], out: Path, *, at: int | None = None, formats: Sequence[str] = ("png", "svg")) -> list[Path]:
    """Figure 1 side by side: one column per run, curves on top, heatmaps below (shared colour scale)."""
    import matplotlib.pyplot as plt

    style()
    metas = [read_meta(r) for r in runs]
    tables = [read_table(r, "spectrum") for r in runs]
    lengths = {int(t["index"].max()) for t in tables}
    n = min(lengths)
    at = check_at(default_at(n) if at is None else at, n)
    heats = [heat_at(t, at) for t in tables]
    vmin = min(float(h.min().min()) for h in heats)
    vmax = max(float(h.max().max()) for h in heats)
    k = len(runs)
    fig, axes = plt.subplots(2, k, figsize=(4.6 * k, 7.6), squeeze=False)
    for j, (meta, table) in enumerate(zip(metas, tables)):
        _draw_curves(axes[0, j], table, _label(meta))
        axes[0, j].axvline(at, color="grey", lw=0.8, ls=":")
        if j == k - 1:
            axes[0, j].legend(fontsize=6, ncol=2, loc="lower right")
        _draw_heat(axes[1, j], table, at, f"index {at} of {int(table['index'].max())}", vmin, vmax)
    fig.tight_layout()
    return save_figure(fig, Path(out) / "spectrum_compare", formats)
