"""Run some `jl-check` claim groups in a forked process, beside the others (both cores).

The claim groups of a run are independent: each draws every seed from ``config.seed`` alone
(``child_seed(seed, <its own labels>)``, see :data:`.battery.RUN_GROUPS`), so computing one
in another process gives exactly the rows it gives in this one; only wall time changes.

:class:`SideProcess` forks one child that computes the groups :func:`plan` hands it (by
default Lemma 1, Theorem 2 and eq. 4: about as much CPU as Theorem 1 alone) while this
process computes the rest. Every group is computed with one thread (torch's pool and, when threadpoolctl is
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

#: Relative cost of each claim group: single-thread seconds of the default run (n = 4096,
#: ε = 0.1), each group alone on an idle machine (docs/jl-check.md, "Performance"). Theorem
#: 1's LU and P·g products weigh about as much as the other three groups together.
GROUP_COST: dict[str, float] = {"lemma1": 2.2, "thm1": 7.35, "thm2": 4.3, "eq4": 0.9}


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
    """The pending groups to hand to a side process (none when forking would not help).

    The split that finishes first: of every way to divide the pending groups between this
    process and one child, the one with the smallest larger share of :data:`GROUP_COST`
    (ties: the child takes the later groups). At most four groups, so all splits are tried.
    """
    import itertools

    pending = list(pending)
    if len(pending) < 2 or not can_fork():
        return []
    cost = [GROUP_COST.get(g, 1.0) for g in pending]
    total = sum(cost)
    best: tuple[float, list[int]] | None = None
    for size in range(1, len(pending)):
        for side in itertools.combinations(range(len(pending)), size):
            side_cost = sum(cost[i] for i in side)
            span = max(side_cost, total - side_cost)
            if best is None or span < best[0] - 1e-12 or (abs(span - best[0]) <= 1e-12 and side > tuple(best[1])):
                best = (span, list(side))
    return [pending[i] for i in best[1]] if best is not None else []
