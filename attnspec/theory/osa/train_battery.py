"""The osa-train battery: ``config_from_options → run → BatteryResult``.

Trains the five models of :mod:`attnspec.theory.osa.train` and returns their curves, runs,
summary and signal tables, with one ``measured`` row per model for claim ``osa.sec5``
(the paper's Section 5 sentences are measured, not decided: the setup is scaled down).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from attnspec.battery import BatteryResult
from attnspec.errors import InputError
from attnspec.theory.osa import train as lib
from attnspec.threads import torch_threads
from attnspec.verdicts import VerdictRow

COMMAND = "osa-train"
# The table names are the file contract with attnspec.plots.osa_train (which may not import theory).
CURVES_TABLE = "osa_train"
RUNS_TABLE = "osa_train_runs"
SUMMARY_TABLE = "osa_train_summary"
SIGNAL_TABLE = "osa_train_signal"

_FIELDS = ("models", "seeds", "seed", "epochs", "batch_size", "lr", "weight_decay", "grad_clip", "depth", "dim",
           "heads", "mlp_ratio", "patch_size", "alpha_init", "ns_steps", "ns_coefficients", "test_fraction")
_OPTIONS = (*_FIELDS, "quick", "threads")

#: What the paper used (Appendix D), recorded beside the scaled-down run in meta.json.
PAPER_SETUP: dict[str, Any] = {
    "data": "MNIST 28x28, patch 4, 50 tokens", "depth": 6, "dim": 64, "heads": 4, "mlp_ratio": 4,
    "activation": "GELU", "dropout": 0, "optimiser": "AdamW", "lr": 3e-4, "weight_decay": 0.05,
    "batch_size": 128, "grad_clip": 1.0, "epochs": 10, "alpha_init": 0.1, "ns_steps": 6,
    "table2": "values not recoverable from the text extraction of the paper",
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
        """Raise :class:`InputError` naming the bad option and its allowed range."""
        lib.validate_config(self.train)
        if isinstance(self.threads, bool) or not isinstance(self.threads, int) or self.threads < 1:
            raise InputError(f"--threads must be an integer >= 1, got {self.threads!r}")
        return self

    def identity(self) -> dict[str, Any]:
        """The training parameters that define the run (what ``--out`` compares)."""
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
    unknown = sorted(set(opts) - set(_OPTIONS))
    if unknown:
        raise InputError(f"osa-train has no option {unknown[0]!r}; options: {', '.join(_OPTIONS)}")
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


def run(config: OsaTrainConfig, *, progress: Callable[[str], None] | None = None) -> BatteryResult:
    """Train every model of ``config`` on every replicate.

    Returns
    -------
    BatteryResult
        Tables ``osa_train`` (curves), ``osa_train_runs``, ``osa_train_summary``,
        ``osa_train_signal``; one ``osa.sec5`` row (``measured``) per model.
    """
    config.validate()
    cfg = config.train
    with torch_threads(config.threads):
        if progress is not None:
            progress(f"osa-train: {len(cfg.models)} models x {cfg.seeds} seeds, {cfg.epochs} epochs, depth "
                     f"{cfg.depth}, d={cfg.dim}, h={cfg.heads}, {config.threads} thread(s)")
        t0, c0, load0 = time.perf_counter(), time.process_time(), _loadavg()
        result = lib.run_comparison(cfg, progress=progress)
        wall, cpu, load1 = time.perf_counter() - t0, time.process_time() - c0, _loadavg()
    tables = {CURVES_TABLE: result.curves, RUNS_TABLE: result.runs, SUMMARY_TABLE: result.summary,
              SIGNAL_TABLE: result.signal}
    meta = {
        "identity": config.identity(), "config": config.identity(), "quick": config.quick, "seed": cfg.seed,
        "replicate_seeds": result.replicate_seeds,
        "seeding": "replicate r: (split, init, batch-order) seeds = spawn_seeds(replicate_seeds[r], 3), "
                   "shared by every model of the replicate",
        "steps_per_run": int(result.runs["steps"].max()), "threads": config.threads,
        "wall_seconds": wall, "cpu_seconds": cpu, "load_average_1min": {"start": load0, "end": load1},
        "paper_setup": PAPER_SETUP, "departures": list(lib.DEPARTURES),
        "tables": {
            CURVES_TABLE: "one row per (model, replicate, split, step): train = mini-batch loss/accuracy at each "
                          "step, test = full test split at step 0 and after each epoch",
            RUNS_TABLE: "one row per (model, replicate): final test/train metrics, steps, wall time",
            SUMMARY_TABLE: "one row per model: test accuracy mean ± sd over replicates, paired difference to ViT "
                           "with a 95% t interval",
            SIGNAL_TABLE: "one row per (model, replicate, stage, block): RMS of the token representations at "
                          "initialisation on 256 training images (logits: sd)",
        },
    }
    return BatteryResult(COMMAND, training_rows(result.summary, cfg), tables, meta)


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
        ev += f"; {r['diverged_runs']} diverged; scaled-down setup on 8×8 digits (see meta.json departures)"
        rows.append(VerdictRow(
            claim="osa.sec5", reading="test-accuracy", verdict="measured",
            params={"model": r["model"], "epochs": cfg.epochs, "depth": cfg.depth, "dim": cfg.dim},
            estimate=float(r["test_accuracy_mean"]), trials=int(r["n_seeds"]), seed=cfg.seed, evidence=ev,
        ))
    return rows
