"""Run independent parts of the ``sa-check`` battery in a second process, so that the
default run takes seconds on a 2-core machine.

Why a process and not threads: the battery is many small torch/numpy calls run at one
torch thread (more threads only slow a shared machine down, and the batches are too small
to split); its parts are independent — each draws from its own seed of
:func:`attnspec.numerics.stats.spawn_seeds` or from the run's seed, never from a global generator —
so a forked child computes exactly the numbers the parent would have. ``jobs = 1`` and
``jobs = 2`` give identical tables (tested).

The child is forked (POSIX only) after the imports, so it pays none of them; it returns its
results one by one through a pipe, pickled, in the order of the functions it was given, so
the parent can take the first while the child is still computing the next.
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
from collections.abc import Callable, Sequence
from typing import Any


def available_cores() -> int:
    """CPU cores this process may run on (the affinity mask where the OS has one).

    Returns
    -------
    int
    """
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


class Forked:
    """Results of ``fns`` computed in order in a forked child; :meth:`next` returns them in order.

    Exceptions raised in the child are raised again by :meth:`next` in the parent. If the
    parent stops early (an exception, Ctrl-C), :meth:`close` ends the child and reaps it.
    ``cpu_seconds`` is the child's CPU time (user + system), known once it has ended.

    Parameters
    ----------
    fns : sequence of callable
        Functions of no argument, computed in order in the child.
    threads : int
        Torch threads of the child.
    """

    def __init__(self, fns: Sequence[Callable[[], Any]], threads: int = 1) -> None:
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
                import torch

                torch.set_num_threads(threads)
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
        self.pid = pid
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
