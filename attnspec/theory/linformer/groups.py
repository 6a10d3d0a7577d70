"""What one `jl-check` claim group computed, and its tables in a partial (resumable) result.

A run is computed group by group (:data:`.battery.RUN_GROUPS`); an interrupted run keeps the
finished groups as ``jl_partial_<group>_<part>`` tables, which ``--resume`` reads back equal.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import pandas as pd

from attnspec.verdicts.classify import VerdictRow

#: A group's parts: its ``jl`` rows, Theorem 2's (ε, k)-grid rows (placed after every other
#: group's rows), its sampled errors, and its verdict rows that are not read off ``jl``.
_PARTS = ("jl", "grid", "errors", "rows")


@dataclass
class Group:
    """What one claim group computed (frames with no rows when it has none of a part)."""

    jl: pd.DataFrame
    grid: pd.DataFrame
    errors: pd.DataFrame
    rows: list[VerdictRow]


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


def part_table(group: str, part: str) -> str:
    """The file stem of one part of a finished group in a partial result.

    Parameters
    ----------
    group : str
        The claim group.
    part : str
        The part (a table's name, or its verdict rows).

    Returns
    -------
    str
        ``jl_partial_<group>_<part>``.
    """
    return f"jl_partial_{group}_{part}"


def _row_json(row: VerdictRow) -> str:
    """One verdict row as JSON that :func:`_row_from_json` reads back equal (numpy scalars as
    Python numbers, non-finite floats as JSON's NaN/Infinity extension)."""
    from attnspec.storage.results import _json_default

    return json.dumps(asdict(row), default=_json_default)


def _row_from_json(text: str) -> VerdictRow:
    return VerdictRow(**json.loads(text))


def group_tables(group: str, g: Group) -> dict[str, pd.DataFrame]:
    """A finished group as the tables of a partial result (read back by :func:`groups_from_tables`).

    Parameters
    ----------
    group : str
        The claim group.
    g : Group
        Its rows and tables.

    Returns
    -------
    dict of str to pandas.DataFrame
        :func:`part_table` stem → table.
    """
    return {
        part_table(group, "jl"): g.jl,
        part_table(group, "grid"): g.grid,
        part_table(group, "errors"): g.errors,
        part_table(group, "rows"): pd.DataFrame({"row": [_row_json(r) for r in g.rows]}, dtype=object),
    }


def groups_from_tables(tables: Mapping[str, pd.DataFrame], groups: Sequence[str]) -> dict[str, Group]:
    """The finished groups held by the tables of a partial result (a group counts as finished
    when its verdict-row table is there; parts with no rows were not written).

    Parameters
    ----------
    tables : mapping of str to pandas.DataFrame
        The partial result's tables by stem.
    groups : sequence of str
        The claim groups to look for.

    Returns
    -------
    dict of str to Group
    """
    out: dict[str, Group] = {}
    for group in groups:
        if part_table(group, "rows") not in tables:
            continue
        part = {p: tables.get(part_table(group, p), pd.DataFrame()) for p in _PARTS}
        out[group] = Group(
            part["jl"], part["grid"], part["errors"], [_row_from_json(t) for t in part["rows"].get("row", [])]
        )
    return out
