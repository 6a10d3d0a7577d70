"""Verdict first: one sentence per claim (theorem, lemma, equation) from its verdict rows.

The checking commands print these lines by default (``--verbose`` prints the full table),
and the report opens each section with them. They are built from the row fields alone
(``claim, reading, verdict, params, bound, exact, estimate, ci_low, ci_high, trials,
evidence, at_paper_params``), so any battery's rows, today's or tomorrow's, summarise the
same way. A line says, in this order:

1. **The verdict at the claim's own setting**: the rows marked ``at_paper_params`` (per
   reading, the most telling one, and how many of the marked rows agree with it). They are
   called "at the paper's parameters" only where the paper fixes them
   (:attr:`attnspec.verdicts.registry.Claim.paper_params`), else "at attnspec's default" (a theorem's
   own k at attnspec's n and ε). When no row is marked, each reading leads with its most
   telling row (below).
2. **Per reading, what was decided and where it changes**: the most telling row among
   the rows that *decide something* (verdict ``violated``, ``loose`` or ``holds``), with
   its parameters and evidence; the counts of those rows by verdict; and, when one
   parameter separates the verdicts (e.g. ``holds at k = 6–64, loose at k = 128–255``),
   that parameter's ranges.
3. **What was not counted**: rows that decide nothing (``measured``,
   ``hypothesis-unmet``, ``cannot-fail``, ``vacuous``) are left out of the counts and
   named at the end ("not counted: 56 hypothesis-unmet"). When a reading has *only* such
   rows, they are what it says, and are counted: e.g. "vacuous in all 144 rows".

The most telling row: a violation furthest above its bound, else the *tightest* loose row
(the label rests on it; the range of looseness is given), else the first holding row;
among rows that decide nothing: measured, hypothesis-unmet, cannot-fail, vacuous in that
order, and for vacuous rows the one with the smallest bound (nearest to saying something:
for Linformer's Theorem 1, the theorem's own k, never k = log n). Rows that tie are broken
towards the most contradicting one (the largest lower CI end over the bound), so a row that
fails is never hidden behind one that does not.

Evidence is never cut: :func:`summary_lines` returns one unwrapped string per claim;
:func:`print_verdict_summary` wraps them to the terminal width.

Example
-------
>>> from attnspec.verdicts.sentences import summary_lines
>>> for line in summary_lines(result.verdicts):   # a BatteryResult, or verdicts.parquet as a DataFrame
...     print(line)                                # doctest: +SKIP
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from attnspec.verdicts.numbers import num, param_text, ratio_sentence

#: Verdicts that decide something about the claim, most telling first.
DECIDING: tuple[str, ...] = ("violated", "loose", "holds")
#: Verdicts that decide nothing (a number without a verdict, or a check that could not
#: apply or could not fail), most telling first.
NON_DECIDING: tuple[str, ...] = ("measured", "hypothesis-unmet", "cannot-fail", "vacuous")
#: Which verdict tells the most, first to last. Verdicts not listed come last.
TELLING_ORDER: tuple[str, ...] = DECIDING + NON_DECIDING

#: The fields of a verdict row that are not parameters (a flattened table's other columns are).
ROW_FIELDS: tuple[str, ...] = (
    "claim",
    "reading",
    "verdict",
    "bound",
    "exact",
    "estimate",
    "ci_low",
    "ci_high",
    "trials",
    "seed",
    "evidence",
    "at_paper_params",
    "value_name",
    "bound_name",
)


# --------------------------------------------------------------------------- rows


def _missing(v: Any) -> bool:
    if v is None:
        return True
    try:
        return bool(isinstance(v, float) and math.isnan(v)) or (hasattr(v, "dtype") and bool(v != v))
    except (TypeError, ValueError):
        return False


def as_rows(rows_or_frame: Any) -> list[Any]:
    """Verdict rows from a sequence of :class:`~attnspec.verdicts.classify.VerdictRow` (returned as
    is) or from their flattened table (``verdicts.parquet``, ``result.verdict_frame()``):
    every column that is not a row field becomes a parameter (missing values dropped);
    a ``parameters`` column of dicts (:attr:`attnspec.checks.CheckResult.verdicts`) is
    unpacked.

    Parameters
    ----------
    rows_or_frame : sequence of VerdictRow, or pandas.DataFrame
        The rows, or their flattened table.

    Returns
    -------
    list of VerdictRow
    """
    if hasattr(rows_or_frame, "to_dict") and hasattr(rows_or_frame, "columns"):
        out = []
        for rec in rows_or_frame.to_dict("records"):
            fields = {k: (None if _missing(rec.get(k)) else rec.get(k)) for k in ROW_FIELDS}
            fields["at_paper_params"] = bool(fields["at_paper_params"] or False)
            fields["reading"] = fields["reading"] or ""
            fields["evidence"] = fields["evidence"] or ""
            params = {k: v for k, v in rec.items() if k not in ROW_FIELDS and k != "parameters" and not _missing(v)}
            if isinstance(rec.get("parameters"), dict):  # the API's .verdicts: parameters as one dict column
                params.update(rec["parameters"])
            out.append(SimpleNamespace(params=params, **fields))
        return out
    return list(rows_or_frame)


def _reading(row: Any) -> str:
    reading = getattr(row, "reading", None)
    return "" if reading in (None, "") else str(reading)


def _excess(row: Any) -> float:
    """The value over the bound (the exact value, else the estimate): how far a violated
    row is above its bound, how close a loose one comes to it; 0 when either is missing."""
    value = num(getattr(row, "exact", None))
    value = num(getattr(row, "estimate", None)) if value is None else value
    bound = num(getattr(row, "bound", None))
    if value is None or bound is None or bound <= 0:
        return 0.0
    return value / bound


def looseness(row: Any) -> float | None:
    """bound / (exact value, else upper CI end, else estimate): how many times the claimed
    bound exceeds what was shown; None when the row has no such numbers.

    Parameters
    ----------
    row : VerdictRow

    Returns
    -------
    float or None
    """
    bound = num(getattr(row, "bound", None))
    ref = next(
        (x for x in (num(getattr(row, a, None)) for a in ("exact", "ci_high", "estimate")) if x is not None), None
    )
    if bound is None or ref is None:
        return None
    return math.inf if ref <= 0 else bound / ref


def _rank(verdict: str) -> int:
    return TELLING_ORDER.index(verdict) if verdict in TELLING_ORDER else len(TELLING_ORDER)


def contradiction(row: Any) -> float:
    """How far a row's measurement goes against its bound: the lower CI end (else the exact
    value, else the estimate) over the bound; 0 when either is missing. Above 1, the
    measurement exceeds what the claim allows.

    Parameters
    ----------
    row : VerdictRow

    Returns
    -------
    float
    """
    bound = num(getattr(row, "bound", None))
    ref = next(
        (x for x in (num(getattr(row, a, None)) for a in ("ci_low", "exact", "estimate")) if x is not None), None
    )
    if bound is None or ref is None or bound <= 0:
        return 0.0
    return ref / bound


def hidden_failure(row: Any) -> bool:
    """True for a ``vacuous`` row whose stated probability bound (< 1) was measured and
    fails: the rank statement says nothing there, but the number it states is exceeded
    (the CI's lower end, or the exact law, is above it).

    Parameters
    ----------
    row : VerdictRow

    Returns
    -------
    bool
    """
    bound = num(getattr(row, "bound", None))
    if getattr(row, "verdict", None) != "vacuous" or bound is None or not 0 < bound < 1:
        return False
    ref = next((x for x in (num(getattr(row, a, None)) for a in ("exact", "ci_low")) if x is not None), None)
    return ref is not None and ref > bound


def telling_row(rows: Sequence[Any]) -> Any:
    """The row a reader should look at first (module docstring). Among rows that tie (the
    same verdict, and for vacuous rows the same smallest bound) it is the most
    contradicting one (:func:`contradiction`), never merely the first.

    Parameters
    ----------
    rows : sequence of VerdictRow
        At least one.

    Returns
    -------
    VerdictRow
    """
    verdict = min((r.verdict for r in rows), key=_rank)
    candidates = [r for r in rows if r.verdict == verdict]
    if verdict == "violated":
        # ties (to 4 digits) go to the first row, so a screen and --verbose name the same one
        return max(candidates, key=lambda r: float(f"{_excess(r):.4g}"))
    if verdict == "loose":
        return min(candidates, key=lambda r: looseness(r) or math.inf)
    if verdict == "vacuous":

        def bound(r: Any) -> float:
            b = num(getattr(r, "bound", None))
            return math.inf if b is None else b

        smallest = min(bound(r) for r in candidates)
        candidates = [r for r in candidates if bound(r) == smallest]
    return max(candidates, key=contradiction)


def agreeing(row: Any, rows: Sequence[Any]) -> int:
    """How many of ``rows`` agree with ``row``: the same verdict, and the measurement on the
    same side of the bound (both exceed it, or neither does).

    Parameters
    ----------
    row : VerdictRow
    rows : sequence of VerdictRow

    Returns
    -------
    int
    """
    side = contradiction(row) > 1
    return sum(1 for r in rows if r.verdict == row.verdict and (contradiction(r) > 1) == side)


# --------------------------------------------------------------------------- names


def claim_name(claim_id: str) -> str:
    """The claim's human name (:attr:`attnspec.verdicts.registry.Claim.name`, e.g. ``"Theorem 1 (eq. 3)"``);
    the id itself for an unregistered claim.

    Parameters
    ----------
    claim_id : str

    Returns
    -------
    str
    """
    return _registered(claim_id, "name", claim_id)


def _registered(claim_id: str, attribute: str, unregistered: str) -> str:
    """An attribute of the registered claim (:mod:`attnspec.verdicts.registry`); ``unregistered``
    for a claim id not registered."""
    from attnspec.verdicts import registry as claim_registry

    try:
        return getattr(claim_registry.get(claim_id), attribute)
    except ValueError:
        return unregistered


# --------------------------------------------------------------------------- summary


@dataclass
class ReadingSummary:
    """The rows of one (claim, reading)."""

    reading: str
    rows: list[Any]
    paper: list[Any] = field(default_factory=list)  # its rows at the paper's parameters

    @property
    def deciding(self) -> list[Any]:
        return [r for r in self.rows if r.verdict in DECIDING]

    def counts(self, rows: Sequence[Any] | None = None) -> dict[str, int]:
        """Rows by verdict, in the telling order.

        Parameters
        ----------
        rows : sequence of VerdictRow, optional
            The rows counted (default: this reading's).

        Returns
        -------
        dict of str to int
            Verdict → rows; only the verdicts present.
        """
        rows = self.rows if rows is None else rows
        found = sorted(dict.fromkeys(r.verdict for r in rows), key=_rank)
        return {v: sum(1 for r in rows if r.verdict == v) for v in found}


@dataclass
class ClaimSummary:
    """One claim: its readings in order of first appearance."""

    claim: str
    name: str
    readings: list[ReadingSummary]

    @property
    def rows(self) -> list[Any]:
        return [r for rs in self.readings for r in rs.rows]


def summarize(rows_or_frame: Any) -> list[ClaimSummary]:
    """Group verdict rows by claim, then reading, in order of first appearance.

    Parameters
    ----------
    rows_or_frame : sequence of VerdictRow, or pandas.DataFrame
        The rows, or their flattened table.

    Returns
    -------
    list of ClaimSummary
    """
    rows = as_rows(rows_or_frame)
    claims: dict[str, dict[str, ReadingSummary]] = {}
    for r in rows:
        by_reading = claims.setdefault(str(r.claim), {})
        rs = by_reading.setdefault(_reading(r), ReadingSummary(_reading(r), []))
        rs.rows.append(r)
        if getattr(r, "at_paper_params", False):
            rs.paper.append(r)
    return [ClaimSummary(c, claim_name(c), list(by.values())) for c, by in claims.items()]


def _varying(rows: Sequence[Any]) -> list[str]:
    """The parameter names whose values differ between ``rows`` (in order of appearance)."""
    keys: dict[str, set[str]] = {}
    for r in rows:
        for k in getattr(r, "params", None) or {}:
            keys.setdefault(k, set())
    for k in keys:
        for r in rows:
            keys[k].add(param_text((getattr(r, "params", None) or {}).get(k)))
    return [k for k, vals in keys.items() if len(vals) > 1]


def _params(row: Any, names: Sequence[str]) -> str:
    params = getattr(row, "params", None) or {}
    return ", ".join(f"{k} = {param_text(params[k])}" for k in names if k in params and params[k] is not None)


_VERBS = {
    "holds": "holds",
    "violated": "fails",
    "vacuous": "is vacuous",
    "cannot-fail": "cannot fail",
    "hypothesis-unmet": "does not apply (hypothesis not met)",
    "measured": "is measured without a verdict",
}


def _verdict_words(v: str, row: Any, group: Sequence[Any]) -> str:
    if v == "loose":
        ratios = [x for x in (looseness(r) for r in group if r.verdict == "loose") if x is not None]
        if not ratios:
            return "holds but is loose"
        lo, hi = min(ratios), max(ratios)
        span = (
            ratio_sentence(lo)
            if ratio_sentence(lo) == ratio_sentence(hi)
            else f"{ratio_sentence(lo)} (up to {ratio_sentence(hi)})"
        )
        return f"holds but is {span} loose"
    return _VERBS.get(v, v)


def _say(label: str, words: str) -> str:
    """``the relative reading fails`` / ``fails as stated`` (the claim is the subject: no "is")."""
    return f"{words.removeprefix('is ')} as stated" if label == "as stated" else f"{label} {words}"


def _change_point(rows: Sequence[Any], names: Sequence[str]) -> str:
    """Where the verdict changes: the first numeric parameter (k first) whose ranges per
    verdict do not overlap, as ``holds at k = 6–64, loose at k = 128–255``; else ""."""
    verdicts = sorted(dict.fromkeys(r.verdict for r in rows), key=_rank)
    if len(verdicts) < 2:
        return ""
    for name in sorted(names, key=lambda n: (n != "k",)):
        values = [num((getattr(r, "params", None) or {}).get(name)) for r in rows]
        if any(v is None for v in values):
            continue
        spans = []
        for v in verdicts:
            vs = [x for r, x in zip(rows, values, strict=True) if r.verdict == v]
            spans.append((min(vs), max(vs), v))
        spans.sort()
        if all(a[1] < b[0] for a, b in zip(spans, spans[1:], strict=False)):
            parts = [
                f"{v} at {name} = {param_text(lo)}" + (f"–{param_text(hi)}" if hi != lo else "") for lo, hi, v in spans
            ]
            return ", ".join(parts)
    return ""


def _counts_text(counts: dict[str, int]) -> str:
    return ", ".join(f"{c} {v}" for v, c in counts.items())


def _reading_label(rs: ReadingSummary, single: bool) -> str:
    if single and rs.reading in ("", "as-stated"):
        return "as stated"
    return f"the {rs.reading} reading" if rs.reading else "as stated"


def paper_fixes(claim_id: str) -> str:
    """What the paper itself fixes for this claim (:attr:`attnspec.verdicts.registry.Claim.paper_params`);
    "" when it fixes nothing or the claim is not registered.

    Parameters
    ----------
    claim_id : str

    Returns
    -------
    str
    """
    return _registered(claim_id, "paper_params", "")


def own_setting(claim_id: str) -> str:
    """The words for a claim's marked rows: "at the paper's parameters" only where the paper
    fixes them; else "at attnspec's default" (e.g. a theorem's own k at attnspec's n and ε).

    Parameters
    ----------
    claim_id : str

    Returns
    -------
    str
    """
    return "at the paper's parameters" if paper_fixes(claim_id) else "at attnspec's default"


def _paper_part(cs: ClaimSummary, names: Sequence[str]) -> str:
    marked = [rs for rs in cs.readings if rs.paper]
    if not marked:
        return ""
    tellers = [(rs, telling_row(rs.paper)) for rs in marked]
    params = _params(tellers[0][1], names)
    where = f"{own_setting(cs.claim)}{f' ({params})' if params else ''}"
    verdicts = {t.verdict for _, t in tellers}
    single = len(cs.readings) == 1
    if len(verdicts) == 1:
        rs, t = tellers[0]
        who = (
            ""
            if single
            else (
                " under every reading"
                if len(tellers) == len(cs.readings) and len(tellers) > 1
                else "".join(f" ({_reading_label(r, single)})" for r, _ in tellers[:1])
                if len(tellers) == 1
                else f" under the {', '.join(r.reading for r, _ in tellers)} readings"
            )
        )
        evidence = {x.evidence for _, x in tellers}
        said = t.evidence if len(evidence) == 1 else "; ".join(f"{r.reading}: {x.evidence}" for r, x in tellers)
        shown = [x for r, _ in tellers for x in r.paper]
        if len(shown) > 1:
            said += f" ({agreeing(t, shown)} of {len(shown)} rows there agree)"
        words = _verdict_words(t.verdict, t, rs.paper).removeprefix("is ")  # the claim is the subject
        return f"{words}{who} {where}: {said}".strip()
    parts = [
        f"{_say(_reading_label(rs, single), _verdict_words(t.verdict, t, rs.paper))} ({t.evidence}"
        + (f"; {agreeing(t, rs.paper)} of {len(rs.paper)} rows agree)" if len(rs.paper) > 1 else ")")
        for rs, t in tellers
    ]
    return f"{where}: " + "; ".join(parts)


def _reading_part(rs: ReadingSummary, names: Sequence[str], single: bool, has_paper: bool) -> str:
    label = _reading_label(rs, single)
    # with rows at the paper's parameters stated first, the rest is "elsewhere"
    rest = [r for r in rs.rows if not getattr(r, "at_paper_params", False)] if has_paper else rs.rows
    if not rest:
        return ""
    deciding = [r for r in rest if r.verdict in DECIDING]
    other = rs.counts([r for r in rest if r.verdict not in DECIDING])
    if deciding:
        t = telling_row(deciding)
        counts = rs.counts(deciding)
        at = _params(t, names)
        text = _say(label, _verdict_words(t.verdict, t, deciding)) + (f" at {at}" if at else "")
        if t.evidence:
            text += f" ({t.evidence})"
        if len(deciding) > 1:
            text += (
                f"; {t.verdict} in all {len(deciding)} deciding rows"
                if len(counts) == 1
                else f"; {_counts_text(counts)} of {len(deciding)} deciding rows"
            )
        change = _change_point(deciding, names)
        if change:
            text += f"; {change}"
        if other:
            text += f"; not counted: {_counts_text(other)}"
        return text
    counts = rs.counts(rest)
    if has_paper and rs.paper:
        return f"{label}: nothing decided elsewhere ({_counts_text(counts)})"
    t = telling_row(rest)
    at = _params(t, names)
    n = len(rest)
    how = (f"in all {n} rows" if n > 1 else "") if len(counts) == 1 else f"({_counts_text(counts)} of {n} rows)"
    text = _say(label, _VERBS.get(t.verdict, t.verdict)) + (f" {how}" if how else "")
    if at or t.evidence:
        text += f"{f' — at {at}' if at else ''}: {t.evidence}" if n > 1 else f": {t.evidence}"
    return text


def claim_line(cs: ClaimSummary) -> str:
    """The one sentence of a claim (module docstring), unwrapped.

    Parameters
    ----------
    cs : ClaimSummary

    Returns
    -------
    str
    """
    names = _varying(cs.rows)
    has_paper = any(rs.paper for rs in cs.readings)
    single = len(cs.readings) == 1
    parts = [_paper_part(cs, names)] + [_reading_part(rs, names, single, has_paper) for rs in cs.readings]
    head = cs.name if cs.name == cs.claim else f"{cs.name} [{cs.claim}]"
    return f"{head}: " + "; ".join(p for p in parts if p)


def summary_lines(rows_or_frame: Any, *, width: int | None = None) -> list[str]:
    """The verdict-first summary: one line per claim, in order of first appearance.

    Parameters
    ----------
    rows_or_frame : sequence of VerdictRow, or DataFrame
        ``BatteryResult.verdicts``, or the flattened table (``verdicts.parquet``,
        ``BatteryResult.verdict_frame()``, an API result's ``.verdicts``).
    width : int, optional
        Wrap each claim's line to this many characters (continuation lines indented by
        four spaces, joined by newlines: one string per claim still). Default: unwrapped.
        Nothing is ever cut.

    Returns
    -------
    list of str
    """
    lines = [claim_line(cs) for cs in summarize(rows_or_frame)]
    if width is None:
        return lines
    return ["\n".join(wrap(line, width)) for line in lines]


def wrap(line: str, width: int, *, indent: str = "", subsequent: str = "    ") -> list[str]:
    """``line`` wrapped to ``width`` at spaces; a word longer than the width stays whole.

    Parameters
    ----------
    line : str
    width : int
        Characters per line (at least 20 are taken).
    indent : str
        Put before the first line.
    subsequent : str
        Put before the others.

    Returns
    -------
    list of str
    """
    return textwrap.wrap(
        line,
        width=max(width, 20),
        initial_indent=indent,
        subsequent_indent=subsequent,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [indent]


def tally(rows: Sequence[Any]) -> str:
    """``" (4 violated, 3 loose, 11 holds decide something; 20 do not)"``: the rows by verdict.

    Parameters
    ----------
    rows : sequence of VerdictRow

    Returns
    -------
    str
    """
    deciding = [r for r in rows if r.verdict in DECIDING]
    if not rows:
        return ""
    found = sorted(dict.fromkeys(r.verdict for r in deciding), key=_rank)
    counts = ", ".join(f"{sum(r.verdict == v for r in deciding)} {v}" for v in found)
    rest = len(rows) - len(deciding)
    if not deciding:
        return " (none decides something)"
    return f" ({counts} decide something" + (f"; {rest} do not)" if rest else ")")


def print_verdict_summary(
    rows: Sequence[Any],
    *,
    title: str = "Verdicts",
    console: Any | None = None,
    hint: str | None = "the full table: --verbose",
) -> None:
    """Print the summary under ``title``, each claim's line wrapped to the console width
    (never cut), then ``hint``.

    Parameters
    ----------
    rows : sequence of VerdictRow
    title : str
        Printed first.
    console : rich.console.Console, optional
        Where to print (default: a new console on stdout).
    hint : str, optional
        Printed last; None or empty: nothing.
    """
    from rich.console import Console

    console = console or Console(emoji=False)
    rows = as_rows(rows)
    width = (console.width or 100) - 1
    claims = summarize(rows)
    console.print(
        f"{title}: {len(claims)} claims, {len(rows)} verdict rows{tally(rows)}", highlight=False, markup=False
    )
    for cs in claims:
        for physical in wrap(claim_line(cs), width, indent="  ", subsequent="      "):
            console.print(physical, highlight=False, markup=False, soft_wrap=True)
    if hint:
        console.print(hint, highlight=False, markup=False, style="dim")
