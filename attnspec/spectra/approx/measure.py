"""The fixed-k measurement: every approximation on held-out documents' real Q, K, V.

For each length n of a scaling study, the documents (the study's own, cut to n) are split by
seed into disjoint training and held-out sets (:func:`split_documents`). Per layer and k < n,
each fitted method is fitted on the training documents' heads; every method and reference
is then applied to each held-out document's heads, and its relative error
‖Ŷ − P V‖_F / ‖P V‖_F is recorded per (n, k, method, input, layer, head). A method that
cannot be causal is refused on causal layers (a row of :func:`refusals` says so); one that
cannot take the layer's additive score bias sees the content scores only (``scores`` column).

Q, K, V (and B where the capture provides one) come from the attention-function registry,
as in :mod:`attnspec.spectra.projection`; only real tokens are used.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import torch

from attnspec.errors import InputError, ModelLoadError
from attnspec.spectra.approx.dense import exact_output, relative_error
from attnspec.spectra.approx.protocol import Heads
from attnspec.spectra.approx.registry import REFERENCES, get

#: Columns of the per-(n, k, method, input, layer, head) table.
COLUMNS = ["n", "k", "method", "input", "layer", "head", "error", "scores"]
#: Columns of the fit records, one per (n, k, method, layer).
FIT_COLUMNS = [
    "n",
    "k",
    "method",
    "layer",
    "optimizer",
    "steps",
    "lr",
    "batch",
    "seed",
    "init",
    "train_error",
    "train_inputs",
]


@dataclass(frozen=True)
class ApproxPlan:
    """What the measurement runs.

    Attributes
    ----------
    methods : list of str
        Methods asked for (the references :data:`~.registry.REFERENCES` are always added).
    ks : list of int
        Projection dimensions / features / landmarks k; only k < n is measured.
    train, held_out : int
        Documents fitted on and documents measured on (disjoint, drawn by seed).
    seed : int
        Seed of the split, the random features and projections, and the fits.
    budget : dict
        The fits' budget (``steps``, ``lr``).
    """

    methods: list[str]
    ks: list[int]
    train: int = 8
    held_out: int = 8
    seed: int = 0
    budget: dict[str, Any] = field(default_factory=dict)

    def all_methods(self) -> list[str]:
        """The methods asked for, then the references not among them.

        Returns
        -------
        list of str
        """
        return list(self.methods) + [r for r in REFERENCES if r not in self.methods]

    def record(self) -> dict[str, Any]:
        """What meta.json records (a run with the same record is not measured again).

        Returns
        -------
        dict
        """
        return {
            "methods": self.all_methods(),
            "k": list(self.ks),
            "train": self.train,
            "held_out": self.held_out,
            "seed": self.seed,
            "budget": dict(self.budget),
        }


def split_documents(count: int, train: int, held_out: int, seed: int) -> tuple[list[int], list[int]]:
    """Disjoint training and held-out documents, drawn by seed from ``count``.

    Parameters
    ----------
    count : int
        Documents available.
    train, held_out : int
        How many of each (train >= 0, held_out >= 2, train + held_out <= count).
    seed : int

    Returns
    -------
    (train, held_out) : two sorted lists of document indices, disjoint.
    """
    from attnspec.numerics.stats import child_seed, numpy_rng

    if train < 0 or held_out < 2:
        raise InputError(
            f"the approximations need >= 0 training and >= 2 held-out documents, got {train} and {held_out}"
        )
    if train + held_out > count:
        raise InputError(
            f"the approximations need {train} training + {held_out} held-out documents, but the study has {count}; "
            "raise --num-inputs or lower the split"
        )
    order = numpy_rng(child_seed(seed, "approx", "split")).permutation(count)
    return sorted(int(i) for i in order[:train]), sorted(int(i) for i in order[train : train + held_out])


def capture_heads(encoder: Any, token_lists: Sequence[list[int]]) -> list[list[Heads]]:
    """Each document's heads, per layer: ``result[doc][layer]`` (float32 on the CPU).

    Parameters
    ----------
    encoder : LoadedModel
        A model whose attention goes through the attention-function registry.
    token_lists : sequence of list of int
        The documents, each run alone (no padding).

    Returns
    -------
    list of list of Heads
    """
    from attnspec.spectra.capture import capture_attention

    causal = layer_causal(encoder)
    docs: list[list[Heads]] = []

    def sink(la: Any) -> None:
        if la.query is None:
            raise ModelLoadError(
                "this model's attention is captured through hooks, which do not see Q, K, V; "
                "the approximations need the attention-function registry"
            )
        q = la.query[0].float().cpu()  # (H, n, d)
        rep = q.shape[0] // la.key.shape[1]
        k = la.key[0].float().cpu().repeat_interleave(rep, dim=0)  # (H, n, d)
        v = la.value[0].float().cpu().repeat_interleave(rep, dim=0)  # (H, n, d)
        bias = getattr(la, "bias", None)
        bias = None if bias is None else bias[0].float().cpu()  # (H, n, n)
        scaling = la.scaling if la.scaling is not None else q.shape[-1] ** -0.5
        docs[-1].append(Heads(q, k, v, float(scaling), bias, causal[la.layer]))

    with torch.no_grad(), capture_attention(encoder.model, sink, scores=True) as cap:
        for ids in token_lists:
            docs.append([])
            cap.forward(torch.tensor([ids], device=encoder.device))
    return docs


def layer_causal(encoder: Any) -> list[bool]:
    """Per layer, whether its attention is causal.

    Parameters
    ----------
    encoder : LoadedModel

    Returns
    -------
    list of bool
    """
    return list(encoder.layer_causal) or [bool(encoder.causal)] * encoder.num_layers


def _double(h: Heads) -> Heads:
    bias = None if h.bias is None else h.bias.double()
    return Heads(h.q.double(), h.k.double(), h.v.double(), h.scaling, bias, h.causal)


def method_seed(seed: int, method: str, n: int, k: int, layer: int) -> int:
    """The seed of one method's random draws at (n, k, layer), shared by every document.

    Parameters
    ----------
    seed : int
    method : str
    n, k, layer : int

    Returns
    -------
    int
    """
    from attnspec.numerics.stats import child_seed

    return child_seed(seed, "approx", method, n, k, layer)


def fit_states(plan: ApproxPlan, n: int, train: list[list[Heads]], layers: int) -> tuple[dict[tuple, Any], list[dict]]:
    """Every fitted method's state per (method, k, layer) at this n, and the fit records.

    Parameters
    ----------
    plan : ApproxPlan
    n : int
    train : list of list of Heads
        The training documents' heads, ``train[doc][layer]``.
    layers : int

    Returns
    -------
    (states, records)
    """
    states: dict[tuple, Any] = {}
    records = []
    for name in plan.all_methods():
        method = get(name)
        if method.fit is None:
            continue
        for layer in range(layers):
            heads = [_double(doc[layer]) for doc in train]
            if not heads or method.refusal(heads[0]) is not None:
                continue
            heads = heads if method.bias else [h.content_only() for h in heads]
            for k in (k for k in plan.ks if k < n):
                seed = method_seed(plan.seed, name, n, k, layer)
                state = method.fit(heads, k=k, seed=seed, budget=plan.budget)
                states[(name, k, layer)] = state
                info = {c: state.get(c) for c in FIT_COLUMNS if isinstance(state, dict) and c in state}
                records.append({"n": n, "k": k, "method": name, "layer": layer, **info, "train_inputs": len(heads)})
    return states, records


def measure_length(
    plan: ApproxPlan, n: int, train: list[list[Heads]], held: list[list[Heads]], held_index: Sequence[int]
) -> tuple[pd.DataFrame, pd.DataFrame, dict[tuple, Any]]:
    """Errors of every method at one n on the held-out documents.

    Parameters
    ----------
    plan : ApproxPlan
    n : int
        The length (documents hold n real tokens).
    train, held : list of list of Heads
        Training and held-out documents' heads, ``[doc][layer]``.
    held_index : sequence of int
        The held-out documents' indices in the study's selection (the ``input`` column).

    Returns
    -------
    (errors, fits, states) : the error rows (:data:`COLUMNS`), the fit records
    (:data:`FIT_COLUMNS`) and the fitted states by (method, k, layer).
    """
    layers = len(held[0])
    states, fits = fit_states(plan, n, train, layers)
    rows = []
    for layer in range(layers):
        for doc, idx in zip(held, held_index):
            heads = _double(doc[layer])
            exact = exact_output(heads)  # (H, n, d)
            for name in plan.all_methods():
                method = get(name)
                if method.refusal(heads) is not None:
                    continue
                seen = heads if (method.bias or heads.bias is None) else heads.content_only()
                label = "no bias" if heads.bias is None else ("with bias" if method.bias else "content only")
                for k in (k for k in plan.ks if k < n):
                    if method.fit is not None and (name, k, layer) not in states:
                        continue
                    out = method.apply(
                        seen, k=k, state=states.get((name, k, layer)), seed=method_seed(plan.seed, name, n, k, layer)
                    )
                    err = relative_error(out, exact)  # (H,)
                    for h, e in enumerate(err.tolist()):
                        rows.append([n, k, name, idx, layer, h, e, label])
    return pd.DataFrame(rows, columns=COLUMNS), pd.DataFrame(fits, columns=FIT_COLUMNS), states


def refusals(plan: ApproxPlan, causal: Sequence[bool]) -> dict[str, str]:
    """Methods refused on some layer, with why (tables say so).

    Parameters
    ----------
    plan : ApproxPlan
    causal : sequence of bool
        Per layer.

    Returns
    -------
    dict of str to str
    """
    out = {}
    for name in plan.all_methods():
        method = get(name)
        if any(causal) and not method.causal:
            out[name] = f"{name} has no causal form: not applied to the {sum(causal)} causal layers"
    return out
