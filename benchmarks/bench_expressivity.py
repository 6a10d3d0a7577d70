"""Speed of the sa-check Monte Carlo against a named baseline, measured in the same run.

Baseline ("per-trial numpy loop"): for each trial, draw R ∈ R^{d×L} ~ N(0, 1/d) with
numpy, form B̂ = (B Rᵀ) R densely in float64 and take ‖B − B̂‖∞ — the construction as
written, one trial at a time.

Candidates:
* ``sample_errors`` (attnspec): trials batched in torch, sparse products with B (k nonzeros
  per row), Gaussian R with d >= L drawn through the Wishart law of RᵀR (Bartlett), so the
  cost per trial stops growing with d; ``only_max`` (what the d* search uses) and the full
  set of measures;
* ``asymptotic_errors``: the d → ∞ law sqrt(d)(RᵀR − I) → Z, one draw gives every d.

Prints per-trial times and the speed-up ratios; writes bench_expressivity.json next to
this file. ``--quick`` uses fewer trials. The end-to-end default run
(``attnspec sa-check``, target <= 60 s) is timed with ``--e2e``.

``--vs-old DIR`` times the whole default command, ``attnspec sa-check --json``
as a user runs it (imports included, no figures), of this checkout and of the code in DIR
(a worktree of commit aa144d7, the tree before the single-pass exact grid and the curtailed
d* searches: ``git worktree add /tmp/old-sa aa144d7``), alternately in
the same run, as subprocesses with ``PYTHONPATH`` pointing at each tree; wall and CPU
seconds (the children's user + system time) and their ratios, with the load average. It
also checks that two runs of this checkout print the same table (fixed seeds).

    python benchmarks/bench_expressivity.py [--quick] [--e2e] [--threads 1]
    python benchmarks/bench_expressivity.py --vs-old /tmp/old-sa [--vs-main /tmp/main-sa] [--repeats 2]

With ``--vs-main`` a tree that runs the same battery in one process (e.g. ``git archive 54e6285``) is
timed too. This checkout runs sa-check in two processes (``--jobs 2``): on a loaded machine
its wall time says little, so the benchmark also splits one extra run (with ``--out``, whose
meta.json gives the second process's CPU and the CPU before the fork) into CPU before the
fork and the two processes' CPU after it: on an idle 2-core machine the wall time is about
"before + the longer of the two" (the idle wall estimate; CPU seconds under load run long,
so it errs high).
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np
import torch

from attnspec.theory.expressivity.config import Config
from attnspec.theory.expressivity.construction import log_targets, sparse_target
from attnspec.theory.expressivity.measure import measure
from attnspec.theory.expressivity.sampling import asymptotic_errors, sample_errors


def per_trial_baseline(A: np.ndarray, d: int, eps: float, trials: int, seed: int) -> float:
    """Seconds per trial of the per-trial numpy loop (float64, R materialised)."""
    rng = np.random.default_rng(seed)
    B = log_targets(A, eps)
    L = A.shape[0]
    t0 = time.perf_counter()
    for _ in range(trials):
        R = rng.standard_normal((d, L)) / np.sqrt(d)
        Bh = (B @ R.T) @ R
        float(np.abs(Bh - B).max())
    return (time.perf_counter() - t0) / trials


def per_trial(fn, trials: int) -> float:
    t0 = time.perf_counter()
    fn(trials)
    return (time.perf_counter() - t0) / trials


def run_command(tree: Path, args: list[str]) -> tuple[float, float, str]:
    """(wall s, CPU s of the child, stdout) of ``python -m attnspec.cli.main`` run on ``tree``."""
    import os
    import resource
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(tree)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "attnspec.cli.main", *args], capture_output=True, text=True, env=env, cwd=tree
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{tree}: {proc.stderr.strip().splitlines()[-1:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.stdout


def main_process_cpu(tree: Path) -> dict:
    """One default run of ``tree`` with ``--out``, its CPU split at the fork (``meta.json``)
    and the CPU measured from outside (imports included): the idle 2-core wall estimate."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        out_dir = Path(tmp) / "run"
        wall, cpu, _ = run_command(tree, ["sa-check", "--no-plots", "--out", str(out_dir)])
        meta = json.loads((out_dir / "meta.json").read_text())
    second = float(meta.get("cpu_seconds_second_process", 0.0))
    # before the fork: everything outside the battery (interpreter, imports, writing) plus the
    # battery's own start; after it the two processes run side by side
    outside = cpu - float(meta["cpu_seconds"])
    before = outside + float(meta.get("cpu_seconds_before_second_process", 0.0))
    main_after = cpu - second - before
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "cpu_second_process_s": second,
        "cpu_main_process_s": cpu - second,
        "cpu_before_fork_s": before,
        "cpu_main_after_fork_s": main_after,
        "battery_cpu_s": float(meta["cpu_seconds"]),
        "battery_before_fork_s": float(meta.get("cpu_seconds_before_second_process", 0.0)),
        "idle_wall_estimate_s": before + max(main_after, second),
        "processes": meta.get("processes", 1),
    }


def vs_old(old: Path, repeats: int, main_tree: Path | None = None) -> dict:
    """The default ``sa-check --json`` of this checkout against the code in ``old`` (and in
    ``main_tree``, the previous state, when given), alternately in the same run."""
    import os

    new = Path(__file__).resolve().parents[1]
    args = ["sa-check", "--json"]
    trees = [("old", old)] + ([("main", main_tree)] if main_tree is not None else []) + [("new", new)]
    rows = []
    tables: dict[str, list[str]] = {name: [] for name, _ in trees}
    for i in range(repeats):
        for name, tree in trees:
            load = os.getloadavg()[0]
            wall, cpu, out = run_command(tree, args)
            tables[name].append(out)
            rows.append({"code": name, "repeat": i, "wall_s": wall, "cpu_s": cpu, "load_1min": load})
            print(f"{name} (repeat {i}): {wall:6.1f} s wall, {cpu:6.1f} s CPU, load {load:.1f}", flush=True)
    med = {
        c: {k: float(np.median([r[k] for r in rows if r["code"] == c])) for k in ("wall_s", "cpu_s")} for c, _ in trees
    }
    same = all(t == tables["new"][0] for t in tables["new"])
    out = {
        "command": "attnspec sa-check --json (defaults, imports included, no figures)",
        "old_tree": str(old),
        "old_commit": "aa144d7",
        "runs": rows,
        "median": med,
        "ratio_wall": med["old"]["wall_s"] / med["new"]["wall_s"],
        "ratio_cpu": med["old"]["cpu_s"] / med["new"]["cpu_s"],
        "new_tables_identical": same,
    }
    if main_tree is not None:
        out["main_tree"] = str(main_tree)
        out["ratio_wall_vs_main"] = med["main"]["wall_s"] / med["new"]["wall_s"]
        out["ratio_cpu_vs_main"] = med["main"]["cpu_s"] / med["new"]["cpu_s"]
        out["new_verdicts_equal_main"] = tables["main"][0] == tables["new"][0]
    # on an idle 2-core machine: the CPU before the fork, then the longer of the two processes
    load = os.getloadavg()[0]
    split = main_process_cpu(new)
    # the same estimate for the --json runs timed above (no parquet writing): their CPU outside
    # the battery, then the battery's split of the --out run
    json_est = (
        med["new"]["cpu_s"]
        - split["battery_cpu_s"]
        + split["battery_before_fork_s"]
        + max(split["cpu_main_after_fork_s"], split["cpu_second_process_s"])
    )
    out["new_processes"] = {**split, "load_1min": load, "target_s": 10.0, "idle_wall_estimate_json_s": json_est}
    print(
        f"median: old {med['old']['wall_s']:.1f} s wall / {med['old']['cpu_s']:.1f} s CPU, new "
        f"{med['new']['wall_s']:.1f} s wall / {med['new']['cpu_s']:.1f} s CPU: {out['ratio_wall']:.1f}x wall, "
        f"{out['ratio_cpu']:.1f}x CPU; new tables identical across runs: {same}",
        flush=True,
    )
    if main_tree is not None:
        print(
            f"against main: {med['main']['wall_s']:.1f} s wall / {med['main']['cpu_s']:.1f} s CPU: "
            f"{out['ratio_wall_vs_main']:.2f}x wall, {out['ratio_cpu_vs_main']:.2f}x CPU; same verdict rows: "
            f"{out['new_verdicts_equal_main']}",
            flush=True,
        )
    print(
        f"new, one run with --out: {split['processes']} processes, {split['cpu_s']:.1f} s CPU: "
        f"{split['cpu_before_fork_s']:.1f} s before the fork, then {split['cpu_main_after_fork_s']:.1f} s (main) "
        f"beside {split['cpu_second_process_s']:.1f} s (second): idle 2-core wall estimate "
        f"{split['idle_wall_estimate_s']:.1f} s (before + the longer of the two; target 10 s), load {load:.1f}; "
        f"the same for the --json runs above: {json_est:.1f} s",
        flush=True,
    )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer trials")
    ap.add_argument("--e2e", action="store_true", help="also time the default sa-check computation")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument(
        "--vs-old",
        type=Path,
        default=None,
        help="a worktree of commit aa144d7 (before the exact grid "
        "pass): time the default "
        "command against it (only this)",
    )
    ap.add_argument(
        "--vs-main",
        type=Path,
        default=None,
        help="with --vs-old: also time this tree (the battery in one process, e.g. 54e6285)",
    )
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    if args.vs_old is not None:
        path = Path(__file__).with_suffix(".json")
        prev = json.loads(path.read_text()) if path.exists() else {}
        prev["vs_aa144d7"] = vs_old(args.vs_old, args.repeats, args.vs_main)
        path.write_text(json.dumps(prev, indent=2) + "\n")
        print(f"written {path}")
        return
    torch.set_num_threads(args.threads)
    L, k, eps = 512, 8, 0.01
    A = sparse_target(L, k, m=0.1, M=1.0, seed=0)
    n_base = 2 if args.quick else 4
    n_ours = 20 if args.quick else 60
    results = []
    # d < L (same algorithm family on both sides: draw R, multiply), d = 2L, and the d* of
    # the default run (~3.4e5), where the baseline materialises a 3.4e5 × 512 matrix per trial
    for d in (256, 2 * L, 342_224):
        base = per_trial_baseline(A, d, eps, n_base if d < 100_000 else 1, seed=1)
        ours_max = per_trial(lambda n: sample_errors(A, d, eps=eps, trials=n, seed=2, only_max=True), n_ours)  # noqa: B023 - called within this iteration
        ours_full = per_trial(lambda n: sample_errors(A, d, eps=eps, trials=n, seed=2), n_ours)  # noqa: B023 - called within this iteration
        row = {
            "L": L,
            "k": k,
            "d": d,
            "baseline_s": base,
            "sample_errors_max_s": ours_max,
            "sample_errors_full_s": ours_full,
            "speedup_max": base / ours_max,
            "speedup_full": base / ours_full,
        }
        results.append(row)
        print(
            f"L={L} k={k} d={d:>7}: baseline {base * 1e3:9.1f} ms/trial | sample_errors only_max "
            f"{ours_max * 1e3:7.1f} ms ({row['speedup_max']:6.1f}x) | full measures {ours_full * 1e3:7.1f} ms "
            f"({row['speedup_full']:6.1f}x)",
            flush=True,
        )
    asym = per_trial(lambda n: asymptotic_errors(A, eps=eps, trials=n, seed=3), n_ours)
    bart = results[-1]["sample_errors_max_s"]
    print(
        f"asymptotic law: {asym * 1e3:.2f} ms/draw (gives every d at once) vs exact Bartlett "
        f"{bart * 1e3:.1f} ms/trial per d: {bart / asym:.1f}x per d",
        flush=True,
    )
    out = {
        "machine": platform.platform(),
        "threads": args.threads,
        "torch": torch.__version__,
        "quick": args.quick,
        "rows": results,
        "asymptotic_s_per_draw": asym,
    }
    if args.e2e:
        t0, c0 = time.perf_counter(), time.process_time()
        measure(Config())
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        out["e2e_measure_default"] = {"wall_s": wall, "cpu_s": cpu, "target_s": 60.0}
        print(
            f"default measure() of one instance (L=512, k=8, eps=0.01, delta=0.1, 200 trials): {wall:.1f} s wall, {cpu:.1f} s CPU "
            f"(target <= 60 s; sweep and figures not included)",
            flush=True,
        )
    path = Path(__file__).with_suffix(".json")
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"written {path}")


if __name__ == "__main__":
    main()
