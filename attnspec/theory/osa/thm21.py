"""Theorem 2.1 (the low-rank exponential) and A = exp(S) ∈ SO(N) (claims ``osa.thm21`` and
``osa.thm21.so_n``; their statements and readings are in :mod:`attnspec.theory.osa.claims`).

A finite-K Newton–Schulz basis is not orthonormal: there Theorem 2.1's hypothesis is not met,
and the layer's measured deviation from SO(N) is ``hypothesis-unmet``, not a counterexample.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd
import torch

from attnspec.numerics.linalg import Coefficients, expm_skew_eigh, ns_schedule, ns_step, qr_basis, skew_small
from attnspec.numerics.stats import spawn_seeds
from attnspec.theorem.tightest import tightest_rows
from attnspec.theory.osa.instances import F64_TOL, SHARED_SPAN, instance_label, make_instance, schedule_name
from attnspec.theory.osa.thm31 import _error_from_basis, orthogonality_error
from attnspec.verdicts.classify import VerdictRow


def converged_ns_basis(m: torch.Tensor, max_steps: int = 100, tol: float = 1e-14) -> tuple[torch.Tensor, int, bool]:
    """Newton–Schulz (Polar Express, then its fixed quintic) until BᵀB is a projector.

    Parameters
    ----------
    m : Tensor (N, r)
    max_steps : int
    tol : float
        Converged means ||(BᵀB)² − BᵀB||_max <= tol.

    Returns
    -------
    b : Tensor (N, r)
    steps : int
        Steps used.
    converged : bool
    """
    sched = ns_schedule("polar-express", max_steps)
    b = m / torch.linalg.matrix_norm(m, ord="fro")
    for k in range(max_steps + 1):
        g = b.mT @ b
        if float((g @ g - g).abs().max()) <= tol:
            return b, k, True
        if k < max_steps:
            b = ns_step(b, sched[k])
    return b, max_steps, False


def check_lowrank_expm(
    seed: int,
    ns: Sequence[int] = (6, 24, 96),
    d_vs: Sequence[int] = (2, 4),
    alphas: Sequence[float] = (0.1, 1.0, 4.0),
    d: int = 16,
) -> tuple[list, pd.DataFrame]:
    """Theorem 2.1 (``osa.thm21``) and exp(S) ∈ SO(N) (``osa.thm21.so_n``, reading
    ``low-rank-formula``) against dense expm, float64.

    For each (N, d_v, alpha, weights) one seeded instance; the low-rank formula with a QR
    basis and with a converged Newton–Schulz basis is compared entrywise with
    ``torch.linalg.matrix_exp(S)``, ``scipy.linalg.expm(S)`` and the eigendecomposition of iS.
    N < 2 d_v (a basis of R^N) and rank[Q, K] < 2 d_v (``shared-span`` weights) are included.

    Parameters
    ----------
    seed : int
    ns, d_vs : sequence of int
    alphas : sequence of float
    d : int
        Token width (at least 2 d_v).

    Returns
    -------
    rows : list of VerdictRow
        Two per basis.
    frame : DataFrame
        One row per (instance, basis): differences to each reference, ||AᵀA − I||₂, det A.
    """
    import scipy.linalg

    configs = [(n, dv, a, w) for w in ("stiefel", SHARED_SPAN) for n in ns for dv in d_vs for a in alphas]
    seeds = spawn_seeds(seed, len(configs))
    recs = []
    for (n, dv, a, law), s in zip(configs, seeds):
        x, w_q, w_k = make_instance(s, n, max(d, 2 * dv), dv, law, x_scale=1.0)
        scale = a / math.sqrt(dv)
        q, k = x @ w_q, x @ w_k
        sd = scale * (q @ k.mT - k @ q.mT)  # (N, N)
        ref_t = torch.linalg.matrix_exp(sd)
        ref_s = torch.from_numpy(scipy.linalg.expm(sd.numpy()))
        ref_e = expm_skew_eigh(sd)
        m = torch.cat([q, k], 1)
        eye_n = torch.eye(n, dtype=torch.float64)
        for basis in ("qr", "newton-schulz"):
            if basis == "qr":
                b, k_used, ok = qr_basis(m), 0, True
            else:
                b, k_used, ok = converged_ns_basis(m)
            ss = skew_small(b, q, k, scale)
            r = ss.shape[-1]
            y = eye_n + b @ (torch.linalg.matrix_exp(ss) - torch.eye(r, dtype=torch.float64)) @ b.mT
            recs.append(
                {
                    "basis": basis,
                    "weights": law,
                    "n": n,
                    "d_v": dv,
                    "alpha": a,
                    "seed": s,
                    "ns_steps": k_used,
                    "converged": ok,
                    "rank_m": int(torch.linalg.matrix_rank(m)),
                    "s_norm": float(torch.linalg.matrix_norm(sd, ord=2)),
                    "diff_torch": float((y - ref_t).abs().max()),
                    "diff_scipy": float((y - ref_s).abs().max()),
                    "diff_eigh": float((y - ref_e).abs().max()),
                    "torch_vs_scipy": float((ref_t - ref_s).abs().max()),
                    "torch_vs_eigh": float((ref_t - ref_e).abs().max()),
                    "scipy_vs_eigh": float((ref_s - ref_e).abs().max()),
                    "orth_error": float(torch.linalg.matrix_norm(y.mT @ y - eye_n, ord=2)),
                    "det": float(torch.linalg.det(y)),
                }
            )
    frame = pd.DataFrame(recs)
    rows = []
    for basis, grp in frame.groupby("basis", sort=False):
        rows += _lowrank_verdicts(basis, grp, seed=seed, ns=ns, alphas=alphas)
    return rows, frame


def _lowrank_verdicts(
    basis: str, grp: pd.DataFrame, *, seed: int, ns: Sequence[int], alphas: Sequence[float]
) -> list[VerdictRow]:
    """``osa.thm21`` and ``osa.thm21.so_n`` (``low-rank-formula``) for one basis, from its converged instances."""
    rows: list[VerdictRow] = []
    not_conv = int((~grp["converged"]).sum())
    grp = grp[grp["converged"]]
    cols = ["diff_torch", "diff_scipy", "diff_eigh"]
    span = {"basis": basis, "N": f"{min(ns)}..{max(ns)}", "alpha": f"{min(alphas):g}..{max(alphas):g}"}

    def note(grp: pd.DataFrame, worst: pd.Series) -> str:
        inst = instance_label(
            n=int(worst.n), d_v=int(worst.d_v), alpha=float(worst.alpha), weights=worst.weights, seed=int(worst.seed)
        )
        extra = f"; NS steps used {int(grp.ns_steps.min())}–{int(grp.ns_steps.max())}" if basis != "qr" else ""
        extra += f"; incl. {int((grp.rank_m < 2 * grp.d_v).sum())} instances with rank[Q, K] < 2 d_v"
        if not_conv:
            extra += f"; {not_conv} instances skipped: Newton–Schulz did not converge in 100 steps"
        return (
            f"max |low-rank − dense| = {grp.diff_torch.max():.2e} (torch matrix_exp), "
            f"{grp.diff_scipy.max():.2e} (scipy expm), {grp.diff_eigh.max():.2e} (eigh of iS); the references "
            f"differ by up to {grp.torch_vs_eigh.max():.2e} (torch vs eigh), {grp.scipy_vs_eigh.max():.2e} "
            f"(scipy vs eigh); worst {inst}{extra}"
        )

    rows += tightest_rows(
        "osa.thm21", grp.assign(diff_max=grp[cols].max(axis=1)), observed="diff_max", tol=F64_TOL, seed=seed,
        params=lambda _kind, _grp: span, note=note, note_first=True,
    )  # fmt: skip
    rows += tightest_rows(
        "osa.thm21.so_n", _with_so_n_residual(grp), observed="so_n_residual", estimate="orth_error", tol=F64_TOL,
        reading="low-rank-formula", seed=seed, params=lambda _kind, _grp: span, note_first=True,
        note=lambda grp, _w: f"{_so_n_head(grp)} (worst {_label(_worst_orth(grp), n=True)})",
    )  # fmt: skip
    return rows


def check_layer_orthogonality(
    seed: int,
    n: int = 256,
    d: int = 32,
    d_v: int = 8,
    alphas: Sequence[float] = (0.1, 1.0),
    ns_steps: int = 6,
    schedules: Sequence[Coefficients] = ("cubic", "muon", "polar-express"),
    trials: int = 4,
) -> tuple[list, pd.DataFrame]:
    """exp(S) ∈ SO(N) for the A the layer applies at K = ``ns_steps`` (``osa.thm21.so_n``,
    reading ``layer``), large N, small-matrix formulas.

    QR is exact up to rounding; a finite-K Newton–Schulz basis is not orthonormal (the paper
    says so in Sec. 3), so Theorem 2.1's hypothesis is not met there: those rows are
    ``hypothesis-unmet`` with the measured deviation.

    Parameters
    ----------
    seed : int
    n, d, d_v : int
        Instance size: X (n, d), heads of width d_v.
    alphas : sequence of float
    ns_steps : int
    schedules : sequence
    trials : int
        Instances per alpha.

    Returns
    -------
    rows : list of VerdictRow
        One per basis (QR, then each schedule).
    frame : DataFrame
        One row per (basis, instance): orth_error = ||AᵀA − I||₂, det, sigma_min/max of B.
    """
    recs = []
    seeds = spawn_seeds(seed + 1, trials * len(alphas))
    i = 0
    for a in alphas:
        for _ in range(trials):
            s = seeds[i]
            i += 1
            x, w_q, w_k = make_instance(s, n, d, d_v, "stiefel")
            m = torch.cat([x @ w_q, x @ w_k], 1)
            err, det, sv = _error_from_basis(qr_basis(m), m, a / math.sqrt(d_v), expm="torch")
            measured = [("qr", "", 0, float(err), float(det), float(sv.min()), float(sv.max()))]
            for sch in schedules:
                e = orthogonality_error(x, w_q, w_k, a, ns_steps, sch, eps=0.0, expm="torch")
                measured.append(
                    ("newton-schulz", schedule_name(sch), ns_steps, e.error, e.det, e.sigma_min, e.sigma_max)
                )
            for basis, sch, k, err, det, smin, smax in measured:
                recs.append(
                    {"basis": basis, "schedule": sch, "ns_steps": k, "n": n, "d_v": d_v, "alpha": a, "seed": s,
                     "orth_error": err, "det": det, "sigma_min": smin, "sigma_max": smax}
                )  # fmt: skip
    frame = pd.DataFrame(recs)
    rows = [
        _layer_verdict(basis, sch, grp, seed=seed, n=n, alphas=alphas, ns_steps=ns_steps)
        for (basis, sch), grp in frame.groupby(["basis", "schedule"], sort=False)
    ]
    return rows, frame


def _layer_verdict(
    basis: str, sch: str, grp: pd.DataFrame, *, seed: int, n: int, alphas: Sequence[float], ns_steps: int
) -> VerdictRow:
    """``osa.thm21.so_n`` (``layer``) for one basis or schedule; hypothesis-unmet where B is not orthonormal."""
    # Theorem 2.1 (hence A = exp(S) ∈ SO(N)) needs B orthonormal: max_i |σ_i(B)² − 1| is
    # its distance from that hypothesis (0 up to rounding for QR; finite K leaves more).
    b_dev = float(max((grp.sigma_max**2 - 1).abs().max(), (grp.sigma_min**2 - 1).abs().max()))
    unmet = (
        (
            f"B after K={ns_steps} Newton–Schulz steps is not orthonormal (max |σ_i(B)² − 1| = {b_dev:.3g}), "
            f"so the fast-path A is not exp(S)"
        )
        if b_dev > F64_TOL
        else None
    )
    label = basis if basis == "qr" else f"NS {sch} K={ns_steps}"

    def note(grp: pd.DataFrame, _w: pd.Series) -> str:
        caveat = "" if basis == "qr" else "; finite K: B is not orthonormal (the paper's Sec. 3 caveat)"
        sigma = f"σ(B) ∈ [{grp.sigma_min.min():.3g}, {grp.sigma_max.max():.3g}]"
        return f"{_so_n_head(grp)}; {sigma}; worst {_label(_worst_orth(grp), n=False)}{caveat}"

    (row,) = tightest_rows(
        "osa.thm21.so_n", _with_so_n_residual(grp), observed="so_n_residual", estimate="orth_error", tol=F64_TOL,
        reading="layer", seed=seed, unmet=lambda _grp: unmet, note=note, note_first=True,
        params=lambda _kind, _grp: {"basis": label, "N": n, "alpha": f"{min(alphas):g}..{max(alphas):g}"},
    )  # fmt: skip
    return row


def _with_so_n_residual(grp: pd.DataFrame) -> pd.DataFrame:
    """A ∈ SO(N) to round-off: each instance's residual is the larger of ||AᵀA − I||₂ and |det A − 1|."""
    return grp.assign(so_n_residual=pd.concat([grp.orth_error, (grp.det - 1).abs()], axis=1).max(axis=1))


def _so_n_head(grp: pd.DataFrame) -> str:
    return f"max ||AᵀA − I||₂ = {grp.orth_error.max():.2e}, max |det A − 1| = {(grp.det - 1).abs().max():.2e}"


def _worst_orth(grp: pd.DataFrame) -> pd.Series:
    """The instance of the largest ||AᵀA − I||₂."""
    return grp.loc[grp["orth_error"].idxmax()]


def _label(w: pd.Series, n: bool) -> str:
    """An instance's label: its alpha and seed, with its N and d_v when ``n``."""
    size = {"n": int(w.n), "d_v": int(w.d_v)} if n else {}
    return instance_label(**size, alpha=float(w.alpha), seed=int(w.seed))
