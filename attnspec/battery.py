"""The shape every checking command shares: ``Config.validate → run(config) → Result → write``.

A *battery* checks the claims of one paper. Its module (``attnspec.theory.<paper>.battery``,
listed in :data:`BATTERIES`) provides

* ``config_from_options(options: Mapping[str, Any]) -> Config`` — the command's options by
  their CLI names (dashes as underscores, values as typed on the command line or in an
  experiment TOML) → a validated config; raises :class:`attnspec.errors.InputError` naming
  the option and the allowed range, before any computation;
* ``run(config, *, progress=None) -> BatteryResult`` — the computation, returning tidy
  tables, the verdict rows (keyed on claim ids, :mod:`attnspec.claims`) and the meta data.

The CLI and ``attnspec report`` both call :func:`run_battery`, in-process; figures are drawn
afterwards from the saved tables only (:data:`PLOTTERS`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from attnspec.verdicts import VerdictRow, verdicts_frame

#: command → battery module.
BATTERIES: dict[str, str] = {
    "jl-check": "attnspec.theory.linformer.battery",
    "sa-check": "attnspec.theory.expressivity.battery",
    "osa-check": "attnspec.theory.osa.battery",
    "osa-train": "attnspec.theory.osa.train_battery",
}

#: command → "module:function" drawing the figures of a results directory from its saved tables.
PLOTTERS: dict[str, str] = {
    "jl-check": "attnspec.plots.jl:plot_jl",
    "sa-check": "attnspec.plots.expressivity:plot_expressivity",
    "osa-check": "attnspec.plots.osa:plot_osa_check",
    "osa-train": "attnspec.plots.osa_train:plot_osa_train",
}

#: The table every battery writes its verdict rows to (``verdicts.parquet``).
VERDICT_TABLE = "verdicts"


@dataclass
class BatteryResult:
    """What a battery returns.

    Parameters
    ----------
    command : str
        The command that made it (a key of :data:`BATTERIES`).
    verdicts : list of VerdictRow
        One row per (claim id, reading, instance), the evidence in each.
    tables : dict of str to DataFrame
        Tidy tables by file stem (``"jl"`` → ``jl.parquet``), identifier columns first.
    meta : dict
        How the result was made: ``parameters`` (the config), ``seed``, notes, wall time.
    """

    command: str
    verdicts: list[VerdictRow]
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    def verdict_frame(self) -> pd.DataFrame:
        """The verdict rows as one tidy table (claim, reading, parameters, numbers, verdict, evidence)."""
        return verdicts_frame(self.verdicts)


def battery_module(command: str) -> Any:
    """The battery module of ``command``; ValueError naming the known commands otherwise."""
    try:
        return importlib.import_module(BATTERIES[command])
    except KeyError:
        raise ValueError(f"no battery for command {command!r}; known: {sorted(BATTERIES)}") from None


def _resolve(spec: str) -> Callable[..., Any]:
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)


def run_battery(
    command: str,
    options: Mapping[str, Any],
    *,
    progress: Callable[[str], None] | None = None,
) -> BatteryResult:
    """Validate ``options`` into the command's config and run its battery.

    Parameters
    ----------
    command : str
        ``"jl-check"``, ``"sa-check"``, ``"osa-check"`` or ``"osa-train"``.
    options : mapping
        Option values by CLI name (``"trials_other"`` for ``--trials-other``).
    progress : callable, optional
        Receives one-line progress messages.

    Returns
    -------
    BatteryResult
    """
    module = battery_module(command)
    config = module.config_from_options(dict(options))
    result = module.run(config, progress=progress)
    if result.command != command:
        raise RuntimeError(f"battery {BATTERIES[command]} returned a result for {result.command!r}")
    from attnspec import claims

    claims.check_rows(result.verdicts)
    return result


def plot_results(command: str, out_dir: Path) -> None:
    """Draw the figures of a saved ``command`` result from its tables only."""
    _resolve(PLOTTERS[command])(Path(out_dir))
