"""`attnspec osa-train`: the OSA-Transformer vs ViT training comparison on 8×8 digits or MNIST.

Parse options → :func:`attnspec.battery.run_battery` (validation in
:func:`attnspec.theory.osa.train_battery.config_from_options`, before any training) →
write tables + meta.json → figures from the saved tables → print the summary (or JSON
with ``--json``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated, Any

import typer

from attnspec.cli._common import EXIT_INTERRUPTED, err_console, interrupted_line, out_console, user_errors
from attnspec.errors import InputError
from attnspec.options.checks import OSA_TRAIN, run_arguments_of
from attnspec.options.declaration import typer_command

COMMAND = "osa-train"


def _fmt(x: float, spec: str = ".3f") -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def _print_summary(summary: Any, title: str) -> None:
    from rich.table import Table

    t = Table(title=title, title_justify="left")
    for col, just in (
        ("model", "left"),
        ("test acc ± sd", "right"),
        ("Δ vs ViT [95% CI]", "right"),
        ("train loss", "right"),
        ("test loss", "right"),
        ("diverged", "right"),
    ):
        t.add_column(col, justify=just)
    for row in summary.to_dict("records"):
        diff = "—"
        if not math.isnan(row["diff_vs_vit_mean"]):
            diff = f"{row['diff_vs_vit_mean']:+.3f}"
            if not math.isnan(row["diff_vs_vit_ci_low"]):
                diff += f" [{row['diff_vs_vit_ci_low']:+.2f}, {row['diff_vs_vit_ci_high']:+.2f}]"
        t.add_row(
            row["model"],
            f"{row['test_accuracy_mean']:.3f} ± {_fmt(row['test_accuracy_std'])}",
            diff,
            _fmt(row["train_loss_mean"]),
            _fmt(row["test_loss_mean"]),
            f"{row['diverged_runs']}/{row['n_seeds']}",
        )
    out_console.print(t)


def _print_paper(table: Any, orders: Any, summary: Any, data: str) -> None:
    """The paper's Table 2 beside the measurement, and the orderings' outcomes."""
    from rich.table import Table

    from attnspec.theory.osa.train_paper import CITATION, ordering_sentence
    from attnspec.theory.osa.train_sources import DATA_LABELS

    t = Table(title=f"against {CITATION}", title_justify="left")
    here = f"attnspec ({DATA_LABELS.get(data, data)}), % [95% CI over seeds]"
    for col in ("model", "paper (MNIST), %", here, "rank paper / here"):
        t.add_column(col, justify="left" if col == "model" else "right")
    for row in table.to_dict("records"):
        ci = (
            ""
            if math.isnan(row["accuracy_ci_low"])
            else f" [{100 * row['accuracy_ci_low']:.1f}, {100 * row['accuracy_ci_high']:.1f}]"
        )
        t.add_row(
            row["label"],
            f"{100 * row['paper_accuracy']:.1f}",
            f"{100 * row['accuracy_mean']:.1f}{ci}",
            f"{row['paper_rank']} / {row['rank']}",
        )
    out_console.print(t)
    labels = dict(zip(summary["model"], summary["label"], strict=True))
    for line in ordering_sentence(orders, labels):
        out_console.print(f"paper's orderings {line}", highlight=False, soft_wrap=True)


def _summary_json(summary: Any) -> str:
    rows = []
    for row in summary.to_dict("records"):
        rows.append({k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()})
    return json.dumps(rows, indent=2)


def register_train(app: typer.Typer) -> None:
    """Register ``osa-train`` on ``app``."""

    @app.command("osa-train")
    @typer_command(OSA_TRAIN, separate=run_arguments_of("osa-train"))
    def osa_train(
        options: dict[str, Any],
        out: Path | None,
        resume: bool,
        csv: bool,
        json_out: Annotated[
            bool,
            typer.Option("--json", help="Print the per-model summary rows as JSON on stdout (and nothing else there)."),
        ] = False,
    ) -> None:
        """Train ViT, its skipless/LN-less ablations and the OSA-Transformer (QR, Newton–Schulz)
        on scikit-learn's 8x8 digits (default) or MNIST (--data mnist) with the same optimiser, seeds, budget
        and stopping rule
        (patience on validation accuracy); print test accuracy over seeds beside the OSA paper's
        Table 2 (MNIST) and which of its orderings reproduce."""
        with user_errors():
            from attnspec.cli.osa import run_and_write

            if resume and out is None:
                raise InputError("--resume needs --out: the directory of the interrupted run")
            try:
                result = run_and_write(
                    COMMAND,
                    options,
                    out,
                    csv=csv,
                    plot=True,
                    resume=resume,
                    progress=lambda s: err_console.print(s, highlight=False, soft_wrap=True),
                )
            except KeyboardInterrupt as e:
                err_console.print(interrupted_line(e, out), highlight=False, soft_wrap=True)
                raise typer.Exit(code=EXIT_INTERRUPTED) from None
            if out is not None:
                err_console.print(f"wrote {out} (tables, meta.json, figures)", highlight=False)
            summary = result.tables["osa_train_summary"]
            if json_out:
                typer.echo(_summary_json(summary))
            else:
                cfg, runs = result.meta["config"], result.tables["osa_train_runs"]
                _print_summary(
                    summary,
                    f"osa-train: {cfg['seeds']} seed(s), {result.meta['wall_seconds']:.0f} s; "
                    f"{result.meta['budget']['rule']}; runs took "
                    f"{int(runs['steps'].min())}–{int(runs['steps'].max())} steps",
                )
                _print_paper(
                    result.tables["osa_train_paper"],
                    result.tables["osa_train_orderings"],
                    summary,
                    cfg.get("data", "digits"),
                )
