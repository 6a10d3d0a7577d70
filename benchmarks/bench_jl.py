"""Benchmark: reduced samplers vs direct (materialise R) samplers for `jl-check`.

Baseline, measured in the same run: the direct sampler draws a fresh k×n Gaussian R each
trial and applies it (to x, y for Lemma 1; as P(Rᵀ(Rw)) for Theorem 1; as
softmax(δ(Rw))·e^{−δ}RV for Theorem 2). The reduced samplers draw only what the
statistic depends on (see attnspec/theory/linformer/samplers.py). Prints trials per second and
the ratio, and writes bench_jl.json next to this file.

    python benchmarks/bench_jl.py            # n = 4096, the default jl-check size
    python benchmarks/bench_jl.py --n 1024   # quicker
    python benchmarks/bench_jl.py --eq4           # eq. (4) in row blocks against the whole-matrix formulas
    python benchmarks/bench_jl.py --only-default-run --baseline dfed67b --repeats 3   # against another commit
    python benchmarks/bench_jl.py --default-run   # also: the whole default `attnspec jl-check --n 4096
                                                  # --eps 0.1`, this checkout against commit aa144d7

``--default-run`` extracts commit aa144d7 (the tree before sequential Monte Carlo, the exact
laws through SciPy's ufuncs and the two-process run) with ``git archive`` into a temporary
folder and times both commands as subprocesses in the same run (wall and CPU seconds of the
child, from ``resource.getrusage``), old first, and records the load average before each: the
machine is shared, so the ratio is the figure to quote.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from pathlib import Path

import numpy as np
import torch

from attnspec.theory.linformer import dimensions as D
from attnspec.theory.linformer import samplers as S
from attnspec.theory.linformer import theorem1 as T1
from attnspec.theory.linformer import theorem1_samplers as S1
from attnspec.theory.linformer import theorem2_samplers as S2


def time_command(pythonpath: str, args: list[str]) -> dict:
    """Run ``python -m attnspec.cli.main *args`` with ``PYTHONPATH`` and return wall / CPU seconds."""
    import resource
    import subprocess
    import sys

    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "attnspec.cli.main", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": pythonpath},
        cwd=pythonpath,
    )
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip().splitlines()[-1:])
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "load_avg_1min_before": round(load, 2),
        "rows": len(json.loads(proc.stdout)) if "--json" in args else None,
    }


def default_run(commit: str = "aa144d7", repeats: int = 1) -> dict:
    """The default `jl-check --n 4096 --eps 0.1 --json`, commit ``commit`` and this checkout,
    ``repeats`` times each, alternating (old first), with the best and every time kept."""
    import subprocess
    import sys
    import tempfile

    repo = Path(__file__).resolve().parents[1]
    args = ["jl-check", "--n", "4096", "--eps", "0.1", "--json"]  # no -q: commit aa144d7 has none
    olds, news = [], []
    with tempfile.TemporaryDirectory(prefix="attnspec-old-") as tmp:
        archive = subprocess.run(["git", "-C", str(repo), "archive", commit], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        # byte-code for both trees first: with PYTHONDONTWRITEBYTECODE (set on the project's
        # machines) a fresh tree would otherwise compile every module at every run
        for tree in (tmp, str(repo)):
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(tree) / "attnspec")], check=True)
        for _ in range(repeats):
            olds.append(time_command(tmp, args))
            news.append(time_command(str(repo), args))
    old, new = min(olds, key=lambda r: r["wall_s"]), min(news, key=lambda r: r["wall_s"])
    out = {
        "command": "attnspec " + " ".join(args),
        "baseline_commit": commit,
        "repeats": repeats,
        "old": old,
        "new": new,
        "old_wall_s_all": [r["wall_s"] for r in olds],
        "new_wall_s_all": [r["wall_s"] for r in news],
        "old_wall_s_median": float(np.median([r["wall_s"] for r in olds])),
        "new_wall_s_median": float(np.median([r["wall_s"] for r in news])),
        "new_load_avg_1min_before_all": [r["load_avg_1min_before"] for r in news],
        "wall_ratio": round(old["wall_s"] / new["wall_s"], 2),
        "cpu_ratio": round(old["cpu_s"] / new["cpu_s"], 2),
        "median_wall_ratio": round(
            float(np.median([r["wall_s"] for r in olds]) / np.median([r["wall_s"] for r in news])), 2
        ),
    }
    print(json.dumps(out, indent=2), flush=True)
    return out


def _eq4_once(variant: str, n: int) -> float:
    """Seconds of one eq. (4) check at size n, one thread, in this (fresh) process: ``blocks``
    (``check_eq4``) or ``whole`` (the whole-matrix formulas, as at commit dfed67b)."""
    from threadpoolctl import threadpool_limits

    from attnspec.numerics.stats import child_seed
    from attnspec.theory.linformer import printed

    A = T1.attention_logits(n, seed=child_seed(0, "attention", "softmax"))
    with threadpool_limits(1):
        t = time.perf_counter()
        if variant == "blocks":
            printed.check_eq4(A, name="softmax")
        else:  # the baseline: row softmax, the shifted exp and both forms as n×n arrays
            target = printed.row_softmax(A)
            E = printed._exp_shifted(A)
            for P in (E / E.sum(0, keepdims=True), (1.0 / E.sum(1))[:, None] * E):
                float(np.abs(P - target).max()), P.sum(1).min(), P.sum(0).min()
        return time.perf_counter() - t


def eq4_blocks(n: int = 4096, repeats: int = 3) -> dict:
    """eq. (4)/(15) in row blocks against the whole-matrix formulas, each timed once in a fresh
    process (as jl-check runs it: once, where the n×n temporaries are first-touched memory),
    alternating, ``repeats`` times. The numbers are compared in tests/unit/test_linformer_claims.py."""
    import subprocess
    import sys

    times: dict[str, list[float]] = {"whole": [], "blocks": []}
    for _ in range(repeats):
        for variant in times:
            code = (
                f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import bench_jl; "
                f"print(bench_jl._eq4_once({variant!r}, {n}))"
            )
            proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
            times[variant].append(round(float(proc.stdout.strip().splitlines()[-1]), 3))
    out = {
        "n": n,
        "whole_matrix_s": times["whole"],
        "blocks_s": times["blocks"],
        "ratio_of_medians": round(float(np.median(times["whole"]) / np.median(times["blocks"])), 2),
    }
    print(json.dumps(out), flush=True)
    return out


def rate(fn, trials: int) -> float:  # noqa: ANN001
    t = time.perf_counter()
    fn()
    return trials / (time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--eps", type=float, default=0.1)
    ap.add_argument("--direct-trials", type=int, default=4)
    ap.add_argument("--reduced-trials", type=int, default=10_000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument(
        "--default-run",
        action="store_true",
        help="also time the whole default jl-check against commit aa144d7 (minutes)",
    )
    ap.add_argument("--only-default-run", action="store_true", help="only that")
    ap.add_argument(
        "--baseline",
        default="aa144d7",
        help="the commit the default run is compared with (default aa144d7, the tree before sequential Monte Carlo)",
    )
    ap.add_argument("--repeats", type=int, default=1, help="runs of each command, alternating (the best is kept)")
    ap.add_argument(
        "--eq4",
        action="store_true",
        help="only eq. (4) in row blocks against the whole-matrix formulas of commit dfed67b",
    )
    args = ap.parse_args()
    if args.eq4:
        res = eq4_blocks(args.n)
        path = Path(__file__).with_suffix(".json")
        old = json.loads(path.read_text()) if path.exists() else {}
        path.write_text(json.dumps({**old, "eq4_blocks": res}, indent=2) + "\n")
        return
    if args.only_default_run:
        res = default_run(args.baseline, args.repeats)
        path = Path(__file__).with_suffix(".json")
        old = json.loads(path.read_text()) if path.exists() else {}
        old = old if isinstance(old, dict) else {"samplers": old}
        key = "default_run" if args.baseline == "aa144d7" else f"default_run_vs_{args.baseline}"
        path.write_text(json.dumps({**old, key: res}, indent=2) + "\n")
        return
    torch.set_num_threads(args.threads)
    n, eps = args.n, args.eps
    k1 = int(math.ceil(D.linformer_k(n, eps)))
    kb = min(k1, n - 1)
    n_direct, n_reduced = args.direct_trials, args.reduced_trials
    results = []

    def record(name: str, k: int, direct: float, reduced: float, note: str) -> None:
        results.append(
            {
                "case": name,
                "n": n,
                "k": k,
                "direct_trials_per_s": direct,
                "reduced_trials_per_s": reduced,
                "ratio": reduced / direct,
                "note": note,
            }
        )
        print(
            f"{name:<34} k={k:<5} direct {direct:>10.3g}/s  reduced {reduced:>12.4g}/s  ratio {reduced / direct:>10.3g}",
            flush=True,
        )

    # Lemma 1, Gaussian R at the theorem's k: ‖Rx‖² and <Rx, Ry>
    direct = rate(lambda: S.direct_pair_images("gaussian", n, k1, n_direct, seed=0), n_direct)
    rng = np.random.default_rng(0)
    red = rate(
        lambda: (
            rng.chisquare(k1, n_reduced),
            0.75 * rng.chisquare(k1, n_reduced) - 0.25 * rng.chisquare(k1, n_reduced),
        ),
        n_reduced,
    )
    record("lemma1 gaussian (chi-square law)", k1, direct, red, "both statistics per trial")
    red2 = rate(
        lambda: S.prefix_pair_stats(
            S.reduced_pair_units("gaussian", n, k1, 1000, seed=1)[0], np.array([k1]), which=("aa", "ab")
        ),
        1000,
    )
    record("lemma1 gaussian (k x 2 images)", k1, direct, red2, "the pair sampler the other families use")
    direct = rate(lambda: S.direct_pair_images("sparse", n, kb, n_direct, seed=0), n_direct)
    red = rate(lambda: S.reduced_pair_units("sparse", n, kb, 1000, vectors="flat", seed=1), 1000)
    record("lemma1 sparse, flat pair", kb, direct, red, "two binomials per row and half")

    # Theorem 1: softmax P, one w, k below n
    P = T1.attention_matrix("softmax", n, seed=0)
    w = np.random.default_rng(1).standard_normal(n)
    direct = rate(lambda: S.theorem1_direct_errors(P, w, kb, n_direct, seed=0), n_direct)

    def thm1() -> None:
        parts = S1.theorem1_reduced_parts(P, w[:, None], n_reduced, seed=1)
        S1.theorem1_errors_chunk(parts, 0, kb, np.random.default_rng(2))

    red = rate(thm1, n_reduced)
    record("theorem1 (one w, one k)", kb, direct, red, "reduced cost is shared by every w and k: one P g per trial")

    # Theorem 2: d = 64, the paper's E, F, k below n
    d = 64
    rng = np.random.default_rng(2)
    Q, K, V = (rng.standard_normal((n, d)) for _ in range(3))
    wrow = Q[0] @ K.T / math.sqrt(d)
    direct = rate(lambda: S2.theorem2_direct_outputs(wrow, V, kb, n_direct, delta=1 / (2 * n), seed=0), n_direct)
    red = rate(
        lambda: S2.theorem2_reduced_all(wrow, V, np.array([kb]), n_reduced, delta=1 / (2 * n), seed=1), n_reduced
    )
    record("theorem2 (paper + plain + eq. 21)", kb, direct, red, "reduced gives three statistics per trial")

    out = {
        "results": results,
        "threads": args.threads,
        "loadavg_at_end": os.getloadavg(),
        "torch": torch.__version__,
        "cpu_count": os.cpu_count(),
    }
    if args.default_run:
        out["default_run"] = default_run()
    path = Path(__file__).with_name("bench_jl.json")
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"load average at the end: {out['loadavg_at_end']}; written {path}")


if __name__ == "__main__":
    main()
