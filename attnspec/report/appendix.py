"""The report's appendix, ``reports/appendix/``: one Markdown page per experiment (its command,
cost, status, provenance and every verdict row) and the long tables of the body's sections.

The body keeps, per question, a paragraph, one small table and its figures; a table longer than
:data:`MAX_BODY_ROWS` rows moves to the appendix page of its section, with a link left in its
place.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from attnspec.report.anchors import anchor

FOLDER = "appendix"
#: The most data rows a table in REPORT.md's body may have.
MAX_BODY_ROWS = 12


def page_name(title: str) -> str:
    """A file name for an appendix page: the title's anchor (``Beyond Figure 1`` → ``beyond-figure-1``).

    Parameters
    ----------
    title : str

    Returns
    -------
    str
    """
    return re.sub(r"-+", "-", anchor(title)).strip("-") or "section"


#: The lines every appendix page opens with, before what is moved to it.
def _page_head(title: str) -> list[str]:
    return [f"# {title}", "", "[Back to the report](../REPORT.md)", ""]


def section_page(pages: dict[str, list[str]], heading: str) -> str:
    """The name of the appendix page of the body section ``heading``, opened with its title.

    Parameters
    ----------
    pages : dict of str to list of str
        The appendix pages' lines, by page name (changed in place).
    heading : str
        The body section's heading.

    Returns
    -------
    str
        The page's name (a new page is opened in ``pages``).
    """
    name = page_name(heading)
    pages.setdefault(name, _page_head(heading))
    return name


def drop_empty(pages: dict[str, list[str]]) -> dict[str, list[str]]:
    """The pages that received something beyond their opening lines.

    Parameters
    ----------
    pages : dict of str to list of str

    Returns
    -------
    dict of str to list of str
    """
    return {name: lines for name, lines in pages.items() if len(lines) > len(_page_head(""))}


def move_tables(
    lines: Sequence[str], page: str, pages: dict[str, list[str]], *, keep: int = 1, per: str = "## "
) -> list[str]:
    """``lines`` with their tables moved to ``pages[page]`` (under a heading named after the body
    heading above each), a linked line left in each one's place; the body keeps the first
    ``keep`` tables of at most MAX_BODY_ROWS rows after each heading that starts with ``per``
    (``"## "``: per section; ``"### "``: per subsection).

    Parameters
    ----------
    lines : sequence of str
        A body section's Markdown lines.
    page : str
        The appendix page the tables go to.
    pages : dict of str to list of str
        The appendix pages' lines, by page name (changed in place).
    keep : int
        Tables kept in the body per heading.
    per : str
        The heading level the count restarts at.

    Returns
    -------
    list of str
        Markdown lines.
    """
    out: list[str] = []
    heading = page
    kept = 0
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
            if line.startswith(per):
                kept = 0
        if not line.startswith("|"):
            out.append(line)
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j].startswith("|"):
            j += 1
        table = list(lines[i:j])
        if len(table) - 2 > MAX_BODY_ROWS or kept >= keep:
            moved = pages.setdefault(page, [])
            count = sum(1 for h in moved if h.startswith("## ") and h[3:].startswith(heading))
            title = heading if count == 0 else f"{heading} ({count + 1})"
            moved += [f"## {title}", "", *table, ""]
            out.append(
                f"_Table ({len(table) - 2} rows) in the appendix: "
                f"[{FOLDER}/{page}.md]({FOLDER}/{page}.md#{anchor(title)})._"
            )
        else:
            out += table
            kept += 1
        i = j
    return out


def move_tables_by_section(
    lines: Sequence[str], pages: dict[str, list[str]], *, keep: int = 1, per: str = "## "
) -> list[str]:
    """:func:`move_tables` applied to each ``## `` section of ``lines`` on its own, so that a
    table moves to the appendix page of the section it sits in (a block that holds several
    sections, such as one per paper, sends each paper's tables to that paper's page).

    Parameters
    ----------
    lines : sequence of str
        Markdown lines of one or more ``## `` sections.
    pages : dict of str to list of str
        The appendix pages' lines, by page name (changed in place).
    keep : int
        Tables kept in the body per heading.
    per : str
        The heading level the count restarts at.

    Returns
    -------
    list of str
        Markdown lines.
    """
    starts = [i for i, line in enumerate(lines) if line.startswith("## ")]
    if not starts or starts[0] != 0:
        starts = [0, *starts]
    out: list[str] = []
    for i, j in zip(starts, [*starts[1:], len(lines)], strict=True):
        chunk = list(lines[i:j])
        out += move_tables(chunk, section_page(pages, chunk[0].lstrip("#").strip()), pages, keep=keep, per=per)
    return out


def experiment_page(exp: Any, record: Any, out: Path, *, quick: bool, verdict_file: str, run_file: str) -> list[str]:
    """The appendix page of one experiment: command, status, cost, provenance, verdict lines and
    the table of every verdict row.

    Parameters
    ----------
    exp : Experiment
    record : RunRecord or None
        How its results came about in this invocation (None: missing).
    out : Path
        The report folder.
    quick : bool
        The quick arguments were run.
    verdict_file : str
        The verdict table's file name in the results directory.
    run_file : str
        The run record's file name in the results directory.

    Returns
    -------
    list of str
        Markdown lines.
    """
    from attnspec.report.experiments import display_command
    from attnspec.report.figure1 import _provenance
    from attnspec.report.markdown import _md, summarise_verdicts, verdict_lines_md

    d = out / "results" / exp.name
    md = _page_head(f"{exp.name}: {exp.heading(quick)}")
    if exp.note:
        md += [exp.note.strip(), ""]
    status = getattr(record, "status", "missing")
    detail = getattr(record, "detail", "")
    seconds = 0.0
    if (d / run_file).is_file():
        seconds = float(json.loads((d / run_file).read_text()).get("seconds", 0.0))
    md += [
        f"- Command: `{_md(display_command(exp, quick))}`",
        f"- Status in the invocation that wrote this page: {_md(status)}{(' (' + _md(detail) + ')') if detail else ''}",
        f"- Compute time: {seconds:.1f} s",
        f"- Tidy results: `results/{exp.name}/`",
        "",
    ]
    md += [
        line.replace(f"- `{exp.name}`: ", "- Provenance: ", 1)
        for line in _provenance([exp], out / "results")
        if line.startswith(f"- `{exp.name}`")
    ]
    if (d / "osa_train_summary.parquet").is_file():  # the training check's every column
        import pandas as pd

        from attnspec.report.markdown import _frame_md

        md += ["", "## Summary over seeds", "", _frame_md(pd.read_parquet(d / "osa_train_summary.parquet")), ""]
    if (d / verdict_file).is_file():
        rows = json.loads((d / verdict_file).read_text())
        md += [
            "",
            "## Verdicts, one line per claim",
            "",
            *verdict_lines_md(rows),
            "## Every verdict row",
            "",
            summarise_verdicts(rows),
        ]
    return md


def write_appendix(pages: dict[str, list[str]], out: Path) -> list[Path]:
    """Write every page to ``out/appendix/<name>.md`` (the folder is rebuilt whole).

    Parameters
    ----------
    pages : dict of str to list of str
        The appendix pages' lines, by page name (changed in place).
    out : Path
        The report folder.

    Returns
    -------
    list of Path
        The files written.
    """
    from attnspec.report.files import _write_text

    folder = out / FOLDER
    if folder.is_symlink():
        folder.unlink()
    elif folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    paths = []
    for name, lines in pages.items():
        text = "\n".join(lines if lines and lines[0].startswith("# ") else [*_page_head(name), *lines]).rstrip() + "\n"
        path = folder / f"{name}.md"
        _write_text(path, text)
        paths.append(path)
    return paths


def index_section(
    experiments: Sequence[Any], records: dict[str, Any], pages: dict[str, list[str]], *, quick: bool
) -> list[str]:
    """``## Appendix``: one line per page, experiments first, with each experiment's cost.

    Parameters
    ----------
    experiments : sequence of Experiment
    records : dict of str to RunRecord
    pages : dict of str to list of str
        The appendix pages' lines, by page name (changed in place).
    quick : bool
        The quick arguments were run.

    Returns
    -------
    list of str
        Markdown lines.
    """
    md = [
        "## Appendix",
        "",
        (
            "Per experiment: the command that reproduces it, its cost, its provenance and every verdict row; then the "
            "long tables of the sections above. Tidy results: `results/<experiment>/`."
        ),
        "",
    ]
    for exp in experiments:
        if exp.name in pages:
            rec = records.get(exp.name)
            cost = f", {rec.seconds / 60:.1f} min, {rec.status}" if rec is not None else ", missing"
            md.append(f"- [{exp.name}]({FOLDER}/{exp.name}.md): {exp.heading(quick)}{cost}")
    names = {e.name for e in experiments}
    for name, lines in pages.items():
        if name not in names:
            title = lines[0].lstrip("#").strip() if lines else name
            md.append(f"- [{title}]({FOLDER}/{name}.md)")
    return [*md, ""]


def move_subsections(
    lines: Sequence[str],
    page: str,
    pages: dict[str, list[str]],
    moved: Sequence[str],
    *,
    keep_figures: Sequence[str] = (),
) -> list[str]:
    """``lines`` with every ``###`` subsection whose heading starts with one of ``moved`` moved
    whole to ``pages[page]`` (its figures linked from there). A run of moved subsections leaves
    one line in the body that links each, then the figures whose file stem is in
    ``keep_figures``, which stay in the body.

    Parameters
    ----------
    lines : sequence of str
        A body section's Markdown lines.
    page : str
        The appendix page the subsections go to.
    pages : dict of str to list of str
        The appendix pages' lines, by page name (changed in place).
    moved : sequence of str
        Heading prefixes of the subsections moved.
    keep_figures : sequence of str
        File stems of figures that stay in the body.

    Returns
    -------
    list of str
        Markdown lines.
    """
    out: list[str] = []
    links: list[str] = []
    kept: list[str] = []

    def flush() -> None:
        if links:
            out.extend([f"_In the appendix: {'; '.join(links)}._", ""])
            out.extend([*kept, ""] if kept else [])
        links.clear()
        kept.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        title = line[4:].strip() if line.startswith("### ") else ""
        if not title or not any(title.startswith(m) for m in moved):
            if line.startswith("#"):
                flush()
            out.append(line)
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].startswith(("## ", "### ")):
            j += 1
        block = list(lines[i + 1 : j])
        mine = [
            img
            for b in block
            for img in re.findall(r"!\[[^\]]*\]\(figures/[^)]+\)", b)
            if Path(re.search(r"\(([^)]+)\)", img).group(1)).stem in keep_figures
        ]
        rest = [
            re.sub(r"!\[[^\]]*\]\(figures/[^)]+\)", lambda m, mine=mine: "" if m.group(0) in mine else m.group(0), b)
            for b in block
        ]
        pages.setdefault(page, []).extend(
            [f"## {title}", "", *(b.replace("](figures/", "](../figures/") for b in rest)]
        )
        links.append(f"[{title}]({FOLDER}/{page}.md#{anchor(title)})")
        kept.extend(mine)
        i = j
    flush()
    return out
