"""Verdicts: measured statements about a claim, shared by every theory module.

A verdict is one of

* ``holds``    — the measurement is consistent with the claim (and the bound is not loose
  by more than the chosen factor, where that can be measured);
* ``violated`` — the measurement contradicts the claim (evidence: the instance, its seed,
  the observed rate and its CI against the claimed probability);
* ``vacuous``  — the claim says nothing at these parameters (e.g. a required dimension
  >= the ambient one, or a probability bound >= 1);
* ``loose``    — the claim holds but its bound exceeds the exact value by a large factor.

A verdict is never a restatement of the paper: every row carries the numbers it was
decided from.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import pandas as pd

from attnspec.stats import clopper_pearson

VerdictKind = Literal["holds", "violated", "vacuous", "loose"]
VERDICTS: tuple[str, ...] = ("holds", "violated", "vacuous", "loose")

#: A bound larger than the exact (or estimated) value by this factor is reported as loose.
DEFAULT_LOOSE_FACTOR = 10.0


@dataclass
class VerdictRow:
    """One claim at one parameter set, with its evidence.

    ``params`` holds the claim's parameters (n, k, eps, ...); they are flattened into
    columns when rows are turned into a table or JSON.
    """

    claim: str
    verdict: VerdictKind
    params: dict[str, Any] = field(default_factory=dict)
    bound: float | None = None
    exact: float | None = None
    estimate: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    trials: int | None = None
    seed: int | None = None
    evidence: str = ""

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")

    def flat(self) -> dict[str, Any]:
        d = asdict(self)
        params = d.pop("params")
        out: dict[str, Any] = {"claim": d.pop("claim")}
        out.update(params)
        out.update(d)
        return out


def classify_failure_probability(
    *,
    claimed: float,
    failures: int,
    trials: int,
    exact: float | None = None,
    level: float = 0.95,
    loose_factor: float = DEFAULT_LOOSE_FACTOR,
) -> tuple[VerdictKind, str]:
    """Decide a claim of the form "P(failure) <= claimed" from Monte Carlo counts.

    * vacuous if ``claimed >= 1``;
    * violated if the lower end of the Clopper–Pearson interval exceeds ``claimed``
      (or, when an exact probability is known, if it exceeds ``claimed``);
    * loose if ``claimed`` exceeds the exact probability (or, without one, the upper CI
      end) by more than ``loose_factor``;
    * holds otherwise.

    Returns the verdict and a one-line reason.
    """
    if trials < 1:
        raise ValueError(f"trials must be >= 1, got {trials}")
    ci = clopper_pearson(failures, trials, level)
    if not math.isfinite(claimed) or claimed >= 1.0:
        return "vacuous", f"claimed failure probability {claimed:.3g} >= 1 says nothing"
    if exact is not None and exact > claimed * (1 + 1e-12):
        return "violated", f"exact failure probability {exact:.4g} > claimed {claimed:.4g}"
    if ci.low > claimed:
        return "violated", (
            f"observed {failures}/{trials} = {ci.estimate:.4g}, "
            f"{level:.0%} CI [{ci.low:.4g}, {ci.high:.4g}] above claimed {claimed:.4g}"
        )
    reference = exact if exact is not None else ci.high
    if reference <= 0:
        ratio = math.inf
    else:
        ratio = claimed / reference
    if ratio > loose_factor:
        what = "exact" if exact is not None else f"{level:.0%} upper CI"
        return "loose", f"loose by {_fmt_ratio(ratio)} (claimed {claimed:.4g} vs {what} {reference:.4g})"
    return "holds", f"observed {failures}/{trials}, {level:.0%} CI [{ci.low:.4g}, {ci.high:.4g}] <= claimed {claimed:.4g}"


def _fmt_ratio(r: float) -> str:
    if not math.isfinite(r):
        return "an unbounded factor (reference is 0)"
    return f"a factor {r:.3g}"


def verdicts_frame(rows: Iterable[VerdictRow]) -> pd.DataFrame:
    """Tidy table, identifier columns (claim, parameters) first."""
    return pd.DataFrame([r.flat() for r in rows])


def verdicts_json(rows: Iterable[VerdictRow]) -> str:
    """The rows as a JSON array; NaN and infinities become null."""

    def clean(v: Any) -> Any:
        if isinstance(v, float) and not math.isfinite(v):
            return None
        if hasattr(v, "item"):  # numpy scalars
            return clean(v.item())
        return v

    return json.dumps([{k: clean(v) for k, v in r.flat().items()} for r in rows], indent=2)


_STYLE = {"holds": "green", "violated": "bold red", "vacuous": "yellow", "loose": "cyan"}


def print_verdict_table(
    rows: Sequence[VerdictRow],
    *,
    title: str = "Verdicts",
    param_columns: Sequence[str] | None = None,
    console: Any | None = None,
) -> None:
    """Print the rows as a rich table: claim, parameters, bound, exact, estimate ± CI, verdict."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = console or Console()
    if param_columns is None:
        seen: dict[str, None] = {}
        for r in rows:
            for k in r.params:
                seen.setdefault(k, None)
        param_columns = list(seen)
    table = Table(title=title, show_lines=False)
    table.add_column("claim", overflow="fold")
    for p in param_columns:
        table.add_column(p, justify="right")
    for c in ("bound", "exact", "estimate [95% CI]", "trials", "verdict"):
        table.add_column(c, justify="right" if c != "verdict" else "left")
    table.add_column("evidence", overflow="fold")
    for r in rows:
        est = _fmt(r.estimate)
        if r.ci_low is not None and r.ci_high is not None:
            est += f" [{_fmt(r.ci_low)}, {_fmt(r.ci_high)}]"
        # Claims and evidence quote brackets ("[gaussian]", CIs): escape them, or rich
        # would read them as markup and drop them.
        table.add_row(
            escape(r.claim),
            *[escape(_fmt(r.params.get(p))) for p in param_columns],
            _fmt(r.bound),
            _fmt(r.exact),
            escape(est),
            _fmt(r.trials),
            f"[{_STYLE[r.verdict]}]{r.verdict}[/]",
            escape(r.evidence),
        )
    console.print(table)


def _fmt(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return f"{v:,}" if abs(v) >= 10_000 else str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if v == 0 or (1e-3 <= abs(v) < 1e5):
            return f"{v:.4g}"
        return f"{v:.3e}"
    return str(v)
