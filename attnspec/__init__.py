"""attnspec: spectral analysis of self-attention and numerical checks of its theorems.

Python API (imports torch and transformers only when first used)::

    import attnspec
    res = attnspec.spectrum(model="minilm", texts=["..."], seq_len=64)
    res.curves, res.metrics, res.meta, res.plot(), res.save("dir")
    res = attnspec.load("dir")

See docs/python-api.md.
"""

from importlib.metadata import PackageNotFoundError, version
from typing import Any

try:
    __version__ = version("attnspec")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+unknown"

__all__ = ["SpectrumResult", "__version__", "load", "spectrum"]


def __getattr__(name: str) -> Any:
    # Lazy: `import attnspec` stays light; the API pulls in torch on first use.
    if name == "spectrum":
        # The engine module of that name is callable and runs attnspec.api.spectrum, so
        # `attnspec.spectrum(...)` works before and after `import attnspec.spectrum`.
        import importlib

        return importlib.import_module("attnspec.spectrum")
    if name in ("load", "SpectrumResult"):
        from attnspec import api

        return getattr(api, name)
    raise AttributeError(f"module 'attnspec' has no attribute {name!r}")
