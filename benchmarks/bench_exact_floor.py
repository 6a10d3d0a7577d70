"""The floor under any exact spectrum of long P on this CPU: what its cheapest step costs.

    python benchmarks/bench_exact_floor.py [--n 4096] [--repeats 3] [--forward-cpu-s 63.5] [--json FILE]

Every exact method ends in a dense factorisation of an n × n matrix. The cheapest one known for
all singular values is ``gram32``'s last step: the eigenvalues only of the float32 Gram matrix by
LAPACK's two-stage ``ssyevd_2stage`` (dense to band by BLAS-3, 4n³/3 multiply-adds, then the band
to tridiagonal and the values, O(n²)). Forming the Gram matrix of a causal P costs n³/3 more
(triangular ``ssyrk``). This script times both on one thread, on a synthetic causal softmax P of
size n (the cost does not depend on the values), beside the machine's own ``sgemm`` of the same
size as the named baseline, so that the figures read as ratios on any machine.

It then states the floor per input of SmolLM2-135M (30 layers × 9 heads = 270 matrices) on two
cores: 270 × (Gram + eigenvalues) / 2, plus the forward pass's CPU seconds halved (63.5 CPU s at
n = 4096 on one thread, benchmarks/bench_long_context_4096.json, unless --forward-cpu-s says
otherwise). That floor assumes perfect use of both cores and no deflation of attention sinks, so
real runs cost more. Figures: docs/spectrum.md, "Long context".
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402 - after the thread settings

MATRICES_PER_INPUT = 30 * 9  # SmolLM2-135M: layers × query heads
CORES = 2


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _timed(fn, repeats: int) -> float:  # noqa: ANN001 - a callable of no argument
    """Least CPU seconds of ``repeats`` calls (the least is the one least disturbed by other load)."""
    best = float("inf")
    for _ in range(repeats):
        start = _cpu()
        fn()
        best = min(best, _cpu() - start)
    return best


def _causal_softmax(n: int, seed: int = 0) -> np.ndarray:
    """(n, n) float32, C-contiguous: row i a softmax of Gaussian scores over keys 0..i."""
    rng = np.random.default_rng(seed)
    scores = rng.standard_normal((n, n)).astype(np.float32)
    scores[np.triu_indices(n, 1)] = -np.inf
    scores -= scores.max(axis=1, keepdims=True)
    p = np.exp(scores)
    return np.ascontiguousarray(p / p.sum(axis=1, keepdims=True), dtype=np.float32)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--forward-cpu-s", type=float, default=63.5, help="CPU s of one input's forward pass, 1 thread")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    from attnspec.spectra.gram32 import _eig_lower, _gram_lower
    from attnspec.spectra.openblas import _lapack

    if _lapack("ssyevd_2stage") is None:
        raise SystemExit("SciPy's OpenBLAS lacks ssyevd_2stage: nothing to measure")
    n = args.n
    p = _causal_softmax(n)
    a = np.ascontiguousarray(np.random.default_rng(1).standard_normal((n, n)), dtype=np.float32)
    sgemm = _timed(lambda: a @ a, args.repeats)
    gram = _timed(lambda: _gram_lower(p, True), args.repeats)
    g = _gram_lower(p, True)
    eig = _timed(lambda: _eig_lower(g.copy()), args.repeats)
    per_matrix = gram + eig
    floor_s = (MATRICES_PER_INPUT * per_matrix + args.forward_cpu_s) / CORES
    row = {
        "n": n,
        "threads": 1,
        "baseline": f"sgemm, ({n}, {n}) @ ({n}, {n}) float32, one thread",
        "sgemm_cpu_s": round(sgemm, 3),
        "sgemm_gflops": round(2 * n**3 / sgemm / 1e9, 1),
        "gram_triangular_cpu_s": round(gram, 3),
        "eigenvalues_cpu_s": round(eig, 3),
        "gram_over_sgemm": round(gram / sgemm, 2),
        "eigenvalues_over_sgemm": round(eig / sgemm, 2),
        "matrices_per_input": MATRICES_PER_INPUT,
        "forward_cpu_s": args.forward_cpu_s,
        "floor_wall_s_per_input_on_2_cores": round(floor_s, 1),
        "target_wall_s_per_input": 180,
        "floor_over_target": round(floor_s / 180, 2),
        "machine": platform.processor() or platform.machine(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }
    text = json.dumps(row, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
