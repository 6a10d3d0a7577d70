"""One section per paper: each checking experiment's verdict lines, its table of the rows it adds,
the basis it rests on and its figures (redrawn from the saved results).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

from attnspec.report.experiments import PAPERS, RUN_FILE, VERDICT_FILE, Experiment, spectrum_runs
from attnspec.report.figure1 import _spectrum_section
from attnspec.report.runner import RunRecord
from attnspec.storage.writer import atomic_write_bytes


def _figures_of(result_dir: Path) -> list[Path]:
    return sorted(p for p in result_dir.rglob("*.png"))


def _copy_figures(src: Path, dest: Path) -> list[Path]:
    out = []
    for p in _figures_of(src):
        target = dest / p.relative_to(src)
        # written like every file (temporary name, then renamed): never through a link at the target
        atomic_write_bytes(target, p.read_bytes())
        svg = p.with_suffix(".svg")
        if svg.is_file():
            atomic_write_bytes(target.with_suffix(".svg"), svg.read_bytes())
        out.append(target)
    return out


def _redraw(command: str, result_dir: Path) -> None:
    """Draw a saved checking result's figures again with the current plotting code (figures
    are never reused from an earlier run: the code that draws them may have changed)."""
    from attnspec.battery import PLOTTERS, plot_results

    if command in PLOTTERS:
        for old in [*result_dir.rglob("*.png"), *result_dir.rglob("*.svg")]:
            old.unlink()  # a figure the current code no longer draws must not be copied on
        plot_results(command, result_dir)


def _basis_lines(result_dir: Path) -> list[str]:
    """What a check on real attention rests on: how many real matrices, of which model and corpus,
    which reference matrices are drawn beside them, and, for Theorem 1, whether it can fail at
    this n and ε and what was measured (:func:`_decidability`)."""
    meta_path = result_dir / "meta.json"
    if not meta_path.is_file():
        return []
    ident = json.loads(meta_path.read_text()).get("identity") or {}
    if not ident.get("model"):
        return []
    count, n = ident.get("count"), ident.get("n")
    text = (
        f"Basis: {count} real attention matrices P ({n} × {n}, `--count {count}`) of `{ident['model']}` on "
        f"{ident.get('data')} text"
    )
    table = result_dir / "jl.parquet"
    if not table.is_file():
        return [text + "; the verdicts speak for these matrices, not for the model's attention in general.", ""]
    rows = pd.read_parquet(table)
    real = rows["attention"].astype(str).str.startswith(f"{ident['model']}[")
    reference = sorted(set(rows.loc[~real, "attention"].astype(str)))
    if reference:
        text += f", beside {len(reference)} reference matrices drawn for comparison ({', '.join(reference)})"
    text += "; the real-attention rows speak for these matrices, not for the model's attention in general."
    mine = rows[real & (rows["k"] < rows["n"])]
    if not mine.empty and "reading" in mine:
        meta = json.loads(meta_path.read_text())
        text += " " + _decidability(
            mine, int(mine["n"].max()), float(meta["parameters"]["eps"]), float(meta["dimensions"]["linformer_k"])
        )
    return [text, ""]


def _decidability(mine: pd.DataFrame, n: int, eps: float, k_thm: float) -> str:
    """Whether Theorem 1 can fail on the real matrices at this n and ε, the formula that says so,
    and the measured failure rate where it speaks (its own k) or, when it cannot, just below n."""
    from attnspec.theory.linformer.battery import JLConfig
    from attnspec.theory.linformer.dimensions import EPS_FASTEST, theorem1_decisive_from, union_bound_min_k

    k_min = union_bound_min_k(n, eps)
    law = "Theorem 1's union bound 2n·e^(−(ε²−ε³)k/4) (eq. 20) is below 1 only for k > 4 ln(2n)/(ε² − ε³)"
    rel = mine[mine["reading"] == "relative"]
    if k_min > n - 1 or rel.empty:
        top = mine[mine["k"] == mine["k"].max()]
        parts = [f"{r} reading {int(g['failures'].sum())}/{int(g['trials'].sum())}" for r, g in top.groupby("reading")]
        return (
            f"{law}, k ≥ {k_min} > n − 1 at ε = {eps:.3g}, so no k below n can decide it here (nor any ε below "
            f"n = {theorem1_decisive_from()}: ε² − ε³ ≤ 4/27); just below n (k = {int(top['k'].iloc[0])}) the real "
            f"matrices' projections miss ε in " + " and ".join(parts) + " trials (all choices of w pooled)."
        )
    default = JLConfig.eps
    at = rel[rel["k"] >= min(k_thm, n - 1)]
    at = at[at["k"] == at["k"].min()]
    per_w = at.groupby("w")[["failures", "trials"]].sum()
    per_w = per_w.loc[(per_w["failures"] / per_w["trials"]).sort_values(ascending=False).index]
    chosen = "ε = 2/3, which maximises ε² − ε³" if abs(eps - EPS_FASTEST) < 1e-9 else f"ε = {eps:.3g}"
    return (
        f"{law}: at attnspec's default ε = {default:g} that is k ≥ {union_bound_min_k(n, default)} > n, so this "
        f"run takes {chosen}; there it is k ≥ {k_min}, and Theorem 1's own k = {k_thm:.0f} < n = {n}: the check "
        f"can fail. At k = {int(at['k'].iloc[0])} the real matrices' projections miss ε in the relative reading in "
        + ", ".join(f"{int(r.failures)}/{int(r.trials)} (w = {w.replace('_', ' ')})" for w, r in per_w.iterrows())
        + f" trials, against a claimed ≤ {float(at['bound'].iloc[0]):.2g}."
    )


def _pct(x: float) -> str:
    return "—" if pd.isna(x) else f"{100 * x:.1f}"


def _osa_train_section(d: Path) -> list[str]:
    """osa-train: the paper's Table 2 beside the measurement, the orderings, the budget."""
    from attnspec.plots.osa_train import trained_data  # the plots' module loads matplotlib: on use only

    summary_path = next((p for p in (d / "summary.parquet", d / "osa_train_summary.parquet") if p.is_file()), None)
    if summary_path is None:
        return []
    summary = pd.read_parquet(summary_path)
    meta = json.loads((d / "meta.json").read_text()) if (d / "meta.json").is_file() else {}
    md = _osa_train_budget(meta, summary)
    paper, orders = d / "osa_train_paper.parquet", d / "osa_train_orderings.parquet"
    data = trained_data(meta)
    where = "MNIST" if data == "mnist" else "8×8 digits"
    if paper.is_file():
        table2 = (meta.get("paper_setup") or {}).get("table2") or {}
        t = pd.read_parquet(paper)
        md += [
            f"Against the paper's Table 2 ({table2.get('source', 'Zhang & Martens, Appendix D, Table 2')}). "
            f"attnspec: the same five models on {where}; the interval resamples seeds (replicates: data draw, "
            "initialisation and batch order)"
            + (
                "."
                if data == "mnist"
                else "; the paper's column is MNIST, this one is not: the two columns are not like for like."
            ),
            "",
            f"| model | paper (MNIST), % | attnspec ({where}), % | 95% CI over seeds | per seed | rank paper / here |",
            "|---|---|---|---|---|---|",
        ]
        for r in t.to_dict("records"):
            # list columns are stored as JSON text (attnspec.storage.results)
            seeds = json.loads(r["accuracies"]) if isinstance(r["accuracies"], str) else r["accuracies"]
            md.append(
                f"| {r['label']} | {_pct(r['paper_accuracy'])} | {_pct(r['accuracy_mean'])} | "
                f"[{_pct(r['accuracy_ci_low'])}, {_pct(r['accuracy_ci_high'])}] | "
                f"{' '.join(_pct(a) for a in seeds)} | {r['paper_rank']} / {r['rank']} |"
            )
        md.append("")
    if orders.is_file():
        md += _osa_train_orderings(pd.read_parquet(orders), dict(zip(summary["model"], summary["label"], strict=True)))
    if meta.get("departures"):
        # one paragraph, not a list: twelve departures would take a page of the report's line budget
        md += ["Every departure from the paper's Appendix D in this run (meta.json `departures`): "
               + "; ".join(meta["departures"]) + ".", ""]  # fmt: skip
    md += [
        f"A 95% interval over {int(summary['n_seeds'].min())} seeds is wide, so an ordering *not resolved* here is "
        "not an ordering refuted.",
        "",
    ]
    return md


def _osa_train_budget(meta: dict, summary: pd.DataFrame) -> list[str]:
    """The compute rule and the stopping rule every model ran under, and how the runs ended."""
    b = meta.get("budget")
    if not b:
        return []
    ended = (
        f"{int(summary['stopped_by_patience'].sum())} of {int(summary['n_seeds'].sum())} runs ended by the patience "
        "rule, the others at the end of the budget"
        if b.get("patience")
        else f"all {int(summary['n_seeds'].sum())} runs used the whole budget and report their last model"
    )
    rule = b.get("compute_rule", "the same budget of epochs for every model")
    return [
        f"Compute rule: {rule}. Stopping rule (every model, every seed): {b['rule']}. Mean steps per run, by "
        f"model: {summary['steps_mean'].min():.0f}–{summary['steps_mean'].max():.0f}; {ended}.",
        "",
    ]


def _osa_train_orderings(o: pd.DataFrame, labels: dict) -> list[str]:
    """The paper's orderings, one row per pair, and one line naming those that reproduce."""
    md = [
        "The paper's orderings (pairs written with the paper's higher model first; Δ = paired difference of "
        "test accuracy, mean over seeds, 95% t interval over seeds; an ordering is *reproduced* only when its "
        "interval excludes 0 on the paper's side; *not resolved* = the interval holds 0):",
        "",
        "| pair | paper Δ, points | attnspec Δ, points [95% CI over seeds] | outcome |",
        "|---|---|---|---|",
    ]
    for r in o.to_dict("records"):
        paper_diff = "0.0 (equal)" if abs(r["paper_diff"]) < 5e-4 else f"{100 * r['paper_diff']:+.1f}"
        md.append(
            f"| {labels.get(r['a'], r['a'])} vs {labels.get(r['b'], r['b'])} | "
            f"{paper_diff} | {100 * r['diff_mean']:+.1f} "
            f"[{100 * r['diff_ci_low']:+.1f}, {100 * r['diff_ci_high']:+.1f}] | {r['outcome']} |"
        )
    from attnspec.theory.osa.train_paper import ordering_sentence

    return [*md, "", *[f"- {line}" for line in ordering_sentence(o, labels)], ""]


def paper_sections(
    experiments: list[Experiment],
    records: dict[str, RunRecord],
    out: Path,
    *,
    quick: bool,
    pages: dict[str, list[str]] | None = None,
    figure1: bool = True,
) -> list[str]:
    """One ``## <paper>`` section per paper with experiments: Figure 1 first where the paper
    has spectrum runs (unless ``figure1`` is False: the report shows it as its own question),
    then each checking experiment: a paragraph, a table of its claims by verdict and its
    figures; each experiment's command, cost and verdict rows go to ``pages`` (the appendix).

    Parameters
    ----------
    experiments : list of Experiment
    records : dict of str to RunRecord
    out : Path
        The report folder.
    quick : bool
        The quick arguments were run.
    pages : dict of str to list of str, optional
        The appendix pages, extended here.
    figure1 : bool
        Open a paper's section with Figure 1 where it has spectrum runs.

    Returns
    -------
    list of str
        Markdown lines.
    """
    from attnspec.plots.spectrum import plot_compare, plot_run

    results, figures = out / "results", out / "figures"
    pages = {} if pages is None else pages
    md: list[str] = []
    for paper, cite in PAPERS.items():
        exps = [e for e in experiments if e.paper == paper]
        if not exps:
            continue
        md += [f"## {cite}", "", *_paper_paragraph(exps, results)]
        runs = spectrum_runs(exps, results, "figure1")
        if runs and figure1:
            md += _spectrum_section(runs, results, figures, plot_run, plot_compare)
        sections = [
            _experiment_section(exp, records, out, quick=quick, pages=pages)
            for exp in exps
            if exp.command != "spectrum"
        ]
        md += [line for section in _without_repeats(sections) for line in section]
    return md


_FIGURE = re.compile(r"!\[[^\]]*\]\(figures/[^/)]+/([^/.)]+)\.png\)")


def _without_repeats(sections: list[list[str]]) -> list[list[str]]:
    """Experiment sections of one paper with a verdict table equal to an earlier one's replaced by
    a line naming it; the earlier section then loses the figures the later one draws again (the
    later experiment is the broader run of the same check)."""
    from attnspec.report.anchors import anchor

    seen: dict[str, int] = {}  # table text → the section that shows it
    out = [list(s) for s in sections]
    for k, section in enumerate(out):
        start = next((i for i, line in enumerate(section) if line.startswith("| verdict | claims | ids |")), None)
        if start is None:
            continue
        end = next((i for i in range(start, len(section)) if not section[i].startswith("|")), len(section))
        key = "\n".join(section[start:end])
        if key not in seen:
            seen[key] = k
            continue
        first = out[seen[key]]
        title = first[0].removeprefix("### ")
        section[start:end] = [f"Claims by verdict: the same as [{title}](#{anchor(title)}) above."]
        again = {m.group(1) for line in section for m in _FIGURE.finditer(line)}
        out[seen[key]] = [
            line for line in first if not (_FIGURE.search(line) and _FIGURE.search(line).group(1) in again)
        ]
    return out


def _paper_paragraph(exps: list[Experiment], results: Path) -> list[str]:
    """What the checks of one paper found, in a paragraph: its claims by verdict (as the
    checking commands print it), the ones that fail, and where the evidence is."""
    from attnspec.report.anchors import anchor
    from attnspec.report.ledger import HEADING, findings, ledger_rows

    rows = ledger_rows(exps, results, VERDICT_FILE)
    if not rows:
        return []
    return [
        f"The claims checked: {findings(rows, named=len(rows))}. Each experiment below lists its claims by "
        f"verdict; the [ledger](#{anchor(HEADING)}) gives each claim's why, its appendix page every row.",
        "",
    ]


def _experiment_section(
    exp: Experiment, records: dict[str, RunRecord], out: Path, *, quick: bool, pages: dict[str, list[str]]
) -> list[str]:
    """``### <experiment>``: note, basis, its claims by verdict, figures; the appendix page."""
    from attnspec.report.appendix import FOLDER, experiment_page

    d = out / "results" / exp.name
    figures = out / "figures"
    md = [f"### {exp.heading(quick)}", ""]
    if exp.note:
        md += [exp.note.strip(), ""]
    rec = records.get(exp.name)
    pages[exp.name] = experiment_page(exp, rec, out, quick=quick, verdict_file=VERDICT_FILE, run_file=RUN_FILE)
    if not (d / RUN_FILE).is_file() or (rec is not None and rec.status in ("failed", "skipped")):
        md += [
            f"_Not available: {rec.status if rec else 'missing'}{(' — ' + rec.detail) if rec and rec.detail else ''}._",
            "",
        ]
        return md
    md += _basis_lines(d)
    if (d / VERDICT_FILE).is_file():
        md += _verdict_counts(exp, out / "results")
    md += [f"Command, cost and every verdict row: [{FOLDER}/{exp.name}.md]({FOLDER}/{exp.name}.md).", ""]
    if exp.command == "osa-train":
        md += _osa_train_section(d)
    _redraw(exp.command, d)
    for fig in _copy_figures(d, figures / exp.name):
        md.append(f"![{fig.stem}]({fig.relative_to(out).as_posix()})")
    md.append("")
    return md


def _verdict_counts(exp: Experiment, results: Path) -> list[str]:
    """A small table: per claim verdict (as the command prints it, and as in the ledger), how
    many of this experiment's claims have it, and which."""
    from attnspec.report.ledger import ledger_rows

    by: dict[str, list[str]] = {}
    for row in ledger_rows([exp], results, VERDICT_FILE):
        by.setdefault(row["stated"], []).append(row["id"])
    if not by:
        return []
    md = ["| verdict | claims | ids |", "|---|---|---|"]
    md += [f"| **{v}** | {len(ids)} | {', '.join(f'`{i}`' for i in ids)} |" for v, ids in by.items()]
    return [*md, ""]
