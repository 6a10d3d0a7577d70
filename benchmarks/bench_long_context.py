"""Long context: CPU time and peak memory per input of the spectrum engine on a real decoder, against
a naive ``output_attentions`` + numpy loop, each method's error against an exact reference, and the
coverage of ``longn``'s per-matrix bounds.

    python benchmarks/bench_long_context.py --n 2048,4096 --layers 0,18,29 --methods gram,gram32,longn
        [--model smollm2] [--naive-max 1024] [--reference-max 2048] [--threads 1] [--json FILE]
    python benchmarks/bench_long_context.py --n 8192 --layers 0 --methods gram32 --reference-max 0
    python benchmarks/bench_long_context.py --dtype-check --n 512 [--json FILE]

For each n, one WikiText-103 window of n tokens (seed 0) goes through the model once per
method, each in a fresh subprocess (so that its peak RSS, ``ru_maxrss``, is its own):

* ``engine:<method>`` — attnspec's capture (one layer's P alive at a time) and
  ``singular_values(P, method)`` + ``row_entropy`` on the layers in ``--layers`` (``all``: every
  layer), as the job does (``longn`` seeded per input and returning its per-matrix bounds, as the
  job does); every layer's P reaches the sink, which records the peak RSS so far at each layer
  (``rss_by_layer_mb``: flat when one layer's P is alive at a time);
* ``naive`` — ``model(..., output_attentions=True)`` (every layer's P kept until the end),
  then ``numpy.linalg.svd(P, compute_uv=False)`` head by head; run only while n <= --naive-max
  (at n = 4096 the 30 × 9 float32 P of SmolLM2 alone take 18 GB).

The forward pass runs every layer; unless ``--layers all``, the per-input cost of the whole model
is extrapolated as forward + (reduction per layer) × num_layers and labelled so, in wall seconds
and in CPU seconds of the process (``--threads`` torch and engine threads, default one; on a
shared machine the CPU figures are the ones to compare). Errors, on the reduced layers: largest
|c_i − c_i(ref)| over the cumulative, energy and σ₁-less curves, the largest relative error of the
effective and stable ranks, σ₂/σ₁ and Σσ, the largest absolute error of the integer metrics (index
where c reaches 0.9, rank for error 0.1, numerical rank), and for ``longn`` how many matrices'
exact curve errors exceed their bounds. The reference is float64 SVD (numpy ``dgesdd``) while
n <= --reference-max, else the exact float64 ``gram`` of the same run when ``gram`` is among the
methods and runs first (its values are handed to the later methods through a scratch file, after
their timing); without either, errors are not measured. Below --reference-max the float64 copies
kept for the reference count in the peak RSS. ``--dtype-check`` instead compares the curves of the
model run in bfloat16 with the float32 model's (2 windows, every layer), what a bfloat16 run's
meta.json states. Figures: docs/spectrum.md, "Long context", and docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _coverage(svs: dict, reference: dict, bounds: dict) -> dict:
    """longn's per-matrix bounds against the truth: matrices whose exact error exceeds their bound,
    the largest bound, and the largest ratio error / bound (curve and σ₁-less curve)."""
    import torch

    from attnspec.spectra.metrics import cumulative_curve, tail_curve

    out: dict = {}
    for name, f in (("curve", cumulative_curve), ("tail_curve", tail_curve)):
        over, ratio, largest, count = 0, 0.0, 0.0, 0
        for layer in reference:
            a, b = torch.from_numpy(svs[layer].copy()), torch.from_numpy(reference[layer])
            err = (f(a) - f(b)).abs().amax(-1)  # (H,)
            bound = torch.as_tensor(bounds[layer][name])
            over += int((err > bound).sum())
            ratio = max(ratio, float((err / bound).max()))
            largest = max(largest, float(bound.max()))
            count += int(err.numel())
        out[f"{name}_bound_violations"] = f"{over} of {count}"
        out[f"{name}_bound_max"] = largest
        out[f"{name}_error_over_bound_max"] = round(ratio, 4)
    return out


def _errors(svs: dict, reference: dict) -> dict:
    """Largest errors over the captured layers' heads: curves (max abs), metrics (max rel or abs)."""
    import torch

    from attnspec.spectra.metrics import (
        cumulative_curve,
        effective_rank,
        energy_curve,
        numerical_rank,
        rank_for_error,
        reach_index,
        sigma_ratio,
        stable_rank,
        tail_curve,
    )

    out: dict = {}
    for layer in reference:
        a, b = torch.from_numpy(svs[layer].copy()), torch.from_numpy(reference[layer])
        for name, f in (("curve", cumulative_curve), ("energy_curve", energy_curve), ("tail_curve", tail_curve)):
            out[f"{name}_max_abs_error"] = max(out.get(f"{name}_max_abs_error", 0.0), float((f(a) - f(b)).abs().max()))
        for name, f in (
            ("effective_rank", effective_rank),
            ("stable_rank", stable_rank),
            ("sigma2_over_sigma1", sigma_ratio),
            ("nuclear_norm", lambda s: s.sum(-1)),
        ):
            key = f"{name}_max_rel_error"
            out[key] = max(out.get(key, 0.0), float(((f(a) - f(b)).abs() / f(b)).max()))
        for name, f in (
            ("reach_index", lambda s: reach_index(cumulative_curve(s))),
            ("rank_for_error_0.1", lambda s: rank_for_error(s, 0.1)),
            ("numerical_rank", numerical_rank),
        ):
            key = f"{name}_max_abs_error"
            out[key] = max(out.get(key, 0), int((f(a) - f(b)).abs().max()))
    return out


def _one(
    model_name: str,
    n: int,
    layers: list[int] | None,
    method: str,
    data_dir: str,
    reference_max: int,
    threads: int = 1,
    ref_file: Path | None = None,
) -> dict:
    """One method on one window: timings, peak RSS, errors (``layers`` None: every layer reduced)."""
    import numpy as np
    import torch

    from attnspec.spectra.capture import capture_attention
    from attnspec.spectra.data.inputs import load_inputs
    from attnspec.spectra.models import load_model

    torch.set_num_threads(threads)
    loaded = load_model(model_name, device="cpu")
    layers = list(range(loaded.num_layers)) if layers is None else layers
    inputs = load_inputs("wiki103", loaded.tokenizer, seq_len=n, num_inputs=1, seed=0, data_dir=data_dir)
    ids = torch.tensor([inputs.input_ids[0]], dtype=torch.long)
    rss_loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    svs: dict[int, np.ndarray] = {}
    reference: dict[int, np.ndarray] = {}
    bounds: dict[int, dict] = {}
    rss_by_layer: list[float] = []
    if method == "naive":
        t_fwd, reduce_s, reduce_cpu, total_cpu = _naive(loaded, ids, layers, svs, reference, n <= reference_max)
        total = t_fwd + reduce_s
    else:
        timing = {"reduce_s": 0.0, "reduce_cpu": 0.0}
        kept: dict[int, torch.Tensor] = {}
        sink = _engine_sink(method, ids, layers, threads, svs, bounds, kept, timing, rss_by_layer, n <= reference_max)
        with capture_attention(loaded.model, sink) as cap:
            t0 = time.perf_counter()  # the capture's probe forward is set-up, not per input
            cpu0 = time.process_time()
            cap.forward(ids)
        total = time.perf_counter() - t0
        total_cpu = time.process_time() - cpu0
        reduce_s, reduce_cpu = timing["reduce_s"], timing["reduce_cpu"]
        t_fwd = total - reduce_s
        for layer, p in kept.items():
            reference[layer] = np.linalg.svd(p.numpy(), compute_uv=False)
    rss_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # before the reference's copies count
    ref_name = "float64 SVD (numpy dgesdd)" if reference else None
    if not reference and ref_file is not None:
        if method == "gram":  # the exact reference of the later methods of this n
            np.savez(ref_file, **{str(k): v for k, v in svs.items()})
        elif ref_file.exists():
            with np.load(ref_file) as z:
                reference = {int(k): z[k] for k in z.files if int(k) in svs}
            ref_name = "the float64 gram of this run"
    fwd_cpu = total_cpu - reduce_cpu  # CPU seconds of this process, forward and set-up
    matrices = len(layers) * loaded.num_heads
    return {
        "n": n,
        "method": method,
        "layers_reduced": layers,
        "num_layers": loaded.num_layers,
        "num_heads": loaded.num_heads,
        "threads": threads,
        "forward_s": round(t_fwd, 3),
        "reduce_s": round(reduce_s, 3),
        "measured_s": round(total, 3),
        "measured_cpu_s": round(total_cpu, 1),
        "extrapolated_all_layers_s": round(t_fwd + reduce_s / len(layers) * loaded.num_layers, 2),
        "forward_cpu_s": round(fwd_cpu, 3),
        "reduce_cpu_s_per_matrix": round(reduce_cpu / matrices, 3),
        "extrapolated_all_layers_cpu_s": round(fwd_cpu + reduce_cpu / len(layers) * loaded.num_layers, 1),
        "peak_rss_mb": round(rss_peak, 1),
        "rss_after_load_mb": round(rss_loaded, 1),
        "rss_by_layer_mb": [round(x) for x in rss_by_layer],
        **({"method_params": _method_params(method)} if method == "longn" else {}),
        **(
            {"reference": ref_name, "reference_matrices": len(reference) * loaded.num_heads, **_errors(svs, reference)}
            if reference
            else {"errors": f"not measured (n > --reference-max {reference_max}, no gram reference)"}
        ),
        **(_coverage(svs, reference, bounds) if reference and bounds else {}),
        **({"curve_bound_max": max(float(b["curve"].max()) for b in bounds.values())} if bounds else {}),
    }


def _engine_sink(
    method: str,
    ids,
    layers: list[int],
    threads: int,
    svs: dict,
    bounds: dict,
    kept: dict,
    timing: dict,
    rss_by_layer: list,
    keep_reference: bool,
):
    """The capture's sink: every layer's P arrives (the peak RSS is recorded at each), the layers
    in ``layers`` are reduced as the job reduces them and timed."""
    from attnspec.spectra.engine import singular_values
    from attnspec.spectra.longn import input_seeds
    from attnspec.spectra.metrics import row_entropy

    def sink(la) -> None:
        if la.layer in layers:
            t, c = time.perf_counter(), time.process_time()
            if method == "longn":  # seeded per input, as the job does; its per-matrix bounds kept
                sv, b = singular_values(
                    la.probs,
                    method,
                    seeds=input_seeds(ids.tolist(), la.layer, la.probs.shape[1]),
                    return_error=True,
                    workers=threads,
                )
                bounds[la.layer] = {k: v[0].numpy() for k, v in b.items()}
            else:
                sv = singular_values(la.probs, method, workers=threads)
            svs[la.layer] = sv[0].numpy()
            row_entropy(la.probs, la.mask, causal=True)
            timing["reduce_s"] += time.perf_counter() - t
            timing["reduce_cpu"] += time.process_time() - c
            if keep_reference:  # for the float64 reference, after timing (not kept past --reference-max)
                kept[la.layer] = la.probs[0].double().clone()
        rss_by_layer.append(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)

    return sink


def _naive(loaded, ids, layers: list[int], svs: dict, reference: dict, with_reference: bool) -> tuple:
    """``output_attentions=True`` (every layer's P kept), then numpy's SVD head by head."""
    import numpy as np
    import torch

    cpu0, t0 = time.process_time(), time.perf_counter()
    with torch.inference_mode():
        out = loaded.model(input_ids=ids, output_attentions=True, use_cache=False)
    t_fwd = time.perf_counter() - t0
    t1, c1 = time.perf_counter(), time.process_time()
    for layer in layers:
        p = out.attentions[layer][0].numpy()  # (H, n, n)
        svs[layer] = np.stack([np.linalg.svd(p[h], compute_uv=False) for h in range(p.shape[0])])
    reduce_s, reduce_cpu = time.perf_counter() - t1, time.process_time() - c1
    total_cpu = time.process_time() - cpu0
    if with_reference:
        for layer in layers:
            reference[layer] = np.linalg.svd(out.attentions[layer][0].double().numpy(), compute_uv=False)
    return t_fwd, reduce_s, reduce_cpu, total_cpu


def _dtype_check(model_name: str, n: int, windows: int, data_dir: str) -> dict:
    """The model run in bfloat16 against float32 on the same windows, every layer and head, both
    factorised exactly (lapack, in float32): the largest difference of the cumulative and σ₁-less
    curves. What a bfloat16 run's meta.json states (attnspec.spectra.run_error)."""
    import torch

    from attnspec.spectra.capture import capture_attention
    from attnspec.spectra.data.inputs import load_inputs
    from attnspec.spectra.engine import singular_values
    from attnspec.spectra.metrics import cumulative_curve, tail_curve
    from attnspec.spectra.models import load_model

    torch.set_num_threads(1)
    curves: dict[str, dict] = {}
    for dtype in ("float32", "bfloat16"):
        loaded = load_model(model_name, device="cpu", dtype=dtype)
        inputs = load_inputs("wiki103", loaded.tokenizer, seq_len=n, num_inputs=windows, seed=0, data_dir=data_dir)
        got: dict = {}

        def sink(la) -> None:
            sv = singular_values(la.probs.float(), "lapack")  # (B, H, n)
            got[la.layer] = (cumulative_curve(sv), tail_curve(sv))  # noqa: B023 - the sink runs within this iteration

        with capture_attention(loaded.model, sink) as cap:
            cap.forward(torch.tensor(inputs.input_ids, dtype=torch.long))
        curves[dtype] = got
    diff = max(float((curves["float32"][k][0] - curves["bfloat16"][k][0]).abs().max()) for k in curves["float32"])
    tail = max(float((curves["float32"][k][1] - curves["bfloat16"][k][1]).abs().max()) for k in curves["float32"])
    return {
        "dtype_check": "bfloat16 vs float32 model",
        "model": model_name,
        "n": n,
        "windows": windows,
        "layers": len(curves["float32"]),
        "curve_max_abs_diff": diff,
        "tail_curve_max_abs_diff": tail,
    }


def _method_params(method: str) -> dict:
    from attnspec.spectra.longn import LongnParams

    return LongnParams().as_dict()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="smollm2")
    ap.add_argument("--n", default="256,512")
    ap.add_argument("--layers", default="0,18,29", help="layers reduced (0-based) or 'all'; the forward runs all")
    ap.add_argument(
        "--methods",
        default="gram,gram32,longn",
        help="engine methods, in order (gram first: its values are the reference above --reference-max)",
    )
    ap.add_argument("--threads", type=int, default=1, help="torch and engine threads of each run")
    ap.add_argument("--naive-max", type=int, default=1024)
    ap.add_argument(
        "--reference-max",
        type=int,
        default=2048,
        help="largest n whose errors are measured against float64 SVD (its cost is n³ per matrix)",
    )
    ap.add_argument("--data-dir", default=str(REPO.parent / "shared" / "data"))
    ap.add_argument("--json", type=Path)
    ap.add_argument(
        "--dtype-check",
        action="store_true",
        help="instead: bfloat16 against float32 model curves on 2 windows of the first --n, every layer",
    )
    ap.add_argument("--_one", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    layers = None if args.layers == "all" else [int(x) for x in args.layers.split(",")]
    if args.dtype_check:
        row = _dtype_check(args.model, int(args.n.split(",")[0]), 2, args.data_dir)
        print(json.dumps(row))
        if args.json:
            args.json.write_text(json.dumps(row, indent=1))
        return
    if args._one:
        n, method, ref_file = args._one
        print(
            json.dumps(
                _one(
                    args.model,
                    int(n),
                    layers,
                    method,
                    args.data_dir,
                    args.reference_max,
                    args.threads,
                    Path(ref_file) if ref_file != "-" else None,
                )
            )
        )
        return
    rows = []
    scratch = Path(tempfile.mkdtemp(prefix="bench_long_context_"))
    print(f"load average {os.getloadavg()[0]:.2f} at start", flush=True)
    for n in (int(x) for x in args.n.split(",")):
        methods = [*args.methods.split(","), *(["naive"] if n <= args.naive_max else [])]
        for method in methods:
            cmd = [
                sys.executable,
                __file__,
                "--model",
                args.model,
                "--layers",
                args.layers,
                "--data-dir",
                args.data_dir,
                "--reference-max",
                str(args.reference_max),
                "--threads",
                str(args.threads),
                "--_one",
                str(n),
                method,
                str(scratch / f"gram_{n}.npz"),
            ]
            res = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
            if res.returncode != 0:
                print(f"n={n} {method}: failed: {res.stderr.strip().splitlines()[-1:]}", flush=True)
                continue
            row = json.loads(res.stdout.strip().splitlines()[-1])
            row["load_average"] = [round(x, 2) for x in os.getloadavg()]  # 1, 5 and 15 minutes, at its end
            rows.append(row)
            print(json.dumps(row), flush=True)
            if args.json:  # after every row: a long run interrupted keeps what it measured
                args.json.write_text(json.dumps({"rows": rows}, indent=1))
    for n in sorted({r["n"] for r in rows}):
        base = next((r for r in rows if r["n"] == n and r["method"] == "naive"), None)
        for r in rows:
            if r["n"] == n and base is not None and r is not base:
                print(
                    f"n={n} {r['method']}: naive/method time ratio {base['measured_s'] / r['measured_s']:.2f}, "
                    f"peak RSS {r['peak_rss_mb']:.0f} vs naive {base['peak_rss_mb']:.0f} MB"
                )
    if args.json:
        args.json.write_text(json.dumps({"rows": rows}, indent=1))


if __name__ == "__main__":
    main()
