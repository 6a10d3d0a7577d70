"""The verdict table: the answer of a checking command in one screen, one row per claim.

Each claim id gets one row with three cells:

* **claim** — its short name (:attr:`attnspec.verdicts.registry.Claim.label`, e.g. "Theorem 1 (eq. 3)");
* **verdict** — one of the seven words, or two joined by "→" where the verdict changes
  inside the range the rows cover (:func:`claim_verdict`);
* **why** — at most two lines with the one or two deciding numbers, the row they come from,
  and how many rows agree with it.

The same table is printed by ``jl-check``, ``sa-check`` and ``osa-check`` by default
(:func:`table_lines`), returned by ``result.summary()`` (:func:`summary_frame`) and rendered
as Markdown for the report (:func:`markdown`). It is built from the verdict rows alone, like
:mod:`attnspec.verdicts.sentences`, whose sentences stay in the report and ``--verbose``.

The claim's verdict
-------------------
Readings that check a construction or a variant rather than the statement (names starting
``proof-``, ``plain-``, ``variant`` or ending ``-clipped``) are *secondary*: the verdict
rests on the other readings, and a violation among the secondary ones is named in the why.
Among the statement's rows:

1. rows that decide something (violated, loose, holds) and *hidden failures* — vacuous rows
   whose stated probability bound (< 1) was measured and is exceeded
   (:func:`attnspec.verdicts.sentences.hidden_failure`) — decide the verdict: violated if any
   row is violated or hides a failure, else the most telling deciding verdict;
2. where the claim's own setting (its marked rows) says nothing (all vacuous or
   hypothesis-unmet) but rows elsewhere decide, the verdict is "vacuous → violated" (or the
   verdict found); "vacuous" is never shown bare over a measured failure;
3. where one numeric parameter separates two deciding verdicts (e.g. holds at small k,
   loose at large k), the verdict is both, in the parameter's order ("holds → loose");
4. with no deciding row, the most telling of the rest (measured, hypothesis-unmet,
   cannot-fail, vacuous).

Example
-------
>>> from attnspec.verdicts.table import table_lines
>>> print("\\n".join(table_lines(result.verdicts, width=100)))   # doctest: +SKIP
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from attnspec.verdicts.sentences import (
    DECIDING,
    ClaimSummary,
    _fmt_value,
    _num,
    _rank,
    contradiction,
    hidden_failure,
    summarize,
    telling_row,
)

#: Reading names that check a construction or a variant, not the statement itself.
SECONDARY_PREFIXES: tuple[str, ...] = ("proof-", "plain-", "variant")
SECONDARY_SUFFIXES: tuple[str, ...] = ("-clipped",)
#: The arrow between the verdict where the claim says nothing and the verdict found elsewhere.
ARROW = " → "
#: Column widths at which the claim and verdict cells wrap (the why takes the rest).
CLAIM_WIDTH = 22
VERDICT_WIDTH = 18
#: The most lines a row may take.
ROW_LINES = 2


def secondary(reading: str) -> bool:
    """True for a reading that checks a construction or a variant, not the statement.

    Parameters
    ----------
    reading : str

    Returns
    -------
    bool
    """
    return reading.startswith(SECONDARY_PREFIXES) or reading.endswith(SECONDARY_SUFFIXES)


@dataclass
class ClaimVerdict:
    """One row of the table: the claim, its verdict and why (its parts, most important first)."""

    claim: str
    label: str
    verdict: str
    why_parts: list[str]
    rows: int
    #: how many leading parts a table fitted to a screen must keep
    essential: int = 1

    @property
    def why(self) -> str:
        return "; ".join(p for p in self.why_parts if p)


# --------------------------------------------------------------------------- the why


#: Row fields that describe a measurement rather than set the instance: never quoted as "at ...".
#: The parameters quoted first, in this order (then the rest by name).
WHERE_FIRST = ("k", "n", "d", "L", "N", "eps", "delta")
NOT_WHERE = frozenset({"tightest", "typical", "label_on", "pw_ratio", "c_min", "c_median", "c_max"})


def _where(row: Any, names: Sequence[str], most: int = 1) -> str:
    """The row's varying parameters (k first, at most ``most``), e.g. ``k = 4095``."""
    params = getattr(row, "params", None) or {}
    order = sorted(
        (n for n in names if n in params and params[n] is not None and n not in NOT_WHERE),
        key=lambda n: (WHERE_FIRST.index(n) if n in WHERE_FIRST else len(WHERE_FIRST), n),
    )
    return ", ".join(f"{n} = {_fmt_value(params[n])}" for n in order[:most])


_NUM = r"-?(?:\d[\d,]*\.?\d*(?:e[+-]?\d+)?|inf)"
#: The classifier's own clauses (:mod:`attnspec.verdicts.classify`), found in a row's evidence, and
#: their short form: the deciding numbers in the words that decided them.
_CLAUSES: tuple[tuple[str, str], ...] = (
    (
        rf"observed (\d+)/(\d+) = {_NUM}, 95% CI \[({_NUM}), ({_NUM})\] above claimed ({_NUM})",
        r"\1/\2 fail, claimed ≤ \5",
    ),
    (rf"exact failure probability ({_NUM}) > claimed ({_NUM})", r"exact failure probability \1 > claimed \2"),
    (
        rf"Chernoff upper bound on the failure probability ({_NUM}) <= claimed ({_NUM})",
        r"Chernoff bound \1 <= claimed \2",
    ),
    (
        rf"loose by (at least )?a factor ({_NUM}) \(claimed ({_NUM}) vs ([^()]*?) ({_NUM})(; observed [^)]*)?\)",
        r"claimed \3 is \1\2× \4 \5",
    ),
    (
        rf"loose by a factor ({_NUM}) \(bound ({_NUM}) vs worst observed ({_NUM})\)",
        r"bound \2 is \1× the worst observed \3",
    ),
    (rf"observed ({_NUM}) > bound ({_NUM})", r"observed \1 > bound \2"),
    (
        rf"loose by an unbounded factor \(reference is 0\) \((bound|claimed) ({_NUM}) vs ([^()]*?) ({_NUM})\)",
        r"\1 \2 vs \3 \4: unboundedly loose",
    ),
    (rf"worst residual ({_NUM}) ([<>]=?) tolerance ({_NUM})", r"worst residual \1 \2 tolerance \3"),
    (rf"worst observed ({_NUM}) <= bound ({_NUM})", r"worst observed \1 <= bound \2"),
    (rf"exact failure probability ({_NUM}) <= claimed ({_NUM})", r"exact failure probability \1 <= claimed \2"),
    (
        rf"observed (\d+)/(\d+), 95% CI \[({_NUM}), ({_NUM})\]: (all|lower end) <= claimed ({_NUM})",
        r"\1/\2 fail, 95% CI [\3, \4], \5 <= claimed \6",
    ),
    (
        rf"no failure in (\d+) trials, power ({_NUM}) against failure rates >= ({_NUM} %)",
        r"no failure in \1 trials (power \2 against rates >= \3)",
    ),
    (rf"measured (\d+)/(\d+) = {_NUM} \[({_NUM}), ({_NUM})\][^;]*? vs claimed ({_NUM})", r"\1/\2 fail, claimed ≤ \5"),
    (
        rf"the zero output (E = F = 0) has error ‖softmax\(w\)V‖ = ({_NUM}) <= the tolerance [^;=]*= ({_NUM})",
        r"\1: error \2 <= tolerance \3",
    ),
    (
        rf"measured ({_NUM}) > C = ({_NUM}), but not significantly: lower 95% end ({_NUM})",
        r"measured \1 > C = \2, not significantly (lower 95% end \3)",
    ),
    (r"a trivial output meets the (bound|tolerance)", r"a trivial output meets the \1"),
)


def _numbers(row: Any) -> str:
    """The one or two deciding numbers of a row: the classifier's clause in its evidence
    (:data:`_CLAUSES`), shortened; else its estimate."""
    import re

    if hidden_failure(row) and getattr(row, "trials", None) and _num(row.estimate) is not None:
        # a probability row by definition: its counts against its stated bound
        est, bound = _num(row.estimate), _num(row.bound)
        return f"{round(est * int(row.trials))}/{int(row.trials)} fail, claimed ≤ {bound:.4g}"
    evidence = str(getattr(row, "evidence", "") or "")
    for pattern, short in _CLAUSES:
        m = re.search(pattern, evidence)
        if m:
            text = re.sub(r"\s+", " ", m.expand(short)).strip()
            return text.replace("<=", "≤").replace(">=", "≥")
    est = _num(getattr(row, "estimate", None))
    if est is not None:
        return f"measured {est:.4g}"
    return _reading_words(row)


def _reading_words(row: Any) -> str:
    """What the row's reading tests (the registry's words), for a row without numbers."""
    from attnspec.verdicts import registry as claim_registry

    try:
        return claim_registry.get(str(row.claim)).reading(str(row.reading)).description
    except ValueError:
        return ""


def _says_nothing(row: Any) -> str:
    """Why a vacuous or hypothesis-unmet row says nothing, in a few words."""
    params = getattr(row, "params", None) or {}
    k, n = _num(params.get("k")), _num(params.get("n"))
    if row.verdict == "hypothesis-unmet":
        return "its hypothesis is not met" + (
            f" (k = {_fmt_value(k)} > n = {_fmt_value(n)})" if k is not None and n is not None and k > n else ""
        )
    if k is not None and n is not None and k >= n:
        return f"its k = {_fmt_value(k)} ≥ n = {_fmt_value(n)}"
    # else the evidence's first clause, when it is a short comparison ("d* = 342224 >= L = 512")
    first = str(getattr(row, "evidence", "") or "").split(":")[0].split(";")[0].strip()
    if len(first) <= 48 and any(op in first for op in (">=", "<=", ">", "<")):
        return first.replace(">=", "≥").replace("<=", "≤")
    return "it says nothing here"


def _varying(rows: Sequence[Any]) -> list[str]:
    """The parameter names whose values differ between ``rows``, in order of first
    appearance; a missing value (None) is no value, so rows and their flattened table agree."""
    values: dict[str, set[str]] = {}
    for r in rows:
        for k, v in (getattr(r, "params", None) or {}).items():
            if v is not None and not (isinstance(v, float) and math.isnan(v)):
                values.setdefault(k, set()).add(_fmt_value(v))
    return [k for k, vals in values.items() if len(vals) > 1]


def _row_text(row: Any, names: Sequence[str], pool: Sequence[Any]) -> str:
    """``at k = 4095: 500/500 fail, claimed ≤ 0.816 (8 of 12 rows)``."""
    where = _where(row, names)
    nums = _numbers(row)
    text = f"at {where}" if where else ""
    text = f"{text}: {nums}" if text and nums else (text or nums)
    # rows that agree with the one shown: the same verdict, and for vacuous rows the same
    # outcome (its stated bound exceeded or not)
    agree = sum(1 for r in pool if r.verdict == row.verdict and hidden_failure(r) == hidden_failure(row))
    if len(pool) > 1:
        text += f" ({agree}/{len(pool)} rows)"
    return text


def claim_verdict(cs: ClaimSummary) -> ClaimVerdict:
    """The verdict and why of one claim (module docstring).

    Parameters
    ----------
    cs : ClaimSummary
        The claim's rows, by reading.

    Returns
    -------
    ClaimVerdict
    """
    rows = cs.rows
    main = [r for r in rows if not secondary(str(getattr(r, "reading", "")))] or rows
    extra = [r for r in rows if r not in main]
    names = _varying(main)
    own = [r for r in main if getattr(r, "at_paper_params", False)]
    deciding = [r for r in main if r.verdict in DECIDING]
    hidden = [r for r in main if hidden_failure(r)]
    parts: list[str] = []
    if deciding or hidden:
        violated = [r for r in deciding if r.verdict == "violated"]
        found = "violated" if violated or hidden else telling_row(deciding).verdict
        if violated:
            worst = telling_row(violated)
        elif hidden:
            worst = max(hidden, key=contradiction)
        else:
            worst = telling_row(deciding)
        silent_own = own and all(r.verdict in ("vacuous", "hypothesis-unmet") for r in own)
        if silent_own or (not deciding and hidden):
            base_rows = own if silent_own else [r for r in main if r.verdict == "vacuous"]
            base = min((r.verdict for r in base_rows), key=_rank)
            verdict = f"{base}{ARROW}{found}"
            parts.append(_says_nothing(telling_row([r for r in base_rows if r.verdict == base])))
        else:
            change = _change(deciding)
            verdict = change or found
        pool = deciding + hidden if deciding else [r for r in main if r.verdict == "vacuous"]
        parts.append(_row_text(worst, names, pool))
    else:
        t = telling_row(main)
        verdict = t.verdict
        if t.verdict in ("vacuous", "hypothesis-unmet"):
            parts.append(
                _says_nothing(t)
                + (f" in all {len(main)} rows" if len(main) > 1 and all(r.verdict == t.verdict for r in main) else "")
            )
        else:
            parts.append(_row_text(t, names, main))
    bad = [r for r in extra if r.verdict == "violated"]
    if bad and not verdict.endswith("violated"):
        readings = sorted(dict.fromkeys(str(r.reading) for r in bad))
        parts.append(f"{', '.join(readings)}: violated in {len(bad)} rows")
    shown = verdict.split(ARROW)[-1]
    rest = {v: c for v, c in _counts(main).items() if v != shown and v in DECIDING}
    if rest:
        parts.append(", ".join(f"{c} {v}" for v, c in rest.items()))
    essential = 2 if ARROW in verdict and len(parts) > 1 else 1
    return ClaimVerdict(cs.claim, _label(cs.claim), verdict, parts, len(rows), essential)


def _counts(rows: Sequence[Any]) -> dict[str, int]:
    found = sorted(dict.fromkeys(r.verdict for r in rows), key=_rank)
    return {v: sum(1 for r in rows if r.verdict == v) for v in found}


def _change(rows: Sequence[Any]) -> str:
    """``holds → loose`` when exactly two deciding verdicts are separated by one numeric
    parameter (k first), in that parameter's order; else ""."""
    verdicts = list(dict.fromkeys(r.verdict for r in rows))
    if len(verdicts) != 2 or len({str(getattr(r, "reading", "")) for r in rows}) != 1:
        return ""  # two readings disagreeing is not a change along a parameter
    names = sorted({k for r in rows for k in (getattr(r, "params", None) or {})}, key=lambda n: (n != "k", n))
    for name in names:
        values = [_num((getattr(r, "params", None) or {}).get(name)) for r in rows]
        if any(v is None for v in values) or len(set(values)) < 2:
            continue
        spans = sorted(
            (
                min(x for r, x in zip(rows, values, strict=True) if r.verdict == v),
                max(x for r, x in zip(rows, values, strict=True) if r.verdict == v),
                v,
            )
            for v in verdicts
        )
        if spans[0][1] < spans[1][0]:
            return f"{spans[0][2]}{ARROW}{spans[1][2]}"
    return ""


def _label(claim_id: str) -> str:
    from attnspec.verdicts import registry as claim_registry

    try:
        return claim_registry.get(claim_id).label
    except ValueError:
        return claim_id


def claim_verdicts(rows_or_frame: Any) -> list[ClaimVerdict]:
    """One :class:`ClaimVerdict` per claim id, in order of first appearance.

    Parameters
    ----------
    rows_or_frame : sequence of VerdictRow, or pandas.DataFrame
        The rows, or their flattened table (``verdicts.parquet``).

    Returns
    -------
    list of ClaimVerdict
    """
    return [claim_verdict(cs) for cs in summarize(rows_or_frame)]


# --------------------------------------------------------------------------- renderings


def summary_frame(rows_or_frame: Any) -> Any:
    """The table as a DataFrame: ``claim_id, claim, verdict, why, rows`` (one row per claim).

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
            {"claim_id": c.claim, "claim": c.label, "verdict": c.verdict, "why": c.why, "rows": c.rows}
            for c in claim_verdicts(rows_or_frame)
        ],
        columns=["claim_id", "claim", "verdict", "why", "rows"],
    )


def _wrap(text: str, width: int) -> list[str]:
    return textwrap.wrap(text, width=max(width, 8), break_long_words=False, break_on_hyphens=False) or [""]


def _verdict_cell(verdict: str, width: int) -> list[str]:
    if len(verdict) <= width or ARROW not in verdict:
        return [verdict]
    a, b = verdict.split(ARROW, 1)
    return [a + ARROW.rstrip(), b]


def _why_cell(parts: Sequence[str], width: int) -> tuple[list[str], int]:
    """The why wrapped to ``width`` in at most :data:`ROW_LINES` lines, and how many of its
    parts it keeps: the least important parts are left out (never cut mid-way) until it fits."""
    parts = [p for p in parts if p]
    while parts:
        lines = _wrap("; ".join(parts), width)
        if len(lines) <= ROW_LINES or len(parts) == 1:
            return lines, len(parts)
        parts = parts[:-1]
    return [""], 0


def table_lines(rows_or_frame: Any, *, width: int = 100, max_lines: int | None = None) -> list[str]:
    """The table as text lines of at most ``width`` characters: a heading, then one row of
    at most two lines per claim. Nothing is cut with "…". With ``max_lines``, rows of two
    lines give up their last part (a count of other verdicts, a secondary finding), from the
    bottom up, until the table fits or nothing more can go.

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

    def render() -> tuple[list[str], list[int]]:
        out, heights = [f"{'claim':<{cw}} {'verdict':<{vw}} why"], []
        for i, c in enumerate(cvs):
            why, keep[i] = _why_cell([p for p in c.why_parts if p][: keep[i]], ww)
            cells = [_wrap(c.label, cw), _verdict_cell(c.verdict, vw), why]
            heights.append(max(len(x) for x in cells))
            for j in range(heights[-1]):
                a, b, w = (x[j] if j < len(x) else "" for x in cells)
                out.append(f"{a:<{cw}} {b:<{vw}} {w}".rstrip())
        return out, heights

    out, heights = render()
    while max_lines is not None and len(out) > max_lines:
        tall = [i for i, h in enumerate(heights) if h > 1 and keep[i] > cvs[i].essential]
        if not tall:
            break
        keep[tall[-1]] -= 1
        out, heights = render()
    return out


def markdown(rows_or_frame: Any) -> str:
    """The table in Markdown (the report opens each checking section with it).

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
