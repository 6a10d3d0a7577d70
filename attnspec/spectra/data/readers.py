"""Readers: plain text (WikiText's raw files), JSON lines, Parquet/CSV tables and aclImdb folders,
each to a list of documents.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

from attnspec.errors import DataError

_BR = re.compile(r"<br\s*/?\s*>", re.IGNORECASE)


_BR_NOTE = "HTML line breaks <br />, <br>, <br/> replaced by a space"


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
            s.startswith("= ")
            and s.endswith(" =")
            and not s.startswith("= =")
            and (i == 0 or blank[i - 1])
            and (i + 1 == len(lines) or blank[i + 1])
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
        except (json.JSONDecodeError, RecursionError) as exc:
            why = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested deeper than Python can parse"
            raise DataError(
                f"{str(path)!r} line {lineno} is not valid JSON ({why}); JSONL needs one object per line"
            ) from None
        if not isinstance(rec, dict) or not isinstance(rec.get("text"), str):
            what = (
                "has no 'text' field"
                if not isinstance(rec, dict) or "text" not in rec
                else "has a 'text' field that is not a string"
            )
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
