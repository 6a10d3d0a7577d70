"""One context manager for the number of torch threads (every command that sets it uses this)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def torch_threads(threads: int | None) -> Iterator[None]:
    """Run the body with ``torch.set_num_threads(threads)``, restoring the previous count after.

    Parameters
    ----------
    threads : int or None
        Threads for torch's intra-op pool, >= 1; None leaves the count alone.

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

    from attnspec.errors import check_int

    if threads is None:
        yield
        return
    check_int("threads", threads, low=1)
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(previous)
