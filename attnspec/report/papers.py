"""One section per paper: each checking experiment's verdict lines, its table of the rows it adds,
the basis it rests on and its figures (redrawn from the saved results).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from attnspec.report.experiments import PAPERS, RUN_FILE, VERDICT_FILE, Experiment, spectrum_runs
from attnspec.report.figure1 import _spectrum_section
from attnspec.report.runner import RunRecord
from attnspec.writer import atomic_write_bytes


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
    """What a check on real attention rests on: how many matrices, of which model and corpus."""
    meta_path = result_dir / "meta.json"
    if not meta_path.is_file():
        return []
    ident = json.loads(meta_path.read_text()).get("identity") or {}
    if not ident.get("model"):
        return []
    count, n = ident.get("count"), ident.get("n")
    return [f"Basis: {count} real attention matrices P ({n} × {n}, `--count {count}`) of `{ident['model']}` on "
            f"{ident.get('data')} text; every Monte Carlo row of this section is drawn on these {count} matrices, "
            "so the verdicts speak for them, not for the model's attention in general.", ""]


def _osa_train_section(d: Path) -> list[str]:
    """The training check's one table: per model, test accuracy over seeds and the paired
    difference to the ViT with its 95% t interval over seeds (every column: the appendix page
    and ``results/osa-train/``)."""
    summary = next((p for p in (d / "summary.parquet", d / "osa_train_summary.parquet") if p.is_file()), None)
    if summary is None:
        return []
    df = pd.read_parquet(summary)
    md = ["| model | seeds | test accuracy, mean ± sd | min–max | − ViT, paired [95% t interval] | diverged |",
          "|---|---|---|---|---|---|"]
    for r in df.itertuples():
        diff = "—" if pd.isna(r.diff_vs_vit_mean) else (f"{r.diff_vs_vit_mean:+.3f} [{r.diff_vs_vit_ci_low:+.3f}, "
                                                         f"{r.diff_vs_vit_ci_high:+.3f}]")
        md.append(f"| {r.label} | {r.n_seeds} | {r.test_accuracy_mean:.3f} ± {r.test_accuracy_std:.3f} | "
                  f"{r.test_accuracy_min:.3f}–{r.test_accuracy_max:.3f} | {diff} | {r.diverged_runs} |")
    return [*md, ""]


def paper_sections(experiments: list[Experiment], records: dict[str, RunRecord], out: Path, *, quick: bool,
                   pages: dict[str, list[str]] | None = None, figure1: bool = True) -> list[str]:
    """One ``## <paper>`` section per paper with experiments: Figure 1 first where the paper
    has spectrum runs (unless ``figure1`` is False: the report shows it as its own question),
    then each checking experiment: a paragraph, a table of its claims by verdict and its
    figures; each experiment's command, cost and verdict rows go to ``pages`` (the appendix)."""
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
        for exp in exps:
            if exp.command != "spectrum":
                md += _experiment_section(exp, records, out, quick=quick, pages=pages)
    return md


def _paper_paragraph(exps: list[Experiment], results: Path) -> list[str]:
    """What the checks of one paper found, in a paragraph: its claims by verdict (as the
    checking commands print it), the ones that fail, and where the evidence is."""
    from attnspec.report.anchors import anchor
    from attnspec.report.ledger import HEADING, ledger_rows
    from attnspec.verdicts import VERDICTS

    rows = ledger_rows(exps, results, VERDICT_FILE)
    if not rows:
        return []
    stated = [r["stated"] for r in rows]
    # single verdicts in the vocabulary's order, then the changing ones ("vacuous → violated")
    keys = [v for v in VERDICTS if v in stated] + sorted({v for v in stated if v not in VERDICTS})
    tally = ", ".join(f"{stated.count(v)} {v}" for v in keys)
    failing = [r["id"] for r in rows if "violated" in r["stated"]]
    return [f"{len(rows)} claims of this paper are checked: {tally}"
            + (f"; the statements that fail: {', '.join(f'`{i}`' for i in failing)}" if failing else "")
            + f". Each experiment below lists its claims by verdict; the [ledger](#{anchor(HEADING)}) gives each "
            "claim's reason, its appendix page every row.", ""]


def _experiment_section(exp: Experiment, records: dict[str, RunRecord], out: Path, *, quick: bool,
                        pages: dict[str, list[str]]) -> list[str]:
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
        md += [f"_Not available: {rec.status if rec else 'missing'}{(' — ' + rec.detail) if rec and rec.detail else ''}._", ""]
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
