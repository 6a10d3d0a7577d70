"""Figure 1 at one column: the real P's cumulative singular-value curve beside each null's.

``spectrum_nulls``: one panel per model, stacked: the share of Σσ in the first i singular values
against i, the mean over layers and heads of each real run (one line per corpus, with the min–max
band of its layer means), and the mean curve of each null baseline (entropy-matched random
softmax, uniform rows, the re-initialised model), with the reading index marked. Drawn from
saved spectrum tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from attnspec.plots import COLUMN_IN, OKABE_ITO, legend_below, paper_figure, save_figure, style
from attnspec.plots.layer_band import draw_layers, draw_null


def _mean_curve(spectrum: pd.DataFrame) -> pd.Series:
    """index → mean over layers and heads of the per-(layer, head) mean curve."""
    return spectrum.groupby("index")["mean"].mean().sort_index()


#: One panel: its title (model · n · documents), each real run's spectrum table by corpus, each
#: null's spectrum table by name, and the reading index.
NullPanel = tuple[str, dict[str, pd.DataFrame], dict[str, pd.DataFrame], int]


def plot_null_panels(panels: Sequence[NullPanel], out: Path, *, formats: Sequence[str] = ("png", "svg")) -> list[Path]:
    """Draw ``spectrum_nulls`` at one column's width, one panel per model stacked, one legend below.

    Parameters
    ----------
    panels : sequence of NullPanel
        Per model: (title, real runs by corpus, nulls by name, reading index).
    out : Path
        The folder the figure is written to; created when missing.
    formats : sequence of str
        The file formats, one file each.

    Returns
    -------
    list of Path
        The files written, ``out/spectrum_nulls.*``.

    Raises
    ------
    ValueError
        No panel, or a panel without a real run.
    """
    if not panels or any(not real for _, real, _, _ in panels):
        raise ValueError(f"plot_null_panels needs at least one panel, each with a real run; got {len(panels)} panels")
    style()
    Path(out).mkdir(parents=True, exist_ok=True)
    fig, axes = paper_figure(len(panels), 1, width=COLUMN_IN, height=2.3 * len(panels) + 0.9)
    for ax, (title, real, nulls, at) in zip(axes[:, 0], panels):
        _draw_panel(ax, real, nulls, at=at, title=title)
    for ax in axes[:-1, 0]:  # the index axis is named once, under the last panel
        ax.set_xlabel("")
    handles: dict[str, object] = {}  # one legend entry per label, over every panel
    for ax in axes[:, 0]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    legend_below(fig, list(handles.values()), list(handles), ncol=2)
    return save_figure(fig, Path(out) / "spectrum_nulls", formats)


def _draw_panel(
    ax: object, real: dict[str, pd.DataFrame], nulls: dict[str, pd.DataFrame], *, at: int, title: str
) -> None:
    """One model's panel: its runs' mean curves (the first over its layers' band), each null's curve,
    the reading index."""
    from attnspec.plots import fit_title

    for j, (label, table) in enumerate(real.items()):
        curve = _mean_curve(table)
        if j == 0:  # the first run's layers as a band under its mean
            per_layer = table.groupby(["layer", "index"])["mean"].mean().unstack("layer")  # (n, L)
            draw_layers(
                ax,
                curve.index,
                curve.to_numpy(),
                per_layer.min(axis=1),
                per_layer.max(axis=1),
                label=f"real, {label}: mean",
                band_label=f"real, {label}: layers min–max",
            )
        else:
            ax.plot(curve.index, curve.to_numpy(), color=OKABE_ITO[j], lw=1.6, label=f"real, {label}: mean")
    for name, table in nulls.items():
        curve = _mean_curve(table)
        draw_null(ax, name, curve.index, curve.to_numpy())
    ax.axvline(at, color="0.3", lw=0.8, ls=":", label="reading index")
    ax.set_xlim(1, max(int(t["index"].max()) for t in real.values()))
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("singular value index i (1 = largest)")
    ax.set_ylabel("share of Σσ in the first i")
    if title:
        ax.set_title(fit_title(title, COLUMN_IN, 8), fontsize=8)
