"""`attnspec sa-check`: sparse expressivity of self-attention (Likhosherstov et al. 2021).

Thin: parse the options → :func:`attnspec.battery.run_and_write` (which validates them
through the battery's config before any computation, then writes the tables and draws the
figures from them) → print.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import typer

from attnspec.cli._common import (
    JsonOpt,
    claim_out_dir,
    err_console,
    out_console,
    user_errors,
)
from attnspec.cli._output import VerboseOpt, progress_printer
from attnspec.options.checks import SA_CHECK, run_arguments_of
from attnspec.options.declaration import typer_command

_HELP = """Check the sparse-expressivity construction SA(X) = exp(X W_Q W_Kᵀ Xᵀ) ≈ A/eps.

Builds a positive L×L matrix A with k nonzeros per row in [m, M], measures the construction
X = (B Rᵀ, Rᵀ) (B = log(A/eps) on the support) with Gaussian and orthogonal R, finds the
minimal d reaching P(‖B − B̂‖∞ <= delta) >= 1 − beta, and prints a verdict per claim id and
reading (`attnspec claims` lists them). --out writes sa.parquet, verdicts.parquet,
error_map.parquet, meta.json and figures; --json prints the verdict rows only.
"""


@typer_command(SA_CHECK, separate=run_arguments_of("sa-check"))
def sa_check(
    options: dict[str, Any],
    out: Path | None,
    csv: bool,
    plots: bool,
    json_out: JsonOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Check the sparse-expressivity construction of self-attention (Likhosherstov et al. 2021)."""
    with user_errors():
        from rich.text import Text

        from attnspec.battery import run_and_write
        from attnspec.verdicts.classify import verdicts_json

        claim_out_dir(out, "attnspec sa-check")  # writable and ours, before any work
        start = time.time()

        def fmt(msg: str) -> str:
            return f"{time.time() - start:6.1f} s  {msg}"

        def say(msg: str) -> None:
            err_console.print(Text(fmt(msg), style="dim"), highlight=False)

        with progress_printer(err_console, verbose, fmt) as progress:
            result = run_and_write("sa-check", options, out, csv=csv, plots=plots, progress=progress)
        if out is not None:
            if plots:
                say("figures written")
            err_console.print(f"results written to {out}", highlight=False)
        if json_out:
            typer.echo(verdicts_json(result.verdicts))
            return
        _print(result, time.time() - start, verbose=verbose)


#: The most lines the default output may take at 100 columns.
SCREEN_LINES = 21


def screen_header(result, wall: float) -> str:  # noqa: ANN001 - BatteryResult
    """The instance, and which of its parameters the notes fix (none: only the construction)."""
    from attnspec.verdicts.table import count_line

    cfg = result.meta["parameters"]
    defaults = {o.name: o.default for o in SA_CHECK}
    shown = {"L": "L", "k": "k", "eps": "ε", "delta": "δ"}
    whose = (
        "attnspec's defaults"
        if all(defaults[k] == cfg[k] for k in shown)
        else "attnspec's defaults are " + ", ".join(f"{v} = {defaults[k]:g}" for k, v in shown.items())
    )
    return (
        "sa-check: " + ", ".join(f"{v} = {cfg[k]:g}" for k, v in shown.items()) + f", seed {cfg['seed']} ({whose}; "
        f"the notes fix none, only the construction and its formula for d). {count_line(result.verdicts)}, "
        f"{wall:.1f} s."
    )


def _print(result, wall: float, *, verbose: bool = False) -> None:  # noqa: ANN001 - BatteryResult
    from rich.console import Console

    from attnspec.verdicts.classify import VERDICTS, print_verdict_table

    rows = result.verdicts
    if not verbose:
        from attnspec.cli._output import print_verdict_screen

        print_verdict_screen(rows, console=out_console, header=screen_header(result, wall), budget=SCREEN_LINES)
        return

    # a table this wide is unreadable at 80 columns: when stdout is not a terminal, use 200
    console = out_console if out_console.is_terminal else Console(width=200, emoji=False)
    print_verdict_table(
        rows,
        title="sa-check: sparse expressivity of self-attention (Likhosherstov et al. 2021)",
        param_columns=["L", "k", "eps", "delta", "d", "varied"],
        console=console,
    )
    counts = {v: sum(r.verdict == v for r in rows) for v in VERDICTS}
    console.print(" · ".join(f"{n} {v}" for v, n in counts.items() if n) + f" · {wall:.1f} s", highlight=False)


def register(app: typer.Typer) -> None:
    """Register ``sa-check`` on ``app``."""
    from attnspec.verdicts.vocabulary import verdict_epilog

    app.command("sa-check", help=_HELP, epilog=verdict_epilog())(sa_check)
