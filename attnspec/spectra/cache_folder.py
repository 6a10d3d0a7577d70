"""Publishing a model folder into the on-disk cache, safe against a second process.

A cached model folder (a dequantised GGUF model, the packaged all-mpnet-base-v2 weights) is
written into a temporary sibling and renamed into place only once complete, so a reader
never sees half a folder. Two processes may build the same folder at once: whichever renames
second finds the first one's folder there (or loses the rename to it), and that is success
when the folder it finds is complete. A stale incomplete folder (a process killed while
clearing it) is replaced.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path


def publish_folder(tmp: Path, folder: Path, complete: Callable[[Path], bool]) -> bool:
    """Rename the finished ``tmp`` into the cache as ``folder``, unless another process's
    complete folder is there first; ``tmp`` is gone either way.

    Parameters
    ----------
    tmp : Path
        The finished folder, a sibling of ``folder`` (the rename is atomic only on one file system).
    folder : Path
        Where the cache keeps it.
    complete : callable
        Whether a folder at that place is a finished one (reads its completion record).

    Returns
    -------
    bool
        True when another process's complete folder was found and kept, False when ``tmp``
        became ``folder``.

    Raises
    ------
    OSError
        The rename failed and no complete folder is at ``folder``.
    """
    if folder.exists():  # another process finished first, or a stale incomplete folder
        if complete(folder):
            shutil.rmtree(tmp, ignore_errors=True)
            return True
        shutil.rmtree(folder, ignore_errors=True)
    try:
        os.replace(tmp, folder)
    except OSError:
        # another process renamed its folder into place between the check and the rename
        # (os.replace onto a non-empty folder fails)
        if not complete(folder):
            raise
        shutil.rmtree(tmp, ignore_errors=True)
        return True
    return False
