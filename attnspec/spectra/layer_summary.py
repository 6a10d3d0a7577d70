"""One spectrum run per layer, heads averaged: the table that the Python API returns
(:meth:`attnspec.api.SpectrumResult.per_layer`) and that ``attnspec spectrum`` prints.

Per layer: the mean of c_at over heads, the median over heads of the index where a head's
mean curve reaches 0.9 (and the same statistic of every null baseline the run holds), and
the mean effective and stable ranks. ``at`` is where the run's figures read the curve.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from attnspec.errors import ResultsError
from attnspec.spectra.reading import check_at, short_input_note

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


def reach_column(metrics: pd.DataFrame) -> str:
    """The metrics table's "index where the head's mean curve reaches the level" column.

    Parameters
    ----------
    metrics : pandas.DataFrame
        A run's metrics table, one row per (layer, head).

    Returns
    -------
    str
        The name of its first ``index_at_<level>_of_mean_curve`` column
        (``index_at_0.9_of_mean_curve``).

    Raises
    ------
    ResultsError
        The table has no such column.
    """
    found = [c for c in metrics.columns if c.endswith("_of_mean_curve")]
    if not found:
        raise ResultsError("metrics table has no index_at_<level>_of_mean_curve column")
    return found[0]


def reading_index(meta: dict[str, Any], n: int, at: int | None, name: str = "at") -> int:
    """The index c is read at: ``at`` when given (checked against n under ``name``), else the
    one the run's figures recorded, else the default (128 when n = 512, else n / 4).

    Parameters
    ----------
    meta : dict
        The run's meta.json (its ``figures`` record, when the figures were drawn).
    n : int
        The run's length: the curves' last index.
    at : int, optional
        The index asked for, an integer in 1..n; None for the recorded or default one.
    name : str
        The option or parameter the error message names (``"at"``, ``"--at"``).

    Returns
    -------
    int
        The index, in 1..n.

    Raises
    ------
    InputError
        ``at`` (or the recorded index) is not an integer in 1..n.
    """
    from attnspec.spectra.figure_record import figure_choices

    if at is not None:
        at = check_at(at, n, name)
    return int(figure_choices(meta, n, at=at)["at"])


def per_layer(
    curves: pd.DataFrame,
    metrics: pd.DataFrame,
    meta: dict[str, Any],
    at: int,
    *,
    baseline_metrics: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Per layer, heads averaged: one row per layer (0-based ``layer``).

    Parameters
    ----------
    curves : pandas.DataFrame
        The run's spectrum table, one row per (layer, head, index).
    metrics : pandas.DataFrame
        The run's metrics table, one row per (layer, head).
    meta : dict
        The run's meta.json (its recorded input lengths decide whether c_at is defined).
    at : int
        Index in 1..n where c is read (:func:`reading_index`).
    baseline_metrics : pandas.DataFrame, optional
        The nulls' metrics table (a ``baseline`` column naming each null), in the order computed.

    Returns
    -------
    pandas.DataFrame
        ``layer``, ``median_<reach>``, ``median_<reach>_<null>_null`` per null,
        ``effective_rank_mean``, ``stable_rank_mean``, ``mean_c_<at>``. ``mean_c_<at>`` is NaN
        when an input is shorter than ``at`` tokens: its curve is 1 there by construction
        (:func:`attnspec.spectra.reading.short_input_note` says why).
    """
    reach = reach_column(metrics)
    # (layer,): mean over heads of the mean curve's value at index `at`
    heat = curves[curves["index"] == at].groupby("layer")["mean"].mean().rename(f"mean_c_{at}")
    if short_input_note(meta, at) is not None:
        heat[:] = float("nan")
    g = metrics.groupby("layer")
    out = g[["effective_rank_mean", "stable_rank_mean"]].mean()
    columns = {"median_" + reach: g[reach].median()}
    if baseline_metrics is not None and len(baseline_metrics):  # the same statistic of each null, beside the real one
        for name, m in baseline_metrics.groupby("baseline", sort=False):
            columns[f"median_{reach}_{name}_null"] = m.groupby("layer")[reach].median()
    for i, (col, values) in enumerate(columns.items()):
        out.insert(i, col, values)
    return out.join(heat, how="left").reset_index()
