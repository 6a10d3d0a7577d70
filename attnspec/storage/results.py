"""Result directories: tidy tables (parquet, optional CSV) plus ``meta.json``.

Every result directory says how it was made (DESIGN.md): the command, its parameters, the
seed, package and library versions, wall time. The guarantees (docs/spectrum.md, "What
survives what"):

* every file is written by :mod:`attnspec.storage.writer`: the output directory checked before
  any computation and locked (one writer at a time), each file atomic (a temporary file in
  the same directory, then ``os.replace``) with the ordinary permissions of the umask, the
  files of one result renamed together with ``meta.json`` last (:func:`result_files`), no
  link inside the directory followed, a full disk one line;
* readers (:func:`read_meta`, :func:`read_table`) refuse a directory whose writer still
  holds its lock;
* ``meta.json`` is strict JSON: NaN becomes null, ±infinity the strings "inf" / "-inf".
"""

from __future__ import annotations

import json
import math
import platform
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from attnspec import __version__
from attnspec.errors import ResultsError
from attnspec.storage.writer import (  # noqa: F401 - the writing machinery lives in attnspec.storage.writer; re-exported here
    LOCK_FILE,
    META_FILE,
    TMP_PREFIX,
    OutputLock,
    atomic_path,
    atomic_write_bytes,
    check_not_being_written,
    check_out_kind,
    holds_files,
    is_no_space,
    no_space_error,
    prepare_out_dir,
    result_files,
    writing_to,
)


def _torch_version() -> str | None:
    """torch's version, without importing it for this (two seconds a checking command that ran
    without torch need not pay): the loaded module's, else the installed distribution's."""
    loaded = sys.modules.get("torch")
    if loaded is not None:
        return str(loaded.__version__)
    from importlib import metadata

    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:  # pragma: no cover - torch is a dependency
        return None


def environment_meta() -> dict[str, Any]:
    """Versions and machine facts recorded with every result.

    Returns
    -------
    dict
        ``attnspec_version``, ``python``, ``numpy``, ``torch``, ``platform``,
        ``created_utc`` and, when installed, ``transformers``.
    """
    import numpy

    meta: dict[str, Any] = {
        "attnspec_version": __version__,
        "python": sys.version.split()[0],
        "numpy": numpy.__version__,
        "torch": _torch_version(),
        "platform": platform.platform(),
        "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    # The version from the installed distribution's metadata: importing transformers only to
    # read it costs seconds (its import-structure scan), most of a checking command's writing time.
    loaded = sys.modules.get("transformers")
    if loaded is not None:
        meta["transformers"] = loaded.__version__
    else:
        from importlib import metadata

        try:
            meta["transformers"] = metadata.version("transformers")
        except metadata.PackageNotFoundError:  # pragma: no cover - transformers is a hard dependency
            pass
    return meta


def _json_default(o: Any) -> Any:
    if hasattr(o, "item"):
        return o.item()
    if hasattr(o, "tolist"):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    if isinstance(o, (set, tuple)):
        return list(o)
    raise TypeError(f"cannot store {type(o).__name__} in meta.json")


def strict_json(value: Any) -> Any:
    """``value`` with every non-finite float replaced: NaN → None, ±inf → "inf" / "-inf".

    ``json.dumps`` would otherwise write ``NaN`` and ``Infinity``, which are not JSON.

    Parameters
    ----------
    value : object
        A JSON-like value: mappings (keys become strings), lists, tuples and sets (become
        lists), NumPy scalars and arrays (become Python values), paths (become strings).

    Returns
    -------
    object
        The value with those replacements, nested containers included.
    """
    if isinstance(value, float) or (hasattr(value, "dtype") and getattr(value, "ndim", 1) == 0):
        v = value.item() if hasattr(value, "item") else value
        if isinstance(v, float) and not math.isfinite(v):
            return None if math.isnan(v) else ("inf" if v > 0 else "-inf")
        return v
    if isinstance(value, Mapping):
        return {str(k): strict_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [strict_json(v) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return strict_json(value.tolist())
    if isinstance(value, Path):
        return str(value)
    return value


def write_meta(out_dir: Path, meta: Mapping[str, Any]) -> Path:
    """Write ``out_dir/meta.json`` (strict JSON, atomically; last within :func:`result_files`).

    Parameters
    ----------
    out_dir : Path
        The results directory.
    meta : mapping
        The record; non-finite floats are stored as :func:`strict_json` says.

    Returns
    -------
    Path
        The file written.
    """
    path = Path(out_dir) / META_FILE
    text = json.dumps(strict_json(dict(meta)), indent=2, sort_keys=False, default=_json_default, allow_nan=False)
    atomic_write_bytes(path, (text + "\n").encode())
    return path


#: The JSON type of each meta.json field that readers look inside (``.get``, iteration,
#: string joins), for every kind of result (``None``) and for one kind. A field is absent,
#: null or of this type; anything else (a hand edit, another tool) is refused on read, so no
#: reader meets a list where it expects an object.
META_FIELD_TYPES: dict[str | None, dict[str, type]] = {
    None: {
        "kind": str,
        "status": str,
        "identity": dict,
        "config": dict,
        "content": dict,
        "corpus": dict,
        "environment": dict,
        "baselines": dict,
        "svd_method_error": dict,
    },
    "spectrum": {"figures": dict, "layers": list, "family": str, "model": str, "architecture": str},
    "spectrum-scaling": {"lengths": list},
}
_JSON_NAMES = {dict: "an object", list: "a list", str: "a string"}


def _check_meta_fields(path: Path, meta: dict[str, Any]) -> None:
    kind = meta.get("kind")
    wanted = {**META_FIELD_TYPES[None], **(META_FIELD_TYPES.get(kind, {}) if isinstance(kind, str) else {})}
    for field, kind in wanted.items():
        v = meta.get(field)
        if v is not None and not isinstance(v, kind):
            raise ResultsError(
                f"{path}: field {field!r} is {type(v).__name__} {str(v)[:40]!r}, not "
                f"{_JSON_NAMES[kind]}; the file was edited or written by another tool"
            )


def read_meta(out_dir: Path) -> dict[str, Any]:
    """Read ``out_dir/meta.json``.

    Parameters
    ----------
    out_dir : Path
        The results directory.

    Returns
    -------
    dict

    Raises
    ------
    ResultsError
        The directory is being written by another process, has no meta.json, or its
        meta.json is not a JSON object.
    """
    path = Path(out_dir) / META_FILE
    check_not_being_written(out_dir)
    if not path.is_file():
        raise ResultsError(f"{out_dir} is not a results directory: {META_FILE} is missing")
    try:
        meta = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ResultsError(f"{path} is not valid JSON: {e}") from None
    except RecursionError:  # e.g. 100000 nested lists: Python's parser recurses once per level
        raise ResultsError(f"{path} is not a results record: its JSON is nested deeper than Python can parse") from None
    if not isinstance(meta, dict):  # every reader calls .get(): a list or a number is one line here
        raise ResultsError(f"{path} is not a results record: it holds a JSON {type(meta).__name__}, not an object")
    _check_meta_fields(path, meta)
    return meta


def write_table(out_dir: Path, name: str, frame: pd.DataFrame, *, csv: bool = False) -> Path:
    """Write ``frame`` to ``out_dir/name.parquet`` (and ``name.csv`` when asked), atomically.

    Every command writes its tables through here, so the column coercion of
    :func:`arrow_safe` (mixed object columns, NaN among booleans) is the same everywhere.

    Parameters
    ----------
    out_dir : Path
        The results directory (created if missing).
    name : str
        File stem: ``name.parquet`` (and ``name.csv``).
    frame : DataFrame, shape (rows, columns)
        A tidy table, identifier columns first.
    csv : bool
        Also write a CSV copy.

    Returns
    -------
    Path
        The parquet file written.
    """
    frame = arrow_safe(frame)
    out_dir = Path(out_dir)
    path = out_dir / f"{name}.parquet"
    with atomic_path(path) as tmp:
        frame.to_parquet(tmp, index=False)
    if csv:
        atomic_write_bytes(out_dir / f"{name}.csv", frame.to_csv(index=False).encode())
    return path


def read_table(out_dir: Path, name: str) -> pd.DataFrame:
    """Read ``out_dir/name.parquet``; a missing, truncated or foreign file is a :class:`ResultsError`.

    Parameters
    ----------
    out_dir : Path
        The results directory.
    name : str
        The table's file stem (``"spectrum"``, ``"metrics"``, ...).

    Returns
    -------
    pandas.DataFrame
    """
    path = Path(out_dir) / f"{name}.parquet"
    check_not_being_written(out_dir)
    if not path.is_file():
        raise ResultsError(f"{out_dir} has no {name}.parquet")
    try:
        return pd.read_parquet(path)
    except Exception as e:  # pyarrow raises ArrowInvalid, OSError, ... on truncated or garbage files
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ResultsError(f"{path} is not a readable parquet table (truncated or damaged?): {reason}") from None


def read_table_if_held(out_dir: Path, name: str) -> pd.DataFrame | None:
    """``out_dir/name.parquet`` read as :func:`read_table` reads it, or None when the directory
    holds no such table (a table a run writes only for some options, or only once complete).

    Parameters
    ----------
    out_dir : Path
        The results directory.
    name : str
        The table's file stem.

    Returns
    -------
    pandas.DataFrame or None
    """
    return read_table(out_dir, name) if (Path(out_dir) / f"{name}.parquet").is_file() else None


def check_same_run(out_dir: Path, identity: Mapping[str, Any], *, kind: str) -> bool:
    """Refuse to write into a directory that holds a different run.

    Parameters
    ----------
    out_dir : Path
        The ``--out`` directory.
    identity : mapping
        The parameters that define a run (model, corpus, seq_len, ...), compared with
        meta.json's ``identity``.
    kind : str
        The kind of result to be written (``"spectrum"``, ``"jl-check"``, ...).

    Returns
    -------
    bool
        True when ``out_dir`` already holds a run of this kind with the same identity (so
        it may be resumed or overwritten), False when it is empty or absent.

    Raises
    ------
    ResultsError
        ``out_dir`` is a file, or holds another run, another kind of result or unrelated files.
    """
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise ResultsError(f"--out {out_dir} exists and is not a directory")
    if not holds_files(out_dir):
        return False
    meta_path = out_dir / META_FILE
    if not meta_path.is_file():
        raise ResultsError(f"--out {out_dir} is not empty and holds no {META_FILE}; choose another directory")
    meta = read_meta(out_dir)
    if meta.get("kind") != kind:
        raise ResultsError(
            f"--out {out_dir} holds a {meta.get('kind')!r} result, not {kind!r}; choose another directory"
        )
    stored = meta.get("identity", {})
    diffs = [f"{k}: {stored.get(k)!r} there vs {v!r} now" for k, v in identity.items() if stored.get(k) != _jsonable(v)]
    if diffs:
        raise ResultsError(f"--out {out_dir} holds a different run ({'; '.join(diffs)}); choose another directory")
    return True


def _jsonable(v: Any) -> Any:
    return json.loads(json.dumps(v, default=_json_default))


def arrow_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` that parquet (Arrow) can store column by column.

    Object columns are coerced by what their non-null values are: all booleans → nullable
    ``boolean``; all real numbers (not booleans) → ``float64`` (None → NaN); anything else
    (strings mixed with NaN, lists, ...) → nullable ``string``. Other dtypes are untouched.

    Parameters
    ----------
    frame : DataFrame, shape (rows, columns)

    Returns
    -------
    DataFrame, shape (rows, columns)
    """
    import numbers

    frame = frame.copy()
    for c in frame.columns:
        if frame[c].dtype != object:
            continue
        vals = frame[c].dropna()
        if not len(vals):
            continue
        if all(isinstance(v, (bool, np.bool_)) for v in vals):
            frame[c] = frame[c].astype("boolean")
        elif all(isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)) for v in vals):
            frame[c] = frame[c].astype("float64")
        else:
            frame[c] = frame[c].astype("string")
    return frame
