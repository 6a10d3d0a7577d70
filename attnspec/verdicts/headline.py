"""A claim's verdict over its rows: the one function every summary reads.

:func:`claim_verdict` decides it; the one-screen table (:mod:`attnspec.verdicts.table`),
``CheckResult.summary()``, the report's claims ledger and the report's summary all read it,
so they never disagree. Its ``why`` is built from the rows' fields
(:mod:`attnspec.verdicts.numbers`), never from their evidence prose.

The rules, in order:

1. **Secondary readings** (names starting ``proof-``, ``plain-``, ``variant`` or ending
   ``-clipped``: a construction or a variant, not the statement) never decide the verdict;
   a violation among them is named in the why.
2. **A misprint** — a claim read ``as-printed`` and ``corrected``, violated as printed and
   holding in every corrected row — is ``misprint: holds as corrected``
   (:data:`attnspec.verdicts.vocabulary.MISPRINT`), never a failure.
3. **The header's parameters.** Where the claim marks rows at its own setting
   (``at_paper_params``), only rows with the marked rows' values of the run-wide settings
   (:data:`SETTING_PARAMS`: n, ε, d, L, temperature) decide; rows at other values are counted
   in the why ("at other ε: 2 violated, 4 loose").
4. **Own setting first.** If the marked rows decide something (violated, loose, holds), the
   verdict is theirs. If they say nothing (vacuous, hypothesis-unmet, cannot-fail, measured)
   but other rows decide, the verdict is ``A → B`` and the why names both places
   ("vacuous at k = 4621 ≥ n = 4096; violated at k = 4095: 500/500 fail, claimed P
   ≤ 0.8164"). Otherwise the most telling row (:func:`attnspec.verdicts.sentences.telling_row`).
5. **Readings named.** Where a claim has several readings, the why names the reading its
   verdict comes from and gives the others' verdicts ("∃w∀P̃ at k = 348: ...; as-written:
   cannot-fail").

A vacuous row whose stated probability (< 1) its counts contradict (results saved before
the classifier called such rows ``violated``) counts as violated.

Example
-------
>>> from attnspec.verdicts.headline import claim_verdicts
>>> [(c.label, c.verdict) for c in claim_verdicts(result.verdicts)]   # doctest: +SKIP
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from attnspec.verdicts.numbers import fmt, num, numbers, says_nothing
from attnspec.verdicts.sentences import DECIDING, ClaimSummary, _rank, hidden_failure, summarize, telling_row
from attnspec.verdicts.vocabulary import ARROW, MISPRINT

#: Reading names that check a construction or a variant, not the statement itself.
SECONDARY_PREFIXES: tuple[str, ...] = ("proof-", "plain-", "variant")
SECONDARY_SUFFIXES: tuple[str, ...] = ("-clipped",)
#: Run-wide settings a command's header states: the verdict comes from rows at the marked rows' values.
SETTING_PARAMS: tuple[str, ...] = ("n", "eps", "d", "L", "temperature")
#: The parameters quoted first in "at ...", in this order (then the rest by name).
WHERE_FIRST = ("k", "n", "d", "L", "N", "eps", "delta")
#: Row parameters that describe a measurement rather than set the instance: never quoted as "at ...".
NOT_WHERE = frozenset({"tightest", "typical", "label_on", "pw_ratio", "c_min", "c_median", "c_max"})
#: How parameters are written on a screen.
SYMBOLS = {"eps": "ε", "delta": "δ"}


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
    """One claim's verdict and why (its parts, most important first)."""

    claim: str
    label: str
    verdict: str
    why_parts: list[str]
    rows: int
    #: how many leading parts a table fitted to a screen must keep
    essential: int = 1
    #: where the claim comes from: "paper", or the notes on it with a page ("notes p. 3")
    source: str = "paper"
    readings: dict[str, str] = field(default_factory=dict)

    @property
    def why(self) -> str:
        return "; ".join(p for p in self.why_parts if p)


def _effective(row: Any) -> Any:
    """The row, or a copy called ``violated`` where a vacuous row's counts contradict its stated probability."""
    if not hidden_failure(row):
        return row
    return SimpleNamespace(**{**vars(row), "verdict": "violated"}) if hasattr(row, "__dict__") else row


def _value(v: Any) -> str:
    f = num(v)
    return fmt(f) if f is not None else str(v)


def _where(row: Any, names: Sequence[str]) -> str:
    """``k = 4095``: the row's projection dimension k where it has one beside n (the parameter
    a claim's own setting is named by), else its first varying parameter."""
    params = getattr(row, "params", None) or {}
    names = ["k", *names] if num(params.get("k")) is not None and num(params.get("n")) is not None else names
    order = sorted(
        (n for n in dict.fromkeys(names) if n in params and params[n] is not None and n not in NOT_WHERE),
        key=lambda n: (WHERE_FIRST.index(n) if n in WHERE_FIRST else len(WHERE_FIRST), n),
    )
    return ", ".join(f"{SYMBOLS.get(n, n)} = {_value(params[n])}" for n in order[:1])


def _varying(rows: Sequence[Any]) -> list[str]:
    """Parameters whose values differ between ``rows`` (a missing value is no value)."""
    values: dict[str, set[str]] = {}
    for r in rows:
        for k, v in (getattr(r, "params", None) or {}).items():
            if v is not None and not (isinstance(v, float) and math.isnan(v)):
                values.setdefault(k, set()).add(_value(v))
    return [k for k, vals in values.items() if len(vals) > 1]


def _at_setting(rows: Sequence[Any]) -> tuple[list[Any], list[Any], list[str]]:
    """(rows at the header's parameters, the others, the settings they differ in) — rule 3."""
    marked = [r for r in rows if getattr(r, "at_paper_params", False)]
    if not marked:
        return list(rows), [], []
    fixed = {}
    for p in SETTING_PARAMS:
        values = {_value(r.params.get(p)) for r in marked if (r.params or {}).get(p) is not None}
        if len(values) == 1 and all((r.params or {}).get(p) is not None for r in marked):
            fixed[p] = values.pop()
    inside, outside, differ = [], [], []
    for r in rows:
        params = getattr(r, "params", None) or {}
        off = [p for p, v in fixed.items() if params.get(p) is not None and _value(params[p]) != v]
        (outside if off else inside).append(r)
        differ += [p for p in off if p not in differ]
    return inside, outside, differ


def _counts(rows: Sequence[Any]) -> str:
    found = sorted(dict.fromkeys(r.verdict for r in rows), key=_rank)
    return ", ".join(f"{sum(r.verdict == v for r in rows)} {v}" for v in found)


def _row_text(row: Any, names: Sequence[str], pool: Sequence[Any], reading: bool) -> str:
    """``∃w∀P̃ at its k = 4621: 500/500 fail, claimed P ≤ 0.25 (8/12 rows)``."""
    where = _where(row, names)
    if where and getattr(row, "at_paper_params", False):
        where = f"its {where}"
    head = " ".join(x for x in (str(row.reading) if reading else "", f"at {where}" if where else "") if x)
    if reading:  # counts within the row's own reading: the others' verdicts are named apart
        pool = [r for r in pool if r.reading == row.reading]
    nums = numbers(row) or _reading_words(row)
    text = f"{head}: {nums}" if head and nums else (head or nums)
    if len(pool) > 1:
        text += f" ({sum(r.verdict == row.verdict for r in pool)}/{len(pool)} rows)"
    return text


def _misprint(main: Sequence[Any], names: Sequence[str]) -> list[str] | None:
    """The why of a misprint (rule 2), or None when the claim is not one."""
    printed = [r for r in main if r.reading == "as-printed"]
    corrected = [r for r in main if r.reading == "corrected"]
    bad = [r for r in printed if r.verdict == "violated"]
    if not bad or not corrected or any(r.verdict != "holds" for r in corrected):
        return None
    return [
        _row_text(telling_row(bad), names, printed, True),
        _row_text(telling_row(corrected), names, corrected, True),
    ]


def _reading_verdicts(pool: Sequence[Any]) -> dict[str, str]:
    """Each reading's verdict over ``pool``: its most telling deciding row, else its most telling row."""
    out: dict[str, str] = {}
    for reading in dict.fromkeys(str(r.reading) for r in pool):
        mine = [r for r in pool if str(r.reading) == reading]
        deciding = [r for r in mine if r.verdict in DECIDING]
        out[reading] = telling_row(deciding or mine).verdict
    return out


def _decide(pool: Sequence[Any], names: Sequence[str], multi: bool) -> tuple[str, list[str], int]:
    """(verdict, why parts, essential parts) over the rows at the header's parameters — rules 4–5."""
    own = [r for r in pool if getattr(r, "at_paper_params", False)]
    deciding = [r for r in pool if r.verdict in DECIDING]
    own_deciding = [r for r in own if r.verdict in DECIDING]
    if own_deciding:
        worst = telling_row(own_deciding)
        parts = [_row_text(worst, names, own, multi)]
        rest = [r for r in deciding if not r.at_paper_params and r.verdict != worst.verdict]
        rest = [r for r in rest if r.reading == worst.reading] if multi else rest
        if rest:
            parts.append(f"{worst.reading + ' ' if multi else ''}elsewhere {_counts(rest)}")
        return worst.verdict, parts, 1
    if own and deciding:
        base = telling_row(own)
        worst = telling_row(deciding)
        said = says_nothing(base) if base.verdict in ("vacuous", "hypothesis-unmet") else numbers(base)
        where = _where(base, names)
        head = f"{base.verdict} at {where}" if where and where not in said else base.verdict
        parts = [f"{head}: {said}" if said else head, f"{worst.verdict} {_row_text(worst, names, deciding, multi)}"]
        return f"{base.verdict}{ARROW}{worst.verdict}", parts, 2
    if deciding:
        worst = telling_row(deciding)
        parts = [_row_text(worst, names, deciding, multi)]
        rest = [r for r in deciding if r.verdict != worst.verdict]
        rest = [r for r in rest if r.reading == worst.reading] if multi else rest
        if rest:
            parts.append(f"{worst.reading} also {_counts(rest)}" if multi else _counts(rest))
        return worst.verdict, parts, 1
    t = telling_row(pool)
    if t.verdict in ("vacuous", "hypothesis-unmet"):
        said, where = says_nothing(t), _where(t, names)
        text = f"{said} at {where}" if where and where not in said else said
        if len(pool) > 1 and all(r.verdict == t.verdict for r in pool):
            text = f"all {len(pool)} rows {t.verdict}, e.g. {text}"
        return t.verdict, [text], 1
    return t.verdict, [_row_text(t, names, pool, multi)], 1


def _reading_words(row: Any) -> str:
    """What the row's reading tests (the registry's words), for a row without numbers."""
    from attnspec.verdicts import registry as claim_registry

    try:
        return claim_registry.get(str(row.claim)).reading(str(row.reading)).description
    except ValueError:
        return ""


def _source(claim_id: str) -> str:
    from attnspec.verdicts import registry as claim_registry

    try:
        return claim_registry.get(claim_id).source
    except ValueError:
        return "paper"


def _label(claim_id: str) -> str:
    from attnspec.verdicts import registry as claim_registry

    try:
        return claim_registry.get(claim_id).label
    except ValueError:
        return claim_id


def claim_verdict(cs: ClaimSummary) -> ClaimVerdict:
    """The verdict and why of one claim (module docstring): the one function every summary reads.

    Parameters
    ----------
    cs : ClaimSummary
        The claim's rows, by reading (:func:`attnspec.verdicts.sentences.summarize`).

    Returns
    -------
    ClaimVerdict
    """
    rows = [_effective(r) for r in cs.rows]
    main = [r for r in rows if not secondary(str(r.reading))]
    extra = [r for r in rows if secondary(str(r.reading))] if main else []
    main = main or rows
    done = _misprint(main, _varying(main))
    pool, other, differ = _at_setting(main)
    readings = _reading_verdicts(pool)
    if done is not None:
        verdict, parts, essential = MISPRINT, done, 2
    else:
        verdict, parts, essential = _decide(pool, _varying(pool), len(readings) > 1)
        others = {r: v for r, v in readings.items() if v != verdict.split(ARROW)[-1]}
        if others and len(readings) > 1:  # readings that disagree are said, never cut away
            parts.insert(essential, "; ".join(f"{r}: {v}" for r, v in others.items()))
            essential += 1
    if other:
        deciding = [r for r in other if r.verdict in DECIDING] or other
        names = ", ".join(SYMBOLS.get(p, p) for p in differ)
        parts.append(f"at other {names}: {_counts(deciding)}")
    bad = [r for r in extra if r.verdict == "violated"]
    if bad and not verdict.endswith("violated"):
        names = ", ".join(sorted(dict.fromkeys(str(r.reading) for r in bad)))
        parts.append(f"{names}: violated in {len(bad)} rows")
    return ClaimVerdict(
        cs.claim, _label(cs.claim), verdict, parts, len(cs.rows), essential, _source(cs.claim), readings
    )


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


def deciding_row(cs: ClaimSummary, verdict: str) -> Any | None:
    """The row that decides a claim's ``verdict`` (:func:`claim_verdict`'s), in the order its rules
    read rows: among the rows of the claim's main readings that carry the verdict's last part, those
    at the paper's own parameters first, then those at the header's setting, then any; of these
    the one a reader should look at first (:func:`telling_row`). None when no row carries it.

    Parameters
    ----------
    cs : ClaimSummary
        The claim's rows.
    verdict : str
        The claim's verdict (``violated``, ``vacuous → violated``, ...).

    Returns
    -------
    VerdictRow or None
        Its fields (estimate, bound, counts, ...) are the deciding numbers
        (:func:`attnspec.verdicts.numbers.numbers` renders them).
    """
    rows = [_effective(r) for r in cs.rows]
    main = [r for r in rows if not secondary(str(r.reading))] or rows
    final = verdict.split(ARROW)[-1]
    pool = _at_setting(main)[0]
    own = [r for r in pool if getattr(r, "at_paper_params", False)]
    for rows_read in (own, pool, main, rows):
        carrying = [r for r in rows_read if r.verdict == final]
        if carrying:
            return telling_row(carrying)
    return None


def deciding_words(cs: ClaimSummary, verdict: str) -> str:
    """The deciding numbers of :func:`deciding_row`, rendered from its fields, else what its
    reading tests (the registry's words); "" without such a row.

    Parameters
    ----------
    cs : ClaimSummary
        The claim's rows.
    verdict : str
        The claim's verdict.

    Returns
    -------
    str
    """
    row = deciding_row(cs, verdict)
    return "" if row is None else (numbers(row) or _reading_words(row))
