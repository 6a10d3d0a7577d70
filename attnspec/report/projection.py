"""The random-projection measurement of a scaling run, for its appendix page.

A scaling study run with ``projection-k`` applies softmax(Q(RK)ᵀ)(RV) with one random Gaussian
R (k × n, entries N(0, 1/k)) to the model's own Q, K, V (:mod:`attnspec.spectra.projection`).
The rows of RV have norms about √(n/k) times those of V, so its error against PV scales as
√(n/k) whatever P is: the table is kept as a record of that scale, not as a finding (whether a
fixed k suffices is the approximation study's question, :mod:`attnspec.report.approx_part`).
Runs that could not measure it (causal decoders) say why.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

#: The projection dimension the reading follows from the shortest to the longest n (Linformer's Figure 3 uses 128).
READ_K = 128


def _summary(run: Path) -> pd.DataFrame | None:
    from attnspec.storage.results import read_table_if_held

    return read_table_if_held(run, "projection_summary")


def _why_not(run: Path) -> str:
    """Why a scaling run holds no projection measurement."""
    top = json.loads((run / "meta.json").read_text())
    record = top.get("projection") or {}
    if record.get("not_measured"):
        return str(record["not_measured"])
    from attnspec.report.run_meta import describing_meta

    if describing_meta(run).get("causal"):
        return "every layer is causal: a projection along the sequence would mix future positions into each row"
    return "not measured in these results (rerun the study with projection-k)"


def _cell(r: Any, col: str) -> str:
    from attnspec.numerics.stats import format_interval

    return f"{r[col]:.3f} {format_interval(r[f'{col}_low'], r[f'{col}_high'], 3)}"


def run_projection_lines(run: Path) -> list[str]:
    """A scaling run's full projection table (for its appendix subsection), or why it has none.

    Parameters
    ----------
    run : Path
        A scaling study's directory.

    Returns
    -------
    list of str
        Markdown lines ending with a blank line: what is measured and one table row per
        (k, n) (the random projection's error and the best rank-k error, each with its 95%
        interval over inputs), or one line saying why the run holds no measurement.
    """
    s = _summary(run)
    if s is None or s.empty:
        return [f"Linformer-projection error not measured ({_why_not(run)}).", ""]
    md = [
        "Linformer-style attention with one random Gaussian R (k × n) as E = F on this run's Q, K, V: relative "
        "error against PV, mean over inputs, layers and heads, 95% percentile bootstrap over inputs; the best "
        "rank-k error of P applied to V beside it. The rows of RV have norms about √(n/k) times those of V, so "
        "this error scales as √(n/k) whatever P is: a record of that scale, not a finding.",
        "",
        "| k | n | inputs | random R [95% CI] | min–max over layers | best rank-k [95% CI] |",
        "|---|---|---|---|---|---|",
    ]
    for r in s.sort_values(["k", "n"]).to_dict("records"):
        md.append(
            f"| {r['k']} | {r['n']} | {r['inputs']} | {_cell(r, 'linformer_error')} | "
            f"{r['linformer_error_layer_min']:.3f}–{r['linformer_error_layer_max']:.3f} | "
            f"{_cell(r, 'best_rank_error')} |"
        )
    return [*md, ""]
