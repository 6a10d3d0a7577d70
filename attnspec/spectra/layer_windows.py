"""Which positions each layer's attention may see: the sliding window per layer, from the config.

Decoders such as Mistral, Qwen2, Gemma-2/3 and gpt-oss restrict some or all layers to a
causal *sliding window* of ``w`` positions: row i attends to the positions j with
i − w < j <= i (transformers' ``sliding_window_overlay``: ``kv_idx > q_idx - sliding_window``),
so ℓ_i = min(i + 1, w) positions when nothing is padded. The row entropy divides by
log ℓ_i (:func:`attnspec.spectra.metrics.row_entropy`), so it needs the window of every layer.

Where the window comes from (a config dict, as ``LoadedModel.config`` holds it):

* ``layer_types`` (Qwen2, Gemma-2/3, gpt-oss, Ministral, ... in transformers >= 4.53): one
  entry per layer, ``"full_attention"`` (no window) or ``"sliding_attention"`` (window
  ``sliding_window``). Any other type (chunked attention, linear attention, ...) is refused:
  its allowed positions are not a causal window.
* otherwise an integer ``sliding_window`` (Mistral, Mixtral, Phi-3, Starcoder2) applies to
  every layer, unless the config turns it off (``use_sliding_window: false``).

The run checks on its first batch that P is exactly zero where the window forbids (a config
that declares a window its model does not apply fails there, in one line).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from attnspec.errors import InputError

FULL = "full_attention"
SLIDING = "sliding_attention"


def layer_windows(config: Mapping[str, Any], num_layers: int) -> list[int | None]:
    """The causal sliding window of each layer (None: the layer sees every earlier position).

    Parameters
    ----------
    config : mapping
        The model's config as a dict (``LoadedModel.config``; ``config.to_dict()``).
    num_layers : int
        Number of captured self-attention layers.

    Returns
    -------
    list of int or None
        One entry per layer: the window w, or None for full attention.

    Raises
    ------
    InputError
        For a layer type that is neither full nor sliding attention, a ``layer_types`` of
        the wrong length, or a sliding layer without a positive ``sliding_window``.
    """
    window = config.get("sliding_window")
    types = config.get("layer_types")
    model_type = config.get("model_type") or "this model"
    if types is not None:
        types = list(types)
        if len(types) != num_layers:
            raise InputError(
                f"config of {model_type} lists {len(types)} layer_types for {num_layers} attention "
                "layers; cannot tell each layer's window"
            )
        bad = sorted({t for t in types if t not in (FULL, SLIDING)})
        if bad:
            raise InputError(
                f"{model_type} has layers of type {', '.join(bad)}; attnspec supports {FULL} and {SLIDING} layers only"
            )
        if SLIDING in types and not (isinstance(window, int) and window > 0):
            raise InputError(
                f"{model_type} has sliding_attention layers but sliding_window={window!r}; expected a positive integer"
            )
        return [window if t == SLIDING else None for t in types]
    if config.get("use_sliding_window") is False or window is None:
        return [None] * num_layers
    if not (isinstance(window, int) and window > 0):
        raise InputError(f"{model_type} has sliding_window={window!r}; expected a positive integer or none")
    return [window] * num_layers


def check_windows(windows: Sequence[int | None], *, causal: bool, model: str) -> None:
    """Refuse windows on bidirectional attention (ModernBERT's local layers): row entropy
    and the window check know causal windows only.

    Parameters
    ----------
    windows : sequence of int or None
        The layers' windows (:func:`layer_windows`).
    causal : bool
        Whether the model's attention is causal.
    model : str
        The model's name, quoted by the message.

    Raises
    ------
    InputError
        A window on bidirectional attention.
    """
    if not causal and any(w is not None for w in windows):
        raise InputError(
            f"{model} has bidirectional sliding-window layers; attnspec supports sliding windows "
            "on causal (decoder) attention only"
        )


def window_violation(probs: Any, mask: Any, window: int) -> float | None:
    """Largest |P| at a position the window forbids, read on one column per input (cheap).

    Padding is on one side only, so the first real position f of input b is seen by rows
    f..f+w−1 alone; rows >= f + w must hold 0 there.

    Parameters
    ----------
    probs : torch.Tensor, shape (B, H, n, n)
        One layer's P.
    mask : torch.Tensor of bool, shape (B, n)
        True on real tokens.
    window : int
        The layer's window w.

    Returns
    -------
    float or None
        The largest such |P| (0.0 when the window is applied); None when no input is long
        enough to tell.
    """
    import torch

    worst: float | None = None
    n = probs.shape[-1]
    for b in range(probs.shape[0]):
        real = torch.nonzero(mask[b]).flatten()
        if real.numel() == 0:
            continue
        f = int(real[0])
        if f + window < n:
            worst = max(worst or 0.0, float(probs[b, :, f + window :, f].abs().max()))
    return worst
