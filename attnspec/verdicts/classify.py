"""Verdicts: what a measurement shows about a claim, decided by one classifier.

The vocabulary (every row carries the numbers it was decided from):

* ``holds``       — the measurement is consistent with the claim, and the claim is within
  :data:`LOOSE_FACTOR` of what was measured;
* ``loose``       — consistent with the claim, but the claimed bound (or probability)
  exceeds the exact or measured value by more than :data:`LOOSE_FACTOR`;
* ``violated``    — the measurement contradicts the claim at an instance where its
  hypotheses hold (evidence: the instance, its seed, the observed value or rate and its CI);
* ``vacuous``     — the claim says nothing at these parameters (a probability bound >= 1,
  a required dimension >= the ambient one);
* ``hypothesis-unmet`` — the instance does not satisfy the claim's hypothesis, so whatever
  was measured is neither a confirmation nor a counterexample;
* ``cannot-fail`` — the check could not have failed here: a trivial output (e.g. zero)
  meets the tolerance, or the claimed failure probability is so close to 1 that even
  every trial failing would not contradict it;
* ``measured``    — a measurement reported without a verdict (a fitted constant, a ratio
  the paper calls o(1), a printed formula set beside the intended one, or a Monte Carlo
  probability consistent with the claim whose looseness the trials cannot resolve).

The order of decision is fixed and the same for every claim: hypothesis-unmet, vacuous,
cannot-fail, violated, then loose / holds. A stated failure probability below 1 that the counts
contradict is ``violated`` even where the rest of the statement is vacuous (a rank claim at
k >= n): a row never hides a measured failure behind ``vacuous``. A check that could not have failed is never
reported as violated or as holding. Every classifier takes the preconditions as reasons (None:
not the case): ``hypothesis_unmet``, which hypothesis the instance does not meet; ``vacuous``,
why the claim says nothing here; ``trivial``, why a trivial output meets the tolerance.

One looseness rule for every paper: ``claimed / reference > LOOSE_FACTOR`` is loose, where
the reference is the exact value (or a computable bound on it), else the worst observed
value for a deterministic bound. For a Monte Carlo probability without an exact law the
confidence interval brackets the reference: loose when even its upper end is more than
LOOSE_FACTOR below the claim, holds when the estimate is at or below the claim and the lower
end is within the factor; an interval that straddles the claim with the estimate above it is
``measured`` (unresolved), and otherwise
(always with zero failures) the looseness is unresolved and the row is ``measured``.
A fitted constant is never tested on the draws it was fitted on.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Literal, NamedTuple

import pandas as pd

from attnspec.numerics.stats import clopper_pearson

VerdictKind = Literal["holds", "loose", "violated", "vacuous", "hypothesis-unmet", "cannot-fail", "measured"]
# the vocabulary lives in a module with no heavy import, so that every --help can quote it
from attnspec.verdicts.vocabulary import VERDICT_MEANINGS, VERDICTS  # noqa: E402, F401 - VERDICT_MEANINGS is read from here too

#: A claimed bound larger than the exact (or measured) value by this factor is reported as loose.
LOOSE_FACTOR = 10.0
DEFAULT_LOOSE_FACTOR = LOOSE_FACTOR  # the name used before the classifier was unified


@dataclass
class VerdictRow:
    """One claim, under one reading, at one parameter set, with its evidence.

    ``claim`` is a registered claim id (:mod:`attnspec.verdicts.registry`), ``reading`` one of its
    readings; ``params`` holds the instance's parameters (n, k, eps, ...), flattened into
    columns when rows become a table or JSON. ``at_paper_params`` marks the rows at the
    claim's own setting (below).
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
    reading: str = "as-stated"
    #: True on the rows at the claim's own setting: a theorem's own k (at the run's n and
    #: eps), or settings the paper fixes (its bases, its sizes). Summaries call them "at the
    #: paper's parameters" only where the registry says the paper fixes them
    #: (:attr:`attnspec.verdicts.registry.Claim.paper_params`), else "at attnspec's default".
    at_paper_params: bool = False
    #: What ``estimate`` / ``exact`` measure and what ``bound`` is, in a few words, where the
    #: one-screen table's defaults ("observed", "bound"; "fail" and "claimed P" for Monte Carlo
    #: counts) would not say it (e.g. a bound that is ε).
    value_name: str | None = None
    bound_name: str | None = None

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")

    def flat(self) -> dict[str, Any]:
        """The row as one flat record: ``claim``, ``reading``, the parameters, then the other fields.

        Returns
        -------
        dict
            Keys in that order (a parameter named like a field is overwritten by the field).
        """
        # fields read directly: dataclasses.asdict deep-copies every value, which made the
        # JSON and the table of a jl-check run (~1,800 rows) cost seconds
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        params = dict(d.pop("params"))
        out: dict[str, Any] = {"claim": d.pop("claim"), "reading": d.pop("reading")}
        out.update({param_column(k): v for k, v in params.items()})  # a parameter never shadows a field
        out.update(d)
        return out


class Decision(NamedTuple):
    """A verdict and the one-line reason it was reached."""

    verdict: VerdictKind
    reason: str


def _precondition(vacuous: str | None, hypothesis_unmet: str | None) -> Decision | None:
    if hypothesis_unmet:
        return Decision("hypothesis-unmet", f"hypothesis not met: {hypothesis_unmet}")
    if vacuous:
        return Decision("vacuous", vacuous)
    return None


def classify_probability(
    *,
    claimed: float,
    failures: int,
    trials: int,
    exact: float | None = None,
    level: float = 0.95,
    loose_factor: float = LOOSE_FACTOR,
    trivial: str | None = None,
    vacuous: str | None = None,
    hypothesis_unmet: str | None = None,
) -> Decision:
    """Decide a claim "P(failure) <= claimed" from Monte Carlo counts (and an exact law if known).

    In order: ``hypothesis-unmet`` (the reason given), ``vacuous`` (a reason given, or
    ``claimed >= 1``; but with a reason and a claim below 1 that the exact law or the lower
    CI end exceeds, and no trivial output, the stated probability fails: ``violated``), ``cannot-fail`` (a trivial output meets the tolerance — ``trivial``
    gives why — or, with no exact law, even ``trials`` failures out of ``trials`` would
    leave the lower CI end <= ``claimed``), ``violated`` (the exact probability, or the
    lower end of the Clopper–Pearson interval, exceeds ``claimed``). Then, with an exact
    law: ``loose`` if ``claimed / exact > loose_factor``, else ``holds``. Without one:
    ``loose`` if ``claimed / ci.high > loose_factor`` (loose even at the upper CI end),
    ``measured`` if the estimate is above the claim (the interval straddles it: neither
    contradicted nor shown), ``holds`` if ``claimed / ci.low <= loose_factor`` (within the
    factor even at the lower end), else ``measured``: consistent, looseness unresolved (always so with 0 failures
    unless the claim is loose against the upper CI end). Pass ``exact`` — an exact law, or
    a computable bound on the true probability that makes it no larger — wherever one exists.

    Parameters
    ----------
    claimed : float
        The claimed upper bound on the failure probability.
    failures, trials : int
        Monte Carlo counts, ``0 <= failures <= trials``, ``trials >= 1``.
    exact : float, optional
        The exact failure probability, where a law gives it.
    level : float
        Confidence level of the Clopper–Pearson interval.
    loose_factor : float
        How many times larger than the failure probability a claim may be before it is
        ``loose`` (default :data:`LOOSE_FACTOR`, 10).
    trivial, vacuous, hypothesis_unmet : str, optional
        The preconditions' reasons (module docstring).

    Returns
    -------
    Decision
        The verdict and its one-line reason.

    Raises
    ------
    ValueError
        ``trials < 1`` or ``failures`` outside 0..trials.
    """
    if trials < 1 or not 0 <= failures <= trials:
        raise ValueError(f"need trials >= 1 and 0 <= failures <= trials, got failures={failures}, trials={trials}")
    if hypothesis_unmet:
        return Decision("hypothesis-unmet", f"hypothesis not met: {hypothesis_unmet}")
    if not math.isfinite(claimed) or claimed >= 1.0:
        return Decision("vacuous", vacuous or f"claimed failure probability {claimed:.3g} >= 1 says nothing")
    ci = clopper_pearson(failures, trials, level)
    if vacuous:
        # the statement says nothing here (e.g. a rank claim at k >= n), but a stated probability
        # below 1 that the counts contradict is a failure of what the claim states, never "vacuous"
        if trivial or not (ci.low > claimed or (exact is not None and exact > claimed * (1 + 1e-12))):
            return Decision("vacuous", vacuous)
        seen = f"exact {exact:.4g}" if exact is not None and exact > claimed else f"observed {failures}/{trials}"
        return Decision(
            "violated",
            f"{vacuous}, so its rank statement says nothing here, but its stated failure probability "
            f"is exceeded: {seen}, {level:.0%} CI [{ci.low:.4g}, {ci.high:.4g}] above claimed {claimed:.4g}",
        )
    # "cannot-fail" is decided before "violated": a check that could not have failed says
    # nothing either way, whatever the trials of some construction did.
    if trivial:
        return Decision(
            "cannot-fail", f"a trivial output meets the tolerance ({trivial}); observed {failures}/{trials}"
        )
    if exact is None:
        best_case = clopper_pearson(trials, trials, level).low
        if best_case <= claimed:
            return Decision(
                "cannot-fail",
                f"claimed {claimed:.4g} is so close to 1 that even {trials}/{trials} "
                f"failures (lower CI end {best_case:.4g}) could not contradict it; "
                f"observed {failures}/{trials}",
            )
    if exact is not None and exact > claimed * (1 + 1e-12):
        return Decision("violated", f"exact failure probability {exact:.4g} > claimed {claimed:.4g}")
    if ci.low > claimed:
        return Decision(
            "violated",
            f"observed {failures}/{trials} = {ci.estimate:.4g}, "
            f"{level:.0%} CI [{ci.low:.4g}, {ci.high:.4g}] above claimed {claimed:.4g}",
        )
    if exact is not None:
        ratio = claimed / exact if exact > 0 else math.inf
        if ratio > loose_factor:
            return Decision("loose", f"loose by {_fmt_ratio(ratio)} (claimed {claimed:.4g} vs exact {exact:.4g})")
        return Decision(
            "holds",
            f"exact failure probability {exact:.4g} <= claimed {claimed:.4g}, "
            f"within {_fmt_ratio(ratio)}; observed {failures}/{trials}",
        )
    return _from_interval(claimed, failures, trials, ci, level, loose_factor)


def _from_interval(claimed: float, failures: int, trials: int, ci: Any, level: float, loose_factor: float) -> Decision:
    """The verdict of a consistent Monte Carlo probability with no exact law: the interval alone."""
    # No exact law: the CI brackets the true probability. Loose only if even its upper end
    # is more than loose_factor below the claim; "holds" (within loose_factor) only if its
    # lower end shows it. In between -- always so with 0 failures -- the trials cannot tell.
    ratio_high = claimed / ci.high if ci.high > 0 else math.inf
    if ratio_high > loose_factor:
        return Decision(
            "loose",
            f"loose by at least {_fmt_ratio(ratio_high)} (claimed {claimed:.4g} vs "
            f"{level:.0%} upper CI {ci.high:.4g}; observed {failures}/{trials})",
        )
    ratio_low = claimed / ci.low if ci.low > 0 else math.inf
    if ci.estimate > claimed:
        # the interval straddles the claim with the estimate above it: not contradicted, not shown
        return Decision(
            "measured",
            f"unresolved: observed {failures}/{trials} = {ci.estimate:.4g} above claimed {claimed:.4g}, "
            f"but {level:.0%} CI [{ci.low:.4g}, {ci.high:.4g}] straddles it",
        )
    if ratio_low <= loose_factor:
        return Decision(
            "holds",
            f"observed {failures}/{trials}, {level:.0%} CI [{ci.low:.4g}, {ci.high:.4g}]: "
            f"{_ci_against(ci.low, ci.high, claimed)}, within {_fmt_ratio(ratio_low)}",
        )
    if failures == 0:
        # no failure seen: what the trials show is a rate they would have caught, not an interval
        # "<=" a claim far below its upper end
        why = (
            f"the claimed {claimed:.4g} is below what they resolve ({level:.0%} CI [0, {ci.high:.4g}])"
            if ci.high > claimed
            else f"{level:.0%} CI [0, {ci.high:.4g}] cannot tell whether the claimed "
            f"{claimed:.4g} is within {loose_factor:g}x"
        )
        return Decision(
            "measured",
            f"consistent: no failure in {trials} trials, {search_power(trials)}; {why}, so its looseness is unresolved",
        )
    return Decision(
        "measured",
        f"consistent: observed {failures}/{trials}, {level:.0%} CI "
        f"[{ci.low:.4g}, {ci.high:.4g}]: {_ci_against(ci.low, ci.high, claimed)}; looseness "
        f"unresolved (no exact law, and the CI cannot tell whether the claim is within "
        f"{loose_factor:g}x)",
    )


def _ci_against(low: float, high: float, claimed: float) -> str:
    """How an interval that does not exceed the claim stands against it, in words true to
    both ends: the whole interval below the claim, or only its lower end (it straddles it)."""
    if high <= claimed:
        return f"all <= claimed {claimed:.4g}"
    return f"lower end <= claimed {claimed:.4g} < upper end (the interval straddles the claim)"


#: The power a failure-free run is quoted at: a failure rate that would have shown at least
#: one failure with this probability.
SEARCH_POWER = 0.99


def detectable_rate(trials: int, power: float = SEARCH_POWER) -> float:
    """The smallest failure rate p that ``trials`` independent trials would have met at least
    once with probability >= ``power``: 1 − (1 − p)^trials = power.

    Parameters
    ----------
    trials : int
        Independent trials, >= 1.
    power : float
        The probability of at least one failure, in (0, 1); default :data:`SEARCH_POWER`.

    Returns
    -------
    float
        p, in (0, 1).
    """
    return -math.expm1(math.log1p(-power) / trials)


def search_power(trials: int, power: float = SEARCH_POWER) -> str:
    """``"power 0.99 against failure rates >= 0.23 %"``: what ``trials`` failure-free trials rule out.

    Parameters
    ----------
    trials : int
        Independent trials, >= 1.
    power : float
        The power quoted, in (0, 1); default :data:`SEARCH_POWER`.

    Returns
    -------
    str
        The phrase, with the rate of :func:`detectable_rate` as a percentage.
    """
    return f"power {power:g} against failure rates >= {detectable_rate(trials, power):.2%}".replace("%", " %")


def classify_bound(
    *,
    observed: float,
    bound: float,
    rtol: float = 1e-9,
    atol: float = 0.0,
    loose_factor: float | None = LOOSE_FACTOR,
    trivial: str | None = None,
    vacuous: str | None = None,
    hypothesis_unmet: str | None = None,
) -> Decision:
    """Decide a deterministic inequality "observed <= bound" from the worst observed value.

    ``observed`` is the largest left-hand side over the instances tried. In order:
    ``hypothesis-unmet``, ``vacuous`` (a reason given, or an infinite/NaN bound),
    ``cannot-fail`` (``trivial`` given: a check that could not have failed is never
    reported as violated), ``violated`` (``observed > bound (1 + rtol) + atol``), ``loose`` (``bound / observed > loose_factor``; ``loose_factor=None`` never
    calls a bound loose, for bounds whose tightness is not the point), else ``holds``.

    Parameters
    ----------
    observed : float
        The worst (largest) left-hand side over the instances; NaN or infinite is ``violated``.
    bound : float
        The right-hand side; infinite or NaN is ``vacuous``.
    rtol, atol : float
        Relative and absolute slack for round-off before ``violated``.
    loose_factor : float or None
        How many times larger than ``observed`` the bound may be before it is ``loose``
        (default :data:`LOOSE_FACTOR`, 10); None: never ``loose``.
    trivial, vacuous, hypothesis_unmet : str, optional
        The preconditions' reasons (module docstring).

    Returns
    -------
    Decision
        The verdict and its one-line reason.
    """
    pre = _precondition(vacuous, hypothesis_unmet)
    if pre:
        return pre
    if not math.isfinite(bound):
        return Decision("vacuous", f"the bound is {bound}")
    if trivial:
        return Decision("cannot-fail", f"a trivial output meets the bound ({trivial})")
    if not math.isfinite(observed):
        return Decision("violated", f"observed value is {observed} (bound {bound:.4g})")
    if observed > bound * (1 + rtol) + atol:
        return Decision(
            "violated",
            f"observed {observed:.4g} > bound {bound:.4g} (by a factor {observed / bound:.3g})"
            if bound > 0
            else f"observed {observed:.4g} > bound {bound:.4g}",
        )
    if loose_factor is not None:
        ratio = bound / observed if observed > 0 else math.inf
        if ratio > loose_factor:
            return Decision(
                "loose", f"loose by {_fmt_ratio(ratio)} (bound {bound:.4g} vs worst observed {observed:.4g})"
            )
    return Decision("holds", f"worst observed {observed:.4g} <= bound {bound:.4g}")


def classify_identity(
    *,
    residual: float,
    tol: float,
    hypothesis_unmet: str | None = None,
) -> Decision:
    """Decide an exact identity from its worst residual: ``holds`` if ``residual <= tol``.

    Identities have no looseness: they hold to round-off or they do not.

    Parameters
    ----------
    residual : float
        The worst residual over the instances; NaN or infinite is ``violated``.
    tol : float
        The round-off tolerance.
    hypothesis_unmet : str, optional
        The precondition's reason (module docstring).

    Returns
    -------
    Decision
        ``holds`` or ``violated`` (or ``hypothesis-unmet``), with its reason.
    """
    pre = _precondition(None, hypothesis_unmet)
    if pre:
        return pre
    if math.isfinite(residual) and residual <= tol:
        return Decision("holds", f"worst residual {residual:.3g} <= tolerance {tol:.3g}")
    return Decision("violated", f"worst residual {residual:.3g} > tolerance {tol:.3g}")


def classify_measurement(
    *,
    what: str,
    vacuous: str | None = None,
    hypothesis_unmet: str | None = None,
) -> Decision:
    """A number reported without a verdict (a ratio the paper calls o(1), a fitted constant,
    a printed formula set beside the intended one): ``measured``, unless a precondition
    (``hypothesis_unmet``, then ``vacuous``) says the claim does not apply here.

    Parameters
    ----------
    what : str
        One line saying what was measured (it becomes the reason).
    vacuous, hypothesis_unmet : str, optional
        The preconditions' reasons (module docstring).

    Returns
    -------
    Decision
        ``measured`` (or the precondition's verdict), with its reason.
    """
    pre = _precondition(vacuous, hypothesis_unmet)
    if pre:
        return pre
    return Decision("measured", what)


def _fmt_ratio(r: float) -> str:
    if not math.isfinite(r):
        return "an unbounded factor (reference is 0)"
    return f"a factor {r:.3g}"


#: The verdict table's columns after the parameters.
ROW_COLUMNS = (
    "evidence",
    "bound",
    "exact",
    "estimate",
    "ci_low",
    "ci_high",
    "trials",
    "seed",
    "at_paper_params",
    "value_name",
    "bound_name",
)
#: Row fields a parameter may not shadow: such a parameter's column is ``param_<name>``.
_FIXED = frozenset({"claim", "reading", "verdict", *ROW_COLUMNS})


def param_column(name: str) -> str:
    """The column of parameter ``name`` in the verdict table (``param_<name>`` where it would
    shadow a row field, e.g. a parameter called ``seed``).

    Parameters
    ----------
    name : str
        The parameter's name, as a row's ``params`` holds it.

    Returns
    -------
    str
        ``name``, or ``param_<name>`` when ``name`` is ``claim``, ``reading``, ``verdict`` or
        one of :data:`ROW_COLUMNS`.
    """
    return f"param_{name}" if name in _FIXED else name


def verdicts_frame(rows: Iterable[VerdictRow]) -> pd.DataFrame:
    """The verdict table: ``verdicts.parquet`` of every battery and the Python API's
    ``result.verdicts`` alike.

    Columns: ``claim, reading, verdict``, then one column per parameter the rows vary
    (``n, k, eps, d, L, family, ...`` in order of first appearance, :func:`param_column`;
    missing where a row has no such parameter), then :data:`ROW_COLUMNS` (evidence and the
    numbers). ``v[v.k == 4095]`` selects rows by a parameter.

    Parameters
    ----------
    rows : iterable of VerdictRow

    Returns
    -------
    pandas.DataFrame
        One row per verdict row.
    """
    rows = list(rows)
    names: dict[str, None] = {}
    for r in rows:
        for k in r.params:
            names.setdefault(param_column(k), None)
    records = []
    for r in rows:
        rec: dict[str, Any] = {"claim": r.claim, "reading": r.reading, "verdict": r.verdict}
        rec.update({param_column(k): v for k, v in r.params.items()})
        rec.update(
            {
                "evidence": r.evidence,
                "bound": r.bound,
                "exact": r.exact,
                "estimate": r.estimate,
                "ci_low": r.ci_low,
                "ci_high": r.ci_high,
                "trials": r.trials,
                "seed": r.seed,
                "at_paper_params": bool(r.at_paper_params),
                "value_name": r.value_name,
                "bound_name": r.bound_name,
            }
        )
        records.append(rec)
    return pd.DataFrame.from_records(records, columns=["claim", "reading", "verdict", *names, *ROW_COLUMNS])


def verdicts_json(rows: Iterable[VerdictRow]) -> str:
    """The rows as a JSON array; NaN and infinities become null.

    Parameters
    ----------
    rows : iterable of VerdictRow

    Returns
    -------
    str
        A JSON array (indented by 2) of :meth:`VerdictRow.flat` objects; numpy scalars are
        written as Python numbers.
    """

    def clean(v: Any) -> Any:
        if isinstance(v, float) and not math.isfinite(v):
            return None
        if hasattr(v, "item"):  # numpy scalars
            return clean(v.item())
        return v

    return json.dumps([{k: clean(v) for k, v in r.flat().items()} for r in rows], indent=2)


_STYLE = {
    "holds": "green",
    "violated": "bold red",
    "vacuous": "yellow",
    "loose": "cyan",
    "hypothesis-unmet": "magenta",
    "cannot-fail": "yellow",
    "measured": "blue",
}


def print_verdict_table(
    rows: Sequence[VerdictRow],
    *,
    title: str = "Verdicts",
    param_columns: Sequence[str] | None = None,
    console: Any | None = None,
) -> None:
    """Print the rows as a rich table: claim, parameters, bound, exact, estimate ± CI, verdict.

    Every cell is printed as plain text (no rich markup), so brackets in claims and
    evidence print as written.

    Parameters
    ----------
    rows : sequence of VerdictRow
    title : str
        The table's title.
    param_columns : sequence of str, optional
        The parameters shown, one column each. Default: every parameter of the rows, in
        order of first appearance.
    console : rich.console.Console, optional
        Where to print (default: a new console on stdout).
    """
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = console or Console(emoji=False)
    if param_columns is None:
        seen: dict[str, None] = {}
        for r in rows:
            for k in r.params:
                seen.setdefault(k, None)
        param_columns = list(seen)
    table = Table(title=title, show_lines=False)
    table.add_column("claim", overflow="fold")
    table.add_column("reading", overflow="fold")
    for p in param_columns:
        table.add_column(p, justify="right")
    for c in ("bound", "exact", "estimate [95% CI]", "trials", "verdict"):
        table.add_column(c, justify="right" if c != "verdict" else "left")
    table.add_column("evidence", overflow="fold")
    for r in rows:
        est = _fmt(r.estimate)
        if r.ci_low is not None and r.ci_high is not None:
            est += f" [{_fmt(r.ci_low)}, {_fmt(r.ci_high)}]"
        # Text cells, never markup: claims and evidence quote brackets ("[gaussian]", CIs)
        # that must print as written on any console.
        table.add_row(
            Text(r.claim),
            Text(r.reading),
            *[Text(_fmt(r.params.get(p))) for p in param_columns],
            Text(_fmt(r.bound)),
            Text(_fmt(r.exact)),
            Text(est),
            Text(_fmt(r.trials)),
            Text(r.verdict, style=_STYLE[r.verdict]),
            Text(r.evidence),
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


def rows_from_json(rows: Sequence[dict[str, Any]]) -> list[VerdictRow]:
    """Verdict rows saved as flat JSON objects (``verdicts.json``) back as VerdictRow objects:
    the row's own fields by name, every other key a parameter.

    Parameters
    ----------
    rows : sequence of dict
        The objects of :func:`verdicts_json`'s array.

    Returns
    -------
    list of VerdictRow
    """
    names = {f.name for f in fields(VerdictRow)} - {"params"}
    out = []
    for r in rows:
        known = {k: v for k, v in r.items() if k in names}
        params = {k: v for k, v in r.items() if k not in names}
        out.append(VerdictRow(**known, params=params))
    return out
