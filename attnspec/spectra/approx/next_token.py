"""End to end for causal models: the change in the model's own next-token loss.

A decoder's output is its next-token distribution, so the end-to-end effect of replacing
every layer's attention by a causal method is read on the model's own cross-entropy on the
held-out documents: per document, the mean over its n − 1 predicted tokens of
−log p(token t+1 | tokens ≤ t), with every layer replaced, minus the same with the exact
attention (:func:`loss_changes`). Positive: the method costs the model that many nats per
token. Only methods with a causal form are run (the others are refused before); the
replacement is :func:`attnspec.spectra.approx.end_to_end.replaced_readouts`, with the loss as its readout.

The loaded model is the base model (no language-model head): its logits are its last hidden
state times the output embedding, the input embedding where the model ties them (SmolLM2,
GPT-2, Llama-style models with ``tie_word_embeddings``). A model with its own head is used as
it is; a base model with an untied head that was not loaded records no loss.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd
import torch

from attnspec.spectra.approx.end_to_end import LayerFunction, replaced_readouts

#: Columns of the next-token-loss table, one row per (n, k, method, input).
COLUMNS = ["n", "k", "method", "input", "loss_exact", "loss", "loss_change"]


def output_head(model: Any) -> Callable[[torch.Tensor], torch.Tensor] | None:
    """hidden (n, h) → logits (n, vocab): the model's own head, else its tied input embedding.

    Parameters
    ----------
    model : transformers model
        A causal language model, or its base model.

    Returns
    -------
    callable or None
        None when the model has no head and does not tie its embeddings.
    """
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    if head is not None:
        return head
    if getattr(model.config, "tie_word_embeddings", False):
        weight = model.get_input_embeddings().weight  # (vocab, h)
        return lambda hidden: hidden @ weight.to(hidden.dtype).T
    return None


def next_token_loss(model: Any, ids: list[int], device: Any, head: Callable[[torch.Tensor], torch.Tensor]) -> float:
    """Mean over the document's tokens 2..n of −log p(token | the tokens before it), in nats.

    Parameters
    ----------
    model : transformers model
    ids : list of int
        One document, all real tokens (n >= 2).
    device : torch device
    head : callable
        :func:`output_head`'s (used when the model returns no logits).

    Returns
    -------
    float
    """
    tokens = torch.tensor([ids], device=device)  # (1, n)
    with torch.no_grad():
        out = model(input_ids=tokens)
        logits = getattr(out, "logits", None)
        logits = logits[0] if logits is not None else head(out.last_hidden_state[0])  # (n, vocab)
    return float(torch.nn.functional.cross_entropy(logits[:-1].double(), tokens[0, 1:]))


def loss_changes(
    encoder: Any,
    documents: Sequence[list[int]],
    index: Sequence[int],
    n: int,
    methods: Sequence[tuple[str, int, LayerFunction]],
) -> pd.DataFrame:
    """The change in next-token loss with every layer replaced by each method, per document.

    Parameters
    ----------
    encoder : LoadedModel
        A causal model.
    documents : sequence of list of int
        The held-out documents at this n.
    index : sequence of int
        Their indices in the study's selection (the ``input`` column).
    n : int
    methods : sequence of (name, k, layer_function)
        Causal methods only.

    Returns
    -------
    pandas.DataFrame
        :data:`COLUMNS`; empty when the model has no language-model head to read (see the
        module docstring) or when no attention call was replaced.
    """
    model, device = encoder.model, encoder.device
    head = output_head(model)
    if head is None:
        return pd.DataFrame([], columns=COLUMNS)
    runs = replaced_readouts(encoder, documents, methods, lambda ids: next_token_loss(model, ids, device, head))
    if runs is None:
        return pd.DataFrame([], columns=COLUMNS)
    return pd.DataFrame([[n, k, name, index[i], ref, got, got - ref] for name, k, i, ref, got in runs], columns=COLUMNS)
