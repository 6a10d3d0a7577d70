"""What the spectrum benchmarks share: where the real text is, and the timed scaling study that
the approximation and projection benchmarks measure their cost against.

Imported by the benchmark scripts, which run as ``python benchmarks/<name>.py`` (this folder is
then first on ``sys.path``).
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def data_dir() -> str:
    """The folder laid out like shared/data: $ATTNSPEC_DATA_DIR, else ../shared/data beside the
    checkout (or beside its parent, for a worktree); exits with one line when neither holds the
    WikiText-103 validation text."""
    for c in (
        os.environ.get("ATTNSPEC_DATA_DIR"),
        REPO.parent / "shared" / "data",
        REPO.parents[1] / "shared" / "data",
    ):
        if c and (Path(c) / "wikitext103" / "wiki.valid.raw").is_file():
            return str(c)
    raise SystemExit("needs the WikiText-103 text (ATTNSPEC_DATA_DIR or ../shared/data)")


def time_scaling_study(encoder, lengths: list[int], inputs: int, data: str) -> float:
    """Seconds of one scaling study (MiniLM on WikiText-103 windows, ``inputs`` inputs at every
    length of ``lengths``) on an already loaded ``encoder``: the baseline of the approximation and
    projection benchmarks."""
    from attnspec.spectra.config import SpectrumConfig
    from attnspec.spectra.scaling import run_scaling

    with tempfile.TemporaryDirectory() as tmp:
        cfg = SpectrumConfig(
            model="minilm",
            data="wiki103",
            data_dir=data,
            seq_len=lengths[-1],
            num_sentences=inputs,
            out=Path(tmp) / "study",
        )
        t0 = time.perf_counter()
        run_scaling(cfg, lengths, progress=False, encoder=encoder)
        return time.perf_counter() - t0
