"""Each null baseline's value beside the real P at Figure 1's reading: c at the reading index,
k90/n and row entropy, the mean over layers and heads.

A spectrum run holds the nulls it computed (``baseline_*.parquet``); a null it lacks (the
random-init model, which needs a forward pass per input) is read from the scaling study of the
same model and corpus at the same n, when the report holds one. The reading sentence
(:func:`null_reading`) says what the values mean: a near-uniform P keeps almost all of Σσ in its
first singular value, so a high share in the first indices is what averaging gives.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The nulls in the order tables and sentences show them.
ORDER = ("entropy-matched", "uniform", "random-init")


@dataclass(frozen=True)
class NullValue:
    """One null's values at a run's reading (means over layers and heads).

    Attributes
    ----------
    source : str
        The null's name (:data:`attnspec.spectra.nulls.BASELINES`).
    c_at : float
        Mean cumulative share of Σσ at the reading index.
    k90 : float
        Mean k90/n (per input, then averaged).
    row_entropy : float
        Mean normalised row entropy.
    where : str
        The results folder read, relative to the report's results.
    c_centred : float
        Mean centred c (P less its mean row, :mod:`attnspec.spectra.centred`) at the reading
        index; NaN where the null's tables lack it (a drawn null, a run that predates it, or
        uniform rows, whose centred part is 0).
    """

    source: str
    c_at: float
    k90: float
    row_entropy: float
    where: str
    c_centred: float = float("nan")


def _identity(run: Path) -> tuple[Any, Any, Any]:
    meta = json.loads((run / "meta.json").read_text())
    ident = meta.get("identity") or {}
    return ident.get("model"), ident.get("data"), ident.get("seq_len")


def null_sources(run: Path, results: Path) -> dict[str, Path]:
    """Where each null beside ``run`` is held: ``run`` itself, else a scaling study in ``results`` of
    the same model and corpus at the same n (folders in name order); in :data:`ORDER`.

    Parameters
    ----------
    run : Path
        A single-length spectrum results directory.
    results : Path
        The folder of every experiment's results directory.

    Returns
    -------
    dict of str to Path
    """
    from attnspec.spectra.nulls import baselines_of

    model, data, n = _identity(run)
    found = dict.fromkeys(baselines_of(run), run)
    for study in sorted(p for p in results.iterdir() if (p / "meta.json").is_file()):
        same = study / f"n{n}"
        if study != run and (same / "meta.json").is_file() and _identity(same) == (model, data, n):
            for name in baselines_of(same):
                found.setdefault(name, same)
    return {name: found[name] for name in ORDER if name in found}


def null_values(run: Path, at: int, results: Path) -> dict[str, NullValue]:
    """Every null beside ``run`` (:func:`null_sources`) read at index ``at``.

    Parameters
    ----------
    run : Path
        A single-length spectrum results directory.
    at : int
        The reading index.
    results : Path
        The folder of every experiment's results directory.

    Returns
    -------
    dict of str to NullValue
        In :data:`ORDER`; empty when no null is held.
    """
    from attnspec.spectra.nulls import read_baseline

    n = int(_identity(run)[2])
    out = {}
    for name, where in null_sources(run, results).items():
        spec = read_baseline(where, name, "spectrum")
        metrics = read_baseline(where, name, "metrics")
        out[name] = NullValue(
            source=name,
            c_at=float(spec[spec["index"] == at]["mean"].mean()),
            k90=float(metrics["reach_index_mean"].mean()) / n,
            row_entropy=float(metrics["row_entropy_mean"].mean()),
            where=where.relative_to(results).as_posix(),
            c_centred=float(metrics["c_centred_mean"].mean()) if "c_centred_mean" in metrics else float("nan"),
        )
    return out


def null_cells(nulls: dict[str, NullValue]) -> str:
    """``"0.516 · 1.000 · 0.974"``: c at the reading index of each null in :data:`ORDER`, ``—`` where absent.

    Parameters
    ----------
    nulls : dict of str to NullValue
        :func:`null_values`'s result.

    Returns
    -------
    str
    """
    return " | ".join(f"{nulls[name].c_at:.3f}" if name in nulls else "—" for name in ORDER)


def null_reading(real_c: float, real_k90: float, nulls: dict[str, NullValue], *, at: int) -> str:
    """``"c at index 128: the real P 0.826 (k90/n 0.320), the entropy-matched null 0.516 (...), ...,
    the random-init model 0.974 (...), above the trained P: ..."``: every null beside the real value,
    the random-init model read in the same sentence (:func:`init_clause`); empty without nulls.

    Parameters
    ----------
    real_c : float
        The real P's mean c at ``at``.
    real_k90 : float
        The real P's mean k90/n.
    nulls : dict of str to NullValue
        :func:`null_values`'s result.
    at : int
        The reading index.

    Returns
    -------
    str
    """
    if not nulls:
        return ""
    from attnspec.spectra.nulls import LABELS

    parts = [f"the real P {real_c:.3f} (k90/n {real_k90:.3f})"] + [
        f"the {LABELS[v.source]} {v.c_at:.3f} (k90/n {v.k90:.3f}, row entropy {v.row_entropy:.2f})"
        + (init_clause(real_c, v) if v.source == "random-init" else "")
        for v in nulls.values()
    ]
    return f"c at index {at}: " + ", ".join(parts) + "."


def init_clause(real_c: float, init: NullValue) -> str:
    """What the random-init model's share says beside the trained P's, as a clause of the sentence
    that gives both: above it, the share is what near-uniform averaging gives; below it, training
    concentrates Σσ beyond what the architecture does untrained.

    Parameters
    ----------
    real_c : float
        The trained P's mean c at the reading index.
    init : NullValue
        The random-init model's values.

    Returns
    -------
    str
        ``", above the trained P: ..."`` or ``", below the trained P: ..."``.
    """
    if init.c_at > real_c:
        return ", above the trained P: what near-uniform averaging gives, not learned low rank"
    return ", below the trained P: training concentrates Σσ beyond what the untrained architecture gives"


def averaging_reading(real_c: float, nulls: dict[str, NullValue], *, at: int) -> str:
    """The sentence that reads a random-init model whose share at ``at`` is above the real P's;
    empty otherwise.

    Parameters
    ----------
    real_c : float
        The real P's mean c at ``at``.
    nulls : dict of str to NullValue
        :func:`null_values`'s result.
    at : int
        The reading index.

    Returns
    -------
    str
    """
    init = nulls.get("random-init")
    if init is None or init.c_at <= real_c:
        return ""
    return (
        f"A near-uniform P is close to rank one, so a high share in the first {at} indices is what averaging "
        "gives; the trained P lies between averaging and the entropy-matched random softmax."
    )


def centred_reading(real: float | None, nulls: dict[str, NullValue]) -> str:
    """``"0.769 (random init 0.819)"``: a run's centred c beside each null that holds it (the
    random-init model's said ``not measured`` where its tables lack it), ``not measured`` without
    the run's own value.

    Parameters
    ----------
    real : float or None
        The run's mean centred c (None: not in its results).
    nulls : dict of str to NullValue
        :func:`null_values`'s result.

    Returns
    -------
    str
    """
    import math

    from attnspec.spectra.nulls import SHORT

    if real is None:
        return "not measured"
    beside = [f"{SHORT[v.source]} {v.c_centred:.3f}" for v in nulls.values() if math.isfinite(v.c_centred)]
    init = nulls.get("random-init")
    if init is not None and not math.isfinite(init.c_centred):  # the null that reads it, saved without it
        beside.append(f"{SHORT[init.source]} not measured")
    return f"{real:.3f}" + (f" ({', '.join(beside)})" if beside else "")


def centred_value(metrics: Any) -> tuple[str, float] | None:
    """The centred measure of a run's metrics table (P with its mean row removed,
    :mod:`attnspec.spectra.centred`): (metric name, mean over layers and heads), or None when the run
    was saved without it.

    Parameters
    ----------
    metrics : pandas.DataFrame
        A spectrum run's ``metrics`` table (``<name>_mean`` columns per layer and head).

    Returns
    -------
    (str, float) or None
    """
    column = "c_centred_mean"  # the metrics table's c_centred (attnspec.spectra.metric_table)
    if column in metrics.columns and metrics[column].notna().any():
        return column.removesuffix("_mean"), float(metrics[column].mean())
    return None
