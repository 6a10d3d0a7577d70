"""Cost of one training step of each `attnspec osa-train` model, against the ViT baseline.

Baseline (same run, same process, same thread count): one AdamW step (forward, backward,
clipping, update) of the pre-LN ViT on a batch of the default size (64) of digits. Each
model's median step time is reported with its ratio to the baseline, and the most training
time the default `attnspec osa-train` can take is projected: models x seeds x the budget's
steps (the stopping rule ends most runs earlier; the per-epoch evaluations are not counted).

    python benchmarks/bench_osa_train.py [--threads 1] [--repeats 15] [--depth D] [--dim D]

Writes benchmarks/bench_osa_train.json next to this script.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from attnspec.theory.osa import train as ot


def step_times(name: str, cfg: ot.TrainConfig, data: ot.DigitsSplit, repeats: int) -> list[float]:
    model = ot.build_model(name, cfg, seed=0)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    xb, yb = data.x_train[: cfg.batch_size], data.y_train[: cfg.batch_size]
    times = []
    for i in range(repeats + 3):
        t0 = time.perf_counter()
        loss = F.cross_entropy(model(xb), yb)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        if i >= 3:  # warm-up steps excluded
            times.append(time.perf_counter() - t0)
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--depth", type=int, default=None)
    ap.add_argument("--dim", type=int, default=None)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    cfg = ot.with_overrides(ot.TrainConfig(), depth=args.depth, dim=args.dim)
    data = ot.load_digits_split(cfg.patch_size, cfg.test_fraction, seed=0, val_fraction=cfg.val_fraction)
    steps_per_epoch = math.ceil(len(data.y_train) / cfg.batch_size)  # on the fit split
    rows = []
    base = None
    for name in ot.MODELS:
        ts = step_times(name, cfg, data, args.repeats)
        med = statistics.median(ts)
        base = med if name == "vit" else base
        rows.append({"model": name, "median_step_s": med, "min_step_s": min(ts), "ratio_vs_vit": med / base})
    total_step = sum(r["median_step_s"] for r in rows)
    projected = total_step * steps_per_epoch * cfg.epochs * cfg.seeds
    print(
        f"batch {cfg.batch_size}, depth {cfg.depth}, d={cfg.dim}, h={cfg.heads}, N={cfg.tokens}, "
        f"{args.threads} thread(s), median of {args.repeats} steps"
    )
    print(f"{'model':<16} {'step (ms)':>10} {'x ViT':>7}")
    for r in rows:
        print(f"{r['model']:<16} {1e3 * r['median_step_s']:>10.1f} {r['ratio_vs_vit']:>7.2f}")
    print(
        f"projected default run, whole budget: {cfg.seeds} seeds x {cfg.epochs} epochs x {steps_per_epoch} steps "
        f"= {projected:.0f} s of training at most (plus evaluation)"
    )
    out = {
        "config": cfg.as_dict(),
        "threads": args.threads,
        "repeats": args.repeats,
        "rows": rows,
        "projected_default_seconds_at_most": projected,
        "load_average_1min": os.getloadavg()[0],
        "torch": torch.__version__,
    }
    Path(__file__).with_suffix(".json").write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
