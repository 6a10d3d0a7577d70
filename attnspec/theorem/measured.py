"""Claims decided on numbers a paper module measured itself, not on the runner's trials.

The readings of :mod:`attnspec.theorem.readings` read the trials the runner draws at each grid
point; a module that measures on its own (one instance it built, a point a search found, a
table of instances, one number) has its claims decided here, by the same one classifier
(:mod:`attnspec.verdicts.classify`), with the deciding numbers as the row's fields:

* one instance's named values: :class:`Instance`, read by the :class:`OnInstance` kinds
  (:func:`instance_rows`; in a :class:`~attnspec.theorem.declare.Check` they read the means,
  a :class:`Bound` its decided quantities at their largest value, a :class:`Measure` its
  quantity's mean and interval: the one reading of a number without a verdict);
* a point a search found: :func:`read_off`, read by :class:`Bound`,
  :class:`Measure` or any reading, wrapped in :class:`Unmet` or :class:`Noted`;
* a table of instances: :func:`margin_rows`;
* a claim no instance could test, or a variant of it: :func:`unmet_row`, :func:`as_variant`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from attnspec.theorem.cases import Cases, Wrapped
from attnspec.theorem.readings import (
    LOOSE_FACTOR,
    Decision,
    Point,
    Reading,
    _classify,
    _pct,
    _row,
    _share_fields,
    _verdict_row,
)
from attnspec.theorem.tightest import by_kind

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from attnspec.theorem.declare import Claim
    from attnspec.theorem.registry import Paper
    from attnspec.verdicts.classify import VerdictRow

#: A hook on an instance's values: a reason (vacuous there, a hypothesis not met), or None.
Hook = Callable[[Mapping[str, Any]], "str | None"]


def _unmet(why: str) -> Decision:
    """``hypothesis-unmet``, whatever was measured (the one classifier's order of decision)."""
    return _classify("measurement", what="", hypothesis_unmet=why)


# --- No instance, or a variant


def unmet_row(
    claim: str,
    why: str,
    *,
    reading: str = "as-stated",
    params: Mapping[str, Any] | None = None,
    seed: int | None = None,
    trials: int = 0,
    bound: float | None = None,
    after: str = "",
) -> VerdictRow:
    """A claim no instance could test (a formula not conformable at the shape):
    ``hypothesis-unmet``, with no estimate.

    Parameters
    ----------
    claim, why : str
        The claim id; which hypothesis is not met, and where.
    reading, params, seed : optional
        The row's reading, parameters and recorded seed.
    trials : int
        The instances evaluated (0 when none could be).
    bound : float, optional
        The claimed bound or tolerance, shown beside the row.
    after : str
        Context after the classifier's sentence.

    Returns
    -------
    VerdictRow
    """
    return _verdict_row(claim, _unmet(why), reading=reading, params=params, seed=seed, after=after, bound=bound,
                        trials=trials)  # fmt: skip


def as_variant(row: VerdictRow, why: str) -> VerdictRow:
    """``row``, decided against a theorem's bound but computed for an object the theorem does not
    define (another iteration, another schedule): ``measured``, not at the paper's parameters,
    its numbers kept, the theorem's verdict and sentence after ``why``.

    Parameters
    ----------
    row : VerdictRow
    why : str
        Why the object measured is not the theorem's.

    Returns
    -------
    VerdictRow
    """
    evidence = f"a measurement of a variant, not of the claim: {why}; against the bound of the theorem: "
    return dataclasses.replace(
        row, verdict="measured", at_paper_params=False, evidence=f"{evidence}{row.verdict} ({row.evidence})"
    )


# --- A table of instances


def margin_rows(
    claim: str,
    table: pd.DataFrame,
    *,
    observed: str,
    bound: str,
    by: str | None = None,
    reading: str = "as-stated",
    params: Callable[[Hashable, pd.DataFrame], Mapping[str, Any]] | None = None,
    seed: int | None = None,
    rtol: float = 1e-9,
    atol: float = 0.0,
    unmet: Callable[[pd.DataFrame], str | None] | None = None,
    note: Callable[[pd.DataFrame, pd.Series], str] | None = None,
    label: str = "observed",
    at_paper_params: bool = False,
) -> list[VerdictRow]:
    """One row per kind of instance: ``observed <= bound`` decided at the worst violation, else at
    the tightest *measurable* instance (``observed > atol``: one at round-off says nothing of the
    bound's tightness), else at any instance with a finite bound.

    The row's parameters add the margins: ``tightest`` and ``typical``, the smallest and the median
    ``bound / observed`` over the measurable instances (4 digits), and ``label_on`` (``"worst
    violation"`` or ``"tightest"``), so that a reader sees whether a ``holds`` rests on one tight
    instance among loose ones.

    Parameters
    ----------
    claim : str
    table : DataFrame
        One row per instance.
    observed, bound : str
        The columns of the two sides; an infinite bound (one that overflowed) says nothing.
    by : str, optional
        The column of the instance kind: one row per kind, in order of first appearance.
    reading : str
    params : callable, optional
        ``params(kind, group) -> dict``: the rows' parameters (default ``{by: kind}``).
    seed : int, optional
    rtol, atol : float
        Slack of the bound (:func:`attnspec.verdicts.classify.classify_bound`); ``atol`` is also
        the floor below which an instance is round-off and not measurable.
    unmet : callable, optional
        ``unmet(group) -> str or None``: which hypothesis the group's instances do not meet.
    note : callable, optional
        ``note(group, worst) -> str``: the paper's context (``worst``: the instance decided at), after
        the margins.
    label : str
        What ``observed`` is, in the margins' sentence (``bound/error``).
    at_paper_params : bool
        Mark the rows as at the paper's own parameters.

    Returns
    -------
    list of VerdictRow
    """
    rows = []
    for shown, grp in by_kind(table, by, params):
        d, fields, margins, at = _margins(grp, observed, bound, rtol, atol, unmet(grp) if unmet else None, label)
        context = note(grp, grp.iloc[at]) if note is not None and at is not None else ""
        rows.append(
            _verdict_row(
                claim, d, reading=reading, params={**shown, **margins}, seed=seed, after=context,
                at_paper_params=at_paper_params, **fields,
            )
        )  # fmt: skip
    return rows


def _margins(
    grp: pd.DataFrame, observed: str, bound: str, rtol: float, atol: float, why: str | None, label: str
) -> tuple[Decision, dict[str, Any], dict[str, Any], int | None]:
    """One group's decision (the margins' sentence after the classifier's), its fields (estimate,
    bound, trials), its margins and the position of the instance decided at (None: no bound is
    finite)."""
    import numpy as np

    b, e = grp[bound].to_numpy(dtype=float), grp[observed].to_numpy(dtype=float)  # (instances,)
    finite = np.isfinite(b)
    viol = finite & (e > b * (1 + rtol) + atol)
    meas = finite & (e > atol)
    pool = viol if viol.any() else (meas if meas.any() else finite)
    if not pool.any():  # every bound overflowed: the claim says nothing at these instances
        d = _classify("bound", observed=float(e.max()), bound=math.inf, hypothesis_unmet=why)
        sentence = f"{d.reason}; the bound is infinite at all {len(grp)} instances"
        return Decision(d.verdict, sentence), {"estimate": float(e.max()), "trials": len(grp)}, {}, None
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(b > 0, e / b, np.inf)  # observed / bound: 1 = tight
        margin = b[meas] / e[meas]  # bound / observed over the measurable instances
    at = int(np.argmax(np.where(pool, ratio, -np.inf)))
    d = _classify("bound", observed=float(e[at]), bound=float(b[at]), rtol=rtol, atol=atol, hypothesis_unmet=why)
    tight, typical = (float(margin.min()), float(np.median(margin))) if margin.size else (math.inf, math.inf)
    if viol.any():
        sentence = f"{int(viol.sum())}/{len(grp)} instances exceed the bound; worst {label}/bound {ratio[at]:.3g}"
    else:
        loose = "loose there" if typical > LOOSE_FACTOR else "within the factor there"
        sentence = (
            f"0/{len(grp)} instances exceed the bound; the label rests on the tightest case: bound/{label} "
            f"{tight:.3g}; typical case: median bound/{label} {typical:.3g} ({loose}; over the {int(meas.sum())} "
            f"instances with a finite bound and {label} > {atol:g})"
        )
    margins = {"tightest": round(tight, 4), "typical": round(typical, 4),
               "label_on": "worst violation" if viol.any() else "tightest"}  # fmt: skip
    fields = {"estimate": float(e[at]), "bound": float(b[at]), "trials": len(grp)}
    return Decision(d.verdict, f"{d.reason}; {sentence}"), fields, margins, at


# --- One instance's named values


@dataclass(frozen=True)
class Instance:
    """What was measured on one instance.

    Parameters
    ----------
    params, values : dict
        The row's parameters (n, k, eps, ...); the named values the readings read.
    seed : int, optional
        The seed the instance was drawn from (None: not drawn).
    reading : str, optional
        The one reading this instance is for; None: every reading of the claim.
    at_paper_params : bool, optional
        Whether its rows are at the paper's own parameters; None: as the reading declares.
    """

    params: Mapping[str, Any]
    values: Mapping[str, Any] = field(default_factory=dict)
    seed: int | None = None
    reading: str | None = None
    at_paper_params: bool | None = None


def _number(values: Mapping[str, Any], ref: str | float | None) -> float | None:
    """A declared number, or the named value as a float; None for None."""
    if ref is None:
        return None
    if isinstance(ref, str):
        if ref not in values:
            raise KeyError(f"no value {ref!r} measured; values: {sorted(values)}")
        v = values[ref]
        return None if v is None else float(v)
    return float(ref)


@dataclass(frozen=True)
class OnInstance(Reading):
    """A reading of one measured instance; the kinds below say how it is decided.

    Parameters
    ----------
    text : str or mapping of str to str
        The row's sentence: a format string over the values and ``{reason}`` (the
        classifier's), or one per verdict (a verdict not named gets ``"{reason}"``).
    estimate, bound, exact : str or float, optional
        The values (or numbers) shown as the row's ``estimate``, ``bound`` and ``exact``
        (``estimate`` defaults to the value a bound or an identity decides).
    ci : tuple of (str, str), optional
        The values of the interval's ends (``ci_low``, ``ci_high``).
    trials : str, optional
        The value counting the draws behind the row; None: one measured instance.
    value_name, bound_name : str, optional
        What ``estimate`` and ``bound`` are, for the one-screen table.
    vacuous, hypothesis_unmet : callable, optional
        ``hook(values) -> str or None``: why the claim says nothing here, or which
        hypothesis the instance does not meet.
    at_paper_params : bool
        The rows are at the paper's own parameters.
    """

    text: str | Mapping[str, str] = "{reason}"
    estimate: str | float | None = None
    bound: str | float | None = None
    exact: str | float | None = None
    ci: tuple[str, str] | None = None
    trials: str | None = None
    value_name: str | None = None
    bound_name: str | None = None
    vacuous: Hook | None = None
    hypothesis_unmet: Hook | None = None
    at_paper_params: bool = False

    def decision(self, values: Mapping[str, Any]) -> Decision:
        """The verdict and the classifier's reason for the instance's named values.

        Parameters
        ----------
        values : mapping

        Returns
        -------
        Decision
        """
        return self._decide(values)

    def _decide(self, values: Mapping[str, Any]) -> Decision:
        raise NotImplementedError

    def _decided(self) -> str | None:
        """The value the reading decides, the row's estimate unless another is named."""
        return None

    def _hook(self, hook: Hook | None, values: Mapping[str, Any]) -> str | None:
        return hook(values) if hook is not None else None

    def _fields(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The row's numeric fields from the values."""
        low, high = (_number(values, c) for c in self.ci) if self.ci else (None, None)
        trials = values[self.trials] if self.trials is not None else None
        estimate = self.estimate if self.estimate is not None else self._decided()
        return {
            "estimate": _number(values, estimate), "bound": _number(values, self.bound),
            "exact": _number(values, self.exact), "ci_low": low, "ci_high": high,
            "trials": None if trials is None else int(trials),
        }  # fmt: skip

    def row(self, claim: str, instance: Instance) -> VerdictRow:
        """The verdict row of claim id ``claim`` under this reading on ``instance``.

        Parameters
        ----------
        claim : str
        instance : Instance

        Returns
        -------
        VerdictRow
        """
        return self._instance_row(claim, instance)

    def _instance_row(self, claim: str, instance: Instance) -> VerdictRow:
        values = instance.values
        d = self.decision(values)
        text = self.text if isinstance(self.text, str) else self.text.get(d.verdict, "{reason}")
        at_paper = self.at_paper_params if instance.at_paper_params is None else instance.at_paper_params
        return _verdict_row(
            claim, Decision(d.verdict, text.format(**values, reason=d.reason)), reading=self.name,
            params=instance.params, seed=instance.seed, value_name=self.value_name, bound_name=self.bound_name,
            at_paper_params=at_paper, **self._fields(values),
        )  # fmt: skip

    def _row(self, claim: str, point: Point) -> VerdictRow:
        values = {k: s.mean for k, s in point.stats.items()}
        return self.row(claim, Instance(point.params, values, point.seed))


@dataclass(frozen=True)
class Bound(OnInstance):
    """observed <= bound (:func:`~attnspec.verdicts.classify.classify_bound`), on one
    :class:`Instance`'s values or at each grid point; there the values are the point's
    parameters, its quantities' means, and the decided quantities at their largest value (the
    worst trial or case).

    Parameters
    ----------
    observed : str
        The left-hand side (a number, or :class:`~attnspec.theorem.cases.Cases`: one per
        trial); the row's estimate unless ``estimate`` names another value.
    limit : str or float, optional
        The right-hand side; default ``bound``, the bound the row records.
    decide : tuple of (str, str or float), optional
        ``(quantity, limit)``: decide on the largest value of another quantity (a ratio to a
        bound that changes from trial to trial) against ``limit``.
    loose_factor : float or None
        A bound more than this many times the observed value is ``loose``; None: never.
    rtol : float
        Relative round-off allowed before ``violated``.
    trivial : str or callable, optional
        Why a trivial output meets the bound (``cannot-fail``): a sentence, or
        ``trivial(values) -> str or None``.
    unmet : callable, optional
        ``unmet(values) -> str or None``: the hypothesis not met; the row then carries the bound
        and the trials alone (``hypothesis_unmet`` keeps the numbers).
    identity : bool
        Decide as an identity to round-off (the decided value is a residual, the limit its
        tolerance): ``holds`` or ``violated``, never ``loose``.
    shown : tuple of str
        Values added to the row's parameters.
    """

    observed: str = ""
    limit: str | float | None = None
    decide: tuple[str, str | float] | None = None
    loose_factor: float | None = LOOSE_FACTOR
    rtol: float = 1e-9
    trivial: str | Hook | None = None
    unmet: Hook | None = None
    identity: bool = False
    shown: tuple[str, ...] = ()

    def _decided(self) -> str | None:
        return self.observed

    def _decide(self, values: Mapping[str, Any]) -> Decision:
        quantity, limit = self.decide or (self.observed, self.bound if self.limit is None else self.limit)
        unmet = self._hook(self.hypothesis_unmet, values)
        if self.identity:
            residual, tol = _number(values, quantity), _number(values, limit)
            return _classify("identity", residual=residual, tol=tol, hypothesis_unmet=unmet)
        trivial = self.trivial(values) if callable(self.trivial) else self.trivial
        return _classify(
            "bound", observed=_number(values, quantity), bound=_number(values, limit), rtol=self.rtol,
            loose_factor=self.loose_factor, trivial=trivial, vacuous=self._hook(self.vacuous, values),
            hypothesis_unmet=unmet,
        )  # fmt: skip

    def _instance_row(self, claim: str, instance: Instance) -> VerdictRow:
        return self._bound_row(claim, instance, {q: instance.values[q] for q in self.shown}, None)

    def _row(self, claim: str, point: Point) -> VerdictRow:
        decided = (self.observed, *(self.decide[:1] if self.decide else ()))
        values = {**point.params, **{k: s.mean for k, s in point.stats.items()}}
        values |= {q: point.stats[q].high for q in decided}
        shown = {q: point.value(q) for q in self.shown}
        return self._bound_row(
            claim, Instance(point.params, values, point.seed), shown, point.stats[self.observed].count
        )

    def _bound_row(self, claim: str, instance: Instance, shown: dict[str, Any], count: int | None) -> VerdictRow:
        """The row on ``instance``, its parameters with ``shown``; ``count``: the trials when none is named."""
        values = instance.values
        trials = int(values[self.trials]) if self.trials else count
        why = self._hook(self.unmet, values)
        if why:  # nothing was measured under the hypothesis: the row carries the bound alone
            return unmet_row(claim, why, reading=self.name, params=instance.params, seed=instance.seed, trials=trials,
                             bound=_number(values, self.bound))  # fmt: skip
        row = super()._instance_row(claim, dataclasses.replace(instance, params={**instance.params, **shown}))
        return dataclasses.replace(row, trials=trials)


@dataclass(frozen=True)
class InstanceResidual(OnInstance):
    """An identity on the instance: residual <= tol (:func:`~attnspec.verdicts.classify.classify_identity`).

    Parameters
    ----------
    residual : str
        The value of the residual.
    tol : float
        The round-off tolerance.
    """

    residual: str = ""
    tol: float = 1e-12

    def _decided(self) -> str | None:
        return self.residual

    def _decide(self, values: Mapping[str, Any]) -> Decision:
        return _classify(
            "identity", residual=_number(values, self.residual), tol=self.tol,
            hypothesis_unmet=self._hook(self.hypothesis_unmet, values),
        )  # fmt: skip


@dataclass(frozen=True)
class Measure(OnInstance):
    """A number without a verdict: ``measured`` (or ``vacuous`` / ``hypothesis-unmet`` by the
    hooks, then ``cannot-fail`` where a trivial output meets the claim), at each grid point or
    on one :class:`Instance`.

    At a grid point the estimate is the mean of ``value`` over the trials, with its Student-t
    interval; on an instance it is the named value, with the interval ``ci`` names.

    Parameters
    ----------
    value : str
        The quantity measured, the row's estimate.
    label : str
        What it is, in a few words: the sentence at a grid point is "label: mean, CI [low,
        high] over n trials" (default: ``value``).
    sentence : str or callable
        The whole sentence instead: a format string over the values (an instance's, or a
        point's means), or ``sentence(point) -> str`` at a grid point. On an instance it is
        the ``{reason}`` that ``text`` wraps.
    level : float or None
        The confidence level of the interval at a grid point; None: no interval.
    trivial : callable, optional
        ``trivial(values) -> str or None``: why a trivial output meets the claim here (an
        existence claim the zero output satisfies): ``cannot-fail``.
    """

    value: str = ""
    label: str = ""
    sentence: str | Callable[[Point], str] = ""
    level: float | None = 0.95
    trivial: Hook | None = None

    def _decided(self) -> str | None:
        return self.value or None

    def _decide(self, values: Mapping[str, Any]) -> Decision:
        what = self.sentence.format(**values) if isinstance(self.sentence, str) else ""
        d = _classify(
            "measurement", what=what, vacuous=self._hook(self.vacuous, values),
            hypothesis_unmet=self._hook(self.hypothesis_unmet, values),
        )  # fmt: skip
        trivial = self._hook(self.trivial, values) if d.verdict == "measured" else None
        return Decision("cannot-fail", trivial) if trivial else d

    def _row(self, claim: str, point: Point) -> VerdictRow:
        s = point.stats[self.value]
        low, high = s.interval(self.level) if self.level is not None else (None, None)
        if self.ci:  # quantities giving the interval's ends (bisection brackets, a fit's t interval)
            low, high = (point.value(q) for q in self.ci)
        if callable(self.sentence):
            what = self.sentence(point)
        elif self.sentence:
            what = self.sentence.format(**{k: m.mean for k, m in point.stats.items()})
        else:
            spread = f", {_pct(self.level)} CI [{low:.4g}, {high:.4g}] over {s.count} trials" if s.count > 1 else ""
            what = f"{self.label or self.value}: {s.mean:.4g}{spread if self.level is not None else ''}"
        trials = int(point.value(self.trials)) if self.trials else s.count
        bound = point.value(self.bound) if self.bound is not None else None
        return _row(claim, self.name, point, _classify("measurement", what=what), estimate=s.mean, ci_low=low,
                    ci_high=high, trials=trials, bound=bound)  # fmt: skip


@dataclass(frozen=True)
class InstanceShare(OnInstance):
    """How many of ``total`` cases meet a condition (``hits``), ``measured``: the row's estimate
    is the share with its 95% Clopper–Pearson interval and ``trials`` the total.

    Parameters
    ----------
    hits, total : str
        The values counting the cases that meet it and all cases.
    sentence : str
        What the share is, a format string over the values and ``{share}`` (hits / total).
    """

    hits: str = ""
    total: str = ""
    sentence: str = ""

    def _counts(self, values: Mapping[str, Any]) -> tuple[int, int]:
        return int(values[self.hits]), int(values[self.total])

    def _decide(self, values: Mapping[str, Any]) -> Decision:
        hits, total = self._counts(values)
        return _classify("measurement", what=self.sentence.format(**values, share=hits / total))

    def _fields(self, values: Mapping[str, Any]) -> dict[str, Any]:
        return super()._fields(values) | _share_fields(*self._counts(values))


@dataclass(frozen=True)
class AsPrinted(OnInstance):
    """A statement wrong as printed (a shape that does not conform, a matrix inverted that has
    no inverse): ``violated`` where ``fails(values)`` (always, by default), else ``measured``;
    the reason is ``sentence`` formatted from the values.

    Parameters
    ----------
    sentence : str
        Why, a format string over the values.
    fails : callable, optional
        ``fails(values) -> bool``; None: always.
    """

    sentence: str = ""
    fails: Callable[[Mapping[str, Any]], bool] | None = None

    def _decide(self, values: Mapping[str, Any]) -> Decision:
        fails = self.fails is None or self.fails(values)
        return Decision("violated" if fails else "measured", self.sentence.format(**values))


def instance_rows(claim: Any, instances: Sequence[Instance], readings: Sequence[OnInstance] = ()) -> list[VerdictRow]:
    """The verdict rows of a claim measured on ``instances``: for each of its readings in order,
    one row per instance made for it (an instance naming no reading is for every one).

    Parameters
    ----------
    claim : attnspec.theorem.declare.Claim or str
        The declared claim (its id and readings), or a claim id with ``readings``.
    instances : sequence of Instance
    readings : sequence of OnInstance
        The readings to make (default the claim's).

    Returns
    -------
    list of VerdictRow
    """
    claim_id = claim if isinstance(claim, str) else claim.id
    chosen = tuple(readings) or tuple(claim.readings)
    return [r.row(claim_id, i) for r in chosen for i in instances if i.reading in (None, r.name)]


# --- A point a search found


def indicators(failures: int, trials: int) -> Cases:
    """A count measured elsewhere as its trials' failure indicators (``failures`` ones then zeros,
    ``trials`` in all; the order is not read), which a :class:`~attnspec.theorem.readings.Probability` reads.

    Parameters
    ----------
    failures, trials : int
        Failures counted, in 0..trials; trials drawn, >= 1.

    Returns
    -------
    Cases
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
    context: Mapping[str, Any] | None = None,
) -> list[VerdictRow]:
    """The verdict rows of ``claim`` at one measured point (sa-check's width d* found by a search,
    and the draws there), by :func:`attnspec.theorem.runner.run_check`.

    Parameters
    ----------
    claim : Claim
    params : mapping
        The point's parameters: its rows' parameters.
    numbers : mapping
        What the readings read: numbers, and :class:`~attnspec.theorem.cases.Cases`.
    paper : Paper
    seed : int
        The seed the numbers were drawn from (the rows record it).
    readings : sequence of str, optional
        The names of the readings made at this point, in the order of their rows (default: all
        of them, in the claim's order).
    context : mapping, optional
        Exact values the readings' hooks read as ``point.context`` (a trial's 63-bit seed, an
        entry's index), kept out of ``numbers``, which are tabulated as floats.

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
        context=lambda point: dict(context or {}),
    )
    return run_check(check, {"seed": seed, "trials": 1, "jobs": 1}).verdicts


@dataclass(frozen=True)
class Unmet(Wrapped):
    """``reading``, except at the points that do not meet the claim's hypothesis: there the row
    is ``hypothesis-unmet`` (its numbers as the reading found them) and says which.

    Parameters
    ----------
    reading : Reading
    unmet : callable
        ``unmet(point) -> str or None``: the hypothesis the point does not meet.
    """

    unmet: Callable[[Point], str | None] | None = None

    def _reshaped(self, point: Point, row: VerdictRow) -> VerdictRow:
        why = self.unmet(point) if self.unmet is not None else None
        if not why:
            return row
        d = _unmet(why)
        return dataclasses.replace(row, verdict=d.verdict, evidence=d.reason)


@dataclass(frozen=True)
class Noted(Wrapped):
    """``reading``, its sentence after the point's context, ``"<note>: <sentence>"``, or before
    it, ``"<sentence>; <note>"``.

    Parameters
    ----------
    reading : Reading
    note : callable
        ``note(point) -> str``: what was measured there.
    after : bool
        Put the note after the reading's sentence.
    """

    note: Callable[[Point], str] | None = None
    after: bool = False

    def _reshaped(self, point: Point, row: VerdictRow) -> VerdictRow:
        note = self.note(point) if self.note is not None else ""
        shown = f"{row.evidence}; {note}" if self.after else f"{note}: {row.evidence}"
        return dataclasses.replace(row, evidence=shown if note else row.evidence)
