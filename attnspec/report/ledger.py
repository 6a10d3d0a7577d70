"""The claims ledger: one table row per claim id over every checking experiment of the report —
the id, the paper, its source (the paper or notes on it) and place, the claim's verdict and why.

The verdict is :func:`attnspec.verdicts.headline.claim_verdict`'s, the one the checking commands
print, ``result.summary()`` returns and the report's summary counts; :func:`findings` counts
claims by verdict and failures per source, with misprints listed apart from failures.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: The longest reason a ledger cell carries (characters); longer evidence is cut at a word.
REASON_CHARS = 240
HEADING = "Claims ledger"


def reading_verdict(rs: Any) -> tuple[str, Any]:
    """(verdict, deciding row) of one reading: its most telling row at the paper's parameters
    where the check marks any, else of its deciding rows, else of all its rows.

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
    """``evidence`` cut at a word to ``limit`` characters (marked with "…").

    Parameters
    ----------
    evidence : str
    limit : int

    Returns
    -------
    str
    """
    text = str(evidence or "").strip()
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0].rstrip(",(:;") + " …"


def ledger_rows(experiments: Sequence[Any], results: Path, verdict_file: str) -> list[dict[str, str]]:
    """One dict per claim id, in the order the experiments first show the claims; the rows of
    every experiment that checks a claim are pooled. Keys: id, paper, place, source (``paper``
    or ``notes p. N``), verdict and stated (both the claim's verdict as the checking commands
    print it, :func:`attnspec.verdicts.headline.claim_verdict`), readings (every reading's
    verdict) and reason (the claim's why, built from the rows' fields).

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
    from attnspec.verdicts.headline import claim_verdict, deciding_words
    from attnspec.verdicts.sentences import summarize

    rows: list[Any] = []
    for exp in experiments:
        path = Path(results) / exp.name / verdict_file
        if exp.verdicts and path.is_file():
            rows += rows_from_json(json.loads(path.read_text()))
    out = []
    for cs in summarize(rows):
        try:
            place = claim_registry.get(cs.claim).where
        except ValueError:
            place = cs.name
        cv = claim_verdict(cs)
        out.append(
            {
                "id": cs.claim,
                "paper": cs.claim.split(".")[0],
                "place": place,
                "source": cv.source,
                "verdict": cv.verdict,
                "stated": cv.verdict,
                "readings": " · ".join(f"{v} ({r})" for r, v in cv.readings.items()) if len(cv.readings) > 1 else "",
                "reason": reason(cv.why),
                "deciding": deciding_words(cs, cv.verdict),
            }
        )
    return out


def tally(rows: Sequence[dict[str, str]]) -> str:
    """``"5 holds, 3 loose, 1 misprint: holds as corrected, 2 vacuous → violated"``: claims by verdict,
    the seven in the vocabulary's order, then the misprint, then the changes.

    Parameters
    ----------
    rows : sequence of dict
        :func:`ledger_rows`' dicts.

    Returns
    -------
    str
    """
    from attnspec.verdicts.vocabulary import MISPRINT, VERDICTS

    found = [r["verdict"] for r in rows]
    keys = [v for v in (*VERDICTS, MISPRINT) if v in found] + sorted(
        {v for v in found if v not in VERDICTS} - {MISPRINT}
    )
    return ", ".join(f"{found.count(v)} {v}" for v in keys)


def failures(rows: Sequence[dict[str, str]], *, named: int = 3) -> str:
    """``"fails: `a`, `b`; misprints (hold as corrected): `c`"``: the claims that fail (named up
    to ``named``, else counted) and, apart, the misprints; "0 fail" when none fails.

    Parameters
    ----------
    rows : sequence of dict
        :func:`ledger_rows`' dicts.
    named : int
        The most failing ids named before they are only counted.

    Returns
    -------
    str
    """
    from attnspec.verdicts.vocabulary import MISPRINT, is_failure

    failing = [r["id"] for r in rows if is_failure(r["verdict"])]
    misprints = [r["id"] for r in rows if r["verdict"] == MISPRINT]
    text = f"fails: {', '.join(f'`{i}`' for i in failing)}" if 0 < len(failing) <= named else f"{len(failing)} fail"
    if misprints:
        text += f"; misprints (hold as corrected): {', '.join(f'`{i}`' for i in misprints)}"
    return text


def findings(rows: Sequence[dict[str, str]], *, named: int = 3) -> str:
    """Claims by verdict and failures, counted per source: the paper's own statements first,
    then those of notes on it ("notes p. 2–4: 10 claims: ...; 4 fail").

    Parameters
    ----------
    rows : sequence of dict
        :func:`ledger_rows`' dicts of one paper.
    named : int
        The most failing ids named per source before they are only counted.

    Returns
    -------
    str
    """
    groups: dict[str, list[dict[str, str]]] = {}
    for r in rows:
        groups.setdefault("paper" if r.get("source", "paper") == "paper" else "notes", []).append(r)
    parts = []
    for source, mine in groups.items():
        head = f"{len(mine)} claims" if source == "paper" else f"{len(mine)} claims of the notes ({_pages(mine)})"
        if source == "paper" and len(groups) > 1:
            head = f"{len(mine)} claims of the paper itself"
        parts.append(f"{head}: {tally(mine)}; {failures(mine, named=named)}")
    return ". ".join(parts)


def _pages(rows: Sequence[dict[str, str]]) -> str:
    pages = sorted({r["source"].removeprefix("notes").strip() for r in rows} - {""})
    return ", ".join(pages) if pages else "notes"


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
            f"{len(rows)} claims, one row each: the claim's verdict as the checking commands print it, and why "
            "(the reading and parameter where it is decided, with its numbers). "
            "[How to read a verdict](#how-to-read-a-verdict); every row in full: the appendix pages."
        ),
        "",
        "| claim | paper, place | verdict | why |",
        "|---|---|---|---|",
    ]
    for r in rows:
        source = "" if r["source"] == "paper" else f" ({r['source']})"
        md.append(
            f"| `{r['id']}` | {_md(short.get(r['paper'], r['paper']))}{_md(source)}, {_md(r['place'])} "
            f"| **{_md(r['verdict'])}** | {_md(r['reason'])} |"
        )
    return [*md, ""]
