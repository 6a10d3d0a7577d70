"""Claims measured on instances a paper module builds: one verdict row per measured instance.

Some claims are not read off random trials of the runner but measured once on an instance
a module builds (a matrix, a formula evaluated at the run's parameters, a few draws of its
own): an identity to round-off on one matrix, a printed bound on one construction, the share
of rows where a trivial output meets a tolerance, a number a proof calls o(1), a shape that
does not conform as printed. The module measures; the claim declares how each reading
turns the measured numbers into its row:

* an :class:`Instance` holds what was measured: the row's parameters, its named values
  (numbers, and strings a sentence names), the seed it was drawn from, and optionally the one
  reading it is for;
* a reading below decides it with the one classifier (:mod:`attnspec.verdicts.classify`) and
  says which values are the row's fields (``estimate``, ``bound``, ``exact``, ``ci``,
  ``trials``; ``trials`` is None for one measured instance), what they are called on the
  one-screen table (``value_name``, ``bound_name``) and its sentence (``text``: a format
  string over the values and the classifier's ``{reason}``, or one such string per verdict);
* ``vacuous`` and ``hypothesis_unmet`` are hooks on the values: a reason, or None;
* :func:`instance_rows` makes the rows of a claim: for each reading in order, one row per
  instance made for it.

=========================  ============================  =============================================
reading                    the claim                     decided by
=========================  ============================  =============================================
:class:`InstanceBound`     observed <= bound             ``classify_bound`` (``trivial`` hook)
:class:`InstanceResidual`  an identity, residual <= tol  ``classify_identity``
:class:`InstanceNumber`    a number, no verdict          ``classify_measurement`` (``trivial`` hook)
:class:`InstanceShare`     hits of total, no verdict     ``classify_measurement``, 95% Clopper–Pearson
:class:`AsPrinted`         a statement wrong as printed  violated where ``fails``, else measured
=========================  ============================  =============================================

The same readings work in a :class:`attnspec.theorem.declare.Check`: at a grid point they
read the mean of each named quantity.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from attnspec.theorem.readings import LOOSE_FACTOR, Decision, Point, Reading, _classify

if TYPE_CHECKING:  # pragma: no cover
    from attnspec.verdicts.classify import VerdictRow

#: A hook on an instance's values: a reason (the claim is vacuous there, or a hypothesis is
#: not met), or None.
Hook = Callable[[Mapping[str, Any]], "str | None"]


@dataclass(frozen=True)
class Instance:
    """What was measured on one instance.

    Parameters
    ----------
    params : dict
        The row's parameters (n, k, eps, ...).
    values : dict
        The named values the readings read and the sentences name.
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
    name, description : str
        As :class:`attnspec.theorem.readings.Reading`.
    text : str or mapping of str to str
        The row's sentence: a format string over the values and ``{reason}`` (the
        classifier's), or one per verdict (a verdict not named gets ``"{reason}"``).
    estimate, bound, exact : str or float, optional
        The values (or numbers) shown as the row's ``estimate``, ``bound`` and ``exact``.
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

    def decide(self, values: Mapping[str, Any]) -> Decision:
        """The verdict and the classifier's reason for these values.

        Parameters
        ----------
        values : mapping
            The instance's named values.

        Returns
        -------
        Decision
        """
        return self._decide(values)

    def _decide(self, values: Mapping[str, Any]) -> Decision:
        raise NotImplementedError

    def _hook(self, hook: Hook | None, values: Mapping[str, Any]) -> str | None:
        return hook(values) if hook is not None else None

    def _fields(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The row's numeric fields from the values."""
        low, high = (_number(values, c) for c in self.ci) if self.ci else (None, None)
        trials = values[self.trials] if self.trials is not None else None
        return {
            "estimate": _number(values, self.estimate), "bound": _number(values, self.bound),
            "exact": _number(values, self.exact), "ci_low": low, "ci_high": high,
            "trials": None if trials is None else int(trials),
        }  # fmt: skip

    def sentence(self, verdict: str, values: Mapping[str, Any], reason: str) -> str:
        """The row's sentence for ``verdict``, formatted from the values and the reason.

        Parameters
        ----------
        verdict : str
        values : mapping
        reason : str
            The classifier's reason.

        Returns
        -------
        str
        """
        text = self.text if isinstance(self.text, str) else self.text.get(verdict, "{reason}")
        return text.format(**values, reason=reason)

    def row(self, claim: str, instance: Instance) -> VerdictRow:
        """The verdict row of ``claim`` under this reading on ``instance``.

        Parameters
        ----------
        claim : str
            The claim id.
        instance : Instance

        Returns
        -------
        VerdictRow
        """
        from attnspec.verdicts.classify import VerdictRow

        values = instance.values
        d = self.decide(values)
        at_paper = self.at_paper_params if instance.at_paper_params is None else instance.at_paper_params
        return VerdictRow(
            claim=claim, reading=self.name, verdict=d.verdict, params=dict(instance.params), seed=instance.seed,
            evidence=self.sentence(d.verdict, values, d.reason), value_name=self.value_name,
            bound_name=self.bound_name, at_paper_params=at_paper, **self._fields(values),
        )  # fmt: skip

    def _row(self, claim: str, point: Point) -> VerdictRow:
        values = {k: s.mean for k, s in point.stats.items()}
        return self.row(claim, Instance(point.params, values, point.seed))


@dataclass(frozen=True)
class InstanceBound(OnInstance):
    """observed <= bound on the instance (:func:`~attnspec.verdicts.classify.classify_bound`).

    Parameters
    ----------
    observed : str
        The value of the left-hand side (the row's ``estimate`` unless another is named).
    limit : str or float
        The right-hand side.
    loose_factor : float or None
        A bound more than this many times the observed value is ``loose``; None: never.
    rtol : float
        Relative round-off allowed before ``violated``.
    trivial : str, optional
        Why a trivial output meets the bound (``cannot-fail``).
    """

    observed: str = ""
    limit: str | float = 0.0
    loose_factor: float | None = LOOSE_FACTOR
    rtol: float = 1e-9
    trivial: str | None = None

    def _decide(self, values: Mapping[str, Any]) -> Decision:
        return _classify(
            "bound", observed=_number(values, self.observed), bound=_number(values, self.limit), rtol=self.rtol,
            loose_factor=self.loose_factor, trivial=self.trivial, vacuous=self._hook(self.vacuous, values),
            hypothesis_unmet=self._hook(self.hypothesis_unmet, values),
        )  # fmt: skip

    def _fields(self, values: Mapping[str, Any]) -> dict[str, Any]:
        out = super()._fields(values)
        if self.estimate is None:
            out["estimate"] = _number(values, self.observed)
        return out


@dataclass(frozen=True)
class InstanceResidual(OnInstance):
    """An identity on the instance: residual <= tol (:func:`~attnspec.verdicts.classify.classify_identity`).

    Parameters
    ----------
    residual : str
        The value of the residual (the row's ``estimate`` unless another is named).
    tol : float
        The round-off tolerance.
    """

    residual: str = ""
    tol: float = 1e-12

    def _decide(self, values: Mapping[str, Any]) -> Decision:
        return _classify(
            "identity", residual=_number(values, self.residual), tol=self.tol,
            hypothesis_unmet=self._hook(self.hypothesis_unmet, values),
        )  # fmt: skip

    def _fields(self, values: Mapping[str, Any]) -> dict[str, Any]:
        out = super()._fields(values)
        if self.estimate is None:
            out["estimate"] = _number(values, self.residual)
        return out


@dataclass(frozen=True)
class InstanceNumber(OnInstance):
    """A number without a verdict: ``measured`` (or ``vacuous`` / ``hypothesis-unmet`` by the
    hooks, then ``cannot-fail`` where a trivial output meets the claim), the reason being
    ``what`` formatted from the values.

    Parameters
    ----------
    what : str
        What was measured, a format string over the values.
    trivial : callable, optional
        ``trivial(values) -> str or None``: why a trivial output meets the claim here (an
        existence claim the zero output satisfies): ``cannot-fail``.
    """

    what: str = ""
    trivial: Hook | None = None

    def _decide(self, values: Mapping[str, Any]) -> Decision:
        d = _classify(
            "measurement", what=self.what.format(**values), vacuous=self._hook(self.vacuous, values),
            hypothesis_unmet=self._hook(self.hypothesis_unmet, values),
        )  # fmt: skip
        trivial = self._hook(self.trivial, values) if d.verdict == "measured" else None
        return Decision("cannot-fail", trivial) if trivial else d


@dataclass(frozen=True)
class InstanceShare(OnInstance):
    """How many of ``total`` cases meet a condition (``hits``), ``measured``: the row's estimate
    is the share with its 95% Clopper–Pearson interval and ``trials`` the total.

    Parameters
    ----------
    hits, total : str
        The values counting the cases that meet it and all cases.
    what : str
        What the share is, a format string over the values and ``{share}`` (hits / total).
    """

    hits: str = ""
    total: str = ""
    what: str = ""

    def _counts(self, values: Mapping[str, Any]) -> tuple[int, int]:
        return int(values[self.hits]), int(values[self.total])

    def _decide(self, values: Mapping[str, Any]) -> Decision:
        hits, total = self._counts(values)
        return _classify("measurement", what=self.what.format(**values, share=hits / total))

    def _fields(self, values: Mapping[str, Any]) -> dict[str, Any]:
        from attnspec.numerics.stats import clopper_pearson

        hits, total = self._counts(values)
        ci = clopper_pearson(hits, total)
        return super()._fields(values) | {
            "estimate": ci.estimate,
            "ci_low": ci.low,
            "ci_high": ci.high,
            "trials": total,
        }


@dataclass(frozen=True)
class AsPrinted(OnInstance):
    """A statement that is wrong as printed, read off the print (a shape that does not conform,
    a matrix inverted that has no inverse): ``violated`` where ``fails(values)`` (always, by
    default), else ``measured``; the reason is ``what`` formatted from the values.

    Parameters
    ----------
    what : str
        Why, a format string over the values.
    fails : callable, optional
        ``fails(values) -> bool``; None: always.
    """

    what: str = ""
    fails: Callable[[Mapping[str, Any]], bool] | None = None

    def _decide(self, values: Mapping[str, Any]) -> Decision:
        fails = self.fails is None or self.fails(values)
        return Decision("violated" if fails else "measured", self.what.format(**values))


def instance_rows(claim: Any, instances: Sequence[Instance], readings: Sequence[OnInstance] = ()) -> list[VerdictRow]:
    """The verdict rows of a claim measured on ``instances``: for each of its readings in order,
    one row per instance made for it (an instance naming no reading is for every one).

    Parameters
    ----------
    claim : attnspec.theorem.declare.Claim or str
        The declared claim (its id and readings), or a claim id with ``readings``.
    instances : sequence of Instance
        What was measured.
    readings : sequence of OnInstance
        The readings to make (default the claim's).

    Returns
    -------
    list of VerdictRow
    """
    claim_id = claim if isinstance(claim, str) else claim.id
    chosen = tuple(readings) or tuple(claim.readings)
    return [r.row(claim_id, i) for r in chosen for i in instances if i.reading in (None, r.name)]
