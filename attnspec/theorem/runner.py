"""Running a declared check: the grid, per-point seeds, sequential stopping, forking, resume, rows.

For each grid point ``i`` of a :class:`attnspec.theorem.declare.Check`:

1. its seed is ``child_seed(seed, command, "point", i)`` (:func:`attnspec.numerics.stats.child_seed`),
   or the check's own ``seeds(options, i, point)`` when it names them: a point's numbers depend
   on the run's options and its place alone, so points computed in another process (``jobs``)
   or in an earlier, interrupted run (``--resume``) are the same;
2. ``setup(point, rng)`` gives the numbers fixed at the point (inputs, exact laws, and
   :class:`~attnspec.theorem.cases.Cases`: a quantity measured on a few fixed cases);
3. ``trial(point, instance, rng)`` is drawn in looks of ``check.look`` up to ``trials``; when every
   claim that reads the trials is a :class:`~attnspec.theorem.readings.Probability`, the point
   stops at the first look where each is settled (:mod:`attnspec.theorem.sequential`, the one
   stopping rule); otherwise every trial is drawn;
4. each named number is reduced to its statistics (count, mean, sd, low, high, total): one row
   per (point, quantity) of the check's table, from which alone the verdict rows are computed —
   so a resumed run gives the rows a whole run gives.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from attnspec.theorem import sequential as SQ
from attnspec.theorem.cases import Cases
from attnspec.theorem.readings import Point, Probability, Stat
from attnspec.theorem.result import BatteryResult

#: A :class:`attnspec.theorem.declare.Check` (which imports this module to run itself).
Check = Any

#: The statistics columns of a check's table, after ``point``, the point's parameters and ``seed``.
STAT_COLUMNS = ("quantity", "count", "mean", "sd", "low", "high", "total")


def table_name(command: str) -> str:
    """The file stem of a check's table: the command with underscores (``favor`` → ``favor.parquet``).

    Parameters
    ----------
    command : str

    Returns
    -------
    str
    """
    return command.replace("-", "_")


def point_seed(seed: int, command: str, index: int) -> int:
    """The seed of grid point ``index`` of a run of ``command`` with ``seed``.

    Parameters
    ----------
    seed : int
    command : str
    index : int

    Returns
    -------
    int
    """
    from attnspec.numerics.stats import child_seed

    return child_seed(int(seed), command, "point", int(index))


def seed_of_point(check: Check, config: Mapping[str, Any], index: int, point: dict[str, Any]) -> int:
    """The seed of grid point ``index``: the check's own ``seeds`` when it names them, else
    :func:`point_seed`.

    Parameters
    ----------
    check : Check
    config : mapping
        The run's validated options.
    index : int
        The point's place in the grid.
    point : dict
        Its parameters.

    Returns
    -------
    int
    """
    own = getattr(check, "seeds", None)
    return int(own(config, index, point)) if own is not None else point_seed(config["seed"], check.command, index)


def _stat(values: np.ndarray) -> Stat:
    x = np.asarray(values, dtype=float)
    sd = float(x.std(ddof=1)) if x.size > 1 else 0.0
    return Stat(int(x.size), float(x.mean()), sd, float(x.min()), float(x.max()), float(x.sum()))


def _sequential(check: Check) -> list[Probability]:
    """The probability readings, when every reading of the trials is one (else empty: no early stop)."""
    trial_readings = [r for c in check.claims for r in c.readings if r.trial_quantities()]
    if trial_readings and all(isinstance(r, Probability) for r in trial_readings):
        return trial_readings  # type: ignore[return-value]
    return []


def _settled(
    readings: list[Probability], draws: dict[str, list[float]], fixed: Mapping[str, float], trials: int, look: int
) -> bool:
    """Whether every probability reading's verdict is settled by the counts so far."""
    for r in readings:
        claimed = float(fixed[r.claimed]) if isinstance(r.claimed, str) else float(r.claimed)
        exact = float(fixed[r.exact]) if r.exact is not None else None
        if SQ.fixed_verdict(claimed, trials_max=trials, exact=exact):
            continue
        seen = draws.get(r.event, [])
        if not SQ.can_stop(int(sum(seen)), len(seen), claimed, n_looks=SQ.looks(trials, look), trials_max=trials):
            return False
    return True


def compute_point(check: Check, config: Mapping[str, Any], index: int, point: dict[str, Any]) -> list[dict[str, Any]]:
    """The table rows of one grid point: one per named number of ``setup`` and ``trial``.

    Parameters
    ----------
    check : Check
    config : mapping
        The run's validated options (``seed``, ``trials``).
    index : int
        The point's place in the grid.
    point : dict
        Its parameters.

    Returns
    -------
    list of dict
        ``point``, the parameters, ``seed``, then :data:`STAT_COLUMNS`.
    """
    from attnspec.numerics.stats import numpy_rng

    seed = seed_of_point(check, config, index, point)
    rng = numpy_rng(seed)
    instance = dict(check.setup(point, rng)) if check.setup is not None else {}
    # the scalars are tabulated and read by the claims; arrays (inputs drawn once) only reach the trials
    # a Cases value is a sample of its own (fixed cases measured once), tabulated like trials
    cases = {k: v.values for k, v in instance.items() if isinstance(v, Cases)}
    fixed = {k: float(v) for k, v in instance.items() if np.ndim(v) == 0 and k not in cases}
    draws: dict[str, list[float]] = {}
    trials, stop_early = int(config["trials"]), _sequential(check)
    if check.trial is not None:
        drawn = 0
        while drawn < trials:
            for _ in range(min(check.look, trials - drawn)):
                for k, v in check.trial(point, instance, rng).items():
                    draws.setdefault(k, []).append(float(v))
            drawn = min(drawn + check.look, trials)
            if stop_early and _settled(stop_early, draws, fixed, trials, check.look):
                break
    stats = {k: Stat(1, v, 0.0, v, v, v) for k, v in fixed.items()}
    stats.update({k: _stat(np.asarray(v)) for k, v in (cases | draws).items()})
    head = {"point": index, **point, "seed": seed}
    return [{**head, "quantity": k, **dict(zip(STAT_COLUMNS[1:], _fields(s)))} for k, s in stats.items()]


def _fields(s: Stat) -> tuple[Any, ...]:
    return (s.count, s.mean, s.sd, s.low, s.high, s.total)


def points_from_table(table: pd.DataFrame, grid: list[dict[str, Any]]) -> list[Point]:
    """The grid points with their statistics, read back from a check's table.

    Parameters
    ----------
    table : DataFrame
        The check's table (:func:`compute_point` rows).
    grid : list of dict
        The grid's points, in order.

    Returns
    -------
    list of Point
        In grid order; a point missing from the table is left out.
    """
    # one pass over the columns (a per-point filter of the table costs O(points²) in pandas)
    columns = [table[c].tolist() for c in ("point", "seed", *STAT_COLUMNS)]
    seeds: dict[int, int] = {}
    stats: dict[int, dict[str, Stat]] = {}
    for index, seed, quantity, count, mean, sd, low, high, total in zip(*columns):
        seeds.setdefault(int(index), int(seed))
        stats.setdefault(int(index), {})[str(quantity)] = Stat(
            int(count), float(mean), float(sd), float(low), float(high), float(total)
        )
    return [Point(i, dict(point), seeds[i], stats[i]) for i, point in enumerate(grid) if i in stats]


def _pending(
    grid: list[dict[str, Any]], previous: Mapping[str, pd.DataFrame] | None, name: str
) -> tuple[list[int], pd.DataFrame | None]:
    """The grid points still to compute, and the finished part of an interrupted run."""
    done = previous.get(name) if previous else None
    finished = set() if done is None or done.empty else {int(i) for i in done["point"].unique()}
    return [i for i in range(len(grid)) if i not in finished], done


def run_check(
    check: Check,
    config: Mapping[str, Any],
    *,
    progress: Callable[[str], None] | None = None,
    previous: Mapping[str, pd.DataFrame] | None = None,
) -> BatteryResult:
    """Run ``check`` at ``config``: its table, its verdict rows and its meta.

    Parameters
    ----------
    check : Check
    config : mapping
        The validated options (:meth:`Check.config_from_options`).
    progress : callable, optional
        Receives one line per point computed.
    previous : mapping of str to DataFrame, optional
        The tables of an interrupted run of the same options: its finished points are kept.

    Returns
    -------
    BatteryResult

    Raises
    ------
    InterruptedRun
        On Ctrl-C or SIGTERM, carrying the finished points (``--resume`` computes the rest).
    """
    from attnspec.runtime.signals import InterruptedRun
    from attnspec.theorem.fork import fork_map

    start, name = time.perf_counter(), table_name(check.command)
    grid = check.points(config)
    pending, done = _pending(grid, previous, name)
    frames = [] if done is None else [done]
    jobs = int(config.get("jobs", 1))

    def one(i: int) -> list[dict[str, Any]]:
        rows = compute_point(check, config, i, grid[i])
        if progress is not None and jobs < 2:
            progress(f"{check.command}: point {i + 1} of {len(grid)} ({_describe(grid[i])})")
        return rows

    batches: list[list[dict[str, Any]]] = []
    try:
        if jobs > 1:
            batches = fork_map(one, pending, jobs=jobs)
        else:
            for i in pending:
                batches.append(one(i))
    except KeyboardInterrupt as e:
        table = pd.concat([*frames, pd.DataFrame.from_records([r for b in batches for r in b])], ignore_index=True)
        finished = sorted({int(i) for i in table["point"].unique()}) if not table.empty else []
        meta = _meta(check, config, start, len(grid)) | {
            "status": "partial", "unit": "grid points", "runs_total": len(grid), "runs_done": finished,
            "partial_tables": [name],
        }  # fmt: skip
        raise InterruptedRun(
            BatteryResult(check.command, [], {name: table}, meta), len(finished), len(grid), "grid points"
        ) from e
    computed = [r for b in batches for r in b]
    table = pd.concat([*frames, *([pd.DataFrame.from_records(computed)] if computed else [])], ignore_index=True)
    table = table.sort_values(["point", "quantity"], kind="stable").reset_index(drop=True)
    points = points_from_table(table, grid)
    if check.context is not None:  # exact values beside the tabulated statistics
        points = [dataclasses.replace(p, context=dict(check.context(p.params))) for p in points]
    rows = [row for c in check.claims for r in c.readings for row in r.rows(c.id, points)]
    return BatteryResult(check.command, rows, {name: table}, _meta(check, config, start, len(grid)))


def _describe(point: Mapping[str, Any]) -> str:
    return ", ".join(f"{k} = {v}" for k, v in point.items())


def _meta(check: Check, config: Mapping[str, Any], start: float, points: int) -> dict[str, Any]:
    return {
        "parameters": dict(config),
        "seed": int(config["seed"]),
        "paper": check.paper.key,
        "grid_points": points,
        "wall_seconds": time.perf_counter() - start,
    }
