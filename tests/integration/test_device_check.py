"""benchmarks/device_check.sh --dry-run: the GPU check's code runs whole on the CPU at tiny sizes."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_device_check_dry_run_writes_every_section(tmp_path: Path, data_dir: Path) -> None:
    out = tmp_path / "device_check.json"
    env = dict(os.environ, ATTNSPEC_DATA_DIR=str(data_dir), TMPDIR=str(tmp_path))
    p = subprocess.run(
        ["bash", "benchmarks/device_check.sh", "--dry-run", "--out", str(out)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    res = json.loads(out.read_text())
    for section in ("exactness", "throughput", "long_context", "tests"):
        assert section in res and "error" not in res[section], (section, res.get(section))
    for matrices in res["exactness"].values():
        # the CPU stands in for the device: every engine's curve agrees with float64 SVD
        assert matrices["max_curve_diff_svd_vs_lapack"] < 1e-4
        assert matrices["gram_cpu"]["curve_error_vs_float64"] < 1e-6
    base = res["throughput"]["roberta_base_shape"]
    assert any("minutes_for_10000_inputs" in r for r in base.values() if isinstance(r, dict))
    assert "svd" in res["long_context"]["n_64"] and res["tests"]["exit_code"] == 0
