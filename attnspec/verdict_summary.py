"""The short verdict summary the checking commands print by default.

One line per (claim, reading): how many parameter sets gave each verdict, and the most
telling row — the one a reader should look at first (a violation before a loose bound,
before a holding one, before a vacuous one), with its parameters and evidence. The full
table stays available (``--verbose``, and the tables in the results directory).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: Which verdict tells the most, first to last: a contradiction, then a bound that is far
#: from the truth, then a confirmation, then a bare measurement, then the rows that could
#: not decide anything (hypothesis not met, could not have failed, says nothing here).
#: Verdicts not listed (a newer vocabulary) come last, in order of appearance.
TELLING_ORDER: tuple[str, ...] = ("violated", "loose", "holds", "measured", "hypothesis-unmet", "cannot-fail",
                                  "vacuous")


@dataclass
class SummaryLine:
    """One (claim, reading) of a verdict table, summarised."""

    claim: str
    reading: str | None
    counts: dict[str, int]  # verdict -> number of rows, in TELLING_ORDER
    telling: Any  # the VerdictRow a reader should look at first

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def _reading(row: Any) -> str | None:
    reading = getattr(row, "reading", None)
    return None if reading in (None, "") else str(reading)


def _claim(row: Any) -> str:
    return str(row.claim)


def _excess(row: Any) -> float:
    """How far the row is from its bound, for ranking rows of the same verdict: the
    estimate (or exact value) over the bound; 0 when either is missing."""
    value = row.exact if getattr(row, "exact", None) is not None else getattr(row, "estimate", None)
    bound = getattr(row, "bound", None)
    if value is None or bound is None:
        return 0.0
    try:
        value, bound = float(value), float(bound)
    except (TypeError, ValueError):
        return 0.0
    if not (math.isfinite(value) and math.isfinite(bound)) or bound <= 0:
        return 0.0
    return value / bound


def summarize(rows: Sequence[Any]) -> list[SummaryLine]:
    """Group verdict rows by (claim, reading) in order of first appearance.

    Parameters
    ----------
    rows : sequence of VerdictRow
        :class:`attnspec.verdicts.VerdictRow` (``claim`` is the claim id, ``reading`` one
        of its readings), or anything with the same attributes.

    Returns
    -------
    list of SummaryLine
        One per (claim, reading). The telling row is the first verdict of
        :data:`TELLING_ORDER` present; among violated rows the one furthest above its
        bound, among loose rows the one furthest below it.
    """
    groups: dict[tuple[str, str | None], list[Any]] = {}
    for r in rows:
        groups.setdefault((_claim(r), _reading(r)), []).append(r)
    out = []
    for (claim, reading), members in groups.items():
        order = list(TELLING_ORDER) + [v for v in dict.fromkeys(r.verdict for r in members) if v not in TELLING_ORDER]
        counts = {v: sum(1 for r in members if r.verdict == v) for v in order}
        counts = {v: c for v, c in counts.items() if c}
        verdict = next(iter(counts))
        candidates = [r for r in members if r.verdict == verdict]
        if verdict == "violated":
            telling = max(candidates, key=_excess)
        elif verdict == "loose":
            telling = min(candidates, key=lambda r: _excess(r) or math.inf)
        else:
            telling = candidates[0]
        out.append(SummaryLine(claim, reading, counts, telling))
    return out


def _fmt_params(params: dict[str, Any], limit: int = 4) -> str:
    items = [(k, v) for k, v in params.items() if v is not None]
    shown = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in items[:limit])
    return shown + (", …" if len(items) > limit else "")


_STYLE = {"holds": "green", "violated": "bold red", "vacuous": "yellow", "loose": "cyan",
          "hypothesis-unmet": "magenta", "cannot-fail": "yellow", "measured": "blue"}


def _line(s: SummaryLine, width: int, markup: bool) -> str:
    from rich.markup import escape

    def paint(v: str, text: str) -> str:
        return f"[{_STYLE[v]}]{text}[/]" if markup and v in _STYLE else text

    esc = escape if markup else (lambda t: t)
    head = s.claim + (f" [{s.reading}]" if s.reading else "")
    counts_plain = ", ".join(f"{c} {v}" for v, c in s.counts.items())
    counts = ", ".join(f"{c} {paint(v, v)}" for v, c in s.counts.items())
    of = f" of {s.total}" if len(s.counts) > 1 or s.total > 1 else ""
    r = s.telling
    # with one row, the counts already name its verdict and its parameters are the run's;
    # with several, say which row is shown and where it sits
    params = _fmt_params(getattr(r, "params", {}) or {}, limit=3) if s.total > 1 else ""
    lead_plain = f"{r.verdict}" + (f" at {params}" if params else "") if s.total > 1 else ""
    lead = (paint(r.verdict, r.verdict) + esc(f" at {params}" if params else "")) if s.total > 1 else ""
    evidence = str(r.evidence or "")
    sep = ": " if lead_plain and evidence else ""
    room = width - len(f"{head}: {counts_plain}{of} — {lead_plain}{sep}")
    if len(evidence) > max(room, 0):
        evidence = evidence[: max(room - 1, 0)] + "…"
    return f"{esc(head)}: {counts}{of} — {lead}{sep}{esc(evidence)}"


def summary_lines(rows: Sequence[Any], *, width: int = 140) -> list[str]:
    """The summary as plain text lines, each at most ``width`` characters (the detail is cut)."""
    return [_line(s, width, markup=False) for s in summarize(rows)]


def print_verdict_summary(rows: Sequence[Any], *, title: str = "Verdicts", console: Any | None = None,
                          hint: str | None = "the full table: --verbose") -> None:
    """Print the summary under ``title``, verdict words coloured, then ``hint``."""
    from rich.console import Console
    from rich.markup import escape

    console = console or Console()
    width = max(60, min(console.width or 140, 160)) - 2
    console.print(f"[bold]{escape(title)}[/]: {len(rows)} verdict rows", highlight=False)
    for s in summarize(rows):
        console.print("  " + _line(s, width, markup=True), highlight=False, soft_wrap=True)
    if hint:
        console.print(f"[dim]{escape(hint)}[/]", highlight=False)
