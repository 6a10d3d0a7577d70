"""The approximation protocol: a method of attention is one registered function.

An approximation receives one layer's heads (:class:`Heads`: Q, K, V, the score scaling, an
optional additive score bias B and whether the layer is causal) and returns the
approximate output, (H, n, d), to be compared with the exact P V. A method that is fitted
first also names a ``fit`` function, called once per (n, k, layer) on the heads of the
training documents; its return value (the *state*) is handed to every ``apply``.

Adding a method takes one function::

    from attnspec.spectra.approx.protocol import approximation

    @approximation("mean-pool", label="keys and values mean-pooled to k", causal=False)
    def mean_pool(heads, *, k, state, seed):
        ...  # -> Tensor (H, n, d)

Scores are S = s·Q Kᵀ + B (B: (H, n, n) or None). A method that cannot take an additive
bias (``bias=False``) is applied to the content scores s·Q Kᵀ only; the measurement labels
such rows. A method that cannot be causal (``causal=False``) is refused for causal layers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from attnspec.errors import InputError


@dataclass(frozen=True)
class Heads:
    """One layer's heads on one input (real tokens only).

    Attributes
    ----------
    q, k, v : Tensor, shape (H, n, d)
        Queries, keys and values (grouped-query key/value heads already repeated), float64.
    scaling : float
        The score scaling s (scores = s·Q Kᵀ + B).
    bias : Tensor, shape (H, n, n), or None
        An additive score bias B (relative positions), or None.
    causal : bool
        Whether row i may only see columns <= i.
    """

    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    scaling: float
    bias: torch.Tensor | None = None
    causal: bool = False

    @property
    def n(self) -> int:
        return int(self.q.shape[-2])

    def content_only(self) -> Heads:
        """The same heads without the additive bias (for methods that cannot take one).

        Returns
        -------
        Heads
        """
        return Heads(self.q, self.k, self.v, self.scaling, None, self.causal)


#: apply(heads, *, k, state, seed) -> Tensor (H, n, d)
ApplyFunction = Callable[..., torch.Tensor]
#: fit(train, *, k, seed, budget) -> state, train a list of Heads of one (n, layer)
FitFunction = Callable[..., Any]


@dataclass(frozen=True)
class Approximation:
    """A registered method of approximate attention.

    Attributes
    ----------
    name : str
        The id used on the command line (``--approx NAME``).
    label : str
        What the method is, in a few words (tables and figures).
    apply : callable
        ``apply(heads, *, k, state, seed) -> Tensor (H, n, d)``.
    fit : callable or None
        ``fit(train, *, k, seed, budget) -> state`` on a list of :class:`Heads`
        (training documents, one (n, layer)); None: nothing is fitted.
    causal : bool
        Whether the method has a causal form (else it is refused for causal layers).
    bias : bool
        Whether the method takes an additive score bias (else it sees content scores only).
    reference : bool
        A reference drawn as a line (uniform, best rank k), not a method under test.
    """

    name: str
    label: str
    apply: ApplyFunction
    fit: FitFunction | None = None
    causal: bool = False
    bias: bool = False
    reference: bool = False

    def refusal(self, heads: Heads) -> str | None:
        """Why this method is not applied to ``heads`` (None when it is).

        Parameters
        ----------
        heads : Heads
            The layer's heads.

        Returns
        -------
        str or None
        """
        if heads.causal and not self.causal:
            return f"{self.name} has no causal form: not applied to causal layers"
        return None


_REGISTRY: dict[str, Approximation] = {}


def approximation(
    name: str,
    *,
    label: str,
    fit: FitFunction | None = None,
    causal: bool = False,
    bias: bool = False,
    reference: bool = False,
) -> Callable[[ApplyFunction], ApplyFunction]:
    """Register the decorated function as the ``apply`` of a method called ``name``.

    Parameters
    ----------
    name : str
        Lower-case id, letters, digits and hyphens; not registered yet.
    label : str
        What the method is, in a few words.
    fit : callable, optional
        ``fit(train, *, k, seed, budget) -> state``.
    causal : bool
        The method has a causal form.
    bias : bool
        The method takes an additive score bias.
    reference : bool
        A reference, not a method under test.

    Returns
    -------
    callable
        The decorator (it returns the function unchanged).
    """
    if not name or name != name.lower() or not all(c.isalnum() or c == "-" for c in name):
        raise InputError(f"approximation name must be lower-case letters, digits and hyphens, got {name!r}")

    def register(apply: ApplyFunction) -> ApplyFunction:
        if name in _REGISTRY and _REGISTRY[name].apply is not apply:
            raise InputError(f"an approximation called {name!r} is registered already")
        _REGISTRY[name] = Approximation(name, label, apply, fit, causal, bias, reference)
        return apply

    return register
