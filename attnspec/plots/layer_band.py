"""How a statistic of the real P is drawn beside its nulls, in every figure that sets them side
by side (Figure 1's curves, the scaling study's k90 against n and its small multiples): the
real layers as their mean line over a min–max band (a model's layers are all of its layers, so
their spread is a range, not an interval), each null as a line in its own colour and dash.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from attnspec.plots import OKABE_ITO

#: Line styles of the nulls, by name (:data:`attnspec.report.null_values.ORDER`); another null is dash-dot.
NULL_STYLES = {"entropy-matched": (0, (5, 1.5)), "uniform": (0, (1, 1)), "random-init": (0, (3, 1, 1, 1))}
#: The colour of the real P; the nulls take the palette from :data:`NULL_COLOUR_FROM` on.
REAL_COLOUR = OKABE_ITO[0]
NULL_COLOUR_FROM = 3


def draw_layers(
    ax: Any,
    x: Sequence[float],
    mean: Sequence[float],
    low: Sequence[float],
    high: Sequence[float],
    *,
    label: str,
    band_label: str,
    colour: str = REAL_COLOUR,
    marker: str | None = None,
    lw: float = 1.6,
) -> None:
    """The layers' mean as a line over their min–max band.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The panel drawn on.
    x : sequence of float
        The abscissae (singular-value index, or n).
    mean, low, high : sequence of float
        The mean over layers and the smallest and largest layer value at each x.
    label, band_label : str
        Legend entries of the line and of the band.
    colour : str
        The colour of both.
    marker : str, optional
        A marker at each x (for a few lengths, not for a curve over every index).
    lw : float
        The line's width.
    """
    ax.fill_between(x, low, high, color=colour, alpha=0.2, lw=0, label=band_label)
    ax.plot(x, mean, color=colour, lw=lw, marker=marker, ms=2.5 if marker else None, label=label)


def draw_null(ax: Any, name: str, x: Sequence[float], y: Sequence[float], *, lw: float = 1.2) -> None:
    """One null's line, in its own dash and colour: the same null looks the same in every panel and
    figure, whichever other nulls are drawn beside it.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The panel drawn on.
    name : str
        The null's name (its label from :data:`attnspec.spectra.nulls.LABELS`; one outside
        :data:`NULL_STYLES` is dash-dot, in the colour after theirs).
    x, y : sequence of float
        The line.
    lw : float
        The line's width.
    """
    from attnspec.spectra.nulls import LABELS

    ax.plot(
        x,
        y,
        color=null_colour(name),
        lw=lw,
        ls=NULL_STYLES.get(name, "-."),
        label=LABELS.get(name, name),
    )


def null_colour(name: str) -> str:
    """A null's colour, the same in every panel and figure (a null outside :data:`NULL_STYLES` takes
    the colour after theirs).

    Parameters
    ----------
    name : str
        The null's name.

    Returns
    -------
    str
    """
    position = list(NULL_STYLES).index(name) if name in NULL_STYLES else len(NULL_STYLES)
    return OKABE_ITO[NULL_COLOUR_FROM + position]
