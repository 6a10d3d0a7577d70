"""Run some `jl-check` claim groups in a forked process, beside the others (both cores).

The claim groups of a run are independent: each draws every seed from ``config.seed`` alone
(``child_seed(seed, <its own labels>)``, see :data:`.battery.RUN_GROUPS`), so computing one
in another process gives exactly the rows it gives in this one; only wall time changes.

:class:`SideProcess` forks one child that computes the groups :func:`plan` hands it while
this process computes the rest. The fork comes before torch is imported: Theorem 1, Theorem
2's proof steps and eq. (4) are computed in NumPy alone (:data:`TORCH_FREE`), so the child that computes them
never loads torch, and this process loads it (about two seconds, :data:`TORCH_IMPORT_COST`)
while the child is already at work. Every group is computed with one thread (torch's pool
and, when threadpoolctl is installed, the BLAS pool), forked or not, so two processes do not
fight over two cores and the tables are the same to the last bit however the groups were
scheduled (forked, in turn, resumed). Nothing is forked when fewer than two cores are
available, when fewer than two groups are pending, or on a platform without ``fork``; the
groups then run in turn in this process, as before.

The child's progress bars are quiet (two bars rewriting one terminal line would garble it);
its one-line messages are printed. On Ctrl-C or SIGTERM the child is terminated and only this
process's finished groups are kept (``--resume`` computes the rest).
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from attnspec.theorem.fork import can_fork as can_fork  # the one forking rule (ATTNSPEC_NO_FORK)
from attnspec.theorem.fork import cores as cores

#: Relative cost of each claim group: single-thread seconds of the default run (n = 4096,
#: ε = 0.1), each group alone on an idle machine, torch already imported (docs/jl-check.md,
#: "Performance"). Theorem 1's LU weighs almost half of its group.
GROUP_COST: dict[str, float] = {"lemma1": 2.0, "thm1": 5.1, "thm2": 1.7, "thm2-proof": 1.1, "eq4": 0.95}

#: The claim groups computed without torch (NumPy and SciPy only): a process that computes
#: only these never imports it.
TORCH_FREE: frozenset[str] = frozenset({"thm1", "thm2-proof", "eq4"})

#: Seconds of `import torch` on the same machine, paid by a process that computes a group
#: outside :data:`TORCH_FREE` (once; nothing when torch is already imported).
TORCH_IMPORT_COST = 2.0


def needs_torch(groups: Sequence[str]) -> bool:
    """True when computing ``groups`` imports torch (some group is not :data:`TORCH_FREE`).

    Parameters
    ----------
    groups : sequence of str
        Claim groups (of :data:`RUN_GROUPS`).

    Returns
    -------
    bool
    """
    return any(g not in TORCH_FREE for g in groups)


@contextlib.contextmanager
def one_thread(*, import_torch: bool = True) -> Iterator[None]:
    """Torch's intra-op pool and (if threadpoolctl is installed) the BLAS pools at one thread.

    With ``import_torch=False`` torch is not imported for this (a process computing only
    :data:`TORCH_FREE` groups, which never import it:
    ``tests/unit/test_jl.py::test_the_torch_free_groups_never_import_torch``); its pool is
    set only if torch is loaded already.

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
            limits = contextlib.nullcontext()
        else:
            limits = threadpool_limits(1)
        with limits:
            yield
    finally:
        if torch is not None:
            torch.set_num_threads(previous)


def _child(conn: Any, compute: Callable[[str], Any], groups: Sequence[str], parent_pid: int) -> None:  # noqa: ANN401
    from attnspec.runtime.progress import set_quiet
    from attnspec.runtime.signals import become_worker

    become_worker(parent_pid)  # dies with the parent; Ctrl-C is the parent's to report

    set_quiet(True)
    out: dict[str, Any] = {}
    try:
        with one_thread(import_torch=needs_torch(groups)):
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
    """A forked child computing ``groups`` with ``compute(group)``; :meth:`result` waits for them.

    Parameters
    ----------
    compute : callable
        ``compute(group)`` returns the group's result (sent back to this process).
    groups : sequence of str
        Claim groups (of :data:`RUN_GROUPS`).
    """

    def __init__(self, compute: Callable[[str], Any], groups: Sequence[str]) -> None:
        import multiprocessing as mp

        ctx = mp.get_context("fork")
        # the objects of the imports so far out of every later collection, in both processes:
        # the child's collections then do not write to (and copy) the parent's pages (the
        # gc module's advice for fork without exec)
        gc.freeze()
        self.groups = list(groups)
        self._recv, send = ctx.Pipe(duplex=False)
        self._proc = ctx.Process(target=_child, args=(send, compute, self.groups, os.getpid()), daemon=True)
        self._proc.start()
        gc.unfreeze()  # this process collects as before (the child keeps them frozen)
        send.close()

    def result(self, keep: dict[str, Any] | None = None) -> dict[str, Any]:
        """The child's groups by name. If the child raised, its groups finished before that
        are put in ``keep`` and the exception is raised here.

        Parameters
        ----------
        keep : dict, optional
            Receives the finished groups when the child raised.

        Returns
        -------
        dict
            Group → its result.

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
                f"the side process computing {', '.join(self.groups)} died (exit code {self._proc.exitcode})"
            ) from None
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
    process and one child, the one with the smallest larger share of :data:`GROUP_COST`,
    each share counting :data:`TORCH_IMPORT_COST` when it needs torch and torch is not
    imported yet (ties: the child takes the later groups). At most five groups, so all
    splits are tried.

    Parameters
    ----------
    pending : sequence of str
        The groups still to compute.

    Returns
    -------
    list of str
        The child's groups; empty when one process is as fast.
    """
    import itertools

    pending = list(pending)
    if len(pending) < 2 or not can_fork():
        return []
    imported = "torch" in sys.modules

    def share(groups: list[str]) -> float:
        torch_cost = TORCH_IMPORT_COST if needs_torch(groups) and not imported else 0.0
        return sum(GROUP_COST.get(g, 1.0) for g in groups) + torch_cost

    best: tuple[float, list[int]] | None = None
    for size in range(1, len(pending)):
        for side in itertools.combinations(range(len(pending)), size):
            span = max(share([pending[i] for i in side]), share([g for i, g in enumerate(pending) if i not in side]))
            if best is None or span < best[0] - 1e-12 or (abs(span - best[0]) <= 1e-12 and side > tuple(best[1])):
                best = (span, list(side))
    return [pending[i] for i in best[1]] if best is not None else []
