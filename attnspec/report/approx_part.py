"""The report's "For Linformer: does a fixed k suffice?" section, from the approximation study.

Linformer's premise is softmax(Q(EK)ᵀ/√d)(FV) ≈ PV with a k that stays fixed as n grows. The
approximation study (docs/approximations.md) measures it on held-out documents for each
method and k beside two references (uniform attention, which any method must beat, and the
best rank-k P applied to V); this module renders what the studies saved, read through
:func:`attnspec.spectra.approx.reading.read_verdicts` (the deciding numbers are fields):

* per model, one table at :data:`READ_K`: per corpus and method, the held-out error at the
  smallest and the largest n with its 95 % interval over held-out documents, the slope per
  doubling of n with its interval, the rule's verdict at every k (its verdict words and their
  short forms are :data:`attnspec.spectra.approx.rule.VERDICTS`; a method no better than zero
  output, whose error is not below 1 at some n, is named so whatever its slope), whether the
  error is below uniform attention's at every n, and the end-to-end effect at the largest n;
* a reading generated from those fields, and each study's figure (error against n, one panel
  per k) at one column;
* every k of every study for the appendix.

Fields that a study saved without (older results) read "not measured".
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from attnspec.report.experiments import spectrum_runs
from attnspec.spectra.approx.rule import VERDICTS

#: The k the body and the summary read (Linformer's Figure 3 uses 128).
READ_K = 128
HEADING = "For Linformer: does a fixed k suffice?"
#: The rule's verdicts as a table cell (the rule's own short forms).
SHORT_VERDICT = {**VERDICTS, "not applied": "not applied"}


def approx_verdicts(run: Path) -> pd.DataFrame | None:
    """A study's verdict rows (:func:`~attnspec.spectra.approx.reading.read_verdicts`), or None.

    Parameters
    ----------
    run : Path
        A scaling study's directory.

    Returns
    -------
    pandas.DataFrame or None
        One row per (k, method); None when the study holds no approximations.
    """
    from attnspec.spectra.approx.reading import read_verdicts

    return read_verdicts(run) if (run / "approx_rule.parquet").is_file() else None


def read_k(tables: Sequence[pd.DataFrame]) -> int:
    """The k the body reads: :data:`READ_K` where every study measured it, else the middle k of the first.

    Parameters
    ----------
    tables : sequence of pandas.DataFrame
        Verdict tables.

    Returns
    -------
    int
    """
    held = [sorted({int(k) for k in t["k"]}) for t in tables]
    if held and all(READ_K in ks for ks in held):
        return READ_K
    return held[0][len(held[0]) // 2] if held and held[0] else READ_K


def studies(experiments: Sequence[Any], results: Path) -> list[tuple[str, str, Path, pd.DataFrame]]:
    """(model, corpus, directory, verdict table) of every approximation study with results.

    Parameters
    ----------
    experiments : sequence of Experiment
    results : Path
        The folder of every experiment's results directory.

    Returns
    -------
    list of tuple
    """
    from attnspec.report.decoder import scaling_label

    out = []
    for exp in spectrum_runs(experiments, results, "approx"):
        v = approx_verdicts(results / exp.name)
        if v is not None and len(v):
            model, corpus = scaling_label(results / exp.name).split(" · ")
            out.append((model, corpus, results / exp.name, v))
    return out


def below_uniform(row: Any) -> str:
    """Whether a method's held-out error is below uniform attention's at every n (paired over
    documents): ``yes``, ``no``, ``—`` for a reference, ``not measured`` when the study saved no
    such field.

    Parameters
    ----------
    row : mapping
        A verdict row.

    Returns
    -------
    str
    """
    if row["reference"]:
        return "—"
    gap = row.get("uniform_gap_high", float("nan"))
    if gap is None or not math.isfinite(float(gap)):
        return "not measured"
    return "yes" if float(gap) < 0 else "no"


def end_to_end(row: Any, digits: int = 3) -> str:
    """The end-to-end effect at the largest n: the sentence-embedding cosine to the exact model
    with its interval, or the change in next-token loss, or ``not measured``.

    Parameters
    ----------
    row : mapping
        A verdict row.
    digits : int
        Decimals.

    Returns
    -------
    str
    """
    from attnspec.report.markdown import with_interval

    for name, label in (("cosine_last", "cos"), ("loss_change_last", "Δloss")):
        value = row.get(name, float("nan"))
        if value is not None and math.isfinite(float(value)):
            low, high = row.get(f"{name}_low", float("nan")), row.get(f"{name}_high", float("nan"))
            return f"{label} {with_interval(float(value), low, high, f'.{digits}f')}"
    return "not measured"


def _error(row: Any, which: str) -> str:
    from attnspec.report.markdown import with_interval

    return with_interval(row[f"error_{which}"], row[f"error_{which}_low"], row[f"error_{which}_high"])


def _slope(row: Any) -> str:
    from attnspec.report.markdown import with_interval

    if not math.isfinite(row["slope"]):
        return "not estimable"
    return with_interval(row["slope"], row["slope_low"], row["slope_high"], "+.3f")


def _verdicts_by_k(v: pd.DataFrame, method: str) -> str:
    """The rule's verdict at each k, in k's order (``holds · grows · unresolved``)."""
    rows = v[v["method"] == method].sort_values("k")
    return " · ".join(SHORT_VERDICT.get(str(r.verdict), str(r.verdict)) for r in rows.itertuples())


def model_table(model: str, held: Sequence[tuple[str, pd.DataFrame]], k: int) -> list[str]:
    """One model's body table at ``k``: a row per (corpus, method).

    Parameters
    ----------
    model : str
        The model as the report names it.
    held : sequence of (corpus, verdict table)
        The model's studies.
    k : int
        The k read.

    Returns
    -------
    list of str
        Markdown lines ending with a blank line.
    """
    at = [(corpus, v[v["k"] == k]) for corpus, v in held]
    spans = {(int(r.n_first), int(r.n_last)) for _, t in at for r in t.itertuples() if not r.note}
    first, last = (f"n = {n}" for n in spans.pop()) if len(spans) == 1 else ("smallest n", "largest n")
    ks = sorted({int(x) for _, v in held for x in v["k"]})
    md = [
        f"**{model}, k = {k}** (verdicts at k = {' · '.join(map(str, ks))}):",
        "",
        f"| corpus | method | error at {first} | error at {last} | slope per doubling | verdict by k | "
        f"below uniform at every n | end to end at {last} |",
        "|---|---|---|---|---|---|---|---|",
    ]
    every = dict(held)
    for corpus, t in at:
        for r in t.to_dict("records"):
            name = r["method"] + (" (reference)" if r["reference"] else "")
            name += " †" if r.get("scores") == "content only" else ""
            if r["note"]:
                md.append(f"| {corpus} | {name} | — | — | — | not applied | — | — |")
                continue
            md.append(
                f"| {corpus} | {name} | {_error(r, 'first')} | {_error(r, 'last')} | {_slope(r)} | "
                f"{_verdicts_by_k(every[corpus], r['method'])} | {below_uniform(r)} | "
                f"{end_to_end(r)} |"
            )
    return [*md, ""]


def verdict_groups(held: Sequence[tuple[str, pd.DataFrame]], k: int) -> dict[str, dict[str, list[str]]]:
    """verdict → method → the corpora it was reached on, at ``k``, for the methods (not the references).

    Parameters
    ----------
    held : sequence of (corpus, verdict table)
        One model's studies.
    k : int

    Returns
    -------
    dict
    """
    out: dict[str, dict[str, list[str]]] = {}
    for corpus, v in held:
        for r in v[(v["k"] == k) & ~v["reference"].astype(bool)].itertuples():
            out.setdefault(str(r.verdict), {}).setdefault(str(r.method), []).append(corpus)
    return out


def _named(methods: dict[str, list[str]], corpora: int) -> str:
    """``linformer-fit, nystrom (imdb)``: each method, with its corpora when not all of the model's."""
    return ", ".join(m + ("" if len(c) == corpora else f" ({', '.join(c)})") for m, c in methods.items())


def model_verdicts(held: Sequence[tuple[str, pd.DataFrame]], k: int, *, short: bool = False) -> str:
    """One model's verdicts at ``k`` and the methods below uniform at every n, in one clause.

    Parameters
    ----------
    held : sequence of (corpus, verdict table)
        One model's studies.
    k : int
    short : bool
        The verdicts in their table form after the methods (``linformer-fit holds; nystrom (imdb) grows``), for the summary.

    Returns
    -------
    str
        ``a fixed k holds for linformer-fit; grows for nystrom (imdb); below uniform at every n: linformer-fit``.
    """
    groups = verdict_groups(held, k)
    text = "; ".join(
        f"{_named(methods, len(held))} {SHORT_VERDICT.get(verdict, verdict)}"
        if short
        else f"{verdict} for {_named(methods, len(held))}"
        for verdict, methods in groups.items()
    )
    below: dict[str, list[str]] = {}
    measured = False
    for corpus, v in held:
        for r in v[(v["k"] == k) & ~v["reference"].astype(bool)].to_dict("records"):
            said = below_uniform(r)
            measured = measured or said != "not measured"
            if said == "yes":
                below.setdefault(str(r["method"]), []).append(corpus)
    if measured:
        text += f"; below uniform at every n: {_named(below, len(held)) if below else 'none'}"
    else:
        text += "; below uniform at every n: not measured"
    return text


def _by_model(found: Sequence[tuple[str, str, Path, pd.DataFrame]]) -> dict[str, list[tuple[str, pd.DataFrame]]]:
    out: dict[str, list[tuple[str, pd.DataFrame]]] = {}
    for model, corpus, _, v in found:
        out.setdefault(model, []).append((corpus, v))
    return out


def _end_to_end_rows(
    held: Sequence[tuple[str, pd.DataFrame]], k: int, column: str
) -> list[tuple[float, str, str, int]]:
    """(value, method, corpus, n) of each method's end-to-end ``column`` at ``k`` where it was
    measured (a finite value), over the model's studies; the references left out."""
    return [
        (float(r[column]), r["method"], corpus, int(r["n_last"]))
        for corpus, v in held
        for r in v[(v["k"] == k) & ~v["reference"].astype(bool)].to_dict("records")
        if math.isfinite(float(r.get(column, float("nan"))))
    ]


def _end_to_end_reading(model: str, held: Sequence[tuple[str, pd.DataFrame]], k: int) -> str:
    """The best and the worst end-to-end effect of the methods at ``k`` (the sentence-embedding cosine)."""
    rows = _end_to_end_rows(held, k, "cosine_last")
    if not rows:
        return _loss_reading(model, held, k)
    best, worst = max(rows), min(rows)
    return (
        f"End to end on {model} (every layer's attention replaced, n = {best[3]}): sentence-embedding cosine to the "
        f"exact model {best[0]:.3f} at best ({best[1]}, {best[2]}), {worst[0]:.3f} at worst ({worst[1]}, {worst[2]})."
    )


def _loss_reading(model: str, held: Sequence[tuple[str, pd.DataFrame]], k: int) -> str:
    """The smallest and the largest change in a causal model's next-token loss at ``k``."""
    rows = _end_to_end_rows(held, k, "loss_change_last")
    if not rows:
        return f"End to end on {model}: not measured."
    least, most = min(rows), max(rows)
    if least == most:
        return (
            f"End to end on {model} (every layer's attention replaced, n = {least[3]}): next-token loss up by "
            f"{least[0]:.2f} nats a token ({least[1]}, {least[2]})."
        )
    return (
        f"End to end on {model} (every layer's attention replaced, n = {least[3]}): next-token loss up by "
        f"{least[0]:.2f} nats a token at least ({least[1]}, {least[2]}), {most[0]:.2f} at most ({most[1]}, {most[2]})."
    )


def random_projection_note(experiments: Sequence[Any], results: Path) -> list[str]:
    """One sentence on the random-projection measurement of the scaling runs, when any holds it:
    its error scales as √(n/k) whatever P is, so it is no evidence either way.

    Parameters
    ----------
    experiments : sequence of Experiment
    results : Path

    Returns
    -------
    list of str
        The sentence and a blank line, or nothing.
    """
    held = [
        exp.name
        for exp in spectrum_runs(experiments, results, "scaling")
        if (results / exp.name / "projection_summary.parquet").is_file()
    ]
    if not held:
        return []
    return [
        "A random Gaussian E = F = R (the scaling runs' projection measurement, tables in the appendix) is no "
        "evidence either way: the rows of RV have norms about √(n/k) times those of V, so its error scales as "
        "√(n/k) whatever P is.",
        "",
    ]


def approx_section(experiments: Sequence[Any], results: Path, figures: Path) -> list[str]:
    """The section's Markdown lines (empty when no study holds approximations): what is measured and
    the rule, a table per model at the read k, the reading, each study's figure, and every k of
    every study under ``### Every k`` (for the appendix).

    Parameters
    ----------
    experiments : sequence of Experiment
        The report's experiments.
    results : Path
        The folder of every experiment's results directory.
    figures : Path
        The report's figure folder (each study's figure is drawn under ``figures/<experiment>/``).

    Returns
    -------
    list of str
    """
    from attnspec.spectra.approx.rule import THRESHOLD

    found = studies(experiments, results)
    if not found:
        return []
    k = read_k([v for *_, v in found])
    docs = sorted({int(i) for *_, v in found for i in v["inputs"] if i})
    md = [
        f"## {HEADING}",
        "",
        "Linformer's premise is softmax(Q(EK)ᵀ/√d)(FV) ≈ PV with a k that stays fixed as n grows. Each method "
        "replaces PV in one layer at a time on the model's own Q, K, V, on held-out documents (fitted methods are "
        "fitted on other documents of the same corpus): Linformer with E, F fitted (`linformer-fit`) and as in its "
        "proof (E = δR, F = e^(−δ)R, `linformer-proof`), Performer (FAVOR+) and Nyström, beside uniform attention "
        "(the mean of V, which a method must beat) and the best rank-k P applied to V (what low rank of P alone "
        "allows, not a bound for E and F). Error ‖Ŷ − PV‖_F/‖PV‖_F, the mean over layers and heads, 95% intervals "
        f"over {'–'.join(map(str, docs))} held-out documents. {rule_statement(THRESHOLD)} End to end: every "
        "layer replaced at once, the cosine of the model's sentence embedding to the exact model's (an encoder) or "
        "the change in its next-token loss (a decoder).",
        "",
    ]
    by_model = _by_model(found)
    readings = []
    for model, held in by_model.items():
        md += model_table(model, held, k)
        readings.append(f"on {model}, {model_verdicts(held, k)}")
    md += [f"Reading at k = {k}: " + "; ".join(readings) + ".", ""]
    md += [" ".join(_end_to_end_reading(model, held, k) for model, held in by_model.items()), ""]
    md += random_projection_note(experiments, results)
    shown: set[str] = set()  # the body shows each model's first study; the others go with every k
    body, rest = [], []
    for study in found:
        (rest if study[0] in shown else body).append(study)
        shown.add(study[0])
    md += _figures(body, figures)
    md += _every_k(found) + _figures(rest, figures)
    return md


def rule_statement(threshold: float) -> str:
    """The rule as the section states it before its numbers, each verdict with its short form.

    Parameters
    ----------
    threshold : float
        The rule's threshold on the slope per doubling of n.

    Returns
    -------
    str
    """
    from attnspec.spectra.approx.rule import GROWS, HOLDS, NO_BETTER, NO_BETTER_THAN_ZERO, NULL_VERDICT, UNRESOLVED

    def said(verdict: str) -> str:
        short = VERDICTS[verdict]
        return f"*{verdict}*" + ("" if short in verdict else f" ({short})")

    return (
        "The rule, stated before the numbers (docs/approximations.md), sets each method beside two references: "
        "zero output, whose error is exactly 1 by construction, and uniform attention. A method's verdict is "
        f"{said(NO_BETTER_THAN_ZERO)} when the upper end of its error's interval is not below 1 at some n, whatever "
        f"its slope; otherwise {said(GROWS)} when the lower end of the slope of error against log₂ n is above "
        f"+{threshold} per doubling; {said(HOLDS)} when the slope's upper end is below +{threshold} and the error is "
        f"below uniform attention's at every n (paired over documents); {said(NO_BETTER)} when the slope passes "
        f"but that comparison fails; else {said(UNRESOLVED)}. Uniform attention itself is {said(NULL_VERDICT)}."
    )


def _figures(found: Sequence[tuple[str, str, Path, pd.DataFrame]], figures: Path) -> list[str]:
    """Each study's figure at one column, drawn from its saved summary, hollow where the rule finds a
    method no better than a reference."""
    from attnspec.plots.approx import plot_approx
    from attnspec.storage.results import read_table

    md = []
    for model, corpus, run, v in found:
        plot_approx(read_table(run, "approx_summary"), figures / run.name, rule=v, title=f"{model} · {corpus}")
        md += [f"![held-out error against n, {model} on {corpus}](figures/{run.name}/approx_errors.png)", ""]
    return md


def _every_k(found: Sequence[tuple[str, str, Path, pd.DataFrame]]) -> list[str]:
    """``### Every k``: each study's full table (every k and method)."""
    md = ["### Every k", ""]
    for model, corpus, run, v in found:
        plan = json.loads((run / "meta.json").read_text()).get("approx") or {}
        md += [
            f"`{run.name}` ({model} on {corpus}; {plan.get('train')} documents fitted on, {plan.get('held_out')} "
            f"held out, seed {plan.get('seed')}, fit budget {plan.get('budget') or 'default'}):",
            "",
            "| k | method | error at smallest n | error at largest n | slope per doubling | verdict | "
            "below uniform at every n | end to end |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in v.to_dict("records"):
            if r["note"]:
                md.append(f"| {r['k']} | {r['method']} | — | — | — | not applied: {r['note']} | — | — |")
                continue
            md.append(
                f"| {r['k']} | {r['method']} | {_error(r, 'first')} (n = {int(r['n_first'])}) | "
                f"{_error(r, 'last')} (n = {int(r['n_last'])}) | {_slope(r)} | {r['verdict']} | {below_uniform(r)} | "
                f"{end_to_end(r)} |"
            )
        md += [*_fit_lines(run, v), ""]
    return md


def _fit_lines(run: Path, v: pd.DataFrame) -> list[str]:
    """How well each fitted method fit its training documents, beside its held-out error: a
    held-out error far above the training error is a projection that does not carry to new
    documents, not a property of attention."""
    path = run / "approx_fits.parquet"
    if not path.is_file():
        return []
    fits = pd.read_parquet(path)
    lines = []
    for (method, k), f in fits.groupby(["method", "k"], sort=True):
        by_n = f.groupby("n")["train_error"].mean()  # mean over layers (and heads, within the fit)
        row = v[(v["method"] == method) & (v["k"] == k)]
        if row.empty or row["note"].iloc[0]:
            continue
        r = row.iloc[0]
        first, last = int(r["n_first"]), int(r["n_last"])
        if first not in by_n.index or last not in by_n.index:
            continue
        train = f"{by_n[first]:.3f} (n = {first}) → {by_n[last]:.3f} (n = {last})"
        held = f"{r['error_first']:.3f} → {r['error_last']:.3f}"
        gap = r["error_last"] - by_n[last]
        lines.append(
            f"- {method} at k = {k}: training error {train} on {int(f['train_inputs'].iloc[0])} documents "
            f"({f['optimizer'].iloc[0]}, {int(f['steps'].iloc[0])} steps, initialised at {f['init'].iloc[0]}); "
            f"held-out {held}, {gap:+.3f} above training at n = {last}."
        )
    return lines
