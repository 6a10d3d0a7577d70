"""Plotting saved results imports only what drawing needs: `attnspec plot spectrum` of two runs
and `attnspec plot scaling` of a study load neither torch nor transformers (nor seaborn, nor
SciPy), in a fresh interpreter. A correctness test; the cost is measured by
benchmarks/bench_plot_imports.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import save_tiny_roberta
from typer.testing import CliRunner

from attnspec.cli.main import app

REPO = Path(__file__).resolve().parents[2]
WATCHED = ("torch", "transformers", "seaborn", "scipy", "sklearn", "matplotlib")

_PROBE = r"""
import json, sys
from attnspec.cli.main import app
try:
    app(ARGS)
except SystemExit as e:
    code = e.code
print(json.dumps({"code": code, "loaded": sorted(m for m in WATCHED if m in sys.modules)}))
"""


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two spectrum runs and a two-length scaling study of a tiny encoder, without figures."""
    root = tmp_path_factory.mktemp("plot-imports")
    model = save_tiny_roberta(root / "model")
    text = root / "docs.txt"
    words = "attention matrix rank movie story music numbers the of and a was to in it".split()
    text.write_text("\n".join(" ".join(words[(i + j) % len(words)] for j in range(40)) for i in range(8)) + "\n")
    base = ["spectrum", "--model", str(model), "--data", str(text), "--num-inputs", "2", "--device", "cpu", "-q"]
    for out, lengths in (("a", "16"), ("b", "12"), ("study", "8,12")):
        res = CliRunner().invoke(app, [*base, "--seq-len", lengths, "--no-plots", "--out", str(root / out)])
        assert res.exit_code == 0, res.output
    return root


def _loaded(args: list[str], cwd: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    code = f"ARGS = {args!r}\nWATCHED = {WATCHED!r}\n" + _PROBE
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=cwd, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_plot_spectrum_of_two_runs_imports_only_what_drawing_needs(saved: Path) -> None:
    got = _loaded(["plot", "spectrum", "a", "b", "--out", "figures"], saved)
    assert got == {"code": 0, "loaded": ["matplotlib"]}, got  # drawn, with matplotlib alone
    assert (saved / "figures" / "spectrum_compare.png").is_file()


def test_plot_scaling_imports_only_what_drawing_needs(saved: Path) -> None:
    got = _loaded(["plot", "scaling", "study"], saved)
    assert got == {"code": 0, "loaded": ["matplotlib"]}, got
    assert (saved / "study" / "figures" / "scaling_beta.png").is_file()
