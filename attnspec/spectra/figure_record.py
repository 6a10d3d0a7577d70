"""What a spectrum run records about its figures, without drawing any.

``attnspec spectrum --no-plots`` and the text summary need these, and importing the
plotting package (matplotlib, seaborn) would cost them about 1.5 s of start-up for nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from attnspec.spectra.reading import check_at, default_at  # the reading index lives beside the computation
from attnspec.storage.results import read_meta, write_meta

#: meta.json key under which a run records how its figures were drawn, so that
#: ``attnspec plot spectrum RUN`` redraws the same figures.
FIGURES_KEY = "figures"
DEFAULT_FORMATS: tuple[str, ...] = ("png", "svg")


def figure_choices(
    meta: dict[str, Any],
    n: int,
    *,
    at: int | None = None,
    formats: Sequence[str] | None = None,
    label: str | None = None,
) -> dict[str, Any]:
    """The plotting choices of a run: what was asked now, else what meta.json recorded, else the defaults.

    Parameters
    ----------
    meta : dict
        The run's meta.json.
    n : int
        The run's length; ``at`` is checked against it.
    at : int, optional
        The index the heatmap reads (default: recorded, else the reading point of n).
    formats : sequence of str, optional
        The file formats (default: recorded, else PNG and SVG).
    label : str, optional
        The title that replaces the run's own label (``--label``).

    Returns
    -------
    dict
        ``{"at": int, "formats": [str, ...]}``, plus ``"label"`` when one was given now or
        recorded.
    """
    saved = meta.get(FIGURES_KEY) or {}
    at = at if at is not None else saved.get("at")
    at = check_at(int(at) if at is not None else default_at(n), n)
    fmts = list(formats) if formats is not None else list(saved.get("formats") or DEFAULT_FORMATS)
    choices: dict[str, Any] = {"at": at, "formats": fmts}
    label = label if label is not None else saved.get("label")
    if label:
        choices["label"] = str(label)
    return choices


def record_figure_choices(run: Path, choices: dict[str, Any]) -> None:
    """Store the plotting choices in ``run/meta.json`` (key ``figures``).

    Parameters
    ----------
    run : Path
        A spectrum results directory.
    choices : dict
        :func:`figure_choices`' result.
    """
    meta = read_meta(run)
    meta[FIGURES_KEY] = {**choices, "note": "attnspec plot spectrum RUN redraws with these unless told otherwise"}
    write_meta(run, meta)


def family_note(meta: dict[str, Any]) -> str:
    """``"decoder, causal P"`` / ``"encoder"`` from a run's meta (empty for runs made before it was recorded).

    Parameters
    ----------
    meta : dict
        The run's meta.json.

    Returns
    -------
    str
    """
    family = meta.get("family")
    if family is None:
        return ""
    return f"{family}, causal P" if meta.get("causal") else str(family)
