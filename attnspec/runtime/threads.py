"""One context manager for the number of torch threads (every command that sets it uses this)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

#: Threads per available core that ``--threads`` may ask for. More threads than cores
#: only slow a CPU run down, and a huge count makes OpenMP fail allocating its pool
#: ("libgomp: Out of memory" at 1000000), so the count is capped at this many per core.
THREADS_PER_CORE = 4


def max_threads() -> int:
    """The largest ``--threads`` accepted: :data:`THREADS_PER_CORE` × the cores (>= 4).

    Returns
    -------
    int
    """
    return THREADS_PER_CORE * max(1, os.cpu_count() or 1)


def check_threads(threads: object, name: str = "threads") -> int:
    """``threads`` as an int in ``[1, max_threads()]``, else :class:`attnspec.errors.InputError`,
    e.g. ``threads must be in [1, 8], got 1000000``.

    Parameters
    ----------
    threads : object
        The value; an integer, not a bool.
    name : str
        The parameter's name, quoted by the message.

    Returns
    -------
    int
    """
    from attnspec.errors import check_int

    return check_int(name, threads, low=1, high=max_threads())


@contextmanager
def torch_threads(threads: int | None) -> Iterator[None]:
    """Run the body with ``torch.set_num_threads(threads)``, restoring the previous count after.

    Parameters
    ----------
    threads : int or None
        Threads for torch's intra-op pool, in ``[1, max_threads()]``; None leaves the count alone.

    Yields
    ------
    None

    Example
    -------
    >>> import torch
    >>> before = torch.get_num_threads()
    >>> with torch_threads(1):
    ...     torch.get_num_threads()
    1
    >>> torch.get_num_threads() == before
    True
    """
    import torch

    if threads is None:
        yield
        return
    check_threads(threads)
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(previous)
