"""`attnspec spectrum --no-plots` never imports the plotting libraries.

matplotlib costs about 1 s of start-up (benchmarks/bench_spectrum.py, fixed
costs); a run that draws no figure must not pay it, summary included.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

_PROBE = r"""
import json, sys
from attnspec.cli.main import app
try:
    app(ARGS)
except SystemExit as e:
    code = e.code
print(json.dumps({"code": code, "loaded": sorted(m for m in ("matplotlib", "seaborn") if m in sys.modules)}))
"""


def _run(args: list[str]) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run(
        [sys.executable, "-c", f"ARGS = {args!r}\n" + _PROBE],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_no_plots_run_loads_no_plotting_library(model_dir: Path, text_file: Path, tmp_path: Path) -> None:
    base = [
        "spectrum",
        "--model",
        str(model_dir),
        "--data",
        str(text_file),
        "--seq-len",
        "32",
        "--num-sentences",
        "4",
        "--device",
        "cpu",
        "-q",
    ]
    got = _run([*base, "--out", str(tmp_path / "a"), "--no-plots"])
    assert got == {"code": 0, "loaded": []}, got
    assert json.loads((tmp_path / "a" / "meta.json").read_text())["figures"]["at"] == 8  # still recorded
    # and the check can fail: the same run with figures loads matplotlib, and only it (the
    # figures' theme and heatmap are drawn with matplotlib alone)
    assert _run([*base, "--out", str(tmp_path / "b")])["loaded"] == ["matplotlib"]
