"""`attnspec jl-check`: Johnson–Lindenstrauss (Lemma 1) and Linformer Theorems 1–2."""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from attnspec.cli._common import (
    EXIT_INTERRUPTED,
    JsonOpt,
    claim_out_dir,
    err_console,
    interrupted_line,
    out_console,
    user_errors,
)
from attnspec.cli._output import VerboseOpt, progress_printer
from attnspec.errors import InputError
from attnspec.options.checks import JL_CHECK, run_arguments_of
from attnspec.options.declaration import typer_command

_HELP = """Check Linformer's Lemma 1 (JL), Theorem 1 and Theorem 2 with exact laws and Monte Carlo.

Prints one summary line per claim id and reading (its verdict counts and the most telling
row; --verbose prints the full verdict table); with --json, every verdict row as JSON on
stdout. When a theorem's k is >= n it says so and sweeps k below n.
"""


@typer_command(JL_CHECK, separate=run_arguments_of("jl-check"))
def jl_check(
    options: dict[str, Any],
    out: Path | None,
    resume: bool,
    csv: bool,
    json_out: JsonOpt = False,
    verbose: VerboseOpt = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress lines on stderr.")] = False,
) -> None:
    with user_errors():
        if quiet:
            from attnspec.runtime.progress import set_quiet

            set_quiet(True)
        from attnspec.battery import run_and_write

        if resume and out is None:
            raise InputError("--resume needs --out: the directory of the interrupted run")
        claim_out_dir(out, "attnspec jl-check")  # writable and ours, before any work
        start = time.time()

        def fmt(msg: str) -> str:
            return f"[{time.time() - start:6.1f} s] {msg}"

        # validates every option (one-line errors) and checks and locks --out before any work
        try:
            with progress_printer(err_console, verbose, fmt) as progress:
                result = run_and_write("jl-check", options, out, csv=csv, progress=progress, resume=resume)
        except KeyboardInterrupt as e:  # Ctrl-C or SIGTERM: the finished claim groups are kept in --out
            err_console.print(interrupted_line(e, out), highlight=False, soft_wrap=True)
            raise typer.Exit(code=EXIT_INTERRUPTED) from None
        if out is not None:
            err_console.print(f"results written to {out}", highlight=False)
        if json_out:
            from attnspec.verdicts.classify import verdicts_json

            typer.echo(verdicts_json(result.verdicts))
            return
        _print_report(result, time.time() - start, verbose=verbose)


#: The most lines the default output may take at 100 columns.
SCREEN_LINES = 30

_TITLES = {
    "lemma1": "Lemma 1 (eqs. 11-12): the worst case per reading and family",
    "thm1": "Theorem 1 (eq. 3, eq. 18, its quantifier): the worst case per reading and attention matrix",
    "thm2": "Theorem 2 (eq. 8, eq. 21, step 23, k formulas, tolerances): the worst case per reading",
    "eq4": "Eqs. (4)/(15) as printed against the row softmax",
}
_COLUMNS = {
    "lemma1": ["family", "vectors", "rho", "k"],
    "thm1": ["attention", "w", "pw_ratio", "k"],
    "thm2": ["construction", "row", "sweep", "eps", "k"],
    "eq4": ["attention", "n"],
}


def _print_report(result, wall: float, *, verbose: bool = False) -> None:  # noqa: ANN001 - BatteryResult, imported lazily
    from rich.console import Console
    from rich.text import Text

    from attnspec.theory.linformer.rows import summarize
    from attnspec.verdicts.classify import VERDICTS, VerdictRow, print_verdict_table

    # Tables are wide: never squeeze them into 80 columns when stdout is not a terminal.
    if not verbose:
        from attnspec.cli._output import print_verdict_screen

        print_verdict_screen(
            result.verdicts,
            console=out_console,
            header=screen_header(result, wall),
            notes=screen_notes(result),
            footer=screen_footer(result),
            budget=SCREEN_LINES,
        )
        return
    console = Console(width=max(out_console.width, 160), highlight=False, soft_wrap=False, emoji=False)
    meta = result.meta
    cfg, dims = meta["parameters"], meta["dimensions"]
    console.print(
        f"[bold]jl-check[/] n = {cfg['n']}, eps = {cfg['eps']}, seed = {cfg['seed']}: "
        f"Theorem 1 k = {dims['linformer_k']:.1f}, Theorem 2 k = {dims['theorem2_k_main']:.1f} "
        f"(appendix {dims['theorem2_k_appendix_nd']:.1f} / {dims['theorem2_k_appendix_d']:.1f}), "
        f"scikit-learn JL min dim = {int(dims['sklearn_min_dim'])}"
    )
    for note in meta["notes"]:
        console.print(Text.assemble(("note:", "yellow"), f" {note}"))  # a note may quote brackets
    ref = 0
    for g, rows in summarize(result.verdicts).items():
        short, notes = [], []
        for r in rows:
            ref += 1
            short.append(
                VerdictRow(
                    claim=r.claim,
                    reading=r.reading,
                    verdict=r.verdict,
                    params=r.params,
                    bound=r.bound,
                    exact=r.exact,
                    estimate=r.estimate,
                    ci_low=r.ci_low,
                    ci_high=r.ci_high,
                    trials=r.trials,
                    seed=r.seed,
                    evidence=f"[{ref}]",
                )
            )
            notes.append(f"[{ref}] {r.evidence}")
        print_verdict_table(short, title=_TITLES.get(g, g), param_columns=_COLUMNS.get(g), console=console)
        for line in notes:
            console.print(line, soft_wrap=True, markup=False)
    counts = {v: sum(1 for r in result.verdicts if r.verdict == v) for v in VERDICTS}
    console.print(
        f"{len(result.verdicts)} verdict rows: "
        + ", ".join(f"{c} {v}" for v, c in counts.items() if c)
        + f"; {wall:.1f} s. Every row: --json or --out DIR (verdicts.parquet, jl.parquet)."
    )


def screen_header(result, wall: float) -> str:  # noqa: ANN001 - BatteryResult
    """The parameters, and which of them the paper fixes (only its formulas for k)."""
    from attnspec.verdicts.table import count_line

    cfg, dims = result.meta["parameters"], result.meta["dimensions"]
    defaults = {o.name: o.default for o in JL_CHECK}
    chosen = {"n": cfg["n"], "eps": cfg["eps"], "d": cfg["d"]}
    whose = (
        "attnspec's defaults"
        if all(defaults[k] == v for k, v in chosen.items())
        else f"attnspec's defaults are n = {defaults['n']}, ε = {defaults['eps']:g}, d = {defaults['d']}"
    )
    ks = []
    if "linformer_k" in dims:
        ks.append(f"Theorem 1's k = {math.ceil(dims['linformer_k'])}")
    if "theorem2_k_main" in dims and any(c.startswith("thm2") for c in cfg.get("claims", [])):
        ks.append(f"Theorem 2's k = {math.ceil(dims['theorem2_k_main'])}")
    return (
        f"jl-check: n = {cfg['n']}, ε = {cfg['eps']:g}, d = {cfg['d']}, seed {cfg['seed']} ({whose}; the paper "
        f"fixes none, only its formulas for k: {', '.join(ks)}). {count_line(result.verdicts)}, {wall:.1f} s."
    )


def screen_notes(result) -> list[str]:  # noqa: ANN001 - BatteryResult
    """The run's notes, short: where the theorems are vacuous and where the union bound is < 1."""
    cfg, dims = result.meta["parameters"], result.meta["dimensions"]
    n, eps = cfg["n"], cfg["eps"]
    sweep = result.meta.get("sweep_k") or []
    notes = []
    run = cfg.get("claims") or []
    over = [
        name
        for name, key, group in (("Theorem 1", "linformer_k", "thm1"), ("Theorem 2", "theorem2_k_main", "thm2"))
        if key in dims and dims[key] >= n and group in run
    ]
    if over and sweep:
        notes.append(
            f"{' and '.join(over)}: k ≥ n = {n}, vacuous as stated; {len(sweep)} k below n swept, "
            f"{min(sweep)}–{max(sweep)}."
        )
    if "theorem1_union_bound_min_k" in dims and "appendix_a_k" in dims:
        k18, kmin = int(dims["appendix_a_k"]), int(dims["theorem1_union_bound_min_k"])
        at18 = 2 * n * math.exp(-(eps**2 - eps**3) * k18 / 4)
        undecided = f" > n: {undecidable(result.verdicts, n)}" if kmin >= n else ""
        # eq. 18 states the theorem "when k = log(n)": the bound there, at k = ⌈ln n⌉
        notes.append(
            f"Theorem 1's union bound 2n e^(−(ε²−ε³)k/4) < 1 only for k ≥ {kmin}{undecided} "
            f"({at18:.4g} at eq. 18's k = ln n)."
        )
    return notes


def undecidable(rows, n: int) -> str:  # noqa: ANN001 - VerdictRow list
    """Why no row below n can decide Theorem 1 (its union bound is >= 1 at every k < n), and
    what was measured just below n all the same: the worst failure rate of the relative
    reading at k = n − 1."""
    below = [
        r
        for r in rows
        if r.claim == "linformer.thm1.eq3" and r.reading == "relative" and r.params.get("k") == n - 1 and r.trials
    ]
    text = "no k below n can decide Theorem 1"
    if below:
        worst = max(below, key=lambda r: r.estimate or 0.0)
        fails = round((worst.estimate or 0.0) * worst.trials)
        text += f", yet at k = {n - 1} the relative error exceeds ε in {fails}/{worst.trials} trials (worst row)"
    return text


def screen_footer(result) -> list[str]:  # noqa: ANN001 - BatteryResult
    """Said once: the sequential stopping rule, and what a violation search can miss."""
    from attnspec.theorem import sequential as SQ
    from attnspec.verdicts.classify import search_power

    lines = [f"Trials stop once the verdict is settled (error rate ≤ {SQ.ALPHA:g})."]
    searched = [r for r in result.verdicts if "violation search: stopped at" in (r.evidence or "")]
    if searched:
        t = min(int(r.trials) for r in searched)
        tmax = int(result.meta["parameters"]["trials"])
        p = 0.001
        lines[0] += (
            f" {len(searched)} rows below what {tmax} trials resolve stop after {t} with no failure: "
            f"{search_power(t)}, but a rate of {p:g} goes unseen with probability "
            f"{SQ.miss_rate(p, t):.1%} ({SQ.miss_rate(p, tmax):.1g} in all {tmax})."
        )
    return lines


def register(app: typer.Typer) -> None:
    """Register ``jl-check`` on ``app``."""
    from attnspec.verdicts.vocabulary import verdict_epilog

    app.command("jl-check", help=_HELP, epilog=verdict_epilog())(jl_check)
