"""Running a check of measured claims: claim groups in order, one share beside the others.

A paper whose claims are deterministic (identities to round-off, bounds decided at the tightest
instance, exact constructions) has no grid of random trials to stop early: each claim group
builds its own instances from the run's seed and decides its rows
(:func:`attnspec.theorem.tightest.tightest_rows`). :func:`run_groups` runs such groups:

* each :class:`Group` is ``measure(config, tables) -> (rows, tables)``, where ``tables`` holds the
  tables of the groups before it that ran in the same process (a group that reads another's
  table is declared after it, in the same share);
* with :func:`attnspec.theorem.fork.can_fork`, the groups marked ``beside`` are computed in a
  second process while this one computes the others (:func:`attnspec.theorem.fork.fork_beside`);
  every group draws from its own seeds, so the rows and tables are those of the serial run;
* the rows and tables are returned in the groups' declared order, whichever process made them;
* each group with a ``message`` announces itself in a progress line with its step and an
  estimate of the time left (the elapsed time scaled by the groups' ``weight``: their measured
  shares of the CPU time); the groups computed beside are announced once, by ``beside_note``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Tables = dict[str, Any]  # table name -> pandas DataFrame
Measure = Callable[[Any, Mapping[str, Any]], tuple[list[Any], Tables]]


@dataclass(frozen=True)
class Group:
    """One claim group of a measured check.

    Parameters
    ----------
    measure : callable
        ``measure(config, tables) -> (rows, tables)``: its verdict rows and its tables.
    message : callable or str, optional
        Its progress line (``message(config)`` or a string); None: it runs silently, its time
        counted in the group announced before it.
    weight : float
        Its share of the check's CPU time, for the estimate of the time left.
    beside : bool
        Computed in the second process when one may fork.
    """

    measure: Measure
    message: Callable[[Any], str] | str | None = None
    weight: float = 0.0
    beside: bool = False

    def line(self, config: Any) -> str | None:
        """Its progress line at ``config``, or None.

        Parameters
        ----------
        config : object
            The run's validated options.

        Returns
        -------
        str or None
        """
        return self.message(config) if callable(self.message) else self.message


def run_groups(
    groups: Sequence[Group],
    config: Any,
    *,
    progress: Callable[[str], None] | None = None,
    beside_note: str | None = None,
) -> tuple[list[Any], Tables]:
    """Run ``groups`` at ``config``: their rows and tables, in the declared order.

    Parameters
    ----------
    groups : sequence of Group
    config : object
        The run's validated options, handed to every group.
    progress : callable, optional
        Receives one line per announced group: ``"<message> — step i/n, about X s left"``.
    beside_note : str, optional
        The first progress line when the ``beside`` groups run in a second process.

    Returns
    -------
    rows : list
        Every group's rows, group after group.
    tables : dict
        Every group's tables, group after group.
    """
    from attnspec.theorem.fork import can_fork, fork_beside

    forked = can_fork() and any(g.beside for g in groups) and not all(g.beside for g in groups)
    mine = [i for i, g in enumerate(groups) if not (forked and g.beside)]
    theirs = [i for i, g in enumerate(groups) if forked and g.beside]
    steps = [(beside_note, 0.0)] if forked and beside_note else []
    steps += [(line, groups[i].weight) for i in mine if (line := groups[i].line(config)) is not None]
    say = _Progress(progress, steps)
    if not forked:
        done = _measure(groups, mine, config, say)
    else:

        def here() -> dict[int, tuple[list[Any], Tables]]:
            if beside_note:
                say(beside_note)
            return _measure(groups, mine, config, say)

        done, beside = fork_beside(lambda: _measure(groups, theirs, config, None), here)
        done.update(beside)
    rows, tables = [], {}
    for i in range(len(groups)):
        rows += done[i][0]
        tables.update(done[i][1])
    return rows, tables


def _measure(
    groups: Sequence[Group], which: list[int], config: Any, say: _Progress | None
) -> dict[int, tuple[list[Any], Tables]]:
    """Groups ``which``, in order, each seeing the tables of those before it."""
    out: dict[int, tuple[list[Any], Tables]] = {}
    tables: Tables = {}
    for i in which:
        line = groups[i].line(config)
        if say is not None and line is not None:
            say(line)
        rows, made = groups[i].measure(config, tables)
        tables.update(made)
        out[i] = (list(rows), dict(made))
    return out


class _Progress:
    """``"<line> — step i/n, about X s left"``: the elapsed time scaled by the steps' weights."""

    def __init__(self, sink: Callable[[str], None] | None, steps: list[tuple[str | None, float]]) -> None:
        self.sink, self.weights = sink, [w for _, w in steps]
        self.seen, self.start = 0, time.perf_counter()

    def __call__(self, line: str) -> None:
        if self.sink is None:
            return
        done = sum(self.weights[: self.seen])
        self.seen += 1
        elapsed, total = time.perf_counter() - self.start, sum(self.weights)
        eta = f"about {elapsed / done * (total - done):.0f} s left" if done > 0 else "estimating the time left"
        self.sink(f"{line} — step {self.seen}/{len(self.weights)}, {eta}")
