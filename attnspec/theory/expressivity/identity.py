"""The construction's defining identity as its own claim (:data:`~.claims.CONSTRUCTION`).

``X = (B̂1, B̂2)``, ``W_Q = I_{2d}``, ``W_K = [[0, 0], [I_d, 0]]`` give
``X W_Q W_Kᵀ Xᵀ = (X W_Q)(X W_K)ᵀ = (B̂1, B̂2)(B̂2, 0)ᵀ = B̂1 B̂2ᵀ``: the construction is
materialised (:func:`~.construction.construct`, float64) and the product of the three
matrices compared with ``B1 Rᵀ R B2ᵀ`` computed directly from R. The samplers of
:mod:`.sampling` never form X (they use this identity); here it is checked on its own.
"""

from __future__ import annotations

from attnspec.theory.expressivity import claims as C
from attnspec.theory.expressivity.construction import construct, exact_construction, sparse_target
from attnspec.verdicts.classify import VerdictRow, classify_identity

#: Relative tolerance: float64 round-off of products of length <= 2d.
TOLERANCE = 1e-12
#: The instance is at L = min(run's L, IDENTITY_MAX_L) (X is materialised, L × 2d).
IDENTITY_MAX_L = 64


def _relative_residual(c) -> float:  # noqa: ANN001 - a Construction
    got = c.logits()  # (L, L) = (X W_Q)(X W_K)ᵀ
    want = (c.B1 @ c.R.T) @ (c.R @ c.B2.T)  # (L, L) = B1 Rᵀ R B2ᵀ, from R directly
    scale = float(want.abs().max()) or 1.0
    return float((got - want).abs().max()) / scale


def check_construction(
    *, L: int, k: int, m: float, M: float, eps: float, support: str, seed: int, params: dict
) -> list[VerdictRow]:
    """The identity reading (row and column factorizations; d = L/2 and 2L; dense and sparse
    weights) and the exact-choice reading, at L' = min(L, :data:`IDENTITY_MAX_L`).

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
    Ls = min(L, IDENTITY_MAX_L)
    ks = min(k, Ls)
    A = sparse_target(Ls, ks, m=m, M=M, support=support, seed=seed)
    worst, where = 0.0, ""
    cases = 0
    for fac in ("row", "column"):
        for d in (max(1, Ls // 2), 2 * Ls):
            for sparse_w in (False, True):
                c = construct(A, d, eps, factorization=fac, seed=seed, sparse_weights=sparse_w)
                r = _relative_residual(c)
                cases += 1
                if r >= worst:
                    worst, where = r, f"{fac} factorization, d = {d}, {'sparse' if sparse_w else 'dense'} W"
    P = {**params, "L": Ls, "k": ks}
    dec = classify_identity(residual=worst, tol=TOLERANCE)
    out = [
        VerdictRow(
            C.CONSTRUCTION.id,
            dec.verdict,
            P,
            bound=TOLERANCE,
            estimate=worst,
            trials=cases,
            seed=seed,
            reading="identity",
            at_paper_params=True,
            evidence=f"max |X W_Q W_Kᵀ Xᵀ − B1 Rᵀ R B2ᵀ| / max|B1 Rᵀ R B2ᵀ| over {cases} materialised "
            f"constructions (worst: {where}): {dec.reason}",
        )
    ]
    c = exact_construction(A, eps)
    res = float((c.logits() - c.B).abs().max()) / (float(c.B.abs().max()) or 1.0)
    dec = classify_identity(residual=res, tol=TOLERANCE)
    out.append(
        VerdictRow(
            C.CONSTRUCTION.id,
            dec.verdict,
            {**P, "d": Ls},
            bound=TOLERANCE,
            estimate=res,
            trials=1,
            seed=seed,
            reading="exact-choice",
            at_paper_params=True,
            evidence=f"X = (B, I), width 2L = {2 * Ls}: max |X W_Q W_Kᵀ Xᵀ − B| / max|B|: {dec.reason}",
        )
    )
    return out


__all__ = ["TOLERANCE", "check_construction"]
