"""Inputs for the spectrum study: :func:`load_inputs` (corpus → token windows → the seeded
selection) and the record of how they were made (:class:`Inputs`). The package docstring
(:mod:`attnspec.spectra.data`) describes what it returns and why.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from attnspec.errors import DataError, InputError
from attnspec.spectra.data.corpus import _Corpus
from attnspec.spectra.data.selection import (
    POOL_RULE,
    SELECTIONS,
    _document_pool,
    _document_windows,
    _DocumentPool,
    _Drawn,
    _select_lazily,
    _StaleCounts,
)
from attnspec.spectra.data.sources import _resolve, _sha256_meta
from attnspec.spectra.data.windows import MODES, SHORT_POLICIES, _pool, _special_template, _tokenize


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
        return (
            f"Inputs({len(self.input_ids)} windows, corpus={m.get('corpus')!r}, split={m.get('split')!r}, "
            f"seq_len={m.get('seq_len')}, mode={m.get('mode')!r}, short_policy={m.get('short_policy')!r}, "
            f"seed={m.get('seed')})"
        )


def length_summary(lengths: Sequence[int], seq_len: int) -> dict[str, float | int]:
    """Real token lengths of the inputs (special tokens included): ``min``, ``median``,
    ``max`` and ``full`` (how many have all ``seq_len`` tokens). Curves of an input shorter
    than ``seq_len`` are 1 past its length by construction, so readers need these.

    Parameters
    ----------
    lengths : sequence of int
        Each input's length in tokens (at least one input).
    seq_len : int
        The window length n.

    Returns
    -------
    dict
        ``min``, ``median`` (an int when whole), ``max``, ``full``.
    """
    import statistics

    med = statistics.median(lengths)
    return {
        "min": int(min(lengths)),
        "median": int(med) if float(med).is_integer() else float(med),
        "max": int(max(lengths)),
        "full": int(sum(n == seq_len for n in lengths)),
    }


def inputs_digest(input_ids: Sequence[Sequence[int]]) -> str:
    """SHA-256 of a selection: every input's ids as int64, in order, each followed by 8 bytes of 0xff.

    Parameters
    ----------
    input_ids : sequence of sequence of int
        The inputs' token ids, in selection order.

    Returns
    -------
    str
        The hex digest.
    """
    digest = hashlib.sha256()
    for ids in input_ids:
        digest.update(np.asarray(ids, dtype=np.int64).tobytes())
        digest.update(b"\xff" * 8)  # separator: no id is -1
    return digest.hexdigest()


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
        to a file or directory in one of the local formats of the package docstring (attnspec.spectra.data), or a
        list of texts (one document each, see :func:`texts_corpus`).
    tokenizer : transformers tokenizer
        The model's tokenizer (a fast tokenizer is much quicker). Its special tokens wrap
        every window.
    seq_len : int
        Length of each input, special tokens included; >= 2 and larger than the number of
        special tokens the tokenizer adds.
    num_inputs : int or None
        Number of windows to draw, >= 1; at most the number available. ``None``: every
        available window (``--num-inputs all``), in a seeded random order.
    seed : int
        Seed (>= 0) of the draw without replacement.
    split : str, optional
        wiki103: ``valid``/``validation`` (default for a local copy), ``test``, ``train``
        (default from the hub; hub only unless a local ``wiki.train.raw`` exists). imdb: ``test`` (default), ``train``,
        ``unsupervised`` (hub only). For paths, see the package docstring (attnspec.spectra.data).
    data_dir : path, optional
        Folder laid out like the shared data; default: the environment variable
        ``ATTNSPEC_DATA_DIR``, else ``../shared/data`` when it exists
        (:func:`resolve_data_dir`). Only used for the corpus names.
    short_policy : {"skip", "keep", "pack"}
        What to do with windows shorter than ``seq_len`` (see the package docstring (attnspec.spectra.data)).
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
        How the windows are drawn (package docstring): ``"pool"``, the default, draws from
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
    _check_choices(short_policy, mode, selection)
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
    req = _DrawRequest(
        corpus=corpus,
        tokenizer=tokenizer,
        seq_len=seq_len,
        width=width,
        wanted=num_inputs,
        requested=requested,
        seed=seed,
        mode=mode,
        short_policy=short_policy,
        selection=selection,
        at_most=at_most,
        count_available=count_available,
    )
    try:
        drawn = _draw(req, refresh=False)
    except _StaleCounts:
        # A drawn document's tokens disagree with its cached count: the cache is not to be
        # trusted. Count everything again (the cache is rewritten) and draw from the true counts.
        drawn = _draw(req, refresh=True)
        drawn.counts_from = "computed (the cached counts disagreed with the tokenizer and were replaced)"
    input_ids = [prefix + w.tolist() + suffix for w in drawn.windows]
    return Inputs(input_ids=input_ids, meta=_inputs_meta(req, drawn, input_ids, n_special))


def _check_choices(short_policy: str, mode: str | None, selection: str) -> None:
    if short_policy not in SHORT_POLICIES:
        raise InputError(f"short_policy must be one of {', '.join(SHORT_POLICIES)}, got {short_policy!r}")
    if mode is not None and mode not in MODES:
        raise InputError(f"mode must be one of {', '.join(MODES)} (or unset for the corpus default), got {mode!r}")
    if selection not in SELECTIONS:
        raise InputError(f"selection must be one of {', '.join(SELECTIONS)}, got {selection!r}")


@dataclass(frozen=True)
class _DrawRequest:
    """What :func:`load_inputs` was asked for, checked (``wanted`` None: every window)."""

    corpus: _Corpus
    tokenizer: Any
    seq_len: int
    width: int  # text tokens per window (seq_len minus the special tokens)
    wanted: int | None
    requested: int | str  # as recorded: an int or "all"
    seed: int
    mode: str
    short_policy: str
    selection: str
    at_most: bool
    count_available: bool


@dataclass
class _Candidates:
    """The windows a draw chooses from: already chosen (``windows``), a pool of windows cut
    from the stream (``pool``) or a pool of documents (``doc_pool``)."""

    num_available: int
    exact: bool
    tokens: int
    longest: int
    tokenised: int
    selection_rule: str
    windows: list[np.ndarray] | None = None
    pool: list[np.ndarray] | None = None  # windows of a stream, in corpus order
    doc_pool: _DocumentPool | None = None  # or: documents that give a window, with every token count
    counts_from: str | None = None  # only the pool of documents reads counts (maybe cached)


def _candidates(req: _DrawRequest, rng: np.random.Generator, refresh: bool) -> _Candidates:
    """Tokenise what the selection rule needs and return what it will choose from."""
    documents, tokenizer, width = req.corpus.documents, req.tokenizer, req.width
    one_per_document = req.mode == "truncate" and req.short_policy in ("skip", "keep")
    if req.selection == "documents" and not one_per_document:
        raise InputError(
            f"selection 'documents' needs one window per document (mode truncate with short_policy "
            f"skip or keep), got mode {req.mode} with short_policy {req.short_policy}; use selection 'pool'"
        )
    if req.selection == "documents":
        # One window per document, so a document's window needs only its own tokens: walk
        # the documents in a seeded order and tokenise them chunk by chunk until
        # num_inputs windows are found (the rest of the corpus is never tokenised unless
        # count_available asks for the exact number of windows).
        # "all" (num_inputs None) walks every document: at most one window each
        target = len(documents) if req.wanted is None else req.wanted
        sel = _select_lazily(documents, tokenizer, width, target, req.short_policy, rng, req.count_available)
        rule = (
            "documents in the order numpy.random.default_rng(seed).permutation(documents); the first "
            f"num_inputs with {'>= text_tokens_per_window tokens' if req.short_policy == 'skip' else 'any token'}, "
            "cut to text_tokens_per_window tokens"
        )
        return _Candidates(
            sel.num_available, sel.exact, sel.tokens, sel.longest, sel.documents_tokenised, rule, windows=sel.windows
        )
    if one_per_document:
        # The pool is the acceptable documents in corpus order; it needs every document's
        # token count (cached on disk) but only the drawn documents' tokens.
        doc_pool = _document_pool(documents, tokenizer, width, req.short_policy, refresh=refresh)
        return _Candidates(
            len(doc_pool.pool),
            True,
            int(doc_pool.doc_lengths.sum()),
            int(doc_pool.doc_lengths.max()),
            len(documents) if doc_pool.flat is not None else 0,
            POOL_RULE,
            doc_pool=doc_pool,
            counts_from=doc_pool.source,
        )
    # Windows cut from a stream (mode pack, or short documents packed together) depend on
    # everything before them: tokenise every segment once; documents are runs of
    # consecutive segments.
    segments = [s for doc in documents for s in doc]
    flat, seg_lengths = _tokenize(tokenizer, segments)  # (T,), (S,)
    seg_doc = np.repeat(np.arange(len(documents)), [len(doc) for doc in documents])  # (S,)
    doc_lengths = np.bincount(seg_doc, weights=seg_lengths, minlength=len(documents)).astype(np.int64)  # (D,)
    pool = _pool(flat, doc_lengths, width, req.mode, req.short_policy)
    return _Candidates(
        len(pool),
        True,
        int(len(flat)),
        int(doc_lengths.max()) if len(doc_lengths) else 0,
        len(documents),
        POOL_RULE,
        pool=pool,
    )


def _draw(req: _DrawRequest, refresh: bool) -> _Drawn:
    """The seeded draw: the candidates, how many to take, then the chosen windows."""
    rng = np.random.default_rng(req.seed)
    c = _candidates(req, rng, refresh)
    num_inputs = req.wanted
    if num_inputs is None or (req.at_most and num_inputs > c.num_available):
        num_inputs = c.num_available  # "all", or the default upper bound on a smaller corpus (the count is then exact)
    if c.num_available == 0 or num_inputs > c.num_available:  # only when every document has been tokenised: exact
        raise DataError(_too_few(req, c))
    windows, tokenised = c.windows, c.tokenised
    if windows is None:
        chosen = rng.permutation(c.num_available)[:num_inputs]
        if c.pool is not None:
            windows = [c.pool[i] for i in chosen.tolist()]
        else:
            assert c.doc_pool is not None
            docs = c.doc_pool.pool[chosen].tolist()
            windows = _document_windows(req.corpus.documents, req.tokenizer, docs, req.width, c.doc_pool)
            if windows is None:
                raise _StaleCounts
            tokenised = len(req.corpus.documents) if c.doc_pool.flat is not None else len(docs)
    return _Drawn(
        windows, num_inputs, c.num_available, c.exact, c.tokens, c.longest, tokenised, c.counts_from, c.selection_rule
    )


def _too_few(req: _DrawRequest, c: _Candidates) -> str:
    """The one line that says how many windows there are, why, and the ways out."""
    hints = ["ask for fewer (--num-inputs N, or --num-inputs all for these)", "use a smaller --seq-len"]
    if req.mode == "truncate" and req.short_policy == "skip":
        hints.append("short_policy 'pack' or 'keep' (--short-policy)")
    hints.append("or use more data (another --split or --data PATH)")
    corpus = req.corpus
    return (
        f"only {c.num_available} windows of {req.seq_len} tokens are available in {corpus.source!r} "
        f"(split {corpus.split}, mode {req.mode}, short_policy {req.short_policy}; {len(corpus.documents)} documents, "
        f"{c.tokens} tokens, longest document {c.longest} tokens) "
        f"but {req.requested} were asked for (--num-inputs / num_inputs); " + ", ".join(hints)
    )


def _inputs_meta(req: _DrawRequest, drawn: _Drawn, input_ids: list[list[int]], n_special: int) -> dict[str, Any]:
    """The record of how the inputs were made (:attr:`Inputs.meta`)."""
    corpus, mode, tokenizer = req.corpus, req.mode, req.tokenizer
    lengths = [len(ids) for ids in input_ids]
    return {
        "corpus": corpus.name,
        "split": corpus.split,
        "source": corpus.source,
        "format": corpus.format,
        "mode": mode,
        "short_policy": req.short_policy,
        "seq_len": req.seq_len,
        "num_inputs": drawn.num_inputs,
        "num_requested": req.requested,
        "num_available": drawn.num_available,
        # False: num_available is a lower bound (the documents not needed were not tokenised).
        "num_available_exact": drawn.exact,
        "seed": req.seed,
        **_sha256_meta(corpus),
        "tokenizer": str(getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__),
        "special_tokens": n_special,
        "text_tokens_per_window": req.width,
        "documents": len(corpus.documents),
        "documents_tokenised": drawn.tokenised,
        "tokens": drawn.tokens,  # of the documents tokenised
        "stream": "whole source, documents concatenated in order" if mode == "pack" else "one document per window",
        "text_cleaning": corpus.text_cleaning,
        "selection": drawn.selection_rule,
        "selection_name": req.selection,
        # where the documents' token counts came from (selection "pool", one window per document)
        **({"token_counts": drawn.counts_from} if drawn.counts_from is not None else {}),
        "input_lengths": length_summary(lengths, req.seq_len),
        "inputs_sha256": inputs_digest(input_ids),
        **corpus.extra,
    }
