"""`attnspec spectrum`, `attnspec merge`, `attnspec plot spectrum` (being written)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Register the spectrum commands on ``app``."""
