"""Shared draws: one grid point whose draws serve many sub-points, stopped by the one rule.

Some checks draw one random object per trial and read many statements off it: one Gaussian R
serves every k (its first k rows), every ε (only the tolerance depends on ε) and every
reading. Such a point is a list of :class:`SubPoint`, each a failure count that becomes one
table row, and a ``look(size, first, active)`` function that draws ``size`` trials once and
returns the failures of every sub-point it read. :func:`draw_shared` runs the looks:

* the sub-points are grouped in **streams** (e.g. one per k, or one for the whole point); a
  stream keeps drawing while one of its sub-points is unsettled, and every sub-point of a
  stream counts the same trials;
* after each look but the last, with ``sequential``, a stream stops once each of its
  sub-points is ``fixed`` (its verdict does not depend on the counts) or may stop by
  :func:`attnspec.theorem.sequential.can_stop` against its ``claimed`` probability, with the
  looks corrected for as :mod:`attnspec.theorem.sequential` says; the point stops when every
  stream has stopped;
* a sub-point with its own ``trials`` reads part of the draws only (e.g. the first look): it
  never holds its stream back, and its row counts those trials.

:meth:`Drawn.rows` gives one row per sub-point: its ``head`` columns, the Monte Carlo columns
of :func:`attnspec.theorem.counts.mc_columns`, then its ``tail`` columns; :func:`sample_frame`
keeps the first values of a look for figures.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from attnspec.theorem import sequential as SQ
from attnspec.theorem.counts import mc_columns

#: ``look(size, first, active) -> {sub-point key: failures}``: draw ``size`` trials once for the
#: streams in ``active`` (``first``: the point's first look) and count each sub-point's failures.
Look = Callable[[int, bool, frozenset], Mapping[Hashable, int]]


@dataclass(frozen=True)
class SubPoint:
    """One failure count read off a point's shared draws, and its table row.

    Parameters
    ----------
    key : hashable
        Its name in the counts ``look`` returns.
    head : mapping
        The row's columns before the Monte Carlo columns (claim, reading, parameters, bound, ...).
    tail : mapping
        The row's columns after them (seeds, tolerances, ...).
    claimed : float
        The claimed failure probability it is stopped against.
    fixed : bool
        Its verdict does not depend on its counts (it never holds its stream back).
    stream : hashable
        The draws it counts: the sub-points of one stream stop together.
    trials : int, optional
        The trials it reads when it reads part of the draws only (it then never holds its stream back).
    """

    key: Hashable
    head: Mapping[str, Any]
    tail: Mapping[str, Any] = field(default_factory=dict)
    claimed: float = math.nan
    fixed: bool = True
    stream: Hashable = None
    trials: int | None = None


@dataclass
class Drawn:
    """The counts of a point's shared draws.

    Parameters
    ----------
    failures : dict
        Failures per sub-point key.
    counted : dict
        Trials drawn per stream.
    drawn : int
        Trials drawn by the point (those of its longest stream).
    """

    failures: dict[Hashable, int]
    counted: dict[Hashable, int]
    drawn: int

    def trials(self, sub: SubPoint) -> int:
        """The trials ``sub`` counts.

        Parameters
        ----------
        sub : SubPoint

        Returns
        -------
        int
        """
        return self.counted[sub.stream] if sub.trials is None else int(sub.trials)

    def rows(self, subs: Sequence[SubPoint]) -> list[dict[str, Any]]:
        """One table row per sub-point, in order.

        Parameters
        ----------
        subs : sequence of SubPoint

        Returns
        -------
        list of dict
            ``head``, :func:`attnspec.theorem.counts.mc_columns` of its failures and trials, ``tail``.
        """
        return [{**s.head, **mc_columns(self.failures[s.key], self.trials(s)), **s.tail} for s in subs]


def draw_shared(
    look: Look,
    subs: Sequence[SubPoint],
    *,
    trials: int,
    size: int,
    sequential: bool = True,
    progress: Any = None,  # noqa: ANN401 - an attnspec.runtime.progress.Progress
) -> Drawn:
    """Draw a point's trials in looks of ``size`` up to ``trials``, stopping each stream once settled.

    Parameters
    ----------
    look : callable
        ``look(size, first, active) -> {key: failures}`` (:data:`Look`).
    subs : sequence of SubPoint
        The point's sub-points; their streams, in order of first appearance, are the point's.
    trials : int
        The most trials a stream draws.
    size : int
        Trials per look (the last look draws what remains).
    sequential : bool
        Stop a stream once its sub-points are settled; False: every stream draws ``trials``.
    progress : attnspec.runtime.progress.Progress, optional
        Advanced by each look's trials times the share of streams drawn; its total lowered
        when the point stops early.

    Returns
    -------
    Drawn
    """
    streams = list(dict.fromkeys(s.stream for s in subs))
    holding = [s for s in subs if s.trials is None and not s.fixed]  # the sub-points a stream waits for
    failures = {s.key: 0 for s in subs}
    counted = {st: 0 for st in streams}
    active, done, n_looks = list(streams), 0, SQ.looks(trials, size)
    while done < trials and active:
        c = min(size, trials - done)
        for key, f in look(c, done == 0, frozenset(active)).items():
            failures[key] += int(f)
        for st in active:
            counted[st] += c
        done += c
        if progress is not None:
            progress.advance(c if len(active) == len(streams) else c * len(active) / len(streams))
        if not sequential or done >= trials:
            continue
        waiting = {
            s.stream
            for s in holding
            if s.stream in active
            and not SQ.can_stop(failures[s.key], counted[s.stream], s.claimed, n_looks=n_looks, trials_max=trials)
        }
        active = [st for st in active if st in waiting]
    if progress is not None and done < trials:
        progress.advance(0, total=progress.total - (trials - done))
    return Drawn(failures, counted, done)


def sample_frame(values: Any, size: int, columns: Mapping[str, Any]) -> Any:  # noqa: ANN401 - ndarray in, DataFrame out
    """The first ``size`` of a sub-point's drawn values, kept for figures, as a table.

    Parameters
    ----------
    values : numpy.ndarray of shape (T,)
        The values of one look (e.g. relative errors).
    size : int
        How many are kept.
    columns : mapping
        The columns naming the sub-point (claim, reading, parameters).

    Returns
    -------
    pandas.DataFrame
        ``columns``, then ``sample`` (0, 1, ...) and ``value``, one row per value kept.
    """
    import numpy as np
    import pandas as pd

    v = values[:size]
    return pd.DataFrame({**columns, "sample": np.arange(v.size), "value": v})
