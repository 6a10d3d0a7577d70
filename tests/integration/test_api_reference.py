"""The API reference builds (docs/build_api.py, pdoc) without a warning and documents the API.

Building it imports every public module, torch and transformers included (about 40 s on
the project's machines), hence ``slow``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pdoc", reason="pdoc (the dev extra) builds the API reference")

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_api_reference_builds_without_warnings_and_documents_the_api(tmp_path):
    import attnspec

    r = subprocess.run(
        [sys.executable, str(REPO / "docs" / "build_api.py"), "-o", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])},
    )
    assert r.returncode == 0, f"the API reference did not build cleanly:\n{r.stderr[-4000:]}"
    top = (tmp_path / "attnspec.html").read_text()
    for name in attnspec.__all__:
        assert f'id="{name}"' in top, f"attnspec.{name} is missing from the API reference"
    for method in ("SpectrumResult.per_layer", "SpectrumResult.save", "CheckResult.summary", "CheckResult.save"):
        assert f'id="{method}"' in top
    assert '<h6 id="parameters">Parameters' in top  # numpydoc sections rendered, not shown raw
    for page in ("api", "checks", "spectra/scaling", "theory/osa/layer", "report", "theorem", "theorem/readings"):
        assert (tmp_path / "attnspec" / f"{page}.html").is_file()
    theorem = (tmp_path / "attnspec" / "theorem.html").read_text()
    for name in ("Check", "Claim", "Covers", "Paper", "register_command", "run_check"):
        assert f'id="{name}"' in theorem, f"attnspec.theorem.{name} is missing from the API reference"
    assert not (tmp_path / "attnspec" / "cli").exists()
