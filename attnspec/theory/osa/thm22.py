"""Theorem 2.2: the kernel of a skipless, single-head, OSA-only stack keeps its eigenvalues
(claim ``osa.thm22``).

Its hypothesis, every layer's A orthogonal, holds for A = exp(S) (a QR basis, or Newton–Schulz
run to convergence), not for a finite-K Newton–Schulz basis: those rows are
``hypothesis-unmet`` with the measured ||A_lᵀA_l − I||₂, not counterexamples.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd
import torch

from attnspec.errors import InputError
from attnspec.numerics.linalg import Coefficients, skew_small
from attnspec.numerics.stats import spawn_seeds, torch_generator
from attnspec.theorem.tightest import tightest_rows
from attnspec.theory.osa.instances import F64_TOL, schedule_name
from attnspec.theory.osa.layer import init_qk, init_vo, osa_basis, osa_heads


def attention_matrix(
    x: torch.Tensor,
    w_q: torch.Tensor,
    w_k: torch.Tensor,
    alpha: float,
    basis: str,
    ns_steps: int,
    ns_coefficients: Coefficients,
    eps: float = 0.0,
) -> torch.Tensor:
    """The N×N matrix A = I + B (exp[S] − I) Bᵀ the fast path applies (small N only).

    Parameters
    ----------
    x : Tensor (batch, N, d)
    w_q, w_k : Tensor (heads, d, d_v)
    alpha : float
        The scale of S (S is scaled by alpha / sqrt(d_v)).
    basis, ns_steps, ns_coefficients, eps
        The basis B of span(Q, K), as in :func:`attnspec.theory.osa.layer.osa_heads`.

    Returns
    -------
    Tensor (batch, heads, N, N)
    """
    n = x.shape[1]
    q = torch.einsum("bnd,hdv->bhnv", x, w_q)
    k = torch.einsum("bnd,hdv->bhnv", x, w_k)
    b = osa_basis(torch.cat([q, k], -1), basis, ns_steps, ns_coefficients, eps)  # (B, H, N, r)
    ss = skew_small(b, q, k, alpha / math.sqrt(w_q.shape[-1]))  # (B, H, r, r)
    r = ss.shape[-1]
    c = torch.linalg.matrix_exp(ss) - torch.eye(r, dtype=x.dtype)
    return torch.eye(n, dtype=x.dtype) + b @ c @ b.mT


def check_kernel(
    seed: int,
    n: int = 16,
    d: int = 8,
    depth: int = 8,
    alphas: Sequence[float] = (0.1, 1.0),
    bases: Sequence[tuple[str, Coefficients, int]] = (
        ("qr", "cubic", 0),
        ("newton-schulz", "cubic", 6),
        ("newton-schulz", "polar-express", 6),
        ("newton-schulz", "muon", 6),
        ("newton-schulz", "polar-express", 14),
    ),
    trials: int = 3,
) -> tuple[list, pd.DataFrame]:
    """Theorem 2.2 (``osa.thm22``) on random stacks, one verdict row per basis.

    With h = 1 the value width is d, so W_V, W_O are d×d orthogonal (Stiefel, Sec. 4.1);
    the query-key init of Sec. 4.2 needs 2 d_v <= d, so queries and keys use width d/2
    (Stiefel [W_Q, W_K]) — the theorem puts no condition on them. Each layer draws fresh
    weights. Measured: max over layers of max_i |λ_i(Σ_l) − λ_i(Σ_0)| / λ_max(Σ_0), and
    ||A_lᵀA_l − I||₂ of every layer (the hypothesis).

    Parameters
    ----------
    seed : int
    n, d, depth : int
        X_0 is (n, d); ``depth`` layers.
    alphas : sequence of float
    bases : sequence of (basis, schedule, K)
    trials : int
        Stacks per alpha.

    Returns
    -------
    rows : list of VerdictRow
        One per basis.
    frame : DataFrame
        One row per (basis, alpha, stack, layer): rel_eig_dev, rank, rank0, a_orth_error.
    """
    if d < 2:
        raise InputError(f"d must be >= 2, got {d}")
    recs = []
    seeds = spawn_seeds(seed, trials * len(alphas))
    i = 0
    for a in alphas:
        for _ in range(trials):
            s = seeds[i]
            i += 1
            g = torch_generator(s)
            x0 = torch.randn(1, n, d, generator=g, dtype=torch.float64) / math.sqrt(d)
            layers = []
            for _ in range(depth):
                w_q, w_k = init_qk(d, d // 2, 1, g, torch.float64)
                w_v, w_o = init_vo(d, d, 1, g, torch.float64)  # d×d orthogonal each
                layers.append((w_q, w_k, w_v, w_o))
            lam0 = torch.linalg.eigvalsh(x0[0] @ x0[0].mT)
            for basis, sch, k in bases:
                x = x0
                label = "qr" if basis == "qr" else f"NS {schedule_name(sch)} K={k}"
                for layer, (w_q, w_k, w_v, w_o) in enumerate(layers, start=1):
                    y = osa_heads(x, w_q, w_k, w_v, a, basis=basis, ns_steps=k, ns_coefficients=sch, eps=0.0)
                    am = attention_matrix(x, w_q, w_k, a, basis, k, sch)[0, 0]  # (N, N), the A just applied
                    a_orth = float(torch.linalg.matrix_norm(am.mT @ am - torch.eye(n, dtype=am.dtype), ord=2))
                    x = torch.einsum("bhnv,hvd->bnd", y, w_o)
                    lam = torch.linalg.eigvalsh(x[0] @ x[0].mT)
                    recs.append(
                        {
                            "basis": label,
                            "alpha": a,
                            "seed": s,
                            "layer": layer,
                            "rel_eig_dev": float((lam - lam0).abs().max() / lam0.abs().max()),
                            "rank": int((lam > 1e-10 * lam.max()).sum()),
                            "rank0": int((lam0 > 1e-10 * lam0.max()).sum()),
                            "a_orth_error": a_orth,
                        }
                    )
    frame = pd.DataFrame(recs)

    def unmet(grp: pd.DataFrame) -> str | None:
        a_dev = float(grp.a_orth_error.max())
        if a_dev <= F64_TOL:
            return None
        return (
            f"the layers' A are not orthogonal (max ||AᵀA − I||₂ = {a_dev:.3g}): this basis gives A = exp(S) "
            f"only up to the Newton–Schulz orthogonality error (Thm 3.1)"
        )

    def note(grp: pd.DataFrame, worst: pd.Series) -> str:
        return (
            f"max relative eigenvalue change {worst.rel_eig_dev:.2e} (layer {int(worst.layer)}, alpha={worst.alpha:g}, "
            f"seed={int(worst.seed)}); rank kept in {int((grp['rank'] == grp['rank0']).sum())}/{len(grp)}; "
            f"max ||A_lᵀA_l − I||₂ = {float(grp.a_orth_error.max()):.2e}"
        )

    rows = tightest_rows(
        "osa.thm22", frame, observed="rel_eig_dev", tol=F64_TOL, by="basis", seed=seed, unmet=unmet, note=note,
        note_first=True,
        params=lambda label, _grp: {"basis": label, "depth": depth, "alpha": ",".join(f"{a:g}" for a in alphas)},
    )  # fmt: skip
    return rows, frame
