"""Kinds of attention, and which encoder-decoders can be captured by kind.

Encoder–decoders (BART, T5, Marian, mBART, ...) go through the registry path of
:mod:`attnspec.spectra.capture` only. Their layers are numbered in the order they run
(encoder self-attention, then per decoder block its causal self-attention and its
cross-attention) and each carries its kind (:data:`KINDS`), told apart by the shape of P on
a probe whose decoder input (4 tokens) is shorter than its encoder input (6). In a run the
decoder reads the same window, teacher-forced (``decoder_start_token_id`` + the input shifted
right by one), so every P is n × n with the same real positions. T5's encoder and decoder
stacks hold their own copies of the config; the capture switches (and restores) those too.
An encoder–decoder that cannot be captured by kind is refused in one line
(:func:`refuse_encoder_decoder`) before any forward pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from attnspec.errors import ModelLoadError

#: Kinds of attention of an encoder-decoder, recorded per layer.
ENCODER_SELF, DECODER_SELF, CROSS = "encoder_self", "decoder_self_causal", "cross"


KINDS: tuple[str, ...] = (ENCODER_SELF, DECODER_SELF, CROSS)


def is_encoder_decoder(config: Any) -> bool:
    """Whether a model's config (a transformers config or its dict) is an encoder-decoder's.

    Parameters
    ----------
    config : transformers.PretrainedConfig, dict or None

    Returns
    -------
    bool
    """
    get = config.get if isinstance(config, dict) else (lambda k, d=None: getattr(config, k, d))
    return config is not None and bool(get("is_encoder_decoder", False))


def refuse_encoder_decoder(config: Any, what: str, reason: str) -> None:
    """One line, before any more work, for an encoder-decoder that cannot be captured by kind.

    Parameters
    ----------
    config : transformers.PretrainedConfig or dict
        The model's config (its model type is named).
    what : str
        How the model was given (``"--model NAME"``).
    reason : str
        Why it cannot be captured.

    Raises
    ------
    ModelLoadError
        Always.
    """
    get = config.get if isinstance(config, dict) else (lambda k, d=None: getattr(config, k, d))
    if is_encoder_decoder(config):
        family = get("model_type", None) or what
        raise ModelLoadError(
            f"{what} is an encoder-decoder ({family}) that attnspec cannot capture by kind: {reason}; "
            "supported: encoder-only models, decoder-only language models, and encoder-decoders "
            "whose attention goes through transformers' attention-function registry (BART, T5, "
            "Marian, mBART, ...) with a decoder_start_token_id"
        )


@dataclass(frozen=True)
class CaptureInfo:
    """What a probe forward learns about a model's attention (see :func:`describe_attention`)."""

    path: str  # "registry" or "hooks"
    causal: bool  # every layer's P has an exactly zero strict upper triangle
    num_layers: int
    num_heads: int  # query heads per layer (P is per query head under grouped-query attention)
    output_attentions: bool  # hooks path: the modules return P only under output_attentions
    kinds: tuple[str, ...] = ()  # per layer: "self", or one of KINDS for an encoder-decoder
    layer_causal: tuple[bool, ...] = ()  # per layer: P lower-triangular on the probe

    @property
    def family(self) -> str:
        """``"decoder"`` for causal P, ``"encoder-decoder"`` with cross-attention, ``"encoder"`` otherwise."""
        if CROSS in self.kinds:
            return "encoder-decoder"
        return "decoder" if self.causal else "encoder"
