"""Capture the attention probability matrices P of a transformer, one layer at a time.

Each layer's P is handed to a *sink* as soon as the layer has formed it, so the caller can
reduce it (e.g. to singular values) before the next layer runs: no more than one layer's P
is alive at a time, on every path below. Nothing here looks at class names.

Two ways to get P, tried in this order by :func:`capture_attention`:

1. **The attention-function registry** (transformers >= 4.48: BERT, RoBERTa, ELECTRA,
   DistilBERT, GPT-2, GPT-NeoX, OPT, Llama, Qwen2, Mistral, Gemma, ...). These models look
   their attention function up in ``transformers.modeling_utils.ALL_ATTENTION_FUNCTIONS``
   under ``config._attn_implementation`` at every forward. The capture registers a function
   under a private name, points the config at it, and registers the eager mask builder
   under the same name (so padding, causal and sliding-window masks are built exactly as
   for ``"eager"``). The function calls the model's own ``eager_attention_forward`` (the
   one defined next to the attention class: grouped-query ``repeat_kv``, soft-capping,
   sliding windows and scalings included), passes P to the sink and returns ``(output,
   None)``, so the model's outputs are those of eager attention and P is dropped at once.
   The model may have been loaded with ``sdpa``: it runs eager attention only inside the
   context.
2. **Forward hooks**, for modules that do not use the registry (MPNet, DeBERTa-v2, ...).
   A probe forward with a hook on every submodule finds the modules whose output carries a
   row-stochastic (B, H, n, n) tensor (innermost first); older-style modules return it only
   under ``output_attentions=True``, which the capture then passes. The hook hands P to the
   sink and replaces it by ``None`` in the module's output, so transformers does not keep
   every layer's P until the forward pass ends.

Encoder–decoders go through the registry path only, each layer with its kind
(:mod:`attnspec.spectra.kinds`).

Everything installed (hooks, registry entries, the config's implementation name) is
removed in a ``finally`` when the context exits, also when the forward pass, the sink or
the body raises (the TransformerLens ``hooks()`` pattern).

Padding: P of input b is restricted to its real tokens (attention_mask == 1). In the
batched tensor handed to the sink, rows and columns of padding positions are set to zero,
so that the zero-extended matrix has exactly the singular values of the real block plus
zeros; :meth:`LayerAttention.real` returns the real blocks themselves. Decoders (causal P)
may be padded on either side: with left padding the capture passes position ids counted
from the first real token, as ``generate`` does, so the real block equals the P of the
input run alone. Encoders are padded on the right.
"""

from __future__ import annotations

import inspect
import itertools
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from attnspec.errors import InputError, ModelLoadError
from attnspec.spectra.kinds import (
    CROSS,
    DECODER_SELF,
    ENCODER_SELF,
    CaptureInfo,
    is_encoder_decoder,
    refuse_encoder_decoder,
)
from attnspec.spectra.score_parts import read_score_parts

PATHS: tuple[str, ...] = ("registry", "hooks")
_NAME_PREFIX = "attnspec_capture_"
_counter = itertools.count()


@dataclass
class LayerAttention:
    """One layer's attention probabilities for one batch.

    Attributes
    ----------
    layer : int
        0-based layer index.
    probs : Tensor, shape (B, H, n, n)
        Row-stochastic P for each input and (query) head; rows and columns of padding
        positions are zero. Causal models give a lower-triangular P.
    mask : Tensor of bool, shape (B, n)
        True on real tokens.
    """

    layer: int
    probs: torch.Tensor
    mask: torch.Tensor
    kind: str = "self"  # "self" (encoder-only / decoder-only), or KINDS of an encoder-decoder
    #: What the attention function received (registry path; through hooks only with
    #: ``scores=True`` and a module :mod:`attnspec.spectra.score_parts` reads, else None):
    #: query (B, H, n, d), key and value (B, H_kv, n, d) as the layer used them (rotary
    #: embeddings applied), and the score scaling (1/√d unless the model sets its own).
    query: torch.Tensor | None = None
    key: torch.Tensor | None = None
    value: torch.Tensor | None = None
    scaling: float | None = None
    #: The additive score bias (B, H, n, n) the layer adds before the padding mask, so that
    #: P = softmax(scaling·Q Kᵀ + bias + mask): MPNet's relative position bias; None when none.
    bias: torch.Tensor | None = None

    @property
    def lengths(self) -> torch.Tensor:
        return self.mask.sum(dim=1)

    def real(self, b: int) -> torch.Tensor:
        """P of input ``b`` restricted to its real tokens.

        Parameters
        ----------
        b : int
            The input's index in the batch, 0-based.

        Returns
        -------
        torch.Tensor, shape (H, l_b, l_b)
            l_b is the input's number of real tokens.
        """
        keep = self.mask[b]
        return self.probs[b][:, keep][:, :, keep]


Sink = Callable[[LayerAttention], None]


class _NotEager(Exception):
    """A module called the registered function but no eager attention function was found for it."""


def _eager_function(module: nn.Module) -> Callable[..., Any] | None:
    """The ``eager_attention_forward`` of the file that defines ``module``'s class (or a base class)."""
    for cls in type(module).__mro__:
        fn = getattr(sys.modules.get(cls.__module__), "eager_attention_forward", None)
        if callable(fn):
            return fn
    return None


def _is_probability_tensor(t: Any) -> bool:
    """A (B, H, n, n) floating tensor whose rows are probability vectors (checked on probes only)."""
    if not (isinstance(t, torch.Tensor) and t.dim() == 4 and t.shape[-1] == t.shape[-2] and t.is_floating_point()):
        return False
    rows = t.detach().float().sum(-1)
    atol = 1e-3 if t.dtype in (torch.float32, torch.float64) else 3e-2  # bfloat16/float16 rows are coarser
    return bool((t >= 0).all()) and bool(torch.allclose(rows, torch.ones_like(rows), atol=atol))


def _find_probs(output: Any) -> int | None:
    """Index of the (B, H, n, n) tensor among a module's tuple outputs, if any."""
    if isinstance(output, (tuple, list)):
        for i, t in enumerate(output):
            if isinstance(t, torch.Tensor) and t.dim() == 4 and t.shape[-1] == t.shape[-2]:
                return i
    return None


def _configs(config: Any) -> Iterator[Any]:
    """``config`` and its sub-configs, recursively (text_config, vision_config, ...)."""
    yield config
    for key in getattr(config, "sub_configs", None) or {}:
        sub = getattr(config, key, None)
        if sub is not None and sub is not config:
            yield from _configs(sub)


#: Probe lengths of an encoder-decoder: different, so that the shape of P tells its kind.
_PROBE_ENC, _PROBE_DEC = 6, 4


def _accepts(model: nn.Module, name: str) -> bool:
    try:
        params = inspect.signature(model.forward).parameters
    except (TypeError, ValueError):  # pragma: no cover - builtin forward
        return False
    return name in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


class AttentionCapture:
    """Capture state for one model; use through :func:`capture_attention`.

    Parameters
    ----------
    model : torch.nn.Module
        A transformers model.
    sink : callable
        Called with one :class:`LayerAttention` per captured layer during :meth:`forward`.
    layers : sequence of int, optional
        0-based layers to capture (default: all).
    path : {"auto", "registry", "hooks"}
        How P is obtained; ``auto`` tries the registry, then hooks.
    scores : bool
        Through hooks, also recompute Q, K, V and read the additive bias from the attention
        module's inputs (:mod:`attnspec.spectra.score_parts`); the registry path always
        passes Q, K, V.

    Attributes
    ----------
    path : {"registry", "hooks"}
        How P is obtained (set by :meth:`setup`).
    causal : bool
        True when every layer's P has an exactly zero strict upper triangle on the probe
        (decoder language models); False for encoders.
    num_layers, num_heads : int
        Number of self-attention layers found, and of (query) heads per layer.
    tried : list of str
        What was tried, for error messages.
    """

    def __init__(
        self,
        model: nn.Module,
        sink: Sink,
        layers: Sequence[int] | None = None,
        path: str = "auto",
        scores: bool = False,
    ) -> None:
        if not isinstance(model, nn.Module):
            raise InputError(f"model must be a torch.nn.Module (a transformers model), got {type(model).__name__}")
        if path not in ("auto", *PATHS):
            raise InputError(f"path must be one of auto, {', '.join(PATHS)}, got {path!r}")
        self.allowed = PATHS if path == "auto" else (path,)
        self.model = model
        self.sink = sink
        self.scores = bool(scores)
        self.requested_layers = None if layers is None else sorted(set(int(i) for i in layers))
        self.layers: list[int] = []
        self.path: str | None = None
        self.causal = False
        self.encoder_decoder = False
        self.kinds: list[str] = []  # per layer: "self", or one of KINDS for an encoder-decoder
        self.layer_causal: list[bool] = []  # per layer: P lower-triangular on the probe
        self.num_layers = 0
        self.num_heads = 0
        self.tried: list[str] = []
        self.needs_output_attentions = False
        self._probing = False
        self._probed: dict[int, torch.Tensor] = {}
        self._wanted: set[int] = set()
        self._mask: torch.Tensor | None = None
        self._seen: set[int] = set()
        # registry path
        self._name: str | None = None
        self._saved_impl: list[tuple[Any, Any]] = []
        self._impl_switched = False
        self._layer_of: dict[int, int] = {}  # id(attention module) -> layer
        self._discover: list[nn.Module] | None = None  # filled during the registry probe
        # hooks path
        self.handles: list[torch.utils.hooks.RemovableHandle] = []
        self.modules: list[nn.Module] = []

    # -- registry path -----------------------------------------------------------------
    def _attention_function(
        self,
        module: nn.Module,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        attention_mask: torch.Tensor | None,
        *args: Any,
        **kwargs: Any,
    ) -> tuple[torch.Tensor, None]:
        """Eager attention of ``module``'s own file; P goes to the sink, not back to the model."""
        eager = _eager_function(module)
        if eager is None:
            raise _NotEager(type(module).__name__)
        out, probs = eager(module, query, key, value, attention_mask, *args, **kwargs)  # probs: (B, H, n_q, n_k)
        if self._discover is not None:
            if id(module) not in self._layer_of:
                self._layer_of[id(module)] = len(self._discover)
                self._discover.append(module)
        scaling = kwargs.get("scaling", args[0] if args and isinstance(args[0], float) else None)
        self._emit(self._layer_of.get(id(module)), probs, (query, key, value, scaling))
        return out, None

    def _register(self) -> None:
        from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, AttentionMaskInterface
        from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

        config = self.model.config
        self._name = f"{_NAME_PREFIX}{next(_counter)}"
        ALL_ATTENTION_FUNCTIONS[self._name] = self._attention_function
        # transformers checks the class-level mapping of mask builders (masking_utils
        # _preprocess_mask_arguments); an unknown name would silently build no mask at all.
        AttentionMaskInterface._global_mapping[self._name] = ALL_MASK_ATTENTION_FUNCTIONS["eager"]
        # Every (sub-)config's own value, restored one by one: a multimodal model may run
        # different implementations in its parts, which one assignment would flatten.
        self._saved_impl = [(c, c._attn_implementation) for c in _configs(config)]
        config._attn_implementation = self._name  # the setter also updates sub-configs
        # Submodules holding their own copy of the config (T5's encoder and decoder stacks
        # deep-copy it) look the function up in that copy: switch those too.
        seen = {id(c) for c, _ in self._saved_impl}
        for m in self.model.modules():
            own = getattr(m, "config", None)
            if own is not None and id(own) not in seen and hasattr(own, "_attn_implementation"):
                for c in _configs(own):
                    if id(c) not in seen:
                        seen.add(id(c))
                        self._saved_impl.append((c, c._attn_implementation))
                own._attn_implementation = self._name
        self._impl_switched = True

    def _unregister(self) -> None:
        if self._impl_switched:
            for c, impl in self._saved_impl:
                if hasattr(c, "_attn_implementation_internal"):
                    c._attn_implementation_internal = impl  # this config only, no propagation
                else:  # pragma: no cover - configs without the internal attribute
                    c._attn_implementation = impl
            self._impl_switched = False
        if self._name is not None:
            from transformers.masking_utils import AttentionMaskInterface
            from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

            if self._name in ALL_ATTENTION_FUNCTIONS._local_mapping:
                del ALL_ATTENTION_FUNCTIONS[self._name]
            AttentionMaskInterface._global_mapping.pop(self._name, None)
            self._name = None

    # -- hooks path --------------------------------------------------------------------
    def _make_hook(self, layer: int) -> Callable[..., Any]:
        def hook(module: nn.Module, args: Any, kwargs: Any, output: Any) -> Any:
            i = _find_probs(output)
            if i is None:
                return None
            parts = read_score_parts(module, args, kwargs) if self.scores and not self._probing else None
            self._emit(layer, output[i], parts)
            # Drop P from the outputs: transformers would otherwise keep it (older-style
            # encoders collect every layer's P under output_attentions until the end).
            return (
                type(output)((*output[:i], None, *output[i + 1 :]))
                if isinstance(output, tuple)
                else [*output[:i], None, *output[i + 1 :]]
            )

        return hook

    def _discover_by_hooks(self, output_attentions: bool) -> list[nn.Module]:
        """Modules whose output carries a row-stochastic (B, H, n, n) tensor, innermost first."""
        first: dict[int, nn.Module] = {}
        keep: list[torch.Tensor] = []  # hold the tensors so that their ids stay unique

        def spy(module: nn.Module, args: Any, output: Any) -> None:
            items = output if isinstance(output, (tuple, list)) else ()
            for t in items:
                if _is_probability_tensor(t) and id(t) not in first:
                    first[id(t)] = module
                    keep.append(t)

        handles = [m.register_forward_hook(spy) for m in self.model.modules() if m is not self.model]
        try:
            self.needs_output_attentions = output_attentions
            self._run_probe()
        finally:
            for h in handles:
                h.remove()
        found: list[nn.Module] = []
        for m in first.values():
            if all(m is not f for f in found):
                found.append(m)
        return found

    # -- shared ------------------------------------------------------------------------
    def _emit(
        self,
        layer: int | None,
        probs: torch.Tensor,
        qkv: tuple[Any, ...] | None = None,
    ) -> None:
        """Hand one layer's P (and, when known, what its scores were made of) to the sink;
        ``qkv`` is (Q, K, V, scaling) or (Q, K, V, bias, scaling)."""
        if layer is None or self._mask is None or (not self._probing and layer not in self._wanted):
            return  # the probe sees every layer; a run only the requested ones
        if probs.dim() != 4 or (probs.shape[-1] != probs.shape[-2] and not self.encoder_decoder):
            return  # cross-attention (n_q != n_k) of a model taken for encoder- or decoder-only
        self._seen.add(layer)
        mask = self._mask
        if not bool(mask.all()):
            # zero padding rows and columns: (B, 1, n, 1) & (B, 1, 1, n) -> (B, 1, n, n). An
            # encoder-decoder's decoder input is the encoder input shifted right (teacher
            # forcing, see forward), so its rows have the same real positions.
            keep = mask[:, None, :, None] & mask[:, None, None, :]
            probs = probs * keep
        kind = self.kinds[layer] if layer < len(self.kinds) else "self"
        extra = {}
        if qkv is not None:
            q, k, v, *bias, scaling = qkv
            extra = {
                "query": q.detach(),
                "key": k.detach(),
                "value": v.detach(),
                "scaling": float(scaling) if scaling is not None else float(q.shape[-1]) ** -0.5,
                "bias": bias[0].detach() if bias and bias[0] is not None else None,
            }
        self.sink(LayerAttention(layer=layer, probs=probs.detach(), mask=mask, kind=kind, **extra))

    def _decoder_inputs(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> dict[str, torch.Tensor]:
        """Teacher forcing on the same window: the decoder reads the encoder input shifted right
        by one, behind ``decoder_start_token_id`` (B, n): position t of the decoder predicts
        token t of the input. Right padding shifts into right padding, so the decoder's real
        positions are the encoder's (its mask is the same). On the probe the decoder input is
        shorter (_PROBE_DEC) than the encoder input, so that P's shape tells its kind."""
        config = self.model.config
        start = int(config.decoder_start_token_id)
        pad = getattr(config, "pad_token_id", None)
        dec = torch.cat([torch.full_like(input_ids[:, :1], start), input_ids[:, :-1]], dim=1)  # (B, n)
        out: dict[str, torch.Tensor] = {}
        if self._probing:
            dec = dec[:, :_PROBE_DEC]
        elif not bool(attention_mask.bool().all()):
            if pad is not None:
                dec = dec.masked_fill(~attention_mask.bool(), int(pad))
            out["decoder_attention_mask"] = attention_mask
        out["decoder_input_ids"] = dec
        return out

    def _probe_ids(self) -> torch.Tensor:
        config = getattr(self.model, "config", None)
        vocab = int(getattr(config, "vocab_size", 8) or 8)
        special = {getattr(config, k, None) for k in ("pad_token_id", "bos_token_id", "eos_token_id")}
        tokens = [t for t in range(min(5, vocab - 1), vocab) if t not in special][:6]
        try:
            device = next(self.model.parameters()).device
        except StopIteration:
            device = torch.device("cpu")
        ids = torch.tensor(tokens * 2, dtype=torch.long, device=device)[:6]
        return ids[None, :]  # (1, 6)

    def _run_probe(self) -> None:
        self._probed = {}
        sink, self.sink = self.sink, (lambda la: self._probed.__setitem__(la.layer, la.probs))
        self._probing = True
        try:
            self.forward(self._probe_ids(), _check=False)
        finally:
            self.sink = sink
            self._probing = False

    def setup(self) -> None:
        """Find how to capture P (registry first, then hooks) with a 6-token probe forward."""
        model_name = type(self.model).__name__
        config = getattr(self.model, "config", None)
        self.encoder_decoder = is_encoder_decoder(config)
        if self.encoder_decoder:
            if getattr(config, "decoder_start_token_id", None) is None:
                refuse_encoder_decoder(
                    config, model_name, "its config has no decoder_start_token_id to teacher-force from"
                )
            if "registry" not in self.allowed:
                refuse_encoder_decoder(config, model_name, "the hooks path cannot tell its kinds apart")
        self._try_registry(config)
        if self.path is None and self.encoder_decoder:
            refuse_encoder_decoder(
                config,
                model_name,
                "its attention does not go through the attention-function registry (" + "; ".join(self.tried) + ")",
            )
        if self.path is None and "hooks" not in self.allowed:
            raise ModelLoadError(
                f"cannot capture attention probabilities from {model_name}: tried "
                + " and ".join(self.tried)
                + " (path='registry' was asked for)"
            )
        if self.path is None:
            self._install_hooks(config, model_name)
        n = self.num_layers
        self.layers = list(range(n)) if self.requested_layers is None else self.requested_layers
        self._wanted = set(self.layers)
        bad = [i for i in self.layers if not 0 <= i < n]
        if bad:
            raise ModelLoadError(f"layers {bad} do not exist: {model_name} has layers 0..{n - 1}")
        # One more probe through the path now installed: heads and causality from P itself.
        self._run_probe()
        self._read_probe(config, model_name)
        self._probed = {}

    def _try_registry(self, config: Any) -> None:
        """Path 1: register the capturing attention function and probe; keep it if a module called it."""
        reorder = any(getattr(m, "reorder_and_upcast_attn", False) for m in self.model.modules())
        if "registry" not in self.allowed:
            self.tried.append("not the attention-function registry (path='hooks' was asked for)")
            return
        if reorder:
            self.tried.append("the attention-function registry (reorder_and_upcast_attn bypasses it)")
            return
        if config is None or not hasattr(config, "_attn_implementation"):
            self.tried.append("the attention-function registry (the model has no config._attn_implementation)")
            return
        self._register()
        self._discover = []
        try:
            self._run_probe()
        except _NotEager as e:
            self.tried.append(f"the attention-function registry ({e} has no eager_attention_forward)")
            self._discover = []
        except (KeyError, ValueError, TypeError, RuntimeError) as e:
            first = str(e).splitlines()[0] if str(e) else type(e).__name__
            self.tried.append(f"the attention-function registry (the forward pass failed: {first})")
            self._discover = []
        discovered = self._discover
        self._discover = None
        if discovered:
            self.path = "registry"
            self.num_layers = len(discovered)
        else:
            if not self.tried:
                self.tried.append("the attention-function registry (no module called it)")
            self._unregister()
            self._layer_of.clear()

    def _install_hooks(self, config: Any, model_name: str) -> None:
        """Path 2: find the modules whose output carries P (without, then with output_attentions) and hook them."""
        impl = getattr(config, "_attn_implementation", None)
        for flag in (False, True):
            try:
                found = self._discover_by_hooks(flag)
            except (KeyError, ValueError, TypeError, RuntimeError) as e:
                first = str(e).splitlines()[0] if str(e) else type(e).__name__
                self.tried.append(f"forward hooks (the forward pass on input_ids and attention_mask failed: {first})")
                raise ModelLoadError(
                    f"cannot capture attention probabilities from {model_name}: tried " + " and ".join(self.tried)
                ) from None
            if found:
                self.modules = found
                self.needs_output_attentions = flag
                self.path = "hooks"
                self.num_layers = len(found)
                for i, m in enumerate(found):
                    self.handles.append(m.register_forward_hook(self._make_hook(i), with_kwargs=True))
                return
        self.needs_output_attentions = False
        self.tried.append(
            "forward hooks on every submodule (no output carried a probability matrix, "
            "with or without output_attentions)"
        )
        hint = (
            f"; it runs attn_implementation={impl!r}: load it with attn_implementation='eager'"
            if impl not in (None, "eager")
            else ""
        )
        raise ModelLoadError(
            f"cannot capture attention probabilities from {model_name}: tried " + " and ".join(self.tried) + hint
        )

    def _read_probe(self, config: Any, model_name: str) -> None:
        """Heads, causality per layer and (encoder-decoders) the kind of each layer, from the probe's P."""
        n = self.num_layers
        probed = self._probed
        if sorted(probed) != list(range(n)):
            raise ModelLoadError(
                f"cannot capture attention probabilities from {model_name}: "
                f"layers {sorted(set(range(n)) - set(probed))} gave no P on the probe"
            )
        self.num_heads = int(probed[0].shape[1])
        heads = sorted({int(p.shape[1]) for p in probed.values()})
        if len(heads) > 1:
            raise ModelLoadError(
                f"cannot capture attention probabilities from {model_name}: its layers have "
                f"{' and '.join(map(str, heads))} heads; attnspec needs the same number in every layer"
            )
        self.layer_causal = [bool((torch.triu(probed[i], diagonal=1) == 0).all()) for i in range(n)]
        if self.encoder_decoder:
            # the probe's encoder input is longer than its decoder input: the shape tells the kind
            shape_kind = {
                (_PROBE_ENC, _PROBE_ENC): ENCODER_SELF,
                (_PROBE_DEC, _PROBE_DEC): DECODER_SELF,
                (_PROBE_DEC, _PROBE_ENC): CROSS,
            }
            self.kinds = [shape_kind.get(tuple(probed[i].shape[-2:]), "unknown") for i in range(n)]
            odd = [i for i, k in enumerate(self.kinds) if k == "unknown" or (k == DECODER_SELF) != self.layer_causal[i]]
            if odd:
                refuse_encoder_decoder(config, model_name, f"layers {odd} fit none of its kinds on the probe")
            self.causal = False
        else:
            self.kinds = ["self"] * n
            self.causal = all(self.layer_causal)

    def remove(self) -> None:
        """Remove every hook and registry entry; restore the model's attention implementation."""
        while self.handles:
            self.handles.pop().remove()
        self._unregister()

    # -- running -----------------------------------------------------------------------
    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None, *, _check: bool = True
    ) -> Any:
        """Run the model on a batch; the sink receives every captured layer's P.

        Parameters
        ----------
        input_ids, attention_mask : Tensor, shape (B, n)
            Token ids and the 0/1 mask of real tokens (default: all real). Decoders may be
            padded on either side, encoders on the right.

        Returns
        -------
        The model's own output (P removed from it).
        """
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        mask = attention_mask.bool()
        kwargs: dict[str, Any] = {"input_ids": input_ids}
        if not bool(mask.all()):
            # Only a batch with padding needs the mask: without one the model builds none
            # (or only its causal one) and skips adding a (B, 1, n, n) tensor of zeros to
            # every layer's scores, which changes no score.
            kwargs["attention_mask"] = attention_mask
        if bool((~mask[:, :-1] & mask[:, 1:]).any()):
            # a padding position precedes a real token: positions must count real tokens only
            if not self.causal and _check:
                raise InputError(
                    "pad encoder inputs on the right (padding before a real token would shift "
                    "the positions of an encoder); left padding is for decoders"
                )
            if _accepts(self.model, "position_ids"):
                kwargs["position_ids"] = (attention_mask.long().cumsum(-1) - 1).clamp_min(0)  # (B, n)
        if _accepts(self.model, "use_cache"):
            kwargs["use_cache"] = False  # no key/value cache: it would hold every layer's K and V
        if self.needs_output_attentions:
            kwargs["output_attentions"] = True
        if self.encoder_decoder:
            kwargs.update(self._decoder_inputs(input_ids, attention_mask))
        self._mask = mask
        self._seen = set()
        try:
            with torch.inference_mode():
                out = self.model(**kwargs)
        finally:
            self._mask = None
        if _check:
            missing = [i for i in self.layers if i not in self._seen]
            if missing:
                raise ModelLoadError(
                    f"layers {missing} of {type(self.model).__name__} produced no attention "
                    f"probabilities through the {self.path} path"
                )
        return out


@contextmanager
def capture_attention(
    model: nn.Module, sink: Sink, *, layers: Sequence[int] | None = None, path: str = "auto", scores: bool = False
) -> Iterator[AttentionCapture]:
    """Send each layer's P to ``sink`` during :meth:`AttentionCapture.forward`; undo everything on exit.

    Parameters
    ----------
    model : torch.nn.Module
        A transformers model (encoder or decoder; any attention implementation when it
        uses the attention-function registry, ``eager`` otherwise).
    sink : callable
        Called with one :class:`LayerAttention` per layer, in depth order, while the
        forward pass runs; P of shape (B, H, n, n) must be reduced or copied before the
        sink returns if it is to outlive the next layer.
    layers : sequence of int, optional
        0-based layers to capture (default: all).
    path : {"auto", "registry", "hooks"}
        ``auto`` tries the registry, then hooks; the others force one path (benchmarks
        compare them; forcing ``hooks`` on a registry model needs eager attention).
    scores : bool
        Through hooks, also hand the sink Q, K, V and the additive score bias (MPNet's
        relative position bias) read from the attention module's inputs; the registry
        path always hands Q, K, V.

    Yields
    ------
    AttentionCapture
        Set up (its path, layers and heads known); call its ``forward``.

    Raises
    ------
    ModelLoadError
        One line naming the model class and what was tried, when no path yields P.

    Examples
    --------
    >>> with capture_attention(model, sink=lambda la: print(la.layer, la.probs.shape)) as cap:
    ...     cap.forward(input_ids, attention_mask)
    """
    cap = AttentionCapture(model, sink, layers, path, scores)
    try:
        cap.setup()
        yield cap
    finally:
        cap.remove()


def describe_attention(model: nn.Module) -> CaptureInfo:
    """Probe ``model`` once (a 6-token forward) and undo everything: how P would be captured.

    Parameters
    ----------
    model : torch.nn.Module
        A transformers model.

    Returns
    -------
    CaptureInfo
        The path (``registry``/``hooks``), whether P is causal, the numbers of layers and
        heads, whether ``output_attentions`` is needed, and each layer's kind and causality.
    """
    with capture_attention(model, lambda la: None) as cap:
        return CaptureInfo(
            path=str(cap.path),
            causal=cap.causal,
            num_layers=cap.num_layers,
            num_heads=cap.num_heads,
            output_attentions=cap.needs_output_attentions,
            kinds=tuple(cap.kinds),
            layer_causal=tuple(cap.layer_causal),
        )


def collect_attention(
    model: nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None
) -> list[torch.Tensor]:
    """Every layer's P for one batch (small inputs only: every layer's P is kept).

    Parameters
    ----------
    model : torch.nn.Module
        A transformers model.
    input_ids : torch.Tensor of int, shape (B, n)
        Token ids.
    attention_mask : torch.Tensor, shape (B, n), optional
        1 on real tokens, 0 on padding (default: all real).

    Returns
    -------
    list of torch.Tensor, shape (B, H, n, n)
        One per layer, in depth order.
    """
    out: dict[int, torch.Tensor] = {}

    def keep(la: LayerAttention) -> None:
        out[la.layer] = la.probs.clone()

    with capture_attention(model, keep) as cap:
        cap.forward(input_ids, attention_mask)
    return [out[i] for i in sorted(out)]


def collect_score_parts(
    model: nn.Module,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor | None = None,
    *,
    layers: Sequence[int] | None = None,
) -> list[LayerAttention]:
    """Every requested layer's P with the Q, K, V and additive bias B its scores were made of.

    For each layer, P = softmax(scaling·Q Kᵀ + B + mask) on the real tokens (B is None for
    a model that adds no bias; grouped-query models give K, V fewer heads than Q). Small
    inputs only: every layer's tensors are kept.

    Parameters
    ----------
    model : torch.nn.Module
        A transformers model: through the attention-function registry, or through hooks on
        a module :mod:`attnspec.spectra.score_parts` reads (MPNet).
    input_ids : torch.Tensor of int, shape (B, n)
        Token ids.
    attention_mask : torch.Tensor, shape (B, n), optional
        1 on real tokens, 0 on padding (default: all real).
    layers : sequence of int, optional
        0-based layers (default: all).

    Returns
    -------
    list of LayerAttention
        In depth order, each with ``query``, ``key``, ``value``, ``scaling`` and ``bias``.

    Raises
    ------
    ModelLoadError
        The model's attention is captured through hooks on a module whose inputs do not
        tell its Q, K and V.
    """
    out: dict[int, LayerAttention] = {}

    def keep(la: LayerAttention) -> None:
        out[la.layer] = la

    with capture_attention(model, keep, layers=layers, scores=True) as cap:
        cap.forward(input_ids, attention_mask)
    unread = [i for i in sorted(out) if out[i].query is None]
    if unread:
        raise ModelLoadError(
            f"the Q, K, V of {type(model).__name__} cannot be read: its attention is captured through hooks "
            f"on {type(cap.modules[unread[0]]).__name__}, whose inputs attnspec does not know how to read"
        )
    return [out[i] for i in sorted(out)]
