"""Benchmark: how long `attnspec --help` takes against `python -c "import torch"`.

Baseline, measured in the same run: a fresh interpreter that only imports torch (what
every `--help` paid before the CLI imported heavy modules lazily). Each command is run
`--repeats` times in a fresh process; the median wall time is reported, with the ratio
help / import-torch (the goal is well under 1: `--help` must not import torch at all).
Also times `attnspec --version`, every subcommand's `--help`, and `attnspec claims` (it prints
static text: budget 0.5 s wall on an idle 2-core machine; also its CPU time, steadier on a
busy one, and the same command routed through typer instead of the console script's fast
path). Writes
bench_cli_startup.json next to this file.

    python benchmarks/bench_cli_startup.py
    python benchmarks/bench_cli_startup.py --repeats 3   # quicker
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

# `python -m attnspec.cli.main` is what the console script runs; using the interpreter
# directly keeps the comparison fair (same Python, same PYTHONPATH).
CLI = [sys.executable, "-m", "attnspec.cli.main"]
SUBCOMMANDS = (
    ["spectrum"],
    ["merge"],
    ["plot", "spectrum"],
    ["sa-check"],
    ["jl-check"],
    ["osa-check"],
    ["osa-train"],
    ["report"],
)


def wall(cmd: list[str], repeats: int) -> float:
    """Median wall time in seconds of running `cmd` in a fresh process."""
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def cpu(cmd: list[str], repeats: int) -> float:
    """Median CPU time (user + system) in seconds of running `cmd` in a fresh process."""
    import resource

    times = []
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        times.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    r = args.repeats
    python_only = wall([sys.executable, "-c", "pass"], r)
    torch_import = wall([sys.executable, "-c", "import torch"], r)
    help_s = wall(CLI + ["--help"], r)
    version_s = wall(CLI + ["--version"], r)
    sub = {" ".join(c): wall(CLI + c + ["--help"], r) for c in SUBCOMMANDS}
    via_typer = [
        sys.executable,
        "-c",
        "import sys; from attnspec.cli.main import app; sys.argv = ['attnspec', 'claims']; app()",
    ]
    claims = {
        "claims_s": wall(CLI + ["claims"], r),
        "claims_cpu_s": cpu(CLI + ["claims"], r),
        "claims_json_s": wall(CLI + ["claims", "--json"], r),
        "claims_via_typer_s": wall(via_typer, r),
        "python_startup_cpu_s": cpu([sys.executable, "-c", "pass"], r),
    }
    result = {
        "repeats": r,
        "cpu_count": os.cpu_count(),
        "loadavg_1min": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "python_startup_s": python_only,
        "import_torch_s": torch_import,
        "help_s": help_s,
        "version_s": version_s,
        "subcommand_help_s": sub,
        "ratio_help_vs_import_torch": help_s / torch_import,
        "slowest_subcommand_help_s": max(sub.values()),
        **claims,
    }
    print(f"python -c pass                 {python_only:6.3f} s")
    print(f'python -c "import torch"       {torch_import:6.3f} s   (baseline)')
    print(f"attnspec --help                {help_s:6.3f} s   ratio {help_s / torch_import:.2f}")
    print(f"attnspec --version             {version_s:6.3f} s   ratio {version_s / torch_import:.2f}")
    for name, s in sub.items():
        print(f"attnspec {name + ' --help':<22} {s:6.3f} s   ratio {s / torch_import:.2f}")
    print(
        f"attnspec claims                {claims['claims_s']:6.3f} s   (cpu {claims['claims_cpu_s']:.3f} s; "
        f"--json {claims['claims_json_s']:.3f} s; through typer {claims['claims_via_typer_s']:.3f} s)"
    )
    out = Path(__file__).with_suffix(".json")
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
