"""A probability claim read with a computable ceiling on the true probability.

Some probability bounds have no exact law at hand, but a computable upper bound on the true
probability (a *ceiling*): the union over L² pairs of each pair's exact Chernoff bound, say.
Such a ceiling can show that a claim is loose, never that it is violated, and it may be far
below the smallest float (so it is given by its natural log). :class:`Ceiling` reads a claim
``P(event) <= claimed`` from the trials' failure count with the ceiling as the classifier's
``exact`` when it lies below the claim; otherwise the trials alone decide. The row names the
ceiling for what it is, in its sentence and in the one-screen table.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from attnspec.theorem.readings import Decision, Point, Reading, _row, _share_fields

if TYPE_CHECKING:  # pragma: no cover
    from attnspec.verdicts.classify import VerdictRow


@dataclass(frozen=True)
class Ceiling(Reading):
    """P(event) <= claimed, from the trials and a ceiling on the true probability.

    Parameters
    ----------
    event : str
        A quantity, 1 on a failure and 0 otherwise (e.g. :func:`~attnspec.theorem.measured.indicators`).
    claimed : str or float
        The claimed failure probability (a quantity or a number).
    log_ceiling : str
        A quantity: the natural log of an upper bound on the true failure probability.
    how : str
        How the ceiling is computed, named in the sentence.
    ceiling_name : str
        What the sentence calls the ceiling where the classifier would say "exact".
    value_name : str
        The table's name for the ceiling, when it decides.
    before, after : callable, optional
        ``f(point) -> str``: the point's context before and after the sentence.
    """

    event: str = ""
    claimed: str | float = 0.0
    log_ceiling: str = ""
    how: str = ""
    ceiling_name: str = "upper bound"
    value_name: str = "upper bound"
    before: Callable[[Point], str] | None = None
    after: Callable[[Point], str] | None = None

    def _reads(self) -> tuple[str, ...]:
        return (self.event,)

    def _row(self, claim: str, point: Point) -> VerdictRow:
        from attnspec.verdicts.classify import classify_probability

        s, claimed, log_ceiling = point.stats[self.event], point.value(self.claimed), point.value(self.log_ceiling)
        failures = int(round(s.total))
        what = f"true failure probability <= 10^{log_ceiling / math.log(10):.1f} ({self.how})"
        # below the claim the ceiling can show looseness (never a violation); otherwise the trials decide
        exact = max(math.exp(log_ceiling), 5e-324) if log_ceiling < math.log(claimed) else None
        d = classify_probability(claimed=claimed, failures=failures, trials=s.count, exact=exact)
        reason = d.reason
        if exact is None:
            what += ", not below the claim: the trials decide"
        else:
            reason = reason.replace("vs exact", f"vs its {self.ceiling_name}")
            reason = reason.replace("exact failure probability", f"{self.ceiling_name} on the failure probability")
        context = [f(point) if f is not None else "" for f in (self.before, self.after)]
        why = "; ".join(t for t in (context[0], what, reason, context[1]) if t)
        return _row(claim, self.name, point, Decision(d.verdict, why), bound=claimed, exact=exact,
                    value_name=self.value_name if exact is not None else None, **_share_fields(failures, s.count))  # fmt: skip
