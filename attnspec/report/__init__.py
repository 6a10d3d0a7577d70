"""Regenerate every experiment, figure and verdict of ``reports/`` from ``experiments/``.

An experiment is a TOML file in ``experiments/``::

    title = "Linformer Lemma 1 and Theorems 1–2"
    paper = "linformer"            # section of the report: linformer, expressivity, osa
    command = "jl-check"           # an attnspec command
    verdicts = true                # the command prints verdict rows with --json
    group = "figure1"              # optional: spectrum runs drawn side by side

    [args]                         # the command's options, without the leading --
    n = 4096
    eps = 0.1

    [quick]                        # overrides for `attnspec report --quick`
    n = 512

Each experiment runs in-process — a checking command through
:func:`attnspec.battery.run_battery` and :func:`attnspec.battery.write_result`, the
spectrum job through :func:`attnspec.spectra.job.run_spectrum` — unless its results are
present and fresh: a key made of the command, its effective
arguments, the mode, the package version and, for a checking command, the digest of the code
its verdicts come from (:func:`~attnspec.report.experiments.checking_code_digest`) is stored with the results, and a change
of any of them reruns the experiment. Figures and REPORT.md are always rebuilt from the saved
results, never by recomputing (DESIGN.md: compute and plot apart).

This module holds the two entry points, :func:`run_report` (run what is missing or stale,
then build) and :func:`build_report` (REPORT.md and figures/ from saved results), and the
plotting-code digest. The rest, one concern per module: ``experiments`` (the TOML files and
their keys), ``runner`` (one experiment), ``markdown`` and ``files`` (how the report is
written), and one module per section: ``summary`` (the opening), ``figure1`` (Figure 1 and
the models and data), ``papers`` (a section per paper), ``beyond`` ("Beyond Figure 1").
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

from attnspec.errors import InputError
from attnspec.report.code_digest import source_digest
from attnspec.report.experiments import (
    FIGURE1_HEADING,
    PAPERS,
    RUN_FILE,
    VERDICT_FILE,
    Experiment,
    load_experiments,
)
from attnspec.report.files import _refuse_link, _write_text
from attnspec.report.runner import RunRecord, check_options, is_fresh, resolved_options, run_experiment
from attnspec.storage.writer import atomic_write_bytes


def build_report(
    experiments: list[Experiment], out: Path, records: dict[str, RunRecord], *, quick: bool, data_dir: str | None
) -> Path:
    """Write ``out/REPORT.md``, ``out/appendix/``, ``out/figures/`` and ``out/REPORT.html`` from
    the saved results in ``out/results``.

    The body follows the questions in order (how low-rank; how the rank grows with n; decoder
    against encoder; each paper's theorems; the claims ledger); its long tables, every
    experiment's command, cost and verdict rows go to the appendix; every figure is placed
    with a numbered caption (:mod:`attnspec.report.captions`).

    Parameters
    ----------
    experiments : list of Experiment
        The report's experiments.
    out : Path
        The report folder (results in ``out/results``).
    records : dict of str to RunRecord
        How each experiment's results came about (ran, reused, ...).
    quick : bool
        The results are those of the quick arguments (the report says so).
    data_dir : str, optional
        The data folder the experiments used.

    Returns
    -------
    Path
        ``out/REPORT.md``.
    """
    from attnspec.report.appendix import (
        drop_empty,
        experiment_page,
        index_section,
        move_tables_by_section,
        write_appendix,
    )
    from attnspec.report.captions import place_figures
    from attnspec.report.html import write_html
    from attnspec.report.ledger import ledger_section

    results = out / "results"
    figures = out / "figures"
    if figures.is_symlink():  # a link planted in the report folder: replaced, never followed nor emptied
        figures.unlink()
    elif figures.exists():
        shutil.rmtree(figures)
    figures.mkdir(parents=True)
    head = _head(experiments, results, records, quick=quick)
    pages: dict[str, list[str]] = {}
    sections = _sections(experiments, out, records, pages, quick=quick)
    body: list[str] = list(head)
    for lines, keep, per, first in sections:
        if not lines:
            continue
        moved = move_tables_by_section(lines, pages, keep=keep, per=per)  # each table to its own section's page
        # a table put first goes after the section's opening paragraph
        at = next((k for k in range(2, len(moved)) if moved[k] == ""), len(moved)) + 1
        body += moved[:at] + first + moved[at:]
    for exp in experiments:  # every experiment has its page; the checking ones have theirs already
        pages.setdefault(
            exp.name,
            experiment_page(exp, records.get(exp.name), out, quick=quick, verdict_file=VERDICT_FILE, run_file=RUN_FILE),
        )
    from attnspec.report.threats import threats_section

    body += threats_section(experiments, results)
    body += ledger_section(experiments, results, verdict_file=VERDICT_FILE, papers=PAPERS)
    body += _how_to_read()
    pages = drop_empty(pages)
    pages["how-to-regenerate"] = [
        "# How to regenerate",
        "",
        "[Back to the report](../REPORT.md)",
        "",
        *_regenerate_section(quick)[2:],
    ]
    body += index_section(experiments, records, pages, quick=quick)
    placed: dict[str, str] = {}
    body = place_figures(body, out, placed=placed)
    numbered = 0
    for name, lines in pages.items():  # numbered through the appendix, page after page
        pages[name] = place_figures(lines, out, label="Figure A", placed=placed, start=numbered)
        numbered += sum(1 for line in pages[name] if line.startswith("*Figure A"))
    _write_drawn_by(figures)
    write_appendix(pages, out)
    path = out / "REPORT.md"
    atomic_write_bytes(path, ("\n".join(body).rstrip() + "\n").encode())
    write_html(out)
    return path


def _sections(
    experiments: list[Experiment], out: Path, records: dict[str, RunRecord], pages: dict[str, list[str]], *, quick: bool
) -> list[tuple[list[str], int, str, list[str]]]:
    """The report's sections in order (Figure 1, beyond Figure 1, the decoder, the papers), each as
    (its lines, tables kept in the body, per which headings, a table put first); the subsections
    and tables they send to the appendix are added to ``pages``."""
    from attnspec.plots.spectrum import plot_compare, plot_run
    from attnspec.report.appendix import move_subsections, section_page
    from attnspec.report.beyond import beyond_figure1_section, scaling_table
    from attnspec.report.decoder import decoder_section
    from attnspec.report.experiments import spectrum_runs
    from attnspec.report.figure1 import _spectrum_section
    from attnspec.report.papers import paper_sections

    results = out / "results"
    figures = out / "figures"
    sections: list[tuple[list[str], int, str, list[str]]] = []
    runs = spectrum_runs(experiments, results, "figure1")
    if runs:
        figure1 = ["## " + FIGURE1_HEADING, "", *_spectrum_section(runs, results, figures, plot_run, plot_compare)[2:]]
        sections.append(
            (move_subsections(figure1, section_page(pages, FIGURE1_HEADING), pages, ["Per-layer values"]), 1, "## ", [])
        )
    beyond = beyond_figure1_section(experiments, results, figures)
    if beyond:  # per-run scaling fits, their figures, per-layer metrics and the corpus comparisons: the
        # appendix; the small multiples stay
        beyond = move_subsections(
            beyond,
            section_page(pages, beyond[0][3:]),
            pages,
            ["Scaling with n", "The metrics beyond", "Comparison:"],
        )
    sections.append((beyond, 0, "## ", scaling_table(experiments, results)))
    from attnspec.report.approx_part import HEADING, approx_section

    approx = approx_section(experiments, results, figures)
    if approx:  # every k of every study: the appendix; the per-model tables at the read k stay
        approx = move_subsections(approx, section_page(pages, HEADING), pages, ["Every k"])
    sections.append((approx, 2, "## ", []))
    decoder = decoder_section(experiments, results, figures, quick=quick)
    if decoder:  # the depth profile, the encoder beside it and the long end: the appendix
        decoder = move_subsections(
            decoder,
            section_page(pages, decoder[0][3:]),
            pages,
            ["3. How do the metrics", "4. A causal, lower-triangular", "5. The long end"],
        )
    sections.append((decoder, 1, "## ", []))
    sections.append((paper_sections(experiments, records, out, quick=quick, pages=pages, figure1=False), 1, "### ", []))
    return sections


def _write_drawn_by(figures: Path) -> None:
    """``figures/DRAWN_BY.json``: the digest of the plotting code that drew every figure in the folder."""
    _write_text(
        figures / DRAWN_BY_FILE,
        json.dumps(
            {
                "plotting_code_sha256": plotting_code_digest(),
                "files": list(PLOTTING_CODE),
                "note": "every figure here was drawn by this plotting code in one `attnspec report`",
            },
            indent=2,
        )
        + "\n",
    )


def _head(experiments: list[Experiment], results: Path, records: dict[str, RunRecord], *, quick: bool) -> list[str]:
    """The title, how the report was made, the summary and "Models and data"."""
    from attnspec.report.summary import summary_section
    from attnspec.storage.results import environment_meta

    env = environment_meta()
    total = sum(r.seconds for r in records.values())
    return [
        "# attnspec report",
        "",
        "_Generated by `attnspec report" + (" --quick" if quick else "") + "` from the experiments in `experiments/`; "
        "do not edit by hand._ "
        f"attnspec {env['attnspec_version']}, torch {env['torch']}, transformers {env.get('transformers')}, "
        f"numpy {env['numpy']}, Python {env['python']}; {os.cpu_count()} CPU cores, no GPU; generated "
        f"{env['created_utc']}; {total / 60:.1f} min of compute in all"
        + (" — **quick** mode: small sizes, the numbers are illustrative only." if quick else "."),
        "",
        *summary_section(
            experiments, results, papers=PAPERS, quick=quick, verdict_file=VERDICT_FILE, figure1_heading=FIGURE1_HEADING
        ),
        *_models_and_data(experiments, results),
    ]


def _models_and_data(experiments: list[Experiment], results: Path) -> list[str]:
    """``## Models and data``: which models and corpora the spectrum study ran on, in a paragraph
    (each experiment's full provenance is on its appendix page)."""
    from attnspec.report.decoder import display

    models: dict[str, set[str]] = {}
    for exp in experiments:
        meta_path = results / exp.name / "meta.json"
        if exp.command != "spectrum" or not meta_path.is_file():
            continue
        m = json.loads(meta_path.read_text())
        ident = m.get("identity") or {}
        model = m.get("model") or ident.get("model")
        data = ident.get("data") or (m.get("corpus") or {}).get("corpus")
        if model:
            models.setdefault(display(str(model)), set()).add(str(data))
    if not models:
        return []
    said = "; ".join(f"{name} on {', '.join(sorted(d))}" for name, d in models.items())
    return [
        "## Models and data",
        "",
        f"The spectrum study ran on the real pretrained models that install from the package index: {said}. "
        "No RoBERTa weights (the paper's models) can be fetched on the machine that made this report, which has "
        "no model hub; every statement below is about these models on these corpora. Each experiment's model "
        "revision, corpus digest, input count and seed are on its appendix page.",
        "",
    ]


#: The code that draws every figure of the report: its digest is recorded with the figures,
#: so a test can tell committed figures that an older plotting code drew.
PLOTTING_CODE = ("plots/*.py", "spectra/figure_record.py")
DRAWN_BY_FILE = "DRAWN_BY.json"


def plotting_code_digest() -> str:
    """SHA-256 over the plotting modules' syntax trees (:mod:`attnspec.report.code_digest`), in a fixed order.

    Returns
    -------
    str
        The hex digest.
    """
    root = Path(__file__).resolve().parents[1]  # the attnspec package
    return source_digest(root, [path for pattern in PLOTTING_CODE for path in sorted(root.glob(pattern))])


def _how_to_read() -> list[str]:
    """The report's "How to read a verdict" section: the whole vocabulary, from attnspec.verdicts.classify."""
    from attnspec.verdicts.classify import LOOSE_FACTOR, VERDICT_MEANINGS

    return [
        "## How to read a verdict",
        "",
        "Every row names a claim by its id (`attnspec claims` lists them with the paper's equation and "
        "statement) and the reading it was checked under, with the numbers it was decided from. "
        f"One classifier decides every row, with one looseness rule (a factor {LOOSE_FACTOR:g}):",
        "",
        *[f"- **{v}** — {m}." for v, m in VERDICT_MEANINGS.items()],
        "",
    ]


def _regenerate_section(quick: bool) -> list[str]:
    return [
        "## How to regenerate",
        "",
        "```",
        "pip install torch==2.13.0 && pip install -e '.[dev,minilm]'",
        "export ATTNSPEC_DATA_DIR=../shared/data        # WikiText-103 and IMDB text",
        "attnspec report                                  # reruns only what is missing or stale",
        "attnspec report --quick --out report-quick      # the small version CI runs (a folder of its own)",
        "```",
        "",
        "With network access to the Hugging Face hub, the paper's own models run the same way: copy "
        "`experiments/spectrum-minilm-wiki103.toml` to e.g. `spectrum-roberta-base-wiki103.toml`, set "
        '`model = "roberta-base"` (or `roberta-large`), keep `group = "figure1"`, and run `attnspec report`; '
        "or directly `attnspec spectrum --model roberta-base --data wiki103 --num-inputs 1000 --seq-len 512`.",
        "",
    ]


def run_report(
    *,
    experiments_dir: Path,
    out: Path,
    quick: bool = False,
    force: bool = False,
    only: Sequence[str] | None = None,
    data_dir: str | None = None,
    log: Callable[[str], None] = print,
) -> tuple[Path, dict[str, RunRecord]]:
    """Run what is missing or stale, then rebuild figures and REPORT.md.

    Parameters
    ----------
    experiments_dir : Path
        The folder of the experiments' TOML files.
    out : Path
        The report folder.
    quick : bool
        Run every experiment's quick arguments.
    force : bool
        Run experiments even when their results are fresh.
    only : sequence of str, optional
        Run only these experiments (the others' results are reused as they are).
    data_dir : str, optional
        The data folder (default: :func:`attnspec.spectra.data.sources.resolve_data_dir`'s).
    log : callable
        Receives one line per experiment.

    Returns
    -------
    path : Path
        ``out/REPORT.md``.
    records : dict of str to RunRecord

    Raises
    ------
    InputError
        ``only`` names an unknown experiment.
    """
    experiments = load_experiments(experiments_dir)
    from attnspec.spectra.data.sources import resolve_data_dir

    found, _ = resolve_data_dir(data_dir)  # the same default as every other command
    data_dir = None if found is None else str(found)
    names = {e.name for e in experiments}
    unknown = sorted(set(only or ()) - names)
    if unknown:
        raise InputError(f"--only {', '.join(unknown)}: no such experiment (have {', '.join(sorted(names))})")
    out = Path(out)
    results = out / "results"
    _refuse_link(results)
    for exp in experiments:  # before any experiment runs: nothing is deleted through a link, no option is bad
        _refuse_link(results / exp.name)
        if not only or exp.name in only:
            check_options(exp, results, quick=quick)
    results.mkdir(parents=True, exist_ok=True)
    records = _run_all(experiments, results, quick=quick, force=force, only=only, data_dir=data_dir, log=log)
    path = build_report(experiments, out, records, quick=quick, data_dir=data_dir)
    return path, records


def _run_all(
    experiments: Sequence[Experiment],
    results: Path,
    *,
    quick: bool,
    force: bool,
    only: Sequence[str] | None,
    data_dir: str | None,
    log: Callable[[str], None],
) -> dict[str, RunRecord]:
    """Run each experiment asked for (:func:`run_experiment`) and read the others' records; the
    experiments share each model they load (:func:`attnspec.spectra.shared_models.sharing_models`),
    and the models are dropped once the last has run."""
    from attnspec.spectra.shared_models import sharing_models

    records: dict[str, RunRecord] = {}
    with sharing_models(log=log) as share:
        for exp in experiments:
            if only and exp.name not in only:
                rec_file = results / exp.name / RUN_FILE
                if rec_file.is_file():
                    rec = json.loads(rec_file.read_text())
                    fresh = is_fresh(
                        {**rec, "returncode": 0}, exp, resolved_options(exp, results, quick=quick), quick=quick
                    )
                    records[exp.name] = RunRecord(
                        exp.name,
                        "reused" if fresh else "stale",
                        float(rec.get("seconds", 0)),
                    )
                continue
            rec = run_experiment(exp, results, quick=quick, force=force, data_dir=data_dir, log=log)
            records[exp.name] = rec
            log(f"{exp.name}: {rec.status} ({rec.seconds:.1f} s){' — ' + rec.detail if rec.detail else ''}")
        if share.loads:
            log(f"models: {share.loads} loaded, {share.reuses} reused")
    return records
