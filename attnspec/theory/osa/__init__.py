"""Orthogonal Self-Attention (Zhang & Martens): the layer and checks of the paper's claims.

One module per claim or lemma group; a newcomer who knows the claim finds it here:

========================  ===========================================================
``layer``                 :class:`OrthogonalSelfAttention` (eqs. (3)–(5)), its bases and
                          the Section 4 initialisation
``thm21``                 Theorem 2.1 (low-rank exponential) and A ∈ SO(N)
``thm22``                 Theorem 2.2 (kernel eigenvalues of an OSA-only stack)
``thm31``                 Theorem 3.1 (Newton–Schulz orthogonality error, eqs. (10), (11))
``thm42``                 Theorem 4.2 (κ(W̃) = 1 under the query-key initialisation)
``jacobian``              Theorems 4.1, 4.3, 4.4 (the input–output Jacobian)
``lemc1``                 Lemma C.1 (||B||₂ <= √3) and eq. (9)'s σ(B) ∈ (0, 1]
``lemmas``                Lemmas C.2, C.3, C.7
``instances``             the random instances and tolerances the checks share
``timing``                forward time against N
``battery``               ``attnspec osa-check`` (config, run)
``groups``                its claim groups, in the order of their rows
``train``                 the training comparison (Section 5), ``train_battery``: osa-train
``claims``                the claim registry entries (``osa.*`` ids)
========================  ===========================================================

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
