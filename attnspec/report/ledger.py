"""The claims ledger: one table row per claim id over every checking experiment of the report —
the id, the paper and place, the verdict of each reading, and a one-phrase reason taken from
the evidence of the row that decided it.

A reading's verdict is the most telling verdict (:func:`attnspec.verdicts.sentences.telling_row`)
of its rows at the paper's own parameters where the check marks any, else of its rows that
decide something (holds, loose, violated), else of all its rows: the rule the checking
commands' verdict-first lines follow.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: The longest reason a ledger cell carries (characters); longer evidence is cut at a word.
REASON_CHARS = 110
HEADING = "Claims ledger"


def reading_verdict(rs: Any) -> tuple[str, Any]:
    """(verdict, deciding row) of one reading (module docstring).

    Parameters
    ----------
    rs : attnspec.verdicts.sentences.ReadingSummary
        One reading of one claim: its rows, and those at the paper's parameters.

    Returns
    -------
    verdict : str
    row : VerdictRow
        The row that decides it.
    """
    from attnspec.verdicts.sentences import DECIDING, telling_row

    deciding = [r for r in rs.rows if r.verdict in DECIDING]
    row = telling_row(rs.paper or deciding or rs.rows)
    return row.verdict, row


def reason(evidence: str, limit: int = REASON_CHARS) -> str:
    """The evidence's first clause (up to its first ``;``), cut at a word to ``limit`` characters.

    Parameters
    ----------
    evidence : str
    limit : int

    Returns
    -------
    str
    """
    first = str(evidence or "").split(";")[0].strip()
    if len(first) <= limit:
        return first
    return first[:limit].rsplit(" ", 1)[0].rstrip(",(:") + " …"


def ledger_rows(experiments: Sequence[Any], results: Path, verdict_file: str) -> list[dict[str, str]]:
    """One dict per claim id, in the order the experiments first show the claims; the rows of
    every experiment that checks a claim are pooled. Keys: id, paper, place, verdict (every
    reading's), stated (the claim's verdict as the checking commands print it,
    :func:`attnspec.verdicts.table.claim_verdict`: e.g. "vacuous → violated" where the claim says
    nothing at its own setting but its stated probability bound fails below it) and reason
    (the first clause of the most telling reading's evidence).

    Parameters
    ----------
    experiments : sequence of Experiment
        The report's experiments.
    results : Path
        The folder of every experiment's results directory.
    verdict_file : str
        The verdict table's file name in a results directory.

    Returns
    -------
    list of dict of str to str
    """
    from attnspec.verdicts import registry as claim_registry
    from attnspec.verdicts.classify import rows_from_json
    from attnspec.verdicts.sentences import summarize
    from attnspec.verdicts.table import claim_verdict

    rows: list[Any] = []
    for exp in experiments:
        path = Path(results) / exp.name / verdict_file
        if exp.verdicts and path.is_file():
            rows += rows_from_json(json.loads(path.read_text()))
    out = []
    for cs in summarize(rows):
        try:
            claim = claim_registry.get(cs.claim)
            place = claim.where
        except ValueError:
            place = cs.name
        verdicts = [(rs.reading, *reading_verdict(rs)) for rs in cs.readings]
        stated = claim_verdict(cs).verdict
        distinct = list(dict.fromkeys(v for _, v, _ in verdicts))
        if len(distinct) == 1:
            verdict = distinct[0]
        else:
            verdict = " · ".join(f"{v} ({reading})" for reading, v, _ in verdicts)
        # the reason of the most telling reading
        from attnspec.verdicts.sentences import telling_row

        top = telling_row([row for _, _, row in verdicts])
        out.append(
            {
                "id": cs.claim,
                "paper": cs.claim.split(".")[0],
                "place": place,
                "verdict": verdict,
                "stated": stated,
                "reason": reason(getattr(top, "evidence", "")),
            }
        )
    return out


def ledger_section(
    experiments: Sequence[Any], results: Path, *, verdict_file: str, papers: dict[str, str]
) -> list[str]:
    """``## Claims ledger``: one table, one row per claim (empty without verdict rows).

    Parameters
    ----------
    experiments : sequence of Experiment
        The report's experiments.
    results : Path
        The folder of every experiment's results directory.
    verdict_file : str
        The verdict table's file name in a results directory.
    papers : dict of str to str
        Paper key → its citation (:data:`attnspec.verdicts.registry.PAPERS`).

    Returns
    -------
    list of str
        Markdown lines.
    """
    from attnspec.report.markdown import _md

    rows = ledger_rows(experiments, results, verdict_file)
    if not rows:
        return []
    short = {p: cite.split(" 20")[0].split(",")[0] for p, cite in papers.items()}
    md = [
        f"## {HEADING}",
        "",
        (
            f"{len(rows)} claims, one row each: the verdict of every reading (at the paper's parameters where the check "
            "marks them) and the first clause of the evidence that decided it. "
            "[How to read a verdict](#how-to-read-a-verdict); every row in full: the appendix pages."
        ),
        "",
        "| claim | paper, place | verdict | reason |",
        "|---|---|---|---|",
    ]
    for r in rows:
        md.append(
            f"| `{r['id']}` | {_md(short.get(r['paper'], r['paper']))}, {_md(r['place'])} | **{_md(r['verdict'])}** "
            f"| {_md(r['reason'])} |"
        )
    return [*md, ""]
