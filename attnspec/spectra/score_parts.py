"""The parts of a layer's attention scores read from a hooked attention module's inputs.

A model whose attention goes through transformers' attention-function registry hands the
capture its Q, K, V directly. Modules captured through forward hooks (MPNet) do not; for
those whose layout is known this module recomputes them from what the module received:

MPNet (``MPNetSelfAttention``, Song et al. 2020) forms, per head,

    S = Q Kᵀ / √d + B + M,    P = softmax(S),

with Q, K, V the ``q``, ``k``, ``v`` projections of the hidden states, B the relative
position bias (H, n, n) that the encoder computes once and hands to every layer, and M the
additive padding mask. :func:`read_score_parts` returns (Q, K, V, B, 1/√d) from the hook's
arguments; recomputing the three projections costs three matrix products per layer, so the
capture does it only when asked (``scores=True``).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

#: Argument positions of MPNetSelfAttention.forward(hidden_states, attention_mask, position_bias).
_HIDDEN, _BIAS = 0, 2


def reads_score_parts(module: nn.Module) -> bool:
    """Whether :func:`read_score_parts` knows ``module``'s layout (``q``, ``k``, ``v``
    linear projections and a head size: MPNet's self-attention).

    Parameters
    ----------
    module : torch.nn.Module
        A module whose output carries P.

    Returns
    -------
    bool
    """
    return (
        all(isinstance(getattr(module, name, None), nn.Linear) for name in ("q", "k", "v"))
        and isinstance(getattr(module, "attention_head_size", None), int)
        and isinstance(getattr(module, "num_attention_heads", None), int)
    )


def _argument(args: tuple[Any, ...], kwargs: dict[str, Any], position: int, name: str) -> Any:
    if len(args) > position:
        return args[position]
    return kwargs.get(name)


def read_score_parts(
    module: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None, float] | None:
    """(Q, K, V, B, scaling) of one forward call of ``module``; None for an unknown layout.

    Parameters
    ----------
    module : torch.nn.Module
        The attention module (see :func:`reads_score_parts`).
    args : tuple
        Its positional arguments, as a forward hook receives them.
    kwargs : dict
        Its keyword arguments (a hook registered ``with_kwargs=True``).

    Returns
    -------
    tuple or None
        Q, K, V of shape (B, H, n, d); the additive bias B of shape (B, H, n, n), or None
        when the call passed none; the score scaling 1/√d.
    """
    if not reads_score_parts(module):
        return None
    hidden = _argument(args, kwargs, _HIDDEN, "hidden_states")  # (B, n, H·d)
    if not isinstance(hidden, torch.Tensor):
        return None
    d = int(module.attention_head_size)
    shape = (*hidden.shape[:-1], -1, d)  # (B, n, H, d)
    q, k, v = (getattr(module, name)(hidden).view(shape).transpose(1, 2) for name in ("q", "k", "v"))  # (B, H, n, d)
    bias = _argument(args, kwargs, _BIAS, "position_bias")
    bias = bias.expand(q.shape[0], q.shape[1], -1, -1) if isinstance(bias, torch.Tensor) else None  # (B, H, n, n)
    return q, k, v, bias, float(d) ** -0.5


def writes_output(module: nn.Module) -> bool:
    """Whether :func:`output_from_context` knows how ``module`` turns its attention context
    into its output (MPNet's self-attention: the ``o`` linear projection of the merged heads).

    Parameters
    ----------
    module : torch.nn.Module
        An attention module.

    Returns
    -------
    bool
    """
    return reads_score_parts(module) and isinstance(getattr(module, "o", None), nn.Linear)


def output_from_context(module: nn.Module, context: torch.Tensor) -> torch.Tensor:
    """The module's output from an attention context P V (or an approximation of it).

    Parameters
    ----------
    module : torch.nn.Module
        An attention module :func:`writes_output` knows.
    context : Tensor, shape (B, H, n, d)
        Per head, the attention output before the heads are merged.

    Returns
    -------
    Tensor, shape (B, n, H·d)
        ``o(merge(context))``, what MPNet's self-attention returns first.
    """
    b, h, n, d = context.shape
    merged = context.transpose(1, 2).reshape(b, n, h * d)  # (B, n, H·d)
    return module.o(merged)
