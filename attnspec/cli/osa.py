"""`attnspec osa-check`: the Orthogonal Self-Attention theorem battery.

A thin layer over :func:`attnspec.theory.osa.check_all`: parse options, run the checks,
print the verdict table (or JSON with ``--json``), and with ``--out`` write the tidy
tables, ``meta.json`` and the figures (made from the saved tables).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated

import typer

from attnspec.cli._common import JsonOpt, OutOpt, SeedOpt, err_console, out_console, user_errors
from attnspec.errors import InputError

if TYPE_CHECKING:  # pandas and verdicts (torch, SciPy) load only when the command runs
    import pandas as pd

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
            identity = {"seed": seed, "alphas": list(alphas), "steps": steps,
                        "schedules": [s if isinstance(s, str) else [list(t) for t in s] for s in schedules],
                        "d_model": d_model, "d_v": d_v, "trials": trials, "timing": timing}
            if out is not None:
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
