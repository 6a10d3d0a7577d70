"""Installed packages' plug-ins: the modules an entry-point group names, imported once.

Each of the spectrum wing's doors (methods of approximate attention, metrics, null baselines)
reads its group the first time its registry is read; importing a plug-in module registers
what it adds. A broken plug-in is named, never skipped.
"""

from __future__ import annotations

#: The groups read so far in this process.
_LOADED: set[str] = set()


def load_group(group: str) -> None:
    """Import, once per process, every module named under the entry-point group ``group``.

    Parameters
    ----------
    group : str
        An entry-point group (``attnspec.metrics``).

    Raises
    ------
    ImportError
        A plug-in module failed to import (the message names it and the group).
    """
    if group in _LOADED:
        return
    _LOADED.add(group)  # first: a plug-in that reads the registry while it loads sees it loaded
    from importlib.metadata import entry_points

    for ep in sorted(entry_points(group=group), key=lambda ep: ep.name):
        try:
            ep.load()
        except Exception as e:  # a broken plug-in is named, never skipped
            raise ImportError(f"attnspec plug-in {ep.name!r} ({ep.value}) of {group} failed to load: {e}") from e
