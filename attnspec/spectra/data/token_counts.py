"""How many tokens each text segment of a corpus has, remembered on disk between runs.

Why
---
The default input selection (``selection="pool"`` in :mod:`attnspec.spectra.data.selection`) draws
without replacement from every window a corpus offers, so it must know, for every
document, whether it has enough tokens: that is a tokenisation of the whole corpus (about
7 s for the 25,000 IMDB test reviews with a fast WordPiece tokenizer on two cores, several
times the cost of importing torch and loading a 12-layer model). The counts depend only on
the texts and the tokenizer, so they are computed once and kept; a later run tokenises
only the documents it draws.

What makes a cached count trustworthy
-------------------------------------
- The file name is a SHA-256 over the cache format, the tokenizer's complete
  serialisation (``backend_tokenizer.to_str()``: vocabulary, normaliser, pre-tokeniser,
  model, added tokens) and every segment's text. A changed corpus, a changed cleaning
  rule or another tokenizer is another file; a tokenizer without that serialisation
  (a slow, pure-Python one) is never cached.
- The file repeats its key and carries a SHA-256 of the counts; a file that is unreadable,
  truncated, of the wrong length or whose digest fails is ignored and rewritten.
- The caller tokenises the documents it draws anyway and compares their counts with the
  cached ones (:mod:`attnspec.spectra.data.selection`); a disagreement discards the cache.

Files are written atomically (a temporary file, then ``os.replace``). The folder is
``$ATTNSPEC_CACHE_DIR``, else ``$XDG_CACHE_HOME/attnspec``, else ``~/.cache/attnspec``;
``ATTNSPEC_CACHE_DIR=off`` turns the cache off. A folder that cannot be written costs
the speed, never the result.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from attnspec.storage.writer import file_mode

CACHE_ENV = "ATTNSPEC_CACHE_DIR"
_FORMAT = b"attnspec token lengths v1"
_SUBDIR = "token-lengths"


def cache_dir() -> Path | None:
    """The cache folder, or None when ``$ATTNSPEC_CACHE_DIR`` is ``off``.

    Returns
    -------
    Path or None
    """
    env = (os.environ.get(CACHE_ENV) or "").strip()
    if env.lower() == "off":
        return None
    if env:  # empty means unset
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "attnspec"


def tokenizer_fingerprint(tokenizer: Any) -> str | None:
    """SHA-256 of the tokenizer's full serialisation, or None when it has none.

    Parameters
    ----------
    tokenizer : transformers tokenizer

    Returns
    -------
    str or None
        The hex digest.
    """
    backend = getattr(tokenizer, "backend_tokenizer", None)
    to_str = getattr(backend, "to_str", None)
    if not callable(to_str):
        return None
    try:
        text = to_str()
    except Exception:  # noqa: BLE001 - a tokenizer that cannot serialise itself is simply not cached
        return None
    return hashlib.sha256(f"{type(tokenizer).__name__}\n{text}".encode()).hexdigest()


def _key(fingerprint: str, segments: Sequence[str]) -> str:
    h = hashlib.sha256(_FORMAT)
    h.update(fingerprint.encode())
    for s in segments:  # length-prefixed, so no two segment lists hash alike
        b = s.encode("utf-8", "surrogatepass")
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()


def _digest(lengths: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(lengths, dtype=np.int64).tobytes()).hexdigest()


@dataclass
class SegmentLengths:
    lengths: np.ndarray  # (S,) int64: tokens of each segment, no special tokens
    source: str  # "cache", "computed" or "computed (not cached: <why>)"
    path: Path | None  # the cache file, when there is one


def _read(path: Path, key: str, count: int) -> np.ndarray | None:
    try:
        with np.load(path, allow_pickle=False) as z:
            if str(z["key"]) != key:
                return None
            lengths = np.asarray(z["lengths"], dtype=np.int64)
            if lengths.shape != (count,) or str(z["sha256"]) != _digest(lengths) or (lengths < 0).any():
                return None
            return lengths
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):  # absent, truncated, not an npz: recompute
        return None


def _write(path: Path, key: str, lengths: np.ndarray) -> str | None:
    """Write atomically; the reason it could not be written, or None."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".npz", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                np.savez(fh, key=np.asarray(key), lengths=lengths, sha256=np.asarray(_digest(lengths)))
            os.chmod(tmp, file_mode())  # mkstemp makes 0600; the cache follows the umask like every file
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as e:
        return f"{path.parent}: {e.strerror or e}"
    return None


def segment_lengths(
    segments: Sequence[str], tokenizer: Any, count: Callable[[list[str]], np.ndarray], *, refresh: bool = False
) -> SegmentLengths:
    """Tokens of every segment, from the cache when it holds them, else ``count(segments)``.

    Parameters
    ----------
    segments : sequence of str
        The S text segments.
    tokenizer : transformers tokenizer
        The tokenizer (its fingerprint keys the cache).
    count : callable
        Tokenises a list of segments and returns their lengths, shape (S,).
    refresh : bool
        Do not read the cache (the caller found it wrong), but rewrite it.

    Returns
    -------
    SegmentLengths
        ``lengths`` (S,) int64, ``source`` (``"cache"``, ``"computed"`` or why it was not
        cached), ``path`` (the cache file, if any).
    """
    folder = cache_dir()
    fingerprint = tokenizer_fingerprint(tokenizer)
    if folder is None or fingerprint is None:
        why = f"{CACHE_ENV}=off" if folder is None else f"{type(tokenizer).__name__} has no serialisation to key it by"
        return SegmentLengths(np.asarray(count(list(segments)), dtype=np.int64), f"computed (not cached: {why})", None)
    key = _key(fingerprint, segments)
    path = folder / _SUBDIR / f"{key}.npz"
    if not refresh:
        cached = _read(path, key, len(segments))
        if cached is not None:
            return SegmentLengths(cached, "cache", path)
    lengths = np.asarray(count(list(segments)), dtype=np.int64)
    failed = _write(path, key, lengths)
    return SegmentLengths(lengths, "computed" if failed is None else f"computed (not cached: {failed})", path)
