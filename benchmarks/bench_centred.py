"""Cost of the metric c_centred (the spectrum of P minus its mean row) in a spectrum run.

    python benchmarks/bench_centred.py [--n 512] [--repeats 3] [--method lapack] [--json benchmarks/bench_centred.json]

Baseline: what the spectrum run's sink does for every layer's P without the metric — P's
singular values (the engine) and its row entropy. Measured: the same plus c_centred's extra
work, C = P − mean row (:func:`attnspec.spectra.centred.centred_stack`) and C's singular values,
on the real P of MiniLM (all-MiniLM-L6-v2: 6 layers × 12 heads) for one input of n tokens of
WikiText-103, and the forward pass of that input for scale. Each timing is the best of
``--repeats``. Ratios, not absolute times, are the result: the machines are shared and noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _best(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--method", default="lapack")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    import torch

    from attnspec.spectra.capture import collect_attention
    from attnspec.spectra.centred import centred_stack
    from attnspec.spectra.engine import singular_values
    from attnspec.spectra.metrics import row_entropy
    from attnspec.spectra.models import load_model

    encoder = load_model("minilm", device="cpu")
    data = Path(os.environ.get("ATTNSPEC_DATA_DIR", REPO.parent / "shared" / "data"))
    text = (data / "wikitext103" / "wiki.valid.raw").read_text(encoding="utf-8")[:20000]
    ids = encoder.tokenizer(text, truncation=True, max_length=args.n, return_tensors="pt")["input_ids"]
    mask = torch.ones_like(ids, dtype=torch.bool)
    forward = _best(lambda: collect_attention(encoder.model, ids), args.repeats)
    layers = collect_attention(encoder.model, ids)  # every layer's P, (1, H, n, n)

    def baseline() -> None:
        for p in layers:
            singular_values(p, args.method)
            row_entropy(p, mask)

    def centred() -> None:
        for p in layers:
            singular_values(centred_stack(p, mask), args.method)

    base, extra = _best(baseline, args.repeats), _best(centred, args.repeats)
    result = {
        "model": "minilm",
        "n": int(ids.shape[1]),
        "layers_x_heads": f"{len(layers)} x {layers[0].shape[1]}",
        "method": args.method,
        "threads": torch.get_num_threads(),
        "forward_s": round(forward, 4),
        "sink_without_c_centred_s": round(base, 4),
        "c_centred_extra_s": round(extra, 4),
        "extra_over_sink": round(extra / base, 3),
        "extra_over_forward_plus_sink": round(extra / (forward + base), 3),
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
