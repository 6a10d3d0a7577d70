"""Forward time of the OSA layer against N (the time-vs-N figure of osa-check).

The full benchmark, with ratios against a softmax baseline, is benchmarks/bench_osa.py.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
import torch

from attnspec.errors import InputError
from attnspec.numerics.stats import torch_generator
from attnspec.runtime.threads import torch_threads
from attnspec.theory.osa.layer import OrthogonalSelfAttention

TIMING_METHODS: tuple[str, ...] = ("osa-qr", "osa-ns", "dense-expm", "softmax")


def time_forward(
    ns: Sequence[int] = (256, 512, 1024, 2048, 4096),
    d_v: int = 64,
    seed: int = 0,
    methods: Sequence[str] = TIMING_METHODS,
    dense_max_n: int = 512,
    repeats: int = 3,
    ns_steps: int = 6,
) -> pd.DataFrame:
    """Time of one forward pass (batch 1, one head of width d_v, d = 2 d_v), one torch
    thread: ``seconds`` is the minimum CPU time (``time.process_time``) over ``repeats``
    runs — with one thread it equals the wall time of an idle machine and does not count
    the time other processes hold the cores; ``wall_seconds`` is the minimum wall time.

    Methods: ``osa-qr`` and ``osa-ns`` (the layer's fast path, K = ``ns_steps`` cubic
    Newton–Schulz), ``dense-expm`` (S formed, ``torch.linalg.matrix_exp(S) @ V``; only up
    to ``dense_max_n``), ``softmax`` (``scaled_dot_product_attention`` of the same width).
    float32, no autograd. The defaults (dense up to N = 512, 3 repeats) keep the sweep near
    2 s: the dense N = 1024 exponential takes about 5 s by itself.

    Parameters
    ----------
    ns : sequence of int
        The sequence lengths N.
    d_v : int
        The head width.
    seed : int
        Seed of the inputs and weights.
    methods : sequence of str
        Of :data:`TIMING_METHODS`.
    dense_max_n : int
        Largest N at which ``dense-expm`` is timed.
    repeats : int
        Runs per point; the minimum is kept.
    ns_steps : int
        Newton–Schulz iterations K of ``osa-ns``.

    Returns
    -------
    pandas.DataFrame
        ``method, n, d_v, seconds, wall_seconds, repeats``.
    """
    import time

    import torch.nn.functional as F

    unknown = set(methods) - set(TIMING_METHODS)
    if unknown:
        raise InputError(f"timing methods must be among {', '.join(TIMING_METHODS)}, got {sorted(unknown)}")
    d = 2 * d_v
    g = torch_generator(seed)
    layers = {
        "osa-qr": OrthogonalSelfAttention(d, 1, basis="qr", d_v=d_v, seed=seed),
        "osa-ns": OrthogonalSelfAttention(d, 1, basis="newton-schulz", ns_steps=ns_steps, d_v=d_v, seed=seed),
    }
    wq = torch.randn(d, d_v, generator=g) / math.sqrt(d)
    wk = torch.randn(d, d_v, generator=g) / math.sqrt(d)
    wv = torch.randn(d, d_v, generator=g) / math.sqrt(d)
    recs = []
    for n in ns:
        x = torch.randn(1, n, d, generator=g)
        for meth in methods:
            if meth == "dense-expm" and n > dense_max_n:
                continue
            if meth in layers:

                def run(layer=layers[meth]) -> torch.Tensor:
                    return layer(x)  # noqa: B023 - called within this iteration
            elif meth == "dense-expm":

                def run() -> torch.Tensor:
                    q, k, v = x[0] @ wq, x[0] @ wk, x[0] @ wv  # noqa: B023 - called within this iteration
                    s = (0.1 / math.sqrt(d_v)) * (q @ k.T - k @ q.T)  # (N, N)
                    return torch.linalg.matrix_exp(s) @ v
            else:

                def run() -> torch.Tensor:
                    q, k, v = ((x @ w).unsqueeze(1) for w in (wq, wk, wv))  # (1, 1, N, d_v)  # noqa: B023 - called within this iteration
                    return F.scaled_dot_product_attention(q, k, v)

            with torch_threads(1), torch.no_grad():
                run()  # warm-up
                cpu, wall = [], []
                for _ in range(repeats):
                    c0, t0 = time.process_time(), time.perf_counter()
                    run()
                    cpu.append(time.process_time() - c0)
                    wall.append(time.perf_counter() - t0)
            recs.append(
                {
                    "method": meth,
                    "n": int(n),
                    "d_v": d_v,
                    "seconds": float(np.min(cpu)),
                    "wall_seconds": float(np.min(wall)),
                    "repeats": repeats,
                }
            )
    return pd.DataFrame(recs)


def fitted_exponent(frame: pd.DataFrame, method: str) -> float:
    """Least-squares slope of log(seconds) on log(n) for one method (time ∝ N^slope).

    Parameters
    ----------
    frame : DataFrame
        The table of :func:`time_forward`.
    method : str

    Returns
    -------
    float
        NaN with fewer than two sizes.
    """
    sub = frame[frame.method == method]
    if len(sub) < 2:
        return float("nan")
    return float(np.polyfit(np.log(sub.n.to_numpy(float)), np.log(sub.seconds.to_numpy(float)), 1)[0])
