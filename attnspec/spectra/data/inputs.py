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
        return (f"Inputs({len(self.input_ids)} windows, corpus={m.get('corpus')!r}, split={m.get('split')!r}, "
                f"seq_len={m.get('seq_len')}, mode={m.get('mode')!r}, short_policy={m.get('short_policy')!r}, "
                f"seed={m.get('seed')})")




# --------------------------------------------------------------------------- reading






















# --------------------------------------------------------------------------- resolving


























# --------------------------------------------------------------------------- tokenising






























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
