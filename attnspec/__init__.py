"""attnspec: spectral analysis of self-attention and numerical checks of its theorems.

Python API (imports torch, SciPy and pandas only when first used)::

    import attnspec
    res = attnspec.spectrum(model="minilm", texts=["..."], seq_len=64)
    res.curves, res.metrics, res.meta, res.plot(), res.save("dir")
    res = attnspec.load("dir")
    study = attnspec.spectrum(model="minilm", data="wiki103", seq_len=[64, 128, 256])   # a scaling study
    study.runs[64], study.fits, study.sentence(), study.plot(), study.save("dir")

    chk = attnspec.jl_check(n=1024, eps=0.2)     # also sa_check, osa_check, osa_train
    chk.summary(), chk.verdicts, chk.tables, chk.plot(), chk.save("dir")
    attnspec.claims(paper="linformer")          # the catalogue, as a DataFrame
    attnspec.check("favor", trials=2000)        # any registered check, a plug-in's too (attnspec.theorem)

See docs/python-api.md.
"""

from typing import Any

#: The API: name → the module that defines it (imported on first use, not by `import attnspec`).
_API: dict[str, str] = {
    "spectrum": "attnspec.api",
    "load": "attnspec.api",
    "SpectrumResult": "attnspec.api",
    "ScalingResult": "attnspec.api",
    "jl_check": "attnspec.checks",
    "sa_check": "attnspec.checks",
    "osa_check": "attnspec.checks",
    "osa_train": "attnspec.checks",
    "CheckResult": "attnspec.checks",
    "check": "attnspec.checks",
    "claims": "attnspec.checks",
}

#: Submodules reachable as attributes after a bare `import attnspec` (e.g. attnspec.battery).
_SUBMODULES = (
    "api",
    "battery",
    "checks",
    "errors",
    "numerics",
    "options",
    "runtime",
    "spectra",
    "storage",
    "theorem",
    "verdicts",
)

__all__ = sorted([*_API, "__version__"])


def _version() -> str:
    # importlib.metadata costs tens of milliseconds (email, csv, zipfile): only when asked
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("attnspec")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "0.0.0+unknown"


def __getattr__(name: str) -> Any:
    # Lazy: `import attnspec` stays light; the API pulls in torch/pandas on first use.
    import importlib

    if name == "__version__":
        globals()["__version__"] = v = _version()
        return v
    if name in _API:
        from attnspec.runtime.progress import quiet_notebook_bars

        quiet_notebook_bars()  # before the API's libraries pick their progress bars
        return getattr(importlib.import_module(_API[name]), name)
    if name in _SUBMODULES:
        return importlib.import_module(f"attnspec.{name}")
    raise AttributeError(f"module 'attnspec' has no attribute {name!r}")


def __dir__() -> list[str]:
    # the API and the public submodules (not the helpers this file imports)
    return sorted({*_API, *_SUBMODULES, "__version__"})
