"""Claims read off a measurement the check makes itself: one point, its numbers, the readings.

Some checks measure first and decide after: ``sa-check`` searches for the least width d* at
which its construction works, draws the construction's errors there, and reads several claims
off those draws. Such a check declares its claims as every check does (a
:class:`~attnspec.theorem.declare.Claim` with its readings) and hands each measured point to
:func:`read_off`: the point's parameters (measured values such as d* among them), its seed, and
its numbers, which the runner tabulates (:class:`~attnspec.theorem.cases.Cases` for a value per
trial or instance) and the claim's readings decide, with the one classifier.

Two readings decide such numbers where the kinds of :mod:`attnspec.theorem.readings` read trials:

* :class:`Bound`: observed <= bound at the point, at its worst trial or instance (the largest
  value of a :class:`~attnspec.theorem.cases.Cases`), with the exact worst case and the names of
  the two numbers as fields; or decided on another quantity (a ratio to a bound that changes
  from trial to trial, against 1);
* :class:`Number`: a number reported without a verdict (``measured``), its sentence rendered from
  the point's numbers.

Two wrappers give a reading what such points need:

* :class:`Unmet`: the point may not meet the claim's hypothesis (then ``hypothesis-unmet``,
  whatever the reading finds: the classifier's order of decision);
* :class:`Noted`: the point's context, rendered from its numbers, before the reading's sentence.

:func:`indicators` turns a count measured elsewhere (f failures in t trials) into the sample of
its trials' failure indicators that a :class:`~attnspec.theorem.readings.Probability` reads.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from attnspec.theorem.cases import Cases
from attnspec.theorem.readings import LOOSE_FACTOR, Point, Reading

if TYPE_CHECKING:  # pragma: no cover
    from attnspec.theorem.declare import Claim
    from attnspec.theorem.registry import Paper
    from attnspec.verdicts.classify import VerdictRow


def indicators(failures: int, trials: int) -> Cases:
    """``failures`` ones then zeros, ``trials`` in all: a count as its trials' failure indicators.

    Parameters
    ----------
    failures : int
        Failures counted, in 0..trials.
    trials : int
        Trials drawn, >= 1.

    Returns
    -------
    Cases
        Its total is ``failures`` and its count ``trials`` (the order of trials is not read).
    """
    failures, trials = int(failures), int(trials)
    if not 0 <= failures <= trials or trials < 1:
        raise ValueError(f"need 0 <= failures <= trials and trials >= 1, got {failures} of {trials}")
    return Cases([1.0] * failures + [0.0] * (trials - failures))


def read_off(
    claim: Claim,
    params: Mapping[str, Any],
    numbers: Mapping[str, Any],
    *,
    paper: Paper,
    seed: int,
    readings: Sequence[str] | None = None,
) -> list[VerdictRow]:
    """The verdict rows of ``claim`` at one measured point, by :func:`attnspec.theorem.runner.run_check`.

    Parameters
    ----------
    claim : Claim
        The declared claim.
    params : mapping
        The point's parameters: its rows' parameters.
    numbers : mapping
        What the readings read: numbers, and :class:`~attnspec.theorem.cases.Cases`.
    paper : Paper
        The claim's paper.
    seed : int
        The seed the numbers were drawn from (the rows record it).
    readings : sequence of str, optional
        The names of the readings made at this point, in the order of their rows (default: all
        of them, in the claim's order).

    Returns
    -------
    list of VerdictRow
        One per reading (a reading of several points may give none or more).
    """
    from attnspec.theorem.declare import Check
    from attnspec.theorem.runner import run_check

    by_name = {r.name: r for r in claim.readings}
    missing = sorted(set(readings or ()) - set(by_name))
    if missing:
        raise ValueError(f"{claim.id} has no reading {missing}; readings: {list(by_name)}")
    chosen = claim.readings if readings is None else tuple(by_name[name] for name in readings)
    check = Check(
        command=f"{paper.key}-read-off",
        paper=paper,
        claims=(dataclasses.replace(claim, reading=chosen),),
        grid=lambda options: [dict(params)],
        setup=lambda point, rng: dict(numbers),
        seeds=lambda options, index, point: seed,
    )
    return run_check(check, {"seed": seed, "trials": 1, "jobs": 1}).verdicts


@dataclass(frozen=True)
class Unmet(Reading):
    """``reading``, except at the points that do not meet the claim's hypothesis: there the row
    is ``hypothesis-unmet`` (its numbers as the reading found them) and says which.

    Its name and description are the wrapped reading's.

    Parameters
    ----------
    reading : Reading
        The reading made at every point.
    unmet : callable
        ``unmet(point) -> str or None``: the hypothesis the point does not meet, from its
        parameters and numbers (:class:`~attnspec.theorem.readings.Point`).
    """

    reading: Reading | None = None
    unmet: Callable[[Point], str | None] | None = None

    def __post_init__(self) -> None:
        _wrap(self, "Unmet")

    def _reads(self) -> tuple[str, ...]:
        return self.reading.trial_quantities()  # type: ignore[union-attr]

    def _rows(self, claim: str, points: list[Point]) -> list[VerdictRow]:
        from attnspec.verdicts.classify import classify_measurement

        rows = []
        for p in points:
            why = self.unmet(p) if self.unmet is not None else None
            found = self.reading.rows(claim, [p])  # type: ignore[union-attr]
            if why:
                d = classify_measurement(what="", hypothesis_unmet=why)
                found = [dataclasses.replace(r, verdict=d.verdict, evidence=d.reason) for r in found]
            rows += found
        return rows


@dataclass(frozen=True)
class Noted(Reading):
    """``reading``, its sentence after the point's context, ``"<note>: <sentence>"``, or before
    it, ``"<sentence>; <note>"``.

    Its name and description are the wrapped reading's.

    Parameters
    ----------
    reading : Reading
        The reading made at every point.
    note : callable
        ``note(point) -> str``: what was measured there, rendered from the point's parameters
        and numbers.
    after : bool
        Put the note after the reading's sentence.
    """

    reading: Reading | None = None
    note: Callable[[Point], str] | None = None
    after: bool = False

    def __post_init__(self) -> None:
        _wrap(self, "Noted")

    def _reads(self) -> tuple[str, ...]:
        return self.reading.trial_quantities()  # type: ignore[union-attr]

    def _rows(self, claim: str, points: list[Point]) -> list[VerdictRow]:
        rows = []
        for p in points:
            note = self.note(p) if self.note is not None else ""
            for r in self.reading.rows(claim, [p]):  # type: ignore[union-attr]
                shown = f"{r.evidence}; {note}" if self.after else f"{note}: {r.evidence}"
                rows.append(dataclasses.replace(r, evidence=shown if note else r.evidence))
        return rows


def _wrap(wrapper: Reading, kind: str) -> None:
    """A wrapper takes its reading's name and description."""
    inner = getattr(wrapper, "reading", None)
    if inner is None:
        raise ValueError(f"{kind} needs the reading it wraps: {kind}(reading=...)")
    object.__setattr__(wrapper, "name", inner.name)
    object.__setattr__(wrapper, "description", inner.description)


@dataclass(frozen=True)
class Bound(Reading):
    """observed <= bound at each point: the largest value of ``observed`` (its worst trial or
    instance) against ``bound``, by the one classifier; one row per point.

    Parameters
    ----------
    observed : str
        A quantity (a number, or :class:`~attnspec.theorem.cases.Cases`: one value per trial);
        its largest value is the row's estimate.
    bound : str or float, optional
        The bound (a quantity or a number), the row's bound; None: the row records none.
    decide : tuple of (str, str or float), optional
        ``(quantity, limit)``: decide on the largest value of another quantity against ``limit``
        (a ratio to a bound that changes from trial to trial against 1, a count against 0),
        while the row reports ``observed`` and ``bound``. Default ``(observed, bound)``.
    exact : str, optional
        A quantity: the exact worst case, recorded beside the bound.
    low, high : str, optional
        Quantities: the interval the row records (``ci_low``, ``ci_high``).
    trials : str, optional
        A quantity: the trials to record (default the count of ``observed``).
    shown : tuple of str
        Quantities added to the row's parameters (e.g. bound / observed at the tightest and a
        typical trial).
    vacuous, trivial, unmet : callable, optional
        ``f(point) -> str or None``: why the claim says nothing at the point, why it cannot fail
        there, which hypothesis the point does not meet (decided first; the row then carries the
        bound and the trials alone).
    loose_factor : float or None
        A bound more than this many times the observed value is ``loose``; None: never.
    identity : bool
        Decide as an identity to round-off (the decided quantity is a residual, the limit its
        tolerance): ``holds`` or ``violated``, never ``loose``.
    value_name, bound_name : str, optional
        What ``exact`` (or ``observed``) and ``bound`` are, for the one-screen table.
    """

    observed: str = ""
    bound: str | float | None = None
    decide: tuple[str, str | float] | None = None
    exact: str | None = None
    low: str | None = None
    high: str | None = None
    trials: str | None = None
    shown: tuple[str, ...] = ()
    vacuous: Callable[[Point], str | None] | None = None
    trivial: Callable[[Point], str | None] | None = None
    unmet: Callable[[Point], str | None] | None = None
    loose_factor: float | None = LOOSE_FACTOR
    identity: bool = False
    value_name: str | None = None
    bound_name: str | None = None

    def _row(self, claim: str, point: Point) -> VerdictRow:
        from attnspec.verdicts.classify import VerdictRow, classify_bound, classify_identity

        s = point.stats[self.observed]
        bound = point.value(self.bound) if self.bound is not None else None
        quantity, limit = self.decide if self.decide else (self.observed, self.bound)
        why, vac, triv = (f(point) if f is not None else None for f in (self.unmet, self.vacuous, self.trivial))
        if self.identity:
            d = classify_identity(residual=point.stats[quantity].high, tol=point.value(limit), hypothesis_unmet=why)
        else:
            d = classify_bound(
                observed=point.stats[quantity].high, bound=point.value(limit), loose_factor=self.loose_factor,
                vacuous=vac, trivial=triv, hypothesis_unmet=why,
            )  # fmt: skip
        trials = int(point.value(self.trials)) if self.trials else s.count
        if why:  # nothing was measured under the hypothesis: the row carries the bound alone
            return VerdictRow(claim, d.verdict, dict(point.params), bound=bound, trials=trials, seed=point.seed,
                              evidence=d.reason, reading=self.name)  # fmt: skip
        opt = {
            k: point.value(q) if q else None
            for k, q in (("exact", self.exact), ("ci_low", self.low), ("ci_high", self.high))
        }
        return VerdictRow(
            claim, d.verdict, {**point.params, **{q: point.value(q) for q in self.shown}}, bound=bound,
            estimate=s.high, trials=trials, seed=point.seed, evidence=d.reason, reading=self.name,
            value_name=self.value_name, bound_name=self.bound_name, **opt,
        )  # fmt: skip


@dataclass(frozen=True)
class Number(Reading):
    """A number without a verdict (``measured``): the value of ``value`` at each point.

    Parameters
    ----------
    value : str
        A quantity.
    what : callable
        ``what(point) -> str``: what was measured, rendered from the point's numbers (the row's sentence).
    trials : str, optional
        A quantity: the trials the number was measured on.
    low, high : str, optional
        Quantities: the number's interval (``ci_low``, ``ci_high``).
    bound : str or float, optional
        What the number is set beside (a quantity or a number: the paper's value), without a verdict.
    """

    value: str = ""
    what: Callable[[Point], str] | None = None
    trials: str | None = None
    low: str | None = None
    high: str | None = None
    bound: str | float | None = None

    def _row(self, claim: str, point: Point) -> VerdictRow:
        from attnspec.verdicts.classify import VerdictRow, classify_measurement

        d = classify_measurement(what=self.what(point) if self.what is not None else self.value)
        trials = int(point.value(self.trials)) if self.trials else None
        opt = {
            k: point.value(q) if q is not None else None
            for k, q in (("ci_low", self.low), ("ci_high", self.high), ("bound", self.bound))
        }
        return VerdictRow(
            claim, d.verdict, dict(point.params), estimate=point.value(self.value), trials=trials, seed=point.seed,
            evidence=d.reason, reading=self.name, **opt,
        )  # fmt: skip
