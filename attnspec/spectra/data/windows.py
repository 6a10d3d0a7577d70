"""Token windows of n tokens: the model's special-token template, batched tokenising, packing
and truncating documents into windows.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from attnspec.errors import InputError
from attnspec.options.spectrum import spectrum_choices

MODES = ("pack", "truncate")


#: What --short-policy allows, as its declaration lists them.
SHORT_POLICIES = spectrum_choices("short_policy")


_TOKENIZE_BATCH = 1024


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
        if full[start : start + len(probe)] == probe:
            prefix, suffix = full[:start], full[start + len(probe) :]
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
        batch = segments[start : start + _TOKENIZE_BATCH]
        enc = tokenizer(
            batch,
            add_special_tokens=False,
            truncation=False,
            verbose=False,
            return_attention_mask=False,
            return_token_type_ids=False,
        )["input_ids"]
        counts = np.fromiter((len(ids) for ids in enc), dtype=np.int64, count=len(enc))
        lengths[start : start + len(batch)] = counts
        chunks.append(np.fromiter(itertools.chain.from_iterable(enc), dtype=np.int64, count=int(counts.sum())))
    flat = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int64)
    return flat, lengths


def _cut(stream: np.ndarray, width: int) -> list[np.ndarray]:
    """Consecutive non-overlapping pieces of ``width`` tokens (views); the remainder is not included."""
    full = len(stream) // width
    return [stream[k * width : (k + 1) * width] for k in range(full)]


def _pool(flat: np.ndarray, doc_lengths: np.ndarray, width: int, mode: str, short_policy: str) -> list[np.ndarray]:
    """Every window the source offers, in corpus order (text tokens only, no special tokens)."""
    if mode == "pack":
        pool = _cut(flat, width)
        tail = flat[len(pool) * width :]
        if short_policy == "keep" and len(tail) > 0:
            pool.append(tail)
        return pool
    offsets = np.concatenate([[0], np.cumsum(doc_lengths)])
    pool = []
    short: list[np.ndarray] = []
    for d, n in enumerate(doc_lengths.tolist()):
        if n >= width:
            pool.append(flat[offsets[d] : offsets[d] + width])
        elif n > 0 and short_policy == "keep":
            pool.append(flat[offsets[d] : offsets[d] + n])
        elif n > 0 and short_policy == "pack":
            short.append(flat[offsets[d] : offsets[d] + n])
    if short:
        pool.extend(_cut(np.concatenate(short), width))
    return pool
