"""Model families whose attention matrices attnspec does not capture, refused by name.

A family is listed here when the capture would run but measure something else than one P
per layer and head: the refusal comes in one line when the model is wrapped, before any
forward pass, instead of an internal message (or a wrong table) in the middle of a run.

* ALBERT runs one shared attention module at every depth: a capture per attention module
  sees one layer where the model has ``num_hidden_layers``.
* ModernBERT's local layers attend within a *bidirectional* sliding window; windows are
  handled on causal attention only (:mod:`attnspec.spectra.layer_windows`). A ModernBERT
  whose layers are all global would be captured like any encoder.
"""

from __future__ import annotations

from typing import Any

from attnspec.errors import ModelLoadError


def refuse_unsupported_family(config: Any, name: str) -> None:
    """Raise :class:`ModelLoadError` naming the family when ``config`` is one of the families above.

    Parameters
    ----------
    config : transformers config
        The model's config (``model.config``).
    name : str
        The model as the user named it, for the message.
    """
    kind = getattr(config, "model_type", None)
    if kind == "albert":
        raise ModelLoadError(
            f"model {name!r} is ALBERT, which shares one attention layer across all "
            f"{getattr(config, 'num_hidden_layers', '?')} depths; attnspec captures P once per "
            "attention module and does not support shared layers"
        )
    if kind == "modernbert":
        types = list(getattr(config, "layer_types", None) or [])
        every = getattr(config, "global_attn_every_n_layers", None)
        if "sliding_attention" in types or (not types and every != 1):
            raise ModelLoadError(
                f"model {name!r} is ModernBERT, whose local layers attend within a bidirectional "
                "sliding window; attnspec supports sliding windows on causal (decoder) attention "
                "only"
            )
