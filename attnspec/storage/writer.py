"""The one way attnspec writes into an output directory: checked, locked, atomic, link-safe.

Every writer (spectrum, the scaling study, merge, plot spectrum, plot scaling, compare,
the checking commands, the report and the API's ``save``) goes through here:

* :func:`writing_to` checks the directory before any work (:func:`prepare_out_dir`: not a
  file, not under a file, writable, not full; :func:`check_out_kind`: not holding or inside
  another kind of result) and holds its :class:`OutputLock` (one writer at a time);
* :func:`atomic_path` writes every file, figures included, to a temporary name in the
  same folder and ``os.replace``s it; inside :func:`result_files` the renames of one
  result wait for its end, ``meta.json`` last, with SIGINT/SIGTERM held, so an interrupt
  or a full disk leaves the new result whole or the previous one as it was;
* a full disk (ENOSPC, EDQUOT) is one :class:`~attnspec.errors.ResultsError`:
  ``no space left on device writing DIR (...)``;
* nothing is written through a symbolic link inside the directory (:func:`_real_dirs`,
  the lock's ``O_NOFOLLOW``); the directory the user named is taken as it is;
* readers call :func:`check_not_being_written` (via ``results.read_meta`` and
  ``read_table``): a result whose writer holds the lock is not read.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import stat
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from attnspec.errors import NoSpaceError, ResultsError

META_FILE = "meta.json"
#: Lock file held (flock) by the one process writing into a results directory.
LOCK_FILE = ".attnspec.lock"
#: Prefix of every temporary file; leftovers of a killed process are ignored and cleaned up.
TMP_PREFIX = ".attnspec-tmp-"


def file_mode() -> int:
    """The mode a plain ``open(path, "w")`` would give: 0o666 minus the umask (``mkstemp`` makes
    files 0600; a result or a cache file is given this mode so that it follows the umask like
    every other file).

    Returns
    -------
    int
        The permission bits.
    """
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


#: errno values that mean "the disk (or the user's quota) is full".
#: A full disk, a full quota, and a file-size limit (``ulimit -f``; the CLI ignores SIGXFSZ,
#: so a write past the limit fails with EFBIG instead of killing the process).
_NO_SPACE = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def is_no_space(e: BaseException) -> bool:
    """Whether ``e`` says the disk or quota is full (pyarrow and PIL keep only the message).

    Parameters
    ----------
    e : BaseException
        Any exception; only an ``OSError`` can say so.

    Returns
    -------
    bool
    """
    if not isinstance(e, OSError):
        return False
    return e.errno in _NO_SPACE or "No space left on device" in str(e) or "Disk quota exceeded" in str(e)


def no_space_error(folder: Path, what: Path | str, e: BaseException) -> ResultsError:
    """The one line for a full disk: ``no space left on device writing DIR (...)``.

    Parameters
    ----------
    folder : Path
        The result's directory, named first.
    what : Path or str
        What was being written.
    e : BaseException
        The error; ``EDQUOT`` is reported as a quota.

    Returns
    -------
    ResultsError
        The error to raise.
    """
    reason = {
        errno.EDQUOT: "disk quota exceeded",
        errno.EFBIG: "file too large for the file-size limit (ulimit -f)",
    }.get(getattr(e, "errno", None), "No space left on device")
    err = NoSpaceError(
        f"no space left on device writing {folder} ({what}: {reason}; the files of this "
        "result that were not complete have been removed, earlier files are as they were)"
    )
    err.reason = reason  # what filled up, for a caller that rewrites the line
    return err


def _fsync_path(path: Path) -> None:
    """Flush ``path`` (a file or a folder) to the disk; a delayed ENOSPC surfaces here, not later."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError as e:
        if e.errno in _NO_SPACE:
            raise
        # some file systems cannot fsync a folder (EINVAL); durability is best effort there
    finally:
        os.close(fd)


def _real_dirs(folder: Path) -> None:
    """Make ``folder`` exist as real directories below the output directory that holds it.

    A symbolic link planted at any level inside a held output directory (``figures/`` →
    elsewhere) is replaced by a directory, so nothing is written through it; the output
    directory itself, which the user named, is taken as it is.
    """
    root = _root_of(folder)
    if root is None:
        folder.mkdir(parents=True, exist_ok=True)
        return
    here = root
    for part in Path(os.path.abspath(folder)).relative_to(root).parts:
        here = here / part
        if os.path.islink(here):
            os.unlink(here)  # the link only, never what it points to
        elif os.path.lexists(here) and not here.is_dir():
            raise ResultsError(f"{here} is a file where attnspec writes a folder; remove it or choose another --out")
        here.mkdir(exist_ok=True)


class _Stage:
    """The files of one result, written to temporary names and renamed together at the end."""

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = Path(out_dir)
        self.files: dict[Path, Path] = {}  # final path → its temporary file (the last write wins)

    def add(self, tmp: Path, path: Path) -> None:
        previous = self.files.pop(path, None)
        if previous is not None:
            previous.unlink(missing_ok=True)
        self.files[path] = tmp

    def discard(self) -> None:
        """Remove the temporary files, and the folders below ``out_dir`` that only they filled."""
        root = Path(os.path.abspath(self.out_dir))
        for tmp in self.files.values():
            tmp.unlink(missing_ok=True)
            folder = Path(os.path.abspath(tmp.parent))
            while folder != root and root in folder.parents:
                try:
                    folder.rmdir()  # only an empty folder goes
                except OSError:
                    break
                folder = folder.parent
        self.files.clear()

    def commit(self) -> None:
        from attnspec.runtime.signals import deferred_interrupts

        # every meta.json after every other file, the deepest first (a scaling study's own
        # meta.json after those of its lengths): a reader never meets a meta.json before its files
        order = sorted(self.files, key=lambda p: (p.name == META_FILE, -len(p.parts) if p.name == META_FILE else 0))
        folders = []
        with deferred_interrupts():  # renames need no space; hold Ctrl-C until all are done
            try:
                for path in order:
                    os.replace(self.files[path], path)
                    del self.files[path]  # only once renamed: a failed rename's file is discarded below
                    if path.parent not in folders:
                        folders.append(path.parent)
                for folder in folders:
                    _fsync_path(folder)
            except BaseException as e:
                self.discard()
                if is_no_space(e):
                    raise no_space_error(self.out_dir, path.name, e) from None
                if isinstance(e, FileNotFoundError):
                    raise vanished_error(self.out_dir, path.name) from None
                raise


def vanished_error(folder: Path, what: str) -> ResultsError:
    """The one line for a file this command was writing that another program removed (its lock
    file deleted while held lets a second writer in, which clears the first one's temporary files).

    Parameters
    ----------
    folder : Path
        The result's directory, named first.
    what : str
        The file whose temporary copy vanished.

    Returns
    -------
    ResultsError
        The error to raise.
    """
    return ResultsError(
        f"{folder}: the file being written for {what} was removed by another program while this "
        f"command held the folder (was its lock file {LOCK_FILE} deleted, letting a second writer "
        "in?); nothing of this result was kept: run it again with the folder to itself"
    )


#: The result being written (innermost last); see :func:`result_files`.
_stages: list[_Stage] = []


@contextmanager
def result_files(out_dir: Path) -> Iterator[None]:
    """Write one result's files as a unit, ``meta.json`` last.

    Every :func:`atomic_path` write inside the block (tables, figures, the state,
    meta.json) goes to a temporary file in its final folder; when the block ends they are
    all renamed into place, with SIGINT and SIGTERM held meanwhile. If the block fails (a
    full disk, Ctrl-C, a bug), the temporary files are removed and the files that were
    there before are untouched: the result is the new one, whole, or the old one.
    Nested blocks join the outermost one. Do not read back inside the block what it wrote.

    Parameters
    ----------
    out_dir : Path
        The result's directory (named in a full-disk error).

    Yields
    ------
    None
    """
    if _stages:
        yield
        return
    stage = _Stage(Path(out_dir))
    _stages.append(stage)
    try:
        yield
    except BaseException:
        _stages.remove(stage)
        stage.discard()
        raise
    _stages.remove(stage)
    stage.commit()


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; on success it replaces ``path`` atomically.

    The temporary file gets ordinary permissions (umask), so results are readable by
    others on a shared machine; on any exception (Ctrl-C included) it is removed and
    ``path`` is left as it was. ``os.replace`` replaces a symbolic link planted at
    ``path`` instead of writing through it, and planted links among the folders below
    the held output directory are replaced too (:func:`_real_dirs`). Inside
    :func:`result_files` the rename waits for the end of the result. A full disk raises
    :class:`ResultsError` (``no space left on device writing DIR (...)``).

    Parameters
    ----------
    path : Path
        The final file; its folder must exist.

    Yields
    ------
    Path
        The temporary file to write.
    """
    path = Path(path)
    folder = _root_of(path.parent) or path.parent
    try:
        _real_dirs(path.parent)
        fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f"{TMP_PREFIX}{path.name}.", suffix=".tmp")
    except OSError as e:
        if is_no_space(e):
            raise no_space_error(_stages[-1].out_dir if _stages else folder, path.name, e) from None
        raise
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        os.chmod(tmp, file_mode())
        _fsync_path(tmp)
        if _stages:
            _stages[-1].add(tmp, path)
        else:
            os.replace(tmp, path)
    except BaseException as e:
        vanished = isinstance(e, FileNotFoundError) and not tmp.exists()  # removed by another program
        tmp.unlink(missing_ok=True)
        if is_no_space(e):
            raise no_space_error(_stages[-1].out_dir if _stages else folder, path.name, e) from None
        if vanished:
            raise vanished_error(_stages[-1].out_dir if _stages else folder, path.name) from None
        raise


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_path`).

    Parameters
    ----------
    path : Path
        The file.
    data : bytes
        Its whole content.
    """
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as f:
            f.write(data)


# ---------------------------------------------------------------------------------------
# Output directories: usable before any work, one writer at a time
# ---------------------------------------------------------------------------------------
def prepare_out_dir(path: Path, *, option: str = "--out") -> Path:
    """Create ``path`` if needed and prove a file can be written there; before any work.

    Parameters
    ----------
    path : Path
        The output directory.
    option : str
        The option that named the directory (``--out``, ``save path``), quoted by the messages.

    Returns
    -------
    Path
        ``path``, existing.

    Raises
    ------
    ResultsError
        One line naming the path and the reason: a path that is a file or under one, in
        /proc, on a read-only file system, without permission, on a full disk, ...
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
        try:
            os.write(fd, b"probe")  # a full disk refuses data, not always an empty file
            os.fsync(fd)
        finally:
            os.close(fd)
            Path(probe).unlink(missing_ok=True)
    except OSError as e:
        if is_no_space(e):
            raise no_space_error(path, "a test file", e) from None
        raise ResultsError(f"{option} {path} is not a usable output directory: {e.strerror or e}") from None
    return path


def _holder_text(fd: int) -> str:
    """Who holds the lock whose file is open as ``fd`` (read through the descriptor: no link is followed)."""
    try:
        info = json.loads(os.pread(fd, 65536, 0).decode() or "{}")
    except (OSError, ValueError):
        return "another process"
    if not isinstance(info, dict) or not info:
        return "another process"
    return f"pid {info.get('pid')} on {info.get('host')}, running '{info.get('command')}' since {info.get('since')}"


def _key(out_dir: Path) -> str:
    return str(Path(out_dir).resolve())


def _root_of(path: Path) -> Path | None:
    """The innermost output directory this process holds that contains ``path`` (lexically), or None."""
    p = Path(os.path.abspath(path))
    best: Path | None = None
    for root in OutputLock._roots.values():
        if (p == root or root in p.parents) and (best is None or len(root.parts) > len(best.parts)):
            best = root
    return best


class OutputLock:
    """An exclusive lock on a results directory for as long as one command writes there.

    ``fcntl.flock`` on ``LOCK_FILE`` inside the directory; the holder's pid, host and
    command are written into it so a second writer is told who holds it. The kernel
    drops the lock when its process dies, so a killed run leaves no stale lock: the file
    may remain, but the next writer locks it at once. (flock is advisory and, on some
    network file systems, local to one machine.) The file is opened with ``O_NOFOLLOW``:
    a symbolic link planted in its place (or a hard link, or anything but a plain file)
    is removed and replaced, so the holder's details never overwrite another file.

    Use as a context manager; raises :class:`ResultsError` when the directory is held.
    Re-entrant within one process (a command that locks its directory and then calls
    :func:`attnspec.spectra.job.run_spectrum`, which locks it too).

    Parameters
    ----------
    out_dir : Path
        The results directory to hold.
    command : str
        The holder's command, written into the lock file for a second writer's message.
    option : str
        The option that named the directory (``--out``, ``save path``), quoted by the messages.
    remove_if_empty : bool
        Remove the directory on release when it holds nothing (it was made for this run).
    """

    #: Directories this process holds, with how many nested holders.
    _held: dict[str, int] = {}
    #: The same directories as they were named (absolute, links not resolved): writes below them are checked for links.
    _roots: dict[str, Path] = {}

    def __init__(self, out_dir: Path, command: str, *, option: str = "--out", remove_if_empty: bool = False) -> None:
        self.out_dir = Path(out_dir)
        self.remove_if_empty = remove_if_empty  # a directory made for a run that wrote nothing goes again
        self.path = self.out_dir / LOCK_FILE
        self.command = command
        self.option = option
        self._fd: int | None = None

    def _open(self) -> int:
        """The lock file, opened without following a link; anything planted there is replaced."""
        for _ in range(10):
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
            except OSError as e:
                if e.errno != errno.ELOOP:  # ELOOP: a symbolic link was planted there
                    raise ResultsError(
                        f"{self.option} {self.out_dir}: cannot open its lock file {self.path}: {e.strerror or e}"
                    ) from None
                os.unlink(self.path)
                continue
            st = os.fstat(fd)
            if stat.S_ISREG(st.st_mode) and st.st_nlink == 1:
                return fd
            os.close(fd)  # a hard link to another file, a FIFO, ...: never write into it
            try:
                os.unlink(self.path)
            except OSError as e:
                raise ResultsError(
                    f"{self.option} {self.out_dir}: {self.path} is not a lock file and cannot be "
                    f"replaced ({e.strerror or e}); remove it"
                ) from None
        raise ResultsError(
            f"{self.option} {self.out_dir}: its lock file {self.path} keeps being replaced; "
            "is another program writing there?"
        )

    def acquire(self) -> None:
        import fcntl

        key = _key(self.out_dir)
        if key in OutputLock._held:
            OutputLock._held[key] += 1
            self._nested = key
            return
        self._nested = None
        while True:
            fd = self._open()
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _holder_text(fd)
                os.close(fd)
                raise ResultsError(
                    f"{self.option} {self.out_dir} is in use by {holder}; wait for it "
                    f"to finish or choose another {self.option}"
                ) from None
            # The previous holder may have removed the file between our open and our lock:
            # then we hold a lock on an orphan inode; start again on the current file.
            try:
                same = os.fstat(fd).st_ino == os.lstat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        info = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "command": self.command,
            "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(info).encode(), 0)
        self._fd = fd
        OutputLock._held[key] = 1
        OutputLock._roots[key] = Path(os.path.abspath(self.out_dir))
        self._key = key
        # leftovers of a killed writer (temporary files) can go now that we own the directory
        for folder in (self.out_dir, self.out_dir / "figures"):
            if folder.is_dir() and not folder.is_symlink():
                for leftover in folder.glob(f"{TMP_PREFIX}*"):
                    leftover.unlink(missing_ok=True)

    def release(self) -> None:
        if getattr(self, "_nested", None) is not None:
            OutputLock._held[self._nested] -= 1
            self._nested = None
            return
        if self._fd is None:
            return
        OutputLock._held.pop(self._key, None)
        OutputLock._roots.pop(self._key, None)
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


def check_not_being_written(run: Path) -> None:
    """Refuse to read ``run`` while another process holds its :class:`OutputLock`.

    A reader (``plot scaling``, ``compare``, ``plot spectrum``, ``merge``, :func:`read_meta`)
    would otherwise see a half-updated result: new tables under an old meta.json. The
    lock of this process's own writer does not count.

    Parameters
    ----------
    run : Path
        A results directory.

    Raises
    ------
    ResultsError
        Another process holds it (the message names its pid and command).
    """
    import fcntl

    run = Path(run)
    try:
        if _key(run) in OutputLock._held:
            return
        fd = os.open(run / LOCK_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:  # no lock file (nobody writes), or a planted link: not a lock anyone holds
        return
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ResultsError(
                f"{run} is being written by {_holder_text(fd)}; it is not read while "
                "incomplete: wait for that command to finish"
            ) from None
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _meta_kind(folder: Path, *, strict: bool = False) -> tuple[bool, Any]:
    """(whether ``folder`` holds an attnspec meta.json, its ``kind``).

    ``strict`` also asks for what every attnspec result records besides its kind (the
    environment, or the package version), so an unrelated ``meta.json`` with a ``kind``
    higher up the tree is not taken for a result.
    """
    try:
        meta = json.loads((folder / META_FILE).read_text())
    except (OSError, ValueError):
        return False, None
    if not isinstance(meta, dict) or "kind" not in meta:
        return False, None
    if strict and not ({"environment", "attnspec_version", "identity"} & set(meta)):
        return False, None
    return True, meta.get("kind")


def check_out_kind(out_dir: Path, kind: str, *, option: str = "--out", nests_in: tuple[str, ...] = ()) -> None:
    """Refuse an output directory that holds, or lies inside, another kind of result.

    ``out_dir`` may hold a result of ``kind`` (to be resumed, overwritten or redrawn) or
    nothing; the nearest enclosing results directory, if any, must be of a kind in
    ``nests_in`` (a spectrum run inside its scaling study, figures inside their run).

    Parameters
    ----------
    out_dir : Path
        The output directory.
    kind : str
        The kind of result to be written there.
    option : str
        The option that named the directory (``--out``, ``save path``), quoted by the messages.
    nests_in : tuple of str
        The kinds of result ``out_dir`` may lie inside.

    Raises
    ------
    ResultsError
        ``out_dir`` holds a foreign meta.json or another kind of result, or lies inside a
        result of a kind not in ``nests_in``.
    """
    out_dir = Path(out_dir)
    if (out_dir / META_FILE).is_file():
        ours, there = _meta_kind(out_dir)
        if not ours:
            raise ResultsError(
                f"{option} {out_dir} holds a {META_FILE} that is not an attnspec result's; choose another directory"
            )
        if there != kind:
            raise ResultsError(f"{option} {out_dir} holds a {there!r} result, not {kind!r}; choose another directory")
    for parent in Path(os.path.abspath(out_dir)).parents:
        ours, there = _meta_kind(parent, strict=True)
        if ours:
            if there not in nests_in:
                raise ResultsError(
                    f"{option} {out_dir} is inside {parent}, which holds a {there!r} result; "
                    f"choose a directory outside it"
                )
            break


@contextmanager
def writing_to(
    out_dir: Path, command: str, *, option: str = "--out", kind: str | None = None, nests_in: tuple[str, ...] = ()
) -> Iterator[Path]:
    """Check ``out_dir`` (:func:`prepare_out_dir`) and hold its :class:`OutputLock` meanwhile.

    With ``kind``, an ``out_dir`` holding or inside another kind of result is refused
    (:func:`check_out_kind`). A full disk anywhere in the block is one
    :class:`ResultsError` naming ``out_dir``.

    Parameters
    ----------
    out_dir : Path
        The output directory, created if missing (and removed again on exit when this
        call made it and nothing was written).
    command : str
        The command, recorded in the lock file.
    option : str
        The option that named the directory (``--out``, ``save path``), quoted by the messages.
    kind : str, optional
        The kind of result to be written; None: not checked.
    nests_in : tuple of str
        The kinds of result ``out_dir`` may lie inside.

    Yields
    ------
    Path
        ``out_dir``, held.
    """
    existed = Path(out_dir).exists()
    path = prepare_out_dir(out_dir, option=option)
    with OutputLock(path, command, option=option, remove_if_empty=not existed):
        if kind is not None:
            check_out_kind(path, kind, option=option, nests_in=nests_in)
        try:
            yield path
        except OSError as e:
            if is_no_space(e):  # a write that did not go through atomic_path (a library's own file)
                raise no_space_error(path, "a file", e) from None
            raise


def _is_bookkeeping(p: Path) -> bool:
    """Files that do not make a directory "hold something": the lock and temporary files."""
    return p.name == LOCK_FILE or p.name.startswith(TMP_PREFIX)


def holds_files(out_dir: Path) -> bool:
    """Whether ``out_dir`` holds anything besides the lock file and temporary files.

    Parameters
    ----------
    out_dir : Path
        A directory (absent counts as empty).

    Returns
    -------
    bool
    """
    out_dir = Path(out_dir)
    return out_dir.is_dir() and any(not _is_bookkeeping(p) for p in out_dir.iterdir())
