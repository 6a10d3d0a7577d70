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
- ``config_sha256``: the model's configuration, normalised (:func:`normalised_config`: keys
  sorted, the fields that cannot change P left out, :data:`IGNORED_CONFIG_FIELDS`), from its
  ``config.json`` (for a GGUF model the file itself holds it) or, for an object, from
  ``model.config``; ``config`` beside it holds the normalised fields, so that a refusal names
  the fields that changed (``hidden_act: 'gelu' there, 'relu' now``);
- ``inputs_sha256``: the token ids of the selected inputs (:func:`attnspec.spectra.data.inputs.inputs_digest`).

A record is compared with one of the same kind: a run on a model object records the digest
of its parameters, and the "up to date" check of the same object digests its parameters
again (:func:`loaded_content`), never the files of the folder it was loaded from.

Resume, merge, the "up to date" check and the scaling fit compare these records
(:func:`content_diffs`); a key missing from either side (a run written before it was
recorded, or an "up to date" check made before the inputs are drawn) is not compared.

Hashing a 1 GB weights file takes about a second. A file under :data:`SMALL_FILE_BYTES` is
hashed whole every time; a larger file's digest is cached (:func:`cached_file_digest`), in
memory and in the attnspec cache folder (``$ATTNSPEC_CACHE_DIR``, ``off`` for none), under
its path, size, modification and change times, inode and a fingerprint of
:data:`FINGERPRINT_CHUNKS` chunks of :data:`CHUNK_BYTES` spread over the file (its start, its
end and evenly between). An overwrite in place that restores the modification time still
changes the change time (``ctime``, which no user call can set back) and is seen; what the
cache cannot see is an edit of a large file that leaves size, both times and every sampled
chunk as they were, which needs the clock or the file system itself rewritten.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from attnspec.spectra.file_digest import file_digest

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
    "config_sha256": "the model's config",
    "inputs_sha256": "the inputs (the corpus, the tokenizer or the selection)",
    "documents_sha256": "the documents the lengths were cut from",
}

#: Fields of a model's config that cannot change P, left out of its digest: where the file
#: came from and which library wrote it (``_name_or_path``, ``transformers_version``,
#: ``_commit_hash``, every ``_``-prefixed field transformers sets at load time, such as
#: ``_attn_implementation``: eager, SDPA and the others compute the same P, which attnspec
#: captures whichever runs), the head classes a task would add (``architectures``: attnspec
#: loads the base model by ``model_type``), the storage dtype (the run's ``--dtype`` decides
#: and is part of its identity) and what the forward returns rather than computes.
IGNORED_CONFIG_FIELDS = frozenset(
    {
        "_name_or_path",
        "transformers_version",
        "architectures",
        "torch_dtype",
        "dtype",
        "output_attentions",
        "output_hidden_states",
        "return_dict",
        "use_cache",
    }
)
#: Files under this size are hashed whole on every request rather than cached.
SMALL_FILE_BYTES = 64 << 20
#: A large file's cache key holds the SHA-256 of this many chunks of :data:`CHUNK_BYTES`.
FINGERPRINT_CHUNKS = 10
CHUNK_BYTES = 64 << 10

_memo: dict[tuple[Any, ...], str] = {}
_CACHE_NAME = "file-digests.json"


def _chunks_fingerprint(path: Path, size: int) -> str:
    """SHA-256 of :data:`FINGERPRINT_CHUNKS` chunks of the file: its start, its end and evenly between."""
    h = hashlib.sha256()
    last = max(size - CHUNK_BYTES, 0)
    with open(path, "rb") as f:
        for i in range(FINGERPRINT_CHUNKS):
            f.seek(last * i // (FINGERPRINT_CHUNKS - 1))
            h.update(f.read(CHUNK_BYTES))
    return h.hexdigest()


def _stat_key(path: Path) -> tuple[Any, ...]:
    st = path.stat()  # follows links: a hub snapshot's files are links to its blobs
    fingerprint = _chunks_fingerprint(path, st.st_size)
    return str(path.resolve()), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, fingerprint


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
    """SHA-256 of the file at ``path``: hashed whole when small, else read once per key
    (path, size, mtime, ctime, inode, fingerprint of spread chunks; module docstring).

    A file replaced or rewritten in place (``save_pretrained`` over the old one, ``cp``, an
    editor's save, a write that restores the modification time) changes its change time,
    inode or sampled chunks, so its digest is recomputed.

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
    if path.stat().st_size < SMALL_FILE_BYTES:
        return file_digest(path)
    key = _stat_key(path)
    if key in _memo:
        return _memo[key]
    text_key = "\0".join(map(str, key))
    cache = _cache_file()
    stored = _read_cache(cache).get(text_key)
    if stored is not None:
        _memo[key] = stored
        return stored
    digest = file_digest(path)
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


def normalised_config(config: Any) -> Any:
    """A model's configuration with keys sorted and :data:`IGNORED_CONFIG_FIELDS` and
    ``_``-prefixed fields left out, at every level of nesting (a composite model's
    ``text_config``), as JSON values.

    Parameters
    ----------
    config : dict
        The parsed ``config.json``, or ``model.config.to_dict()``.

    Returns
    -------
    object
        The same structure, normalised.
    """
    if isinstance(config, dict):
        return {
            str(k): normalised_config(v)
            for k, v in sorted(config.items(), key=lambda kv: str(kv[0]))
            if str(k) not in IGNORED_CONFIG_FIELDS and not str(k).startswith("_")
        }
    if isinstance(config, (list, tuple)):
        return [normalised_config(v) for v in config]
    return json.loads(json.dumps(config, default=str))  # numbers, strings, and a dtype as its name


def config_content(config: dict[str, Any]) -> dict[str, Any]:
    """``config_sha256`` and ``config`` (the normalised fields) of a model's configuration.

    Parameters
    ----------
    config : dict
        The parsed ``config.json``, or ``model.config.to_dict()``.

    Returns
    -------
    dict
        ``config_sha256`` (SHA-256 of the normalised fields as sorted JSON) and ``config``.
    """
    fields = normalised_config(config)
    blob = json.dumps(fields, sort_keys=True, separators=(",", ":"))
    return {"config_sha256": hashlib.sha256(blob.encode()).hexdigest(), "config": fields}


def _file_config(folder: Path) -> dict[str, Any]:
    """:func:`config_content` of ``folder/config.json``; the digest of its bytes where they are
    not a JSON object (the load then names what is wrong); empty without the file."""
    path = folder / "config.json"
    if not path.is_file():
        return {}
    try:
        parsed = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        parsed = None
    if not isinstance(parsed, dict):
        return {"config_sha256": cached_file_digest(path)}
    return config_content(parsed)


def folder_content(folder: Path) -> dict[str, Any]:
    """``weights_sha256`` and ``tokenizer_sha256`` of a model folder's files (keys with no file omitted).

    Parameters
    ----------
    folder : Path
        A model folder.

    Returns
    -------
    dict
        ``weights_sha256``, ``weights_from`` (``"files"`` or ``"parameters"``),
        ``tokenizer_sha256``, ``config_sha256`` and ``config``, each where known.
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
    return {**out, **_file_config(folder)}


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
        d = cached_file_digest(gguf)  # a GGUF file holds weights, tokenizer and configuration
        return {"weights_sha256": d, "weights_from": "files", "tokenizer_sha256": d, "config_sha256": d}
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
    to_dict = getattr(getattr(loaded.model, "config", None), "to_dict", None)
    if "config_sha256" not in out and callable(to_dict):
        out.update(config_content(to_dict()))
    return out


def content_key(content: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """The digests of a content record as a hashable key (the normalised config fields left out:
    its digest stands for them).

    Parameters
    ----------
    content : dict
        A content record.

    Returns
    -------
    tuple of (str, str)
        Sorted (key, digest) pairs.
    """
    return tuple(sorted((k, v) for k, v in content.items() if isinstance(v, str)))


def _config_changes(there: Any, now: Any, limit: int = 3) -> str:
    """``hidden_act: 'gelu' there, 'relu' now; ...`` for the top-level fields that differ."""
    if not isinstance(there, dict) or not isinstance(now, dict):
        return ""
    unset = "(not set)"
    keys = [k for k in sorted(set(there) | set(now)) if there.get(k, unset) != now.get(k, unset)]
    shown = [f"{k}: {there.get(k, unset)!r} there, {now.get(k, unset)!r} now" for k in keys[:limit]]
    more = f"; and {len(keys) - limit} more field(s)" if len(keys) > limit else ""
    return "; ".join(shown) + more


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
            fields = _config_changes(there.get("config"), now.get("config")) if key == "config_sha256" else ""
            diffs.append(f"{what} changed ({fields or f'{key} {a[:12]}... there, {b[:12]}... now'})")
    return diffs
