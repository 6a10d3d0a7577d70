"""The API's surface: `import attnspec` is light, `attnspec.spectrum` is a plain function whose
help shows its parameters, and `dir(attnspec)` lists the API (tab completion offers it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "scipy", "pandas", "transformers", "matplotlib")


def _run(code: str) -> str:
    r = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_import_attnspec_and_the_spectra_package_load_no_heavy_library():
    out = _run(
        f"import sys, attnspec, attnspec.spectra, attnspec.spectra.data; "
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    assert out == "[]", f"`import attnspec` imported {out}"


def test_spectrum_is_a_plain_function_whose_help_shows_its_parameters():
    import inspect
    import pydoc
    import types

    import attnspec
    from attnspec.api import spectrum

    assert isinstance(attnspec.spectrum, types.FunctionType) and attnspec.spectrum is spectrum
    params = inspect.signature(attnspec.spectrum).parameters
    assert {"model", "data", "texts", "seq_len", "num_inputs", "seed", "out"} <= set(params)
    text = pydoc.render_doc(attnspec.spectrum)
    assert "num_inputs" in text and "SpectrumResult" in text
    assert "LAPACK" not in text  # the engine's notes live with the engine (attnspec.spectra.engine)
    assert not hasattr(attnspec.spectrum, "__path__")  # not a module


def test_dir_lists_the_api():
    import attnspec

    listed = set(dir(attnspec))
    assert {"spectrum", "load", "jl_check", "sa_check", "osa_check", "osa_train", "claims", "spectra"} <= listed
    for name in ("spectrum", "load", "jl_check"):
        assert callable(getattr(attnspec, name))
