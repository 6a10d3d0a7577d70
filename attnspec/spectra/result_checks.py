"""Saved results are foreign input: check them before use.

A results directory may have been edited, copied together from several runs, damaged or
made by another tool. Every reader of spectrum results (``attnspec.load``, ``merge``,
``plot spectrum``, ``plot scaling``, ``compare``) goes through these checks first, so that
a wrong shape is ONE :class:`~attnspec.errors.ResultsError` naming the file and what is
wrong with it, never an AttributeError, KeyError or ValueError from pandas, and never a
figure or a comparison drawn from NaN means.

What is checked:

* ``meta.json`` — a JSON object with a string ``kind`` (the expected one, when asked);
  for a spectrum run an ``identity`` object whose ``seq_len`` is an integer >= 2, an
  integer ``inputs_done`` >= 0, and a ``figures`` record that is an object with an
  integer ``at`` in 1..seq_len and formats among png/svg/pdf; for a scaling directory a
  strictly increasing list of integer ``lengths``.
* ``spectrum.parquet`` (the curves) — the columns ``layer, head, index, mean, std, count``
  with integer and float dtypes; at least one row; every (layer, head) with the indices
  1..seq_len of meta.json exactly once; every count equal to meta.json's ``inputs_done``;
  every mean finite and in [0, 1] where inputs were counted.
* ``metrics.parquet`` — ``layer, head, count`` and the effective and stable rank means,
  counts as above, finite means where counted.
* ``inputs.parquet`` (when present) — ``input, layer`` integer columns.
"""

from __future__ import annotations

import numbers
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from attnspec.errors import ResultsError
from attnspec.storage.results import META_FILE, read_meta, read_table

SPECTRUM_KIND = "spectrum"
SCALING_KIND = "spectrum-scaling"
#: Columns of the curve table and whether each is an integer (else a float) column.
CURVE_COLUMNS: dict[str, bool] = {
    "layer": True,
    "head": True,
    "index": True,
    "mean": False,
    "std": False,
    "count": True,
}
#: Columns every metrics table has (older runs lack the later metrics, which are optional).
METRIC_COLUMNS: dict[str, bool] = {
    "layer": True,
    "head": True,
    "count": True,
    "effective_rank_mean": False,
    "stable_rank_mean": False,
}
INPUT_COLUMNS: dict[str, bool] = {"input": True, "layer": True}
FIGURE_FORMATS = ("png", "svg", "pdf")
#: Rounding allowance of a cumulative value in [0, 1].
CURVE_TOL = 1e-6


def _is_int(v: Any) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def read_kind(run: Path) -> Any:
    """The ``kind`` that ``run/meta.json`` names (None when it names none; a damaged file is
    refused as :func:`check_meta` refuses it).

    Parameters
    ----------
    run : Path
        A results directory.

    Returns
    -------
    object
        The recorded kind.
    """
    meta = read_meta(Path(run))
    return meta.get("kind") if isinstance(meta, dict) else None


def check_meta(run: Path, *, kind: str | tuple[str, ...] | None = None) -> dict[str, Any]:
    """``run/meta.json`` read and checked (module docstring); returns it.

    Parameters
    ----------
    run : Path
        A results directory.
    kind : str or tuple of str, optional
        The kinds of result accepted (None: any), else a :class:`ResultsError` naming the
        kind found.

    Returns
    -------
    dict

    Raises
    ------
    ResultsError
        One line naming the file and what is wrong with it.
    """
    run = Path(run)
    path = run / META_FILE
    meta = read_meta(run)
    if not isinstance(meta, dict):
        raise ResultsError(f"{path} is not a results record: it holds a JSON {type(meta).__name__}, not an object")
    found = meta.get("kind")
    if not isinstance(found, str):
        raise ResultsError(f"{path} names no kind of result (its 'kind' is {found!r})")
    kinds = (kind,) if isinstance(kind, str) else kind
    if kinds is not None and found not in kinds:
        raise ResultsError(f"{run} holds a {found!r} result, not a {' or '.join(repr(k) for k in kinds)} result")
    ident = meta.get("identity")
    if not isinstance(ident, dict):
        raise ResultsError(f"{path}: 'identity' is {type(ident).__name__}, not an object")
    if found == SPECTRUM_KIND:
        n = ident.get("seq_len")
        if not _is_int(n) or n < 2:
            raise ResultsError(f"{path}: identity.seq_len is {n!r}, not an integer >= 2")
        done = meta.get("inputs_done")
        if not _is_int(done) or done < 0:
            raise ResultsError(f"{path}: inputs_done is {done!r}, not an integer >= 0")
        figs = meta.get("figures")
        if figs is not None:
            if not isinstance(figs, dict):
                raise ResultsError(
                    f"{path}: 'figures' is {type(figs).__name__}, not an object (remove it to redraw with the defaults)"
                )
            at, fmts = figs.get("at"), figs.get("formats")
            if at is not None and (not _is_int(at) or not 1 <= at <= n):
                raise ResultsError(f"{path}: figures.at is {at!r}, not an integer in 1..{n}")
            if fmts is not None and (not isinstance(fmts, list) or not all(f in FIGURE_FORMATS for f in fmts)):
                raise ResultsError(f"{path}: figures.formats is {fmts!r}, not a list of {', '.join(FIGURE_FORMATS)}")
    elif found == SCALING_KIND:
        lengths = meta.get("lengths")
        if (
            not isinstance(lengths, list)
            or len(lengths) < 2
            or not all(_is_int(v) and v >= 2 for v in lengths)
            or lengths != sorted(set(lengths))
        ):
            raise ResultsError(
                f"{path}: 'lengths' is {lengths!r}, not a strictly increasing list of at least two integers >= 2"
            )
    return meta


def _check_columns(path: Path, frame: pd.DataFrame, wanted: dict[str, bool], what: str) -> None:
    missing = [c for c in wanted if c not in frame.columns]
    if missing:
        hint = ""
        if what == "curve" and "effective_rank_mean" in frame.columns:
            hint = " (it holds a metrics table, not curves)"
        elif what == "metrics" and "index" in frame.columns:
            hint = " (it holds a curve table, not metrics)"
        raise ResultsError(f"{path} is not a {what} table{hint}: no {', '.join(repr(c) for c in missing)} column")
    for c, integer in wanted.items():
        dtype = frame[c].dtype
        ok = (
            pd.api.types.is_integer_dtype(dtype)
            if integer
            else pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)
        )
        if not ok:
            raise ResultsError(
                f"{path}: column {c!r} has dtype {dtype}, not {'an integer' if integer else 'a numeric'} dtype"
            )
    if not len(frame):
        raise ResultsError(f"{path} has no rows")


def _check_counts(path: Path, counts: pd.Series, inputs_done: int | None) -> None:
    if (counts < 0).any():
        raise ResultsError(f"{path}: negative counts")
    if inputs_done is not None and not (counts == inputs_done).all():
        bad = sorted(set(int(v) for v in counts.unique()) - {inputs_done})
        raise ResultsError(
            f"{path}: counts {bad[:3]} where meta.json records {inputs_done} inputs done "
            "(every (layer, head) counts every input)"
        )


def _read_table_checked(
    run: Path, meta: dict[str, Any] | None, table: str, columns: dict[str, bool], what: str
) -> tuple[dict[str, Any], Path, pd.DataFrame]:
    """A spectrum run's meta.json (``meta`` when given, already checked), and one of its tables
    read with its columns checked (:func:`_check_columns`)."""
    meta = check_meta(run, kind=SPECTRUM_KIND) if meta is None else meta
    path = run / f"{table}.parquet"
    frame = read_table(run, table)
    _check_columns(path, frame, columns, what)
    return meta, path, frame


def check_curves(run: Path, meta: dict[str, Any] | None = None) -> pd.DataFrame:
    """``run/spectrum.parquet`` read and checked against ``meta`` (default: :func:`check_meta`).

    Parameters
    ----------
    run : Path
        A results directory.
    meta : dict, optional
        Its meta.json, already checked (default: read with :func:`check_meta`).

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    ResultsError
        One line naming the file and what is wrong with it.
    """
    meta, path, frame = _read_table_checked(Path(run), meta, "spectrum", CURVE_COLUMNS, "curve")
    n = int(meta["identity"]["seq_len"])
    _check_counts(path, frame["count"], int(meta["inputs_done"]))
    # sorted by (layer, head, index), each (layer, head) must hold exactly the indices 1..n
    layer, head, index = (frame[c].to_numpy() for c in ("layer", "head", "index"))
    order = np.lexsort((index, head, layer))
    layer, head, index = layer[order], head[order], index[order]
    whole = len(index) % n == 0
    if whole:
        blocks = len(index) // n
        whole = (
            np.array_equal(index, np.tile(np.arange(1, n + 1), blocks))
            and (layer.reshape(blocks, n) == layer[::n, None]).all()
            and (head.reshape(blocks, n) == head[::n, None]).all()
            and len(set(zip(layer[::n].tolist(), head[::n].tolist()))) == blocks
        )
    if not whole:
        raise ResultsError(
            f"{path}: the curves do not have the indices 1..{n} of meta.json's seq_len once per "
            f"(layer, head) (found indices {int(index.min())}..{int(index.max())} in {len(index)} rows)"
        )
    counted = frame["count"] > 0
    mean = frame.loc[counted, "mean"].to_numpy(dtype=float)
    if not np.isfinite(mean).all():
        raise ResultsError(
            f"{path}: {int((~np.isfinite(mean)).sum())} curve means are NaN or infinite where inputs were counted"
        )
    if len(mean) and (mean.min() < -CURVE_TOL or mean.max() > 1 + CURVE_TOL):
        raise ResultsError(
            f"{path}: curve means outside [0, 1] ({mean.min():.4g}..{mean.max():.4g}); cumulative values are fractions"
        )
    return frame


def check_metrics(run: Path, meta: dict[str, Any] | None = None) -> pd.DataFrame:
    """``run/metrics.parquet`` read and checked against ``meta``.

    Parameters
    ----------
    run : Path
        A results directory.
    meta : dict, optional
        Its meta.json, already checked (default: read with :func:`check_meta`).

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    ResultsError
        One line naming the file and what is wrong with it.
    """
    meta, path, frame = _read_table_checked(Path(run), meta, "metrics", METRIC_COLUMNS, "metrics")
    if not any(str(c).startswith("index_at_") and str(c).endswith("_of_mean_curve") for c in frame.columns):
        raise ResultsError(
            f"{path} is not a metrics table: no 'index_at_<level>_of_mean_curve' column "
            "(the reach index the per-layer summary reads)"
        )
    _check_counts(path, frame["count"], int(meta["inputs_done"]))
    counted = frame["count"] > 0
    for c in ("effective_rank_mean", "stable_rank_mean"):
        v = frame.loc[counted, c].to_numpy(dtype=float)
        if not np.isfinite(v).all():
            raise ResultsError(f"{path}: column {c!r} is NaN or infinite where inputs were counted")
    return frame


def check_inputs(run: Path) -> pd.DataFrame | None:
    """``run/inputs.parquet`` read and checked (None when the run has none).

    Parameters
    ----------
    run : Path
        A results directory.

    Returns
    -------
    pandas.DataFrame or None

    Raises
    ------
    ResultsError
        One line naming the file and what is wrong with it.
    """
    run = Path(run)
    if not (run / "inputs.parquet").is_file():
        return None
    frame = read_table(run, "inputs")
    path = run / "inputs.parquet"
    missing = [c for c in INPUT_COLUMNS if c not in frame.columns]
    if missing:
        raise ResultsError(f"{path} is not a per-input table: no {', '.join(repr(c) for c in missing)} column")
    for c in INPUT_COLUMNS:
        if len(frame) and not pd.api.types.is_integer_dtype(frame[c].dtype):
            raise ResultsError(f"{path}: column {c!r} has dtype {frame[c].dtype}, not an integer dtype")
    return frame


def check_spectrum_run(run: Path, *, need_inputs: bool = True) -> dict[str, Any]:
    """Every file of a spectrum run checked; returns its meta.json.

    Parameters
    ----------
    run : Path
        A spectrum results directory.
    need_inputs : bool
        Refuse a run that holds no input at all (``inputs_done`` 0), which has nothing to
        draw, compare or summarise (a merge may still take a zero-input shard).

    Returns
    -------
    dict
        Its meta.json.

    Raises
    ------
    ResultsError
        One line naming the file and what is wrong with it.
    """
    run = Path(run)
    meta = check_meta(run, kind=SPECTRUM_KIND)
    if need_inputs and meta["inputs_done"] == 0:
        raise ResultsError(f"{run} holds no inputs (meta.json inputs_done: 0): nothing to draw or compare")
    check_curves(run, meta)
    check_metrics(run, meta)
    check_inputs(run)
    return meta


def check_scaling_run(run: Path) -> dict[int, Path]:
    """A scaling directory checked: its meta.json, and every finished length a spectrum run
    whose own seq_len and curve table agree with the length the directory records for it.

    Parameters
    ----------
    run : Path
        A scaling directory.

    Returns
    -------
    dict of int to Path
        Length → run directory of the finished lengths (at least two).

    Raises
    ------
    ResultsError
        One line naming the file and what is wrong with it.
    """
    run = Path(run)
    meta = check_meta(run, kind=SCALING_KIND)
    present: dict[int, Path] = {}
    metas: dict[int, dict[str, Any]] = {}
    for n in meta["lengths"]:
        sub = run / f"n{n}"
        if not (sub / META_FILE).is_file():
            continue
        sub_meta = check_spectrum_run(sub)
        recorded = sub_meta["identity"]["seq_len"]
        if recorded != n:
            raise ResultsError(
                f"{run / META_FILE} records length {n} for {sub}, whose meta.json says seq_len "
                f"{recorded}; the directory was edited or put together from other runs"
            )
        present[int(n)] = sub
        metas[int(n)] = sub_meta
    if len(present) < 2:
        raise ResultsError(f"{run} holds fewer than two finished lengths ({sorted(present)}); finish it with --resume")
    _check_paired(run, metas)
    return present


def _check_paired(run: Path, metas: dict[int, dict[str, Any]]) -> None:
    """Refuse a scaling directory whose lengths were not computed on the same documents with
    the same model: its fit pairs each input across lengths. Compared: the identities but for
    the length, and the recorded content (the documents every length was cut from, the
    weights, the tokenizer; attnspec.spectra.content)."""
    from attnspec.spectra.content import content_diffs

    lengths = sorted(metas)
    first = metas[lengths[0]]
    base = {k: v for k, v in first["identity"].items() if k != "seq_len"}
    for n in lengths[1:]:
        other = {k: v for k, v in metas[n]["identity"].items() if k != "seq_len"}
        diffs = [
            f"{k}: {base.get(k)!r} at n={lengths[0]} vs {other.get(k)!r} at n={n}"
            for k in sorted(set(base) | set(other))
            if base.get(k) != other.get(k)
        ]
        contents = [m.get("content") if isinstance(m.get("content"), dict) else {} for m in (first, metas[n])]
        diffs += content_diffs(
            {k: v for k, v in contents[0].items() if k != "inputs_sha256"},
            {k: v for k, v in contents[1].items() if k != "inputs_sha256"},
        )
        recorded = ["documents_sha256" in c for c in contents]
        if any(recorded) and not all(recorded):
            diffs.append(f"only one of n={lengths[0]} and n={n} records the documents it was cut from")
        if diffs:
            raise ResultsError(
                f"{run}: the runs at n={lengths[0]} and n={n} were not computed on the same documents "
                f"with the same model ({'; '.join(diffs)}); a scaling fit pairs each input across "
                "lengths, so these cannot be fitted together"
            )
