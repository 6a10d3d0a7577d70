"""Lemma C.1 (||B||₂ <= C) and eq. (9)'s singular-value range, the facts about σ(B) that
Theorems 3.1 and 4.3 rest on (claims ``osa.lemc1`` and ``osa.eq9.range``).

Newton–Schulz acts on every singular value of the pre-normalised M_0 (all in [0, 1]) by the
same odd polynomial (use the SVD), so the largest σ(B) any instance can reach after K steps
is ``max |p_K ∘ … ∘ p_1(σ)|`` over σ ∈ [0, 1]: a scalar computation, exact up to the grid
(:func:`scalar_range`; osa-check refuses a schedule that sends it beyond 10). For eq. (9)'s cubic
p(σ) = 3/2 σ − 1/2 σ³ the range is exactly (0, 1] for σ ∈ (0, 1]:
p(σ) − σ = σ(1 − σ²)/2 >= 0 and 1 − p(σ) = (1 − σ)²(2 + σ)/2 >= 0. The proof's constant √3
is an argument about the cubic: Polar Express reaches 1.99 > √3, so it does not carry over to
the other schedules (a variant, measured), although some C exists.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from attnspec.numerics.linalg import Coefficients, ns_schedule
from attnspec.theorem.measured import as_variant
from attnspec.theorem.tightest import tightest_rows
from attnspec.theory.osa.instances import schedule_name
from attnspec.verdicts.classify import VerdictRow

#: The proof's constant in Lemma C.1.
SQRT3 = math.sqrt(3.0)
#: σ(B) may exceed 1 by rounding only: (1 + 1e-12) is still "<= 1".
SIGMA_RTOL = 1e-12


def iterate_range(coefficients: Coefficients, steps: int, grid: int = 4001) -> pd.DataFrame:
    """min and max |p_k ∘ … ∘ p_1(σ)| over σ ∈ (0, 1] (grid plus σ = 1e-300 and 1e-12), per K.

    Parameters
    ----------
    coefficients : str or tuple or list of tuples
    steps : int
        K = 0..steps.
    grid : int
        Points of (0, 1].

    Returns
    -------
    DataFrame
        One row per K: ``K``, ``sigma_min`` (signed), ``sigma_max`` (of |σ|; inf once the
        iterates overflow).
    """
    x = np.concatenate([np.linspace(0.0, 1.0, grid)[1:], [1e-300, 1e-12]])
    recs = [{"K": 0, "sigma_min": float(x.min()), "sigma_max": float(x.max())}]
    with np.errstate(over="ignore", invalid="ignore"):
        for k, c in enumerate(ns_schedule(coefficients, steps), 1):
            x = sum(coef * x ** (2 * i + 1) for i, coef in enumerate(c))
            top = float(np.max(np.abs(x)))
            recs.append({"K": k, "sigma_min": float(np.min(x)), "sigma_max": top if math.isfinite(top) else math.inf})
    return pd.DataFrame(recs)


def scalar_range(coefficients: Coefficients, steps: int, grid: int = 4001) -> tuple[float, float]:
    """(min, max) of p_k ∘ … ∘ p_1(σ) over σ ∈ (0, 1] and k = 0..steps (:func:`iterate_range`).

    Parameters
    ----------
    coefficients : str or tuple or list of tuples
    steps : int
    grid : int

    Returns
    -------
    tuple of float
        The smallest and largest iterate value (float64).
    """
    t = iterate_range(coefficients, steps, grid)
    return float(t.sigma_min.min()), float(t.sigma_max.max())


def lemma_c1_rows(schedules: Sequence[Coefficients], steps: int, seed: int) -> list[VerdictRow]:
    """``osa.lemc1`` rows: the largest σ(B) each schedule can reach over K = 0..steps, against √3.

    Parameters
    ----------
    schedules : sequence
        Names or custom coefficients.
    steps : int
        K = 0..steps.
    seed : int
        Recorded (the check is deterministic).

    Returns
    -------
    list of VerdictRow
        One per schedule: ``cubic`` (a verdict) or ``other-schedule`` (measured).
    """
    from attnspec.theory.osa.thm31 import is_eq9

    rows = []
    for sch in schedules:
        name = schedule_name(sch)
        cubic = is_eq9(name)
        (row,) = tightest_rows(
            "osa.lemc1", iterate_range(sch, steps), observed="sigma_max", bound=SQRT3, rtol=SIGMA_RTOL,
            reading="cubic" if cubic else "other-schedule", params=lambda *_, name=name: {"schedule": name, "K": f"0..{steps}"},
            seed=seed, note=lambda *_: "max σ(B) over σ(M_0) ∈ (0, 1]: exact, the iteration acts on each singular "
            "value by the same polynomial",
        )  # fmt: skip
        why = f"the proof's √3 argues about eq. (9)'s cubic; the {name} schedule's ||B||₂ is bounded by {row.estimate:.4g}"
        rows.append(dataclasses.replace(row, at_paper_params=True) if cubic else as_variant(row, why))
    return rows


def eq9_range_rows(thm31: pd.DataFrame, steps: int, seed: int) -> list[VerdictRow]:
    """``osa.eq9.range`` rows: eq. (9)'s cubic keeps the nonzero σ(B) in (0, 1].

    Parameters
    ----------
    thm31 : DataFrame
        The table of :func:`attnspec.theory.osa.thm31.simulate_orthogonality` (its cubic rows).
    steps : int
        K = 0..steps of the scalar check.
    seed : int

    Returns
    -------
    list of VerdictRow
        ``scalar`` and (when the table has cubic rows) ``instances``.
    """
    from attnspec.theory.osa.thm31 import EQ9_NAMES

    cub = thm31[thm31.schedule.isin(EQ9_NAMES)]
    tables = {"scalar": iterate_range("cubic", steps), "instances": cub.rename(columns={"steps": "K"})}
    rows = []
    for reading, table in tables.items():
        if table.empty:
            continue
        # a singular value at or below 0 fails the claim σ ∈ (0, 1] whatever the largest one
        table = table.assign(observed=np.where(table.sigma_min <= 0, math.inf, table.sigma_max))
        rows += tightest_rows(
            "osa.eq9.range", table, observed="observed", bound=1.0, rtol=SIGMA_RTOL, loose_factor=None,
            reading=reading, params=lambda _k, g: {"K": f"{g.K.min()}..{g.K.max()}"}, seed=seed,
            estimate="sigma_max", note=lambda g, _w: f"σ ∈ [{g.sigma_min.min():.3g}, {g.sigma_max.max():.17g}] "
            "(the bound 1 is attained as σ → 1: not loose)",
        )  # fmt: skip
    return [dataclasses.replace(r, at_paper_params=True) for r in rows]
