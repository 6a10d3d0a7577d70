"""Linformer with fitted projections: E, F ∈ R^{k×n} fitted on training documents.

Linformer (Wang et al. 2020) trains E and F with the model. Here they are fitted, with the
model frozen, to the layer's own attention: per (n, k, layer), Adam minimises the mean over
training documents and heads of ‖softmax(S Eᵀ)(F V) − P V‖_F / ‖P V‖_F
(S Eᵀ = s·Q (E K)ᵀ + B Eᵀ). ``linformer-fit`` shares E and F by the heads of a layer, as in
the paper; ``linformer-fit-per-head`` fits one pair per head.

Both start from segment means (E = F = the k × n matrix averaging k contiguous segments),
which is exact when keys and values are constant on segments and is the identity at k = n.
The state records the optimiser, its steps and learning rate, the seed and the training
error; errors are read on held-out documents only (:mod:`.measure`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from attnspec.spectra.approx.dense import exact_output
from attnspec.spectra.approx.methods import projected_attention
from attnspec.spectra.approx.protocol import Heads, approximation

#: Adam steps, learning rate and training documents per step of a fit when the caller gives no budget.
DEFAULT_STEPS = 150
DEFAULT_LR = 0.01
DEFAULT_BATCH = 2


def segment_matrix(k: int, n: int) -> torch.Tensor:
    """The k × n matrix whose row i averages the i-th of k contiguous segments of near-equal length.

    Parameters
    ----------
    k : int
        Segments, 1..n.
    n : int

    Returns
    -------
    Tensor, shape (k, n), float64
    """
    m = torch.zeros(k, n, dtype=torch.float64)
    for i, idx in enumerate(torch.tensor_split(torch.arange(n), k)):
        m[i, idx] = 1.0 / len(idx)
    return m


def fit_projections(
    train: Sequence[Heads], *, k: int, seed: int, budget: dict[str, Any] | None = None, per_head: bool = False
) -> dict[str, Any]:
    """E and F fitted by Adam on the training documents' heads of one (n, layer).

    Parameters
    ----------
    train : sequence of Heads
        One per training document, all of the same n, not causal.
    k : int
        The projection dimension, 1..n.
    seed : int
        Seed of the order in which training documents enter the steps (the start is deterministic).
    budget : dict, optional
        ``steps`` (Adam steps, default :data:`DEFAULT_STEPS`), ``lr`` (default :data:`DEFAULT_LR`,
        relative to the start's entries k/n) and ``batch`` (training documents per step, drawn
        by the seed, default :data:`DEFAULT_BATCH`).
    per_head : bool
        One E, F per head instead of one shared by the layer's heads.

    Returns
    -------
    dict
        ``e``, ``f`` (k, n) or (H, k, n) float64; ``optimizer``, ``steps``, ``lr``, ``seed``,
        ``init``, ``train_error`` (the mean relative error on the training documents at the end).
    """
    budget = dict(budget or {})
    steps, lr = int(budget.get("steps", DEFAULT_STEPS)), float(budget.get("lr", DEFAULT_LR))
    batch = min(int(budget.get("batch", DEFAULT_BATCH)), len(train))
    n, heads = train[0].n, int(train[0].q.shape[0])
    start = segment_matrix(min(k, n), n)  # (k, n)
    if per_head:
        start = start.expand(heads, -1, -1).clone()  # (H, k, n)
    # Adam moves every entry by about lr per step: the parameters are E and F in units of the
    # start's entries k/n (at most 1 on a segment), so lr is relative and fits every n alike
    unit = min(k, n) / n
    e_rel = (start / unit).float().requires_grad_(True)
    f_rel = (start / unit).float().requires_grad_(True)
    bias = None if train[0].bias is None else torch.stack([h.bias for h in train]).float()  # (D, H, n, n)
    docs = Heads(  # (D, H, n, d) each: the training documents as one batch
        torch.stack([h.q for h in train]).float(),
        torch.stack([h.k for h in train]).float(),
        torch.stack([h.v for h in train]).float(),
        train[0].scaling,
        bias,
    )
    target = exact_output(docs)  # (D, H, n, d)
    norm = target.flatten(-2).norm(dim=-1)  # (D, H)
    opt = torch.optim.Adam([e_rel, f_rel], lr=lr)

    def loss(idx: torch.Tensor) -> torch.Tensor:
        part = Heads(docs.q[idx], docs.k[idx], docs.v[idx], docs.scaling, None if bias is None else bias[idx])
        approx = projected_attention(part, unit * e_rel, unit * f_rel)  # (b, H, n, d)
        return ((approx - target[idx]).flatten(-2).norm(dim=-1) / norm[idx]).mean()

    # minibatches of `batch` documents, each pass over the training documents in a seeded order
    g = torch.Generator().manual_seed(int(seed) % 2**63)
    order = torch.cat([torch.randperm(len(train), generator=g) for _ in range(steps * batch // len(train) + 1)])
    with torch.enable_grad():
        for step in range(steps):
            opt.zero_grad()
            value = loss(order[step * batch : (step + 1) * batch])
            value.backward()
            opt.step()
    with torch.no_grad():
        final = float(loss(torch.arange(len(train))))
    return {
        "e": unit * e_rel.detach().double(),
        "f": unit * f_rel.detach().double(),
        "optimizer": "Adam",
        "steps": steps,
        "lr": lr,
        "lr_unit": "the start's entries, k/n",
        "batch": batch,
        "seed": int(seed),
        "init": "segment means",
        "train_error": final,
        "per_head": per_head,
    }


def _fit_shared(train: Sequence[Heads], *, k: int, seed: int, budget: dict[str, Any] | None = None) -> dict[str, Any]:
    return fit_projections(train, k=k, seed=seed, budget=budget, per_head=False)


def _fit_per_head(train: Sequence[Heads], *, k: int, seed: int, budget: dict[str, Any] | None = None) -> dict[str, Any]:
    return fit_projections(train, k=k, seed=seed, budget=budget, per_head=True)


def _apply_fitted(heads: Heads, state: dict[str, Any]) -> torch.Tensor:
    n = heads.n
    return projected_attention(heads, state["e"][..., :n], state["f"][..., :n])


@approximation(
    "linformer-fit", label="Linformer, E and F fitted (shared by a layer's heads)", fit=_fit_shared, bias=True
)
def linformer_fit(heads: Heads, *, k: int, state: Any, seed: int) -> torch.Tensor:
    """softmax(S Eᵀ)(F V) with the fitted E, F of this (n, k, layer).

    Parameters
    ----------
    heads : Heads
    k : int
        The projection dimension (the state's).
    state : dict
        :func:`fit_projections`'s result.
    seed : int
        Unused.

    Returns
    -------
    Tensor, shape (H, n, d)
    """
    return _apply_fitted(heads, state)


@approximation("linformer-fit-per-head", label="Linformer, E and F fitted per head", fit=_fit_per_head, bias=True)
def linformer_fit_per_head(heads: Heads, *, k: int, state: Any, seed: int) -> torch.Tensor:
    """softmax(S Eₕᵀ)(Fₕ V) with one fitted pair per head.

    Parameters
    ----------
    heads : Heads
    k : int
        The projection dimension (the state's).
    state : dict
        :func:`fit_projections`'s result (per head).
    seed : int
        Unused.

    Returns
    -------
    Tensor, shape (H, n, d)
    """
    return _apply_fitted(heads, state)
