"""Benchmark: the CPU cost of `attnspec plot spectrum` (two saved runs) and `attnspec plot scaling`
(a saved two-length study) against `python -c "import matplotlib.pyplot"`, in the same run.

Baseline, measured in the same run: a fresh interpreter that imports matplotlib.pyplot, the
least any command that draws a figure pays. Each command runs ``--repeats`` times in a fresh
process; the median CPU time (user + system) is reported for the whole command and for the
part before its first figure is drawn (the drawing functions replaced by a stop that reads the
process's CPU clock), each as a ratio to the baseline. ``import torch`` is timed beside them:
what a plot command would pay on top if it imported torch. The saved results come from a tiny
random RoBERTa (2 layers x 4 heads) made in a temporary folder first. Writes
bench_plot_imports.json next to this file.

    python benchmarks/bench_plot_imports.py
    python benchmarks/bench_plot_imports.py --repeats 3   # quicker
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "attnspec.cli.main"]
#: Runs the command with its drawing functions replaced by a stop that prints the CPU time spent.
_BEFORE_DRAWING = r"""
import os, sys, time
import {module} as drawing
def stop(*args, **kwargs):
    print(time.process_time(), flush=True)
    os._exit(0)
for name in {names!r}:
    setattr(drawing, name, stop)
from attnspec.cli.main import app
app({args!r})
"""


def cpu(cmd: list[str], repeats: int, cwd: Path) -> float:
    """Median CPU time (user + system) in seconds of running ``cmd`` in a fresh process."""
    times = []
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        times.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(times)


def before_drawing(module: str, names: tuple[str, ...], args: list[str], repeats: int, cwd: Path) -> float:
    """Median CPU seconds a command spends before it draws its first figure."""
    code = _BEFORE_DRAWING.format(module=module, names=names, args=args)
    times = []
    for _ in range(repeats):
        out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=cwd)
        times.append(float(out.stdout.strip().splitlines()[-1]))
    return statistics.median(times)


def saved_results(root: Path) -> None:
    """Two spectrum runs (n = 16 and 12) and a scaling study (n = 8, 12) of a tiny encoder, no figures."""
    sys.path.insert(0, str(REPO / "tests"))
    from helpers import save_tiny_roberta

    model = save_tiny_roberta(root / "model")
    words = "attention matrix rank movie story music numbers the of and a was to in it".split()
    text = "\n".join(" ".join(words[(i + j) % len(words)] for j in range(40)) for i in range(8)) + "\n"
    (root / "docs.txt").write_text(text)
    base = ["spectrum", "--model", str(model), "--data", "docs.txt", "--num-inputs", "2", "--device", "cpu", "-q"]
    for out, lengths in (("a", "16"), ("b", "12"), ("study", "8,12")):
        subprocess.run([*CLI, *base, "--seq-len", lengths, "--no-plots", "--out", out], check=True, cwd=root)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    r = ap.parse_args().repeats
    os.environ["PYTHONPATH"] = str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        saved_results(root)
        spectrum = ["plot", "spectrum", "a", "b", "--out", "figures"]
        scaling = ["plot", "scaling", "study"]
        baseline = cpu([sys.executable, "-c", "import matplotlib.pyplot"], r, root)
        result = {
            "repeats": r,
            "cpu_count": os.cpu_count(),
            "loadavg_1min": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
            "baseline_import_pyplot_cpu_s": baseline,
            "import_torch_cpu_s": cpu([sys.executable, "-c", "import torch"], r, root),
            "plot_spectrum_cpu_s": cpu(CLI + spectrum, r, root),
            "plot_spectrum_before_drawing_cpu_s": before_drawing(
                "attnspec.plots.spectrum", ("plot_run", "plot_compare"), spectrum, r, root
            ),
            "plot_scaling_cpu_s": cpu(CLI + scaling, r, root),
            "plot_scaling_before_drawing_cpu_s": before_drawing(
                "attnspec.plots.scaling", ("plot_scaling",), scaling, r, root
            ),
        }
    for key in [k for k in result if k.startswith(("plot_", "import_torch"))]:
        result[f"ratio_{key.removesuffix('_cpu_s')}_vs_pyplot"] = result[key] / baseline
    print(f'python -c "import matplotlib.pyplot"     {baseline:6.2f} CPU s   (baseline)')
    for key in [k for k in result if k.endswith("_cpu_s") and not k.startswith("baseline")]:
        name = key.removesuffix("_cpu_s").replace("_", " ")
        print(f"{name:<40} {result[key]:6.2f} CPU s   ratio {result[key] / baseline:.2f}")
    out = Path(__file__).with_suffix(".json")
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
