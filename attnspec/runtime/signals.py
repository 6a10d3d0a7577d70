"""SIGTERM handled like Ctrl-C, sections that an interruption must not cut in two, and the
interrupt that carries what a run finished.

``timeout``, Slurm and ``docker stop`` send SIGTERM, whose default action kills the
process on the spot; attnspec turns it into :class:`KeyboardInterrupt`, so a terminated
run takes the same path as Ctrl-C (partial results kept, resumable, exit code 130).
A battery that can resume raises :class:`InterruptedRun`, a :class:`KeyboardInterrupt`
holding its finished part.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class InterruptedRun(KeyboardInterrupt):
    """Ctrl-C or SIGTERM during a resumable run, carrying what it finished before.

    ``partial`` is a :class:`~attnspec.battery.BatteryResult` with ``meta["status"] ==
    "partial"`` (written by :func:`attnspec.battery.run_and_write`, resumable with
    ``--resume``); ``done`` and ``total`` count the run's parts, named by ``unit``
    (``"runs"`` of osa-train, ``"claim groups"`` of jl-check).

    Parameters
    ----------
    partial : BatteryResult
        The finished part, ``meta["status"] == "partial"``.
    done : int
        Parts finished before the interruption.
    total : int
        Parts of the whole run.
    unit : str
        The parts' name, as the message says it (``"runs"``, ``"claim groups"``).
    """

    # partial is a BatteryResult; not annotated as one: attnspec.battery imports this module
    def __init__(self, partial: Any, done: int, total: int, unit: str) -> None:
        super().__init__(f"interrupted after {done} of {total} {unit}")
        self.partial, self.done, self.total, self.unit = partial, done, total, unit


#: Non-empty while a :func:`deferred_interrupts` block is active (it then holds the signals).
_deferring: list[bool] = []


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """While active (main thread only), SIGTERM raises :class:`KeyboardInterrupt` like Ctrl-C.

    Outside the main thread the block runs with the handlers as they are; the previous
    SIGTERM handler is restored when the block ends.

    Yields
    ------
    None
    """
    if not _in_main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def deferred_interrupts() -> Iterator[None]:
    """Hold SIGINT and SIGTERM until the block ends, then raise :class:`KeyboardInterrupt`.

    For writing a result's tables, meta.json and figures together: an interruption during
    the block lets the block finish, so the directory holds a whole result, never tables
    without figures. (Main thread only; elsewhere signals cannot be caught anyway.)
    Re-entrant: a block inside another one holds nothing itself, so the signal is raised
    when the outermost block ends, not in the middle of it.

    Yields
    ------
    None

    Raises
    ------
    KeyboardInterrupt
        When the block ends, for the first SIGINT or SIGTERM it held.
    """
    if not _in_main_thread() or _deferring:
        yield
        return
    received: list[int] = []

    def hold(signum: int, frame: Any) -> None:
        received.append(signum)

    previous = {s: signal.signal(s, hold) for s in (signal.SIGINT, signal.SIGTERM)}
    _deferring.append(True)
    try:
        yield
    finally:
        _deferring.pop()
        for s, h in previous.items():
            signal.signal(s, h)
    if received:
        raise KeyboardInterrupt(f"signal {signal.Signals(received[0]).name} (held until the results were written)")


def become_worker(parent_pid: int) -> None:
    """First call in a forked worker process (jl-check's, osa-check's and sa-check's second
    process): it dies with its parent, and leaves interrupts to it.

    - A parent killed outright (SIGKILL, the OOM killer, a script ended by a signal it does not
      handle) must not leave the worker computing, or blocked for ever writing a result to a
      pipe nobody reads: on Linux the kernel sends it SIGKILL when the parent dies
      (``prctl(PR_SET_PDEATHSIG)``); elsewhere a daemon thread checks the parent once a second.
      A parent already gone before this call (the fork raced its death) ends the worker here.
    - Ctrl-C reaches every process of the terminal's group: the worker ignores SIGINT, and
      takes SIGTERM's default action, so only the parent reports the interruption (one line)
      and ends the worker itself.

    Parameters
    ----------
    parent_pid : int
        The parent's process id, read by the parent before the fork (``os.getpid()``); a
        worker whose parent id differs from it ends at once (exit status 1).
    """
    import os

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if not _die_with_parent():

        def watch() -> None:
            import time

            while os.getppid() == parent_pid:
                time.sleep(1.0)
            os._exit(1)

        threading.Thread(target=watch, name="attnspec-parent-watch", daemon=True).start()
    if os.getppid() != parent_pid:
        os._exit(1)


def _die_with_parent() -> bool:
    """Ask the Linux kernel to SIGKILL this process when its parent dies; False where it cannot."""
    import ctypes
    import sys

    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(1, int(signal.SIGKILL), 0, 0, 0) == 0  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return False
