"""`attnspec osa-check`: the Orthogonal Self-Attention theorem battery.

A thin layer over :func:`attnspec.theory.osa.check_all`: parse options, run the checks,
print the verdict table (or JSON with ``--json``), and with ``--out`` write the tidy
tables, ``meta.json`` and the figures (made from the saved tables).
"""

from __future__ import annotations

import time
from typing import Annotated

import pandas as pd
import typer

from attnspec.cli._common import (
    JsonOpt,
    OutOpt,
    SeedOpt,
    claim_out_dir,
    err_console,
    out_console,
    user_errors,
    whole_output,
)
from attnspec.errors import InputError
from attnspec.verdicts import VerdictRow

KIND = "osa-check"
DEFAULT_ALPHAS = (0.05, 0.5, 2.0)
DEFAULT_SCHEDULES = ("cubic", "muon", "polar-express")


def parse_schedule(text: str) -> str | list[tuple[float, ...]]:
    """A schedule option: a name, or custom coefficients ``a,b[,c]`` (one step, repeated)
    or ``a,b,c;a,b,c;...`` (one tuple per step, the last repeated)."""
    from attnspec.linalg import SCHEDULES

    t = text.strip()
    if any(ch.isdigit() for ch in t):
        try:
            steps = [tuple(float(v) for v in part.split(",")) for part in t.split(";") if part.strip()]
        except ValueError:
            raise InputError(
                f"--schedule must be one of {', '.join(SCHEDULES)} or coefficients like '1.5,-0.5' or "
                f"'3,-3.2,1.2;1.875,-1.25,0.375', got {text!r}"
            ) from None
        return steps
    return t


#: Largest |alpha| accepted. The Theorem 3.1 bounds grow like e^{2‖αS‖}, which overflows
#: float64 once ‖αS‖ > 355 (reached near |alpha| = 50 on these instances), and exp(αS)
#: itself loses orthogonality to rounding long before: beyond this the verdicts would
#: report float64 rounding, not the theorems.
ALPHA_MAX = 20.0
#: A Newton–Schulz schedule drives singular values in [0, 1] towards 1. One whose scalar map
#: sends some singular value above this within the checked steps is not an orthogonalisation:
#: its iterates overflow or break the eigen-solvers of the checks (e.g. '3,0' after 7 steps).
NS_BLOWUP = 1e3
#: Steps the checks run a schedule for, besides --steps (the Jacobian and basis checks use
#: 6 and 14 steps).
NS_CHECKED_STEPS = 14


def validate_options(alphas: tuple[float, ...], steps: int, schedules: list, d_model: int, d_v: int,
                     trials: int) -> None:
    """Refuse option values the checks cannot honour, naming the option (before computing)."""
    import math

    import numpy as np

    from attnspec.linalg import ns_schedule

    for a in alphas:
        if not math.isfinite(a) or abs(a) > ALPHA_MAX:
            raise InputError(f"--alpha must be a finite number with |alpha| <= {ALPHA_MAX:g} (beyond, the bounds overflow "
                             f"float64 and exp(alpha S) is rounding noise), got {a!r}")
    if steps < 0:
        raise InputError(f"--steps must be an integer >= 0, got {steps}")
    if d_v < 1:
        raise InputError(f"--d-v must be >= 1 (and 2*d_v <= d_model = {d_model}), got {d_v}")
    if d_model < 2:
        raise InputError(f"--d-model must be >= 2, got {d_model}")
    if 2 * d_v > d_model:
        raise InputError(f"--d-v must satisfy 2*d_v <= d_model (--d-model), got d_v = {d_v}, d_model = {d_model}")
    if trials < 1:
        raise InputError(f"--trials must be >= 1, got {trials}")
    k_max = max(steps, NS_CHECKED_STEPS)
    sigma = np.linspace(0.0, 1.0, 2001)  # singular values after Frobenius normalisation
    for sch in schedules:
        name = sch if isinstance(sch, str) else ";".join(",".join(f"{v:g}" for v in t) for t in sch)
        try:
            coeffs = ns_schedule(sch, k_max)
        except InputError as e:
            raise InputError(f"--schedule {name!r}: {e}") from None
        x = sigma.copy()
        # X <- aX + b X XᵀX + c (XXᵀ)²X maps each singular value by σ <- aσ + bσ³ + cσ⁵
        with np.errstate(all="ignore"):
            for k, c in enumerate(coeffs, start=1):
                c = tuple(c) + (0.0,) * (3 - len(c))
                x = c[0] * x + c[1] * x**3 + c[2] * x**5
                if not np.all(np.isfinite(x)) or np.max(np.abs(x)) > NS_BLOWUP:
                    raise InputError(f"--schedule {name!r} diverges: after {k} Newton–Schulz steps a singular value in "
                                     f"[0, 1] exceeds {NS_BLOWUP:g} (the checks run {k_max} steps); use coefficients "
                                     "whose iteration stays bounded")


def _uniform_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """Parameters differ in type between claims (N = 256 here, "6..96" there): store
    mixed-type object columns as text so parquet accepts them."""
    for col in frame.columns:
        if frame[col].dtype == object:
            kinds = {type(v) for v in frame[col] if v is not None}
            if len(kinds) > 1:
                frame[col] = frame[col].map(lambda v: v if v is None else str(v))
    return frame


def _compact(rows: list[VerdictRow]) -> list[VerdictRow]:
    """For the terminal only: each claim's parameters joined into one ``setting`` column
    (the claims have different parameters; JSON and the parquet table keep them apart)."""
    from dataclasses import replace

    return [replace(r, params={"setting": ", ".join(f"{k}={v}" for k, v in r.params.items())}) for r in rows]


def register(app: typer.Typer) -> None:
    """Register ``osa-check`` on ``app``."""

    @app.command("osa-check")
    def osa_check(
        seed: SeedOpt = 0,
        out: OutOpt = None,
        json_out: JsonOpt = False,
        alpha: Annotated[list[float] | None, typer.Option(
            "--alpha", help="alpha of the Thm 2.1/3.1 instances (finite; repeat the option; default 0.05, 0.5, 2).")] = None,
        steps: Annotated[int, typer.Option(
            "--steps", help="Largest Newton–Schulz step K of the Thm 3.1 sweep (K = 0..steps, >= 0).")] = 12,
        schedule: Annotated[list[str] | None, typer.Option(
            "--schedule", help="Newton–Schulz schedule: cubic, muon, polar-express, or custom 'a,b[,c]' / "
                               "'a,b,c;a,b,c' (repeat the option; default: the three named).")] = None,
        d_model: Annotated[int, typer.Option("--d-model", help="Width d of the Jacobian check.")] = 8,
        d_v: Annotated[int, typer.Option("--d-v", help="Head width of the Jacobian check (2*d_v <= d_model).")] = 4,
        trials: Annotated[int, typer.Option("--trials", help="Random instances per configuration (>= 1).")] = 3,
        timing: Annotated[bool, typer.Option("--timing/--no-timing", help="Time the forward pass for N = 256..4096.")] = True,
        csv: Annotated[bool, typer.Option("--csv", help="Also write every table as CSV (with --out).")] = False,
    ) -> None:
        """Check the OSA theorems (Thm 2.1, SO(N), 3.1, 4.2, 2.2, 4.1/4.3/4.4) and print the verdicts."""
        from attnspec.results import check_same_run, environment_meta, write_meta, write_table
        from attnspec.theory.osa import check_all, fitted_exponent
        from attnspec.verdicts import print_verdict_table, verdicts_frame, verdicts_json

        with user_errors():
            alphas = tuple(alpha) if alpha else DEFAULT_ALPHAS
            schedules = [parse_schedule(s) for s in schedule] if schedule else list(DEFAULT_SCHEDULES)
            validate_options(alphas, steps, schedules, d_model, d_v, trials)
            identity = {"seed": seed, "alphas": list(alphas), "steps": steps,
                        "schedules": [s if isinstance(s, str) else [list(t) for t in s] for s in schedules],
                        "d_model": d_model, "d_v": d_v, "trials": trials, "timing": timing}
            if out is not None:
                claim_out_dir(out, "attnspec osa-check")
                check_same_run(out, identity, kind=KIND)
            t0 = time.perf_counter()
            res = check_all(
                seed, alphas=alphas, max_steps=steps, schedules=schedules, d_model=d_model, d_v=d_v,
                trials=trials, timing=timing, progress=lambda m: err_console.print(f"[dim]· {m}[/]"),
            )
            wall = time.perf_counter() - t0
            if json_out:
                out_console.file.write(verdicts_json(res.rows) + "\n")
            else:
                print_verdict_table(_compact(res.rows), title=f"OSA theorem checks (seed {seed})", console=out_console)
            if timing and "timing" in res.tables:
                tm = res.tables["timing"]
                slopes = ", ".join(f"{m} N^{fitted_exponent(tm, m):.2f}" for m in tm.method.unique())
                err_console.print(f"forward time ∝ {slopes} (N = {tm.n.min()}..{tm.n.max()}, d_v = 64)")
            if out is not None:
                with whole_output():
                    write_table(out, "verdicts", _uniform_columns(verdicts_frame(res.rows)), csv=csv)
                    for name, frame in res.tables.items():
                        write_table(out, name, frame, csv=csv)
                    meta = {"kind": KIND, "identity": identity, **identity, "wall_seconds": round(wall, 3),
                            "tables": ["verdicts", *res.tables], **environment_meta()}
                    write_meta(out, meta)
                    from attnspec.plots.osa import plot_osa_check

                    paths = plot_osa_check(out)
                    err_console.print(f"wrote {len(res.tables) + 1} tables, meta.json and {len(paths)} figure files to {out}")
            n_viol = sum(r.verdict == "violated" for r in res.rows)
            err_console.print(f"{len(res.rows)} verdicts, {n_viol} violated, in {wall:.1f} s")
