"""The construction's defining identity (:data:`~.claims.CONSTRUCTION`), checked on the materialised
construction (:func:`~.construction.construct`, float64) against ``B1 Rᵀ R B2ᵀ`` computed from R:
the samplers of :mod:`.sampling` never form X, they use this identity."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attnspec.theorem.cases import Cases
from attnspec.theory.expressivity import claims as C
from attnspec.theory.expressivity.construction import construct, exact_construction, sparse_target
from attnspec.verdicts.classify import VerdictRow

#: The instance is at L = min(run's L, IDENTITY_MAX_L) (X is materialised, L × 2d).
IDENTITY_MAX_L = 64


def _relative_residual(c) -> float:  # noqa: ANN001 - a Construction
    got = c.logits()  # (L, L) = (X W_Q)(X W_K)ᵀ
    want = (c.B1 @ c.R.T) @ (c.R @ c.B2.T)  # (L, L) = B1 Rᵀ R B2ᵀ, from R directly
    scale = float(want.abs().max()) or 1.0
    return float((got - want).abs().max()) / scale


def _residuals(point: dict[str, Any], *, m: float, M: float, eps: float, support: str, seed: int) -> dict[str, Any]:
    """The construction's relative residuals at ``point``: over the eight materialised cases
    (row and column factorizations, d = L/2 and 2L, dense and sparse weights), or, at the point
    with ``d``, of the exact choice X = (B, I)."""
    Ls = point["L"]
    A = sparse_target(Ls, point["k"], m=m, M=M, support=support, seed=seed)
    if "d" in point:
        c = exact_construction(A, eps)
        return {"exact_choice": float((c.logits() - c.B).abs().max()) / (float(c.B.abs().max()) or 1.0)}
    cases = [
        construct(A, d, eps, factorization=fac, seed=seed, sparse_weights=sparse_w)
        for fac in ("row", "column")
        for d in (max(1, Ls // 2), 2 * Ls)
        for sparse_w in (False, True)
    ]
    return {"residual": Cases([_relative_residual(c) for c in cases])}


def _construction_check(*, m: float, M: float, eps: float, support: str, seed: int, params: dict) -> Any:
    """:data:`~.claims.CONSTRUCTION` as a declared check: two grid points, the materialised
    cases and the exact choice (``d`` = L'), both drawn from ``seed``.
    """
    from attnspec.theorem.declare import Check
    from attnspec.theory.expressivity.registration import PAPER

    def grid(options: Mapping[str, Any]) -> list[dict[str, Any]]:
        Ls = min(int(options["L"]), IDENTITY_MAX_L)
        at = {**params, "L": Ls, "k": min(int(options["k"]), Ls)}
        return [at, {**at, "d": Ls}]

    return Check(
        command=C.COMMAND,
        paper=PAPER,
        claims=(C.CONSTRUCTION,),
        grid=grid,
        setup=lambda point, rng: _residuals(point, m=m, M=M, eps=eps, support=support, seed=seed),
        seeds=lambda options, index, point: seed,
    )


def check_construction(
    *, L: int, k: int, m: float, M: float, eps: float, support: str, seed: int, params: dict
) -> list[VerdictRow]:
    """The identity reading and the exact-choice reading of :data:`~.claims.CONSTRUCTION` at
    L' = min(L, :data:`IDENTITY_MAX_L`), run by :func:`attnspec.theorem.runner.run_check`.

    Parameters
    ----------
    L, k : int
    m, M, eps : float
    support : str
    seed : int
    params : dict, the run's parameters (L and k are replaced by the instance's)

    Returns
    -------
    list of two VerdictRow (at the paper's own construction: ``at_paper_params``)
    """
    from attnspec.theorem.runner import run_check

    check = _construction_check(m=m, M=M, eps=eps, support=support, seed=seed, params=params)
    config = {"L": L, "k": k, "seed": seed, "trials": 1, "jobs": 1}
    return run_check(check, config).verdicts


__all__ = ["check_construction"]
