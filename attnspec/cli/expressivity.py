"""`attnspec sa-check`: sparse expressivity of self-attention (Likhosherstov et al. 2021).

Thin: parse the options → :func:`attnspec.battery.run_and_write` (which validates them
through the battery's config before any computation, then writes the tables and draws the
figures from them) → print.
"""

from __future__ import annotations

import time
from typing import Annotated

import typer

from attnspec.cli._common import (
    JsonOpt,
    OutOpt,
    SeedOpt,
    claim_out_dir,
    err_console,
    out_console,
    user_errors,
)
from attnspec.cli._output import VerboseOpt, progress_printer

_HELP = """Check the sparse-expressivity construction SA(X) = exp(X W_Q W_Kᵀ Xᵀ) ≈ A/eps.

Builds a positive L×L matrix A with k nonzeros per row in [m, M], measures the construction
X = (B Rᵀ, Rᵀ) (B = log(A/eps) on the support) with Gaussian and orthogonal R, finds the
minimal d reaching P(‖B − B̂‖∞ <= delta) >= 1 − beta, and prints a verdict per claim id and
reading (`attnspec claims` lists them). --out writes sa.parquet, verdicts.parquet,
error_map.parquet, meta.json and figures; --json prints the verdict rows only.
"""


def sa_check(
    L: Annotated[int, typer.Option("--L", help="Sequence length L (A is L×L), >= 2.")] = 512,
    k: Annotated[int, typer.Option("--k", help="Nonzeros per row of A, in [1, L].")] = 8,
    eps: Annotated[float, typer.Option("--eps", help="The eps of B = log(A/eps) (off-support level), > 0.")] = 0.01,
    delta: Annotated[float, typer.Option("--delta", help="Target ‖B − B̂‖∞ <= delta (the notes' ε'), > 0.")] = 0.1,
    m: Annotated[float, typer.Option("--m", help="Smallest nonzero entry of A, > 0.")] = 0.1,
    M: Annotated[float, typer.Option("--M", help="Largest entry of A, >= m.")] = 1.0,
    beta: Annotated[float, typer.Option("--beta", help="d* is the least d with success >= 1 − beta; in (0, 1).")] = 0.1,
    trials: Annotated[int, typer.Option("--trials", help="Monte Carlo trials per d, >= 10.")] = 200,
    d: Annotated[int | None, typer.Option("--d", help="Also measure every error at this projection dimension, >= 1.")] = None,
    support: Annotated[str, typer.Option("--support", help="Support of A: random, banded, both (k per row and column) or dense-column (k per row, one full column).")] = "random",
    factorization: Annotated[str, typer.Option("--factorization", help="B = B1 B2ᵀ: row (B, I) or column (I, Bᵀ).")] = "row",
    sweep: Annotated[bool, typer.Option("--sweep", help="Full (L, k) sweep: L in 64..4096, k in 1..32 (minutes).")] = False,
    sweep_L: Annotated[str, typer.Option("--sweep-L", help="Comma list of L (>= 2) for the d* vs k log L sweep.")] = "64,128,256",
    sweep_k: Annotated[str, typer.Option("--sweep-k", help="Comma list of k for the sweep, each <= the largest sweep-L.")] = "1,2,4,8",
    sweep_trials: Annotated[int, typer.Option("--sweep-trials", help="Draws per sweep configuration (40 from L >= 2048), >= 10.")] = 100,
    threads: Annotated[int, typer.Option("--threads", help="torch CPU threads (1 is fastest on a shared 2-core machine), >= 1.")] = 1,
    jobs: Annotated[int, typer.Option("--jobs", help="Processes, 1 or 2: 2 runs the sweeps in a second process when two cores are available (the same numbers).")] = 2,
    plots: Annotated[bool, typer.Option("--plots/--no-plots", help="Write figures with --out.")] = True,
    seed: SeedOpt = 0,
    out: OutOpt = None,
    json_out: JsonOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Check the sparse-expressivity construction of self-attention (Likhosherstov et al. 2021)."""
    with user_errors():
        from rich.text import Text

        from attnspec.battery import run_and_write
        from attnspec.verdicts import verdicts_json

        options = {"L": L, "k": k, "eps": eps, "delta": delta, "m": m, "M": M, "beta": beta, "trials": trials,
                   "d": d, "support": support, "factorization": factorization, "sweep": sweep, "sweep_L": sweep_L,
                   "sweep_k": sweep_k, "sweep_trials": sweep_trials, "threads": threads, "jobs": jobs, "seed": seed}
        claim_out_dir(out, "attnspec sa-check")  # writable and ours, before any work
        start = time.time()

        def fmt(msg: str) -> str:
            return f"{time.time() - start:6.1f} s  {msg}"

        def say(msg: str) -> None:
            err_console.print(Text(fmt(msg), style="dim"), highlight=False)

        with progress_printer(err_console, verbose, fmt) as progress:
            result = run_and_write("sa-check", options, out, plots=plots, progress=progress)
        if out is not None:
            if plots:
                say("figures written")
            err_console.print(f"results written to {out}", highlight=False)
        if json_out:
            typer.echo(verdicts_json(result.verdicts))
            return
        _print(result, time.time() - start, verbose=verbose)


#: The most lines the default output may take at 100 columns.
SCREEN_LINES = 30


def screen_header(result, wall: float) -> str:  # noqa: ANN001 - BatteryResult
    """The instance, and which of its parameters the notes fix (none: only the construction)."""
    import inspect

    from attnspec.verdict_table import count_line

    cfg = result.meta["parameters"]
    defaults = inspect.signature(sa_check).parameters
    shown = {"L": "L", "k": "k", "eps": "ε", "delta": "δ"}
    whose = ("attnspec's defaults" if all(defaults[k].default == cfg[k] for k in shown) else "attnspec's defaults are "
             + ", ".join(f"{v} = {defaults[k].default:g}" for k, v in shown.items()))
    return ("sa-check: " + ", ".join(f"{v} = {cfg[k]:g}" for k, v in shown.items()) + f", seed {cfg['seed']} ({whose}; "
            f"the notes fix none, only the construction and its formula for d). {count_line(result.verdicts)}, "
            f"{wall:.1f} s.")


def _print(result, wall: float, *, verbose: bool = False) -> None:  # noqa: ANN001 - BatteryResult
    from rich.console import Console

    from attnspec.verdicts import VERDICTS, print_verdict_table

    rows = result.verdicts
    if not verbose:
        from attnspec.cli._output import print_verdict_screen

        print_verdict_screen(rows, console=out_console, header=screen_header(result, wall), budget=SCREEN_LINES)
        return

    # a table this wide is unreadable at 80 columns: when stdout is not a terminal, use 200
    console = out_console if out_console.is_terminal else Console(width=200)
    print_verdict_table(rows, title="sa-check: sparse expressivity of self-attention (Likhosherstov et al. 2021)",
                        param_columns=["L", "k", "eps", "delta", "d", "varied"], console=console)
    counts = {v: sum(r.verdict == v for r in rows) for v in VERDICTS}
    console.print(" · ".join(f"{n} {v}" for v, n in counts.items() if n) + f" · {wall:.1f} s", highlight=False)


def register(app: typer.Typer) -> None:
    """Register ``sa-check`` on ``app``."""
    from attnspec.vocabulary import verdict_epilog

    app.command("sa-check", help=_HELP, epilog=verdict_epilog())(sa_check)
