"""`attnspec sa-check`: sparse expressivity of self-attention (Likhosherstov et al. 2021)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated

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

if TYPE_CHECKING:
    import pandas as pd

_HELP = """Check the sparse-expressivity construction SA(X) = exp(X W_Q W_Kᵀ Xᵀ) ≈ A/eps.

Builds a positive L×L matrix A with k nonzeros per row in [m, M], measures the construction
X = (B Rᵀ, Rᵀ) (B = log(A/eps) on the support) with Gaussian and orthogonal R, finds the
minimal d reaching P(‖B − B̂‖∞ <= delta) >= 1 − beta, and prints a verdict per claim and
reading (holds / violated / vacuous / loose). --out writes sa.parquet, sa_verdicts.parquet,
error_map.parquet, meta.json and figures; --json prints the verdict rows only.
"""

FULL_SWEEP_L = (64, 128, 256, 512, 1024, 2048, 4096)
FULL_SWEEP_K = (1, 2, 4, 8, 16, 32)


def _int_list(name: str, text: str) -> list[int]:
    from attnspec.errors import InputError

    try:
        vals = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise InputError(f"{name} must be a comma list of integers, got {text!r}") from None
    if not vals:
        raise InputError(f"{name} must list at least one integer, got {text!r}")
    for v in vals:
        if v < 1:
            raise InputError(f"{name} values must be >= 1, got {v}")
    return vals


def sa_check(
    L: Annotated[int, typer.Option("--L", help="Sequence length L (A is L×L), >= 2.")] = 512,
    k: Annotated[int, typer.Option("--k", help="Nonzeros per row of A, in [1, L].")] = 8,
    eps: Annotated[float, typer.Option("--eps", help="The eps of B = log(A/eps) (off-support level), > 0.")] = 0.01,
    delta: Annotated[float, typer.Option("--delta", help="Target ‖B − B̂‖∞ <= delta (the notes' ε'), > 0.")] = 0.1,
    m: Annotated[float, typer.Option("--m", help="Smallest nonzero entry of A, > 0.")] = 0.1,
    M: Annotated[float, typer.Option("--M", help="Largest entry of A, >= m.")] = 1.0,
    beta: Annotated[float, typer.Option("--beta", help="d* is the least d with success >= 1 − beta; in (0, 1).")] = 0.1,
    trials: Annotated[int, typer.Option("--trials", help="Monte Carlo trials per d, >= 10.")] = 200,
    d: Annotated[int | None, typer.Option("--d", help="Also measure every error at this projection dimension, >= 1.")] = None,
    support: Annotated[str, typer.Option("--support", help="Support of A: random, banded or both (k per row and column).")] = "random",
    factorization: Annotated[str, typer.Option("--factorization", help="B = B1 B2ᵀ: row (B, I) or column (I, Bᵀ).")] = "row",
    sweep: Annotated[bool, typer.Option("--sweep", help="Full (L, k) sweep: L in 64..4096, k in 1..32 (minutes).")] = False,
    sweep_L: Annotated[str, typer.Option("--sweep-L", help="Comma list of L for the d* vs k log L sweep.")] = "64,128,256",
    sweep_k: Annotated[str, typer.Option("--sweep-k", help="Comma list of k for the sweep.")] = "1,2,4,8",
    sweep_trials: Annotated[int, typer.Option("--sweep-trials", help="Draws per sweep configuration (40 from L >= 2048), >= 10.")] = 100,
    threads: Annotated[int, typer.Option("--threads", help="torch CPU threads (1 is fastest on a shared 2-core machine), >= 1.")] = 1,
    plots: Annotated[bool, typer.Option("--plots/--no-plots", help="Write figures with --out.")] = True,
    seed: SeedOpt = 0,
    out: OutOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Check the sparse-expressivity construction of self-attention (issue 4)."""
    with user_errors():
        import pandas as pd
        from rich.markup import escape

        from attnspec.errors import InputError
        from attnspec.theory import expressivity as ex
        from attnspec.verdicts import verdicts_frame, verdicts_json

        # validate everything before any work
        if L < 2:
            raise InputError(f"L must be >= 2, got {L}")
        ex.check_params(L=L, k=k, m=m, M=M, eps=eps, delta=delta, beta=beta)
        if trials < 10:
            raise InputError(f"trials must be >= 10, got {trials}")
        if sweep_trials < 10:
            raise InputError(f"sweep-trials must be >= 10, got {sweep_trials}")
        if threads < 1:
            raise InputError(f"threads must be >= 1, got {threads}")
        if d is not None and d < 1:
            raise InputError(f"d must be >= 1, got {d}")
        if support not in ex.SUPPORTS:
            raise InputError(f"support must be one of {', '.join(ex.SUPPORTS)}, got {support!r}")
        if factorization not in ex.FACTORIZATIONS:
            raise InputError(f"factorization must be one of {', '.join(ex.FACTORIZATIONS)}, got {factorization!r}")
        Ls = list(FULL_SWEEP_L) if sweep else _int_list("sweep-L", sweep_L)
        ks = list(FULL_SWEEP_K) if sweep else _int_list("sweep-k", sweep_k)
        if min(Ls) < 2:
            raise InputError(f"sweep-L values must be >= 2, got {min(Ls)}")
        too_big = [kk for kk in ks if kk > max(Ls)]
        if too_big:  # the sweep skips k > L; a k above every L would silently vanish
            raise InputError(f"--sweep-k values must be in [1, max(--sweep-L)] = [1, {max(Ls)}], got {too_big[0]}")
        claim_out_dir(out, "attnspec sa-check")

        cfg = ex.Config(L=L, k=k, eps=eps, delta=delta, m=m, M=M, beta=beta, trials=trials, support=support,
                        factorization=factorization, seed=seed, d=d)
        import torch

        previous_threads = torch.get_num_threads()
        torch.set_num_threads(threads)
        start = time.time()
        cpu0 = time.process_time()

        def say(msg: str) -> None:
            err_console.print(f"[dim]{time.time() - start:6.1f} s  {escape(msg)}[/]", highlight=False)

        try:
            frame, rows = ex.simulate(cfg, progress=say)
            sw = ex.sweep(Ls, ks, eps=eps, delta=delta, m=m, M=M, beta=beta, trials=sweep_trials, support=support,
                          factorization=factorization, seed=seed, progress=say)
            fits = ex.fit_d_star(sw)
            rows += ex.check_sweep(sw, fits)
            say("error-map instance")
            em = ex.error_map(cfg)
        finally:
            torch.set_num_threads(previous_threads)
        wall = time.time() - start
        cpu = time.process_time() - cpu0

        if out is not None:
            with whole_output():
                from attnspec.results import environment_meta, write_meta, write_table

                sa = pd.concat([frame, sw, fits], ignore_index=True)
                write_table(out, "sa", sa)
                write_table(out, "sa_verdicts", _storable(verdicts_frame(rows)))
                write_table(out, "error_map", em)
                meta = {"kind": "sa-check", "command": "attnspec sa-check",
                        "identity": {"L": L, "k": k, "eps": eps, "delta": delta, "m": m, "M": M, "beta": beta,
                                     "trials": trials, "support": support, "factorization": factorization,
                                     "seed": seed, "d": d, "sweep_L": Ls, "sweep_k": ks, "sweep_trials": sweep_trials},
                        "seed": seed, "threads": threads, "wall_seconds": round(wall, 2), "cpu_seconds": round(cpu, 2),
                        **environment_meta()}
                write_meta(out, meta)
                if plots:
                    from attnspec.plots.expressivity import all_figures

                    paths = all_figures(out)
                    say(f"{len(paths)} figure files written")
                err_console.print(f"results written to {out}", highlight=False)
        if json_out:
            typer.echo(verdicts_json(rows))
            return
        _print(rows, wall)


def _storable(frame: "pd.DataFrame") -> "pd.DataFrame":
    """Parameter columns that mix numbers and ranges ("64..256") are stored as text."""
    frame = frame.copy()
    for c in frame.columns:
        if frame[c].dtype == object:
            kinds = {type(v) for v in frame[c] if v is not None}
            if len(kinds) > 1:
                frame[c] = [None if v is None else str(v) for v in frame[c]]
    return frame


def _print(rows: list, wall: float) -> None:
    from rich.console import Console

    from attnspec.verdicts import print_verdict_table

    shown = rows  # print_verdict_table escapes rich markup itself
    # a table this wide is unreadable at 80 columns: when stdout is not a terminal, use 200
    console = out_console if out_console.is_terminal else Console(width=200)
    print_verdict_table(shown, title="sa-check: sparse expressivity of self-attention (Likhosherstov et al. 2021)",
                        param_columns=["L", "k", "eps", "delta", "d", "varied"], console=console)
    counts = {v: sum(r.verdict == v for r in rows) for v in ("holds", "violated", "vacuous", "loose")}
    console.print(" · ".join(f"{n} {v}" for v, n in counts.items()) + f" · {wall:.1f} s", highlight=False)


def register(app: typer.Typer) -> None:
    """Register ``sa-check`` on ``app``."""
    app.command("sa-check", help=_HELP)(sa_check)
