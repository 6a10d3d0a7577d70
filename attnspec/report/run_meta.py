"""A spectrum result's meta.json as every section of the report reads it.

A single-length run keeps its meta.json at the top of its folder; a scaling study (``kind``
``spectrum-scaling``) keeps one run per length under ``n<len>/``, each with its own meta.json,
and lists the ``lengths`` at the top. The sections ask two things of them: the meta of each
single-length run (the threats, one per length), and the run that describes the whole result
(its longest length, whose documents every length shares: the provenance, the labels).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

SCALING_KIND = "spectrum-scaling"


def _read(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def length_metas(run: Path) -> list[dict[str, Any]]:
    """The meta.json of each single-length run of a result: the result's own, or one per length of
    a scaling study (the lengths whose run is on disk, in the study's order).

    Parameters
    ----------
    run : Path
        A spectrum results directory (a single run or a scaling study).

    Returns
    -------
    list of dict
        Empty when the folder holds no meta.json.
    """
    top = run / "meta.json"
    if not top.is_file():
        return []
    meta = _read(top)
    if meta.get("kind") != SCALING_KIND:
        return [meta]
    return [
        _read(run / f"n{n}" / "meta.json") for n in meta.get("lengths") or [] if (run / f"n{n}" / "meta.json").is_file()
    ]


def describing_meta(run: Path) -> dict[str, Any]:
    """The meta.json that describes a result: a single run's own, a scaling study's longest length's.

    Parameters
    ----------
    run : Path
        A spectrum results directory holding a meta.json.

    Returns
    -------
    dict
    """
    meta = _read(run / "meta.json")
    if meta.get("kind") == SCALING_KIND:
        return _read(run / f"n{max(meta['lengths'])}" / "meta.json")
    return meta


def spectrum_metas(experiments: Sequence[Any], results: Path) -> list[tuple[str, dict[str, Any]]]:
    """(experiment, meta.json) of every single-length spectrum run of the report, one per length of
    a scaling study (:func:`length_metas`).

    Parameters
    ----------
    experiments : sequence of Experiment
        The report's experiments.
    results : Path
        The folder of every experiment's results directory.

    Returns
    -------
    list of (str, dict)
    """
    return [
        (exp.name, meta)
        for exp in experiments
        if exp.command == "spectrum"
        for meta in length_metas(results / exp.name)
    ]
