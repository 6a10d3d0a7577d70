"""Forking, one rule for every check: when a second process may run, and a map over it.

A check may compute independent pieces (grid points, claim groups) in forked processes: each
piece draws its seeds from the run's seed and its own key alone, so where it is computed
changes only the wall time, never a number. :func:`can_fork` is the one rule every battery asks
(the platform forks, two or more cores are available, and ``ATTNSPEC_NO_FORK`` is not ``1``);
:func:`fork_map` maps a function over items in up to ``jobs`` processes under it.
:class:`SideProcess` forks one child for a few units of unequal cost (claim groups) that
:func:`split_by_cost` hands it, while this process computes the rest under :func:`one_thread`.
"""

from __future__ import annotations

import contextlib
import gc
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


# --- One side process beside this one: units of unequal cost, split so that both finish first ---


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


def _side_child(
    conn: Any,  # noqa: ANN401 - a multiprocessing Connection
    compute: Callable[[str], Any],
    units: Sequence[str],
    parent_pid: int,
    import_torch: bool,
) -> None:
    from attnspec.runtime.progress import set_quiet
    from attnspec.runtime.signals import become_worker

    become_worker(parent_pid)  # dies with the parent; Ctrl-C is the parent's to report
    set_quiet(True)  # two progress bars rewriting one terminal line would garble it
    out: dict[str, Any] = {}
    try:
        with one_thread(import_torch=import_torch):
            for unit in units:
                out[unit] = compute(unit)
        conn.send(("ok", out, None))
    except BaseException as e:  # noqa: BLE001 - handed to the parent, which raises it
        try:  # the units finished before the error go along (kept for --resume)
            conn.send(("error", out, e))
        except Exception:  # noqa: BLE001 - an exception that does not pickle
            conn.send(("error", out, RuntimeError(f"{type(e).__name__}: {e}")))
    finally:
        conn.close()
        sys.stdout.flush()
        sys.stderr.flush()


class SideProcess:
    """A forked child computing ``units`` with ``compute(unit)``; :meth:`result` waits for them.

    Fork it before this process imports what only its own units need (torch): the child
    never pays that import. Its one-line messages are printed, its progress bars are quiet.

    Parameters
    ----------
    compute : callable
        ``compute(unit)`` returns the unit's result (sent back to this process; it must pickle).
    units : sequence of str
        The child's units, computed in this order.
    import_torch : bool
        Whether the child's units need torch (its thread pool is then set to one thread).
    """

    def __init__(self, compute: Callable[[str], Any], units: Sequence[str], *, import_torch: bool = True) -> None:
        import multiprocessing as mp

        ctx = mp.get_context("fork")
        # the objects of the imports so far out of every later collection, in both processes:
        # the child's collections then do not write to (and copy) the parent's pages (the
        # gc module's advice for fork without exec)
        gc.freeze()
        self.units = list(units)
        self._recv, send = ctx.Pipe(duplex=False)
        args = (send, compute, self.units, os.getpid(), import_torch)
        self._proc = ctx.Process(target=_side_child, args=args, daemon=True)
        self._proc.start()
        gc.unfreeze()  # this process collects as before (the child keeps them frozen)
        send.close()

    def result(self, keep: dict[str, Any] | None = None) -> dict[str, Any]:
        """The child's units by name. If the child raised, its units finished before that
        are put in ``keep`` and the exception is raised here.

        Parameters
        ----------
        keep : dict, optional
            Receives the finished units when the child raised.

        Returns
        -------
        dict
            Unit → its result.

        Raises
        ------
        RuntimeError
            The child died without answering.
        """
        try:
            status, out, error = self._recv.recv()
        except EOFError:
            self._proc.join()
            raise RuntimeError(
                f"the side process computing {', '.join(self.units)} died (exit code {self._proc.exitcode})"
            ) from None
        self._proc.join()
        if status == "error":
            if keep is not None:
                keep.update(out)
            raise error
        return out

    def stop(self) -> None:
        """Terminate the child if it still runs (Ctrl-C, SIGTERM, an error here)."""
        if self._proc.is_alive():
            self._proc.terminate()
            self._proc.join(5)
        self._recv.close()
