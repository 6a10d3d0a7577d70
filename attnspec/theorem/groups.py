"""Running a check in claim groups: in order, a share beside the others, kept on an interrupt.

Some checks are not a grid of like points but a few claim groups of unequal cost, each with
its own instances, tables and verdict rows (``jl-check``: Lemma 1, Theorem 1, Theorem 2, ...;
``osa-check``: one group per theorem). :func:`run_groups` runs them:

* each :class:`Group` is ``measure(config, tables) -> (rows, tables)``, where ``tables`` holds
  the tables of the groups before it that this process computed or kept (a group that reads
  another's table is declared after it, in the same share);
* with :func:`attnspec.theorem.fork.can_fork`, a share of the groups is computed in a second
  process while this one computes the others: the ``beside`` groups, or those ``split`` picks
  (e.g. :func:`attnspec.theorem.fork.split_by_cost`); every group draws its seeds from the
  run's seed and its own labels, and every process computes with one thread
  (:func:`attnspec.theorem.fork.one_thread`), so the rows and tables are those of the serial
  run to the last bit;
* the rows come back in the declared order, and so do the tables: a table several groups make
  is theirs one under the other;
* each group with a ``message`` announces itself in a progress line with its step and an
  estimate of the time left (the elapsed time scaled by the groups' ``weight``);
* with ``keep`` (a :class:`Keep`), Ctrl-C or SIGTERM keeps the finished groups as the tables
  ``<prefix>_partial_<group>_<table>`` of a partial result, and ``keep.previous`` (the tables
  of such a result: ``--resume``) gives the groups it holds back equal, computing only the
  others.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd

Tables = dict[str, Any]  # table name -> pandas DataFrame
Done = tuple[list[Any], Tables]  # a group's verdict rows and tables
Compute = Callable[[Any, Mapping[str, Any]], Done]  # (config, tables so far) -> Done


@dataclass(frozen=True)
class Group:
    """One claim group of a check.

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
        Computed in the second process when one may fork (and no ``split`` is given).
    name : str
        Its name, for ``split``, ``needs_torch`` and the tables of a partial result.
    """

    measure: Compute
    message: Callable[[Any], str] | str | None = None
    weight: float = 0.0
    beside: bool = False
    name: str = ""

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


@dataclass(frozen=True)
class Keep:
    """How an interrupted run keeps its finished groups, and a resumed one reads them back.

    Parameters
    ----------
    command : str
        The command (the partial result's).
    prefix : str
        The stem prefix of the partial result's tables.
    parts : tuple of str
        The tables a group may make.
    note : str
        What a partial result holds and how to finish it (its meta's ``note``).
    meta : mapping
        The rest of a partial result's meta (identity, parameters, seed).
    previous : mapping of str to DataFrame, optional
        The tables of an interrupted run of the same options (``--resume``).
    """

    command: str
    prefix: str
    parts: tuple[str, ...]
    note: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)
    previous: Mapping[str, pd.DataFrame] | None = None

    def stem(self, group: str, part: str) -> str:
        """The stem of one table (or ``rows``: its verdict rows) of a finished group.

        Parameters
        ----------
        group : str
        part : str

        Returns
        -------
        str
            ``<prefix>_partial_<group>_<part>``.
        """
        return f"{self.prefix}_partial_{group}_{part}"

    def tables(self, group: str, done: Done) -> Tables:
        """A finished group as the tables of a partial result (read back by :meth:`kept`).

        Parameters
        ----------
        group : str
        done : tuple
            Its rows and tables.

        Returns
        -------
        dict of str to pandas.DataFrame
        """
        from attnspec.storage.results import _json_default

        rows, made = done
        out = {self.stem(group, p): made.get(p, pd.DataFrame()) for p in self.parts}
        # numpy scalars as Python numbers, non-finite floats as JSON's NaN/Infinity: read back equal
        text = [json.dumps(asdict(r), default=_json_default) for r in rows]
        out[self.stem(group, "rows")] = pd.DataFrame({"row": text}, dtype=object)
        return out

    def kept(self, names: Sequence[str]) -> dict[str, Done]:
        """The groups of ``names`` that :attr:`previous` holds (those with a verdict-row table).

        Parameters
        ----------
        names : sequence of str

        Returns
        -------
        dict of str to tuple
            Their rows and tables.
        """
        from attnspec.verdicts.classify import VerdictRow

        out: dict[str, Done] = {}
        for name in names:
            rows = (self.previous or {}).get(self.stem(name, "rows"))
            if rows is not None:
                made = {p: self.previous.get(self.stem(name, p), pd.DataFrame()) for p in self.parts}  # type: ignore[union-attr]
                out[name] = ([VerdictRow(**json.loads(t)) for t in rows.get("row", [])], made)
        return out


def concat(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """The non-empty frames one under the other, with a fresh index (an empty frame when none).

    Parameters
    ----------
    frames : sequence of pandas.DataFrame

    Returns
    -------
    pandas.DataFrame
    """
    frames = [f for f in frames if len(f)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def run_groups(
    groups: Sequence[Group],
    config: Any,
    *,
    progress: Callable[[str], None] | None = None,
    beside_note: str | None = None,
    split: Callable[[Sequence[str]], Sequence[str]] | None = None,
    needs_torch: Callable[[Sequence[str]], bool] = lambda _names: False,
    keep: Keep | None = None,
    finish: Callable[[list[Any], Tables], Any] | None = None,
) -> Any:  # noqa: ANN401 - finish's result
    """Run ``groups`` at ``config``: their rows and tables in the declared order, or ``finish`` of them.

    Parameters
    ----------
    groups : sequence of Group
    config : object
        The run's validated options, handed to every group.
    progress : callable, optional
        Receives one line per announced group: ``"<message> — step i/n, about X s left"``.
    beside_note : str, optional
        The first progress line when groups run in a second process.
    split : callable, optional
        ``split(pending names) -> names`` for the second process; default: the ``beside``
        groups, when :func:`attnspec.theorem.fork.can_fork` and not every group is beside.
    needs_torch : callable
        ``needs_torch(names)``: whether computing those groups imports torch (its pool is then
        set to one thread first; a process that never needs it never loads it).
    keep : Keep, optional
        Keep finished groups on an interrupt, and read back those of ``keep.previous``.
    finish : callable, optional
        ``finish(rows, tables)`` once every group is done, still under ``keep`` (an interrupt
        while finishing keeps every group).

    Returns
    -------
    tuple or object
        ``(rows, tables)``, or what ``finish`` returns.

    Raises
    ------
    attnspec.runtime.signals.InterruptedRun
        With ``keep``, on Ctrl-C or SIGTERM, with the finished groups as a partial result.
    """
    from attnspec.runtime.signals import InterruptedRun, deferred_interrupts
    from attnspec.theorem.fork import can_fork, one_thread

    names = [g.name or str(i) for i, g in enumerate(groups)]
    done: dict[str, Done] = keep.kept(names) if keep is not None else {}
    if done and progress is not None:
        progress(f"kept from before: claim groups {', '.join(n for n in names if n in done)}")
    pending = [n for n in names if n not in done]
    if split is not None:
        theirs = list(split(pending))
    elif can_fork() and any(g.beside for g in groups) and not all(g.beside for g in groups):
        theirs = [n for n, g in zip(names, groups, strict=True) if g.beside and n in pending]
    else:
        theirs = []
    mine = [n for n in pending if n not in theirs]
    by_name = dict(zip(names, groups, strict=True))
    steps = [(beside_note, 0.0)] if theirs and beside_note else []
    steps += [(line, by_name[n].weight) for n in mine if (line := by_name[n].line(config)) is not None]
    say = _Progress(progress, steps)
    seen: Tables = _merged([done[n] for n in names if n in done])[1]  # each process adds its own

    def compute(name: str, announce: bool) -> Done:
        line = by_name[name].line(config)
        if announce and line is not None:
            say(line)
        rows, made = by_name[name].measure(config, seen)
        seen.update(made)
        return list(rows), dict(made)

    side = _fork_side([lambda n=n: compute(n, False) for n in theirs], needs_torch(theirs))
    try:
        with one_thread(import_torch=needs_torch(mine)):
            if side is not None and beside_note:
                say(beside_note)
            for name in mine:
                done[name] = compute(name, True)
            for name in theirs:  # in order: an error there is raised here, the groups before it kept
                done[name] = side.next()
            rows, tables = _merged([done[n] for n in names])
            return finish(rows, tables) if finish is not None else (rows, tables)
    except KeyboardInterrupt as e:  # also while finishing: the groups are kept, --resume only finishes
        if side is not None:
            side.close()
        if keep is None:
            raise
        with deferred_interrupts():  # a second Ctrl-C must not lose the finished groups
            partial = _partial(keep, names, done)
        raise InterruptedRun(partial, len(done), len(names), "claim groups") from e
    finally:
        if side is not None:
            side.close()


def _merged(parts: Sequence[Done]) -> Done:
    """Rows one after the other; a table made by several groups, theirs one under the other."""
    rows: list[Any] = []
    tables: Tables = {}
    for got, made in parts:
        rows += got
        for name, table in made.items():
            tables[name] = concat([tables[name], table]) if name in tables else table
    return rows, tables


def _partial(keep: Keep, names: Sequence[str], done: Mapping[str, Done]) -> Any:  # noqa: ANN401
    from attnspec.theorem.result import BatteryResult

    tables: Tables = {}
    for name in names:
        if name in done:
            tables.update(keep.tables(name, done[name]))
    meta = {
        **keep.meta,
        "status": "partial",
        "unit": "claim groups",
        "runs_total": len(names),
        "runs_done": [g for g in names if g in done],
        "runs_missing": [g for g in names if g not in done],
        "partial_tables": sorted(tables),
        "note": keep.note,
    }
    return BatteryResult(command=keep.command, verdicts=[], tables=tables, meta=meta)


#: The side process's one-thread setting, held (a context left open) until it exits.
_CHILD_THREADS: list[Any] = []


def _child_setup(import_torch: bool) -> None:
    """The side process's start: quiet progress bars (two bars rewriting one terminal line
    would garble it) and one thread for the rest of its life."""
    from attnspec.runtime.progress import set_quiet
    from attnspec.theorem.fork import one_thread

    set_quiet(True)
    _CHILD_THREADS.append(one_thread(import_torch=import_torch))
    _CHILD_THREADS[-1].__enter__()  # left only when the child exits


def _fork_side(fns: list[Callable[[], Done]], import_torch: bool) -> Any:  # noqa: ANN401
    """A :class:`attnspec.theorem.fork.Forked` computing ``fns`` in order, or None."""
    if not fns:
        return None
    import functools
    import gc

    from attnspec.theorem.fork import Forked

    # the objects of the imports so far out of every later collection, in both processes: the
    # child's collections then do not write to (and copy) the parent's pages (the gc module's
    # advice for fork without exec)
    gc.freeze()
    try:
        return Forked(fns, initializer=functools.partial(_child_setup, import_torch))
    finally:
        gc.unfreeze()  # this process collects as before (the child keeps them frozen)


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
