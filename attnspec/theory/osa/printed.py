"""Printed formulas of the OSA paper that a reimplementation would trip over.

Each formula is evaluated as printed and as corrected; a product that is not even
conformable for N ≠ 2 d_v is shown by its shapes, and evaluated at the one square shape
where it is defined, where it is numerically wrong:

* eq. (26) (``osa.eq26``): the second term is printed ``B Δᵀ B`` — (N, r)(r, r)(N, r) is
  conformable only when N = r = 2 d_v; meant ``B Δᵀ Bᵀ`` (as in (24) and (27)).
* eqs. (48)–(49) (``osa.eq49``): the term on the line numbered (49) is printed
  ``(I_{d_v} ⊗ A) ∂vec(W_V W_O)``: (N d_v, N d_v) against a vector of length d², producing
  N d_v entries where vec OSA has N d — conformable only when N = d_v = d, so not even at
  N = 2 d_v; meant ``(I_d ⊗ A X) ∂vec(W_V W_O)``. The term vanishes for ∂/∂X, so Theorem
  4.1 is unaffected.
* eq. (89) (``osa.eq89``): ``E₂ = (B ⊗ Bᵀ) ∂vec(exp[S] − I)/∂vec X``: (N r, r N) against
  r² rows; vec(B M Bᵀ) = (B ⊗ B) vec M, so meant ``(B ⊗ B)``.
* Theorem 4.4's condition (``osa.thm44.constant``): printed "for any α > 0 such that
  1 − δ − C_α > 0" while (16) and the proof use C α; read as a constant C_α ≥ 1 − δ, the
  condition is never met. Measured with the C fitted by :mod:`attnspec.theory.osa.jacobian`.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch

from attnspec.numerics.linalg import newton_schulz, skew_small
from attnspec.theorem.measured import Instance, Measure, unmet_row
from attnspec.theorem.tightest import tightest_rows
from attnspec.theory.osa.instances import F64_TOL, make_instance, vec
from attnspec.theory.osa.layer import init_vo
from attnspec.theory.osa.thm22 import attention_matrix
from attnspec.verdicts.classify import VerdictRow

F64 = torch.float64


def conformable(*shapes: tuple[int, int]) -> bool:
    """Whether the matrix product of factors with these (rows, cols) shapes is defined.

    Parameters
    ----------
    *shapes : tuple of (int, int)

    Returns
    -------
    bool
    """
    return all(a[1] == b[0] for a, b in zip(shapes, shapes[1:]))


def _max_abs(m: torch.Tensor) -> float:
    return float(m.abs().max())


def eq26_check(seed: int, n: int = 12, d: int = 8, d_v: int = 2, alpha: float = 1.0, steps: int = 2) -> dict:
    """Eq. (26) as printed and corrected, for Y = I + B Δ Bᵀ with a finite-K Newton–Schulz B.

    Returns the shapes of the printed second term at (n, r), whether they are conformable,
    the residual of the corrected (26) and of (28) against YᵀY − I at (n, r), and of the
    printed (26) at the square shape N = r where it is defined.

    Parameters
    ----------
    seed : int
        Seed of the instance.
    n : int
        Sequence length N.
    d : int
        Token width.
    d_v : int
        Head width (r = 2 d_v).
    alpha : float
        The scale of S.
    steps : int
        Newton–Schulz iterations K.

    Returns
    -------
    dict
    """
    out: dict = {"n": n, "r": 2 * d_v, "seed": seed}
    for label, nn in (("general", n), ("square", 2 * d_v)):
        x, w_q, w_k = make_instance(seed, nn, d, d_v, "stiefel")
        q, k = x @ w_q, x @ w_k
        b = newton_schulz(torch.cat([q, k], 1), steps, "cubic")  # (nn, r), not orthonormal
        r = b.shape[1]
        delta = torch.linalg.matrix_exp(skew_small(b, q, k, alpha / math.sqrt(d_v))) - torch.eye(r, dtype=F64)
        e = b.mT @ b - torch.eye(r, dtype=F64)
        y = torch.eye(nn, dtype=F64) + b @ delta @ b.mT
        lhs = y.mT @ y - torch.eye(nn, dtype=F64)
        first = b @ delta @ b.mT + b @ delta.mT @ b.mT
        corrected = first + b @ delta.mT @ e @ delta @ b.mT + b @ delta.mT @ delta @ b.mT
        if label == "general":
            out["printed_shapes"] = [tuple(b.shape), tuple(delta.mT.shape), tuple(b.shape)]
            out["printed_conformable"] = conformable(tuple(b.shape), tuple(delta.mT.shape), tuple(b.shape))
            out["corrected_residual"] = _max_abs(lhs - corrected)
            out["eq28_residual"] = _max_abs(lhs - b @ delta.mT @ e @ delta @ b.mT)
            out["lhs_scale"] = _max_abs(lhs)
        else:
            printed = (
                b @ delta @ b.mT + b @ delta.mT @ b + b @ delta.mT @ e @ delta @ b.mT + b @ delta.mT @ delta @ b.mT
            )
            out["printed_residual_square"] = _max_abs(lhs - printed)
            out["lhs_scale_square"] = _max_abs(lhs)
    return out


def eq48_check(seed: int, n: int = 5, d: int = 4, alpha: float = 0.5) -> dict:
    """The W-term of eqs. (48)–(49), on the line numbered (49): ∂vec(A X W)/∂vec W, W = W_V W_O, against the printed
    (I_{d_v} ⊗ A) and the corrected (I_d ⊗ A X).

    A does not depend on W, so the autograd Jacobian in W is exact. The printed matrix is
    (N d_v, N d_v) where (N d, d²) is needed; it is conformable and of the right size only
    when N = d_v = d, where it is compared numerically.

    Parameters
    ----------
    seed : int
    n, d : int
    alpha : float

    Returns
    -------
    dict
        n, d, d_v, seed, printed_shape, needed_shape, corrected_residual,
        printed_residual_square.
    """
    x, w_q, w_k = make_instance(seed, n, d, d // 2, "stiefel")
    a = attention_matrix(x[None], w_q[None], w_k[None], alpha, "qr", 0, "cubic")[0, 0]  # (N, N)
    w_v, w_o = init_vo(d, d // 2, 1, seed, F64)
    w = w_v[0] @ w_o[0]  # (d, d)
    jac = torch.autograd.functional.jacobian(lambda wv: vec(a @ x @ wv.reshape(d, d).mT), vec(w))  # (N d, d²)
    d_v = d // 2
    out = {
        "n": n,
        "d": d,
        "d_v": d_v,
        "seed": seed,
        "printed_shape": (n * d_v, n * d_v),
        "needed_shape": tuple(jac.shape),
        "corrected_residual": _max_abs(jac - torch.kron(torch.eye(d, dtype=F64), a @ x)),
    }
    # The one shape where the printed product is defined and has the right size: d_v = d = N
    # (a single head of full width, N = d). Use A of size d and X of size d × d.
    x2 = torch.randn(d, d, generator=torch.Generator().manual_seed(seed % 2**63), dtype=F64) / math.sqrt(d)
    a2 = torch.linalg.matrix_exp(x2 - x2.mT)  # some orthogonal A (d, d)
    jac2 = torch.autograd.functional.jacobian(lambda wv: vec(a2 @ x2 @ wv.reshape(d, d).mT), vec(w))
    out["printed_residual_square"] = _max_abs(jac2 - torch.kron(torch.eye(d, dtype=F64), a2))
    return out


def eq89_check(seed: int, n: int = 9, d: int = 8, d_v: int = 2) -> dict:
    """vec(B M Bᵀ) against the printed (B ⊗ Bᵀ) vec M and the corrected (B ⊗ B) vec M.

    Parameters
    ----------
    seed : int
    n, d, d_v : int

    Returns
    -------
    dict
        n, r, seed, printed_shape, vec_length, corrected_residual, printed_residual_square
        (at N = r, where the printed product is defined).
    """
    x, w_q, w_k = make_instance(seed, n, d, d_v, "stiefel")
    b = newton_schulz(torch.cat([x @ w_q, x @ w_k], 1), 2, "cubic")  # (n, r)
    r = b.shape[1]
    m = torch.randn(r, r, generator=torch.Generator().manual_seed(seed % 2**63), dtype=F64)
    target = vec(b @ m @ b.mT)
    out = {
        "n": n,
        "r": r,
        "seed": seed,
        "printed_shape": (n * r, r * n),
        "vec_length": r * r,
        "corrected_residual": _max_abs(target - torch.kron(b, b) @ vec(m)),
    }
    bs = newton_schulz(torch.cat([x[:r] @ w_q, x[:r] @ w_k], 1), 2, "cubic")  # square (r, r): printed is defined
    out["printed_residual_square"] = _max_abs(vec(bs @ m @ bs.mT) - torch.kron(bs, bs.mT.contiguous()) @ vec(m))
    return out


def printed_rows(seed: int) -> tuple[list[VerdictRow], pd.DataFrame]:
    """Rows for eqs. (26), (49), (89) as printed and corrected, each decided by the classifier.

    As printed, each equation gets two rows: at the general shape N the printed product is
    not conformable, so it cannot be evaluated there (``hypothesis-unmet``: neither a
    confirmation nor a counterexample); at the one square shape where it is defined it is
    evaluated and compared (``violated`` when wrong there). Corrected: an identity.

    Parameters
    ----------
    seed : int

    Returns
    -------
    rows : list of VerdictRow
        Three per equation.
    frame : DataFrame
        One row per equation with its shapes and residuals.
    """
    rows: list[VerdictRow] = []
    recs = []
    c26, c49, c89 = eq26_check(seed), eq48_check(seed), eq89_check(seed)
    checks = (
        ("osa.eq26", c26, "B Δᵀ B", "B Δᵀ Bᵀ", "only when N = r = 2 d_v", {"N": c26["r"]}),
        (
            "osa.eq49",
            c49,
            "(I_{d_v} ⊗ A) ∂vec(W_V W_O) (the line numbered (49))",
            "(I_d ⊗ A X) ∂vec(W_V W_O)",
            "only when N = d_v = d (not even at N = 2 d_v)",
            {"N": c49["d"], "d_v": c49["d"], "d": c49["d"]},
        ),
        ("osa.eq89", c89, "(B ⊗ Bᵀ)", "(B ⊗ B)", "only when N = r", {"N": c89["r"]}),
    )
    for claim, c, printed, fixed, when, square in checks:
        recs.append({"claim": claim, **{k: (str(v) if isinstance(v, (tuple, list)) else v) for k, v in c.items()}})
        shapes = c.get("printed_shapes", c.get("printed_shape"))
        needs = f", and the result needs shape {c['needed_shape']}" if "needed_shape" in c else ""
        at = ", ".join(f"{k} = {v}" for k, v in square.items())
        unmet = (
            f"the printed {printed} is not conformable at N = {c['n']}: shapes {shapes}{needs}; it is defined {when}"
        )
        after = f"it cannot be evaluated here, so this is no counterexample (see {at})"
        rows.append(unmet_row(claim, unmet, reading="as-printed", params={"N": c["n"]}, seed=seed, trials=1,
                              bound=F64_TOL, after=after))  # fmt: skip
        one = pd.DataFrame([c])
        rows += tightest_rows(
            claim, one, observed="printed_residual_square", tol=F64_TOL, reading="as-printed", seed=seed,
            params=lambda *_, square=square: dict(square), note_first=True,
            note=lambda *_, printed=printed, at=at: f"printed {printed} at the square shape where it is defined ({at})",
        )  # fmt: skip
        rows += tightest_rows(
            claim, one, observed="corrected_residual", tol=F64_TOL, reading="corrected", seed=seed,
            params=lambda *_, c=c: {"N": c["n"]}, note_first=True, note=lambda *_, fixed=fixed: f"with {fixed}",
        )  # fmt: skip
    return rows, pd.DataFrame(recs)


def thm44_constant_row(jacobian: pd.DataFrame, seed: int) -> VerdictRow:
    """``osa.thm44.constant``: the printed condition 1 − δ − C_α > 0 beside 1 − δ − Cα > 0,
    with the C fitted (on the fit draws) for the paper's cubic Newton–Schulz basis.

    Parameters
    ----------
    jacobian : DataFrame
        The table of :func:`attnspec.theory.osa.jacobian.check_jacobian`.
    seed : int

    Returns
    -------
    VerdictRow
        A measurement.
    """
    single = jacobian[(jacobian.reading == "single") & (jacobian.role == "fit")]
    ns = single[single.basis.str.startswith("NS cubic")]
    grp = ns if not ns.empty else single
    c = float(grp.j1_over_alpha.max())
    delta = float(grp[grp.alpha == grp.alpha.min()].delta.max())
    alpha_max = (1 - delta) / c if c > 0 else math.inf
    alphas = np.sort(grp.alpha.unique())
    ok = [a for a in alphas if 1 - delta - c * a > 0]
    from attnspec.theory.osa.jacobian import c_spread, c_spread_params

    sp = c_spread(grp)
    spread = c_spread_params(sp)
    params = {"basis": str(grp.basis.iloc[0]), **spread, "alpha_max_min": round(float(sp.alpha_max.min()), 4),
              "alpha_max_max": round(float(sp.alpha_max.max()), 4)}  # fmt: skip
    values = {
        "C": c, "draws": len(grp),
        "sentence": f"Theorem 4.4 prints 'for any α > 0 such that 1 − δ − C_α > 0' where (16) and the proof have Cα; with "
        f"the fitted C = {c:.4g} (max over {len(sp)} fit draws) and δ = {delta:.3g}, 1 − δ − C·α > 0 for α < "
        f"{alpha_max:.3g} ({len(ok)} of the {len(alphas)} alphas checked); this range depends on the draw (one "
        f"draw's C gives α < {sp.alpha_max.min():.3g}..{sp.alpha_max.max():.3g}); read as a constant C_α >= 1 − δ "
        "the condition is never met; C itself is not given (it depends on the bound on ||X||₂); the proof's (98) "
        "also drops the transpose of W_V W_O in J₂ (harmless for singular values)",
    }  # fmt: skip
    reading = Measure("as-printed", sentence="{sentence}", value="C", trials="draws")
    return reading.row("osa.thm44.constant", Instance(params, values, seed))
