"""Figures, made only from saved results. This package holds the shared style and saver;
one submodule per result kind (spectrum, jl, expressivity, osa)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # figures are files; never open a window (CI has no screen)

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

FORMATS: tuple[str, ...] = ("png", "svg")

#: Print sizes a figure is drawn at (inches): one column of a two-column paper, and the
#: full page width a multi-panel figure spans. Figures are drawn at the size they are
#: printed at, so the font sizes below are the sizes a reader sees.
COLUMN_IN = 3.3
PAGE_IN = 7.0
#: The only widths a figure is drawn at: the report places each at one of them, unscaled.
WIDTHS: tuple[float, ...] = (COLUMN_IN, PAGE_IN)
#: The smallest text (pt) a figure may carry at its print size.
MIN_FONT_PT = 7.0
#: Okabe & Ito's palette for categories (distinguishable with every common colour-vision
#: deficiency); sequences use viridis or cividis. Black is left for references and bounds.
OKABE_ITO: tuple[str, ...] = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
#: The colour of a reference line a figure marks (a theorem's k, a bound's edge): vermillion,
#: set apart from the category colours without a red–green pair.
MARK = "#D55E00"


#: What seaborn's ``set_theme(context="paper", style="whitegrid", font_scale=1.1)`` sets, less
#: its palette and colour map (replaced or unused here), written out so that drawing a figure
#: imports neither seaborn nor the SciPy it loads (a second or more of every plotting command).
#: tests/unit/test_plot_style.py checks it against seaborn's own.
SEABORN_PAPER_WHITEGRID: dict[str, object] = {
    "axes.axisbelow": True,
    "axes.edgecolor": ".8",
    "axes.grid": True,
    "axes.labelcolor": ".15",
    "axes.labelsize": 10.56,
    "axes.linewidth": 1.0,
    "axes.titlesize": 10.56,
    "font.sans-serif": ["Arial", "DejaVu Sans", "Liberation Sans", "Bitstream Vera Sans", "sans-serif"],
    "font.size": 10.56,
    "grid.color": ".8",
    "legend.fontsize": 9.68,
    "legend.title_fontsize": 10.56,
    "lines.linewidth": 1.2,
    "lines.markersize": 4.8,
    "lines.solid_capstyle": "round",
    "patch.edgecolor": "w",
    "patch.force_edgecolor": True,
    "patch.linewidth": 0.8,
    "text.color": ".15",
    "xtick.bottom": False,
    "xtick.color": ".15",
    "xtick.labelsize": 9.68,
    "xtick.major.size": 4.8,
    "xtick.major.width": 1.0,
    "xtick.minor.size": 3.2,
    "xtick.minor.width": 0.8,
    "ytick.color": ".15",
    "ytick.labelsize": 9.68,
    "ytick.left": False,
    "ytick.major.size": 4.8,
    "ytick.major.width": 1.0,
    "ytick.minor.size": 3.2,
    "ytick.minor.width": 0.8,
}


def style() -> None:
    """Set matplotlib's style for attnspec's figures: seaborn's paper whitegrid theme, print sizes,
    the Okabe–Ito categories, reproducible SVG."""
    plt.rcParams.update(SEABORN_PAPER_WHITEGRID)
    # SVG text as text, and no random hash salt: the same figure gives the same bytes.
    plt.rcParams["svg.fonttype"] = "none"
    plt.rcParams["svg.hashsalt"] = "attnspec"
    plt.rcParams["savefig.dpi"] = 150
    # sizes a reader sees at print size (seaborn's "paper" context is a little larger)
    plt.rcParams.update(
        {
            "font.size": 8,
            "axes.titlesize": 8,
            "axes.labelsize": 8,
            "xtick.labelsize": 7.5,
            "ytick.labelsize": 7.5,
            "legend.fontsize": 7,
            "legend.title_fontsize": 7,
            "figure.titlesize": 8.5,
        }
    )
    # category colours C0, C1, ... are Okabe–Ito's (seaborn's default pairs red with green)
    plt.rcParams["axes.prop_cycle"] = matplotlib.cycler(color=list(OKABE_ITO))


def paper_figure(nrows: int = 1, ncols: int = 1, *, width: float = COLUMN_IN, height: float | None = None, **kwargs):  # noqa: ANN201 - (Figure, axes array)
    """A figure drawn at its print size with constrained layout, so that a plain ``savefig``
    (no ``bbox_inches``) clips no title, label or colour bar.

    Parameters
    ----------
    nrows, ncols : int
        The grid of panels.
    width : float
        Figure width in inches: :data:`COLUMN_IN` for one panel, :data:`PAGE_IN` for a row
        of panels.
    height : float, optional
        Figure height in inches; default 0.75 of a panel's width per row.
    **kwargs
        Passed to ``matplotlib.pyplot.subplots`` (``sharex``, ``sharey``, ...).

    Returns
    -------
    fig : matplotlib.figure.Figure
    axes : numpy.ndarray of Axes, shape (nrows, ncols)
    """
    height = height if height is not None else 0.75 * width / ncols * nrows
    return plt.subplots(nrows, ncols, figsize=(width, height), squeeze=False, layout="constrained", **kwargs)


def legend_below(
    fig: plt.Figure, handles: Sequence, labels: Sequence[str], *, ncol: int | None = None, title: str | None = None
) -> None:
    """One legend for the whole figure, below its panels, where it covers no data (constrained
    layout makes room for it). Nothing is drawn when ``labels`` is empty.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        A figure with constrained layout.
    handles : sequence of Artist
        The legend's handles.
    labels : sequence of str
        Their labels.
    ncol : int, optional
        Columns; default: as many as fit the figure's width.
    title : str, optional
        The legend's title.
    """
    if not labels:
        return
    if ncol is None:
        longest = max(len(str(lab)) for lab in labels) * 0.56 * plt.rcParams["legend.fontsize"] / 72 + 0.5
        ncol = max(1, min(len(labels), int(fig.get_figwidth() // longest)))
    fig.legend(
        list(handles),
        list(labels),
        loc="outside lower center",
        ncol=ncol,
        frameon=False,
        title=title,
        columnspacing=1.0,
        handlelength=1.8,
    )


def fit_title(text: str, width_in: float, fontsize: float) -> str:
    """``text`` broken at its `` · `` separators (else at spaces) into lines no wider than
    ``width_in`` inches at ``fontsize`` pt, so that titles of neighbouring panels never overprint.

    Parameters
    ----------
    text : str
        The title.
    width_in : float
        The width available, in inches.
    fontsize : float
        The title's font size, in points.

    Returns
    -------
    str
        The title with newlines (at least 12 characters a line).
    """
    import textwrap

    chars = max(12, int(width_in * 72 / (0.56 * fontsize)))  # a DejaVu Sans character is ~0.56 em wide
    lines: list[str] = []
    for part in text.split(" · "):
        if lines and len(lines[-1]) + 3 + len(part) <= chars:
            lines[-1] += " · " + part
        else:
            lines += textwrap.wrap(part, chars) or [""]
    return "\n".join(lines)


def short_name(value: object) -> str:
    """A model or corpus as a reader names it: an alias or hub id as given, a local path by its
    last component (never an absolute path of the machine that made the figure).

    Parameters
    ----------
    value : object
        A model or corpus as recorded (alias, hub id or path).

    Returns
    -------
    str
        The alias or hub id unchanged; a path's last component, without a data file's
        suffix (``.raw``, ``.jsonl``, ``.csv``, ``.txt``, ``.json``).
    """
    import os

    s = str(value)
    if os.path.isabs(s) or s.startswith((".", "~")) or s.count("/") > 1 or os.sep in s and os.path.exists(s):
        name = Path(s).name
        return Path(name).stem if Path(name).suffix in {".raw", ".jsonl", ".csv", ".txt", ".json"} else name
    return s


def _plain_number(v: float, _pos: object = None) -> str:
    """1, 20, 0.05 as plain numbers; very large or small values as powers of ten."""
    if v <= 0:
        return ""
    if 1e-3 <= v < 1e5:
        return f"{v:g}"
    exp = np.floor(np.log10(v))
    mant = v / 10**exp
    return f"$10^{{{int(exp)}}}$" if abs(mant - 1) < 1e-9 else f"${mant:g}\\times10^{{{int(exp)}}}$"


def _minor_marks_drawn(axis_name: str) -> bool:
    """Whether the current style draws minor tick marks or a minor grid on this axis."""
    rc = plt.rcParams
    sides = ("bottom", "top") if axis_name == "x" else ("left", "right")
    marks = any(rc[f"{axis_name}tick.{side}"] and rc[f"{axis_name}tick.minor.{side}"] for side in sides)
    grid = rc["axes.grid"] and rc["axes.grid.which"] in ("minor", "both")
    return (marks and rc[f"{axis_name}tick.minor.size"] > 0) or grid


def readable_log_ticks(ax, which: str = "both") -> None:  # noqa: ANN001 - matplotlib Axes
    """Tick labels a reader can read on the log axes of ``ax`` (call after the limits are set).

    Labels are plain numbers (1, 10, 100, 0.01; powers of ten beyond 1e5 or below 1e-3),
    only on major ticks, so they never run into each other. An axis spanning two decades
    or less is labelled at 1, 2, 5 × 10^k, one spanning more at powers of ten only.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The axes; its axes not on a log scale are left alone.
    which : {"both", "x", "y"}
        The axes to label.
    """
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter, NullLocator

    axes = {"x": [ax.xaxis], "y": [ax.yaxis], "both": [ax.xaxis, ax.yaxis]}[which]
    for axis in axes:
        if axis.get_scale() != "log":
            continue
        lo, hi = sorted(axis.get_view_interval())
        decades = np.log10(hi / lo) if lo > 0 else 10
        subs = (1.0, 2.0, 5.0) if decades <= 2 else (1.0,)
        axis.set_major_locator(LogLocator(base=10, subs=subs, numticks=9))
        axis.set_major_formatter(FuncFormatter(_plain_number))
        axis.set_minor_formatter(NullFormatter())
        # Unlabelled minor ticks: the style draws no tick marks and a major-only grid, so they
        # show nothing, yet every one is measured at each layout (the bulk of the drawing
        # of a four-panel log figure). Keep them only where the style draws them.
        if not _minor_marks_drawn(axis.axis_name):
            axis.set_minor_locator(NullLocator())


def _frozen_layout(fig: plt.Figure) -> object:
    """Lay ``fig`` out once and return its tight bounding box (inches, padded as
    ``bbox_inches="tight"`` pads it), with the layout engine then switched off.

    Constrained layout and the tight box each measure every tick label of every axis, and
    ``savefig(bbox_inches="tight")`` redoes both for each format (a dry draw, then the real
    one): four layouts for a PNG and an SVG. Done once at the saving resolution, the files
    carry the same layout with one layout pass instead of four.
    """
    fig.set_dpi(plt.rcParams["savefig.dpi"] if plt.rcParams["savefig.dpi"] != "figure" else fig.dpi)
    fig.canvas.draw()
    bbox = fig.get_tightbbox(fig.canvas.get_renderer()).padded(plt.rcParams["savefig.pad_inches"])
    fig.set_layout_engine("none")
    return bbox


def save_figure(fig: plt.Figure, stem: Path, formats: Sequence[str] = FORMATS) -> list[Path]:
    """Save ``fig`` as ``stem.png`` and ``stem.svg`` (or ``formats``), close it, return the paths.

    Each file is written like a table (:func:`attnspec.storage.results.atomic_path`): to a
    temporary name in the same folder, then renamed, so an interrupt or a full disk never
    leaves a truncated figure, and a link planted at the figure's name or at its folder is
    replaced, not written through. Inside :func:`attnspec.storage.results.result_files` the
    renames wait for the rest of the result.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure; closed afterwards, also on error.
    stem : Path
        The files' path without suffix; its folder must exist.
    formats : sequence of str
        The file formats (default PNG and SVG).

    Returns
    -------
    list of Path
        The files written, one per format.
    """
    from attnspec.storage.results import atomic_path

    stem = Path(stem)
    paths = []
    try:
        bbox = _frozen_layout(fig)
        for fmt in formats:
            p = stem.with_suffix(f".{fmt}")
            with atomic_path(p) as tmp:
                # the temporary name ends in .tmp: the format must be given, not guessed from it
                fig.savefig(tmp, format=fmt, bbox_inches=bbox, metadata={"Date": None} if fmt == "svg" else None)
            paths.append(p)
    finally:
        plt.close(fig)
    return paths
