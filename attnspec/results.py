"""Result directories: tidy tables (parquet, optional CSV) plus ``meta.json``.

Every result directory says how it was made (DESIGN.md): the command, its parameters, the
seed, package and library versions, wall time. The guarantees (docs/spectrum.md, "What
survives what"):

* an output directory is checked for writability before any computation
  (:func:`prepare_out_dir`), and held by one writer at a time (:class:`OutputLock`);
* every write is atomic (a temporary file in the same directory, then ``os.replace``), so
  an interruption never leaves a half-written file behind; files get the ordinary
  permissions of the process's umask (0644 under the usual umask), never mkstemp's 0600;
* ``meta.json`` is strict JSON: NaN becomes null, ±infinity the strings "inf" / "-inf".
"""

from __future__ import annotations

import json
import math
import os
import platform
import socket
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from attnspec import __version__
from attnspec.errors import ResultsError

META_FILE = "meta.json"
#: Lock file held (flock) by the one process writing into a results directory.
LOCK_FILE = ".attnspec.lock"
#: Prefix of every temporary file; leftovers of a killed process are ignored and cleaned up.
TMP_PREFIX = ".attnspec-tmp-"


def environment_meta() -> dict[str, Any]:
    """Versions and machine facts recorded with every result."""
    import numpy
    import torch

    meta: dict[str, Any] = {
        "attnspec_version": __version__,
        "python": sys.version.split()[0],
        "numpy": numpy.__version__,
        "torch": torch.__version__,
        "platform": platform.platform(),
        "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    try:
        import transformers

        meta["transformers"] = transformers.__version__
    except ImportError:  # pragma: no cover - transformers is a hard dependency
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


def _file_mode() -> int:
    """The mode a plain ``open(path, "w")`` would give: 0o666 minus the umask."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; on success it replaces ``path`` atomically.

    The temporary file gets ordinary permissions (umask), so results are readable by
    others on a shared machine; on any exception (Ctrl-C included) it is removed and
    ``path`` is left as it was.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f"{TMP_PREFIX}{path.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        os.chmod(tmp, _file_mode())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_path`)."""
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())


# ---------------------------------------------------------------------------------------
# Output directories: usable before any work, one writer at a time
# ---------------------------------------------------------------------------------------
def prepare_out_dir(path: Path, *, option: str = "--out") -> Path:
    """Create ``path`` if needed and prove a file can be written there; before any work.

    Raises :class:`ResultsError` (one line naming the path and the reason) for a path
    under a file, in /proc, on a read-only file system, without permission, ...
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ResultsError(f"{option} {path} exists and is not a directory")
    for parent in path.parents:  # a path under a file: name the file
        if parent.exists():
            if not parent.is_dir():
                raise ResultsError(f"{option} {path} is under {parent}, which is a file, not a directory")
            break
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=path, prefix=f"{TMP_PREFIX}probe.")
        os.close(fd)
        Path(probe).unlink(missing_ok=True)
    except OSError as e:
        raise ResultsError(f"{option} {path} is not a usable output directory: {e.strerror or e}") from None
    return path


def _holder_text(path: Path) -> str:
    try:
        info = json.loads(path.read_text() or "{}")
    except (OSError, json.JSONDecodeError):
        return "another process"
    if not info:
        return "another process"
    return (f"pid {info.get('pid')} on {info.get('host')}, running '{info.get('command')}' "
            f"since {info.get('since')}")


class OutputLock:
    """An exclusive lock on a results directory for as long as one command writes there.

    ``fcntl.flock`` on ``LOCK_FILE`` inside the directory; the holder's pid, host and
    command are written into it so a second writer is told who holds it. The kernel
    drops the lock when its process dies, so a killed run leaves no stale lock: the file
    may remain, but the next writer locks it at once. (flock is advisory and, on some
    network file systems, local to one machine.)

    Use as a context manager; raises :class:`ResultsError` when the directory is held.
    Re-entrant within one process (a command that locks its directory and then calls
    :func:`attnspec.spectrum_run.run_spectrum`, which locks it too).
    """

    #: Directories this process holds, with how many nested holders.
    _held: dict[str, int] = {}

    def __init__(self, out_dir: Path, command: str, *, option: str = "--out", remove_if_empty: bool = False) -> None:
        self.out_dir = Path(out_dir)
        self.remove_if_empty = remove_if_empty  # a directory made for a run that wrote nothing goes again
        self.path = self.out_dir / LOCK_FILE
        self.command = command
        self.option = option
        self._fd: int | None = None

    def acquire(self) -> None:
        import fcntl

        key = str(self.out_dir.resolve())
        if key in OutputLock._held:
            OutputLock._held[key] += 1
            self._nested = key
            return
        self._nested = None
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise ResultsError(f"{self.option} {self.out_dir} is in use by {_holder_text(self.path)}; wait for it "
                                   f"to finish or choose another {self.option}") from None
            # The previous holder may have removed the file between our open and our lock:
            # then we hold a lock on an orphan inode; start again on the current file.
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        info = {"pid": os.getpid(), "host": socket.gethostname(), "command": self.command,
                "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps(info).encode())
        self._fd = fd
        OutputLock._held[key] = 1
        self._key = key
        # leftovers of a killed writer (temporary files) can go now that we own the directory
        for leftover in self.out_dir.glob(f"{TMP_PREFIX}*"):
            leftover.unlink(missing_ok=True)

    def release(self) -> None:
        if getattr(self, "_nested", None) is not None:
            OutputLock._held[self._nested] -= 1
            self._nested = None
            return
        if self._fd is None:
            return
        OutputLock._held.pop(self._key, None)
        try:
            self.path.unlink(missing_ok=True)  # unlink while holding: nobody can hold this inode
        finally:
            os.close(self._fd)
            self._fd = None
        if self.remove_if_empty:
            try:
                self.out_dir.rmdir()  # only succeeds when nothing was written
            except OSError:
                pass

    def __enter__(self) -> OutputLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


@contextmanager
def writing_to(out_dir: Path, command: str, *, option: str = "--out") -> Iterator[Path]:
    """Check ``out_dir`` (:func:`prepare_out_dir`) and hold its :class:`OutputLock` meanwhile."""
    existed = Path(out_dir).exists()
    path = prepare_out_dir(out_dir, option=option)
    with OutputLock(path, command, option=option, remove_if_empty=not existed):
        yield path


def _is_bookkeeping(p: Path) -> bool:
    """Files that do not make a directory "hold something": the lock and temporary files."""
    return p.name == LOCK_FILE or p.name.startswith(TMP_PREFIX)


def holds_files(out_dir: Path) -> bool:
    """Whether ``out_dir`` holds anything besides the lock file and temporary files."""
    out_dir = Path(out_dir)
    return out_dir.is_dir() and any(not _is_bookkeeping(p) for p in out_dir.iterdir())


def write_meta(out_dir: Path, meta: Mapping[str, Any]) -> Path:
    path = Path(out_dir) / META_FILE
    text = json.dumps(strict_json(dict(meta)), indent=2, sort_keys=False, default=_json_default, allow_nan=False)
    atomic_write_bytes(path, (text + "\n").encode())
    return path


def read_meta(out_dir: Path) -> dict[str, Any]:
    path = Path(out_dir) / META_FILE
    if not path.is_file():
        raise ResultsError(f"{out_dir} is not a results directory: {META_FILE} is missing")
    try:
        meta = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ResultsError(f"{path} is not valid JSON: {e}") from None
    if not isinstance(meta, dict):  # every reader calls .get(): a list or a number is one line here
        raise ResultsError(f"{path} is not a results record: it holds a JSON {type(meta).__name__}, not an object")
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
    """Read ``out_dir/name.parquet``; a missing, truncated or foreign file is a :class:`ResultsError`."""
    path = Path(out_dir) / f"{name}.parquet"
    if not path.is_file():
        raise ResultsError(f"{out_dir} has no {name}.parquet")
    try:
        return pd.read_parquet(path)
    except Exception as e:  # pyarrow raises ArrowInvalid, OSError, ... on truncated or garbage files
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ResultsError(f"{path} is not a readable parquet table (truncated or damaged?): {reason}") from None


def check_same_run(out_dir: Path, identity: Mapping[str, Any], *, kind: str) -> bool:
    """Refuse to write into a directory that holds a different run.

    ``identity`` holds the parameters that define a run (model, corpus, seq_len, ...).
    Returns True when ``out_dir`` already holds a run with the same identity (so it may be
    resumed or overwritten), False when it is empty or absent. Raises
    :class:`ResultsError` when it holds another run or unrelated files.
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
        raise ResultsError(f"--out {out_dir} holds a {meta.get('kind')!r} result, not {kind!r}; choose another directory")
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
