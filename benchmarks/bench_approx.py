"""Cost of the approximations of attention (the fixed-k study) against the scaling study they belong to.

    python benchmarks/bench_approx.py [--lengths 64,128,256,512] [--ks 64,128,256] [--split 8,8]
                                      [--inputs 4] [--study-inputs 100] [--json benchmarks/bench_approx.json]

Baseline: the scaling study itself (``attnspec spectrum --seq-len ...`` without ``--approx``),
MiniLM on WikiText-103 windows, timed on ``--inputs`` inputs, one model load, the model loaded
before the clock starts. Measured: the approximations (linformer-fit, linformer-proof, performer,
nystrom and the two references at every k < n; fits on the training documents, errors and the
end-to-end run on the held-out ones) on the same loaded model, timed right after the study. Their
cost does not grow with the study's number of inputs, so the result is the ratio
(study + approximations) / study at ``--study-inputs`` inputs (the report's scaling study uses 100),
from the study's measured time per input. Target: <= 2.

Ratios, not absolute times, are the result: the machines are shared and noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import bench_common

METHODS = ["linformer-fit", "linformer-proof", "performer", "nystrom"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lengths", default="64,128,256,512")
    ap.add_argument("--ks", default="64,128,256")
    ap.add_argument("--split", default="8,8")
    ap.add_argument("--inputs", type=int, default=4)
    ap.add_argument("--study-inputs", type=int, default=100)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()

    from attnspec.spectra.approx.saved import make_plan
    from attnspec.spectra.approx.study import measure_approximations
    from attnspec.spectra.data.inputs import load_inputs
    from attnspec.spectra.models import load_model
    from attnspec.spectra.scaling import cut_inputs, parse_lengths

    lengths = parse_lengths(args.lengths)
    plan = make_plan(METHODS, args.ks, args.split, seed=0)
    data_dir = bench_common.data_dir()
    encoder = load_model("minilm", device="cpu", dtype="float32")
    study = bench_common.time_scaling_study(encoder, lengths, args.inputs, data_dir)
    count = plan.train + plan.held_out
    drawn = load_inputs("wiki103", encoder.tokenizer, seq_len=lengths[-1], num_inputs=count, seed=0, data_dir=data_dir)
    by_length = {n: (drawn if n == lengths[-1] else cut_inputs(drawn, encoder.tokenizer, n)).input_ids for n in lengths}
    t0 = time.perf_counter()
    tables = measure_approximations(encoder, by_length, plan)
    approx = time.perf_counter() - t0
    per_input = study / args.inputs
    ratio = (per_input * args.study_inputs + approx) / (per_input * args.study_inputs)
    result = {
        "model": "minilm",
        "corpus": "wiki103 validation",
        "lengths": lengths,
        "ks": plan.ks,
        "methods": plan.all_methods(),
        "split": [plan.train, plan.held_out],
        "fit_steps": 150,
        "study_inputs_timed": args.inputs,
        "study_s": round(study, 2),
        "study_s_per_input": round(per_input, 3),
        "approx_rows": len(tables["approx"]),
        "approx_s": round(approx, 2),
        "study_inputs_for_ratio": args.study_inputs,
        "ratio_with_approx": round(ratio, 3),
        "target": 2.0,
        "cpu_count": os.cpu_count(),
        "load_average_1min": round(os.getloadavg()[0], 2),
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
