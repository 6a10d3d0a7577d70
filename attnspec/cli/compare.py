"""`attnspec compare RUN RUN [...]`: spectrum runs against the first, with confidence intervals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from attnspec.cli._common import JsonOpt, claim_out_dir, out_console, user_errors

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


def compare(
    runs: Annotated[
        list[Path], typer.Argument(help="Two or more spectrum result directories; the first is the reference.")
    ],
    at: Annotated[
        int | None,
        typer.Option(help="Reading index of the cumulative value (default 128 when the shortest n is 512, else n/4)."),
    ] = None,
    level: Annotated[float, typer.Option(help="Confidence level of every interval.")] = 0.95,
    out: Annotated[Path, typer.Option(help="Directory for compare.parquet, trends.parquet and figures.")] = Path(
        "compare"
    ),
    fmt: Annotated[str, typer.Option("--format", help="Vector format next to PNG: svg | pdf.")] = "svg",
    plots: Annotated[bool, typer.Option("--plots/--no-plots", help="Draw the figures.")] = True,
    as_json: JsonOpt = False,
) -> None:
    """Per layer and overall: each run's mean cumulative value at the reading index and every metric,
    the difference from the first run with a Welch interval, and the depth trend (Spearman ρ) per run.

    Standard errors come from the stored counts and spreads (exact from per-input values
    where the runs keep them, else an upper bound; see docs/spectrum.md).
    """
    from attnspec.errors import InputError
    from attnspec.spectra.compare import KIND, compare_runs, depth_trends, write_comparison

    with user_errors():
        if not 0 < level < 1:
            raise InputError(f"--level must be in (0, 1), got {level}")
        if fmt not in ("svg", "pdf"):
            raise InputError(f"--format must be svg or pdf, got {fmt!r}")
        # before any work: usable, not another kind of result (a spectrum run, a jl-check
        # result, or a folder inside one), and locked (a second compare is refused)
        claim_out_dir(out, "attnspec compare", kind=KIND)
        table = compare_runs(runs, at=at, level=level)  # refuses a run whose writer holds its lock
        trends = depth_trends(table, level)
        draw = None
        if plots:
            from attnspec.plots.compare import plot_comparison  # matplotlib: only when drawing

            def draw(table, folder):
                return plot_comparison(table, folder, formats=("png", fmt))

        paths = write_comparison(out, table, trends, runs=runs, draw=draw)
        if as_json:
            typer.echo(
                json.dumps(
                    {"compare": table.to_dict(orient="records"), "trends": trends.to_dict(orient="records")},
                    default=float,
                )
            )
            return
        _print_differences(table, level)
        _print_trends(trends, level)
        out_console.print(
            f"tables: {out / 'compare.parquet'}, {out / 'trends.parquet'}"
            + (f"; figures: {out / 'figures'}" if paths else "")
        )


def _print_differences(table: pd.DataFrame, level: float) -> None:
    """One table per quantity: each run's layer means and its difference from the first run, with intervals."""
    from rich.table import Table

    from attnspec.errors import printable

    labels = list(dict.fromkeys(table["label"]))
    shown = {lab: printable(lab) for lab in labels}  # run folders are the user's names: escaped
    for q, d in table.groupby("quantity", sort=False):
        t = Table(
            title=f"{q}"
            + (f" (index {int(d['at'].iloc[0])})" if q == "c_at" else "")
            + f": run − {shown[labels[0]]}, {level:.0%} Welch intervals ({d['method'].iloc[0]} standard errors)"
        )
        t.add_column("layer", justify="right")
        for lab in labels:
            t.add_column(shown[lab], justify="right", overflow="fold")
        for lab in labels[1:]:
            t.add_column(f"diff vs ref [{shown[lab].split(' (')[0]}]", justify="right")
        for layer, g in sorted(d.groupby("layer"), key=lambda kv: (kv[0] < 0, kv[0])):  # layers, then "all"
            g = g.set_index("label").loc[labels]
            t.add_row(
                "all" if layer < 0 else str(layer + 1),
                *(f"{v:.3f}" for v in g["mean"]),
                *(f"{r.diff:+.3f} [{r.diff_low:+.3f}, {r.diff_high:+.3f}]" for r in g.iloc[1:].itertuples()),
            )
        out_console.print(t)


def _print_trends(trends: pd.DataFrame, level: float) -> None:
    """The depth trend of each quantity and run: Spearman ρ, its permutation p and what they say."""
    from rich.table import Table

    from attnspec.errors import printable

    t = Table(title="depth trend: Spearman ρ(layer, layer mean), two-sided permutation p over the layers' orderings")
    for col in ("quantity", "run", "ρ", "p", "reading"):
        t.add_column(col, overflow="fold")  # run names are the user's: folded, never cut
    for r in trends.itertuples():
        t.add_row(r.quantity, printable(r.label), f"{r.rho:+.2f}", f"{r.p:.2g}", r.phrase)
    out_console.print(t)


def register(app: typer.Typer) -> None:
    """Register `attnspec compare` on ``app``."""
    app.command("compare")(compare)
