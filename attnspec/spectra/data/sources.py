"""Where a corpus comes from: a name in a local data folder, a file, a folder, the hub or a list of texts."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from attnspec.errors import DataError, InputError
from attnspec.spectra.data.corpus import (
    _SPLITS,
    _WAY_OUT,
    _WIKI_FILE_SPLIT,
    CORPUS_NAMES,
    DATA_DIR_ENV,
    _Corpus,
    _norm_split,
)
from attnspec.spectra.data.hub import _HUB_DEFAULT_SPLIT, _from_hub
from attnspec.spectra.data.readers import (
    _BR_NOTE,
    _clean,
    _is_aclimdb_root,
    _is_aclimdb_split_dir,
    _lines,
    _read_aclimdb_split,
    _read_jsonl,
    _read_table,
    _read_text,
    _wikitext_documents,
)
from attnspec.spectra.file_digest import file_digest

#: A corpus of at most this many files lists each file's SHA-256 in meta; more get one digest.
_MAX_LISTED_SHA = 16


def shared_data_candidates() -> list[Path]:
    """Where a folder laid out like the project's shared data is looked for by default:
    ``../shared/data`` beside the current directory (the commands are run from the
    repository root, and ``attnspec report`` always looked there). Only the current
    directory counts, so a run started elsewhere reaches the hub as documented. Tests
    replace this function to pretend no such folder exists.

    Returns
    -------
    list of Path
        The candidate folders, in the order they are tried (they may not exist).
    """
    return [Path.cwd().parent / "shared" / "data"]


def resolve_data_dir(data_dir: str | os.PathLike | None = None) -> tuple[Path | None, str]:
    """The data folder every command uses by default, and where it came from.

    ``--data-dir`` when given, else ``$ATTNSPEC_DATA_DIR``, else ``../shared/data`` when
    it exists (see :func:`shared_data_candidates`), else ``(None, "")``. An explicit
    folder that does not exist is an error; the fallback is only taken when it exists.

    Parameters
    ----------
    data_dir : str or os.PathLike, optional
        ``--data-dir``; None or ``""``: not given.

    Returns
    -------
    (Path or None, str)
        The folder and how it was named: ``"--data-dir"``, ``"ATTNSPEC_DATA_DIR"`` or
        ``"../shared/data"``.
    """
    if data_dir is not None and str(data_dir) != "":
        where = "--data-dir"
        d = Path(data_dir)
    elif os.environ.get(DATA_DIR_ENV):
        where = DATA_DIR_ENV
        d = Path(os.environ[DATA_DIR_ENV])
    else:
        for c in shared_data_candidates():
            if c.is_dir():
                return c.resolve(), "../shared/data"
        return None, ""
    if not d.is_dir():
        raise DataError(f"data folder {str(d)!r} (from {where}) does not exist or is not a directory; {_WAY_OUT}")
    return d, where


def _wikitext_corpus(name: str, split: str | None, path: Path) -> _Corpus:
    """One WikiText ``.raw`` file: its articles are the documents, packed into windows."""
    return _Corpus(
        name=name,
        split=split,
        source=str(path.resolve()),
        format="wikitext-raw",
        documents=_wikitext_documents(_lines(_read_text(path))),
        default_mode="pack",
        files=[path],
        root=path.parent,
    )


def _review_corpus(
    name: str, split: str | None, source: Path, fmt: str, texts: list[str], files: list[Path], root: Path
) -> _Corpus:
    """Texts read from ``files`` (reviews, lines, rows), one document each: ``<br />`` cleaned away
    and each cut to the window."""
    return _Corpus(
        name=name,
        split=split,
        source=str(source.resolve()),
        format=fmt,
        documents=[[_clean(t)] for t in texts],
        default_mode="truncate",
        files=files,
        root=root,
        text_cleaning=_BR_NOTE,
    )


def _local_named(corpus: str, split: str, d: Path) -> _Corpus | None:
    """The named corpus from a folder laid out like the shared data, or None if it is not there."""
    if corpus == "wiki103":
        path = d / "wikitext103" / f"wiki.{_WIKI_FILE_SPLIT[split]}.raw"
        if not path.is_file():
            return None
        return _wikitext_corpus(corpus, split, path)
    imdb = d / "imdb"
    if not imdb.is_dir():
        return None
    jsonl = sorted(imdb.glob("*.jsonl"))
    if jsonl:
        texts: list[str] = []
        used: list[Path] = []
        for p in jsonl:
            got, _ = _read_jsonl(p, split)
            if got:
                texts.extend(got)
                used.append(p)
        if texts:
            return _review_corpus(corpus, split, imdb, "jsonl", texts, used, imdb)
    for root in (imdb / "aclImdb", imdb):
        if split in ("train", "test") and _is_aclimdb_split_dir(root / split):
            texts, files = _read_aclimdb_split(root / split)
            return _review_corpus(corpus, split, root / split, "aclimdb", texts, files, root)
    return None


def _check_file_split(path: Path, split: str | None, fmt: str) -> None:
    if split is not None:
        raise InputError(
            f"split {split!r} cannot be applied to {fmt} file {str(path)!r} (it has no splits); "
            "leave --split unset, or pass a directory or a file with a 'split' field"
        )


def _from_file(path: Path, split: str | None) -> _Corpus:
    name = path.name.lower()
    if name.endswith((".raw", ".tokens")):
        m = re.fullmatch(r"wiki\.(train|valid|test)\.(raw|tokens)", name)
        file_split = _SPLITS["wiki103"][m.group(1)] if m else None
        if split is not None:
            want = _norm_split("wiki103", split)
            if file_split != want:
                raise InputError(
                    f"split {split!r} does not match WikiText file {str(path)!r} "
                    f"(its split is {file_split or 'unknown'}); leave --split unset or pass the matching file"
                )
        return _wikitext_corpus(path.name, file_split, path)
    if name.endswith((".jsonl", ".ndjson")):
        texts, has_split = _read_jsonl(path, split)
        if split is not None and not has_split:
            _check_file_split(path, split, "JSONL")
        fmt = "jsonl"
    elif name.endswith((".csv", ".tsv")):
        texts, has_split = _read_table(path, split)
        if split is not None and not has_split:
            _check_file_split(path, split, "CSV")
        fmt = "tsv" if name.endswith(".tsv") else "csv"
    else:
        _check_file_split(path, split, "plain-text")
        texts = [line for line in _lines(_read_text(path)) if line.strip()]
        fmt = "text"
    return _review_corpus(path.name, split, path, fmt, texts, [path], path.parent)


def _from_dir(d: Path, split: str | None) -> _Corpus:
    wiki = sorted(d.glob("wiki.*.raw"))
    if wiki:
        want = _norm_split("wiki103", split)
        path = d / f"wiki.{_WIKI_FILE_SPLIT[want]}.raw"
        if not path.is_file():
            present = ", ".join(p.name for p in wiki)
            raise DataError(f"WikiText directory {str(d)!r} has no {path.name} for split {want!r} (present: {present})")
        corpus = _from_file(path, None)
        corpus.split = want
        return corpus
    if _is_aclimdb_root(d) or _is_aclimdb_split_dir(d):
        if _is_aclimdb_root(d):
            want = "test" if split is None else str(split).strip().lower()
            if want not in ("train", "test") or not _is_aclimdb_split_dir(d / want):
                present = ", ".join(s for s in ("train", "test") if _is_aclimdb_split_dir(d / s))
                raise InputError(f"split {split!r} is not in aclImdb directory {str(d)!r}; allowed: {present}")
            split_dir = d / want
        else:
            want = d.name.lower()
            if split is not None and str(split).strip().lower() != want:
                raise InputError(f"split {split!r} does not match aclImdb split directory {str(d)!r} ({want})")
            split_dir = d
        texts, files = _read_aclimdb_split(split_dir)
        return _review_corpus(
            d.name if d.name != want else d.parent.name, want, split_dir, "aclimdb", texts, files, split_dir
        )
    jsonl = sorted(d.glob("*.jsonl"))
    if jsonl:
        texts = []
        any_split = False
        for p in jsonl:
            got, has_split = _read_jsonl(p, split)
            texts.extend(got)
            any_split |= has_split
        if split is not None and not any_split:
            _check_file_split(d, split, "JSONL")
        return _review_corpus(d.name, split, d, "jsonl", texts, jsonl, d)
    if (d / "wikitext103").is_dir() or (d / "imdb").is_dir():
        raise DataError(
            f"{str(d)!r} is a data folder, not a corpus: use --data wiki103 or --data imdb with --data-dir {str(d)!r}"
        )
    raise DataError(
        f"directory {str(d)!r} holds no recognised corpus; allowed: wiki.<split>.raw files, the aclImdb layout "
        "({train,test}/{pos,neg}/*.txt), or *.jsonl files"
    )


def texts_corpus(texts: Sequence[str]) -> _Corpus:
    """A list of texts given in memory (the Python API's ``texts=``): one document each, in order.

    The texts are cleaned like IMDB-style text (``<br />`` replaced by a space) and cut to
    the window (``mode="truncate"``) like every document corpus; ``sha256`` is the digest of
    the texts themselves, so two runs on the same texts are recognisably the same.

    Parameters
    ----------
    texts : sequence of str
        The texts, at least one; texts that are blank after cleaning are dropped.

    Returns
    -------
    _Corpus
        A corpus named ``"texts"``, format ``"texts"``, with ``texts_sha256`` among its facts.

    Raises
    ------
    InputError
        ``texts`` is not a list of strings.
    DataError
        ``texts`` is empty.
    """
    if isinstance(texts, (str, bytes)) or not isinstance(texts, Sequence):
        raise InputError(f"texts must be a list of strings, got {type(texts).__name__}")
    bad = [i for i, t in enumerate(texts) if not isinstance(t, str)]
    if bad:
        raise InputError(f"texts must be a list of strings; item {bad[0]} is a {type(texts[bad[0]]).__name__}")
    if not texts:
        raise DataError("texts is empty")
    digest = hashlib.sha256()
    for t in texts:
        digest.update(t.encode("utf-8"))
        digest.update(b"\xff")  # separator: never in UTF-8
    docs = [[_clean(t)] for t in texts]
    return _Corpus(
        name="texts",
        split=None,
        source=f"{len(texts)} texts given in memory",
        format="texts",
        documents=[d for d in docs if d[0].strip()],
        default_mode="truncate",
        text_cleaning=_BR_NOTE,
        extra={"texts_sha256": digest.hexdigest()},
    )


def _resolve(data: str | os.PathLike | Sequence[str], split: str | None, data_dir: str | os.PathLike | None) -> _Corpus:
    if not isinstance(data, (str, os.PathLike)):
        return texts_corpus(data)  # type: ignore[arg-type]
    key = str(data).strip().lower() if isinstance(data, str) else None
    if key in CORPUS_NAMES:
        corpus = CORPUS_NAMES[key]
        want = _norm_split(corpus, split)
        d, where = resolve_data_dir(data_dir)
        if d is not None:
            found = _local_named(corpus, want, d)
            if found is not None:
                return found
            expected = (
                f"wikitext103/wiki.{_WIKI_FILE_SPLIT[want]}.raw"
                if corpus == "wiki103"
                else f"imdb/*.jsonl records with split {want!r} or imdb/aclImdb/{want}/"
            )
            looked = f"no local copy in {str(d)!r} (from {where}; looked for {expected})"
        else:
            looked = f"no local copy (neither --data-dir nor {DATA_DIR_ENV} is set, and no ../shared/data)"
        if split is None:
            want = _HUB_DEFAULT_SPLIT[corpus]
            looked += f"; from the hub the default split is {want!r}"
        return _from_hub(corpus, want, looked)
    path = Path(data)
    if str(data).strip() == "":
        raise DataError(
            f"data must be a corpus name ({', '.join(sorted(set(CORPUS_NAMES.values())))}) or a path; got ''"
        )
    if path.is_dir():
        return _from_dir(path, split)
    if path.is_file():
        return _from_file(path, split)
    if path.exists():
        raise DataError(f"data {str(data)!r} is neither a regular file nor a directory")
    raise DataError(
        f"data {str(data)!r} is neither a known corpus name ({', '.join(sorted(set(CORPUS_NAMES.values())))}) "
        "nor an existing file or directory"
    )


def _sha256_meta(corpus: _Corpus) -> dict[str, Any]:
    """sha256 of the source: the file's own digest for one file, else a digest of the
    ``sha256sum``-style listing ``"<sha256>  <relative path>\\n"`` sorted by path."""
    if not corpus.files:
        return {"sha256": None, "files": 0}
    sums = {}
    for p in corpus.files:
        rel = str(p.relative_to(corpus.root)) if corpus.root is not None and p.is_relative_to(corpus.root) else str(p)
        sums[rel] = file_digest(p)
    if len(sums) == 1:
        return {"sha256": next(iter(sums.values())), "files": 1}
    listing = "".join(f"{sums[k]}  {k}\n" for k in sorted(sums))
    out: dict[str, Any] = {"sha256": hashlib.sha256(listing.encode()).hexdigest(), "files": len(sums)}
    if len(sums) <= _MAX_LISTED_SHA:
        out["sha256_files"] = dict(sorted(sums.items()))
    return out
