"""`attnspec jl-check`: Johnson–Lindenstrauss (Lemma 1) and Linformer Theorems 1–2."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from attnspec.cli._common import JsonOpt, OutOpt, SeedOpt, err_console, out_console, user_errors

_HELP = """Check Linformer's Lemma 1 (JL), Theorem 1 and Theorem 2 with exact laws and Monte Carlo.

Prints a verdict table (holds / violated / vacuous / loose) per claim and reading; with
--json, every verdict row as JSON on stdout. When a theorem's k is >= n it says so and
sweeps k below n.
"""


def jl_check(
    n: Annotated[int, typer.Option("--n", help="Sequence length n (ambient dimension), >= 2.")] = 4096,
    eps: Annotated[float, typer.Option("--eps", help="Distortion eps, in (0, 1).")] = 0.1,
    k: Annotated[str | None, typer.Option(
        "--k", help="Projection dimensions: comma list of integers and inclusive ranges start:stop[:step], "
                    "e.g. '64,128,256' or '64:4096:64'. Default: a geometric sweep below n. The theorems' own k "
                    "is always added.")] = None,
    trials: Annotated[int, typer.Option("--trials", help="Monte Carlo trials per point (Gaussian R), >= 1.")] = 10_000,
    trials_other: Annotated[int, typer.Option(
        "--trials-other", help="Trials per point for the orthogonal, achlioptas and sparse families, >= 1.")] = 1_000,
    seed: SeedOpt = 0,
    family: Annotated[str, typer.Option(
        "--family", help="Projection families for Lemma 1: 'all' or a comma list of gaussian, orthogonal, "
                         "achlioptas, sparse. Theorems 1–2 use the paper's Gaussian R.")] = "all",
    claims: Annotated[str, typer.Option(
        "--claims", help="'all', 'lemma1', or a comma list of lemma1.eq11, lemma1.eq12, thm1, thm2.")] = "all",
    d: Annotated[int, typer.Option("--d", help="Head dimension d for Theorem 2 (and the synthetic Q, K), >= 2.")] = 64,
    temperature: Annotated[float, typer.Option(
        "--temperature", help="Softmax temperature of the synthetic attention softmax(QKᵀ/(√d·T)), > 0.")] = 1.0,
    model: Annotated[str | None, typer.Option(
        "--model", help="Also check Theorem 1 on real attention from this model (with --data), e.g. minilm.")] = None,
    data: Annotated[str | None, typer.Option("--data", help="Corpus for --model, e.g. wiki103 or imdb.")] = None,
    data_dir: Annotated[Path | None, typer.Option("--data-dir", help="Folder laid out like shared/data (wikitext103/, imdb/); default $ATTNSPEC_DATA_DIR, else ../shared/data when it exists.")] = None,
    count: Annotated[int, typer.Option("--count", help="Number of real attention matrices to sample, >= 1.")] = 2,
    out: OutOpt = None,
    json_out: JsonOpt = False,
) -> None:
    with user_errors():
        from attnspec.errors import InputError
        from attnspec.theory import jl_battery as B

        # Validate everything before any work (one-line errors, exit code 1).
        if n < 2:
            raise InputError(f"n must be >= 2, got {n}")
        if not 0.0 < eps < 1.0:
            raise InputError(f"eps must be in (0, 1), got {eps}")
        if trials < 1:
            raise InputError(f"trials must be >= 1, got {trials}")
        if trials_other < 1:
            raise InputError(f"trials-other must be >= 1, got {trials_other}")
        if d < 2:
            raise InputError(f"d must be >= 2, got {d}")
        if count < 1:
            raise InputError(f"count must be >= 1, got {count}")
        ks = B.parse_ks(k) if k is not None else None
        if not temperature > 0:
            raise InputError(f"temperature must be > 0, got {temperature}")
        config = B.JLConfig(n=n, eps=eps, ks=ks, trials=trials, trials_other=trials_other, seed=seed,
                            families=B.parse_families(family), claims=B.parse_claims(claims), d=d,
                            temperature=temperature, model=model,
                            data=data, data_dir=str(data_dir) if data_dir is not None else None, count=count)
        config.validate()
        if out is not None:
            from dataclasses import asdict

            from attnspec.results import check_same_run

            # refuse a directory that holds another kind of result or another run
            check_same_run(out, _identity(asdict(config)), kind="jl-check")
        start = time.time()

        def progress(msg: str) -> None:
            err_console.print(f"[dim]\\[{time.time() - start:6.1f} s] {msg}[/]", highlight=False)

        result = B.run_jl_check(config, progress=progress)
        wall = time.time() - start
        if out is not None:
            _write_results(out, result, wall)
            err_console.print(f"results written to {out}", highlight=False)
        if json_out:
            from attnspec.verdicts import verdicts_json

            typer.echo(verdicts_json(result.rows))
            return
        _print_report(result, wall)


def _print_report(result, wall: float) -> None:  # noqa: ANN001 - JLResult, imported lazily
    from rich.console import Console

    from attnspec.verdicts import VerdictRow, print_verdict_table

    # Tables are wide: never squeeze them into 80 columns when stdout is not a terminal.
    console = Console(width=max(out_console.width, 160), highlight=False, soft_wrap=False)
    cfg = result.config
    dims = result.dims
    console.print(
        f"[bold]jl-check[/] n = {cfg.n}, eps = {cfg.eps}, seed = {cfg.seed}: "
        f"Theorem 1 k = {dims['linformer_k']:.1f}, Theorem 2 k = {dims['theorem2_k_main']:.1f} "
        f"(appendix {dims['theorem2_k_appendix_nd']:.1f} / {dims['theorem2_k_appendix_d']:.1f}), "
        f"scikit-learn JL min dim = {int(dims['sklearn_min_dim'])}")
    for note in result.notes:
        console.print(f"[yellow]note:[/] {note}")
    titles = {"lemma1": "Lemma 1 (eqs. 11-12): the worst case per reading and family",
              "thm1": "Theorem 1 (eq. 3): the worst case per reading and attention matrix",
              "thm2": "Theorem 2 (eq. 8, eq. 21): the worst case per reading and construction"}
    cols = {"lemma1": ["reading", "family", "vectors", "rho", "k"],
            "thm1": ["reading", "attention", "w", "pw_ratio", "k"],
            "thm2": ["reading", "construction", "row", "k"]}
    ref = 0
    for g, rows in result.summary.items():
        if not rows:
            continue
        short, notes = [], []
        for r in rows:
            ref += 1
            short.append(VerdictRow(claim=r.claim, verdict=r.verdict, params=r.params, bound=r.bound, exact=r.exact,
                                    estimate=r.estimate, ci_low=r.ci_low, ci_high=r.ci_high, trials=r.trials,
                                    seed=r.seed, evidence=f"[{ref}]"))
            notes.append(f"[{ref}] {r.evidence}")
        print_verdict_table(short, title=titles[g], param_columns=cols[g], console=console)
        for line in notes:
            console.print(line, soft_wrap=True, markup=False)
    counts = {v: sum(1 for r in result.rows if r.verdict == v) for v in ("violated", "holds", "loose", "vacuous")}
    console.print(f"{len(result.rows)} verdict rows: " + ", ".join(f"{c} {v}" for v, c in counts.items())
                  + f"; {wall:.1f} s. Every row: --json or --out DIR (jl.parquet).")


def _write_results(out: Path, result, wall: float) -> None:  # noqa: ANN001
    from dataclasses import asdict

    from attnspec.plots.jl import plot_jl
    from attnspec.results import environment_meta, write_meta, write_table

    out = Path(out)
    if out.exists() and not out.is_dir():
        from attnspec.errors import ResultsError

        raise ResultsError(f"--out {out} exists and is not a directory")
    write_table(out, "jl", _arrow_safe(result.table))
    if len(result.samples):
        write_table(out, "jl_errors", _arrow_safe(result.samples))
    write_table(out, "jl_curves", result.curves)
    cfg = asdict(result.config)
    meta = {"kind": "jl-check", "identity": _identity(cfg), "command": "attnspec jl-check", "parameters": cfg,
            "seed": result.config.seed,
            "wall_seconds": round(wall, 3), "dimensions": result.dims, "notes": result.notes,
            "sweep_k": result.sweep_ks, **environment_meta()}
    write_meta(out, meta)
    plot_jl(out)


def _identity(cfg: dict) -> dict:
    """The parameters that define a run (everything in the config), JSON-ready."""
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in cfg.items()}


def _arrow_safe(frame):  # noqa: ANN001, ANN202
    """Object columns that mix values and NaN become plain strings or booleans with nulls."""
    import pandas as pd

    frame = frame.copy()
    for c in frame.columns:
        if frame[c].dtype == object:
            vals = frame[c].dropna()
            if len(vals) and all(isinstance(v, (bool,)) or type(v).__name__ == "bool_" for v in vals):
                frame[c] = frame[c].astype("boolean")
            else:
                frame[c] = frame[c].astype("string")
    return pd.DataFrame(frame)


def register(app: typer.Typer) -> None:
    """Register ``jl-check`` on ``app``."""
    app.command("jl-check", help=_HELP)(jl_check)
