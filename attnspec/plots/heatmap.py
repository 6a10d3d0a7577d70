"""A labelled heatmap of a table drawn with matplotlib alone: seaborn's ``heatmap`` as attnspec's
figures use it (cells of a layer × head table, optional values in the cells, a colour bar),
so that drawing a spectrum imports neither seaborn nor the SciPy it loads.

What it keeps of seaborn's: the table's first row at the top; a tick at every cell's centre,
thinned where the labels would not fit; labels turned when they overlap; no spines; the
colour bar without an outline; cell values in dark grey on light cells and white on dark
ones (relative luminance above or below 0.408); missing values left blank.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd


def relative_luminance(rgba: np.ndarray) -> np.ndarray:
    """WCAG relative luminance of colours.

    Parameters
    ----------
    rgba : numpy.ndarray, shape (m, 3) or (m, 4)
        Colours with channels in [0, 1].

    Returns
    -------
    numpy.ndarray, shape (m,)
    """
    rgb = np.asarray(rgba, dtype=float)[:, :3]
    linear = np.where(rgb <= 0.03928, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    return linear @ np.array([0.2126, 0.7152, 0.0722])


def _fitting_ticks(ax: Any, count: int, axis: int) -> np.ndarray:
    """Cell centres to label along ``axis`` (0: x, 1: y): every one, or every k-th when a label
    per cell would be closer than one font size."""
    box = ax.get_window_extent().transformed(ax.figure.dpi_scale_trans.inverted())
    size_in = (box.width, box.height)[axis]
    (tick,) = (ax.xaxis, ax.yaxis)[axis].set_ticks([0])
    fits = int(size_in // (tick.label1.get_size() / 72))
    if fits < 1:
        return np.array([], dtype=int)
    return np.arange(0, count, count // fits + 1)


def _overlap(labels: list[Any]) -> bool:
    """Whether any two of the drawn tick labels overlap."""
    boxes = [t.get_window_extent() for t in labels]
    return bool(boxes) and max(b.count_overlaps(boxes) for b in boxes) > 1


def heatmap(
    ax: Any,
    table: pd.DataFrame,
    *,
    cmap: str = "viridis",
    vmin: float | None = None,
    vmax: float | None = None,
    annot_size: float | None = None,
    fmt: str = ".2f",
    cbar_label: str | None = None,
) -> Any:
    """Draw ``table`` as a heatmap on ``ax``, rows top to bottom, labelled by its index and columns.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The panel to draw on.
    table : pandas.DataFrame, shape (rows, columns)
        The values; its index and columns label the cells.
    cmap : str
        A matplotlib colour map's name.
    vmin, vmax : float, optional
        The colour scale (default: the table's range).
    annot_size : float, optional
        Font size (pt) of the values written in the cells; None writes none.
    fmt : str
        Format of those values.
    cbar_label : str, optional
        Draw a colour bar with this label; None draws none.

    Returns
    -------
    matplotlib.collections.QuadMesh
        The cells.
    """
    values = np.ma.masked_invalid(table.to_numpy(dtype=float))  # (rows, columns), NaN left blank
    rows, cols = values.shape
    for side in ("top", "right", "left", "bottom"):
        ax.spines[side].set_visible(False)
    mesh = ax.pcolormesh(values, cmap=cmap, vmin=vmin, vmax=vmax)
    ax.set(xlim=(0, cols), ylim=(0, rows))
    ax.invert_yaxis()  # the first row on top, as the table reads
    if cbar_label is not None:
        bar = ax.figure.colorbar(mesh, ax=ax, label=cbar_label)
        bar.outline.set_linewidth(0)
    xs, ys = _fitting_ticks(ax, cols, 0), _fitting_ticks(ax, rows, 1)
    ax.set(xticks=xs + 0.5, yticks=ys + 0.5)
    xtl = ax.set_xticklabels([str(table.columns[i]) for i in xs])
    ytl = ax.set_yticklabels([str(table.index[i]) for i in ys], rotation="vertical", va="center")
    ax.figure.canvas.draw()  # the labels' extents, to see whether they overlap
    if _overlap(xtl):
        for t in xtl:
            t.set_rotation("vertical")
    if _overlap(ytl):
        for t in ytl:
            t.set_rotation("horizontal")
    if annot_size is not None:
        mesh.update_scalarmappable()
        light = relative_luminance(mesh.get_facecolors()) > 0.408  # (rows * columns,)
        for (r, c), on_light in zip(np.ndindex(rows, cols), light):
            if values.mask is np.ma.nomask or not values.mask[r, c]:
                ax.text(
                    c + 0.5,
                    r + 0.5,
                    format(values[r, c], fmt),
                    color=".15" if on_light else "w",
                    ha="center",
                    va="center",
                    fontsize=annot_size,
                )
    return mesh
