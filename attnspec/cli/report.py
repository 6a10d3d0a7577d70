"""`attnspec report`: rerun what is missing or stale, redraw every figure, rewrite REPORT.md."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from attnspec.cli._common import EXIT_INTERRUPTED, claim_out_dir, err_console, out_console, user_errors


def report(
    out: Annotated[
        Path | None, typer.Option(help="Report folder (default: reports/, or reports-quick/ with --quick).")
    ] = None,
    experiments: Annotated[Path, typer.Option(help="Folder of experiment TOML files.")] = Path("experiments"),
    quick: Annotated[
        bool, typer.Option("--quick", help="Small sizes: the whole report in a few minutes (CI runs this).")
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Rerun every experiment even when its results are fresh.")
    ] = False,
    only: Annotated[
        list[str] | None,
        typer.Option("--only", help="Run only this experiment (repeatable); the others are reused as they are."),
    ] = None,
    data_dir: Annotated[
        str | None,
        typer.Option(
            "--data-dir",
            help="Folder laid out like shared/data (wikitext103/, imdb/); default $ATTNSPEC_DATA_DIR, else ../shared/data when it exists.",
        ),
    ] = None,
) -> None:
    """Regenerate every figure, table and verdict of the report from experiments/.

    An experiment reruns when its results are missing, when its TOML arguments, the
    package version or (for the checking commands) the code its verdicts come from
    changed, or with --force; otherwise its saved results are reused. Every figure is
    redrawn by the current plotting code, and REPORT.md opens with a computed summary.
    """
    from rich.text import Text

    from attnspec.report import run_report

    with user_errors():
        folder = out if out is not None else Path("reports-quick" if quick else "reports")
        claim_out_dir(folder, "attnspec report", kind="report")  # never into, or inside, a result
        try:
            path, records = run_report(
                experiments_dir=experiments,
                out=folder,
                quick=quick,
                force=force,
                only=only,
                data_dir=data_dir,
                log=lambda m: err_console.print(m, highlight=False),
            )
        except KeyboardInterrupt as e:  # Ctrl-C or SIGTERM: the experiments finished before are kept
            err_console.print(
                f"interrupted{f': {e}' if str(e) else ''}; the experiments finished before are kept "
                f"in {folder}; the same command runs the rest",
                highlight=False,
                soft_wrap=True,
            )
            raise typer.Exit(code=EXIT_INTERRUPTED) from None
        failed = [r for r in records.values() if r.status == "failed"]
        out_console.print(f"report: {path}")
        if failed:
            for r in failed:
                err_console.print(
                    Text.assemble(("failed:", "bold red"), f" {r.name}: {r.detail}"), highlight=False, soft_wrap=True
                )
            raise typer.Exit(code=1)


def register(app: typer.Typer) -> None:
    app.command("report")(report)
