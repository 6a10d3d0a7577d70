"""Forking, one rule for every check: when a second process may run, and how.

A check may compute independent pieces (grid points, claim groups) in forked processes: each
piece draws its seeds from the run's seed and its own key alone, and each process computes
with one thread, so where a piece is computed changes only the wall time, never a number.
:func:`can_fork` is the one rule every battery asks.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

#: Set to ``1`` to keep every computation in the calling process (debuggers, profilers, tests).
NO_FORK_VARIABLE = "ATTNSPEC_NO_FORK"


def cores() -> int:
    """Cores this process may run on (its affinity mask where the OS has one).

    Returns
    -------
    int
    """
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def can_fork() -> bool:
    """Whether a second process may be forked: the platform forks, two or more cores, and
    ``ATTNSPEC_NO_FORK`` is not ``1``.

    Returns
    -------
    bool
    """
    import multiprocessing as mp

    return "fork" in mp.get_all_start_methods() and cores() >= 2 and os.environ.get(NO_FORK_VARIABLE) != "1"


def fork_map(function: Callable[[T], R], items: Sequence[T], *, jobs: int = 1) -> list[R]:
    """``[function(item) for item in items]``, in up to ``jobs`` forked processes when :func:`can_fork`.

    Parameters
    ----------
    function : callable
        Applied to each item; it and its results must pickle when forked.
    items : sequence
        The items, in order.
    jobs : int
        The most processes; 1 (or a platform that cannot fork) computes in this process.

    Returns
    -------
    list
        The results, in the order of ``items``; an exception in a child is raised here.
    """
    workers = min(int(jobs), len(items), cores())
    if workers < 2 or not can_fork():
        return [function(item) for item in items]
    import multiprocessing as mp

    # The function reaches the children through the fork itself (a closure need not pickle);
    # only the items and the results cross the pipe.
    _TASK.append(function)
    pool = mp.get_context("fork").Pool(workers, initializer=_child_signals)
    try:
        results = list(pool.map(_call, items, chunksize=1))
        pool.close()  # the children exit on their own once the work is done
        return results
    except BaseException:
        pool.terminate()  # Ctrl-C, SIGTERM or an error: the children are stopped at once
        raise
    finally:
        pool.join()
        _TASK.pop()


def _child_signals() -> None:
    """A child leaves Ctrl-C to the parent (which stops it) and dies quietly on SIGTERM."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


#: The function of the fork_map in progress (read by the forked children).
_TASK: list[Callable[..., object]] = []


def _call(item: object) -> object:
    return _TASK[-1](item)


class Forked:
    """Results of ``fns`` computed in order in a forked child; :meth:`next` returns them in order.

    The calling process goes on with its own work meanwhile and takes each result when it needs
    it (the first may be taken while the child still computes the next). The child is forked
    after the caller's imports, so it pays none of them; it sends its results one by one through
    a pipe, pickled. Exceptions raised in the child are raised again by :meth:`next` in the
    parent. If the parent stops early (an exception, Ctrl-C), :meth:`close` ends the child and
    reaps it. ``cpu_seconds`` is the child's CPU time (user + system), known once it has ended.
    Ask :func:`can_fork` first: this class forks whenever it is made.

    Parameters
    ----------
    fns : sequence of callable
        Functions of no argument, computed in order in the child; their results must pickle.
    initializer : callable, optional
        Called first in the child (e.g. to set its torch threads).
    """

    def __init__(self, fns: Sequence[Callable[[], Any]], initializer: Callable[[], None] | None = None) -> None:
        import pickle
        import sys

        sys.stdout.flush()
        sys.stderr.flush()
        r, w = os.pipe()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # the child: compute, send, and leave without running the parent's exit code
            code = 0
            try:
                from attnspec.runtime.signals import become_worker

                become_worker(parent)  # dies with the parent; Ctrl-C is the parent's to report
                os.close(r)
                if initializer is not None:
                    initializer()
                with os.fdopen(w, "wb") as out:
                    for fn in fns:
                        try:
                            msg = ("ok", fn())
                        except BaseException as exc:  # noqa: BLE001 — handed to the parent
                            msg = ("error", exc)
                        pickle.dump(msg, out, protocol=pickle.HIGHEST_PROTOCOL)
                        out.flush()
                        if msg[0] == "error":
                            break
            except BaseException:  # noqa: BLE001 — the pipe is gone (the parent stopped)
                code = 1
            finally:
                os._exit(code)
        os.close(w)
        self.pid: int | None = pid
        self._pipe = os.fdopen(r, "rb")
        self._left = len(fns)
        self.cpu_seconds = 0.0

    def next(self) -> Any:
        """The next result, in the order of ``fns`` (waits for it).

        Returns
        -------
        object
            What the function returned.

        Raises
        ------
        RuntimeError
            No result left, or the child ended without its results.
        """
        import pickle

        if self._left <= 0:
            raise RuntimeError("no result left in the second process")
        try:
            status, value = pickle.load(self._pipe)
        except EOFError:
            self.close()
            raise RuntimeError("the second process of the run ended without its results") from None
        self._left -= 1
        if status == "error":
            self.close()
            raise value
        if self._left == 0:
            self.close()
        return value

    def close(self) -> None:
        """End the child if it still runs, reap it, and record its CPU time."""
        import signal

        if self.pid is None:
            return
        self._pipe.close()
        if self._left > 0:
            try:
                os.kill(self.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        _, _, usage = os.wait4(self.pid, 0)
        self.cpu_seconds = usage.ru_utime + usage.ru_stime
        self.pid = None


def fork_beside(there: Callable[[], R], here: Callable[[], T]) -> tuple[T, R]:
    """``(here(), there())``, with ``there`` computed in a forked process while this one runs ``here``.

    For a check whose work falls into two independent halves of about the same time: the
    half that reports progress (or must be timed in this process) is ``here``, the other
    ``there``. Without :func:`can_fork` both run here, ``here`` first.

    Parameters
    ----------
    there : callable
        Called with no argument in the forked process; its result must pickle.
    here : callable
        Called with no argument in this process.

    Returns
    -------
    tuple
        ``here()``'s result, then ``there()``'s.

    Raises
    ------
    RuntimeError
        The forked process raised (its traceback is in the message) or died.
    """
    if not can_fork():
        mine = here()
        return mine, there()
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_run_there, args=(there, send, os.getpid()), daemon=True)
    child.start()
    send.close()
    try:
        mine = here()
        try:
            ok, theirs = recv.recv()
        except EOFError:
            raise RuntimeError(f"the forked worker process died (exit code {child.exitcode})") from None
        if not ok:
            raise RuntimeError(f"the forked worker process failed:\n{theirs}")
    finally:
        recv.close()
        child.join(timeout=5)
        if child.is_alive():
            child.terminate()  # Ctrl-C, SIGTERM or an error here: the worker is stopped
            child.join()
    return mine, theirs


def _run_there(there: Callable[[], object], send: object, parent_pid: int) -> None:
    """The forked process of :func:`fork_beside`: send ``(True, result)`` or ``(False, traceback)``."""
    import traceback

    from attnspec.runtime.signals import become_worker

    become_worker(parent_pid)  # dies with the parent; Ctrl-C is the parent's to report
    try:
        out = (True, there())
    except BaseException:  # noqa: BLE001 - everything is reported to the parent, which raises
        out = (False, traceback.format_exc())
    send.send(out)  # type: ignore[attr-defined]
    send.close()  # type: ignore[attr-defined]


# --- Units of unequal cost: the split between two processes, one thread in each ---


@contextlib.contextmanager
def one_thread(*, import_torch: bool = True) -> Iterator[None]:
    """Torch's intra-op pool and (if threadpoolctl is installed) the BLAS pools at one thread.

    A check that forks computes every unit with one thread, forked or not, so that two
    processes do not fight over two cores and the floating-point summation order (hence every
    bit of its tables) does not depend on where a unit was computed. With
    ``import_torch=False`` torch is not imported for this; its pool is set only if torch is
    loaded already.

    Parameters
    ----------
    import_torch : bool
        Import torch to set its pool.

    Yields
    ------
    None
    """
    torch, previous = None, None
    if import_torch or "torch" in sys.modules:
        import torch

        previous = torch.get_num_threads()
        torch.set_num_threads(1)
    try:
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:  # pragma: no cover - optional
            limits: contextlib.AbstractContextManager[Any] = contextlib.nullcontext()
        else:
            limits = threadpool_limits(1)
        with limits:
            yield
    finally:
        if torch is not None:
            torch.set_num_threads(previous)


def split_by_cost(pending: Sequence[str], share: Callable[[Sequence[str]], float]) -> list[str]:
    """The pending units to hand to one side process (none when forking would not help).

    Of every way to divide the units between this process and one child, the one with the
    smallest larger ``share`` (ties: the child takes the later units). Every split is tried,
    so keep ``pending`` short (a handful of claim groups).

    Parameters
    ----------
    pending : sequence of str
        The units still to compute.
    share : callable
        ``share(units)``: the cost of computing ``units`` in one process (seconds or any
        consistent unit, including what that process must import first).

    Returns
    -------
    list of str
        The child's units, in ``pending``'s order; empty when fewer than two are pending or
        :func:`can_fork` says no.
    """
    import itertools

    pending = list(pending)
    if len(pending) < 2 or not can_fork():
        return []
    best: tuple[float, tuple[int, ...]] | None = None
    for size in range(1, len(pending)):
        for side in itertools.combinations(range(len(pending)), size):
            span = max(share([pending[i] for i in side]), share([g for i, g in enumerate(pending) if i not in side]))
            if best is None or span < best[0] - 1e-12 or (abs(span - best[0]) <= 1e-12 and side > best[1]):
                best = (span, side)
    return [pending[i] for i in best[1]] if best is not None else []
