"""A check computed in a few named units (claim groups) instead of grid points: resume and forking.

Some checks are not a grid of like points but a few units of unequal cost, each a claim group
with its own tables and verdict rows (``jl-check``: Lemma 1, Theorem 1, Theorem 2, ...). Each
unit draws its seeds from the run's seed and its own name alone, so :func:`run_units` may
compute them in any order, in two processes (:mod:`attnspec.theorem.fork`: ``Forked``,
``split_by_cost``) or across an interruption: on Ctrl-C or SIGTERM the finished units are kept
as the tables ``<prefix>_partial_<unit>_<part>`` of a partial result, and ``--resume`` reads
them back equal (:func:`units_from_tables`) and computes only the missing ones.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd

from attnspec.theorem.result import BatteryResult
from attnspec.verdicts.classify import VerdictRow


@dataclass
class Unit:
    """What one unit computed: named tables (any may be missing or empty) and verdict rows.

    Parameters
    ----------
    tables : dict of str to DataFrame
        Its tables by part name.
    rows : list of VerdictRow
        Its verdict rows that are not read off a table.
    """

    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    rows: list[VerdictRow] = field(default_factory=list)

    def table(self, part: str) -> pd.DataFrame:
        """The table ``part``; an empty frame when the unit has none.

        Parameters
        ----------
        part : str

        Returns
        -------
        DataFrame
        """
        return self.tables.get(part, pd.DataFrame())


def concat(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """The non-empty frames one under the other (an empty frame when none).

    Parameters
    ----------
    frames : sequence of pandas.DataFrame

    Returns
    -------
    pandas.DataFrame
        With a fresh index.
    """
    frames = [f for f in frames if len(f)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def part_table(prefix: str, unit: str, part: str) -> str:
    """The file stem of one part of a finished unit in a partial result.

    Parameters
    ----------
    prefix : str
        The check's table prefix (``jl``).
    unit : str
        The unit.
    part : str
        A table of the unit, or ``rows`` (its verdict rows).

    Returns
    -------
    str
        ``<prefix>_partial_<unit>_<part>``.
    """
    return f"{prefix}_partial_{unit}_{part}"


def _row_json(row: VerdictRow) -> str:
    """One verdict row as JSON that reads back equal (numpy scalars as Python numbers,
    non-finite floats as JSON's NaN/Infinity extension)."""
    from attnspec.storage.results import _json_default

    return json.dumps(asdict(row), default=_json_default)


def unit_tables(prefix: str, name: str, unit: Unit, parts: Sequence[str]) -> dict[str, pd.DataFrame]:
    """A finished unit as the tables of a partial result (read back by :func:`units_from_tables`).

    Parameters
    ----------
    prefix : str
        The check's table prefix.
    name : str
        The unit's name.
    unit : Unit
        What it computed.
    parts : sequence of str
        The table parts every unit of the check may have.

    Returns
    -------
    dict of str to pandas.DataFrame
        :func:`part_table` stem → table.
    """
    out = {part_table(prefix, name, p): unit.table(p) for p in parts}
    out[part_table(prefix, name, "rows")] = pd.DataFrame({"row": [_row_json(r) for r in unit.rows]}, dtype=object)
    return out


def units_from_tables(
    tables: Mapping[str, pd.DataFrame], prefix: str, names: Sequence[str], parts: Sequence[str]
) -> dict[str, Unit]:
    """The finished units held by the tables of a partial result (a unit counts as finished
    when its verdict-row table is there; parts with no rows were not written).

    Parameters
    ----------
    tables : mapping of str to pandas.DataFrame
        The partial result's tables by stem.
    prefix : str
        The check's table prefix.
    names : sequence of str
        The units to look for.
    parts : sequence of str
        The table parts every unit may have.

    Returns
    -------
    dict of str to Unit
    """
    out: dict[str, Unit] = {}
    for name in names:
        rows = tables.get(part_table(prefix, name, "rows"))
        if rows is None:
            continue
        kept = {p: tables.get(part_table(prefix, name, p), pd.DataFrame()) for p in parts}
        out[name] = Unit(kept, [VerdictRow(**json.loads(t)) for t in rows.get("row", [])])
    return out


@dataclass(frozen=True)
class UnitPlan:
    """How a check's units are computed, kept and split between two processes.

    Parameters
    ----------
    command : str
        The command (the result's).
    prefix : str
        The table prefix of the partial result's tables.
    parts : tuple of str
        The table parts a unit may have.
    split : callable, optional
        ``split(pending) -> units`` for a side process (e.g. ``split_by_cost``); none forked
        when absent.
    needs_torch : callable
        ``needs_torch(units)``: whether computing them imports torch (a process that does not
        never loads it).
    note : str
        What a partial result holds and how to finish it (its meta's ``note``).
    """

    command: str
    prefix: str
    parts: tuple[str, ...]
    split: Callable[[Sequence[str]], list[str]] | None = None
    needs_torch: Callable[[Sequence[str]], bool] = lambda _units: True
    note: str = ""


def _partial(plan: UnitPlan, names: Sequence[str], kept: Mapping[str, Unit], meta: Mapping[str, Any]) -> BatteryResult:
    tables: dict[str, pd.DataFrame] = {}
    for name in names:
        if name in kept:
            tables.update(unit_tables(plan.prefix, name, kept[name], plan.parts))
    meta = {
        **meta,
        "status": "partial",
        "unit": "claim groups",
        "runs_total": len(names),
        "runs_done": [g for g in names if g in kept],
        "runs_missing": [g for g in names if g not in kept],
        "partial_tables": sorted(tables),
        "note": plan.note,
    }
    return BatteryResult(command=plan.command, verdicts=[], tables=tables, meta=meta)


def _child_setup(import_torch: bool) -> None:
    """The side process's start: quiet progress bars (two bars rewriting one terminal line
    would garble it) and one thread for the rest of its life."""
    from attnspec.runtime.progress import set_quiet
    from attnspec.theorem import fork as FK

    set_quiet(True)
    _CHILD_THREADS.append(FK.one_thread(import_torch=import_torch))
    _CHILD_THREADS[-1].__enter__()  # left only when the child exits


#: The side process's one-thread setting, held (a context left open) until it exits.
_CHILD_THREADS: list[Any] = []


def _fork_side(plan: UnitPlan, compute: Callable[[str], Unit], side_units: list[str]) -> Any:  # noqa: ANN401
    """A :class:`attnspec.theorem.fork.Forked` computing ``side_units``, or None."""
    if not side_units:
        return None
    import functools
    import gc

    from attnspec.theorem.fork import Forked

    # the objects of the imports so far out of every later collection, in both processes: the
    # child's collections then do not write to (and copy) the parent's pages (the gc module's
    # advice for fork without exec)
    gc.freeze()
    try:
        fns = [functools.partial(compute, u) for u in side_units]
        return Forked(fns, initializer=functools.partial(_child_setup, plan.needs_torch(side_units)))
    finally:
        gc.unfreeze()  # this process collects as before (the child keeps them frozen)


def run_units(
    plan: UnitPlan,
    names: Sequence[str],
    compute: Callable[[str], Unit],
    finish: Callable[[dict[str, Unit], dict[str, Unit]], BatteryResult],
    *,
    previous: Mapping[str, pd.DataFrame] | None = None,
    meta: Mapping[str, Any] | None = None,
    say: Callable[[str], None] = lambda _msg: None,
) -> BatteryResult:
    """Compute the units ``names`` (those ``previous`` does not hold), then ``finish`` them.

    Every unit and ``finish`` run with one thread per process (forked or not, resumed or
    not): the floating-point summation order, hence every bit of the tables, does not depend
    on the scheduling.

    Parameters
    ----------
    plan : UnitPlan
    names : sequence of str
        The units of this run, in order.
    compute : callable
        ``compute(name) -> Unit``.
    finish : callable
        ``finish(done, kept) -> BatteryResult`` once every unit is done (``kept``: those read
        back from ``previous``).
    previous : mapping of str to DataFrame, optional
        The tables of an interrupted run of the same options (``--resume``).
    meta : mapping, optional
        The meta of a partial result (identity, parameters, seed).
    say : callable
        Receives one-line messages.

    Returns
    -------
    BatteryResult

    Raises
    ------
    attnspec.runtime.signals.InterruptedRun
        On Ctrl-C or SIGTERM, with the finished units as a partial result.
    """
    from attnspec.runtime.signals import InterruptedRun, deferred_interrupts
    from attnspec.theorem import fork as FK

    kept = units_from_tables(previous, plan.prefix, names, plan.parts) if previous else {}
    if kept:
        say(f"kept from before: claim groups {', '.join(g for g in names if g in kept)}")
    done: dict[str, Unit] = dict(kept)
    pending = [g for g in names if g not in done]
    side_units = plan.split(pending) if plan.split is not None else []
    side = _fork_side(plan, compute, side_units)
    try:
        with FK.one_thread(import_torch=plan.needs_torch([g for g in pending if g not in side_units])):
            for name in pending:
                if name not in side_units:
                    done[name] = compute(name)
            for name in side_units:  # in order: an error in the child is raised here, the units before it kept
                done[name] = side.next()
            return finish(done, kept)
    except KeyboardInterrupt as e:  # also while finishing: the units are kept, --resume only finishes
        if side is not None:
            side.close()
        with deferred_interrupts():  # a second Ctrl-C must not lose the finished units
            partial = _partial(plan, names, done, meta or {})
        raise InterruptedRun(partial, len(done), len(names), "claim groups") from e
    finally:
        if side is not None:
            side.close()
