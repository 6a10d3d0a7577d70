"""How a claim is read: the kinds of reading, each decided by the one classifier.

A reading names the quantities it reads (by the names a check's ``setup`` and ``trial`` return,
or a number) and turns their statistics at each grid point into a verdict row: the deciding
numbers go into the row's fields (``estimate``, ``ci_low``, ``ci_high``, ``bound``, ``exact``,
``trials``), and its sentence is rendered from them by :mod:`attnspec.verdicts.classify`. A
number without a verdict is :class:`attnspec.theorem.measured.Measure`.

=================  ==========================================  ==============================
reading            the claim                                   decided by
=================  ==========================================  ==============================
:class:`Probability`  P(event) <= claimed (sequential MC)      ``classify_probability``
:class:`WorstBound`   observed <= bound at the grid's worst    ``classify_bound``
:class:`Identity`     residual <= tol on every trial            ``classify_identity``
:class:`ExactLaw`     an exact law equals the claimed value     ``classify_identity`` (relative)
:class:`Covers`       E[value] = target (e.g. unbiasedness)     ``classify_identity`` on the CI
:class:`AtMost`       E[value] <= bound                         ``classify_bound`` on the CI
=================  ==========================================  ==============================
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:  # pragma: no cover
    from attnspec.verdicts.classify import VerdictRow

#: The classifier's looseness factor (:data:`attnspec.verdicts.classify.LOOSE_FACTOR`), here so
#: that declaring a check imports neither the classifier nor pandas (``attnspec claims`` stays light).
LOOSE_FACTOR = 10.0


def _classify(kind: str, **kw: Any) -> Decision:
    """The one classifier's decision of ``kind`` (``bound``, ``identity``, ``measurement``, ``probability``)."""
    from attnspec.verdicts import classify

    d = getattr(classify, f"classify_{kind}")(**kw)
    return Decision(d.verdict, d.reason)


class Decision(NamedTuple):
    """A verdict and its one-line reason (:class:`attnspec.verdicts.classify.Decision`)."""

    verdict: str
    reason: str


@dataclass(frozen=True)
class Stat:
    """The statistics of one named quantity at one grid point (a ``setup`` value has count 1).

    Parameters
    ----------
    count : int
        Values seen.
    mean, sd, low, high, total : float
        Their mean, standard deviation (ddof 1; 0 for one value), smallest, largest and sum.
    """

    count: int
    mean: float
    sd: float
    low: float
    high: float
    total: float

    def interval(self, level: float) -> tuple[float, float]:
        """The Student-t interval of the mean at ``level``; the value itself for one value.

        Parameters
        ----------
        level : float
            Confidence level, in (0, 1).

        Returns
        -------
        tuple of float
        """
        if self.count < 2:
            return self.mean, self.mean
        from attnspec.numerics.laws import t_ppf

        half = float(t_ppf(0.5 + level / 2, self.count - 1)) * self.sd / math.sqrt(self.count)
        return self.mean - half, self.mean + half


@dataclass(frozen=True)
class Point:
    """One grid point's parameters, seed and statistics, as readings see it.

    Parameters
    ----------
    index : int
        Its place in the grid.
    params : dict
        Its parameters (the grid's dict).
    seed : int
        The seed its draws came from.
    stats : dict of str to Stat
        Every named quantity of ``setup`` and ``trial``.
    context : mapping
        Exact values beside the statistics (a trial's 63-bit seed, an entry's index, a label),
        never tabulated as floats: what a reading's hooks may name in its sentence
        (:attr:`attnspec.theorem.declare.Check.context`).
    """

    index: int
    params: dict[str, Any]
    seed: int
    stats: dict[str, Stat]
    context: Mapping[str, Any] = field(default_factory=dict)

    def value(self, ref: str | float) -> float:
        """A number, or the mean of the quantity so named.

        Parameters
        ----------
        ref : str or float

        Returns
        -------
        float
        """
        if isinstance(ref, str):
            if ref not in self.stats:
                raise KeyError(f"no quantity {ref!r} at grid point {self.params}; quantities: {sorted(self.stats)}")
            return self.stats[ref].mean
        return float(ref)


def _pct(level: float) -> str:
    return f"{level * 100:g}%"


def _verdict_row(
    claim: str, d: Decision, *, reading: str, params: Mapping[str, Any] | None, seed: int | None, after: str = "",
    **fields: Any,
) -> VerdictRow:  # fmt: skip
    """The row of a decision: its verdict, its reason (then ``after``) as the sentence, the fields."""
    from attnspec.verdicts.classify import VerdictRow

    evidence = d.reason + (f"; {after}" if after else "")
    return VerdictRow(
        claim=claim, verdict=d.verdict, params=dict(params or {}), seed=seed, evidence=evidence, reading=reading,
        **fields,
    )  # fmt: skip


def _share_fields(hits: int, total: int) -> dict[str, Any]:
    """A count's row fields: the share ``estimate``, its 95% Clopper–Pearson interval and ``trials``."""
    from attnspec.numerics.stats import clopper_pearson

    ci = clopper_pearson(int(hits), int(total), 0.95)
    return {"estimate": ci.estimate, "ci_low": ci.low, "ci_high": ci.high, "trials": int(total)}


def _row(claim: str, reading: str, point: Point, d: Decision, **numbers: Any) -> VerdictRow:
    """The row of a decision at a grid point."""
    return _verdict_row(claim, d, reading=reading, params=point.params, seed=point.seed, **numbers)


@dataclass(frozen=True)
class Reading:
    """A reading's name and what it tests; the kinds below say how it is decided.

    Parameters
    ----------
    name : str
        The reading's key in the claim registry (``"as-stated"``).
    description : str
        What exactly is tested under it, in one sentence (``attnspec claims`` shows it).
    """

    name: str = "as-stated"
    description: str = ""

    def trial_quantities(self) -> tuple[str, ...]:
        """The quantities whose trials the reading reads (the runner's stopping rule asks).

        Returns
        -------
        tuple of str
        """
        return self._reads()

    def _reads(self) -> tuple[str, ...]:
        return ()

    def rows(self, claim: str, points: list[Point]) -> list[VerdictRow]:
        """The verdict rows of the claim under this reading.

        Parameters
        ----------
        claim : str
            The claim id.
        points : list of Point
            Every grid point, with its statistics.

        Returns
        -------
        list of VerdictRow
        """
        return self._rows(claim, points)

    def _rows(self, claim: str, points: list[Point]) -> list[VerdictRow]:
        return [self._row(claim, p) for p in points]

    def _row(self, claim: str, point: Point) -> VerdictRow:
        raise NotImplementedError


@dataclass(frozen=True)
class Covers(Reading):
    """E[value] = target: the ``level`` interval of the mean of ``value`` must hold ``target``.

    Parameters
    ----------
    value : str
        A trial quantity (an estimator's draw, a squared error).
    target : str or float
        The claimed mean (a ``setup`` quantity such as the exact kernel, or a number).
    level : float
        The interval's confidence level.
    """

    value: str = ""
    target: str | float = 0.0
    level: float = 0.99

    def _reads(self) -> tuple[str, ...]:
        return (self.value,)

    def _row(self, claim: str, point: Point) -> VerdictRow:
        s, target = point.stats[self.value], point.value(self.target)
        low, high = s.interval(self.level)
        d = _classify("identity", residual=abs(s.mean - target), tol=(high - low) / 2)
        inside = "contains" if d.verdict == "holds" else "misses"
        why = f"mean {s.mean:.4g} over {s.count} trials, {_pct(self.level)} CI [{low:.4g}, {high:.4g}] {inside} the target {target:.4g}"
        return _row(claim, self.name, point, Decision(d.verdict, why), estimate=s.mean,
                    ci_low=low, ci_high=high, exact=target, trials=s.count)  # fmt: skip


@dataclass(frozen=True)
class AtMost(Reading):
    """E[value] <= bound: violated when the interval's lower end exceeds it, holds (or loose)
    when its upper end is below it, ``measured`` when the interval straddles it.

    Parameters
    ----------
    value : str
        A trial quantity.
    bound : str or float
        The claimed upper bound (a ``setup`` quantity or a number).
    level : float
        The interval's confidence level.
    loose_factor : float or None
        A bound more than this many times the upper end is ``loose``; None: never.
    """

    value: str = ""
    bound: str | float = 0.0
    level: float = 0.99
    loose_factor: float | None = LOOSE_FACTOR

    def _reads(self) -> tuple[str, ...]:
        return (self.value,)

    def _row(self, claim: str, point: Point) -> VerdictRow:
        s, bound = point.stats[self.value], point.value(self.bound)
        low, high = s.interval(self.level)
        d = _classify("bound", observed=high, bound=bound, rtol=0.0, loose_factor=self.loose_factor)
        if d.verdict == "violated" and low <= bound:
            d = _classify("measurement", what=f"straddles the bound {bound:.4g}: the trials cannot tell")
        elif d.verdict == "violated":
            d = _classify("bound", observed=low, bound=bound, rtol=0.0, loose_factor=None)
            d = Decision(d.verdict, f"lower end above the bound {bound:.4g}")
        elif d.verdict == "holds":
            d = Decision(d.verdict, f"upper end <= the bound {bound:.4g}")
        why = f"mean {s.mean:.4g} over {s.count} trials, {_pct(self.level)} CI [{low:.4g}, {high:.4g}]: "
        return _row(claim, self.name, point, Decision(d.verdict, why + d.reason), estimate=s.mean,
                    ci_low=low, ci_high=high, bound=bound, trials=s.count)  # fmt: skip


@dataclass(frozen=True)
class Probability(Reading):
    """P(event) <= claimed, from the count of trials where ``event`` is 1, drawn sequentially
    (:mod:`attnspec.theorem.sequential`: a point stops once its verdict is settled).

    Parameters
    ----------
    event : str
        A trial quantity, 1 on a failure and 0 otherwise.
    claimed : str or float
        The claimed failure probability (a ``setup`` quantity or a number).
    exact : str, optional
        A ``setup`` quantity giving the exact failure probability, where a law gives it.
    """

    event: str = ""
    claimed: str | float = 0.0
    exact: str | None = None

    def _reads(self) -> tuple[str, ...]:
        return (self.event,)

    def _row(self, claim: str, point: Point) -> VerdictRow:
        s, claimed = point.stats[self.event], point.value(self.claimed)
        exact = point.value(self.exact) if self.exact is not None else None
        failures = int(round(s.total))
        d = _classify("probability", claimed=claimed, failures=failures, trials=s.count, exact=exact)
        return _row(claim, self.name, point, d, bound=claimed, exact=exact, **_share_fields(failures, s.count))


@dataclass(frozen=True)
class WorstBound(Reading):
    """observed <= bound over the whole grid, decided at its tightest point (largest
    observed / bound): one row per claim, at that point's parameters.

    Parameters
    ----------
    observed : str
        A quantity; its largest value at each point is read (the worst trial).
    bound : str or float
        The bound (a ``setup`` quantity or a number).
    loose_factor : float or None
        A bound more than this many times the worst observed value is ``loose``; None: never.
    """

    observed: str = ""
    bound: str | float = 0.0
    loose_factor: float | None = LOOSE_FACTOR

    def _rows(self, claim: str, points: list[Point]) -> list[VerdictRow]:
        def ratio(p: Point) -> float:
            b = p.value(self.bound)
            return p.stats[self.observed].high / b if b > 0 else math.inf

        worst = max(points, key=ratio)
        s, bound = worst.stats[self.observed], worst.value(self.bound)
        d = _classify("bound", observed=s.high, bound=bound, loose_factor=self.loose_factor)
        d = Decision(d.verdict, f"tightest of {len(points)} grid points: {d.reason}")
        return [_row(claim, self.name, worst, d, estimate=s.high, bound=bound, trials=s.count)]


@dataclass(frozen=True)
class Identity(Reading):
    """An identity, to round-off: the largest ``residual`` over the trials is at most ``tol``.

    Parameters
    ----------
    residual : str
        A quantity (a trial's or ``setup``'s residual).
    tol : float
        The round-off tolerance.
    """

    residual: str = ""
    tol: float = 1e-10

    def _reads(self) -> tuple[str, ...]:
        return (self.residual,)

    def _row(self, claim: str, point: Point) -> VerdictRow:
        s = point.stats[self.residual]
        d = _classify("identity", residual=s.high, tol=self.tol)
        return _row(claim, self.name, point, d, estimate=s.high, bound=self.tol, trials=s.count)


@dataclass(frozen=True)
class ExactLaw(Reading):
    """An exact law (computed) against the paper's claimed value: equal to relative ``rtol``.

    Parameters
    ----------
    exact : str
        A ``setup`` quantity: the value an exact law gives.
    claimed : str or float
        The paper's value (a ``setup`` quantity or a number).
    rtol : float
        The relative tolerance.
    """

    exact: str = ""
    claimed: str | float = 0.0
    rtol: float = 1e-9

    def _row(self, claim: str, point: Point) -> VerdictRow:
        exact, claimed = point.value(self.exact), point.value(self.claimed)
        rel = abs(exact - claimed) / max(abs(claimed), 1e-300)
        d = _classify("identity", residual=rel, tol=self.rtol)
        d = Decision(d.verdict, f"exact {exact:.6g} vs claimed {claimed:.6g}: relative {d.reason}")
        return _row(claim, self.name, point, d, exact=exact, bound=claimed)
