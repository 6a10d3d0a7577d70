"""Loaded models shared inside one scope, so that a model several experiments use loads once.

``attnspec report`` runs every experiment in one process, and several use the same model;
loading one (SmolLM2: building a 135M-parameter model from its dequantised GGUF weights)
costs more than a quick experiment's own work. Inside :func:`sharing_models`, every place that
loads a model by name (the spectrum job, the scaling study, the model nulls, the real
attention of the checking batteries) calls :func:`shared_model`, which hands back the model
loaded before for the same request. Outside such a scope (every library call and command
that does not open one) :func:`shared_model` is :func:`attnspec.spectra.models.load_model`.

A model is reused only when all of these are equal:

- the request: the name as given, the revision, the resolved device and dtype;
- its content: the digests of the weights and tokenizer files the name points at now
  (:func:`attnspec.spectra.content.named_content`: weights, tokenizer and config), so
  files swapped under the same name load again. A name whose files cannot be found before
  loading (a model only on the hub) is never shared: nothing would tell a swapped one apart;
- its state: still in eval mode, no parameter or buffer replaced or written in place
  (torch's per-tensor version counter). Every user only runs forward passes under
  :func:`attnspec.spectra.capture.capture_attention`, which restores what it sets on the
  config; the random-init null builds a new model from the config
  (:func:`attnspec.spectra.random_init.reinitialised`). A model found changed anyway is
  dropped and loaded again rather than handed on.

Each caller gets its own :class:`~attnspec.spectra.models.LoadedModel` record (the model and
tokenizer objects are shared), so a field set on one record reaches no other. Leaving the
scope drops every model it loaded; scopes do not nest (an inner one uses the outer one's).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any


def _state(model: Any) -> tuple[Any, ...]:
    """What a read-only user leaves as it was: eval mode, and each parameter's and buffer's
    identity, storage and in-place version."""
    tensors = [*model.named_parameters(), *model.named_buffers()]
    return (model.training, *((name, id(t), t.data_ptr(), t._version) for name, t in tensors))


@dataclass
class _Entry:
    loaded: Any
    state: tuple[Any, ...]


@dataclass
class ModelShare:
    """The models one :func:`sharing_models` scope has loaded, and how often each was asked for.

    Attributes
    ----------
    loads : int
        Models loaded from their files inside the scope.
    reuses : int
        Requests answered with a model loaded before.
    log : callable, optional
        Receives one line per load and per reuse.
    """

    loads: int = 0
    reuses: int = 0
    log: Callable[[str], None] | None = None
    _entries: dict[tuple[Any, ...], _Entry] = field(default_factory=dict)

    def get(self, name: str, *, device: str, dtype: str, revision: str | None) -> Any:
        """The model of this request: the one loaded before when still the same, else a fresh load.

        Parameters
        ----------
        name : str
            ``--model``: a directory, hub id, alias or GGUF model.
        device : {"auto", "cpu", "cuda"}
        dtype : {"float32", "float64", "bfloat16"}
        revision : str or None
            The hub revision.

        Returns
        -------
        LoadedModel
            A record of its own around the shared model and tokenizer.
        """
        from attnspec.spectra import models
        from attnspec.spectra.content import content_key, named_content

        content = named_content(name)
        key = (
            name,
            revision,
            str(models.resolve_device(device)),
            str(models.resolve_dtype(dtype)),
            content_key(content),
        )
        entry = self._entries.get(key)
        if entry is not None and _state(entry.loaded.model) == entry.state:
            self.reuses += 1
            self._say(f"model {name}: reused (loaded once for this run)")
            return dataclasses.replace(entry.loaded)
        if entry is not None:
            self._say(f"model {name}: changed by an earlier user, loaded again")
        loaded = models.load_model(name, device=device, dtype=dtype, revision=revision)
        self.loads += 1
        if "weights_sha256" in content:
            self._entries[key] = _Entry(loaded, _state(loaded.model))
            self._say(f"model {name}: loaded")
        else:
            self._say(f"model {name}: loaded (its files are not local, so it is not shared)")
        return dataclasses.replace(loaded)

    def clear(self) -> None:
        """Drop every model held."""
        self._entries.clear()

    def _say(self, line: str) -> None:
        if self.log is not None:
            self.log(line)


_active: ContextVar[ModelShare | None] = ContextVar("attnspec_shared_models", default=None)


@contextmanager
def sharing_models(log: Callable[[str], None] | None = None) -> Iterator[ModelShare]:
    """A scope inside which :func:`shared_model` loads each model once; every model is dropped on leaving it.

    Parameters
    ----------
    log : callable, optional
        Receives one line per load and per reuse.

    Yields
    ------
    ModelShare
        The scope's models and counts (the enclosing scope's, when one is open already).
    """
    outer = _active.get()
    if outer is not None:
        yield outer
        return
    share = ModelShare(log=log)
    token = _active.set(share)
    try:
        yield share
    finally:
        _active.reset(token)
        share.clear()


def shared_model(name: str, *, device: str = "auto", dtype: str = "float32", revision: str | None = None) -> Any:
    """Load ``name`` as :func:`attnspec.spectra.models.load_model` does, or, inside
    :func:`sharing_models`, hand back the same model loaded before.

    Parameters
    ----------
    name : str
        ``--model``: a directory, hub id, alias or GGUF model.
    device : {"auto", "cpu", "cuda"}
        ``auto``: CUDA when available, else the CPU.
    dtype : {"float32", "float64", "bfloat16"}
        The weights' dtype.
    revision : str, optional
        The hub revision.

    Returns
    -------
    LoadedModel
        A record of its own; its model and tokenizer may be shared with other callers of
        the scope, who use them read-only.
    """
    share = _active.get()
    if share is None:
        from attnspec.spectra.models import load_model

        return load_model(name, device=device, dtype=dtype, revision=revision)
    return share.get(name, device=device, dtype=dtype, revision=revision)
