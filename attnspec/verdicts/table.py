"""The verdict table: the answer of a checking command in one screen, one row per claim.

Each claim id gets one row with three cells:

* **claim** — its short name (:attr:`attnspec.verdicts.registry.Claim.label`, e.g. "Theorem 1 (eq. 3)");
* **verdict** — the claim's verdict (:func:`attnspec.verdicts.headline.claim_verdict`: one of the
  seven words, ``A → B``, or ``misprint: holds as corrected``; all defined in
  :mod:`attnspec.verdicts.vocabulary`);
* **why** — at most two lines: the reading and the parameter where the verdict is decided,
  its deciding numbers each labelled with what it is (:mod:`attnspec.verdicts.numbers`), and
  how many rows agree.

The same verdicts are printed by ``jl-check``, ``sa-check`` and ``osa-check`` by default
(:func:`table_lines`), returned by ``result.summary()`` (:func:`summary_frame`), rendered as
Markdown for the report (:func:`markdown`) and counted by the report's ledger and summary:
all read :func:`attnspec.verdicts.headline.claim_verdict`. The why is built from the rows'
fields, never from their evidence prose. A why too long for its cell drops its least
important parts first, then is cut at a word and ends with :data:`CUT`; the caller's footer
says where the rest is (``--verbose``).

Example
-------
>>> from attnspec.verdicts.table import table_lines
>>> print("\\n".join(table_lines(result.verdicts, width=80)))   # doctest: +SKIP
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any

from attnspec.verdicts.headline import ClaimVerdict, claim_verdict, claim_verdicts, secondary
from attnspec.verdicts.vocabulary import ARROW

__all__ = [
    "ClaimVerdict",
    "claim_verdict",
    "claim_verdicts",
    "count_line",
    "cut_any",
    "markdown",
    "secondary",
    "summary_frame",
    "table_lines",
]

#: Column widths at which the claim and verdict cells wrap (the why takes the rest).
CLAIM_WIDTH = 22
VERDICT_WIDTH = 18
#: The most lines a row may take.
ROW_LINES = 2
#: The mark that ends a why cut to fit its cell (the footer says where the rest is).
CUT = "…"


# --------------------------------------------------------------------------- renderings


def summary_frame(rows_or_frame: Any) -> Any:
    """The table as a DataFrame: ``claim_id, claim, verdict, why, rows, source`` (one row per claim).

    Parameters
    ----------
    rows_or_frame : sequence of VerdictRow, or pandas.DataFrame
        The rows, or their flattened table (``verdicts.parquet``).

    Returns
    -------
    pandas.DataFrame
    """
    import pandas as pd

    return pd.DataFrame(
        [
            {
                "claim_id": c.claim,
                "claim": c.label,
                "verdict": c.verdict,
                "why": c.why,
                "rows": c.rows,
                "source": c.source,
            }
            for c in claim_verdicts(rows_or_frame)
        ],
        columns=["claim_id", "claim", "verdict", "why", "rows", "source"],
    )


def _wrap(text: str, width: int) -> list[str]:
    return textwrap.wrap(text, width=max(width, 8), break_long_words=False, break_on_hyphens=False) or [""]


def _verdict_cell(verdict: str, width: int) -> list[str]:
    if len(verdict) <= width:
        return [verdict]
    for sep in (ARROW, ": "):
        if sep in verdict:
            a, b = verdict.split(sep, 1)
            return [a + sep.rstrip(), b]
    return [verdict]


def _why_cell(parts: Sequence[str], width: int, keep: int, most: int = ROW_LINES) -> tuple[list[str], bool]:
    """The first ``keep`` parts of the why in at most ``most`` lines of ``width``, and whether
    anything was left out (the last line then ends with :data:`CUT`)."""
    parts = [p for p in parts if p]
    shown = parts[:keep]
    lines = _wrap("; ".join(shown), width)
    cut = len(shown) < len(parts)
    if len(lines) > most:
        lines, cut = lines[:most], True
    if cut:
        last = lines[-1]
        while last and len(last) + 2 > width:
            last = last.rsplit(" ", 1)[0] if " " in last else last[: width - 2]
        lines[-1] = f"{last.rstrip(';,:')} {CUT}"
    return lines, cut


def table_lines(rows_or_frame: Any, *, width: int = 100, max_lines: int | None = None) -> list[str]:
    """The table as text lines of at most ``width`` characters: a heading, then one row of
    at most two lines per claim. A why longer than its two lines drops its least important
    parts, then is cut at a word, and ends with :data:`CUT`. With ``max_lines``, rows of two
    lines give up their last part (a count of other verdicts, a secondary finding), from the
    bottom up, then their second line (cut with :data:`CUT`), until the table fits or
    nothing more can go.

    Parameters
    ----------
    rows_or_frame : sequence of VerdictRow, or pandas.DataFrame
        The rows, or their flattened table (``verdicts.parquet``).
    width : int
        Characters per line.
    max_lines : int, optional
        The most lines wanted.

    Returns
    -------
    list of str
    """
    cvs = claim_verdicts(rows_or_frame)
    cw = min(CLAIM_WIDTH, max([len("claim")] + [len(c.label) for c in cvs]))
    vw = min(
        VERDICT_WIDTH,
        max([len("verdict")] + [max(len(x) for x in _verdict_cell(c.verdict, VERDICT_WIDTH)) for c in cvs]),
    )
    ww = width - cw - vw - 2
    keep = [len([p for p in c.why_parts if p]) for c in cvs]
    most = [ROW_LINES] * len(cvs)

    def render() -> tuple[list[str], list[int]]:
        out, heights = [f"{'claim':<{cw}} {'verdict':<{vw}} why"], []
        for i, c in enumerate(cvs):
            why, _ = _why_cell(c.why_parts, ww, keep[i], most[i])
            cells = [_wrap(c.label, cw), _verdict_cell(c.verdict, vw), why]
            heights.append(max(len(x) for x in cells))
            for j in range(heights[-1]):
                a, b, w = (x[j] if j < len(x) else "" for x in cells)
                out.append(f"{a:<{cw}} {b:<{vw}} {w}".rstrip())
        return out, heights

    out, heights = render()
    while max_lines is not None and len(out) > max_lines:
        tall = [i for i, h in enumerate(heights) if h > 1 and keep[i] > cvs[i].essential]
        if tall:
            keep[tall[-1]] -= 1
        else:  # then a why gives up its second line where its first part fits the first, cut with the mark
            tall = [
                i
                for i, h in enumerate(heights)
                if h > 1
                and most[i] > 1
                and len(_verdict_cell(cvs[i].verdict, vw)) == 1
                and len(cvs[i].why_parts[0]) + len(CUT) + 1 <= ww
            ]
            tall = tall or [  # last: any why of one line's verdict, even inside its first part
                i
                for i, h in enumerate(heights)
                if h > 1 and most[i] > 1 and len(_verdict_cell(cvs[i].verdict, vw)) == 1
            ]
            if not tall:
                break
            most[tall[-1]] = 1
        out, heights = render()
    return out


def cut_any(lines: Sequence[str]) -> bool:
    """True when a line of :func:`table_lines` was cut (ends with :data:`CUT`).

    Parameters
    ----------
    lines : sequence of str

    Returns
    -------
    bool
    """
    return any(x.endswith(CUT) for x in lines)


def markdown(rows_or_frame: Any) -> str:
    """The table in Markdown (the report opens each checking section with it), never cut.

    Parameters
    ----------
    rows_or_frame : sequence of VerdictRow, or pandas.DataFrame
        The rows, or their flattened table (``verdicts.parquet``).

    Returns
    -------
    str
    """
    lines = ["| claim | verdict | why |", "|---|---|---|"]
    for c in claim_verdicts(rows_or_frame):
        cells = [c.label, c.verdict, c.why]
        lines.append("| " + " | ".join(x.replace("|", "\\|") for x in cells) + " |")
    return "\n".join(lines)


def count_line(rows_or_frame: Any) -> str:
    """``"13 claims, 1841 verdict rows"``.

    Parameters
    ----------
    rows_or_frame : sequence of VerdictRow, or pandas.DataFrame
        The rows, or their flattened table (``verdicts.parquet``).

    Returns
    -------
    str
    """
    from attnspec.verdicts.sentences import as_rows

    rows = as_rows(rows_or_frame)
    return f"{len({r.claim for r in rows})} claims, {len(rows)} verdict rows"
