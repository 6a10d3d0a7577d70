"""End to end: the model run with every layer's attention replaced by an approximation.

Two ways in, one per capture path (:mod:`attnspec.spectra.capture`):

* :func:`replaced_attention`: the model looks its attention function up in ``transformers``'
  attention-function registry under a private name, whose function returns the
  approximation's output instead of P V (the layer's Q, K, V as the model computed them, real
  tokens only, one document at a time). A score bias carried inside the attention mask is not
  passed to the method on this path (it sees the content scores and the causal mask).
* :func:`replaced_by_hooks`: for attention modules captured through hooks whose layout
  :mod:`attnspec.spectra.score_parts` reads (MPNet), a forward hook recomputes the layer's
  Q, K, V and its additive score bias B from the module's inputs, as the per-layer
  measurement does, hands them to the method, and returns the module's own output projection
  of the method's output instead of the module's. A method that takes a bias sees
  S = s·Q Kᵀ + B; one that does not sees the content scores (as in :mod:`.measure`).

:func:`embedding_cosines` compares the mean-pooled last hidden state (the sentence embedding
of sentence-transformers' MiniLM and all-mpnet-base-v2) of the replaced model with the exact
model's, per held-out document.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pandas as pd
import torch

from attnspec.spectra.approx.protocol import Heads

_counter = itertools.count()
#: Columns of the end-to-end table, one row per (n, k, method, input).
COLUMNS = ["n", "k", "method", "input", "cosine"]

#: layer, heads -> approximate output (H, n, d)
LayerFunction = Callable[[int, Heads], torch.Tensor]


@contextmanager
def replaced_attention(model: Any, layer_function: LayerFunction, causal: Sequence[bool]) -> Iterator[list[int]]:
    """Every attention layer of ``model`` returns ``layer_function(layer, heads)`` inside the block.

    Parameters
    ----------
    model : transformers model
        One whose attention goes through the attention-function registry; run on batches of one.
    layer_function : callable
        ``(layer, heads) -> Tensor (H, n, d)``; layers are numbered in the order they run.
    causal : sequence of bool
        Per layer, whether its attention is causal.

    Yields
    ------
    list of int
        One element: how many attention calls the block has replaced so far (zero after a
        forward pass means the model does not use the registry, and nothing was replaced).
    """
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, AttentionMaskInterface
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

    order: dict[int, int] = {}
    calls = [0]

    def attention(module: Any, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, mask: Any, *args, **kw):
        calls[0] += 1
        layer = order.setdefault(id(module), len(order))
        scaling = kw.get("scaling") or query.shape[-1] ** -0.5
        rep = query.shape[1] // key.shape[1]
        heads = Heads(  # (H, n, d) each: batch of one
            query[0].double(),
            key[0].double().repeat_interleave(rep, dim=0),
            value[0].double().repeat_interleave(rep, dim=0),
            float(scaling),
            None,
            bool(causal[layer]),
        )
        out = layer_function(layer, heads)  # (H, n, d)
        return out.to(query.dtype).unsqueeze(0).transpose(1, 2).contiguous(), None  # (1, n, H, d)

    name = f"attnspec_approx_{next(_counter)}"
    config = model.config
    saved = config._attn_implementation
    ALL_ATTENTION_FUNCTIONS[name] = attention
    AttentionMaskInterface._global_mapping[name] = ALL_MASK_ATTENTION_FUNCTIONS["eager"]
    try:
        config._attn_implementation = name
        yield calls
    finally:
        config._attn_implementation = saved
        if name in ALL_ATTENTION_FUNCTIONS._local_mapping:
            del ALL_ATTENTION_FUNCTIONS[name]
        AttentionMaskInterface._global_mapping.pop(name, None)


def hooked_attention(model: Any) -> list[Any]:
    """The attention modules :func:`replaced_by_hooks` replaces, in the order they run (empty
    for a model whose attention modules :mod:`attnspec.spectra.score_parts` does not read).

    Parameters
    ----------
    model : torch.nn.Module

    Returns
    -------
    list of torch.nn.Module
    """
    from attnspec.spectra.score_parts import writes_output

    return [m for m in model.modules() if writes_output(m)]


@contextmanager
def replaced_by_hooks(model: Any, layer_function: LayerFunction, causal: Sequence[bool]) -> Iterator[list[int]]:
    """Every hooked attention module of ``model`` returns its output projection of
    ``layer_function(layer, heads)`` inside the block; the hooks are removed on leaving it.

    Parameters
    ----------
    model : transformers model
        One whose attention modules :func:`hooked_attention` finds (MPNet); run on batches of one.
    layer_function : callable
        ``(layer, heads) -> Tensor (H, n, d)``; ``heads.bias`` is the layer's additive score bias.
    causal : sequence of bool
        Per layer, whether its attention is causal.

    Yields
    ------
    list of int
        One element: how many attention calls the block has replaced so far.
    """
    from attnspec.spectra.score_parts import output_from_context, read_score_parts

    calls = [0]

    def hook_for(layer: int) -> Callable[..., Any]:
        def hook(module: Any, args: Any, kwargs: Any, output: Any) -> Any:
            parts = read_score_parts(module, args, kwargs)
            if parts is None:
                return None  # a call without hidden states: left as the model computed it
            q, k, v, bias, scaling = parts  # (1, H, n, d) ×3, (1, H, n, n) or None, float
            heads = Heads(
                q[0].double(),
                k[0].double(),
                v[0].double(),
                scaling,
                None if bias is None else bias[0].double(),
                bool(causal[layer]),
            )
            context = layer_function(layer, heads).to(q.dtype).unsqueeze(0)  # (1, H, n, d)
            calls[0] += 1
            return (output_from_context(module, context), *output[1:])

        return hook

    handles = [m.register_forward_hook(hook_for(i), with_kwargs=True) for i, m in enumerate(hooked_attention(model))]
    try:
        yield calls
    finally:
        for h in handles:
            h.remove()


def replaced(model: Any, layer_function: LayerFunction, causal: Sequence[bool]) -> Any:
    """The replacement that reaches ``model``'s attention: by hooks where its modules are read
    that way (MPNet), else through the attention-function registry.

    Parameters
    ----------
    model : transformers model
    layer_function : callable
        ``(layer, heads) -> Tensor (H, n, d)``.
    causal : sequence of bool
        Per layer.

    Returns
    -------
    context manager
        :func:`replaced_by_hooks` or :func:`replaced_attention`.
    """
    if hooked_attention(model):
        return replaced_by_hooks(model, layer_function, causal)
    return replaced_attention(model, layer_function, causal)


def sentence_embedding(model: Any, ids: list[int], device: Any) -> torch.Tensor:
    """The mean over tokens of the last hidden state (sentence-transformers' mean pooling).

    Parameters
    ----------
    model : transformers model
    ids : list of int
        One document, all real tokens.
    device : torch device

    Returns
    -------
    Tensor, shape (hidden,), float64
    """
    with torch.no_grad():
        out = model(input_ids=torch.tensor([ids], device=device), output_hidden_states=True)
    return out.hidden_states[-1][0].double().mean(dim=0).cpu()  # (hidden,)


#: One document's tokens -> what the model's output is read as (a sentence embedding, a loss)
Readout = Callable[[list[int]], Any]


def replaced_readouts(
    encoder: Any, documents: Sequence[list[int]], methods: Sequence[tuple[str, int, LayerFunction]], readout: Readout
) -> list[tuple[str, int, int, Any, Any]] | None:
    """The model's readout of each document, exact and with every layer replaced by each method.

    Parameters
    ----------
    encoder : LoadedModel
    documents : sequence of list of int
        The held-out documents at one n.
    methods : sequence of (name, k, layer_function)
    readout : callable
        ``ids -> value``: the model run on one document and its output read (the sentence
        embedding of an encoder, the next-token loss of a causal model).

    Returns
    -------
    list of (name, k, position, exact, replaced) or None
        One entry per (method, document), ``position`` the document's place in ``documents``;
        None when no attention call was replaced (a model outside the registry whose attention
        modules :mod:`attnspec.spectra.score_parts` does not read), which leaves the end-to-end
        effect not measured rather than an unchanged model read as a perfect one.
    """
    from attnspec.spectra.approx.measure import layer_causal

    causal = layer_causal(encoder)
    exact = [readout(ids) for ids in documents]
    out = []
    for name, k, fn in methods:
        with replaced(encoder.model, fn, causal) as calls:
            for position, (ids, ref) in enumerate(zip(documents, exact)):
                got = readout(ids)
                if calls[0] == 0:
                    return None
                out.append((name, k, position, ref, got))
    return out


def embedding_cosines(
    encoder: Any,
    documents: Sequence[list[int]],
    index: Sequence[int],
    n: int,
    methods: Sequence[tuple[str, int, LayerFunction]],
) -> pd.DataFrame:
    """Cosine between the exact and the replaced model's sentence embeddings, per document.

    Parameters
    ----------
    encoder : LoadedModel
    documents : sequence of list of int
        The held-out documents at this n.
    index : sequence of int
        Their indices in the study's selection (the ``input`` column).
    n : int
    methods : sequence of (name, k, layer_function)

    Returns
    -------
    pandas.DataFrame
        :data:`COLUMNS`; empty when no attention call was replaced (see :func:`replaced_readouts`).
    """
    runs = replaced_readouts(
        encoder, documents, methods, lambda ids: sentence_embedding(encoder.model, ids, encoder.device)
    )
    if runs is None:
        return pd.DataFrame([], columns=COLUMNS)
    rows = [
        [n, k, name, index[i], float(torch.nn.functional.cosine_similarity(got, ref, dim=0))]
        for name, k, i, ref, got in runs
    ]
    return pd.DataFrame(rows, columns=COLUMNS)
