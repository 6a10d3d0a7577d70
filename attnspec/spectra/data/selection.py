"""The two selection rules: ``pool`` (a seeded permutation of every window) and ``documents``
(the first long-enough documents of a seeded document order), drawn lazily.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from attnspec.options.spectrum import spectrum_choices
from attnspec.spectra.data.token_counts import segment_lengths
from attnspec.spectra.data.windows import _TOKENIZE_BATCH, _tokenize

# "pool": a seeded permutation of every window; "documents": the first acceptable documents
# of a seeded document order (one window per document only; see the docstring of attnspec.spectra.data)
SELECTIONS = spectrum_choices("selection")


@dataclass
class _LazySelection:
    windows: list[np.ndarray]  # (<= width,) text tokens of each chosen window, in draw order
    num_available: int  # windows found among the documents tokenised
    exact: bool  # every document was tokenised
    tokens: int
    longest: int
    documents_tokenised: int


_FIRST_CHUNK = 64


def _select_lazily(
    documents: list[list[str]],
    tokenizer: Any,
    width: int,
    num_inputs: int,
    short_policy: str,
    rng: np.random.Generator,
    count_available: bool,
) -> _LazySelection:
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
        chunk = order[pos : pos + size].tolist()
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
                    windows.append(flat[start : start + min(n, width)].copy())
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
    source: str  # where the counts came from (token_counts.SegmentLengths.source)
    flat: np.ndarray | None  # (T,) every token, when the counts were computed just now
    seg_lengths: np.ndarray  # (S,)


def _document_pool(
    documents: list[list[str]], tokenizer: Any, width: int, short_policy: str, refresh: bool = False
) -> _DocumentPool:
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


def _document_windows(
    documents: list[list[str]], tokenizer: Any, docs: list[int], width: int, pool: _DocumentPool
) -> list[np.ndarray] | None:
    """The first ``width`` tokens of each of ``docs``, or None when a document's fresh
    token count differs from the one in ``pool`` (the cached counts are not to be trusted)."""
    if pool.flat is not None:  # the whole corpus was tokenised for the counts: cut from it
        seg_off = np.concatenate([[0], np.cumsum([len(d) for d in documents])])  # (D + 1,) first segment of each
        tok_off = np.concatenate([[0], np.cumsum(pool.seg_lengths)])  # (S + 1,)
        starts = tok_off[seg_off[docs]]
        return [pool.flat[a : a + min(int(pool.doc_lengths[d]), width)].copy() for a, d in zip(starts.tolist(), docs)]
    flat, seg_lengths = _tokenize(tokenizer, [s for d in docs for s in documents[d]])  # (T,), (S,)
    offsets = np.concatenate([[0], np.cumsum(seg_lengths)])
    windows, seg = [], 0
    for d in docs:
        start = int(offsets[seg])
        seg += len(documents[d])
        n = int(offsets[seg]) - start
        if n != int(pool.doc_lengths[d]):
            return None
        windows.append(flat[start : start + min(n, width)].copy())
    return windows


POOL_RULE = "numpy.random.default_rng(seed).permutation(num_available)[:num_inputs]"


def selection_of(meta: dict[str, Any]) -> str | None:
    """Which rule drew the inputs a corpus record describes: ``"pool"``, ``"documents"``, or
    None when it cannot tell. Records written before ``selection_name`` existed are read
    from their ``selection`` formula.

    Parameters
    ----------
    meta : dict
        A corpus record (meta.json's ``corpus``).

    Returns
    -------
    str or None
    """
    if meta.get("selection_name") in SELECTIONS:
        return str(meta["selection_name"])
    text = str(meta.get("selection") or "")
    if text.startswith("documents in the order"):
        return "documents"
    if text.startswith(POOL_RULE):
        return "pool"
    return None
