"""Text corpora turned into windows of token ids for the attention-spectrum study.

The claim this module serves
----------------------------
Linformer (Wang et al. 2020, Section 3 and Figure 1) reports that the attention
probability matrices P of pretrained RoBERTa, computed on WikiText-103 and IMDB inputs of
n = 512 tokens, are approximately low rank: most of the mass of the normalised cumulative
singular-value curve sits in the first ~128 singular values. Reproducing that measurement
needs inputs that really are n tokens long (special tokens included), drawn reproducibly
from the two corpora. This module produces them; it knows nothing about models or spectra.

What ``load_inputs`` returns
----------------------------
``Inputs.input_ids`` is a list of ``num_inputs`` token-id lists, each of length
``<= seq_len`` and wrapped in the tokenizer's own special tokens (``[CLS] ... [SEP]`` for
BERT, ``<s> ... </s>`` for RoBERTa). ``Inputs.meta`` is a JSON-able record of how they
were made (corpus, split, source and its sha256, format, mode, short-document policy,
seq_len, how many windows were available, seed, ...), to be stored with the results.

Windows
-------
Let ``k`` be the number of special tokens the tokenizer adds to one sequence and
``L = seq_len - k`` the number of text tokens per window.

``mode="pack"`` (default for WikiText)
    The whole source (every article of the file, in file order) is tokenised as one
    stream and cut into consecutive, non-overlapping windows of ``L`` tokens, so a window
    may run across an article boundary (as Hugging Face's ``run_mlm.py`` ``group_texts``
    does). Each non-blank line is tokenised on its own and the results are concatenated:
    line breaks are not tokens; blank lines are dropped; nothing else is stripped (the
    `` = Title = `` headings stay). The final piece shorter than ``L`` is dropped
    (``short_policy="skip"`` or ``"pack"``) or kept as a shorter window (``"keep"``).
``mode="truncate"`` (default for IMDB, the aclImdb layout, JSONL, CSV and plain text)
    Each document is tokenised and cut to its first ``L`` tokens. Documents shorter than
    ``L`` follow ``short_policy``:

    - ``"skip"`` (default): dropped, so every input fills ``seq_len`` and every P is
      ``seq_len x seq_len``, as in the paper's n = 512 study;
    - ``"keep"``: used at their own length (the spectrum engine treats a shorter P as
      zero-padded, so its cumulative curve reaches 1 at its own length);
    - ``"pack"``: the short documents are concatenated, in corpus order, into one stream
      cut into full windows (the last partial piece is dropped); they come after the
      windows of the long documents in the pool.

    For WikiText in this mode a document is an article (from one `` = Title = `` heading
    to the next).

Documents with no tokens are always dropped. In IMDB-style text (every format except
WikiText) the HTML line breaks ``<br />`` (also ``<br>``, ``<br/>``) are replaced by a
space before tokenisation; this is recorded in ``meta["text_cleaning"]``.

Drawing
-------
``selection="pool"`` (the default, and attnspec's original rule):
every window the source offers forms a pool in corpus order, and ``num_inputs`` of them are
drawn without replacement as ``numpy.random.default_rng(seed).permutation(num_available)
[:num_inputs]``; ``meta["num_available"]`` is exact. With one window per document
(``mode="truncate"`` and ``short_policy`` ``"skip"`` or ``"keep"``, IMDB's default) the
pool needs only each document's token count, which :mod:`attnspec.token_lengths` keeps
on disk: the first run on a corpus and tokenizer tokenises everything, later runs
tokenise only the documents drawn (and check their counts against the cached ones).
Windows cut from a stream (``mode="pack"``, WikiText's default, or ``short_policy="pack"``)
depend on everything before them, so there the whole source is tokenised every time.

``selection="documents"`` (one window per document only): the documents are visited in
the seeded order ``numpy.random.default_rng(seed).permutation(documents)`` and tokenised
chunk by chunk until ``num_inputs`` acceptable ones are found; the rest of the corpus is
never tokenised, and ``meta["num_available"]`` then counts the windows among the documents
tokenised (a lower bound, ``meta["num_available_exact"] = False``) unless
``count_available=True``. It needs no cache, but draws other inputs than ``"pool"`` for
the same seed.

Either way the same seed gives the same windows, and asking for more inputs with the same
seed keeps the earlier ones as a prefix.

Sources
-------
``data`` is ``"wiki103"``, ``"imdb"`` or a path. A name resolves first to a local copy in
``data_dir`` (else the folder named by the environment variable ``ATTNSPEC_DATA_DIR``,
else ``../shared/data`` when it exists: :func:`resolve_data_dir`) laid out like the
project's shared data folder (``wikitext103/wiki.{valid,test}.raw``,
``imdb/*.jsonl`` with a ``split`` field, or ``imdb/aclImdb/{train,test}/{pos,neg}/*.txt``),
then to the Hugging Face hub (``Salesforce/wikitext`` config ``wikitext-103-raw-v1``,
``stanfordnlp/imdb``) through the optional ``datasets`` library. Without ``split``, WikiText's
default is ``validation`` for a local copy and ``train`` from the hub (the only split with
the paper's 10k windows of 512 tokens). A name always wins over a
same-named file in the working directory (write ``./imdb`` for the file).

Local formats, detected from the path:

- WikiText raw files: ``*.raw`` / ``*.tokens`` (e.g. ``wiki.valid.raw``), or a directory
  holding ``wiki.<split>.raw`` files (``split`` picks one, default ``valid``);
- the aclImdb layout: a directory with ``{train,test}/{pos,neg}/*.txt`` (``split`` picks
  one, default ``test``) or a single ``{pos,neg}/*.txt`` split directory; one review per
  file, positives then negatives, each ordered by review id;
- JSONL (``*.jsonl``, ``*.ndjson``, or a directory of ``*.jsonl`` files read in name
  order): one JSON object per line with a string ``text`` field; with ``split`` given,
  only records whose ``split`` field equals it;
- CSV / TSV (``*.csv``, ``*.tsv``): the column ``text`` (any case), else the only text
  column; with ``split`` given, only rows whose ``split`` column equals it;
- anything else: plain UTF-8 text, one document per non-blank line.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from attnspec.errors import DataError, InputError
from attnspec.token_lengths import segment_lengths

__all__ = [
    "CORPUS_NAMES",
    "DATA_DIR_ENV",
    "HUB_DATASETS",
    "MODES",
    "SELECTIONS",
    "SHORT_POLICIES",
    "Inputs",
    "inputs_digest",
    "load_inputs",
    "selection_of",
    "resolve_data_dir",
]

DATA_DIR_ENV = "ATTNSPEC_DATA_DIR"
MODES = ("pack", "truncate")
SHORT_POLICIES = ("skip", "keep", "pack")
# "pool": a seeded permutation of every window; "documents": the first acceptable documents
# of a seeded document order (one window per document only; see the module docstring)
SELECTIONS = ("pool", "documents")
# Accepted spellings of the two corpus names -> canonical name.
CORPUS_NAMES = {"wiki103": "wiki103", "wikitext103": "wiki103", "wikitext-103": "wiki103", "imdb": "imdb"}
# Canonical name -> (hub repository, config).
HUB_DATASETS = {"wiki103": ("Salesforce/wikitext", "wikitext-103-raw-v1"), "imdb": ("stanfordnlp/imdb", None)}
# Default split of a local copy (the shared data folder holds WikiText's validation and test
# files and IMDB's test split) and of the hub. The Linformer study averages over 10k inputs of
# n = 512 tokens; WikiText-103's validation split holds only ~550 such windows, its train split
# ~230,000, so from the hub, where every split is at hand, wiki103 defaults to train.
_DEFAULT_SPLIT = {"wiki103": "validation", "imdb": "test"}
_HUB_DEFAULT_SPLIT = {"wiki103": "train", "imdb": "test"}
# Accepted split spellings -> canonical split, per corpus.
_SPLITS = {
    "wiki103": {"valid": "validation", "validation": "validation", "test": "test", "train": "train"},
    "imdb": {"test": "test", "train": "train", "unsupervised": "unsupervised", "unsup": "unsupervised"},
}
_WIKI_FILE_SPLIT = {"validation": "valid", "test": "test", "train": "train"}
_BR = re.compile(r"<br\s*/?\s*>", re.IGNORECASE)
_BR_NOTE = "HTML line breaks <br />, <br>, <br/> replaced by a space"
_WAY_OUT = (
    "pass --data PATH (a text file or directory), or point --data-dir / ATTNSPEC_DATA_DIR at a folder "
    "laid out like the shared data (wikitext103/wiki.{valid,test}.raw, imdb/*.jsonl)"
)
_TOKENIZE_BATCH = 1024
_MAX_LISTED_SHA = 16


@dataclass(frozen=True)
class Inputs:
    """Token-id windows for the spectrum study and the record of how they were made.

    Attributes
    ----------
    input_ids : list of list of int
        ``num_inputs`` token-id lists, each of length ``<= seq_len`` (exactly ``seq_len``
        unless ``short_policy="keep"``), special tokens included.
    meta : dict
        JSON-able provenance: ``corpus``, ``split``, ``source``, ``format``, ``mode``,
        ``short_policy``, ``seq_len``, ``num_inputs``, ``num_available``, ``seed``,
        ``sha256`` (of the local source files, else ``None``) and more (see
        :func:`load_inputs`).
    """

    input_ids: list[list[int]]
    meta: dict[str, Any]

    def __repr__(self) -> str:  # the ids would flood tracebacks and test reports
        m = self.meta
        return (f"Inputs({len(self.input_ids)} windows, corpus={m.get('corpus')!r}, split={m.get('split')!r}, "
                f"seq_len={m.get('seq_len')}, mode={m.get('mode')!r}, short_policy={m.get('short_policy')!r}, "
                f"seed={m.get('seed')})")


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


# --------------------------------------------------------------------------- reading


def _read_text(path: Path) -> str:
    """The UTF-8 text of ``path`` (BOM tolerated); DataError if unreadable or empty."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DataError(f"cannot read data file {str(path)!r}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(
            f"cannot read data file {str(path)!r}: not UTF-8 text (invalid byte at offset {exc.start}); "
            "allowed: UTF-8 WikiText raw, JSONL, CSV/TSV or plain text"
        ) from None
    if not text.strip():
        raise DataError(f"data file {str(path)!r} is empty (it must hold at least one non-blank line of text)")
    return text


def _lines(text: str) -> list[str]:
    """Lines without their line breaks (LF or CRLF).

    Not ``str.splitlines``: that also splits at U+2028, U+0085, form feeds, ..., which
    occur inside JSON strings and review texts.
    """
    lines = text.split("\n")
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _wikitext_documents(lines: Sequence[str]) -> list[list[str]]:
    """Group WikiText lines into articles; blank lines are dropped, nothing else is.

    An article starts at a top-level heading `` = Title = `` that stands between blank
    lines (section headings `` = = Section = = `` stay inside their article; a formula
    line such as `` = 1 henry and capacitance C = `` inside a paragraph is not a heading).
    Text before the first heading, if any, forms a document of its own.
    """
    lines = [line.rstrip("\r\n") for line in lines]
    blank = [not line.strip() for line in lines]
    docs: list[list[str]] = []
    current: list[str] = []
    for i, line in enumerate(lines):
        if blank[i]:
            continue
        s = line.strip()
        heading = (
            s.startswith("= ") and s.endswith(" =") and not s.startswith("= =")
            and (i == 0 or blank[i - 1]) and (i + 1 == len(lines) or blank[i + 1])
        )
        if heading and current:
            docs.append(current)
            current = []
        current.append(line)
    if current:
        docs.append(current)
    return docs


def _clean(text: str) -> str:
    return _BR.sub(" ", text)


def _read_jsonl(path: Path, split: str | None) -> tuple[list[str], bool]:
    """Texts of a JSONL file (filtered on ``split`` when given) and whether a split field exists."""
    texts: list[str] = []
    has_split = False
    for lineno, line in enumerate(_lines(_read_text(path)), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"{str(path)!r} line {lineno} is not valid JSON ({exc.msg}); JSONL needs one object per line") from None
        if not isinstance(rec, dict) or not isinstance(rec.get("text"), str):
            what = "has no 'text' field" if not isinstance(rec, dict) or "text" not in rec else "has a 'text' field that is not a string"
            raise DataError(f"{str(path)!r} line {lineno} {what}; JSONL records need a string field 'text'")
        if "split" in rec:
            has_split = True
        if split is not None and rec.get("split") != split:
            continue
        texts.append(rec["text"])
    return texts, has_split


def _read_table(path: Path, split: str | None) -> tuple[list[str], bool]:
    """Texts of a CSV/TSV file's text column (filtered on ``split``) and whether a split column exists."""
    import pandas as pd

    _read_text(path)  # one-line errors for unreadable, non-UTF-8 and empty files
    sep = "\t" if path.suffix.lower() == ".tsv" else ","
    try:
        frame = pd.read_csv(path, sep=sep, encoding="utf-8-sig", keep_default_na=False, dtype=str)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DataError(f"cannot parse {str(path)!r} as {'TSV' if sep == chr(9) else 'CSV'}: {first}") from None
    columns = [str(c) for c in frame.columns]
    named = [c for c in frame.columns if str(c).strip().lower() == "text"]
    if named:
        col = named[0]
    else:
        # dtype=str reads every column as text; a "text column" is one that is not all numbers.
        candidates = [c for c in frame.columns if not pd.to_numeric(frame[c], errors="coerce").notna().all()]
        candidates = [c for c in candidates if str(c).strip().lower() not in ("split", "label", "id")]
        if len(candidates) != 1:
            raise DataError(
                f"{str(path)!r} has no column named 'text' and {len(candidates)} other text columns "
                f"(columns: {', '.join(columns) or 'none'}); name the text column 'text'"
            )
        col = candidates[0]
    has_split = "split" in frame.columns
    if split is not None and has_split:
        frame = frame[frame["split"] == split]
    return [str(t) for t in frame[col].tolist()], has_split


def _is_aclimdb_split_dir(d: Path) -> bool:
    return (d / "pos").is_dir() or (d / "neg").is_dir()


def _is_aclimdb_root(d: Path) -> bool:
    return any(_is_aclimdb_split_dir(d / s) for s in ("train", "test"))


def _review_key(p: Path) -> tuple[int, str]:
    stem = p.stem.split("_", 1)[0]
    return (int(stem), p.name) if stem.isdigit() else (2**62, p.name)


def _read_aclimdb_split(d: Path) -> tuple[list[str], list[Path]]:
    """Reviews of one aclImdb split directory: pos then neg, each ordered by review id."""
    texts: list[str] = []
    files: list[Path] = []
    for label in ("pos", "neg"):
        sub = d / label
        if not sub.is_dir():
            continue
        for p in sorted(sub.glob("*.txt"), key=_review_key):
            try:
                texts.append(p.read_text(encoding="utf-8-sig"))
            except (OSError, UnicodeDecodeError) as exc:
                raise DataError(f"cannot read review file {str(p)!r}: {exc}") from None
            files.append(p)
    if not files:
        raise DataError(f"aclImdb directory {str(d)!r} holds no pos/*.txt or neg/*.txt review files")
    return texts, files


# --------------------------------------------------------------------------- resolving


def _norm_split(corpus: str, split: str | None) -> str:
    if split is None:
        return _DEFAULT_SPLIT[corpus]
    key = str(split).strip().lower()
    if key not in _SPLITS[corpus]:
        allowed = ", ".join(_SPLITS[corpus])
        raise InputError(f"split {split!r} is not a split of {corpus}; allowed: {allowed}")
    return _SPLITS[corpus][key]


def shared_data_candidates() -> list[Path]:
    """Where a folder laid out like the project's shared data is looked for by default:
    ``../shared/data`` beside the current directory (the commands are run from the
    repository root, and ``attnspec report`` always looked there). Only the current
    directory counts, so a run started elsewhere reaches the hub as documented. Tests
    replace this function to pretend no such folder exists.
    """
    return [Path.cwd().parent / "shared" / "data"]


def resolve_data_dir(data_dir: str | os.PathLike | None = None) -> tuple[Path | None, str]:
    """The data folder every command uses by default, and where it came from.

    ``--data-dir`` when given, else ``$ATTNSPEC_DATA_DIR``, else ``../shared/data`` when
    it exists (see :func:`shared_data_candidates`), else ``(None, "")``. An explicit
    folder that does not exist is an error; the fallback is only taken when it exists.

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


def _local_named(corpus: str, split: str, d: Path) -> _Corpus | None:
    """The named corpus from a folder laid out like the shared data, or None if it is not there."""
    if corpus == "wiki103":
        path = d / "wikitext103" / f"wiki.{_WIKI_FILE_SPLIT[split]}.raw"
        if not path.is_file():
            return None
        return _Corpus(
            name=corpus, split=split, source=str(path.resolve()), format="wikitext-raw",
            documents=_wikitext_documents(_lines(_read_text(path))), default_mode="pack",
            files=[path], root=path.parent,
        )
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
            return _Corpus(
                name=corpus, split=split, source=str(imdb.resolve()), format="jsonl",
                documents=[[_clean(t)] for t in texts], default_mode="truncate",
                files=used, root=imdb, text_cleaning=_BR_NOTE,
            )
    for root in (imdb / "aclImdb", imdb):
        if split in ("train", "test") and _is_aclimdb_split_dir(root / split):
            texts, files = _read_aclimdb_split(root / split)
            return _Corpus(
                name=corpus, split=split, source=str((root / split).resolve()), format="aclimdb",
                documents=[[_clean(t)] for t in texts], default_mode="truncate",
                files=files, root=root, text_cleaning=_BR_NOTE,
            )
    return None


@contextlib.contextmanager
def _quiet(datasets: Any) -> Iterator[None]:
    """Silence ``datasets``' logging ("Using the latest cached version ...") and progress bars."""
    log = getattr(getattr(datasets, "utils", None), "logging", None)
    if log is None or not hasattr(datasets, "disable_progress_bars"):
        yield
        return
    verbosity = log.get_verbosity()
    bars = log.is_progress_bar_enabled()
    log.set_verbosity_error()
    datasets.disable_progress_bars()
    try:
        yield
    finally:
        log.set_verbosity(verbosity)
        if bars:
            datasets.enable_progress_bars()


def _hub_prepare_hint(repo: str, config: str | None, split: str) -> str:
    call = f"datasets.load_dataset({repo!r}" + (f", {config!r}" if config else "") + f", split={split!r})"
    return f"where the hub is reachable, run `python -c \"import datasets; {call}\"` once with the same HF_HOME"


def _from_hub(corpus: str, split: str, looked: str) -> _Corpus:
    """The named corpus from the Hugging Face hub (``datasets``, imported lazily).

    Offline (``HF_HUB_OFFLINE=1`` / ``HF_DATASETS_OFFLINE=1``, or no network), ``datasets``
    resolves a name through its processed cache ``<org>___<name>/<config>/<version>/<commit>/``
    (filled by one earlier ``load_dataset`` with hub access); that commit is recorded as
    ``hub_revision`` and the split's ``datasets`` fingerprint as ``hub_fingerprint``.
    """
    repo, config = HUB_DATASETS[corpus]
    hub_id = repo + (f" ({config})" if config else "")
    prefix = f"corpus {corpus!r} split {split!r}: {looked}"
    try:
        import datasets
    except ImportError:
        raise DataError(
            f"{prefix}, and the hub dataset {hub_id} cannot be loaded because the 'datasets' library "
            f"is not installed (pip install 'attnspec[hub]'); {_WAY_OUT}"
        ) from None
    try:
        with _quiet(datasets):
            ds = datasets.load_dataset(repo, config, split=split) if config else datasets.load_dataset(repo, split=split)
    except Exception as exc:  # noqa: BLE001 - offline/missing hub access surfaces as many exception types
        msg = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
        unknown_split = re.match(r"Unknown split \"?([^\".]+)\"?\. Should be one of (\[.*\])", msg)
        if unknown_split:
            raise DataError(
                f"{prefix}, and the cached hub dataset {hub_id} has no split {split!r} (cached: "
                f"{unknown_split.group(2)}); use --split with one of those, or {_hub_prepare_hint(repo, config, split)}"
            ) from None
        raise DataError(
            f"{prefix}, and the hub dataset {hub_id} is neither cached nor reachable "
            f"({type(exc).__name__}{': ' + msg if msg else ''}); {_hub_prepare_hint(repo, config, split)}, or {_WAY_OUT}"
        ) from None
    texts = [t if isinstance(t, str) else "" for t in ds["text"]]
    if corpus == "wiki103":
        docs = _wikitext_documents(texts)
        fmt, mode, cleaning = "hub-wikitext", "pack", None
    else:
        docs = [[_clean(t)] for t in texts]
        fmt, mode, cleaning = "hub-imdb", "truncate", _BR_NOTE
    files = getattr(ds, "cache_files", None) or []
    # <cache>/<org>___<name>/<config>/<version>/<commit>/<name>-<split>.arrow: the commit of the
    # hub repository the cache was filled from.
    revision = Path(files[0]["filename"]).parent.name if files and isinstance(files[0], dict) and "filename" in files[0] else None
    extra = {
        "hub_id": repo,
        "hub_config": getattr(getattr(ds, "info", None), "config_name", None) or config,
        "hub_revision": revision,
        "hub_fingerprint": getattr(ds, "_fingerprint", None),
        "hub_rows": len(texts),
    }
    return _Corpus(
        name=corpus, split=split, source=f"hub:{repo}" + (f"/{config}" if config else ""), format=fmt,
        documents=docs, default_mode=mode, text_cleaning=cleaning, extra=extra,
    )


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
        return _Corpus(
            name=path.name, split=file_split, source=str(path.resolve()), format="wikitext-raw",
            documents=_wikitext_documents(_lines(_read_text(path))), default_mode="pack",
            files=[path], root=path.parent,
        )
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
    return _Corpus(
        name=path.name, split=split, source=str(path.resolve()), format=fmt,
        documents=[[_clean(t)] for t in texts], default_mode="truncate",
        files=[path], root=path.parent, text_cleaning=_BR_NOTE,
    )


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
        return _Corpus(
            name=d.name if d.name != want else d.parent.name, split=want, source=str(split_dir.resolve()),
            format="aclimdb", documents=[[_clean(t)] for t in texts], default_mode="truncate",
            files=files, root=split_dir, text_cleaning=_BR_NOTE,
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
        return _Corpus(
            name=d.name, split=split, source=str(d.resolve()), format="jsonl",
            documents=[[_clean(t)] for t in texts], default_mode="truncate",
            files=jsonl, root=d, text_cleaning=_BR_NOTE,
        )
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
    return _Corpus(name="texts", split=None, source=f"{len(texts)} texts given in memory", format="texts",
                   documents=[d for d in docs if d[0].strip()], default_mode="truncate", text_cleaning=_BR_NOTE,
                   extra={"texts_sha256": digest.hexdigest()})


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
            expected = (f"wikitext103/wiki.{_WIKI_FILE_SPLIT[want]}.raw" if corpus == "wiki103"
                        else f"imdb/*.jsonl records with split {want!r} or imdb/aclImdb/{want}/")
            looked = f"no local copy in {str(d)!r} (from {where}; looked for {expected})"
        else:
            looked = f"no local copy (neither --data-dir nor {DATA_DIR_ENV} is set, and no ../shared/data)"
        if split is None:
            want = _HUB_DEFAULT_SPLIT[corpus]
            looked += f"; from the hub the default split is {want!r}"
        return _from_hub(corpus, want, looked)
    path = Path(data)
    if str(data).strip() == "":
        raise DataError(f"data must be a corpus name ({', '.join(sorted(set(CORPUS_NAMES.values())))}) or a path; got ''")
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


# --------------------------------------------------------------------------- tokenising


def _special_template(tokenizer: Any) -> tuple[list[int], list[int]]:
    """The ids the tokenizer puts before and after one sequence ([CLS] / [SEP], <s> / </s>, ...).

    Uses ``build_inputs_with_special_tokens`` where the tokenizer has it (transformers 4),
    else the tokenizer's own encoding of a probe text with and without special tokens
    (transformers 5 tokenizers apply special tokens in their post-processor).
    """
    try:
        n_special = int(tokenizer.num_special_tokens_to_add(pair=False))
        probe = [int(i) for i in tokenizer("hello world", add_special_tokens=False)["input_ids"]]
        build = getattr(tokenizer, "build_inputs_with_special_tokens", None)
        if callable(build):
            full = [int(i) for i in build(probe)]
        else:
            full = [int(i) for i in tokenizer("hello world", add_special_tokens=True)["input_ids"]]
    except (AttributeError, TypeError, KeyError) as exc:
        raise InputError(f"tokenizer {type(tokenizer).__name__} is not a Hugging Face tokenizer ({exc})") from None
    if not probe:
        raise InputError(f"tokenizer {type(tokenizer).__name__} encodes the probe text 'hello world' to no tokens")
    for start in range(len(full) - len(probe) + 1):
        if full[start:start + len(probe)] == probe:
            prefix, suffix = full[:start], full[start + len(probe):]
            if len(prefix) + len(suffix) == n_special:
                return prefix, suffix
    raise InputError(
        f"cannot tell where tokenizer {type(tokenizer).__name__} puts its {n_special} special tokens "
        f"(plain {probe}, with special tokens {full})"
    )


def _tokenize(tokenizer: Any, segments: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """All segments tokenised without special tokens, in batches.

    Returns
    -------
    flat : ndarray of int64, shape (total_tokens,)
        The token ids of every segment, concatenated in order.
    lengths : ndarray of int64, shape (len(segments),)
        The number of tokens of each segment.
    """
    lengths = np.zeros(len(segments), dtype=np.int64)
    chunks: list[np.ndarray] = []
    for start in range(0, len(segments), _TOKENIZE_BATCH):
        batch = segments[start:start + _TOKENIZE_BATCH]
        enc = tokenizer(
            batch, add_special_tokens=False, truncation=False, verbose=False,
            return_attention_mask=False, return_token_type_ids=False,
        )["input_ids"]
        counts = np.fromiter((len(ids) for ids in enc), dtype=np.int64, count=len(enc))
        lengths[start:start + len(batch)] = counts
        chunks.append(np.fromiter(itertools.chain.from_iterable(enc), dtype=np.int64, count=int(counts.sum())))
    flat = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int64)
    return flat, lengths


def _cut(stream: np.ndarray, width: int) -> list[np.ndarray]:
    """Consecutive non-overlapping pieces of ``width`` tokens (views); the remainder is not included."""
    full = len(stream) // width
    return [stream[k * width:(k + 1) * width] for k in range(full)]


def _pool(flat: np.ndarray, doc_lengths: np.ndarray, width: int, mode: str, short_policy: str) -> list[np.ndarray]:
    """Every window the source offers, in corpus order (text tokens only, no special tokens)."""
    if mode == "pack":
        pool = _cut(flat, width)
        tail = flat[len(pool) * width:]
        if short_policy == "keep" and len(tail) > 0:
            pool.append(tail)
        return pool
    offsets = np.concatenate([[0], np.cumsum(doc_lengths)])
    pool = []
    short: list[np.ndarray] = []
    for d, n in enumerate(doc_lengths.tolist()):
        if n >= width:
            pool.append(flat[offsets[d]:offsets[d] + width])
        elif n > 0 and short_policy == "keep":
            pool.append(flat[offsets[d]:offsets[d] + n])
        elif n > 0 and short_policy == "pack":
            short.append(flat[offsets[d]:offsets[d] + n])
    if short:
        pool.extend(_cut(np.concatenate(short), width))
    return pool


@dataclass
class _LazySelection:
    windows: list[np.ndarray]  # (<= width,) text tokens of each chosen window, in draw order
    num_available: int  # windows found among the documents tokenised
    exact: bool  # every document was tokenised
    tokens: int
    longest: int
    documents_tokenised: int


_FIRST_CHUNK = 64


def _select_lazily(documents: list[list[str]], tokenizer: Any, width: int, num_inputs: int, short_policy: str,
                   rng: np.random.Generator, count_available: bool) -> _LazySelection:
    """One window per document, documents visited in ``rng.permutation(len(documents))`` order.

    A document gives the window of its first ``width`` tokens if it has at least ``width``
    tokens, or (``short_policy="keep"``) all of its tokens if it has any. Documents are
    tokenised in chunks of the visiting order (64, then twice as many as still needed,
    at most ``_TOKENIZE_BATCH``), so a run that needs k windows tokenises about the k
    documents it uses plus those it rejects on the way. The windows do not depend on the
    chunk sizes: they are the first ``num_inputs`` acceptable documents of the order.
    """
    order = rng.permutation(len(documents))  # (D,)
    windows: list[np.ndarray] = []
    found = tokens = longest = pos = 0
    while pos < len(order) and (found < num_inputs or count_available):
        need = max(num_inputs - found, 0)
        size = _TOKENIZE_BATCH if need == 0 else min(max(_FIRST_CHUNK, 2 * need), _TOKENIZE_BATCH)
        chunk = order[pos:pos + size].tolist()
        pos += len(chunk)
        segments = [s for d in chunk for s in documents[d]]
        flat, seg_lengths = _tokenize(tokenizer, segments)  # (T,), (S,)
        offsets = np.concatenate([[0], np.cumsum(seg_lengths)])
        seg = 0
        for d in chunk:
            start = offsets[seg]
            seg += len(documents[d])
            n = int(offsets[seg] - start)
            tokens += n
            longest = max(longest, n)
            if n >= width or (n > 0 and short_policy == "keep"):
                found += 1
                if len(windows) < num_inputs:
                    windows.append(flat[start:start + min(n, width)].copy())
    return _LazySelection(windows, found, pos >= len(order), tokens, longest, pos)


@dataclass
class _Drawn:
    windows: list[np.ndarray]  # (<= width,) text tokens of each drawn window, in draw order
    num_inputs: int
    num_available: int
    exact: bool  # num_available is exact (else a lower bound)
    tokens: int  # tokens of the documents counted
    longest: int
    tokenised: int  # documents tokenised in this call
    counts_from: str | None
    selection_rule: str


class _StaleCounts(Exception):
    """A drawn document's fresh token count differs from its cached one."""


@dataclass
class _DocumentPool:
    """Every document's token count; the pool is the acceptable documents in corpus order."""

    doc_lengths: np.ndarray  # (D,) int64
    pool: np.ndarray  # (M,) indices of the documents that give a window, ascending
    source: str  # where the counts came from (token_lengths.SegmentLengths.source)
    flat: np.ndarray | None  # (T,) every token, when the counts were computed just now
    seg_lengths: np.ndarray  # (S,)


def _document_pool(documents: list[list[str]], tokenizer: Any, width: int, short_policy: str,
                   refresh: bool = False) -> _DocumentPool:
    segments = [s for doc in documents for s in doc]
    tokenised: dict[str, np.ndarray] = {}

    def count(segs: list[str]) -> np.ndarray:
        flat, lengths = _tokenize(tokenizer, segs)  # (T,), (S,)
        tokenised["flat"] = flat  # kept: the windows come from it without tokenising twice
        return lengths

    got = segment_lengths(segments, tokenizer, count, refresh=refresh)
    seg_doc = np.repeat(np.arange(len(documents)), [len(doc) for doc in documents])  # (S,)
    doc_lengths = np.bincount(seg_doc, weights=got.lengths, minlength=len(documents)).astype(np.int64)  # (D,)
    ok = doc_lengths >= width if short_policy == "skip" else doc_lengths > 0
    return _DocumentPool(doc_lengths, np.flatnonzero(ok), got.source, tokenised.get("flat"), got.lengths)


def _document_windows(documents: list[list[str]], tokenizer: Any, docs: list[int], width: int,
                      pool: _DocumentPool) -> list[np.ndarray] | None:
    """The first ``width`` tokens of each of ``docs``, or None when a document's fresh
    token count differs from the one in ``pool`` (the cached counts are not to be trusted)."""
    if pool.flat is not None:  # the whole corpus was tokenised for the counts: cut from it
        seg_off = np.concatenate([[0], np.cumsum([len(d) for d in documents])])  # (D + 1,) first segment of each
        tok_off = np.concatenate([[0], np.cumsum(pool.seg_lengths)])  # (S + 1,)
        starts = tok_off[seg_off[docs]]
        return [pool.flat[a:a + min(int(pool.doc_lengths[d]), width)].copy() for a, d in zip(starts.tolist(), docs)]
    flat, seg_lengths = _tokenize(tokenizer, [s for d in docs for s in documents[d]])  # (T,), (S,)
    offsets = np.concatenate([[0], np.cumsum(seg_lengths)])
    windows, seg = [], 0
    for d in docs:
        start = int(offsets[seg])
        seg += len(documents[d])
        n = int(offsets[seg]) - start
        if n != int(pool.doc_lengths[d]):
            return None
        windows.append(flat[start:start + min(n, width)].copy())
    return windows


POOL_RULE = "numpy.random.default_rng(seed).permutation(num_available)[:num_inputs]"


def selection_of(meta: dict[str, Any]) -> str | None:
    """Which rule drew the inputs a corpus record describes: ``"pool"``, ``"documents"``, or
    None when it cannot tell. Records written before ``selection_name`` existed are read
    from their ``selection`` formula."""
    if meta.get("selection_name") in SELECTIONS:
        return str(meta["selection_name"])
    text = str(meta.get("selection") or "")
    if text.startswith("documents in the order"):
        return "documents"
    if text.startswith(POOL_RULE):
        return "pool"
    return None


def length_summary(lengths: Sequence[int], seq_len: int) -> dict[str, float | int]:
    """Real token lengths of the inputs (special tokens included): ``min``, ``median``,
    ``max`` and ``full`` (how many have all ``seq_len`` tokens). Curves of an input shorter
    than ``seq_len`` are 1 past its length by construction, so readers need these."""
    import statistics

    med = statistics.median(lengths)
    return {"min": int(min(lengths)), "median": int(med) if float(med).is_integer() else float(med),
            "max": int(max(lengths)), "full": int(sum(n == seq_len for n in lengths))}


def inputs_digest(input_ids: Sequence[Sequence[int]]) -> str:
    """SHA-256 of a selection: every input's ids as int64, in order, each followed by 8 bytes of 0xff."""
    digest = hashlib.sha256()
    for ids in input_ids:
        digest.update(np.asarray(ids, dtype=np.int64).tobytes())
        digest.update(b"\xff" * 8)  # separator: no id is -1
    return digest.hexdigest()


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _sha256_meta(corpus: _Corpus) -> dict[str, Any]:
    """sha256 of the source: the file's own digest for one file, else a digest of the
    ``sha256sum``-style listing ``"<sha256>  <relative path>\\n"`` sorted by path."""
    if not corpus.files:
        return {"sha256": None, "files": 0}
    sums = {}
    for p in corpus.files:
        rel = str(p.relative_to(corpus.root)) if corpus.root is not None and p.is_relative_to(corpus.root) else str(p)
        sums[rel] = _sha256_file(p)
    if len(sums) == 1:
        return {"sha256": next(iter(sums.values())), "files": 1}
    listing = "".join(f"{sums[k]}  {k}\n" for k in sorted(sums))
    out: dict[str, Any] = {"sha256": hashlib.sha256(listing.encode()).hexdigest(), "files": len(sums)}
    if len(sums) <= _MAX_LISTED_SHA:
        out["sha256_files"] = dict(sorted(sums.items()))
    return out


def _check_int(name: str, value: Any, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InputError(f"{name} must be an integer >= {low}, got {value!r}")
    if value < low:
        raise InputError(f"{name} must be an integer >= {low}, got {value}")
    return int(value)


# --------------------------------------------------------------------------- public


def load_inputs(
    data: str | os.PathLike,
    tokenizer: Any,
    *,
    seq_len: int,
    num_inputs: int | None,
    seed: int,
    split: str | None = None,
    data_dir: str | os.PathLike | None = None,
    short_policy: str = "skip",
    mode: str | None = None,
    at_most: bool = False,
    count_available: bool = False,
    selection: str = "pool",
) -> Inputs:
    """Draw ``num_inputs`` token windows of ``seq_len`` tokens from a corpus, reproducibly.

    Parameters
    ----------
    data : str, path or list of str
        ``"wiki103"``, ``"imdb"`` (also ``"wikitext103"``, ``"wikitext-103"``), a path
        to a file or directory in one of the local formats of the module docstring, or a
        list of texts (one document each, see :func:`texts_corpus`).
    tokenizer : transformers tokenizer
        The model's tokenizer (a fast tokenizer is much quicker). Its special tokens wrap
        every window.
    seq_len : int
        Length of each input, special tokens included; >= 2 and larger than the number of
        special tokens the tokenizer adds.
    num_inputs : int or None
        Number of windows to draw, >= 1; at most the number available. ``None``: every
        available window (``--num-sentences all``), in a seeded random order.
    seed : int
        Seed (>= 0) of the draw without replacement.
    split : str, optional
        wiki103: ``valid``/``validation`` (default for a local copy), ``test``, ``train``
        (default from the hub; hub only unless a local ``wiki.train.raw`` exists). imdb: ``test`` (default), ``train``,
        ``unsupervised`` (hub only). For paths, see the module docstring.
    data_dir : path, optional
        Folder laid out like the shared data; default: the environment variable
        ``ATTNSPEC_DATA_DIR``, else ``../shared/data`` when it exists
        (:func:`resolve_data_dir`). Only used for the corpus names.
    short_policy : {"skip", "keep", "pack"}
        What to do with windows shorter than ``seq_len`` (see the module docstring).
    mode : {"pack", "truncate"}, optional
        Default: ``"pack"`` for WikiText, ``"truncate"`` for everything else.
    at_most : bool
        Treat ``num_inputs`` as an upper bound: draw every available window when fewer
        exist instead of failing (the default of ``attnspec spectrum``).
    count_available : bool
        With ``selection="documents"`` documents are tokenised lazily, only until
        ``num_inputs`` windows are found, and ``meta["num_available"]`` is a lower bound
        (``meta["num_available_exact"]`` is False). True tokenises the rest too, for the
        exact count; the windows chosen are the same either way. ``"pool"`` always counts
        exactly.
    selection : {"pool", "documents"}
        How the windows are drawn (module docstring): ``"pool"``, the default, draws from
        every window (the rule of earlier versions: the same seed gives the same inputs);
        ``"documents"`` takes the first acceptable documents of a seeded document order
        (one window per document only, tokenises only what it needs).

    Returns
    -------
    Inputs
        ``input_ids``: the drawn windows, lists of ints (in draw order); ``meta``: the keys
        (``num_inputs`` is the number drawn, ``num_requested`` what was asked: an int or
        ``"all"``)
        ``corpus, split, source, format, mode, short_policy, seq_len, num_inputs,
        num_available, seed, sha256, files`` plus ``tokenizer, special_tokens,
        text_tokens_per_window, documents, tokens, stream, text_cleaning, selection,
        input_lengths, inputs_sha256``.

    Raises
    ------
    InputError
        ``seq_len`` < 2 or not above the number of special tokens, ``num_inputs`` <= 0,
        a negative seed, an unknown mode, short policy or split.
    DataError
        An unknown name, a missing, unreadable or empty source, a JSONL record without a
        ``text`` field, a CSV without a text column, a name with neither a local copy nor
        the hub, or fewer windows available than ``num_inputs``.
    """
    seq_len = _check_int("seq_len", seq_len, 2)
    requested: int | str = "all" if num_inputs is None else _check_int("num_inputs", num_inputs, 1)
    seed = _check_int("seed", seed, 0)
    if short_policy not in SHORT_POLICIES:
        raise InputError(f"short_policy must be one of {', '.join(SHORT_POLICIES)}, got {short_policy!r}")
    if mode is not None and mode not in MODES:
        raise InputError(f"mode must be one of {', '.join(MODES)} (or unset for the corpus default), got {mode!r}")
    if selection not in SELECTIONS:
        raise InputError(f"selection must be one of {', '.join(SELECTIONS)}, got {selection!r}")
    prefix, suffix = _special_template(tokenizer)
    n_special = len(prefix) + len(suffix)
    width = seq_len - n_special
    if width < 1:
        raise InputError(
            f"seq_len must be >= {n_special + 1} for this tokenizer (it adds {n_special} special tokens), got {seq_len}"
        )

    corpus = _resolve(data, split, data_dir)
    mode = mode or corpus.default_mode
    if not corpus.documents:
        where = f" for split {corpus.split!r}" if corpus.split else ""
        raise DataError(f"data {corpus.source!r} contains no text{where}")

    def draw(refresh: bool) -> _Drawn:
        rng = np.random.default_rng(seed)
        one_per_document = mode == "truncate" and short_policy in ("skip", "keep")
        if selection == "documents" and not one_per_document:
            raise InputError(f"selection 'documents' needs one window per document (mode truncate with short_policy "
                             f"skip or keep), got mode {mode} with short_policy {short_policy}; use selection 'pool'")
        pool: list[np.ndarray] | None = None  # windows of a stream, in corpus order
        doc_pool: _DocumentPool | None = None  # or: documents that give a window, with every token count
        windows: list[np.ndarray] | None = None
        counts_from: str | None = None  # only the pool of documents reads counts (maybe cached)
        if selection == "documents":
            # One window per document, so a document's window needs only its own tokens: walk
            # the documents in a seeded order and tokenise them chunk by chunk until
            # num_inputs windows are found (the rest of the corpus is never tokenised unless
            # count_available asks for the exact number of windows).
            # "all" (num_inputs None) walks every document: at most one window each
            target = len(corpus.documents) if wanted is None else wanted
            sel = _select_lazily(corpus.documents, tokenizer, width, target, short_policy, rng, count_available)
            windows, num_available, exact = sel.windows, sel.num_available, sel.exact
            tokens, longest, tokenised = sel.tokens, sel.longest, sel.documents_tokenised
            selection_rule = ("documents in the order numpy.random.default_rng(seed).permutation(documents); the first "
                              f"num_inputs with {'>= text_tokens_per_window tokens' if short_policy == 'skip' else 'any token'}, "
                              "cut to text_tokens_per_window tokens")
        elif one_per_document:
            # The pool is the acceptable documents in corpus order; it needs every document's
            # token count (cached on disk) but only the drawn documents' tokens.
            doc_pool = _document_pool(corpus.documents, tokenizer, width, short_policy, refresh=refresh)
            num_available, exact = len(doc_pool.pool), True
            tokens, longest = int(doc_pool.doc_lengths.sum()), int(doc_pool.doc_lengths.max())
            tokenised = len(corpus.documents) if doc_pool.flat is not None else 0
            counts_from = doc_pool.source
            selection_rule = POOL_RULE
        else:
            # Windows cut from a stream (mode pack, or short documents packed together) depend on
            # everything before them: tokenise every segment once; documents are runs of
            # consecutive segments.
            segments = [s for doc in corpus.documents for s in doc]
            flat, seg_lengths = _tokenize(tokenizer, segments)  # (T,), (S,)
            seg_doc = np.repeat(np.arange(len(corpus.documents)), [len(doc) for doc in corpus.documents])  # (S,)
            doc_lengths = np.bincount(seg_doc, weights=seg_lengths, minlength=len(corpus.documents)).astype(np.int64)  # (D,)
            pool = _pool(flat, doc_lengths, width, mode, short_policy)
            num_available, exact = len(pool), True
            tokens, longest, tokenised = int(len(flat)), int(doc_lengths.max()) if len(doc_lengths) else 0, len(corpus.documents)
            selection_rule = POOL_RULE
        num_inputs = wanted
        if num_inputs is None or (at_most and num_inputs > num_available):
            num_inputs = num_available  # "all", or the default upper bound on a smaller corpus (the count is then exact)
        if num_available == 0 or num_inputs > num_available:  # only when every document has been tokenised: exact
            hints = ["ask for fewer (--num-sentences N, or --num-sentences all for these)", "use a smaller --seq-len"]
            if mode == "truncate" and short_policy == "skip":
                hints.append("short_policy 'pack' or 'keep' (--short-policy)")
            hints.append("or use more data (another --split or --data PATH)")
            raise DataError(
                f"only {num_available} windows of {seq_len} tokens are available in {corpus.source!r} "
                f"(split {corpus.split}, mode {mode}, short_policy {short_policy}; {len(corpus.documents)} documents, "
                f"{tokens} tokens, longest document {longest} tokens) "
                f"but num_inputs={requested}; " + ", ".join(hints)
            )
        if windows is None:
            chosen = rng.permutation(num_available)[:num_inputs]
            if pool is not None:
                windows = [pool[i] for i in chosen.tolist()]
            else:
                assert doc_pool is not None
                docs = doc_pool.pool[chosen].tolist()
                windows = _document_windows(corpus.documents, tokenizer, docs, width, doc_pool)
                if windows is None:
                    raise _StaleCounts
                tokenised = len(corpus.documents) if doc_pool.flat is not None else len(docs)
        return _Drawn(windows, num_inputs, num_available, exact, tokens, longest, tokenised, counts_from, selection_rule)

    wanted = num_inputs
    try:
        drawn = draw(refresh=False)
    except _StaleCounts:
        # A drawn document's tokens disagree with its cached count: the cache is not to be
        # trusted. Count everything again (the cache is rewritten) and draw from the true counts.
        drawn = draw(refresh=True)
        drawn.counts_from = "computed (the cached counts disagreed with the tokenizer and were replaced)"
    windows, num_inputs, num_available, exact = drawn.windows, drawn.num_inputs, drawn.num_available, drawn.exact
    tokens, tokenised = drawn.tokens, drawn.tokenised
    input_ids = [prefix + w.tolist() + suffix for w in windows]

    lengths = [len(ids) for ids in input_ids]
    meta: dict[str, Any] = {
        "corpus": corpus.name,
        "split": corpus.split,
        "source": corpus.source,
        "format": corpus.format,
        "mode": mode,
        "short_policy": short_policy,
        "seq_len": seq_len,
        "num_inputs": num_inputs,
        "num_requested": requested,
        "num_available": num_available,
        # False: num_available is a lower bound (the documents not needed were not tokenised).
        "num_available_exact": exact,
        "seed": seed,
        **_sha256_meta(corpus),
        "tokenizer": str(getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__),
        "special_tokens": n_special,
        "text_tokens_per_window": width,
        "documents": len(corpus.documents),
        "documents_tokenised": tokenised,
        "tokens": tokens,  # of the documents tokenised
        "stream": "whole source, documents concatenated in order" if mode == "pack" else "one document per window",
        "text_cleaning": corpus.text_cleaning,
        "selection": drawn.selection_rule,
        "selection_name": selection,
        # where the documents' token counts came from (selection "pool", one window per document)
        **({"token_counts": drawn.counts_from} if drawn.counts_from is not None else {}),
        "input_lengths": length_summary(lengths, seq_len),
        "inputs_sha256": inputs_digest(input_ids),
        **corpus.extra,
    }
    return Inputs(input_ids=input_ids, meta=meta)
