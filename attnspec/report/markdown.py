"""Markdown of the report's tables: numbers, escaped text, verdict rows and their grouped summary."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import pandas as pd

#: The most telling verdict first: the row a grouped summary shows.
_ORDER = {"violated": 0, "loose": 1, "cannot-fail": 2, "vacuous": 3, "hypothesis-unmet": 4, "measured": 5, "holds": 6}


#: Count columns of a grouped summary (the whole vocabulary, attnspec.verdicts.classify.VERDICTS).
_COUNTED = ("holds", "violated", "vacuous", "loose", "cannot-fail", "hypothesis-unmet", "measured")


_FIXED = {"claim", "verdict", "bound", "exact", "estimate", "ci_low", "ci_high", "trials", "seed", "evidence"}


def with_interval(value: Any, low: Any, high: Any, fmt: str = ".3f") -> str:
    """``"0.826 [0.825, 0.827]"``: a value and its interval as every table row of the report prints
    them; ``—`` without a value, ``[—]`` without ends. The ends get more decimals (up to 6) where
    ``fmt``'s would print them alike, so an interval never reads [0.99, 0.99].

    Parameters
    ----------
    value, low, high : float or None
        The estimate and its interval's ends (NaN or None: missing).
    fmt : str
        The format of the value, e.g. ``".3f"``, ``"+.3f"``, ``".1%"``.

    Returns
    -------
    str
    """
    if _missing(value):
        return "—"
    if _missing(low) or _missing(high):
        return f"{value:{fmt}} [—]"
    ends = fmt
    if m := re.fullmatch(r"([+]?)\.(\d+)([f%])", fmt):
        sign, digits, kind = m.group(1), int(m.group(2)), m.group(3)
        while digits < 6 and f"{low:{sign}.{digits}{kind}}" == f"{high:{sign}.{digits}{kind}}":
            digits += 1
        ends = f"{sign}.{digits}{kind}"
    return f"{value:{fmt}} [{low:{ends}}, {high:{ends}}]"


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, (float, int)) and not math.isfinite(float(v))) or bool(pd.isna(v))


def _fmt(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    if isinstance(v, float):
        if v == 0 or 1e-3 <= abs(v) < 1e5:
            return f"{v:.4g}"
        return f"{v:.3g}"
    return str(v)


def _md(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def summarise_verdicts(rows: list[dict[str, Any]], max_rows: int = 40) -> str:
    """A markdown table: every row when few, else one row per claim (and reading) with counts and the worst case.

    Parameters
    ----------
    rows : list of dict
        Flat verdict rows (``verdicts.parquet``'s records).
    max_rows : int
        The most rows shown one by one.

    Returns
    -------
    str
    """
    if not rows:
        return "_no verdict rows_\n"
    df = pd.DataFrame(rows)
    params = [c for c in df.columns if c not in _FIXED]
    lines = []
    if len(df) <= max_rows:
        lines.append("| claim | parameters | bound | exact | estimate [95% CI] | verdict | evidence |")
        lines.append("|---|---|---|---|---|---|---|")
        for r in rows:
            lines.append(_row_md(r, params))
        return "\n".join(lines) + "\n"
    keys = ["claim"] + [c for c in ("reading", "family", "tolerance") if c in df.columns]
    order = ", then ".join(sorted(_ORDER, key=_ORDER.get))
    lines.append(
        f"{len(df)} parameter sets; one line per {', '.join(keys)}: the verdict counts and the most telling row "
        f"(the first verdict present in the order {order})."
    )
    lines.append("")
    lines.append(
        "| "
        + " | ".join(keys)
        + " | rows | "
        + " | ".join(_COUNTED)
        + " | shown: parameters | bound | exact | estimate [95% CI] | evidence |"
    )
    lines.append("|" + "---|" * (len(keys) + 6 + len(_COUNTED)))
    for group_key, g in df.groupby(keys, dropna=False, sort=False):
        group_key = group_key if isinstance(group_key, tuple) else (group_key,)
        counts = g["verdict"].value_counts()
        worst = g.assign(_o=g["verdict"].map(_ORDER)).sort_values("_o").iloc[0].to_dict()
        shown_params = ", ".join(
            f"{p}={_fmt(worst[p])}"
            for p in params
            if p not in keys
            and worst.get(p) is not None
            and not (isinstance(worst.get(p), float) and math.isnan(worst[p]))
        )
        est = _fmt(worst.get("estimate"))
        if worst.get("ci_low") is not None and not pd.isna(worst.get("ci_low")):
            est += f" [{_fmt(worst['ci_low'])}, {_fmt(worst['ci_high'])}]"
        lines.append(
            "| "
            + " | ".join(_md(_fmt(k)) for k in group_key)
            + f" | {len(g)} | "
            + " | ".join(str(int(counts.get(v, 0))) for v in _COUNTED)
            + f" | {_md(shown_params)} | {_fmt(worst.get('bound'))} | {_fmt(worst.get('exact'))} | {est} | {_md(worst.get('evidence', ''))} |"
        )
    return "\n".join(lines) + "\n"


def _row_md(r: dict[str, Any], params: Sequence[str]) -> str:
    p = ", ".join(f"{k}={_fmt(r[k])}" for k in params if r.get(k) is not None)
    est = _fmt(r.get("estimate"))
    if r.get("ci_low") is not None:
        est += f" [{_fmt(r['ci_low'])}, {_fmt(r['ci_high'])}]"
    return (
        f"| {_md(r['claim'])} | {_md(p)} | {_fmt(r.get('bound'))} | {_fmt(r.get('exact'))} | {est} | "
        f"**{r['verdict']}** | {_md(r.get('evidence', ''))} |"
    )


def verdict_lines_md(rows: list[dict[str, Any]]) -> list[str]:
    """The verdict-first lines the checking commands print, as a markdown list (one per claim).

    Parameters
    ----------
    rows : list of dict
        Flat verdict rows.

    Returns
    -------
    list of str
        Markdown lines.
    """
    if not rows:
        return []
    from attnspec.verdicts.classify import rows_from_json
    from attnspec.verdicts.sentences import summary_lines

    return [*(f"- {_md(line)}" for line in summary_lines(rows_from_json(rows), width=10_000)), ""]


def _frame_md(df: pd.DataFrame) -> str:
    cols = list(df.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, r in df.iterrows():
        lines.append("| " + " | ".join(_md(_fmt(r[c])) for c in cols) + " |")
    return "\n".join(lines)
