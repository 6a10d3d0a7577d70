"""The osa-train battery: ``config_from_options → run → BatteryResult``.

Trains the five models of :mod:`attnspec.theory.osa.train` and returns their curves, runs,
summary and signal tables, the paper's Table 2 beside the measurement and the orderings
(:mod:`attnspec.theory.osa.train_paper`), with one ``measured`` row per model for claim ``osa.sec5``
(the paper's Section 5 sentences are measured, not decided: the setup is scaled down).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from attnspec.errors import InputError
from attnspec.options.checks import option_names
from attnspec.runtime.signals import InterruptedRun, deferred_interrupts
from attnspec.runtime.threads import torch_threads
from attnspec.theorem.result import BatteryResult
from attnspec.theory.osa import train as lib
from attnspec.theory.osa import train_paper as paper
from attnspec.theory.osa.train_sources import DATA_LABELS
from attnspec.verdicts.classify import VerdictRow

COMMAND = "osa-train"
# The table names are the file contract with attnspec.plots.osa_train (which may not import theory).
CURVES_TABLE = "osa_train"
RUNS_TABLE = "osa_train_runs"
SUMMARY_TABLE = "osa_train_summary"
SIGNAL_TABLE = "osa_train_signal"
PAPER_TABLE = "osa_train_paper"
ORDERINGS_TABLE = "osa_train_orderings"


#: What the paper used (Appendix D), recorded beside the scaled-down run in meta.json.
PAPER_SETUP: dict[str, Any] = {
    "data": "MNIST 28x28, patch 4, 50 tokens",
    "depth": 6,
    "dim": 64,
    "heads": 4,
    "mlp_ratio": 4,
    "activation": "GELU",
    "dropout": 0,
    "optimiser": "AdamW",
    "lr": 3e-4,
    "weight_decay": 0.05,
    "batch_size": 128,
    "grad_clip": 1.0,
    "epochs": 10,
    "alpha_init": 0.1,
    "ns_steps": 6,
    "table2": {"source": paper.CITATION, "test_accuracy": paper.PAPER_TABLE2},
}


@dataclass(frozen=True)
class OsaTrainConfig:
    """An osa-train run: the training config, whether it is ``--quick``, and torch threads.

    Parameters
    ----------
    train : TrainConfig
        Validated on construction.
    quick : bool
        Built from :func:`attnspec.theory.osa.train.quick_config`.
    threads : int
        torch CPU threads during training (>= 1).
    """

    train: lib.TrainConfig = field(default_factory=lib.TrainConfig)
    quick: bool = False
    threads: int = 1

    def validate(self) -> OsaTrainConfig:
        """Raise :class:`InputError` naming the bad option and its allowed range.

        Returns
        -------
        OsaTrainConfig
            This config, unchanged, once the training config and ``threads`` are checked.

        Raises
        ------
        InputError
            A training value, or ``threads``, out of its range.
        """
        lib.validate_config(self.train)
        from attnspec.runtime.threads import check_threads

        check_threads(self.threads, "--threads")  # capped: a huge pool makes OpenMP fail allocating it
        return self

    def identity(self) -> dict[str, Any]:
        """The training parameters that define the run (what ``--out`` compares).

        Returns
        -------
        dict of str to object
            :meth:`attnspec.theory.osa.train.TrainConfig.as_dict` of ``train``; ``quick`` and
            ``threads`` are not part of it.
        """
        return self.train.as_dict()


def config_from_options(options: Mapping[str, Any]) -> OsaTrainConfig:
    """The validated config of osa-train options (CLI names, dashes as underscores).

    Parameters
    ----------
    options : mapping
        ``models`` (a comma-separated string or a list), ``seeds``, ``seed``, ``epochs``, ...,
        ``quick`` (start from the tiny configuration), ``threads``; None values take the
        defaults.

    Returns
    -------
    OsaTrainConfig
    """
    opts = {str(k).replace("-", "_"): v for k, v in options.items() if v is not None}
    names = option_names(COMMAND)  # declared in attnspec.options.checks
    unknown = sorted(set(opts) - set(names))
    if unknown:
        raise InputError(f"osa-train has no option {unknown[0]!r}; options: {', '.join(names)}")
    if isinstance(opts.get("models"), str):
        raw = opts["models"]
        opts["models"] = tuple(m.strip() for m in raw.split(",") if m.strip())
        if not opts["models"]:
            raise InputError(f"--models must name at least one of {', '.join(lib.MODELS)}, got {raw!r}")
    elif "models" in opts:
        opts["models"] = tuple(opts["models"])
    quick = bool(opts.pop("quick", False))
    threads = opts.pop("threads", 1)
    base = lib.quick_config(models=lib.MODELS) if quick else lib.TrainConfig()
    return OsaTrainConfig(lib.with_overrides(base, **opts), quick, threads).validate()


def _loadavg() -> float | None:
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):  # pragma: no cover - not on every platform
        return None


def runs_from_tables(tables: Mapping[str, Any]) -> dict[tuple[str, int], lib.RunResult]:
    """The finished (model, replicate) runs held by the tables of a saved osa-train result.

    Parameters
    ----------
    tables : mapping of str to DataFrame
        At least ``osa_train_runs`` (one row per finished run), ``osa_train`` (curves) and
        ``osa_train_signal``, as written by :func:`run` or by an interrupted run.

    Returns
    -------
    dict of (model, replicate) to RunResult
        Each run's curve rows, signal rows and summary, as :func:`lib.train_model` made them.
    """

    def by_run(frame: Any) -> dict[tuple[str, int], list[dict[str, Any]]]:
        out: dict[tuple[str, int], list[dict[str, Any]]] = {}
        for row in frame.to_dict("records"):
            out.setdefault((row["model"], int(row["replicate"])), []).append(row)
        return out

    curves, signal = by_run(tables[CURVES_TABLE]), by_run(tables[SIGNAL_TABLE])
    return {
        key: lib.RunResult(curves.get(key, []), signal.get(key, []), rows[0])
        for key, rows in by_run(tables[RUNS_TABLE]).items()
    }


def _partial_result(
    config: OsaTrainConfig, kept: Mapping[tuple[str, int], lib.RunResult], rseeds: list[int]
) -> BatteryResult:
    """The finished runs of an interrupted training as a result marked ``status: partial``."""
    cfg = config.train
    order = [(m, r) for r in range(cfg.seeds) for m in cfg.models]  # run_comparison's order
    done = [key for key in order if key in kept]
    curves = [row for key in done for row in kept[key].curves]
    signal = [row for key in done for row in kept[key].signal]
    runs = pd.DataFrame([kept[key].summary for key in done])
    tables = {
        CURVES_TABLE: pd.DataFrame(curves, columns=list(_CURVE_COLUMNS)),
        RUNS_TABLE: runs,
        SIGNAL_TABLE: pd.DataFrame(signal, columns=list(_SIGNAL_COLUMNS)),
    }
    meta = {
        "identity": config.identity(),
        "config": config.identity(),
        "quick": config.quick,
        "seed": cfg.seed,
        "replicate_seeds": rseeds,
        "status": "partial",
        "runs_total": len(order),
        "runs_done": [{"model": m, "replicate": r} for m, r in done],
        "runs_missing": [{"model": m, "replicate": r} for m, r in order if (m, r) not in kept],
        "note": "interrupted: the tables hold the finished runs only (no summary, no verdicts, no figures); "
        "the same command with --resume trains the missing runs",
    }
    return BatteryResult(COMMAND, [], tables, meta)


_CURVE_COLUMNS = ("model", "replicate", "seed", "split", "step", "epoch", "loss", "accuracy")
_SIGNAL_COLUMNS = ("model", "replicate", "seed", "stage", "block", "rms")


def run(
    config: OsaTrainConfig, *, progress: Callable[[str], None] | None = None, previous: Mapping[str, Any] | None = None
) -> BatteryResult:
    """Train every model of ``config`` on every replicate.

    Parameters
    ----------
    config : OsaTrainConfig
    progress : callable, optional
    previous : mapping of str to DataFrame, optional
        The tables of an earlier (partial) result of the same config: its finished runs are
        kept, only the missing ones are trained (``--resume``).

    Returns
    -------
    BatteryResult
        Tables ``osa_train`` (curves), ``osa_train_runs``, ``osa_train_summary``,
        ``osa_train_signal``, ``osa_train_paper``, ``osa_train_orderings``; one ``osa.sec5`` row (``measured``) per model;
        ``meta["status"] == "complete"``.

    Raises
    ------
    attnspec.runtime.signals.InterruptedRun
        On Ctrl-C or SIGTERM during training, with the finished runs as a partial result.
    """
    config.validate()
    cfg = config.train
    done = runs_from_tables(previous) if previous else {}
    finished: list[tuple[str, int, lib.RunResult]] = []
    with torch_threads(config.threads):
        if progress is not None:
            progress(
                f"osa-train: {len(cfg.models)} models x {cfg.seeds} seeds, depth {cfg.depth}, d={cfg.dim}, "
                f"h={cfg.heads}, lr {cfg.lr:g} ({cfg.schedule}), batch {cfg.batch_size}, {config.threads} thread(s); "
                f"{budget(cfg)['rule']}" + (f"; {len(done)} run(s) kept from before" if done else "")
            )
        t0, c0, load0 = time.perf_counter(), time.process_time(), _loadavg()
        try:
            result = lib.run_comparison(
                cfg, progress=progress, done=done, on_run=lambda m, r, res: finished.append((m, r, res))
            )
        except KeyboardInterrupt as e:
            with deferred_interrupts():  # a second Ctrl-C must not lose the finished runs
                kept = {**done, **{(m, r): res for m, r, res in finished}}
                partial = _partial_result(config, kept, lib.replicate_seeds(cfg))
            raise InterruptedRun(partial, len(kept), len(cfg.models) * cfg.seeds, "runs") from e
        wall, cpu, load1 = time.perf_counter() - t0, time.process_time() - c0, _loadavg()
    tables = {
        CURVES_TABLE: result.curves,
        RUNS_TABLE: result.runs,
        SUMMARY_TABLE: result.summary,
        SIGNAL_TABLE: result.signal,
        PAPER_TABLE: paper.paper_table(result.summary),
        ORDERINGS_TABLE: paper.orderings(result.runs, cfg.models),
    }
    meta = {
        "identity": config.identity(),
        "config": config.identity(),
        "quick": config.quick,
        "seed": cfg.seed,
        "status": "complete",
        "runs_kept_from_before": len(done),
        "replicate_seeds": result.replicate_seeds,
        "seeding": "replicate r: (split, init, batch-order) seeds = spawn_seeds(replicate_seeds[r], 3), "
        "shared by every model of the replicate",
        "steps_per_run": int(result.runs["steps"].max()),
        "budget": budget(cfg),
        "threads": config.threads,
        "wall_seconds": wall,
        "cpu_seconds": cpu,
        "load_average_1min": {"start": load0, "end": load1},
        "paper_setup": PAPER_SETUP,
        "departures": paper.departures(cfg),
        "tables": {
            CURVES_TABLE: "one row per (model, replicate, split, step): train = mini-batch loss/accuracy at each "
            "step, test = full test split at step 0 and after each epoch",
            RUNS_TABLE: "one row per (model, replicate): final test/train metrics, steps, wall time",
            SUMMARY_TABLE: "one row per model: test accuracy mean ± sd over replicates, paired difference to ViT "
            "with a 95% t interval",
            SIGNAL_TABLE: "one row per (model, replicate, stage, block): RMS of the token representations at "
            "initialisation on 256 training images (logits: sd)",
            PAPER_TABLE: "one row per model: the paper's Table 2 accuracy (MNIST) beside the mean test accuracy "
            "with a 95% t interval over seeds (on the data of config.data)",
            ORDERINGS_TABLE: "one row per pair of models, the paper's higher first: the paper's difference, the "
            "paired difference with a 95% t interval over seeds, and whether the ordering reproduces",
        },
    }
    return BatteryResult(COMMAND, training_rows(result.summary, cfg), tables, meta)


def budget(cfg: lib.TrainConfig) -> dict[str, Any]:
    """The training budget, compute rule and stopping rule of ``cfg``, as stated in meta.json and the report.

    Parameters
    ----------
    cfg : TrainConfig

    Returns
    -------
    dict
        data, n_fit, max_epochs, patience, val_fraction, val_images, steps_per_epoch (on the
        fit split), max_steps, ``compute_rule`` and ``rule`` (one sentence each).
    """
    from attnspec.theory.osa.train_sources import fit_size

    per_epoch = math.ceil(fit_size(cfg) / cfg.batch_size)
    rule = (
        f"stop after {cfg.patience} epochs without a higher validation accuracy, report the best-validation checkpoint"
        if cfg.patience
        else "no early stopping: the whole budget, last model reported"
    )
    return {
        "data": cfg.data,
        "n_fit": fit_size(cfg),
        "max_epochs": cfg.epochs,
        "patience": cfg.patience,
        "val_fraction": cfg.val_fraction,
        "val_images": cfg.val_images,
        "steps_per_epoch": per_epoch,
        "max_steps": per_epoch * cfg.epochs,
        "compute_rule": f"the same step budget for every model: {per_epoch * cfg.epochs} optimiser steps of batch "
        f"{cfg.batch_size} at most, over the same fit images in the same order per seed",
        "rule": f"at most {cfg.epochs} epochs = {per_epoch * cfg.epochs} steps per run; {rule}",
    }


def training_rows(summary: Any, cfg: lib.TrainConfig) -> list[VerdictRow]:
    """One ``measured`` row of claim ``osa.sec5`` per model: mean test accuracy, and the
    paired difference to ViT with its 95% t interval in the evidence.

    Parameters
    ----------
    summary : DataFrame
        One row per model (:func:`attnspec.theory.osa.train.summarise`).
    cfg : TrainConfig

    Returns
    -------
    list of VerdictRow
    """
    rows = []
    for r in summary.to_dict("records"):
        diff = r.get("diff_vs_vit_mean", math.nan)
        lo, hi = r.get("diff_vs_vit_ci_low", math.nan), r.get("diff_vs_vit_ci_high", math.nan)
        ev = f"{r['label']}: test accuracy {r['test_accuracy_mean']:.4f} over {r['n_seeds']} replicate(s)"
        if isinstance(diff, float) and math.isfinite(diff):
            ev += f"; paired difference to ViT {diff:+.4f}"
            if math.isfinite(lo):
                ev += f", 95% t interval [{lo:+.4f}, {hi:+.4f}]"
        if r["model"] in paper.PAPER_TABLE2:
            ev += f"; paper's Table 2 (MNIST): {paper.PAPER_TABLE2[r['model']]:.3f}"
        ev += f"; {r['diverged_runs']} diverged; on {DATA_LABELS[cfg.data]} (see meta.json departures)"
        rows.append(
            VerdictRow(
                claim="osa.sec5",
                reading="test-accuracy",
                verdict="measured",
                params={
                    "model": r["model"],
                    "epochs": cfg.epochs,
                    "patience": cfg.patience,
                    "depth": cfg.depth,
                    "dim": cfg.dim,
                },
                estimate=float(r["test_accuracy_mean"]),
                trials=int(r["n_seeds"]),
                seed=cfg.seed,
                evidence=ev,
            )
        )
    return rows
