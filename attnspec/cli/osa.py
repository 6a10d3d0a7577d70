"""`attnspec osa-check`: the Orthogonal Self-Attention theorem battery.

Parse options → :func:`attnspec.battery.run_battery` (which validates them through
:func:`attnspec.theory.osa.battery.config_from_options` before computing) → write the
tables, ``verdicts.parquet`` and ``meta.json`` → draw the figures from the saved tables →
print the verdicts (or JSON with ``--json``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from attnspec.cli._common import (
    JsonOpt,
    claim_out_dir,
    err_console,
    out_console,
    user_errors,
)
from attnspec.cli._output import VerboseOpt, progress_printer
from attnspec.options.checks import OSA_CHECK, run_arguments_of
from attnspec.options.declaration import typer_command

if TYPE_CHECKING:
    from attnspec.battery import BatteryResult
    from attnspec.verdicts.classify import VerdictRow

COMMAND = "osa-check"


def run_and_write(
    command: str,
    options: Mapping[str, Any],
    out: Path | None,
    *,
    csv: bool = False,
    progress: Callable[[str], None] | None = None,
    plot: bool = False,
    resume: bool = False,
) -> BatteryResult:
    """Run a battery in-process and, with ``out``, write its result (and, with ``plot``, its
    figures) through the shared :func:`attnspec.battery.run_and_write`: ``out`` is claimed
    (usable, ours, not holding a different run) before computing, and the files are written
    as one unit (an interrupt is held until the last)."""
    from attnspec import battery

    claim_out_dir(out, f"attnspec {command}")
    return battery.run_and_write(command, options, out, csv=csv, plots=plot, progress=progress, resume=resume)


def _compact(rows: list[VerdictRow]) -> list[VerdictRow]:
    """For the terminal only: each claim's parameters joined into one ``setting`` column
    (the claims have different parameters; JSON and the parquet table keep them apart)."""
    from dataclasses import replace

    return [replace(r, params={"setting": ", ".join(f"{k}={v}" for k, v in r.params.items())}) for r in rows]


#: The most lines the default output may take at 100 columns.
SCREEN_LINES = 30


def screen_header(result) -> str:  # noqa: ANN001 - BatteryResult
    """The instance sizes, and what the paper fixes (its experiments' sizes and K)."""
    from attnspec.theory.osa.jacobian import PAPER_SIZES
    from attnspec.verdicts.table import count_line

    cfg = result.meta["parameters"]
    dv = cfg["d_v"]
    alphas = ", ".join(f"{a:g}" for a in cfg["alphas"])
    return (
        f"osa-check: α = {alphas}, Newton–Schulz K ≤ {cfg['steps']}, Theorems 4.1–4.4 at d = {cfg['d_model']}, "
        f"d_v = {dv}, N = {3 * dv} and {2 * dv}, {cfg['trials']} trials, seed {cfg['seed']} (attnspec's choice; "
        f"the paper's experiments use N = {PAPER_SIZES['N']}, d = {PAPER_SIZES['d']}, h = {PAPER_SIZES['heads']}, "
        f"K = 6). {count_line(result.verdicts)}, {result.meta.get('wall_seconds', 0):.1f} s."
    )


def register(app: typer.Typer) -> None:
    """Register ``osa-check`` on ``app``."""

    from attnspec.verdicts.vocabulary import verdict_epilog

    @app.command("osa-check", epilog=verdict_epilog())
    @typer_command(OSA_CHECK, separate=run_arguments_of("osa-check"))
    def osa_check(
        options: dict[str, Any],
        out: Path | None,
        csv: bool,
        json_out: JsonOpt = False,
        verbose: VerboseOpt = False,
    ) -> None:
        """Check the OSA theorems (Thm 2.1, SO(N), 3.1, 4.2, 2.2, 4.1/4.3/4.4) and print the verdicts."""
        with user_errors():
            with progress_printer(err_console, verbose, lambda m: f"· {m}") as progress:
                result = run_and_write(COMMAND, options, out, csv=csv, plot=True, progress=progress)
            if out is not None:
                err_console.print(f"wrote {len(result.tables) + 1} tables, meta.json and figures to {out}")
            from attnspec.theory.osa.battery import summary_line
            from attnspec.verdicts.classify import print_verdict_table, verdicts_json

            if json_out:
                out_console.file.write(verdicts_json(result.verdicts) + "\n")
            elif verbose:
                print_verdict_table(
                    _compact(result.verdicts), title=f"OSA theorem checks (seed {options['seed']})", console=out_console
                )
            else:
                from attnspec.cli._output import print_verdict_screen

                print_verdict_screen(
                    result.verdicts, console=out_console, header=screen_header(result), budget=SCREEN_LINES
                )
            err_console.print(f"{summary_line(result)}, in {result.meta.get('wall_seconds', 0):.1f} s")
