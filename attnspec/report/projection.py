"""The Linformer-projection measurement in the report's "Beyond Figure 1" section.

Linformer's argument is about softmax(Q(EK)ᵀ)(FV) ≈ PV at a fixed k, not about the spectrum of
P alone. A scaling study run with ``projection-k`` measures it on the model's own Q, K, V
(:mod:`attnspec.spectra.projection`); this module renders what it saved: one compact table
over the scaling runs for the body (per k and n, the error of a random Gaussian projection with
its interval over inputs beside the best rank-k error), a reading generated from the numbers,
and each run's full table for the appendix. Runs that could not measure it (causal decoders)
are named with the reason.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from attnspec.report.experiments import spectrum_runs

#: The projection dimension the reading follows from the shortest to the longest n (Linformer's Figure 3 uses 128).
READ_K = 128


def _summary(run: Path) -> pd.DataFrame | None:
    from attnspec.storage.results import read_table

    return read_table(run, "projection_summary") if (run / "projection_summary.parquet").is_file() else None


def _why_not(run: Path) -> str:
    """Why a scaling run holds no projection measurement."""
    top = json.loads((run / "meta.json").read_text())
    record = top.get("projection") or {}
    if record.get("not_measured"):
        return str(record["not_measured"])
    longest = json.loads((run / f"n{max(top['lengths'])}" / "meta.json").read_text())
    if longest.get("causal"):
        return "every layer is causal: a projection along the sequence would mix future positions into each row"
    return "not measured in these results (rerun the study with projection-k)"


def _cell(r: Any, col: str) -> str:
    from attnspec.numerics.stats import format_interval

    return f"{r[col]:.3f} {format_interval(r[f'{col}_low'], r[f'{col}_high'], 3)}"


def _trend(s: pd.DataFrame, col: str) -> str:
    """How ``col`` moves from the shortest to the longest n: judged by the two intervals over inputs."""
    a, b = s.iloc[0], s.iloc[-1]
    if b[f"{col}_low"] > a[f"{col}_high"]:
        return "a rise: the intervals do not overlap"
    if b[f"{col}_high"] < a[f"{col}_low"]:
        return "a fall: the intervals do not overlap"
    return "no change shown: the intervals overlap"


def projection_part(experiments: Sequence[Any], results: Path) -> list[str]:
    """Markdown lines for the body: what is measured, one table over the runs that hold the
    measurement, and a reading; empty when no scaling run holds it.

    Parameters
    ----------
    experiments : sequence of Experiment
        The report's experiments; those whose results are scaling studies are read.
    results : Path
        The folder of every experiment's results directory.

    Returns
    -------
    list of str
        The lines, a blank line after each paragraph and after the table; the reading names
        the scaling runs without the measurement and why. Empty when none holds it.
    """
    from attnspec.report.decoder import scaling_label

    held, missing = [], []
    for exp in spectrum_runs(experiments, results, "scaling"):
        run = results / exp.name
        s = _summary(run)
        if s is None or s.empty:
            missing.append((scaling_label(run), _why_not(run)))
        else:
            held.append((scaling_label(run), s))
    if not held:
        return []
    inputs = sorted({int(v) for _, s in held for v in s["inputs"]})
    md = [
        f"Linformer's argument needs softmax(Q(EK)ᵀ)(FV) ≈ PV at a fixed k (its Theorem 2). Measured on the "
        f"model's own Q, K, V with E = F = R, a random Gaussian k × n matrix (entries N(0, 1/k); not Theorem 2's construction E = δR, "
        f"F = e^(−δ)R, which `--approx linformer-proof` applies): "
        f"‖softmax(Q(RK)ᵀ)(RV) − PV‖_F/‖PV‖_F, the mean over layers and heads, 95% percentile bootstrap over "
        f"{'–'.join(map(str, inputs))} documents; beside it ‖(P − P_k)V‖_F/‖PV‖_F, the best any rank-k "
        f"approximation of P does with these V.",
        "",
        "| k | n | " + " | ".join(f"{label}: random R | best rank-k" for label, _ in held) + " |",
        "|---|---" + "|---|---" * len(held) + "|",
    ]
    keys = sorted({(int(r.k), int(r.n)) for _, s in held for r in s.itertuples()})
    for k, n in keys:
        cells = []
        for _, s in held:
            r = s[(s["k"] == k) & (s["n"] == n)]
            cells += (
                [_cell(r.iloc[0], "linformer_error"), f"{r.iloc[0]['best_rank_error']:.3f}"] if len(r) else ["—", "—"]
            )
        md.append(f"| {k} | {n} | " + " | ".join(cells) + " |")
    md += ["", _reading(held, missing), ""]
    return md


def _reading(held: list[tuple[str, pd.DataFrame]], missing: list[tuple[str, str]]) -> str:
    """At READ_K (or the k measured at most lengths), how each run's error moves with n, and what this does not test."""
    ks = pd.concat([s for _, s in held])["k"]
    k = READ_K if (ks == READ_K).any() else int(ks.value_counts().idxmax())
    parts = []
    for label, s in held:
        t = s[s["k"] == k].sort_values("n")
        if len(t) < 2:
            continue
        a, b = t.iloc[0], t.iloc[-1]
        parts.append(
            f"{a['linformer_error']:.3f} at n = {int(a['n'])} to {b['linformer_error']:.3f} at n = "
            f"{int(b['n'])} on {label} ({_trend(t, 'linformer_error')}; best rank-{k}: "
            f"{a['best_rank_error']:.3f} to {b['best_rank_error']:.3f})"
        )
    text = (
        f"Reading: at fixed k = {k} the random-projection error goes from " + "; from ".join(parts) + "."
        if parts
        else f"Reading: k = {k} was measured at one length only, so this table cannot say how the error moves with n."
    )
    if all(float(s["linformer_error"].min()) >= 1 for _, s in held):
        text += " Every error is above 1: the random-projection output lies farther from PV than a zero output."
    text += (
        " One draw of R per input and layer, for this model on these corpora: Linformer trains E and F, and "
        "trained projections may do much better. The best rank-k column is a reference (P truncated to rank k), "
        "not a lower bound: E and F act on K and V, and PV has rank at most the head dimension."
    )
    for why, labels in _by_reason(missing, [label for label, _ in held]).items():
        text += f" Not measured for {' and '.join(labels)} ({why})."
    return text


def _by_reason(missing: list[tuple[str, str]], held: list[str]) -> dict[str, list[str]]:
    """reason → the runs (``model · corpus``) it keeps out; a model none of whose runs holds the
    measurement, all for this reason, is named alone."""
    out: dict[str, list[str]] = {}
    for label, why in missing:
        out.setdefault(why, []).append(label)
    for why, labels in out.items():
        names: list[str] = []
        for model in dict.fromkeys(lab.split(" · ")[0] for lab in labels):
            mine = [lab for lab in labels if lab.split(" · ")[0] == model]
            alone = all(lab.split(" · ")[0] != model for lab in held) and all(
                w == why for lab, w in missing if lab.split(" · ")[0] == model
            )
            names += [model] if alone else mine
        out[why] = names
    return out


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
        "Linformer-style attention with a random Gaussian R (k × n) on this run's Q, K, V: relative error against "
        "PV, mean over inputs, layers and heads, 95% percentile bootstrap over inputs; the best rank-k error of P "
        "applied to V beside it.",
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
