"""The whole fixed-k measurement of a scaling study: errors, fits and the end-to-end effect.

:func:`measure_approximations` takes the study's documents cut to each n, splits them into
training and held-out documents once (the same split at every n, so slopes pair documents),
and returns the tables that :mod:`attnspec.spectra.scaling` saves beside the study:

* ``approx`` — one row per (n, k, method, held-out input, layer, head): the relative error;
* ``approx_fits`` — one row per fitted (n, k, method, layer): optimiser, budget, seed, training error;
* ``approx_end_to_end`` — encoders: one row per (n, k, method, held-out input): the
  sentence-embedding cosine of the model with every layer replaced to the exact model;
* ``approx_loss`` — causal models: one row per (n, k, method, held-out input): the change in
  the model's own next-token loss with every layer replaced (:mod:`.next_token`).

Their summaries and the rule are :mod:`.rule`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from attnspec.spectra.approx.end_to_end import LayerFunction, embedding_cosines
from attnspec.spectra.approx.measure import (
    ApproxPlan,
    capture_heads,
    layer_causal,
    measure_length,
    method_seed,
    split_documents,
)
from attnspec.spectra.approx.next_token import loss_changes
from attnspec.spectra.approx.protocol import Approximation, Heads
from attnspec.spectra.approx.registry import get


def _layer_function(method: Approximation, plan: ApproxPlan, n: int, k: int, states: dict) -> LayerFunction:
    def apply(layer: int, heads: Heads) -> Any:
        state = states.get((method.name, k, layer))
        seen = heads if (method.bias or heads.bias is None) else heads.content_only()  # as in the per-layer errors
        return method.apply(seen, k=k, state=state, seed=method_seed(plan.seed, method.name, n, k, layer))

    return apply


def end_to_end_methods(encoder: Any, plan: ApproxPlan, n: int, states: dict) -> list[tuple[str, int, LayerFunction]]:
    """The (name, k, layer function) of every method that runs on every layer at this n.

    Parameters
    ----------
    encoder : LoadedModel
    plan : ApproxPlan
    n : int
    states : dict
        Fitted states by (method, k, layer).

    Returns
    -------
    list of (str, int, callable)
    """
    causal = layer_causal(encoder)
    out = []
    for name in plan.all_methods():
        method = get(name)
        if any(causal) and not method.causal:
            continue
        for k in (k for k in plan.ks if k < n):
            if method.fit is not None and any((name, k, layer) not in states for layer in range(len(causal))):
                continue
            out.append((name, k, _layer_function(method, plan, n, k, states)))
    return out


def measure_approximations(
    encoder: Any, documents: dict[int, Sequence[list[int]]], plan: ApproxPlan, *, end_to_end: bool = True
) -> dict[str, pd.DataFrame]:
    """Every method's held-out errors at every n, its fits and its end-to-end effect (cosine or
    change in next-token loss).

    Parameters
    ----------
    encoder : LoadedModel
        Captured through the attention-function registry.
    documents : dict of int to sequence of list of int
        n → the study's documents cut to n tokens (the same documents, in the same order, at every n).
    plan : ApproxPlan
    end_to_end : bool
        Also run the model with every layer replaced.

    Returns
    -------
    dict of str to DataFrame
        ``approx``, ``approx_fits``, ``approx_end_to_end``, ``approx_loss`` (see the module
        docstring; the end-to-end table of the other kind of model is empty).
    """
    count = min(len(v) for v in documents.values())
    train_index, held_index = split_documents(count, plan.train, plan.held_out, plan.seed)
    errors, fits, cosines, losses = [], [], [], []
    decoder = any(layer_causal(encoder))
    for n, docs in documents.items():
        train = capture_heads(encoder, [docs[i] for i in train_index]) if _any_fit(plan) else []
        held = capture_heads(encoder, [docs[i] for i in held_index])
        e, f, states = measure_length(plan, n, train, held, held_index)
        del train, held
        errors.append(e)
        fits.append(f)
        if end_to_end:
            methods = end_to_end_methods(encoder, plan, n, states)
            held_docs = [docs[i] for i in held_index]
            if decoder:  # a decoder's output is its next-token distribution
                losses.append(loss_changes(encoder, held_docs, held_index, n, methods))
            else:
                cosines.append(embedding_cosines(encoder, held_docs, held_index, n, methods))
    return {
        "approx": pd.concat(errors, ignore_index=True),
        "approx_fits": pd.concat(fits, ignore_index=True),
        "approx_end_to_end": pd.concat(cosines, ignore_index=True) if cosines else pd.DataFrame(),
        "approx_loss": pd.concat(losses, ignore_index=True) if losses else pd.DataFrame(),
    }


def _any_fit(plan: ApproxPlan) -> bool:
    return any(get(name).fit is not None for name in plan.all_methods())
