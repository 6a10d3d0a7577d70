"""Theorem 3.1: the orthogonality error ||YᵀY − I_N||₂ of Y = I + B (exp(BᵀSB) − I) Bᵀ for a
Newton–Schulz basis B after K steps, against bounds (10) and (11)
(:mod:`attnspec.theory.osa.thm31_bounds`; claims ``osa.thm31.eq10`` and ``osa.thm31.eq11``).

The statement names no hypothesis on σ(B); its proof uses σ_i(B) ∈ [0, 1] ("by construction":
eq. (9)'s cubic iteration keeps them there, Muon's quintic does not), so both readings are
checked. Everything is computed from r×r matrices (r = 2 d_v): no N×N matrix is formed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
import torch

from attnspec.errors import InputError, check_range
from attnspec.numerics.linalg import Coefficients, expm_skew_eigh, newton_schulz, ns_schedule, ns_step
from attnspec.theory.osa.instances import (
    BOUND_ATOL,
    BOUND_RTOL,
    WEIGHT_LAWS,
    instance_label,
    make_instance,
    schedule_name,
)
from attnspec.theory.osa.layer import _check_alpha
from attnspec.theory.osa.thm31_bounds import bound_10, bound_11
from attnspec.verdicts.classify import VerdictRow


@dataclass(frozen=True)
class OrthogonalityError:
    """One evaluation of Theorem 3.1 (all spectral norms; computed without N×N matrices).

    ``error`` = ||YᵀY − I_N||₂ for Y = I + B (exp(BᵀSB) − I) Bᵀ; ``s_norm`` = ||S||₂;
    ``sigma_min``/``sigma_max``: extreme singular values of B; ``bound10``/``bound11``:
    the right-hand sides of (10) and (11); ``det`` = det Y (Sylvester: det(I_r + C BᵀB)).
    """

    steps: int
    error: float
    s_norm: float
    sigma_min: float
    sigma_max: float
    bound10: float
    bound11: float
    det: float

    def to_dict(self) -> dict[str, float]:
        """The fields as a dict (a table row).

        Returns
        -------
        dict of str to float
        """
        return asdict(self)


def _as64(t: torch.Tensor) -> torch.Tensor:
    return torch.as_tensor(t).detach().to(torch.float64)


def _skew_J(dv: int) -> torch.Tensor:
    """J = [[0, I], [−I, 0]] so that Q Kᵀ − K Qᵀ = [Q, K] J [Q, K]ᵀ."""
    z = torch.zeros(dv, dv, dtype=torch.float64)
    eye = torch.eye(dv, dtype=torch.float64)
    return torch.cat([torch.cat([z, eye], 1), torch.cat([-eye, z], 1)], 0)


def _validate_qk(x: torch.Tensor, w_q: torch.Tensor, w_k: torch.Tensor) -> None:
    if x.dim() != 2:
        raise InputError(f"X must have shape (N, d), got {tuple(x.shape)}")
    if w_q.dim() != 2 or w_q.shape != w_k.shape or w_q.shape[0] != x.shape[1]:
        raise InputError(
            f"W_Q and W_K must both have shape (d, d_v) with d = {x.shape[1]}, got {tuple(w_q.shape)} and {tuple(w_k.shape)}"
        )


def _error_from_basis(
    b: torch.Tensor, m: torch.Tensor, scale: float | torch.Tensor, expm: str = "eigh"
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(||YᵀY − I||₂, det Y, σ(B)) for Y = I + B C Bᵀ, C = exp(BᵀSB) − I.

    b (..., N, r), m (..., N, 2 d_v), ``scale`` a number or a tensor broadcasting against
    [S] = Bᵀ S B (..., r, r) (one scale per alpha: b and m (T, 1, N, .), scale (1, A, 1, 1)).
    YᵀY − I = B (C + Cᵀ + Cᵀ BᵀB C) Bᵀ lives in span(B): with B = Q_B R_B its norm is
    ||R_B H R_Bᵀ||₂ (small matrices only). ``expm="eigh"`` computes exp(BᵀSB) from the
    eigendecomposition of i·BᵀSB (orthogonal to ~1e-15, the theorem's exact-arithmetic
    setting); ``expm="torch"`` uses ``torch.linalg.matrix_exp`` as the layer does (its
    float64 Taylor approximant leaves ~1e-13 of non-orthogonality at small norms).
    """
    j = _skew_J(m.shape[-1] // 2)
    bm = b.mT @ m  # (..., r, 2 d_v)
    s_small = scale * (bm @ j @ bm.mT)  # [S] = Bᵀ S B, (..., r, r)
    eye = torch.eye(s_small.shape[-1], dtype=torch.float64)
    c = (expm_skew_eigh(s_small) if expm == "eigh" else torch.linalg.matrix_exp(s_small)) - eye
    g = b.mT @ b  # (..., r, r)
    h = c + c.mT + c.mT @ g @ c
    _, rb = torch.linalg.qr(b, mode="reduced")  # B = Q_B R_B
    err = torch.linalg.matrix_norm(rb @ h @ rb.mT, ord=2)
    return err, torch.linalg.det(eye + c @ g), torch.linalg.svdvals(rb)


def orthogonality_errors(
    x: torch.Tensor,
    w_q: torch.Tensor,
    w_k: torch.Tensor,
    alpha: float,
    steps: int,
    coefficients: Coefficients = "cubic",
    eps: float = 0.0,
    expm: str = "eigh",
) -> list[OrthogonalityError]:
    """:func:`orthogonality_error` for every K = 0..steps in one Newton–Schulz pass.

    Parameters
    ----------
    x : Tensor (N, d)
    w_q, w_k : Tensor (d, d_v)
    alpha : float
    steps : int
        The largest K.
    coefficients, eps, expm
        As in :func:`orthogonality_error`.

    Returns
    -------
    list of OrthogonalityError
        steps + 1 entries, K = 0..steps.
    """
    _check_alpha(alpha)
    check_range("eps", float(eps), low=0.0)
    if expm not in ("eigh", "torch"):
        raise InputError(f"expm must be 'eigh' or 'torch', got {expm!r}")
    ns_schedule(coefficients, steps)
    x, w_q, w_k = _as64(x), _as64(w_q), _as64(w_k)
    _validate_qk(x, w_q, w_k)
    return _errors_batched(x[None], w_q[None], w_k[None], [float(alpha)], steps, coefficients, eps, expm)[(0, 0)]


def orthogonality_error(
    X: torch.Tensor,
    W_Q: torch.Tensor,
    W_K: torch.Tensor,
    alpha: float,
    steps: int,
    coefficients: Coefficients = "cubic",
    eps: float = 0.0,
    expm: str = "eigh",
) -> OrthogonalityError:
    """Theorem 3.1 for one instance: error, ||S||₂, σ(B) range and bounds (10), (11).

    Parameters
    ----------
    X : Tensor (N, d)
    W_Q, W_K : Tensor (d, d_v)
    alpha : float
        Finite scale; S = (alpha / sqrt(d_v)) (Q Kᵀ − K Qᵀ).
    steps : int
        Newton–Schulz iterations K >= 0 from M_0 = M / (||M||_F + eps), M = [Q, K].
    coefficients : str or tuple or list
        Newton–Schulz schedule (see :func:`attnspec.numerics.linalg.ns_schedule`).
    eps : float
        >= 0.
    expm : {"eigh", "torch"}
        How the r×r exp(BᵀSB) is computed: "eigh" (accurate to rounding, the default) or
        ``torch.linalg.matrix_exp`` (what the layer uses).

    Returns
    -------
    OrthogonalityError
        Computed in float64 from r×r matrices (r = 2 d_v); never forms N×N.
    """
    return orthogonality_errors(X, W_Q, W_K, alpha, steps, coefficients, eps, expm)[-1]


def orthogonality_error_dense(
    X: torch.Tensor,
    W_Q: torch.Tensor,
    W_K: torch.Tensor,
    alpha: float,
    steps: int,
    coefficients: Coefficients = "cubic",
    eps: float = 0.0,
) -> dict[str, float]:
    """Reference for :func:`orthogonality_error` with N×N matrices (small N only).

    Parameters
    ----------
    X : Tensor (N, d)
    W_Q, W_K : Tensor (d, d_v)
    alpha : float
    steps : int
    coefficients : str or tuple or list
    eps : float

    Returns
    -------
    dict
        error, s_norm, sigma_min, sigma_max, bound10, bound11, det (floats).
    """
    x, w_q, w_k = _as64(X), _as64(W_Q), _as64(W_K)
    d_v = w_q.shape[1]
    q, k = x @ w_q, x @ w_k
    s = float(alpha) / math.sqrt(d_v) * (q @ k.mT - k @ q.mT)
    b = newton_schulz(torch.cat([q, k], 1), steps, coefficients, eps)
    r = b.shape[1]
    n = x.shape[0]
    y = (
        torch.eye(n, dtype=torch.float64)
        + b @ (expm_skew_eigh(b.mT @ s @ b) - torch.eye(r, dtype=torch.float64)) @ b.mT
    )
    sv = torch.linalg.svdvals(b)
    s_norm = float(torch.linalg.matrix_norm(s, ord=2))
    growth = math.expm1(s_norm) ** 2  # written out again on purpose: an independent reference (small ||S|| only)
    return {
        "error": float(torch.linalg.matrix_norm(y.mT @ y - torch.eye(n, dtype=torch.float64), ord=2)),
        "s_norm": s_norm,
        "sigma_min": float(sv.min()),
        "sigma_max": float(sv.max()),
        "bound10": growth * float((sv**2 * (sv**2 - 1)).abs().max()),
        "bound11": 0.25 * growth,
        "det": float(torch.linalg.det(y)),
    }


def simulate_orthogonality(
    seed: int,
    schedules: Sequence[Coefficients] = ("cubic", "muon", "polar-express"),
    max_steps: int = 12,
    alphas: Sequence[float] = (0.05, 0.5, 2.0),
    ns: Sequence[int] = (16, 64, 256),
    d_vs: Sequence[int] = (2, 8),
    weights: Sequence[str] = WEIGHT_LAWS,
    trials: int = 3,
    d: int = 32,
    eps: float = 0.0,
) -> pd.DataFrame:
    """Tidy table of Theorem 3.1 evaluations: one row per (schedule, instance, K).

    Instances: for each (N, d_v, weights, trial) one seeded (X, W_Q, W_K) (see
    :func:`attnspec.theory.osa.instances.make_instance`, d = max(d, 2 d_v)), shared by every
    alpha and schedule.

    Parameters
    ----------
    seed : int
    schedules : sequence
        Names or custom coefficients.
    max_steps : int
        K = 0..max_steps.
    alphas : sequence of float
    ns, d_vs : sequence of int
        N and d_v of the instances.
    weights : sequence of str
        "stiefel" and/or "gaussian".
    trials : int
        Instances per (N, d_v, weights).
    d : int
        Token width.
    eps : float
        Newton–Schulz pre-normalisation eps.

    Returns
    -------
    DataFrame
        Columns schedule, steps, n, d_v, alpha, weights, seed, error, s_norm, sigma_min,
        sigma_max, bound10, bound11, det.
    """
    from attnspec.numerics.stats import spawn_seeds

    for a in alphas:
        _check_alpha(a)
    if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 0:
        raise InputError(f"max_steps must be an integer >= 0, got {max_steps!r}")
    for sch in schedules:
        ns_schedule(sch, 1)
    for dv in d_vs:
        if "stiefel" in weights and 2 * dv > d:
            raise InputError(f"the Stiefel query-key initialisation needs 2*d_v <= d_model, got d_v={dv}, d_model={d}")
    if trials < 1:
        raise InputError(f"trials must be >= 1, got {trials}")
    configs = [(n, dv, w) for n in ns for dv in d_vs for w in weights for _ in range(trials)]
    seeds = spawn_seeds(seed, len(configs))
    # Instances of one (N, d_v, weights) share their shapes: every (instance, alpha) of a group
    # is one batch through the K loop (same numbers as orthogonality_errors per instance).
    groups: dict[tuple, list] = {}
    for (n, dv, w), s in zip(configs, seeds):
        groups.setdefault((n, dv, w), []).append((s, make_instance(s, n, max(d, 2 * dv), dv, w)))
    per: dict[tuple, list] = {}
    for (n, dv, w), members in groups.items():
        x = torch.stack([m[1][0] for m in members])
        w_q = torch.stack([m[1][1] for m in members])
        w_k = torch.stack([m[1][2] for m in members])
        for sch in schedules:
            errs = _errors_batched(x, w_q, w_k, [float(a) for a in alphas], max_steps, sch, eps)
            for (i, ai), lst in errs.items():
                per[(members[i][0], ai, schedule_name(sch))] = (n, dv, w, lst)
    recs = []
    for (n, dv, w), s in zip(configs, seeds):
        for ai, a in enumerate(alphas):
            for sch in schedules:
                name = schedule_name(sch)
                for e in per[(s, ai, name)][3]:
                    recs.append(
                        {
                            "schedule": name,
                            "steps": e.steps,
                            "n": n,
                            "d_v": dv,
                            "alpha": float(a),
                            "weights": w,
                            "seed": s,
                            **{k: v for k, v in e.to_dict().items() if k != "steps"},
                        }
                    )
    return pd.DataFrame(recs)


def _errors_batched(
    x: torch.Tensor,
    w_q: torch.Tensor,
    w_k: torch.Tensor,
    alphas: list[float],
    steps: int,
    coefficients: Coefficients,
    eps: float,
    expm: str = "eigh",
) -> dict[tuple[int, int], list[OrthogonalityError]]:
    """:func:`orthogonality_errors` for T instances × A alphas at once.

    x (T, N, d), w_q and w_k (T, d, d_v). Returns {(instance, alpha index): [K = 0..steps]}.
    """
    for a in alphas:
        _check_alpha(a)
    schedule = ns_schedule(coefficients, steps)
    t, na = x.shape[0], len(alphas)
    d_v = w_q.shape[-1]
    m = torch.cat([x @ w_q, x @ w_k], dim=-1)  # (T, N, 2 d_v)
    scale = torch.tensor(alphas, dtype=torch.float64) / math.sqrt(d_v)  # (A,)
    j = _skew_J(d_v)
    _, rm = torch.linalg.qr(m, mode="reduced")
    s_norm = scale.abs()[None, :] * torch.linalg.matrix_norm(rm @ j @ rm.mT, ord=2)[:, None]  # (T, A)
    b = m / (torch.linalg.matrix_norm(m, ord="fro", keepdim=True) + eps)  # M_0, (T, N, r)
    out: dict[tuple[int, int], list[OrthogonalityError]] = {(i, ai): [] for i in range(t) for ai in range(na)}
    for k in range(steps + 1):
        if k > 0:
            b = ns_step(b, schedule[k - 1])
        err, det, svr = _error_from_basis(b[:, None], m[:, None], scale[None, :, None, None], expm)  # (T, A)
        sv = torch.linalg.svdvals(b)  # (T, r)
        for (i, ai), errors in out.items():
            norm = float(s_norm[i, ai])
            errors.append(
                OrthogonalityError(
                    k, float(err[i, ai]), norm, float(svr[i, 0].min()), float(svr[i, 0].max()), bound_10(norm, sv[i]),
                    bound_11(norm), float(det[i, ai]),
                )
            )  # fmt: skip
    return out


def orthogonality_violations(frame: pd.DataFrame) -> pd.DataFrame:
    """Every evaluation that exceeds bound (10) or (11), one row per (evaluation, bound).

    Parameters
    ----------
    frame : DataFrame
        The table of :func:`simulate_orthogonality`.

    Returns
    -------
    DataFrame
        Columns bound_name, schedule, steps, n, d_v, alpha, weights, seed, error, bound_value,
        ratio, sigma_min, sigma_max, s_norm.
    """
    out = []
    for bound, label in (("bound10", "(10)"), ("bound11", "(11)")):
        b = frame[bound]
        v = frame[np.isfinite(b) & (frame["error"] > b * (1 + BOUND_RTOL) + BOUND_ATOL)].copy()
        v.insert(0, "bound_name", label)
        v["ratio"] = v["error"] / v[bound]
        v["bound_value"] = v[bound]
        out.append(v.drop(columns=["bound10", "bound11"]))
    cols = ["bound_name", "schedule", "steps", "n", "d_v", "alpha", "weights", "seed", "error", "bound_value", "ratio",
            "sigma_min", "sigma_max", "s_norm"]  # fmt: skip
    res = pd.concat(out, ignore_index=True) if out else pd.DataFrame(columns=cols)
    return res[cols]


#: The two readings of Theorem 3.1 (see the module docstring), for eq. (9)'s cubic B.
READINGS: tuple[str, ...] = ("as-stated", "sigma-le-1")
#: The same two readings for a B from another schedule (Muon, Polar Express, custom): the
#: theorem defines B(X) by eq. (9)'s cubic iteration, so these rows measure a variant.
VARIANT_READINGS: dict[str, str] = {"as-stated": "variant", "sigma-le-1": "variant-sigma-le-1"}
_CLAIMS = {"bound10": "osa.thm31.eq10", "bound11": "osa.thm31.eq11"}
#: eq. (9): M_{k+1} = 3/2 M_k − 1/2 M_k M_kᵀ M_k, by name or as custom coefficients.
EQ9_NAMES: frozenset[str] = frozenset({"cubic", "custom(1.5,-0.5)", "custom(1.5,-0.5,0)"})


def is_eq9(schedule: str) -> bool:
    """Whether a schedule's display name is eq. (9)'s cubic iteration (the theorem's B).

    Parameters
    ----------
    schedule : str
        As in the ``schedule`` column (:func:`attnspec.theory.osa.instances.schedule_name`).

    Returns
    -------
    bool
    """
    return schedule in EQ9_NAMES


def verdicts_orthogonality(frame: pd.DataFrame, seed: int) -> list[VerdictRow]:
    """Verdict rows for bounds (10) and (11), per schedule, under two readings: ``as-stated``
    and ``sigma-le-1`` for eq. (9)'s cubic B, the variant readings (``measured``,
    :func:`attnspec.theorem.measured.as_variant`) for any other schedule. Each row is decided by
    :func:`attnspec.theorem.measured.margin_rows`: at the worst violation, else at the tightest
    case measurable above rounding (error > BOUND_ATOL).

    Parameters
    ----------
    frame : DataFrame
        The table of :func:`simulate_orthogonality`, one row per (schedule, instance, K).
    seed : int
        The root seed (recorded in each row).

    Returns
    -------
    list of VerdictRow
        Two bounds × two readings per schedule.
    """
    from attnspec.theorem.measured import as_variant, margin_rows, unmet_row

    def note(grp: pd.DataFrame, w: pd.Series) -> str:
        at = instance_label(n=int(w.n), d_v=int(w.d_v), alpha=float(w.alpha), weights=w.weights, K=int(w.steps),
                            seed=int(w.seed))  # fmt: skip
        return f"at {at} (||S||₂ {w.s_norm:.3g}); σ(B) ∈ [{grp.sigma_min.min():.3g}, {grp.sigma_max.max():.4g}]"

    rows = []
    for sch, grp in frame.groupby("schedule", sort=False):
        eq9 = is_eq9(str(sch))
        params = {"schedule": sch, "K": f"{grp.steps.min()}..{grp.steps.max()}"}
        why = f"Theorem 3.1's B(X) is eq. (9)'s cubic iteration, here B comes from the {sch} schedule"
        for reading in READINGS:
            sub = grp if reading == "as-stated" else grp[~(grp.sigma_max > 1 + 1e-12)]
            name = reading if eq9 else VARIANT_READINGS[reading]
            for bound, claim in _CLAIMS.items():
                if sub.empty:  # K = 0 meets it unless the table holds only later steps
                    unmet = f"σ_max(B) > 1 in all {len(grp)} evaluations; the proof needs σ_i(B) ∈ [0, 1]"
                    row = unmet_row(claim, unmet, reading=name, params=params, seed=seed)
                    rows.append(row if eq9 else as_variant(row, why))
                    continue
                (row,) = margin_rows(
                    claim, sub, observed="error", bound=bound, reading=name, params=lambda _k, _g, p=params: p, seed=seed,
                    rtol=BOUND_RTOL, atol=BOUND_ATOL, label="error", note=note, at_paper_params=eq9,
                )  # fmt: skip
                rows.append(row if eq9 else as_variant(row, why))
    return rows
