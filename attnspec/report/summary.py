"""The summary that opens REPORT.md: numbered findings, each computed from saved results.

The spectrum study (the share of singular-value mass in the first indices with an interval
over layer means, the depth trend resampling layers, the growth exponent β of k90 with n,
the same beside the entropy-matched null, and what that means for Linformer's premise), the
causal decoder, one line per paper (its claims by the verdict the checking commands print,
from the claims ledger, which pools every experiment that checks a claim), and OSA training
beside the paper's Table 2. Every number is read from the results the report was built
from; nothing is typed in. At most :data:`MAX_LINES` lines and :data:`MAX_WORDS` words.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from attnspec.report.anchors import anchor
from attnspec.report.decoder import scaling_label
from attnspec.report.experiments import spectrum_runs


def spectrum_statements(run: Path, at: int | None = None) -> dict[str, Any]:
    """The paper's qualitative statements, measured on one spectrum run.

    * long tail: the mean cumulative value at index ``at`` (128 of 512), over layers and
      heads, with a t interval over the layer means (``ci``: the layer is the unit that
      varies; a model's heads are not independent draws);
    * "higher layers are more skewed": Spearman's rho of c_at against depth, over layers
      (one value per layer) and over heads (one value per (layer, head)), with Fisher-z
      intervals.

    Parameters
    ----------
    run : Path
        A spectrum results directory.
    at : int, optional
        The index read (default: the reading point of the run's n).

    Returns
    -------
    dict
    """
    from attnspec.numerics.stats import mean_ci, spearman_ci
    from attnspec.spectra.figure_record import figure_choices
    from attnspec.storage.results import read_meta, read_table

    meta = read_meta(run)
    spec = read_table(run, "spectrum")
    n = int(spec["index"].max())
    at = figure_choices(meta, n, at=at)["at"]  # the index the run's figures read
    at_rows = spec[spec["index"] == at]
    per_head = at_rows["mean"].to_numpy()
    per_layer = at_rows.groupby("layer")["mean"].mean()
    overall = mean_ci(per_layer.to_numpy()) if len(per_layer) >= 2 else None
    out: dict[str, Any] = {
        "model": meta.get("identity", {}).get("model"),
        "data": meta.get("identity", {}).get("data"),
        "split": meta.get("corpus", {}).get("split"),
        "n": n,
        "at": at,
        "inputs": meta.get("inputs_done"),
        "mean_at": float(per_head.mean()),
        "ci": None if overall is None else (overall.low, overall.high),
        "per_layer": [float(v) for v in per_layer.to_numpy()],
        "min_head": float(per_head.min()),
        "max_head": float(per_head.max()),
    }
    if len(per_layer) >= 4:
        out["rho_layers"] = spearman_ci(per_layer.index.to_numpy(dtype=float), per_layer.to_numpy())
    if len(at_rows) >= 4:
        out["rho_heads"] = spearman_ci(at_rows["layer"].to_numpy(dtype=float), at_rows["mean"].to_numpy())
    metrics = read_table(run, "metrics")
    out["effective_rank"] = float(metrics["effective_rank_mean"].mean())
    out["stable_rank"] = float(metrics["stable_rank_mean"].mean())
    return out


def _k90_beta(run: Path) -> tuple[float, float, float, list[int], int, str] | None:
    from attnspec.spectra.scaling_fit import fit_scaling, scaling_table

    try:
        table = scaling_table(run)
        fits = fit_scaling(run)
    except Exception:  # noqa: BLE001 - a broken result is reported in its own section
        return None
    overall = fits[(fits["layer"] < 0) & (fits["metric"] == "reach_index")]
    if overall.empty:
        return None
    r = overall.iloc[0]
    return (
        float(r["beta"]),
        float(r["low"]),
        float(r["high"]),
        sorted(int(n) for n in table["n"].unique()),
        int(fits["inputs"].iloc[0]),
        str(r["verdict"]),
    )


def _short(cite: str) -> str:
    m = re.search(r"\*(.+?)\*", cite)
    return m.group(1) if m else cite


#: The summary's budget: at most this many lines and words (a researcher's two minutes).
MAX_LINES = 20
MAX_WORDS = 400


def summary_section(
    experiments: Sequence[Any],
    results: Path,
    *,
    papers: dict[str, str],
    quick: bool,
    verdict_file: str,
    figure1_heading: str,
) -> list[str]:
    """The whole "Summary" section: numbered findings, one a line, each with its numbers and a
    link to its section, in the order models and data; the spectrum at one n; its depth trend;
    its growth with n and what that means for Linformer; the causal decoder; one line per paper;
    OSA training. Empty when there are no results yet. At most MAX_LINES lines and MAX_WORDS
    words (a test holds it to that).

    Parameters
    ----------
    experiments : sequence of Experiment
        The report's experiments.
    results : Path
        The folder of every experiment's results directory.
    papers : dict of str to str
        Paper key → its citation (:data:`attnspec.verdicts.registry.PAPERS`).
    quick : bool
        The quick arguments were run.
    verdict_file : str
        The verdict table's file name in a results directory.
    figure1_heading : str
        The heading of the Figure 1 section, linked to.

    Returns
    -------
    list of str
        Markdown lines.
    """
    findings = [
        *_spectrum_findings(experiments, results, figure1_heading),
        *_decoder_finding(experiments, results, quick),
        *_paper_findings(experiments, results, papers, verdict_file),
        *_training_finding(experiments, results),
    ]
    if not findings:
        return []
    md = ["## Summary", ""]
    if quick:
        md += ["_Quick mode: small sizes, the numbers are illustrative only._", ""]
    md += [f"{i}. {text}" for i, text in enumerate(findings, 1)]
    return [*md, ""]


def _pct_layers(s: dict[str, Any]) -> str:
    """The mean share with its t interval over the run's layer means (:func:`spectrum_statements`)."""
    ci = s["ci"]
    return f"{s['mean_at']:.1%}" + (f" [{ci[0]:.1%}, {ci[1]:.1%}]" if ci else "")


def _null_constant(run: Path) -> tuple[str, float, float, float, float | None] | None:
    """The entropy-matched null beside the real P in a scaling study: (null name, null β,
    real k90/n, null k90/n, the random-init model's k90/n or None, at the longest n); None when
    the study holds no entropy-matched null."""
    from attnspec.spectra.scaling_fit import null_comparison

    try:
        table = null_comparison(run, resamples=500)
    except Exception:  # noqa: BLE001 - a broken result is reported in its own section
        return None
    share = sorted((c for c in table.columns if c.startswith("share_n")), key=lambda c: int(c[7:]))
    if not share or "entropy-matched" not in set(table["source"]):
        return None
    real = table[table["source"] == "real"].iloc[0]
    null = table[table["source"] == "entropy-matched"].iloc[0]
    init = table[table["source"] == "random-init"]
    return (
        "entropy-matched",
        float(null["beta"]),
        float(real[share[-1]]),
        float(null[share[-1]]),
        float(init[share[-1]].iloc[0]) if len(init) else None,
    )


def _spectrum_findings(experiments: Sequence[Any], results: Path, figure1_heading: str) -> list[str]:
    """Models and data; share of Σσ at one n; depth; growth with n; what it means for Linformer."""
    from attnspec.numerics.stats import format_interval, layer_bootstrap_trend
    from attnspec.report.decoder import display

    figure1 = spectrum_runs(experiments, results, "figure1")
    scaling = spectrum_runs(experiments, results, "scaling")
    out: list[str] = []
    models = []
    for exp in [*figure1, *scaling]:
        meta = json.loads((results / exp.name / "meta.json").read_text())
        if meta.get("kind") == "spectrum-scaling":
            meta = json.loads((results / exp.name / f"n{max(meta['lengths'])}" / "meta.json").read_text())
        model = meta.get("model") or (meta.get("identity") or {}).get("model")
        name = (
            f"{display(str(model))} ({'decoder' if meta.get('causal') else 'encoder'}, "
            f"{meta.get('num_layers')} × {meta.get('num_heads')} heads)"
        )
        if name not in models:
            models.append(name)
    if models:
        out.append(
            f"**Models and data.** {' and '.join(models)} on WikiText-103 and IMDB (RoBERTa, the "
            "paper's model, cannot be loaded offline). [Models](#models-and-data)"
        )
    link = f"[Figure 1](#{anchor(figure1_heading)})"
    stats = [(exp, spectrum_statements(results / exp.name)) for exp in figure1]
    if stats:
        s0 = stats[0][1]
        share = " and ".join(f"{_pct_layers(s)} on {s['data']}" for _, s in stats)
        out.append(
            f"**Low rank at n = {s0['n']}.** The first {s0['at']} of {s0['n']} singular values of P hold, of Σσ, "
            f"{share} ({display(str(s0['model']))}, {s0['inputs']} inputs; 95% t interval over "
            f"{len(s0['per_layer'])} layer means); single heads range "
            f"{min(s['min_head'] for _, s in stats):.0%}–{max(s['max_head'] for _, s in stats):.0%}. {link}"
        )
        trends = [
            (s["data"], layer_bootstrap_trend(np.asarray(s["per_layer"])), len(s["per_layer"]))
            for _, s in stats
            if len(s["per_layer"]) >= 4
        ]
        if trends:
            shown = [t for t in trends if t[1][1] > 0 or t[1][2] < 0]
            word = "rises with depth" if shown and len(shown) == len(trends) else "shows no depth trend"
            out.append(
                f"**Depth.** The share {word} for this model: "
                + "; ".join(f"ρ = {r[0]:+.2f} {format_interval(r[1], r[2], signed=True)} on {d}" for d, r, _ in trends)
                + f" (Spearman; bootstrap over {trends[0][2]} layers). {link}"
            )
    betas = []
    for exp in scaling:
        b = _k90_beta(results / exp.name)
        if b is not None:
            betas.append((exp, b))
    if betas:
        by_model: dict[str, list[tuple[str, Any]]] = {}  # model -> [(corpus, fit)], in the experiments' order
        for exp, b in betas:
            model, corpus = scaling_label(results / exp.name).split(" · ")
            by_model.setdefault(model, []).append((corpus, b))
        parts = "; ".join(
            ", ".join(f"n^{b[0]:.2f} {format_interval(b[1], b[2])} on {corpus}" for corpus, b in fits)
            + f" for {model} (n = {fits[0][1][3][0]}–{fits[0][1][3][-1]})"
            for model, fits in by_model.items()
        )
        out.append(
            f"**The rank needed grows with n.** k90 (90% of Σσ) scales as {parts}; "
            f"95% CIs over inputs. [Scaling](#beyond-figure-1)"
        )
        chance = [(exp, c) for exp, c in ((exp, _null_constant(results / exp.name)) for exp, _ in betas) if c]
        if chance:
            nulls = sorted(c[1] for _, c in chance)
            out.append(
                f"**Against chance.** An entropy-matched random softmax grows as fast (β {nulls[0]:.2f}–"
                f"{nulls[-1]:.2f}); the constant, not the exponent, differs. Longest-n k90/n, real vs null: "
                f"{_against_chance(chance, results)}. [Scaling](#beyond-figure-1)"
            )
        out.append(_linformer_finding([exp for exp, _ in betas], results, all(b[1] > 0.8 for _, b in betas)))
    return out


def _against_chance(chance: Sequence[tuple[Any, tuple]], results: Path) -> str:
    """``MiniLM-L6 0.32 vs 0.63 (imdb), 0.31 vs 0.63 (wiki103), random-init model 0.45, 0.44; ...``:
    real vs entropy-matched k90/n per model and corpus, then the random-init model's where held."""
    by_model: dict[str, list[tuple[str, tuple]]] = {}
    for exp, c in chance:
        model, corpus = scaling_label(results / exp.name).split(" · ")
        by_model.setdefault(model, []).append((corpus, c))
    parts = []
    for model, runs in by_model.items():
        text = f"{model} " + ", ".join(f"{c[2]:.2f} vs {c[3]:.2f} ({corpus})" for corpus, c in runs)
        inits = [c[4] for _, c in runs if c[4] is not None]
        if len(inits) == len(runs):
            text += ", random-init " + ", ".join(f"{v:.2f}" for v in inits)
        parts.append(text)
    return "; ".join(parts)


def _linformer_finding(scaling: Sequence[Any], results: Path, linear: bool) -> str:
    """What Linformer's argument needs (softmax(Q(EK)ᵀ)(FV) ≈ PV at a fixed k) and what was measured:
    the random-projection error at READ_K from the shortest to the longest n, with its interval
    over documents at the longest, per scaling run that measured it; else what the spectrum
    alone says."""
    from attnspec.numerics.stats import format_interval
    from attnspec.report.projection import READ_K, _summary

    by_model: dict[tuple[str, int, int], list[str]] = {}
    above = True
    for exp in scaling:
        s = _summary(results / exp.name)
        t = s[s["k"] == READ_K].sort_values("n") if s is not None else []
        if len(t) >= 2:
            a, b = t.iloc[0], t.iloc[-1]
            model, corpus = scaling_label(results / exp.name).split(" · ")
            by_model.setdefault((model, int(a["n"]), int(b["n"])), []).append(
                f"{a['linformer_error']:.2f}→{b['linformer_error']:.2f} "
                f"{format_interval(b['linformer_error_low'], b['linformer_error_high'])} ({corpus})"
            )
            above &= float(t["linformer_error"].min()) >= 1
    if not by_model:
        return (
            "**For Linformer.** "
            + (
                "A fixed truncation rank keeps a shrinking share of P: Figure 1 is no "
                "evidence for an n-independent rank of P"
                if linear
                else "The growth exponents do not all support linear growth; see the scaling section"
            )
            + ". Not tested: Linformer's learned projections, "
            "which approximate PV, not P. [Scaling](#beyond-figure-1)"
        )
    measured = "; ".join(
        f"{model}'s error goes " + ", ".join(parts) + f" as n = {n0}→{n1}"
        for (model, n0, n1), parts in by_model.items()
    )
    return (
        f"**For Linformer.** It needs softmax(Q(EK)ᵀ)(FV) ≈ PV at fixed k. Random Gaussian E = F, k = {READ_K}: "
        f"{measured} (95% CI over documents)"
        + (": worse than outputting zero" if above else "")
        + "; trained E, F may do better. [Scaling](#beyond-figure-1)"
    )


def _decoder_finding(experiments: Sequence[Any], results: Path, quick: bool) -> list[str]:
    """The decoder section's first summary line (low rank, beside the encoder)."""
    from attnspec.report.decoder import decoder_summary

    lines = decoder_summary(experiments, results, quick=quick)
    return [lines[0].removeprefix("- ").replace("low rank?**", "low rank?** ", 1).replace("  ", " ")] if lines else []


def _paper_findings(experiments: Sequence[Any], results: Path, papers: dict[str, str], verdict_file: str) -> list[str]:
    """One line per paper: how many of its claims hold, are loose, fail, say nothing, and which fail."""
    from attnspec.report.ledger import HEADING, ledger_rows

    rows = ledger_rows(experiments, results, verdict_file)
    out = []
    for paper, cite in papers.items():
        mine = [r for r in rows if r["paper"] == paper]
        if not mine:
            continue
        counts: dict[str, int] = {}
        for r in mine:
            counts[r["stated"]] = counts.get(r["stated"], 0) + 1
        order = ("holds", "loose", "violated", "vacuous", "cannot-fail", "hypothesis-unmet", "measured")
        # single verdicts in the vocabulary's order, then the changing ones ("vacuous → violated")
        keys = [v for v in order if v in counts] + sorted(v for v in counts if v not in order)
        tally = ", ".join(f"{counts[v]} {v}" for v in keys)
        failing = [r["id"] for r in mine if "violated" in r["stated"]]
        # a few ids are named; a longer list is the ledger's
        fails = (
            f"; fails: {', '.join(f'`{i}`' for i in failing)}"
            if 0 < len(failing) <= 3
            else f"; {len(failing)} fail"
            if failing
            else ""
        )
        out.append(f"**{_short(cite)}.** {len(mine)} claims: {tally}{fails}. [Ledger](#{anchor(HEADING)})")
    return out


def _training_finding(experiments: Sequence[Any], results: Path) -> list[str]:
    """OSA training beside the paper's Table 2: each model's test accuracy over seeds with its
    interval, and which of the paper's orderings reproduce, by name. The paper's values are
    set beside the measured ones only when the run trained on MNIST, the paper's data."""
    import json

    import pandas as pd

    for exp in experiments:
        d = results / exp.name
        paper, orders = d / "osa_train_paper.parquet", d / "osa_train_orderings.parquet"
        if exp.command != "osa-train" or not paper.is_file():
            continue
        meta = json.loads((d / "meta.json").read_text()) if (d / "meta.json").is_file() else {}
        mnist = (meta.get("config") or {}).get("data") == "mnist"
        t = pd.read_parquet(paper).set_index("model")
        shown = [m for m in ("vit", "osa-qr", "osa-ns") if m in t.index]
        measured = ", ".join(
            f"{t.loc[m, 'label']} {100 * t.loc[m, 'accuracy_mean']:.1f}% "
            f"[{100 * t.loc[m, 'accuracy_ci_low']:.1f}, {100 * t.loc[m, 'accuracy_ci_high']:.1f}]"
            for m in shown
        )
        steps = (meta.get("budget") or {}).get("max_steps")
        setup = f"{int(t['n_seeds'].max())} seeds" + (f", {steps} steps for every model" if steps else "")
        if mnist:
            head = f"**OSA Table 2** (MNIST, {setup}): test accuracy {measured} against the paper's " + " / ".join(
                f"{100 * t.loc[m, 'paper_accuracy']:.1f}" for m in shown
            )
        else:
            head = f"**OSA training** (8×8 digits, not the paper's MNIST, {setup}): test accuracy {measured}"
        told = ""
        if orders.is_file():
            o = pd.read_parquet(orders)
            labels = {m: str(t.loc[m, "label"]) for m in t.index}
            done = [
                f"{labels.get(a, a)} > {labels.get(b, b)}"
                for a, b in o.loc[o["outcome"] == "reproduced", ["a", "b"]].itertuples(index=False)
            ]
            rest = o["outcome"].value_counts()
            told = (
                f"; of the paper's {len(o)} orderings, reproduced (interval over seeds excludes 0 on the paper's "
                f"side): {'; '.join(done) if done else 'none'}; {int(rest.get('not resolved', 0))} not resolved, "
                f"{int(rest.get('reversed', 0))} reversed"
            )
        return [f"{head}{told}. [Training](#{anchor(exp.heading(False))})"]
    return []
