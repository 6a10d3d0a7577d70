"""Orthogonal Self-Attention (Zhang & Martens): the layer and the checks of the paper's claims.

``layer`` holds :class:`OrthogonalSelfAttention` (eqs. (3)–(5)), its bases and the Section 4
initialisation; each claim's checking module (one per theorem or lemma group) is named beside
it in ``claims`` and by ``attnspec claims``; ``battery`` and ``groups`` run ``osa-check``,
``train*`` the training comparison of Section 5 (``osa-train``).

The layer is re-exported here: ``from attnspec.theory.osa import OrthogonalSelfAttention``.
It is imported on first use (PEP 562), so importing the package — as ``attnspec claims``
does to read ``claims`` — loads no torch.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "BASES",
    "OrthogonalSelfAttention",
    "dense_skew",
    "init_qk",
    "init_vo",
    "osa_basis",
    "osa_dense_heads",
    "osa_heads",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from attnspec.theory.osa import layer

        return getattr(layer, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
