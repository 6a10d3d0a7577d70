"""Huge values of osa-train's sizes are refused in one line before any model is built (a
depth of 10^23 built blocks until killed; a huge MLP ratio or replicate count ended in a
traceback)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HUGE = str(10**23)


@pytest.mark.parametrize(
    ("flag", "words"),
    [
        ("--depth", "needs about"),
        ("--mlp-ratio", "needs about"),
        ("--seeds", "seeds must be in [1, 100000], got 100000000000000000000000"),
    ],
)
def test_huge_osa_train_sizes_are_refused_before_training(tmp_path: Path, flag: str, words: str) -> None:
    cmd = [sys.executable, "-m", "attnspec.cli.main", "osa-train", "--quick", flag, HUGE, "--out", str(tmp_path / "o")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == 1 and len(lines) == 1 and lines[0].startswith("error: "), proc.stderr[-2000:]
    assert words in lines[0] and "Traceback" not in proc.stderr
    assert not (tmp_path / "o").exists()
