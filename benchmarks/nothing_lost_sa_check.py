"""Nothing lost: sa-check before (commit 029337d, the flat module) and after the redesign.

Runs the committed experiments (experiments/sa-check.toml, experiments/sa-sweep.toml; their
``[quick]`` sizes by default, ``--full`` for the committed sizes) with the OLD code, extracted
from git into a temporary directory and run in a subprocess with PYTHONPATH pointing at it,
and with this checkout, then compares

* the measurement table ``sa.parquet`` column by column (every old row and column must be
  equal in the new table; the new table may add columns, and rows of the new kinds
  :data:`NEW_KINDS`);
* the verdict rows, matched by claim: the old prose claim is mapped to its new (id, reading)
  (:data:`OLD_TO_NEW`); the numbers (bound, exact, estimate, CI, trials, seed, parameters)
  must be equal, and every changed verdict is listed as a relabel with the new reason.

Usage (from the repository root; the machine may be loaded, the numbers do not depend on it)::

    python benchmarks/nothing_lost_sa_check.py [--full] [--experiments sa-check.toml,sa-sweep.toml]
                                               [--old-commit 029337d] [--repo /work/main]

Exit code 0 when every old number is reproduced (relabels are expected and listed), 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENTS = ("sa-check.toml", "sa-sweep.toml")

#: old prose claim (prefix) → (claim id, reading) of the redesigned battery.
OLD_TO_NEW: dict[str, tuple[str, str]] = {
    "on S: |Â−A| <= M e^δ δ (trials": ("expressivity.thm1.onsupport", "given-delta"),
    "on S: |Â−A| <= M e^δ δ with δ = realised": ("expressivity.thm1.onsupport", "realised-delta"),
    "on S, relative": ("expressivity.thm1.onsupport", "relative"),
    "off S: eps e^-δ <= Â <= eps e^δ": ("expressivity.thm1.offsupport", "range"),
    "off S, literal": ("expressivity.thm1.offsupport", "literal"),
    "SAN: row mass off S": ("expressivity.san.mass", "bound"),
    "JL: P(∃ij": ("expressivity.jl.pairs", "union-bound"),
    "JL dimension d = 8 ln": ("expressivity.thm1.dimension", "jl-constant"),
    "d = O(k log L) < L: construction narrower than exact X = (B, I), gaussian": ("expressivity.thm1.width", "gaussian"),
    "d = O(k log L) < L: construction narrower than exact X = (B, I), orthogonal":
        ("expressivity.thm1.width", "orthogonal"),
    "d = O(M² k log L / ε'): d* grows like 1/ε'": ("expressivity.notes.dstated", "eps-exponent"),
    "d = O(M² k log L / ε') with M = max A_ij": ("expressivity.notes.dstated", "m-max-a"),
    "d = O(M² k log L / ε') with M = max|B_ij|": ("expressivity.notes.dstated", "m-max-b"),
    "JL lemma (Gaussian)": ("expressivity.jl.gaussian", "exact-law"),
    "JL, orthogonal R": ("expressivity.jl.orthogonal", "scaled"),
    "d* = O(k log L): exponent of k": ("expressivity.thm1.klogl", "k-exponent"),
    "d* = O(k log L): exponent of log L": ("expressivity.thm1.klogl", "logl-exponent"),
    "d* ∝ k log L on the grid": ("expressivity.thm1.klogl", "ls-fit"),
    "d* < L somewhere on the grid": ("expressivity.thm1.width", "grid"),
    "orthogonal R needs a smaller d": ("expressivity.jl.orthogonaldim", "vs-gaussian"),
    "asymptotic law sqrt(d)(RᵀR − I) → Z": ("expressivity.tool.asymptotic", "vs-exact"),
}

#: Rows whose deciding instance moved on purpose (so their numbers differ): the JL lemmas are
#: now judged at the d where the bound is tightest among the d where it says something
#: (< 1), not at the d of the largest exact/bound ratio, which was often a d where the bound
#: was capped at 1 and said nothing; the vacuous rows keep their old d.
MOVED_ON_PURPOSE = {("expressivity.jl.gaussian", "exact-law"), ("expressivity.jl.orthogonal", "scaled")}

#: Measurement kinds the redesign added (held-out tests of fitted constants, issue #12's hypotheses).
NEW_KINDS = ("heldout", "hypotheses")

NUMBERS = ("bound", "exact", "estimate", "ci_low", "ci_high", "trials", "seed")
PARAMS = ("L", "k", "eps", "delta", "d", "eps_jl", "varied")


def experiment_args(path: Path, full: bool) -> list[str]:
    """The command-line options of an experiment (``[args]``, overridden by ``[quick]``)."""
    spec = tomllib.loads(path.read_text())
    args = {**spec.get("args", {}), **({} if full else spec.get("quick", {}))}
    out: list[str] = []
    for k, v in args.items():
        if v == "default":
            continue
        if isinstance(v, bool):
            out.append(f"--{k}" if v else f"--no-{k}")
        else:
            out += [f"--{k}", str(v)]
    return out


def run(pythonpath: Path, args: list[str], out: Path) -> list[dict]:
    """``attnspec sa-check ARGS --out OUT --json --no-plots`` with ``pythonpath`` first."""
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    # `python -m` puts the working directory first on sys.path: run from the output's parent,
    # so that PYTHONPATH decides which attnspec is imported
    proc = subprocess.run([sys.executable, "-m", "attnspec.cli.main", "sa-check", *args, "--out", str(out),
                           "--json", "--no-plots"], env=env, capture_output=True, text=True, check=False,
                          cwd=out.parent)
    if proc.returncode != 0:
        raise SystemExit(f"sa-check failed with PYTHONPATH={pythonpath}:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout)


def _same(a: object, b: object) -> bool:
    if a is None or b is None or (isinstance(a, float) and math.isnan(a)) or (isinstance(b, float) and math.isnan(b)):
        na = a is None or (isinstance(a, float) and math.isnan(a))
        nb = b is None or (isinstance(b, float) and math.isnan(b))
        return na and nb
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b or math.isclose(a, b, rel_tol=1e-12, abs_tol=0.0)
    return a == b


def compare_tables(old_dir: Path, new_dir: Path) -> list[str]:
    """Every old row and column of sa.parquet, equal in the new one (rows of NEW_KINDS aside)."""
    old = pd.read_parquet(old_dir / "sa.parquet")
    new = pd.read_parquet(new_dir / "sa.parquet")
    new = new[~new["kind"].isin(NEW_KINDS)].reset_index(drop=True)
    problems = []
    if len(old) != len(new):
        return [f"sa.parquet: {len(old)} old rows, {len(new)} new (rows of the new kinds aside)"]
    for c in old.columns:
        if c not in new:
            problems.append(f"sa.parquet: column {c!r} lost")
            continue
        a, b = old[c].to_numpy(), new[c].to_numpy()
        if a.dtype.kind in "fiu" and b.dtype.kind in "fiu":
            ok = np.array_equal(a.astype(float), b.astype(float), equal_nan=True)
        else:
            ok = all(_same(x, y) for x, y in zip(a.tolist(), b.tolist()))
        if not ok:
            problems.append(f"sa.parquet: column {c!r} differs")
    return problems


def new_key(old_claim: str) -> tuple[str, str] | None:
    for prefix, key in OLD_TO_NEW.items():
        if old_claim.startswith(prefix):
            return key
    return None


def compare_rows(old: list[dict], new: list[dict]) -> tuple[list[str], list[str], list[str]]:
    """(problems, relabels, new rows) from the verdict rows of one experiment, matched in order."""
    pool: dict[tuple, list[dict]] = {}
    for r in new:
        pool.setdefault((r["claim"], r["reading"]), []).append(r)
    problems, relabels = [], []
    for o in old:
        key = new_key(o["claim"])
        if key is None or not pool.get(key):
            problems.append(f"old row without a new counterpart: {o['claim']!r}")
            continue
        n = pool[key].pop(0)
        label = f"{key[0]} [{key[1]}]" + (f" (JL ε = {o['eps_jl']:g})" if o.get("eps_jl") else "")
        fields = NUMBERS + PARAMS
        diff = [f for f in fields if f in o and not _same(o.get(f), n.get(f))]
        if diff and key not in MOVED_ON_PURPOSE:
            problems.append(f"{label}: numbers differ in {diff}: old {[o.get(f) for f in diff]}, "
                            f"new {[n.get(f) for f in diff]}")
        moved = f"; deciding d moved from {o.get('d')} to {n.get('d')} on purpose" if diff else ""
        if o["verdict"] != n["verdict"]:
            relabels.append(f"{label}: {o['verdict']} → {n['verdict']}{moved}. Old: {o['evidence']} | "
                            f"New: {n['evidence']}")
        elif diff:
            relabels.append(f"{label}: {o['verdict']} (unchanged){moved}")
    added = [f"{k[0]} [{k[1]}]: {r['verdict']}: {r['evidence']}" for k, rs in pool.items() for r in rs]
    return problems, relabels, added


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--full", action="store_true", help="the committed sizes ([args]) instead of [quick]")
    ap.add_argument("--experiments", default=",".join(EXPERIMENTS),
                    help="comma list of experiment files in experiments/ (default: both)")
    ap.add_argument("--old-commit", default="029337d")
    ap.add_argument("--repo", type=Path, default=Path("/work/main"), help="a git checkout holding the old commit")
    args = ap.parse_args()
    failed = False
    with tempfile.TemporaryDirectory(prefix="sa-nothing-lost-") as tmp:
        tmp = Path(tmp)
        old_src = tmp / "old"
        old_src.mkdir()
        archive = subprocess.run(["git", "-C", str(args.repo), "archive", args.old_commit], capture_output=True,
                                 check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(old_src)], input=archive, check=True)
        for name in [x for x in args.experiments.split(",") if x]:
            cli = experiment_args(ROOT / "experiments" / name, args.full)
            print(f"\n## {name}: attnspec sa-check {' '.join(cli)}", flush=True)
            old = run(old_src, cli, tmp / f"old-{name}")
            new = run(ROOT, cli, tmp / f"new-{name}")
            problems = compare_tables(tmp / f"old-{name}", tmp / f"new-{name}")
            p2, relabels, added = compare_rows(old, new)
            problems += p2
            print(f"{len(old)} old verdict rows, {len(new)} new; sa.parquet "
                  f"{'equal' if not any(p.startswith('sa.parquet') for p in problems) else 'DIFFERS'}")
            for title, items in (("PROBLEMS", problems), ("relabelled or moved on purpose", relabels),
                                 ("new rows", added)):
                print(f"{title}: {len(items)}")
                for it in items:
                    print(f"  - {it}")
            failed |= bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
