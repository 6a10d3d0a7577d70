"""Training check of the OSA-Transformer: the paper's Table 2 / Figure 1, in spirit, offline.

Claim being checked
-------------------
Zhang & Martens, "Orthogonal Self-Attention", Section 5 and Appendix D (Figure 1,
Table 2): a ViT whose softmax self-attention (SSA) is replaced by Orthogonal
Self-Attention (OSA, eq. 5; A(X) = exp(S) with S = (alpha / sqrt(d_v)) (Q Kᵀ − K Qᵀ)),
with the skip connections and LayerNorms removed and the Section 4 initialisation,
"is able to match the generalisation performance of the ViT baseline and approaches its
training speed, outperforming the ViT without skip connections"; removing skips and
LayerNorm from the softmax ViT "results in worse training speed and generalisation,
with the removal of layer norm especially degrading performance"; "QR appears to
slightly outperform Newton–Schulz".

This module does not decide those sentences; it measures them, and sets the measured test
accuracies beside the paper's Table 2 (:mod:`attnspec.theory.osa.train_paper`). Five models
are trained with the same optimiser settings, on the same data split, in the same batch
order, from the same seeds, and under the same stopping rule
(:mod:`attnspec.theory.osa.train_stopping`: patience on validation accuracy within a budget
of epochs):

* ``vit``              pre-LN ViT (Dosovitskiy 2020): x + MSA(LN(x)), x + MLP(LN(x)),
                       final LN, linear head on the [cls] token;
* ``vit-noskip``       the same without the two residual additions;
* ``vit-noskip-noln``  the same without residuals and without any LayerNorm;
* ``osa-qr``           OSA-Transformer (eqs. 1–4): X̂ = M-OSA(X), X = MLP(X̂), no skips,
                       no LayerNorm, OSA applied through Thm 2.1 with a QR basis;
* ``osa-ns``           the same with a Newton–Schulz basis (K = ``ns_steps`` iterations).

Setup (Appendix D), on MNIST or scaled to scikit-learn's bundled 8×8 digits
---------------------------------------------------------------------------
Paper (MNIST 28×28): patch 4 (49 patches + [cls] = 50 tokens), learnable 1-D position
embeddings, 6 blocks, d = 64, h = 4 heads, MLP ratio 4 with GELU, no dropout; AdamW,
lr 3e-4, weight decay 0.05, batch 128, gradient-norm clipping 1.0, cross-entropy, 10
epochs (about 4,690 steps), no learning-rate schedule stated. ViT init: Xavier
uniform for attention and MLP weights, zero biases, truncated normal N(0, 0.02²) on
[−2σ, 2σ] for the position embeddings and [cls] token. OSA-Transformer init: the
Section 4 scheme inside the OSA layer (Stiefel-sampled [W_Q, W_K], W_V, W_Oᵀ;
alpha = 0.1; no biases in OSA), SUO (scaled uniform orthogonal, Martens et al. 2021)
for the MLP weights with zero biases, the ViT init for the embedding and output layers.

``data = "mnist"`` (:mod:`attnspec.theory.osa.train_mnist`) trains on the paper's data at
the paper's model size and optimiser settings, within a step budget the same for every
model. The fast default, ``data = "digits"``: 1,797 digits (8×8, values 0..16), stratified fit / validation / test splits seeded
per replicate, pixels scaled by the fit split's mean and standard deviation, patch 2 (16
patches + [cls] = 17 tokens). Depth and width are scaled down so the comparison runs in
minutes on a 2-core CPU; 1,797 images give about 20 steps per epoch instead of MNIST's
469, so a fixed count of 10 epochs would stop every model far from convergence: instead
each model trains until its validation accuracy stops rising (learning rate
3e-3 on a cosine, batch 64; see :class:`TrainConfig`). Every departure is listed in
:func:`attnspec.theory.osa.train_paper.departures` and recorded in ``meta.json``.

Randomness: replicate ``r`` draws its split, its initialisation and its batch order
from child seeds of ``spawn_seeds(seed, seeds)[r]``; every model of a replicate uses
the same three child seeds, so model differences within a replicate are paired.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn

from attnspec.errors import InputError
from attnspec.errors import check_int as _check_int
from attnspec.numerics.stats import mean_ci, spawn_seeds
from attnspec.theory.osa.train_data import (  # noqa: F401  (patchify: re-exported, the data of the comparison)
    DigitsSplit,
    _check_float,
    _check_test_fraction,
    _check_val_fraction,
    load_digits_split,
    patchify,
)
from attnspec.theory.osa.train_models import (  # noqa: F401  (re-exported: the models of the comparison)
    MLP,
    MODELS,
    NUM_CLASSES,
    Block,
    Classifier,
    PatchEmbedding,
    SoftmaxAttention,
    _osa_class,
    build_model,
    count_parameters,
    suo_,
)
from attnspec.theory.osa.train_sources import IMAGE_SIDES, check_data, load_split
from attnspec.theory.osa.train_stopping import PatienceStop

#: Human-readable labels (the paper's Table 2 column names).
MODEL_LABELS: dict[str, str] = {
    "vit": "ViT",
    "vit-noskip": "ViT (no skip)",
    "vit-noskip-noln": "ViT (no skip, no LN)",
    "osa-qr": "OSA (QR)",
    "osa-ns": "OSA (NS)",
}

#: Learning-rate schedules: ``constant`` (the paper states none), ``cosine`` (from ``lr`` at
#: the first step to 0 at the last step of the budget, ``epochs`` epochs; a run the stopping
#: rule ends early stops partway down the curve).
SCHEDULES: tuple[str, ...] = ("constant", "cosine")

# ----------------------------------------------------------------------------- config


@dataclass(frozen=True)
class TrainConfig:
    """Everything that defines one training comparison (recorded in ``meta.json``).

    Defaults mirror Appendix D where the 8×8 data allow (optimiser, weight decay, clipping,
    heads, MLP ratio, alpha, K) and are scaled down elsewhere (depth, width). The training
    length is a stopping rule: at most ``epochs`` epochs, ending early once the validation
    accuracy has not risen for ``patience`` epochs (``patience = 0``: the whole budget, last
    model, as the paper).
    """

    models: tuple[str, ...] = MODELS
    seeds: int = 3
    seed: int = 0
    epochs: int = 30
    patience: int = 10
    val_fraction: float = 0.15
    batch_size: int = 64
    lr: float = 3e-3
    schedule: str = "cosine"
    weight_decay: float = 0.05
    grad_clip: float = 1.0
    depth: int = 3
    dim: int = 32
    heads: int = 4
    mlp_ratio: int = 4
    patch_size: int = 2
    alpha_init: float = 0.1
    ns_steps: int = 6
    ns_coefficients: str = "cubic"
    test_fraction: float = 0.2
    data: str = "digits"
    train_images: int = 0
    val_images: int = 0

    def __post_init__(self) -> None:
        validate_config(self)

    @property
    def tokens(self) -> int:
        """Sequence length N: patches + [cls]."""
        return (self.image_side // self.patch_size) ** 2 + 1

    @property
    def image_side(self) -> int:
        """The side of the images of ``data`` in pixels (8 for the digits, 28 for MNIST)."""
        return IMAGE_SIDES[self.data]

    def as_dict(self) -> dict[str, Any]:
        """The configuration as recorded in ``meta.json``.

        Returns
        -------
        dict of str to object
            Every field by name, ``models`` as a list.
        """
        d = asdict(self)
        d["models"] = list(self.models)
        return d


def quick_config(**overrides: Any) -> TrainConfig:
    """A tiny configuration that runs in seconds (tests, CI smoke runs).

    Parameters
    ----------
    **overrides
        TrainConfig fields replacing the tiny defaults (seeds 2, epochs 2, depth 2, dim 16, heads 2, batch 128).

    Returns
    -------
    TrainConfig
    """
    base = dict(seeds=2, epochs=2, depth=2, dim=16, heads=2, batch_size=128)
    base.update(overrides)
    return TrainConfig(**base)


def validate_config(cfg: TrainConfig) -> None:
    """Raise :class:`InputError` naming the first bad value of ``cfg`` and what is allowed.

    Parameters
    ----------
    cfg : TrainConfig

    Raises
    ------
    InputError
    """
    if not cfg.models:
        raise InputError(f"models must name at least one of {', '.join(MODELS)}")
    for m in cfg.models:
        if m not in MODELS:
            raise InputError(f"unknown model {m!r}; choose from {', '.join(MODELS)}")
    if len(set(cfg.models)) != len(cfg.models):
        raise InputError(f"models must not repeat, got {', '.join(cfg.models)}")
    _check_int("seeds", cfg.seeds, 1)
    _check_int("seed", cfg.seed, 0)
    _check_int("epochs", cfg.epochs, 1)
    _check_int("patience", cfg.patience, 0)
    _check_int("batch_size", cfg.batch_size, 1)
    _check_float("lr", cfg.lr, low=0.0, low_open=True)
    if cfg.schedule not in SCHEDULES:
        raise InputError(f"schedule must be one of {', '.join(SCHEDULES)}, got {cfg.schedule!r}")
    _check_float("weight_decay", cfg.weight_decay, low=0.0)
    _check_float("grad_clip", cfg.grad_clip, low=0.0, low_open=True)
    _check_int("depth", cfg.depth, 1)
    _check_int("dim", cfg.dim, 1)
    _check_int("heads", cfg.heads, 1)
    _check_int("mlp_ratio", cfg.mlp_ratio, 1)
    check_data(cfg)
    _check_float("alpha_init", cfg.alpha_init)
    _check_int("ns_steps", cfg.ns_steps, 0)
    if not isinstance(cfg.ns_coefficients, str) or not cfg.ns_coefficients:
        raise InputError(f"ns_coefficients must be a schedule name, got {cfg.ns_coefficients!r}")
    if "osa-ns" in cfg.models:
        from attnspec.numerics.linalg import ns_schedule

        ns_schedule(cfg.ns_coefficients, int(cfg.ns_steps))  # InputError naming the allowed schedules
    _check_test_fraction(cfg.test_fraction)
    _check_val_fraction(cfg.val_fraction, cfg.test_fraction)
    if cfg.dim % cfg.heads:
        raise InputError(f"dim must be a multiple of heads, got dim={cfg.dim} and heads={cfg.heads}")
    from attnspec.errors import check_memory

    # per block: Q, K, V and the output projection (4 d²) and the MLP (2 · mlp_ratio · d²) float32
    # weights, each with its gradient and Adam's two moments: 16 bytes a weight
    weights = cfg.depth * (4 + 2 * cfg.mlp_ratio) * cfg.dim**2
    check_memory(
        f"depth={cfg.depth}, dim={cfg.dim}, mlp_ratio={cfg.mlp_ratio} (the weights, gradients and Adam state)",
        16 * weights,
    )
    d_v = cfg.dim // cfg.heads
    if any(m.startswith("osa") for m in cfg.models) and 2 * d_v > cfg.dim:
        raise InputError(
            f"the OSA initialisation needs 2*d_v <= dim (d_v = dim/heads), got d_v={d_v}, dim={cfg.dim}; use heads >= 2"
        )


# ----------------------------------------------------------------------------- training


@dataclass
class RunResult:
    """One (model, replicate) run: its curve rows, its signal rows at init, its summary."""

    curves: list[dict[str, Any]] = field(default_factory=list)
    signal: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)


@torch.no_grad()
def signal_rms(model: Classifier, x: torch.Tensor) -> list[dict[str, Any]]:
    """Root-mean-square of the token representations through ``model`` on ``x``.

    One row per stage: ``("embed", 0)``, then ``("attn", l)`` and ``("mlp", l)`` for
    block l = 1..depth (after the sub-layer, its residual and its norm as the block
    applies them), and ``("logits", depth)`` (the standard deviation of the logits).
    Signal propagation at initialisation is what the paper's Section 4 is about.

    Parameters
    ----------
    model : Classifier
    x : Tensor (batch, P, p²)

    Returns
    -------
    list of dict
        stage, block, rms.
    """
    rows = []
    h = model.embed(x)  # (B, N, d)
    rows.append({"stage": "embed", "block": 0, "rms": float(h.pow(2).mean().sqrt())})
    for i, blk in enumerate(model.blocks, start=1):
        a = blk.attn(blk.norm1(h))
        h = h + a if blk.skip else a
        rows.append({"stage": "attn", "block": i, "rms": float(h.pow(2).mean().sqrt())})
        m = blk.mlp(blk.norm2(h))
        h = h + m if blk.skip else m
        rows.append({"stage": "mlp", "block": i, "rms": float(h.pow(2).mean().sqrt())})
    logits = model.head(model.norm(h[:, 0]))  # (B, 10)
    rows.append({"stage": "logits", "block": len(model.blocks), "rms": float(logits.std())})
    return rows


@torch.no_grad()
def evaluate(model: nn.Module, x: torch.Tensor, y: torch.Tensor, batch_size: int = 512) -> tuple[float, float]:
    """Mean cross-entropy and accuracy of ``model`` on (x, y), in eval mode.

    Parameters
    ----------
    model : nn.Module
    x : Tensor (n, P, p²)
    y : Tensor (n,)
    batch_size : int

    Returns
    -------
    (loss, accuracy) : tuple of float
    """
    was_training = model.training
    model.eval()
    total_loss, correct = 0.0, 0
    for i in range(0, len(y), batch_size):
        logits = model(x[i : i + batch_size])  # (b, 10)
        total_loss += float(F.cross_entropy(logits, y[i : i + batch_size], reduction="sum"))
        correct += int((logits.argmax(dim=1) == y[i : i + batch_size]).sum())
    model.train(was_training)
    return total_loss / len(y), correct / len(y)


def train_model(
    name: str,
    cfg: TrainConfig,
    data: DigitsSplit,
    *,
    init_seed: int,
    order_seed: int,
    replicate: int = 0,
    seed: int | None = None,
) -> RunResult:
    """Train model ``name`` on ``data`` with AdamW and gradient clipping under the stopping rule.

    After every epoch the validation split is evaluated and fed to a
    :class:`~attnspec.theory.osa.train_stopping.PatienceStop`; training ends when its
    patience runs out or after ``cfg.epochs`` epochs. With ``cfg.patience > 0`` the weights
    of the best validation epoch are restored and reported; with ``cfg.patience == 0`` the
    last weights are. Curves: one ``split="train"`` row per optimiser step (the mini-batch
    loss and accuracy before the step's update), one ``split="val"`` and one ``split="test"``
    row at step 0 and after every epoch (the test rows are recorded for the curves only:
    nothing reads them to stop or select). A non-finite loss stops the run and marks it
    ``diverged`` (its final metrics are still measured, not invented).

    Parameters
    ----------
    name : str
        One of :data:`MODELS`.
    cfg : TrainConfig
    data : DigitsSplit
    init_seed, order_seed : int
        Seeds of the initialisation and of the batch order.
    replicate : int
    seed : int, optional
        The replicate's seed, recorded in every row.

    Returns
    -------
    RunResult
    """
    t0, c0 = time.perf_counter(), time.process_time()
    model = build_model(name, cfg, init_seed)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    order = torch.Generator().manual_seed(int(order_seed))
    n = len(data.y_train)
    budget_steps = cfg.epochs * math.ceil(n / cfg.batch_size)
    # lr of the update at step t (0-based) = cfg.lr · lr_factor(t)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda t: lr_factor(cfg.schedule, t, budget_steps))
    ident = {"model": name, "replicate": replicate, "seed": seed}
    res = RunResult()
    rule = PatienceStop(cfg.patience)
    best_state: dict[str, torch.Tensor] | None = None

    def evaluate_epoch(step: int, epoch: int) -> None:
        nonlocal best_state
        for split, x, y in (("val", data.x_val, data.y_val), ("test", data.x_test, data.y_test)):
            loss, acc = evaluate(model, x, y)
            res.curves.append({**ident, "split": split, "step": step, "epoch": epoch, "loss": loss, "accuracy": acc})
            if split == "val" and rule.update(epoch, acc):
                best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}

    res.signal = [{**ident, **r} for r in signal_rms(model, data.x_train[:256])]
    evaluate_epoch(0, 0)
    step, epoch, stopped_by = 0, 0, "budget"
    while epoch < cfg.epochs:
        epoch += 1
        if _train_epoch(model, opt, sched, data, cfg, order, res, ident, epoch, step):
            stopped_by = "diverged"
        step = res.curves[-1]["step"]
        evaluate_epoch(step, epoch)
        if stopped_by == "diverged":
            break
        if rule.exhausted:
            stopped_by = "patience"
            break
    if cfg.patience > 0 and best_state is not None and stopped_by != "diverged":
        model.load_state_dict(best_state)  # the best-validation checkpoint is the model reported
        reported = rule.best_epoch
    else:
        reported = epoch
    # the curve rows of epoch `reported` were measured on the weights reported: read, not recomputed
    test_loss, test_acc = _curve_metrics(res.curves, "test", reported)
    val_loss, val_acc = _curve_metrics(res.curves, "val", reported)
    train_loss, train_acc = evaluate(model, data.x_train, data.y_train)
    res.summary = {
        **ident,
        "test_accuracy": test_acc,
        "test_loss": test_loss,
        "val_accuracy": val_acc,
        "val_loss": val_loss,
        "train_accuracy": train_acc,
        "train_loss": train_loss,
        "steps": step,
        "epochs_done": epoch,
        "best_epoch": reported,
        "best_step": _curve_step(res.curves, "val", reported),
        "stopped_by": stopped_by,
        "diverged": stopped_by == "diverged",
        "init_logit_std": res.signal[-1]["rms"],
        "n_params": count_parameters(model),
        "n_train": n,
        "n_val": len(data.y_val),
        "n_test": len(data.y_test),
        "wall_seconds": time.perf_counter() - t0,
        "cpu_seconds": time.process_time() - c0,  # every thread of the process: what a budget costs on a shared machine
    }
    return res


def lr_factor(schedule: str, step: int, budget_steps: int) -> float:
    """The learning rate of update ``step`` (0-based) as a fraction of the peak ``lr``.

    Parameters
    ----------
    schedule : {"constant", "cosine"}
    step : int
    budget_steps : int
        Updates in the whole budget (``epochs`` × steps per epoch), >= 1.

    Returns
    -------
    float
        1 for ``constant``; ``(1 + cos(π · step / budget_steps)) / 2`` for ``cosine``
        (1 at the first update, 0 after the last one of the budget).
    """
    if schedule == "constant":
        return 1.0
    return 0.5 * (1.0 + math.cos(math.pi * min(step, budget_steps) / budget_steps))


def _train_epoch(
    model: nn.Module,
    opt: torch.optim.Optimizer,
    sched: torch.optim.lr_scheduler.LRScheduler,
    data: DigitsSplit,
    cfg: TrainConfig,
    order: torch.Generator,
    res: RunResult,
    ident: Mapping[str, Any],
    epoch: int,
    step: int,
) -> bool:
    """One pass over the fit split in the order drawn from ``order``; one curve row per step.
    Returns True if a mini-batch loss was not finite (the pass stops there, before its update)."""
    n = len(data.y_train)
    perm = torch.randperm(n, generator=order)
    for i in range(0, n, cfg.batch_size):
        idx = perm[i : i + cfg.batch_size]
        xb, yb = data.x_train[idx], data.y_train[idx]  # (b, P, p²), (b,)
        logits = model(xb)  # (b, 10)
        loss = F.cross_entropy(logits, yb)
        step += 1
        lv = float(loss.detach())
        acc = float((logits.argmax(dim=1) == yb).float().mean())
        res.curves.append({**ident, "split": "train", "step": step, "epoch": epoch, "loss": lv, "accuracy": acc})
        if not math.isfinite(lv):
            return True
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        sched.step()
    return False


def _curve_metrics(curves: list[dict[str, Any]], split: str, epoch: int) -> tuple[float, float]:
    row = next(r for r in reversed(curves) if r["split"] == split and r["epoch"] == epoch)
    return float(row["loss"]), float(row["accuracy"])


def _curve_step(curves: list[dict[str, Any]], split: str, epoch: int) -> int:
    return int(next(r["step"] for r in reversed(curves) if r["split"] == split and r["epoch"] == epoch))


@dataclass
class TrainComparison:
    """Results of :func:`run_comparison`: tidy curves, signal at init, one row per run,
    one row per model."""

    curves: pd.DataFrame
    signal: pd.DataFrame
    runs: pd.DataFrame
    summary: pd.DataFrame
    config: TrainConfig
    replicate_seeds: list[int]
    wall_seconds: float


def replicate_seeds(cfg: TrainConfig) -> list[int]:
    """The per-replicate seeds derived from ``cfg.seed``.

    Parameters
    ----------
    cfg : TrainConfig

    Returns
    -------
    list of int
        ``cfg.seeds`` seeds.
    """
    return spawn_seeds(cfg.seed, cfg.seeds)


def run_comparison(
    cfg: TrainConfig,
    progress: Callable[[str], None] | None = None,
    *,
    done: Mapping[tuple[str, int], RunResult] | None = None,
    on_run: Callable[[str, int, RunResult], None] | None = None,
) -> TrainComparison:
    """Train every model of ``cfg`` on every replicate; return tidy curves and summaries.

    Every (model, replicate) run has its own seeds, so runs finished earlier (``done``, e.g.
    read back from an interrupted result) are taken as they are and only the others are
    trained: the tables are the same as those of one uninterrupted call.

    Parameters
    ----------
    cfg : TrainConfig
    progress : callable, optional
        Receives one line per finished run.
    done : mapping of (model, replicate) to RunResult, optional
        Runs already finished; not trained again.
    on_run : callable, optional
        Called as ``on_run(model, replicate, result)`` after each run trained here.

    Returns
    -------
    TrainComparison
        curves (one row per model, replicate, split, step), signal, runs (one row per
        model and replicate), summary (one row per model).
    """
    validate_config(cfg)
    if any(m.startswith("osa") for m in cfg.models):
        _osa_class()  # fail before any training if the OSA layer is unavailable
    t0 = time.perf_counter()
    rseeds = replicate_seeds(cfg)
    curves: list[dict[str, Any]] = []
    runs: list[dict[str, Any]] = []
    signal: list[dict[str, Any]] = []
    done = done or {}
    for r, rs in enumerate(rseeds):
        split_seed, init_seed, order_seed = spawn_seeds(rs, 3)
        data = None
        for name in cfg.models:
            res = done.get((name, r))
            kept = res is not None
            if res is None:
                if data is None:
                    data = load_split(cfg, split_seed % 2**32)
                res = train_model(name, cfg, data, init_seed=init_seed, order_seed=order_seed, replicate=r, seed=rs)
                if on_run is not None:
                    on_run(name, r, res)
            curves.extend(res.curves)
            signal.extend(res.signal)
            runs.append(res.summary)
            if progress is not None:
                s = res.summary
                which = "best validation" if cfg.patience else "last epoch"  # the weights the summary reports
                progress(
                    f"{name:<16} replicate {r}: test accuracy {s['test_accuracy']:.4f} at epoch "
                    f"{s['best_epoch']} ({which}), {s['epochs_done']} epochs = {s['steps']} steps "
                    f"(stopped by {s['stopped_by']}), {s['wall_seconds']:.1f} s"
                    + (" (kept from before)" if kept else "")
                )
    curves_df = pd.DataFrame(
        curves, columns=["model", "replicate", "seed", "split", "step", "epoch", "loss", "accuracy"]
    )
    runs_df = pd.DataFrame(runs)
    signal_df = pd.DataFrame(signal, columns=["model", "replicate", "seed", "stage", "block", "rms"])
    return TrainComparison(
        curves_df, signal_df, runs_df, summarise(runs_df, cfg.models), cfg, rseeds, time.perf_counter() - t0
    )


def summarise(runs: pd.DataFrame, models: Sequence[str] | None = None, baseline: str = "vit") -> pd.DataFrame:
    """One row per model: test accuracy mean ± std over replicates with a 95 % Student-t
    interval over replicates (the unit resampled: seeds), and the paired difference to
    ``baseline`` (same split, init seed and batch order) with its 95 % Student-t interval,
    when there are at least two replicates.

    Parameters
    ----------
    runs : DataFrame
        One row per (model, replicate), as in :attr:`TrainComparison.runs`.
    models : sequence of str, optional
    baseline : str

    Returns
    -------
    DataFrame
        One row per model.
    """
    models = list(models) if models is not None else list(dict.fromkeys(runs["model"]))
    base = runs[runs["model"] == baseline].set_index("replicate")["test_accuracy"] if baseline in models else None
    rows = []
    for m in models:
        g = runs[runs["model"] == m].sort_values("replicate")
        acc = g["test_accuracy"].to_numpy(dtype=float)
        k = len(acc)
        ok = k > 1 and bool(np.all(np.isfinite(acc)))
        ci = mean_ci(acc) if ok else None
        row: dict[str, Any] = {
            "model": m,
            "label": MODEL_LABELS[m],
            "n_seeds": k,
            "test_accuracy_mean": float(acc.mean()),
            "test_accuracy_std": float(acc.std(ddof=1)) if k > 1 else float("nan"),
            "test_accuracy_ci_low": ci.low if ci is not None else float("nan"),
            "test_accuracy_ci_high": ci.high if ci is not None else float("nan"),
            "test_accuracy_min": float(acc.min()),
            "test_accuracy_max": float(acc.max()),
            "test_loss_mean": float(g["test_loss"].mean()),
            "test_loss_std": float(g["test_loss"].std(ddof=1)) if k > 1 else float("nan"),
            "train_loss_mean": float(g["train_loss"].mean()),
            "train_accuracy_mean": float(g["train_accuracy"].mean()),
            "init_logit_std_mean": float(g["init_logit_std"].mean()) if "init_logit_std" in g else float("nan"),
            "diverged_runs": int(g["diverged"].sum()),
            "steps": int(g["steps"].max()),
            "steps_mean": float(g["steps"].mean()),
            "best_epochs": [int(e) for e in g["best_epoch"]] if "best_epoch" in g else [],
            "stopped_by_patience": int((g["stopped_by"] == "patience").sum()) if "stopped_by" in g else 0,
            "val_accuracy_mean": float(g["val_accuracy"].mean()) if "val_accuracy" in g else float("nan"),
            "n_params": int(g["n_params"].iloc[0]),
            "wall_seconds_mean": float(g["wall_seconds"].mean()),
            "test_accuracies": [float(a) for a in acc],
        }
        diff_mean = lo = hi = float("nan")
        if base is not None and m != baseline:
            d = g.set_index("replicate")["test_accuracy"] - base
            d = d.dropna().to_numpy(dtype=float)
            if len(d):
                diff_mean = float(d.mean())
            if len(d) >= 2 and np.all(np.isfinite(d)):
                ci = mean_ci(d)
                lo, hi = ci.low, ci.high
        row.update(
            {f"diff_vs_{baseline}_mean": diff_mean, f"diff_vs_{baseline}_ci_low": lo, f"diff_vs_{baseline}_ci_high": hi}
        )
        rows.append(row)
    return pd.DataFrame(rows)


def with_overrides(cfg: TrainConfig, **overrides: Any) -> TrainConfig:
    """``cfg`` with the non-None ``overrides`` applied (validated).

    Parameters
    ----------
    cfg : TrainConfig
    **overrides
        TrainConfig fields; None leaves a field as it is.

    Returns
    -------
    TrainConfig
    """
    return replace(cfg, **{k: v for k, v in overrides.items() if v is not None})
