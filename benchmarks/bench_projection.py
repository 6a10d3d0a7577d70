"""Cost of the Linformer-projection measurement against the scaling study it belongs to.

    python benchmarks/bench_projection.py [--lengths 64,128,256,512] [--inputs 4] [--study-inputs 100]
                                          [--json benchmarks/bench_projection.json]

Baseline: the scaling study itself (`attnspec spectrum --seq-len ... --projection-k none`), MiniLM on
WikiText-103 windows, timed on ``--inputs`` inputs, one model load, the model loaded before the
clock starts. Measured: the projection measurement at the default k (64, 128, 256; k < n) on its
fixed 8 documents at every length, on the same loaded model, timed right after the study. The
projection's cost does not grow with the study's number of inputs, so the result is the ratio
(study + projection) / study at ``--study-inputs`` inputs (the report's scaling study uses 100),
from the study's measured time per input. Target: <= 1.5.

Ratios, not absolute times, are the result: the machines are shared and noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import bench_common


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lengths", default="64,128,256,512")
    ap.add_argument("--inputs", type=int, default=4)
    ap.add_argument("--study-inputs", type=int, default=100)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()

    from attnspec.spectra.data.inputs import load_inputs
    from attnspec.spectra.models import load_model
    from attnspec.spectra.projection import (
        DEFAULT_INPUTS,
        DEFAULT_KS,
        measure_projection,
    )
    from attnspec.spectra.scaling import cut_inputs, parse_lengths

    lengths = parse_lengths(args.lengths)
    data_dir = bench_common.data_dir()
    encoder = load_model("minilm", device="cpu", dtype="float32")
    study = bench_common.time_scaling_study(encoder, lengths, args.inputs, data_dir)
    drawn = load_inputs(
        "wiki103", encoder.tokenizer, seq_len=lengths[-1], num_inputs=DEFAULT_INPUTS, seed=0, data_dir=data_dir
    )
    by_length = {n: (drawn if n == lengths[-1] else cut_inputs(drawn, encoder.tokenizer, n)).input_ids for n in lengths}
    t0 = time.perf_counter()
    rows = measure_projection(encoder, by_length, list(DEFAULT_KS), seed=0)
    projection = time.perf_counter() - t0
    per_input = study / args.inputs
    ratio = (per_input * args.study_inputs + projection) / (per_input * args.study_inputs)
    result = {
        "model": "minilm",
        "corpus": "wiki103 validation",
        "lengths": lengths,
        "ks": list(DEFAULT_KS),
        "study_inputs_timed": args.inputs,
        "study_s": round(study, 2),
        "study_s_per_input": round(per_input, 3),
        "projection_inputs": DEFAULT_INPUTS,
        "projection_rows": len(rows),
        "projection_s": round(projection, 2),
        "study_inputs_for_ratio": args.study_inputs,
        "ratio_with_projection": round(ratio, 3),
        "target": 1.5,
        "cpu_count": os.cpu_count(),
        "load_average_1min": round(os.getloadavg()[0], 2),
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
