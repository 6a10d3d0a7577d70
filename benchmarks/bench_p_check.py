"""Cost of checking each captured P (finite, non-negative, rows summing to 1) against the rest
of the per-layer work of a spectrum job, in the same run.

    python benchmarks/bench_p_check.py [--n 512] [--batch 4] [--heads 12] [--rounds 5] [--json PATH]

Per layer of a batch, the spectrum job's sink (attnspec.spectra.job._Sink) takes P's singular
values (the default method of the device) and its row entropy; the check
(attnspec.spectra.stochastic.check_stochastic) runs before them. Measured on one softmax
P of shape (batch, heads, n, n), float32 on the CPU, with one padded input: the check alone,
and the baseline, the sink's work without it (singular values + row entropy). The rounds
alternate the two; each figure is a median. Target: the check adds <= 2 % to the baseline.
The forward pass, which the job also pays per layer, is left out of the baseline, so the
ratio is an upper bound on the check's share of a whole job.

Ratios, not absolute times, are the result: the machines are shared and noisy.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=512)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()

    import torch

    from attnspec.spectra.engine import resolve_method, singular_values
    from attnspec.spectra.metrics import row_entropy
    from attnspec.spectra.stochastic import check_stochastic

    g = torch.Generator().manual_seed(0)
    mask = torch.ones(args.batch, args.n, dtype=torch.bool)
    mask[-1, args.n * 3 // 4 :] = False  # one input padded to 3/4 of the window
    scores = torch.randn(args.batch, args.heads, args.n, args.n, generator=g)
    scores = scores.masked_fill(~mask[:, None, None, :], float("-inf"))
    probs = torch.softmax(scores, dim=-1) * mask[:, None, :, None]  # (B, H, n, n), padding rows zero
    method = resolve_method("auto", probs.device)
    workspace = torch.empty(max(1 << 20, args.n), dtype=torch.float32)

    def baseline() -> None:
        singular_values(probs, method)
        row_entropy(probs, mask, causal=False, window=None, workspace=workspace)

    def check() -> None:
        check_stochastic(probs, mask, layer=0, model="bench")

    times: dict[str, list[float]] = {"baseline": [], "check": []}
    baseline(), check()  # warm-up
    for _ in range(args.rounds):
        for name, fn in (("baseline", baseline), ("check", check)):
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) for k, v in times.items()}
    result = {
        "shape": [args.batch, args.heads, args.n, args.n],
        "method": method,
        "rounds": args.rounds,
        "threads": torch.get_num_threads(),
        "baseline_s": round(med["baseline"], 5),
        "check_s": round(med["check"], 5),
        "check_over_baseline": round(med["check"] / med["baseline"], 5),
        "target": "<= 0.02",
    }
    print(json.dumps(result, indent=1))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
