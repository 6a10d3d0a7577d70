"""The deciding numbers of one verdict row, each labelled with what it is, read from its fields;
and how every summary writes a number (:func:`fmt`, :func:`ratio`, :func:`ratio_sentence`,
:func:`param_text`).

A row carries the numbers it was decided from as fields (``bound, exact, estimate, ci_low,
ci_high, trials``, and ``value_name`` / ``bound_name`` where the defaults would not say what
a number is). This module turns them into the short phrase a one-screen table shows, e.g.

* ``500/500 fail, claimed P ≤ 0.25`` (Monte Carlo counts against a stated probability);
* ``exact P(fail) 1 vs claimed ≤ 0.0002`` (an exact law against it);
* ``relative error 1 > ε 0.1`` (a deterministic bound, labelled by the row);
* ``residual 0.00909 > tolerance 1e-12`` (an identity);
* ``bound 0.98 = 11× worst observed 0.089`` (a loose bound).

It never reads the ``evidence`` prose: the sentences are rendered from the fields, not parsed back.

Example
-------
>>> from attnspec.verdicts.classify import VerdictRow
>>> numbers(VerdictRow("linformer.thm1.eq3", "violated", bound=0.25, estimate=1.0, ci_low=0.99,
...                    ci_high=1.0, trials=500))
'500/500 fail, claimed P ≤ 0.25'
"""

from __future__ import annotations

import math
from typing import Any

#: A bound at or below this is a round-off tolerance: its row checks an identity.
TOLERANCE_MAX = 1e-6
#: Pairs (required dimension, ambient dimension) whose order makes a claim vacuous.
DIMENSION_PAIRS: tuple[tuple[str, str], ...] = (("k", "n"), ("d", "L"))


def num(v: Any) -> float | None:
    """``v`` as a finite float; None for a missing, non-numeric, boolean or infinite value.

    Parameters
    ----------
    v : object

    Returns
    -------
    float or None
    """
    if v is None or isinstance(v, bool):
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def fmt(v: float) -> str:
    """A number in at most four significant digits (``4621``, ``0.0002``, ``3.7e+19``).

    Parameters
    ----------
    v : float

    Returns
    -------
    str
    """
    if v == 0:
        return "0"
    if float(v).is_integer() and abs(v) < 1e6:
        return str(int(v))
    if 1e-3 <= abs(v) < 1e5:
        return f"{v:.4g}"
    return f"{v:.2g}"


def ratio(r: float) -> str:
    """``11×``, ``3.7e+19×``, ``unboundedly``: how many times one number is another.

    Parameters
    ----------
    r : float

    Returns
    -------
    str
    """
    if not math.isfinite(r):
        return "unboundedly"
    return f"{r:.2g}×" if r >= 1e5 else f"{r:.3g}×"


def ratio_sentence(r: float) -> str:
    """``11×``, ``1,234×``, ``1.2e+07×``, ``unboundedly``: how many times one number is
    another, as a summary sentence writes it (whole numbers with separators from 100×).

    Parameters
    ----------
    r : float

    Returns
    -------
    str
    """
    if math.isfinite(r) and r >= 100:
        return f"{r:,.0f}×" if r < 1e6 else f"{r:.1e}×"
    return ratio(r)


def param_text(v: Any) -> str:
    """A parameter's value as a sentence names it: ``4096`` for 4096.0, ``0.1``, ``True``, the
    text of anything else.

    Parameters
    ----------
    v : object

    Returns
    -------
    str
    """
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def is_probability(row: Any) -> bool:
    """True for a row decided from Monte Carlo counts against a stated probability (its
    interval and trial count are set, more than one trial).

    Parameters
    ----------
    row : VerdictRow

    Returns
    -------
    bool
    """
    trials = num(getattr(row, "trials", None))
    lo, hi = num(getattr(row, "ci_low", None)), num(getattr(row, "ci_high", None))
    est, bound = num(getattr(row, "estimate", None)), num(getattr(row, "bound", None))
    return (
        lo is not None
        and hi is not None
        and est is not None
        and trials is not None
        and trials > 1
        and 0 <= lo <= est <= hi <= 1  # an interval on the failure rate the estimate is
        and bound is not None
        and (bound < 1 or row.verdict == "vacuous")
    )


def is_probability_bound(row: Any) -> bool:
    """True for a row whose bound is a stated probability checked by counts (it has trials
    and an interval), whatever the bound's size.

    Parameters
    ----------
    row : VerdictRow

    Returns
    -------
    bool
    """
    trials = num(getattr(row, "trials", None))
    return (
        trials is not None
        and trials > 1
        and num(getattr(row, "ci_low", None)) is not None
        and num(getattr(row, "ci_high", None)) is not None
    )


def _names(row: Any, identity: bool) -> tuple[str, str]:
    value = getattr(row, "value_name", None) or ("residual" if identity else "observed")
    bound = getattr(row, "bound_name", None) or ("tolerance" if identity else "bound")
    return value, bound


def _probability(row: Any, bound: float | None) -> str:
    trials = int(num(row.trials) or 0)
    est, exact = num(row.estimate), num(row.exact)
    lo, hi = num(row.ci_low), num(row.ci_high)
    named = getattr(row, "bound_name", None)
    if exact is not None:
        seen = f"{getattr(row, 'value_name', None) or 'exact P(fail)'} {fmt(exact)}"
        claim = f"claimed {named + ' ' if named else ''}≤ {fmt(bound)}" if bound is not None else ""
        text = f"{seen} vs {claim}" if claim else seen
    else:  # counts: the claim is the failure probability they are counted against
        seen = f"{round((est or 0.0) * trials)}/{trials} fail"
        claim = f"claimed {named or 'P'} ≤ {fmt(bound)}" if bound is not None else ""
        text = f"{seen}, {claim}" if claim else seen
    if row.verdict == "loose" and bound is not None:
        ref = exact if exact is not None else hi
        if ref is not None:
            text += f" ({ratio(bound / ref) if ref > 0 else 'unboundedly'} loose)"
    elif row.verdict in ("measured", "holds") and exact is None and lo is not None and hi is not None:
        if bound is not None and hi > bound:
            text += f", 95% CI [{fmt(lo)}, {fmt(hi)}]"
    return text


def numbers(row: Any) -> str:
    """The row's deciding numbers, each labelled (module docstring); "" when it has none.

    Parameters
    ----------
    row : VerdictRow, or a row of :func:`attnspec.verdicts.sentences.as_rows`

    Returns
    -------
    str
    """
    bound = num(getattr(row, "bound", None))
    est, exact = num(getattr(row, "estimate", None)), num(getattr(row, "exact", None))
    if is_probability(row):
        return _probability(row, bound)
    value = exact if exact is not None else est
    if value is None:
        return f"{getattr(row, 'bound_name', None) or 'bound'} {fmt(bound)}" if bound is not None else ""
    identity = bound is not None and bound <= TOLERANCE_MAX
    vname, bname = _names(row, identity)
    if bound is None or getattr(row, "bound_name", None) == "":  # "": the bound is not this value's
        return f"{getattr(row, 'value_name', None) or 'measured'} {fmt(value)}"
    if row.verdict == "measured":  # a number without a verdict: both said, never compared
        return f"{vname} {fmt(value)}, {bname} {fmt(bound)}"
    if row.verdict == "loose" and value > 0:
        return f"{bname} {fmt(bound)} = {ratio(bound / value)} {vname} {fmt(value)}"
    # round-off slack counts as equal; a violated two-sided claim (an identity, a mean) below its target is "≠"
    op = ">" if value > bound * (1 + 1e-9) else ("≠" if row.verdict == "violated" else "≤")
    text = f"{vname} {fmt(value)} {op} {bname} {fmt(bound)}"
    lo, hi = num(getattr(row, "ci_low", None)), num(getattr(row, "ci_high", None))
    if lo is not None and hi is not None and lo <= value <= hi and exact is None:
        text += f", 95% CI [{fmt(lo)}, {fmt(hi)}]"
    return text


def straddles_above(row: Any) -> bool:
    """True for a ``measured`` probability row whose estimate is above the claim while its
    interval reaches below it: neither contradicted nor shown to hold.

    Parameters
    ----------
    row : VerdictRow

    Returns
    -------
    bool
    """
    bound, est, lo = (num(getattr(row, a, None)) for a in ("bound", "estimate", "ci_low"))
    return (
        row.verdict == "measured" and is_probability(row) and None not in (bound, est, lo) and lo <= bound < est  # type: ignore[operator]
    )


def says_nothing(row: Any) -> str:
    """Why a vacuous or hypothesis-unmet row says nothing, from its fields: the required
    dimension at or above the ambient one (``k = 4621 ≥ n = 4096``), a stated probability
    ``≥ 1``, or the hypothesis not met.

    Parameters
    ----------
    row : VerdictRow

    Returns
    -------
    str
    """
    params = getattr(row, "params", None) or {}
    bound = num(getattr(row, "bound", None))
    if row.verdict == "vacuous" and bound is not None and bound >= 1 and is_probability_bound(row):
        return f"claimed {getattr(row, 'bound_name', None) or 'P(fail)'} {fmt(bound)} ≥ 1"
    for need, ambient in DIMENSION_PAIRS:
        a, b = num(params.get(need)), num(params.get(ambient))
        if a is not None and b is not None and a >= b:
            op = ">" if row.verdict == "hypothesis-unmet" else "≥"
            return f"{need} = {fmt(a)} {op} {ambient} = {fmt(b)}"
    if row.verdict == "vacuous" and bound is not None and bound >= 1:
        return f"claimed {getattr(row, 'bound_name', None) or 'P(fail)'} {fmt(bound)} ≥ 1"
    if row.verdict == "hypothesis-unmet":
        return "hypothesis not met"
    return "says nothing here"
