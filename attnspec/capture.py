"""Capture the attention probability matrices P of an encoder, layer by layer.

Forward hooks on every self-attention module hand each layer's P to a *sink* as soon as
the layer has computed it, so the caller can reduce it (e.g. to singular values) before
the next layer runs: no more than one layer's P is alive at a time (when the model returns
P from its attention modules without ``output_attentions``, as BERT and RoBERTa do in
transformers >= 5; older-style modules such as MPNet's are asked for it explicitly).

Hooks live only inside :func:`capture_attention`, whose ``finally`` removes every handle,
also when the forward pass or the sink raises (the TransformerLens ``hooks()`` pattern).

Padding: P of input b is restricted to its real tokens (attention_mask == 1). In the
batched tensor handed to the sink, rows and columns of padding positions are set to zero,
so that the zero-extended matrix has exactly the singular values of the real block plus
zeros; :meth:`LayerAttention.real` returns the real blocks themselves.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from attnspec.errors import ModelLoadError

_SELF_ATTENTION = re.compile(r"SelfAttention$")
_ATTENTION = re.compile(r"Attention$")


def find_attention_modules(model: nn.Module) -> list[nn.Module]:
    """The innermost self-attention modules of ``model``, in depth order (layer 0 first).

    Classes named ``*SelfAttention`` (BERT, RoBERTa, MPNet, ELECTRA, DistilBERT, DeBERTa)
    are preferred; otherwise ``*Attention``. A candidate that contains another candidate
    (``BertAttention`` around ``BertSelfAttention``) is dropped.
    """
    for pattern in (_SELF_ATTENTION, _ATTENTION):
        candidates = [m for m in model.modules() if pattern.search(type(m).__name__)]
        if candidates:
            ids = {id(m) for m in candidates}
            return [m for m in candidates if not any(id(s) in ids for s in m.modules() if s is not m)]
    return []


@dataclass
class LayerAttention:
    """One layer's attention probabilities for one batch.

    Attributes
    ----------
    layer : int
        0-based layer index.
    probs : Tensor, shape (B, H, n, n)
        Row-stochastic P for each input and head; rows and columns of padding positions
        are zero.
    mask : Tensor of bool, shape (B, n)
        True on real tokens.
    """

    layer: int
    probs: torch.Tensor
    mask: torch.Tensor

    @property
    def lengths(self) -> torch.Tensor:
        return self.mask.sum(dim=1)

    def real(self, b: int) -> torch.Tensor:
        """P of input ``b`` restricted to its real tokens, shape (H, l_b, l_b)."""
        keep = self.mask[b]
        return self.probs[b][:, keep][:, :, keep]


Sink = Callable[[LayerAttention], None]


class AttentionCapture:
    """Hooks installed on a model; use through :func:`capture_attention`."""

    def __init__(self, model: nn.Module, sink: Sink, layers: Sequence[int] | None = None) -> None:
        self.model = model
        self.sink = sink
        impl = getattr(getattr(model, "config", None), "_attn_implementation", None)
        if impl not in (None, "eager"):
            raise ModelLoadError(
                f"{type(model).__name__} runs attn_implementation={impl!r}, which never forms P; load it with attn_implementation='eager'"
            )
        self.modules = find_attention_modules(model)
        if not self.modules:
            raise ModelLoadError(f"{type(model).__name__} has no self-attention layers that attnspec can capture")
        n = len(self.modules)
        self.layers = list(range(n)) if layers is None else sorted(set(layers))
        bad = [i for i in self.layers if not 0 <= i < n]
        if bad:
            raise ModelLoadError(f"layers {bad} do not exist: the model has layers 0..{n - 1}")
        self.handles: list[torch.utils.hooks.RemovableHandle] = []
        self.needs_output_attentions = False
        self._mask: torch.Tensor | None = None
        self._seen: set[int] = set()

    # -- hooks -------------------------------------------------------------------------
    def _install(self) -> None:
        for i in self.layers:
            self.handles.append(self.modules[i].register_forward_hook(self._make_hook(i)))

    def remove(self) -> None:
        while self.handles:
            self.handles.pop().remove()

    def _make_hook(self, layer: int) -> Callable[..., None]:
        def hook(module: nn.Module, args: Any, output: Any) -> None:
            probs = _find_probs(output)
            if probs is None or self._mask is None:
                return
            self._seen.add(layer)
            mask = self._mask
            if not bool(mask.all()):
                # zero padding rows and columns: (B, 1, n, 1) & (B, 1, 1, n) -> (B, 1, n, n)
                keep = mask[:, None, :, None] & mask[:, None, None, :]
                probs = probs * keep
            self.sink(LayerAttention(layer=layer, probs=probs.detach(), mask=mask))

        return hook

    # -- running -----------------------------------------------------------------------
    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None) -> Any:
        """Run the model on a batch; the sink receives every captured layer's P.

        ``input_ids`` and ``attention_mask`` have shape (B, n).
        """
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        self._mask = attention_mask.bool()
        self._seen = set()
        try:
            with torch.inference_mode():
                out = self.model(
                    input_ids=input_ids,
                    attention_mask=attention_mask,
                    output_attentions=self.needs_output_attentions or None,
                )
        finally:
            self._mask = None
        missing = [i for i in self.layers if i not in self._seen]
        if missing:
            raise ModelLoadError(
                f"layers {missing} produced no attention probabilities; the model must run with attn_implementation='eager'"
            )
        return out

    def probe(self) -> None:
        """Find out whether the attention modules return P unasked (a 4-token forward).

        Older-style attention modules return P only under ``output_attentions=True``; the
        capture then asks for it on every forward.
        """
        config = getattr(self.model, "config", None)
        vocab = int(getattr(config, "vocab_size", 8) or 8)
        pad = getattr(config, "pad_token_id", None)
        token = next(t for t in range(min(5, vocab - 1), vocab) if t != pad)
        device = next(self.model.parameters()).device
        ids = torch.full((1, 4), token, dtype=torch.long, device=device)
        sink, self.sink = self.sink, lambda _: None
        try:
            for flag in (False, True):
                self.needs_output_attentions = flag
                try:
                    self.forward(ids)
                    return
                except ModelLoadError:
                    if flag:
                        raise
        finally:
            self.sink = sink


def _find_probs(output: Any) -> torch.Tensor | None:
    """The (B, H, n, n) probability tensor among a module's outputs, if any."""
    items = output if isinstance(output, (tuple, list)) else (output,)
    for t in items:
        if isinstance(t, torch.Tensor) and t.dim() == 4 and t.shape[-1] == t.shape[-2]:
            return t
    return None


@contextmanager
def capture_attention(
    model: nn.Module, sink: Sink, *, layers: Sequence[int] | None = None
) -> Iterator[AttentionCapture]:
    """Install hooks that send each layer's P to ``sink``; remove them all on exit.

    Examples
    --------
    >>> with capture_attention(model, sink=lambda la: print(la.layer, la.probs.shape)) as cap:
    ...     cap.forward(input_ids, attention_mask)
    """
    cap = AttentionCapture(model, sink, layers)
    try:
        cap._install()
        cap.probe()
        yield cap
    finally:
        cap.remove()


def collect_attention(model: nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None) -> list[torch.Tensor]:
    """Every layer's P for one batch, as a list of (B, H, n, n) tensors (small inputs only)."""
    out: dict[int, torch.Tensor] = {}

    def keep(la: LayerAttention) -> None:
        out[la.layer] = la.probs.clone()

    with capture_attention(model, keep) as cap:
        cap.forward(input_ids, attention_mask)
    return [out[i] for i in sorted(out)]


def sample_attention(
    model: str,
    data: str,
    *,
    seq_len: int,
    count: int,
    seed: int,
    data_dir: str | None = None,
    device: str = "cpu",
    split: str | None = None,
) -> torch.Tensor:
    """``count`` real attention matrices, pooled over inputs, layers and heads.

    Loads ``model`` and draws just enough inputs of ``seq_len`` tokens from ``data`` to
    supply ``count`` distinct (input, layer, head) triples, then picks ``count`` of them
    uniformly without replacement with a generator seeded by ``seed``.

    Returns
    -------
    Tensor, shape (count, seq_len, seq_len), float64, rows summing to 1.
    """
    import numpy as np

    from attnspec.corpora import load_inputs
    from attnspec.errors import InputError
    from attnspec.models import load_encoder

    if count < 1:
        raise InputError(f"count must be >= 1, got {count}")
    enc = load_encoder(model, device=device)
    per_input = enc.num_layers * enc.num_heads
    num_inputs = math.ceil(count / per_input)
    inputs = load_inputs(data, enc.tokenizer, seq_len=seq_len, num_inputs=num_inputs, seed=seed,
                         split=split, data_dir=data_dir, short_policy="skip")
    pool: list[torch.Tensor] = []

    def keep(la: LayerAttention) -> None:
        pool.append(la.probs.to(torch.float64).cpu())  # (B, H, n, n)

    with capture_attention(enc.model, keep) as cap:
        for ids in inputs.input_ids:
            cap.forward(torch.tensor([ids], device=enc.device))
    stacked = torch.cat([p.reshape(-1, seq_len, seq_len) for p in pool])  # (inputs*layers*heads, n, n)
    pick = np.random.default_rng(seed).choice(stacked.shape[0], size=count, replace=False)
    return stacked[torch.as_tensor(np.sort(pick))]
