"""The spectrum engine's exact methods on one device, against the CPU LAPACK path, on the same matrices.

    python benchmarks/bench_engine_device.py --device cuda [--n 512] [--count 144] [--json FILE]
    python benchmarks/bench_spectrum.py --device cuda          # the same, from the main benchmark

Methods (all compute every singular value; see attnspec/spectra/engine.py):

* ``svd``  — ``torch.linalg.svdvals`` in float32 on the device;
* ``gram`` — eigenvalues of P Pᵀ formed in float64 on the device (``torch.linalg.eigvalsh``);
* baseline — ``lapack`` on the CPU (SciPy's OpenBLAS ``sgesdd``, thread pool), the matrices
  copied from the device first (the copy is part of its time, as in a real GPU run).

For each: the best of ``--repeat`` wall times (device synchronised), the ratio baseline /
method, and the largest error of the normalised cumulative curve against float64 SVD
(LAPACK ``dgesdd`` on the CPU). The matrices are real attention (MiniLM-L6 on WikiText-103)
when the weights and the text are installed, random softmax matrices otherwise.

Without CUDA, ``--device cuda`` prints one line and exits 0 (nothing to compare);
``--device cpu`` runs the same comparison on the CPU (the CPU ``svd``/``gram`` routes).
``attnspec spectrum --svd-method auto`` on CUDA uses ``svd``: see docs/spectrum.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[1]


def _matrices(n: int, count: int, seed: int = 0) -> tuple[torch.Tensor, str]:
    """``count`` attention matrices of n × n, float32 on the CPU: real MiniLM P when possible."""
    from attnspec.errors import AttnspecError

    try:
        from attnspec.spectra.capture import collect_attention
        from attnspec.spectra.data.inputs import load_inputs
        from attnspec.spectra.models import load_model, packaged_minilm_path

        data = next(
            (
                Path(c)
                for c in (os.environ.get("ATTNSPEC_DATA_DIR"), REPO.parent / "shared" / "data")
                if c and (Path(c) / "wikitext103").is_dir()
            ),
            None,
        )
        if packaged_minilm_path() is not None and data is not None and n <= 512:
            enc = load_model("minilm", device="cpu")
            per_input = enc.num_layers * enc.num_heads
            k = -(-count // per_input)
            ids = load_inputs(
                "wiki103", enc.tokenizer, seq_len=n, num_inputs=k, seed=seed, data_dir=str(data)
            ).input_ids
            probs = torch.cat([p.reshape(-1, n, n) for p in collect_attention(enc.model, torch.tensor(ids))])
            return probs[:count].contiguous(), f"{count} × {n}² real P (MiniLM-L6, WikiText-103)"
    except (ImportError, OSError, AttnspecError) as e:  # falls back to synthetic matrices, said in the output
        print(f"(real attention unavailable: {type(e).__name__}: {e}; using random softmax matrices)", file=sys.stderr)
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(count, n, n, generator=g) * 3
    return logits.softmax(-1), f"{count} × {n}² random softmax matrices"


def _timed(fn, device: torch.device, repeat: int) -> tuple[float, torch.Tensor]:
    best, out = float("inf"), None
    for _ in range(repeat):
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        t0 = time.perf_counter()
        out = fn()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        best = min(best, time.perf_counter() - t0)
    return best, out


def compare(device: str = "cuda", *, n: int = 512, count: int = 144, repeat: int = 3) -> dict | None:
    """Time ``svd`` and ``gram`` on ``device`` and ``lapack`` on the CPU; None when CUDA is asked for but absent."""
    from attnspec.spectra.engine import singular_values
    from attnspec.spectra.metrics import cumulative_curve

    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        return None
    probs_cpu, what = _matrices(n, count)
    probs = probs_cpu.to(dev)
    ref = np.linalg.svd(probs_cpu.double().numpy(), compute_uv=False)  # float64 reference, descending
    ref_curve = torch.from_numpy(np.cumsum(ref, -1) / ref.sum(-1, keepdims=True))

    def err(sv: torch.Tensor) -> float:
        return float((cumulative_curve(sv.cpu().double()) - ref_curve).abs().max())

    rows = {}
    t, sv = _timed(lambda: singular_values(probs.cpu(), "lapack"), dev, repeat)
    rows["lapack_cpu"] = {"s": t, "curve_error": err(sv)}
    for method in ("svd", "gram"):
        singular_values(probs[:2], method)  # warm-up (CUDA context, cuSOLVER handles)
        t, sv = _timed(lambda m=method: singular_values(probs, m), dev, repeat)
        rows[f"{method}_{dev.type}"] = {"s": t, "curve_error": err(sv)}
    base = rows["lapack_cpu"]["s"]
    for r in rows.values():
        r["speedup_vs_lapack_cpu"] = base / r["s"]
    fastest = min(rows, key=lambda k: rows[k]["s"])
    return {
        "device": str(dev),
        "device_name": torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu",
        "matrices": what,
        "methods": rows,
        "fastest": fastest,
        "torch_threads": torch.get_num_threads(),
    }


def report(res: dict | None, device: str) -> None:
    if res is None:
        print(f"--device {device}: no CUDA device here; nothing to compare (skipped)")
        return
    print(f"engine on {res['device']} ({res['device_name']}), {res['matrices']}:")
    for name, r in res["methods"].items():
        print(
            f"  {name:12s} {r['s']:8.3f} s  {r['speedup_vs_lapack_cpu']:6.2f}× vs lapack_cpu  "
            f"curve error {r['curve_error']:.1e}"
        )
    print(f"  fastest: {res['fastest']}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--n", type=int, default=512)
    ap.add_argument("--count", type=int, default=144)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    res = compare(args.device, n=args.n, count=args.count, repeat=args.repeat)
    report(res, args.device)
    if args.json and res is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(res, indent=2) + "\n")


if __name__ == "__main__":
    main()
