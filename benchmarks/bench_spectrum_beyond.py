"""Cost of the spectrum job's metrics beyond the cumulative curve, each against a named baseline in the same run.

    python benchmarks/bench_spectrum_beyond.py [--inputs 2] [--count 4] [--json benchmarks/bench_spectrum_beyond.json]

1. Metrics — on a 12-layer, 12-head, hidden-768 BERT (random weights: timing does not
   depend on them) at n = 512: the job's time per input with an aggregation of curve
   moments, effective rank, stable rank and reach index only (the baseline,
   re-implemented here) against the same with the shipped aggregation (energy and tail
   curves, σ2/σ1, numerical rank, rank for error ε, row entropy from P, per-input
   summaries). Forward pass and SVD are timed once; the two aggregations are timed on the
   same captured P and singular values (best of --repeat; the forward pass best of
   --repeat − 1), so the ratio is not swamped by the noise of the forward pass. Target: overhead <= 5% of the job's time per input.
2. Multi-length — `--seq-len 64,128,256,512` as one scaling job (one model load, inputs
   drawn once) against four single-length jobs, on MiniLM and WikiText-103 windows.
   Target: ratio <= 1.

Ratios, not absolute times, are the result: the machines are shared and noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import bench_common
import numpy as np
import torch

REPO = Path(__file__).resolve().parents[1]
N = 512


def _best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def _old_aggregation(acc_old, layer: int, sv: torch.Tensor) -> None:
    """The aggregation with curve moments and three metrics only (the baseline)."""
    from attnspec.spectra import metrics

    curves = metrics.cumulative_curve(sv)
    acc_old["curve"].add_samples(curves.numpy(), (layer,))
    for name, v in (
        ("effective_rank", metrics.effective_rank(sv)),
        ("stable_rank", metrics.stable_rank(sv)),
        ("reach_index", metrics.reach_index(curves).to(torch.float64)),
    ):
        acc_old[name].add_samples(v.numpy(), (layer,))


def bench_metrics(inputs: int, repeat: int) -> dict:
    from transformers import BertConfig, BertModel

    from attnspec.spectra import aggregate, engine, metrics
    from attnspec.spectra.capture import capture_attention

    torch.manual_seed(0)
    cfg = BertConfig(
        vocab_size=1000,
        hidden_size=768,
        num_hidden_layers=12,
        num_attention_heads=12,
        intermediate_size=3072,
        max_position_embeddings=N,
        attn_implementation="eager",
    )
    model = BertModel(cfg, add_pooling_layer=False).eval()
    ids = torch.randint(5, 1000, (inputs, N), generator=torch.Generator().manual_seed(1))
    mask = torch.ones_like(ids)
    captured: list = []

    def sink(la) -> None:  # noqa: ANN001
        captured.append((la.layer, la.probs.clone(), la.mask.clone(), engine.singular_values(la.probs)))

    with capture_attention(model, sink) as cap:
        core = float("inf")
        for _ in range(max(1, repeat - 1)):  # forward + SVD of every layer, best of repeat - 1
            captured.clear()
            t0 = time.perf_counter()
            cap.forward(ids, mask)
            core = min(core, time.perf_counter() - t0)
    L, H = 12, 12

    def old() -> None:
        acc = {
            "curve": aggregate._Moments((L, H, N)),
            **{m: aggregate._Moments((L, H)) for m in ("effective_rank", "stable_rank", "reach_index")},
        }
        for layer, _, _, sv in captured:
            _old_aggregation(acc, layer, sv)

    def new() -> None:
        acc = aggregate.SpectrumAccumulator(L, H, N)
        items = [(layer, sv, metrics.row_entropy(p, m)) for layer, p, m, sv in captured]
        acc.add_batch(items, np.arange(inputs))

    t_old, t_new = _best(old, repeat), _best(new, repeat)
    per_input_old = (core + t_old) / inputs
    overhead = (t_new - t_old) / inputs
    return {
        "model": "12 layers × 12 heads, hidden 768 (random weights), n = 512",
        "inputs": inputs,
        "forward_and_svd_s_per_input": core / inputs,
        "old_aggregation_s_per_input": t_old / inputs,
        "new_aggregation_s_per_input": t_new / inputs,
        "job_s_per_input_before": per_input_old,
        "overhead_fraction": overhead / per_input_old,
        "target_overhead_fraction": 0.05,
    }


def bench_lengths(count: int, repeat: int) -> dict:
    from attnspec.spectra.config import SpectrumConfig
    from attnspec.spectra.job import run_spectrum
    from attnspec.spectra.scaling import run_scaling

    lengths = [64, 128, 256, 512]
    data_dir = bench_common.data_dir()
    base = dict(model="minilm", data="wiki103", data_dir=data_dir, num_sentences=count, batch_size=4, device="cpu")

    def singles() -> None:  # the baseline: four separate jobs, each loads the model and draws its inputs
        with tempfile.TemporaryDirectory() as tmp:
            for n in lengths:
                run_spectrum(SpectrumConfig(**base, seq_len=n, out=Path(tmp) / f"single{n}"), progress=False)

    def scaling() -> None:
        with tempfile.TemporaryDirectory() as tmp:
            run_scaling(SpectrumConfig(**base, seq_len=N, out=Path(tmp) / "scaling"), lengths, progress=False)

    t_single, t_scaling = [], []
    for _ in range(repeat):  # alternate, so that a change of load hits both alike; best of each
        t_single.append(_best(singles, 1))
        t_scaling.append(_best(scaling, 1))
    return {
        "lengths": lengths,
        "inputs": count,
        "model": "all-MiniLM-L6-v2 (6 × 12)",
        "repeats": repeat,
        "four_single_runs_s": min(t_single),
        "one_scaling_run_s": min(t_scaling),
        "ratio": min(t_scaling) / min(t_single),
        "target_ratio": 1.0,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--inputs", type=int, default=2, help="inputs in the metrics benchmark (one batch)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--count", type=int, default=8, help="inputs per length in the multi-length benchmark")
    ap.add_argument("--length-repeat", type=int, default=2, help="alternating repeats of the multi-length benchmark")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    out = {
        "torch_threads": torch.get_num_threads(),
        "cpu_count": os.cpu_count(),
        "metrics": bench_metrics(args.inputs, args.repeat),
        "lengths": bench_lengths(args.count, args.length_repeat),
    }
    text = json.dumps(out, indent=2)
    print(text)
    if args.json is not None:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
