"""Run some `jl-check` claim groups in a forked process, beside the others (both cores).

The claim groups of a run are independent: each draws every seed from ``config.seed`` alone
(``child_seed(seed, <its own labels>)``, see :data:`.battery.RUN_GROUPS`), so computing one
in another process gives exactly the rows it gives in this one; only wall time changes.

:func:`side_process` forks one child that computes the groups of :data:`SIDE_GROUPS` (Theorem 2
and eq. 4: about as much CPU as Lemma 1 and Theorem 1 together) while this process computes
the rest. Every group is computed with one thread (torch's pool and, when threadpoolctl is
installed, the BLAS pool), forked or not, so two processes do not fight over two cores and the
tables are the same to the last bit however the groups were scheduled (forked, in turn, resumed). Nothing is forked
when fewer than two cores are available, when fewer than two groups are pending, or on a
platform without ``fork``; the groups then run in turn in this process, as before.

The child's progress bars are quiet (two bars rewriting one terminal line would garble it);
its one-line messages are printed. On Ctrl-C or SIGTERM the child is terminated and only this
process's finished groups are kept (``--resume`` computes the rest).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

#: the groups a side process computes (the others stay in this process)
SIDE_GROUPS: tuple[str, ...] = ("thm2", "eq4")


def cores() -> int:
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def can_fork() -> bool:
    import multiprocessing as mp

    return "fork" in mp.get_all_start_methods() and cores() >= 2 and os.environ.get("ATTNSPEC_NO_FORK") != "1"


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Torch's intra-op pool and (if threadpoolctl is installed) the BLAS pools at one thread."""
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:  # pragma: no cover - optional
            limits = contextlib.nullcontext()
        else:
            limits = threadpool_limits(1)
        with limits:
            yield
    finally:
        torch.set_num_threads(previous)


def _child(conn: Any, compute: Callable[[str], Any], groups: Sequence[str]) -> None:  # noqa: ANN401
    from attnspec.progress import set_quiet

    set_quiet(True)
    out: dict[str, Any] = {}
    try:
        with one_thread():
            for g in groups:
                out[g] = compute(g)
        conn.send(("ok", out, None))
    except BaseException as e:  # noqa: BLE001 - handed to the parent, which raises it
        try:  # the groups finished before the error go along (kept for --resume)
            conn.send(("error", out, e))
        except Exception:  # noqa: BLE001 - an exception that does not pickle
            conn.send(("error", out, RuntimeError(f"{type(e).__name__}: {e}")))
    finally:
        conn.close()
        sys.stdout.flush()
        sys.stderr.flush()


class SideProcess:
    """A forked child computing ``groups`` with ``compute(group)``; :meth:`result` waits for them."""

    def __init__(self, compute: Callable[[str], Any], groups: Sequence[str]) -> None:
        import multiprocessing as mp

        ctx = mp.get_context("fork")
        self.groups = list(groups)
        self._recv, send = ctx.Pipe(duplex=False)
        self._proc = ctx.Process(target=_child, args=(send, compute, self.groups), daemon=True)
        self._proc.start()
        send.close()

    def result(self, keep: dict[str, Any] | None = None) -> dict[str, Any]:
        """The child's groups by name. If the child raised, its groups finished before that
        are put in ``keep`` and the exception is raised here."""
        try:
            status, out, error = self._recv.recv()
        except EOFError:
            self._proc.join()
            raise RuntimeError(f"the side process computing {', '.join(self.groups)} died "
                               f"(exit code {self._proc.exitcode})") from None
        self._proc.join()
        if status == "error":
            if keep is not None:
                keep.update(out)
            raise error
        return out

    def stop(self) -> None:
        if self._proc.is_alive():
            self._proc.terminate()
            self._proc.join(5)
        self._recv.close()


def plan(pending: Sequence[str]) -> list[str]:
    """The pending groups to hand to a side process (none when forking would not help)."""
    side = [g for g in pending if g in SIDE_GROUPS]
    if not side or len(side) == len(pending) or not can_fork():
        return []
    return side
