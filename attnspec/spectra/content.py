"""What a spectrum run was computed on, by content: digests of the model's weights files, its
tokenizer files and the inputs it drew.

A run's identity (:meth:`attnspec.spectra.config.SpectrumConfig.identity`) holds names and
paths; the same path can hold other weights tomorrow. The *content* record beside it holds
SHA-256 digests of what those names pointed to when the run computed:

- ``weights_sha256``: the model's weights files (``*.safetensors``, ``*.bin``, ``*.gguf``,
  ``*.pt``, ``*.pth`` in its folder, or the one GGUF file), as a ``sha256sum``-style listing
  digest; for a model object handed to the Python API without files, the digest of its
  parameters and buffers (``weights_from: "parameters"``);
- ``tokenizer_sha256``: the tokenizer files in the same folder (for a GGUF model, the file
  itself: its tokenizer lives in it); for an object, its full serialisation;
- ``inputs_sha256``: the token ids of the selected inputs (:func:`attnspec.spectra.data.inputs.inputs_digest`).

Resume, merge, the "up to date" check and the scaling fit compare these records
(:func:`content_diffs`); a key missing from either side (a run written before it was
recorded, or an "up to date" check made before the inputs are drawn) is not compared.

Hashing a 1 GB weights file takes about a second; each file's digest is cached by path,
size, modification time and inode (:func:`cached_file_digest`), in memory and in the
attnspec cache folder (``$ATTNSPEC_CACHE_DIR``, ``off`` for none), so it is read once.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

#: Suffixes of weights files in a model folder.
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".gguf", ".pt", ".pth")
#: File names a tokenizer is saved as (transformers and sentencepiece); those present are hashed.
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "vocab.txt",
    "vocab.json",
    "merges.txt",
    "spiece.model",
    "sentencepiece.bpe.model",
    "tokenizer.model",
)
#: What each content key names, for the one-line refusal.
WHAT = {
    "weights_sha256": "the model's weights",
    "tokenizer_sha256": "the tokenizer",
    "inputs_sha256": "the inputs (the corpus, the tokenizer or the selection)",
    "documents_sha256": "the documents the lengths were cut from",
}

_memo: dict[tuple[str, int, int, int], str] = {}
_CACHE_NAME = "file-digests.json"


def _stat_key(path: Path) -> tuple[str, int, int, int]:
    st = path.stat()  # follows links: a hub snapshot's files are links to its blobs
    return str(path.resolve()), st.st_size, st.st_mtime_ns, st.st_ino


def _cache_file() -> Path | None:
    from attnspec.spectra.data.token_counts import cache_dir

    root = cache_dir()
    return None if root is None else root / _CACHE_NAME


def _read_cache(path: Path | None) -> dict[str, str]:
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError, RecursionError):  # absent or damaged: recompute
        return {}
    return (
        {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)} if isinstance(data, dict) else {}
    )


def _write_cache(path: Path | None, entries: dict[str, str]) -> None:
    """Add ``entries`` to the on-disk cache, atomically; a cache that cannot be written is skipped."""
    if path is None:
        return
    import tempfile

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        merged = {**_read_cache(path), **entries}
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=path.parent)
        try:
            with os.fdopen(fd, "w") as fh:
                json.dump(merged, fh)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        pass  # a read-only or full cache costs a re-read next time, nothing else


def cached_file_digest(path: Path) -> str:
    """SHA-256 of the file at ``path``, read once per (path, size, mtime, inode).

    A file replaced in place (``save_pretrained`` over the old one, ``cp``, an editor's
    save) changes its modification time or inode, so its digest is recomputed.

    Parameters
    ----------
    path : Path
        A file.

    Returns
    -------
    str
        The hex digest.
    """
    path = Path(path)
    key = _stat_key(path)
    if key in _memo:
        return _memo[key]
    text_key = "\0".join(map(str, key))
    cache = _cache_file()
    stored = _read_cache(cache).get(text_key)
    if stored is not None:
        _memo[key] = stored
        return stored
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for piece in iter(lambda: f.read(1 << 22), b""):  # 4 MB pieces
            h.update(piece)
    digest = h.hexdigest()
    _memo[key] = digest
    _write_cache(cache, {text_key: digest})
    return digest


def files_digest(files: Iterable[Path], root: Path) -> str | None:
    """Digest of the ``sha256sum``-style listing ``"<sha256>  <name relative to root>\\n"``
    sorted by name (None for no files): one file renamed, added, removed or edited changes it.

    Parameters
    ----------
    files : iterable of Path
        Files under ``root``.
    root : Path
        The folder the names are taken relative to.

    Returns
    -------
    str or None
        The hex digest; None for no files.
    """
    sums = {str(Path(p).relative_to(root)): cached_file_digest(Path(p)) for p in files}
    if not sums:
        return None
    return hashlib.sha256("".join(f"{sums[k]}  {k}\n" for k in sorted(sums)).encode()).hexdigest()


def folder_content(folder: Path) -> dict[str, Any]:
    """``weights_sha256`` and ``tokenizer_sha256`` of a model folder's files (keys with no file omitted).

    Parameters
    ----------
    folder : Path
        A model folder.

    Returns
    -------
    dict
        ``weights_sha256``, ``weights_from`` (``"files"`` or ``"parameters"``) and
        ``tokenizer_sha256``, each where known.
    """
    folder = Path(folder)
    weights = sorted(
        p
        for p in folder.iterdir()
        if p.is_file() and p.name.endswith(WEIGHT_SUFFIXES) and p.name != "training_args.bin"
    )
    tokenizer = sorted(folder / n for n in TOKENIZER_FILES if (folder / n).is_file())
    out: dict[str, Any] = {}
    w, t = files_digest(weights, folder), files_digest(tokenizer, folder)
    if w is not None:
        out.update(weights_sha256=w, weights_from="files")
    if t is not None:
        out["tokenizer_sha256"] = t
    return out


def model_folder(name: str) -> tuple[Path | None, Path | None]:
    """(model folder, GGUF file) that ``--model name`` loads from, found without loading
    anything; (None, None) when it is only on the hub or cannot be resolved.

    Parameters
    ----------
    name : str
        ``--model``: a directory, hub id, alias or GGUF model.

    Returns
    -------
    folder : Path or None
        The local or cached model folder.
    gguf : Path or None
        The GGUF file, for a GGUF model.
    """
    from attnspec.errors import AttnspecError

    try:
        from attnspec.spectra.gguf import gguf_file
        from attnspec.spectra.models import resolve_model

        gguf = gguf_file(name)
        if gguf is not None:
            return None, Path(gguf)
        path, source = resolve_model(name)
    except (AttnspecError, OSError, ValueError):
        return None, None  # the load itself names what is wrong
    if source != "hub":
        return Path(path), None
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(path, "config.json")
    except Exception:  # noqa: BLE001 - a cache that cannot be searched: no digest before the load
        return None, None
    return (Path(found).parent, None) if isinstance(found, str) else (None, None)


def named_content(name: str) -> dict[str, Any]:
    """The content record of ``--model name`` from its files, before anything loads (may be empty).

    Parameters
    ----------
    name : str
        ``--model``: a directory, hub id, alias or GGUF model.

    Returns
    -------
    dict
        ``weights_sha256``, ``weights_from`` (``"files"`` or ``"parameters"``) and
        ``tokenizer_sha256``, each where known.
    """
    folder, gguf = model_folder(name)
    if gguf is not None:
        d = cached_file_digest(gguf)
        return {"weights_sha256": d, "weights_from": "files", "tokenizer_sha256": d}
    return folder_content(folder) if folder is not None else {}


def parameters_digest(model: Any) -> str:
    """SHA-256 over a torch module's state dict (name, dtype, shape, bytes of each tensor).

    Parameters
    ----------
    model : torch.nn.Module

    Returns
    -------
    str
        The hex digest.
    """
    import torch

    h = hashlib.sha256()
    for name, t in sorted(model.state_dict().items()):
        a = t.detach().to("cpu").contiguous().reshape(-1)  # (numel,): bytes as stored, any dtype
        h.update(f"{name}\0{a.dtype}\0{tuple(t.shape)}\0".encode())
        h.update(a.view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


def loaded_content(name: str, loaded: Any) -> dict[str, Any]:
    """The content record of a loaded model (:class:`attnspec.spectra.models.LoadedModel`):
    from its files when ``name`` or the loaded path points at them, else from the objects.

    Parameters
    ----------
    name : str
        ``--model``: a directory, hub id, alias or GGUF model.
    loaded : LoadedModel
        The model as loaded (a model given in memory is digested from its parameters).

    Returns
    -------
    dict
        ``weights_sha256``, ``weights_from`` (``"files"`` or ``"parameters"``) and
        ``tokenizer_sha256``, each where known.
    """
    from attnspec.spectra.data.token_counts import tokenizer_fingerprint

    out = named_content(name) if loaded.source != "memory" else {}
    if "weights_sha256" not in out:
        out.update(weights_sha256=parameters_digest(loaded.model), weights_from="parameters")
    if "tokenizer_sha256" not in out:
        fingerprint = tokenizer_fingerprint(loaded.tokenizer)
        if fingerprint is not None:
            out["tokenizer_sha256"] = fingerprint
    return out


def content_diffs(there: dict[str, Any] | None, now: dict[str, Any] | None) -> list[str]:
    """What differs between two content records, one phrase per digest present in both.

    Parameters
    ----------
    there : dict or None
        The record a results directory holds.
    now : dict or None
        The record of what would be used now.

    Returns
    -------
    list of str
        Empty when nothing differs.
    """
    there, now = there or {}, now or {}
    diffs = []
    for key, what in WHAT.items():
        a, b = there.get(key), now.get(key)
        if isinstance(a, str) and isinstance(b, str) and a != b:
            diffs.append(f"{what} changed ({key} {a[:12]}... there, {b[:12]}... now)")
    return diffs
