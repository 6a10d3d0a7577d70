"""Writing the report's files: whole or not at all, never through a planted symbolic link."""

from __future__ import annotations

import os
from pathlib import Path

from attnspec.errors import ResultsError


def _refuse_link(folder: Path) -> None:
    """A results folder that is a symbolic link is refused in one line: the report deletes and
    rewrites results folders, and would otherwise do so wherever the link points."""
    if folder.is_symlink():
        raise ResultsError(
            f"{folder} is a symbolic link (to {os.readlink(folder)}); the report replaces its results "
            "folders and never follows a link there: remove the link or choose another --out"
        )


def _write_text(path: Path, text: str) -> None:
    """Write a report file whole (a temporary name, then renamed): an interrupt or a full disk
    never leaves half of it."""
    from attnspec.storage.writer import atomic_write_bytes

    atomic_write_bytes(path, text.encode())
