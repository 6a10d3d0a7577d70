"""`attnspec osa-train`: the OSA-Transformer vs ViT training comparison on 8×8 digits.

Parse options → :func:`attnspec.battery.run_battery` (validation in
:func:`attnspec.theory.osa.train_battery.config_from_options`, before any training) →
write tables + meta.json → figures from the saved tables → print the summary (or JSON
with ``--json``).
"""

from __future__ import annotations

import json
import math
from typing import Annotated, Any

import typer

from attnspec.cli._common import EXIT_INTERRUPTED, OutOpt, err_console, interrupted_line, out_console, user_errors
from attnspec.errors import InputError

COMMAND = "osa-train"


def _fmt(x: float, spec: str = ".3f") -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def _print_summary(summary: Any, title: str) -> None:
    from rich.table import Table

    t = Table(title=title, title_justify="left")
    for col, just in (("model", "left"), ("test acc ± sd", "right"), ("Δ vs ViT [95% CI]", "right"),
                      ("train loss", "right"), ("test loss", "right"), ("diverged", "right")):
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


def _print_paper(table: Any, orders: Any, summary: Any) -> None:
    """The paper's Table 2 beside the measurement, and the orderings' outcomes."""
    from rich.table import Table

    from attnspec.theory.osa.train_paper import CITATION, ordering_sentence

    t = Table(title=f"against {CITATION}", title_justify="left")
    for col in ("model", "paper (MNIST), %", "attnspec (8x8 digits), % [95% CI over seeds]", "rank paper / here"):
        t.add_column(col, justify="left" if col == "model" else "right")
    for row in table.to_dict("records"):
        ci = ("" if math.isnan(row["accuracy_ci_low"]) else
              f" [{100 * row['accuracy_ci_low']:.1f}, {100 * row['accuracy_ci_high']:.1f}]")
        t.add_row(row["label"], f"{100 * row['paper_accuracy']:.1f}", f"{100 * row['accuracy_mean']:.1f}{ci}",
                  f"{row['paper_rank']} / {row['rank']}")
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
    def osa_train(
        models: Annotated[str | None, typer.Option(
            "--models", help="Comma-separated models among vit, vit-noskip, vit-noskip-noln, osa-qr, osa-ns (default: all five).")] = None,
        seeds: Annotated[int | None, typer.Option("--seeds", help="Number of replicates (seeds) per model (default 3; --quick: 2).")] = None,
        seed: Annotated[int, typer.Option("--seed", help="Base seed; replicate seeds are spawned from it.")] = 0,
        epochs: Annotated[int | None, typer.Option("--epochs", help="Budget: at most this many epochs per run, the same for every model (default 30; --quick: 2; the paper: 10 MNIST epochs).")] = None,
        patience: Annotated[int | None, typer.Option("--patience", help="Stop after this many epochs without a higher validation accuracy and report the best-validation checkpoint; 0 = the whole budget, last model, as the paper (default 10).")] = None,
        val_fraction: Annotated[float | None, typer.Option("--val-fraction", help="Share of the training split held out for validation, read by the stopping rule (default 0.15, stratified).")] = None,
        batch_size: Annotated[int | None, typer.Option("--batch-size", help="Mini-batch size (default 64; --quick: 128; the paper: 128).")] = None,
        lr: Annotated[float | None, typer.Option("--lr", help="AdamW peak learning rate (default 3e-3; the paper: 3e-4).")] = None,
        schedule: Annotated[str | None, typer.Option("--schedule", help="Learning-rate schedule: cosine (from --lr to 0 over the budget of --epochs) or constant (the paper states none) (default cosine).")] = None,
        weight_decay: Annotated[float | None, typer.Option("--weight-decay", help="AdamW weight decay (default 0.05, as the paper).")] = None,
        grad_clip: Annotated[float | None, typer.Option("--grad-clip", help="Gradient-norm clipping (default 1.0, as the paper).")] = None,
        depth: Annotated[int | None, typer.Option("--depth", help="Transformer blocks (default 3; paper 6; --quick: 2).")] = None,
        dim: Annotated[int | None, typer.Option("--dim", help="Token width d (default 32; paper 64; --quick: 16).")] = None,
        heads: Annotated[int | None, typer.Option("--heads", help="Attention heads h (default 4 as the paper; --quick: 2).")] = None,
        mlp_ratio: Annotated[int | None, typer.Option("--mlp-ratio", help="MLP width ratio (default 4, as the paper).")] = None,
        patch_size: Annotated[int | None, typer.Option("--patch-size", help="Patch side on the 8x8 images: 1, 2, 4 or 8 (default 2: 16 patches plus a cls token).")] = None,
        alpha_init: Annotated[float | None, typer.Option("--alpha-init", help="Initial OSA alpha, finite (default 0.1, as the paper).")] = None,
        ns_steps: Annotated[int | None, typer.Option("--ns-steps", help="Newton–Schulz iterations K for osa-ns, >= 0 (default 6, as the paper).")] = None,
        ns_coefficients: Annotated[str | None, typer.Option(
            "--ns-coefficients", help="Newton–Schulz schedule: cubic, muon or polar-express (default cubic).")] = None,
        test_fraction: Annotated[float | None, typer.Option("--test-fraction", help="Held-out test fraction, in (0, 1) (default 0.2, stratified).")] = None,
        quick: Annotated[bool, typer.Option("--quick", help="Tiny models, 2 seeds, 2 epochs: runs in seconds (smoke test).")] = False,
        threads: Annotated[int, typer.Option("--threads", help="torch CPU threads (the machines are shared).")] = 1,
        csv: Annotated[bool, typer.Option("--csv", help="Also write CSV copies of the tables.")] = False,
        json_out: Annotated[bool, typer.Option("--json", help="Print the per-model summary rows as JSON on stdout (and nothing else there).")] = False,
        out: OutOpt = None,
        resume: Annotated[bool, typer.Option(
            "--resume", help="Continue an interrupted run in --out (same options): train only the missing runs.")] = False,
    ) -> None:
        """Train ViT, its skipless/LN-less ablations and the OSA-Transformer (QR, Newton–Schulz)
        on scikit-learn's 8x8 digits with the same optimiser, seeds, budget and stopping rule
        (patience on validation accuracy); print test accuracy over seeds beside the OSA paper's
        Table 2 (MNIST) and which of its orderings reproduce."""
        with user_errors():
            from attnspec.cli.osa import run_and_write

            options = dict(models=models, seeds=seeds, seed=seed, epochs=epochs, patience=patience,
                           val_fraction=val_fraction, batch_size=batch_size, lr=lr, schedule=schedule,
                           weight_decay=weight_decay, grad_clip=grad_clip, depth=depth, dim=dim, heads=heads,
                           mlp_ratio=mlp_ratio, patch_size=patch_size, alpha_init=alpha_init, ns_steps=ns_steps,
                           ns_coefficients=ns_coefficients, test_fraction=test_fraction, quick=quick, threads=threads)
            if resume and out is None:
                raise InputError("--resume needs --out: the directory of the interrupted run")
            try:
                result = run_and_write(COMMAND, options, out, csv=csv, plot=True, resume=resume,
                                       progress=lambda s: err_console.print(s, highlight=False, soft_wrap=True))
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
                _print_summary(summary, f"osa-train: {cfg['seeds']} seed(s), {result.meta['wall_seconds']:.0f} s; "
                                        f"{result.meta['budget']['rule']}; runs took "
                                        f"{int(runs['steps'].min())}–{int(runs['steps'].max())} steps")
                _print_paper(result.tables["osa_train_paper"], result.tables["osa_train_orderings"], summary)
