"""A corpus as read (documents and where they came from), and the names of corpora and splits."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attnspec.errors import InputError

DATA_DIR_ENV = "ATTNSPEC_DATA_DIR"


# Accepted spellings of the two corpus names -> canonical name.
CORPUS_NAMES = {"wiki103": "wiki103", "wikitext103": "wiki103", "wikitext-103": "wiki103", "imdb": "imdb"}


def check_data_name(data: object, option: str = "--data") -> None:
    """Refuse, before anything loads, a ``--data`` that is neither a corpus name (any spelling
    of :data:`CORPUS_NAMES`) nor an existing path, with the closest name when there is one
    (``--data imbd: ... did you mean imdb?``). Texts handed to the API are not checked here.

    Parameters
    ----------
    data : object
        ``--data``.
    option : str
        The option named by the message.
    """
    import difflib
    import os

    from attnspec.errors import DataError, OptionError

    if not isinstance(data, (str, os.PathLike)):
        return
    text = str(data).strip()
    if text.lower() in CORPUS_NAMES or (text and Path(text).expanduser().exists()):
        return
    close = difflib.get_close_matches(text.lower(), list(CORPUS_NAMES), n=1, cutoff=0.6)
    hint = f"; did you mean {CORPUS_NAMES[close[0]]}?" if close else ""  # the canonical spelling
    # a path that is not there is missing data (exit 1); a bare word is a misspelt name (a usage error)
    error = DataError if any(c in text for c in "/\\.~") else OptionError
    raise error(
        f"{option} {text!r} is neither a corpus name ({', '.join(sorted(set(CORPUS_NAMES.values())))}) "
        f"nor an existing file or directory{hint}"
    )


# Default split of a local copy (the shared data folder holds WikiText's validation and test
# files and IMDB's test split) and of the hub. The Linformer study averages over 10k inputs of
# n = 512 tokens; WikiText-103's validation split holds only ~550 such windows, its train split
# ~230,000, so from the hub, where every split is at hand, wiki103 defaults to train.
_DEFAULT_SPLIT = {"wiki103": "validation", "imdb": "test"}


# Accepted split spellings -> canonical split, per corpus.
_SPLITS = {
    "wiki103": {"valid": "validation", "validation": "validation", "test": "test", "train": "train"},
    "imdb": {"test": "test", "train": "train", "unsupervised": "unsupervised", "unsup": "unsupervised"},
}


_WIKI_FILE_SPLIT = {"validation": "valid", "test": "test", "train": "train"}


_WAY_OUT = (
    "pass --data PATH (a text file or directory), or point --data-dir / ATTNSPEC_DATA_DIR at a folder "
    "laid out like the shared data (wikitext103/wiki.{valid,test}.raw, imdb/*.jsonl)"
)


@dataclass
class _Corpus:
    """A resolved source: its documents as lists of separately tokenised segments."""

    name: str
    split: str | None
    source: str
    format: str
    documents: list[list[str]]
    default_mode: str
    files: list[Path] = field(default_factory=list)
    root: Path | None = None
    text_cleaning: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _norm_split(corpus: str, split: str | None) -> str:
    if split is None:
        return _DEFAULT_SPLIT[corpus]
    key = str(split).strip().lower()
    if key not in _SPLITS[corpus]:
        allowed = ", ".join(_SPLITS[corpus])
        raise InputError(f"split {split!r} is not a split of {corpus}; allowed: {allowed}")
    return _SPLITS[corpus][key]
