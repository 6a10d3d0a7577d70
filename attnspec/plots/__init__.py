"""Figures, made only from saved results. This package holds the shared style and saver;
one submodule per result kind (spectrum, jl, expressivity, osa)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # figures are files; never open a window (CI has no screen)

import matplotlib.pyplot as plt  # noqa: E402
import seaborn as sns  # noqa: E402

FORMATS: tuple[str, ...] = ("png", "svg")


def style() -> None:
    sns.set_theme(context="paper", style="whitegrid", font_scale=1.1)
    # SVG text as text, and no random hash salt: the same figure gives the same bytes.
    plt.rcParams["svg.fonttype"] = "none"
    plt.rcParams["svg.hashsalt"] = "attnspec"
    plt.rcParams["savefig.dpi"] = 150


def save_figure(fig: plt.Figure, stem: Path, formats: Sequence[str] = FORMATS) -> list[Path]:
    """Save ``fig`` as ``stem.png`` and ``stem.svg`` (or ``formats``), close it, return the paths."""
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt in formats:
        p = stem.with_suffix(f".{fmt}")
        fig.savefig(p, bbox_inches="tight", metadata={"Date": None} if fmt == "svg" else None)
        paths.append(p)
    plt.close(fig)
    return paths
