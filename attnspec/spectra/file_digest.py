"""The SHA-256 of a file on disk: how a model file, a packaged weight file and a corpus file
are identified in a run's record (read in 4 MB pieces, so a file of gigabytes is never held
in memory at once)."""

from __future__ import annotations

import hashlib
from pathlib import Path

#: Bytes read at a time.
PIECE_BYTES = 1 << 22


def file_digest(path: Path) -> str:
    """SHA-256 of the file's bytes.

    Parameters
    ----------
    path : Path
        The file.

    Returns
    -------
    str
        The hex digest.
    """
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for piece in iter(lambda: f.read(PIECE_BYTES), b""):
            h.update(piece)
    return h.hexdigest()
