"""A bound over measured instances, decided at its worst violation, with its margins; and a
variant's row.

:func:`attnspec.theorem.tightest.tightest_rows` decides a claim at the instance where
``observed / bound`` is largest. A bound checked over many instances whose left-hand side may be
round-off (an orthogonality error of 1e-15 against a bound of 1e-14) needs two more things,
which :func:`margin_rows` adds:

* the instance it is decided at: the worst violation if there is one, else the tightest
  *measurable* instance (``observed > atol``: an instance at round-off says nothing of the
  bound's tightness), else any instance with a finite bound;
* its margins as parameters: ``tightest`` and ``typical``, the smallest and the median
  ``bound / observed`` over the measurable instances (rounded to 4 digits), and ``label_on``
  (``"worst violation"`` or ``"tightest"``), so that a reader sees whether a ``holds`` rests on
  one tight instance among loose ones.

:func:`as_variant` reports a row decided against a theorem's bound, but computed for an object
the theorem does not define (another iteration than the paper's, another schedule), as a
``measured`` row: the theorem's verdict stays in its sentence, never in its verdict.
:func:`measured_row` is a number a module measured without a verdict (a fitted constant, a
condition number outside the statement), through the one classifier's ``measured``;
:func:`unmet_row` a claim that no instance could test (a formula not even conformable at the
shape, every instance outside the hypothesis): ``hypothesis-unmet``, with no number.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Hashable, Mapping
from typing import TYPE_CHECKING, Any

from attnspec.theorem.readings import LOOSE_FACTOR

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from attnspec.verdicts.classify import VerdictRow

Group = Any  # a pandas DataFrame: one group's instances
Worst = Any  # a pandas Series: the instance the group is decided at


def margin_rows(
    claim: str,
    table: pd.DataFrame,
    *,
    observed: str,
    bound: str,
    by: str | None = None,
    reading: str = "as-stated",
    params: Callable[[Hashable, Group], Mapping[str, Any]] | None = None,
    seed: int | None = None,
    rtol: float = 1e-9,
    atol: float = 0.0,
    unmet: Callable[[Group], str | None] | None = None,
    note: Callable[[Group, Worst], str] | None = None,
    what: str = "observed",
    at_paper_params: bool = False,
) -> list[VerdictRow]:
    """One row per kind of instance: ``observed <= bound`` decided at the worst violation, else
    at the tightest measurable instance, with its margins as parameters.

    Parameters
    ----------
    claim : str
        The claim id.
    table : DataFrame
        One row per instance.
    observed, bound : str
        The columns of the two sides; an infinite bound (one that overflowed) says nothing.
    by : str, optional
        The column of the instance kind: one row per kind, in order of first appearance.
    reading : str
        The reading the rows decide.
    params : callable, optional
        ``params(kind, group) -> dict``: the rows' parameters (default ``{by: kind}``).
    seed : int, optional
        The seed recorded with the rows.
    rtol, atol : float
        Slack of the bound (:func:`attnspec.verdicts.classify.classify_bound`); ``atol`` is also
        the floor below which an instance is round-off and not measurable.
    unmet : callable, optional
        ``unmet(group) -> str or None``: which hypothesis the group's instances do not meet.
    note : callable, optional
        ``note(group, worst) -> str``: the paper's context, after the margins.
    what : str
        What ``observed`` is, in the margins' sentence (``bound/error``).
    at_paper_params : bool
        Mark the rows as at the paper's own parameters.

    Returns
    -------
    list of VerdictRow
    """
    groups = [(None, table)] if by is None else list(table.groupby(by, sort=False))
    rows = []
    for kind, grp in groups:
        shown = dict(params(kind, grp)) if params is not None else ({} if by is None else {by: kind})
        row = _margin_row(claim, grp, observed, bound, rtol, atol, unmet(grp) if unmet else None, what)
        context = note(grp, grp.iloc[row.pop("at")]) if note is not None and "at" in row else ""
        evidence = row.pop("evidence") + (f"; {context}" if context else "")
        rows.append(
            _verdict_row(
                claim=claim, reading=reading, params={**shown, **row.pop("margins")}, seed=seed,
                evidence=evidence, at_paper_params=at_paper_params, **row,
            )
        )  # fmt: skip
    return rows


def _verdict_row(**fields: Any) -> VerdictRow:
    from attnspec.verdicts.classify import VerdictRow

    fields.pop("at", None)
    return VerdictRow(**fields)


def _margin_row(
    claim: str, grp: Group, observed: str, bound: str, rtol: float, atol: float, why: str | None, what: str
) -> dict[str, Any]:
    """The decided fields of one group: verdict, estimate, bound, trials, margins, sentence, and
    ``at``, the position of the instance decided at (absent when no bound is finite)."""
    import numpy as np

    from attnspec.verdicts.classify import classify_bound

    b, e = grp[bound].to_numpy(dtype=float), grp[observed].to_numpy(dtype=float)  # (instances,)
    finite = np.isfinite(b)
    viol = finite & (e > b * (1 + rtol) + atol)
    meas = finite & (e > atol)
    pool = viol if viol.any() else (meas if meas.any() else finite)
    if not pool.any():  # every bound overflowed: the claim says nothing at these instances
        d = classify_bound(observed=float(e.max()), bound=math.inf, hypothesis_unmet=why)
        return {"verdict": d.verdict, "estimate": float(e.max()), "trials": len(grp), "margins": {},
                "evidence": f"{d.reason}; the bound is infinite at all {len(grp)} instances"}  # fmt: skip
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(b > 0, e / b, np.inf)  # observed / bound: 1 = tight
        margin = b[meas] / e[meas]  # bound / observed over the measurable instances
    at = int(np.argmax(np.where(pool, ratio, -np.inf)))
    d = classify_bound(observed=float(e[at]), bound=float(b[at]), rtol=rtol, atol=atol, hypothesis_unmet=why)
    tight, typical = (float(margin.min()), float(np.median(margin))) if margin.size else (math.inf, math.inf)
    label_on = "worst violation" if viol.any() else "tightest"
    if viol.any():
        sentence = f"{int(viol.sum())}/{len(grp)} instances exceed the bound; worst {what}/bound {ratio[at]:.3g}"
    else:
        loose = "loose there" if typical > LOOSE_FACTOR else "within the factor there"
        sentence = (
            f"0/{len(grp)} instances exceed the bound; the label rests on the tightest case: bound/{what} "
            f"{tight:.3g}; typical case: median bound/{what} {typical:.3g} ({loose}; over the {int(meas.sum())} "
            f"instances with a finite bound and {what} > {atol:g})"
        )
    margins = {"tightest": round(tight, 4), "typical": round(typical, 4), "label_on": label_on}
    return {"verdict": d.verdict, "estimate": float(e[at]), "bound": float(b[at]), "trials": len(grp),
            "margins": margins, "evidence": f"{d.reason}; {sentence}", "at": at}  # fmt: skip


def as_variant(row: VerdictRow, why: str) -> VerdictRow:
    """``row``, decided against a theorem's bound, reported as a measurement of a variant.

    Parameters
    ----------
    row : VerdictRow
        The row as the theorem's bound decides it.
    why : str
        Why the object measured is not the theorem's (the row's sentence starts with it).

    Returns
    -------
    VerdictRow
        ``measured``, not at the paper's parameters, its numbers kept, the theorem's verdict
        and sentence after ``why``.
    """
    evidence = f"a measurement of a variant, not of the claim: {why}; against the bound of the theorem: "
    return dataclasses.replace(
        row, verdict="measured", at_paper_params=False, evidence=f"{evidence}{row.verdict} ({row.evidence})"
    )


def measured_row(
    claim: str,
    what: str,
    *,
    estimate: float,
    trials: int,
    reading: str = "as-stated",
    params: Mapping[str, Any] | None = None,
    seed: int | None = None,
    at_paper_params: bool = False,
    exact: float | None = None,
) -> VerdictRow:
    """A number measured without a verdict (:func:`attnspec.verdicts.classify.classify_measurement`).

    Parameters
    ----------
    claim : str
        The claim id.
    what : str
        What was measured, with its context: the row's sentence.
    estimate : float
        The number.
    trials : int
        The instances it was measured on.
    reading : str
        The reading.
    params : mapping, optional
        The row's parameters.
    seed : int, optional
        The seed recorded with the row.
    at_paper_params : bool
        Mark the row as at the paper's own parameters.
    exact : float, optional
        A value known exactly, set beside the estimate.

    Returns
    -------
    VerdictRow
        ``measured``.
    """
    from attnspec.verdicts.classify import classify_measurement

    d = classify_measurement(what=what)
    return _verdict_row(
        claim=claim, verdict=d.verdict, params=dict(params or {}), estimate=estimate, exact=exact, trials=trials,
        seed=seed, evidence=d.reason, reading=reading, at_paper_params=at_paper_params,
    )  # fmt: skip


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
    """A claim no instance could test: ``hypothesis-unmet`` (the one classifier's precondition),
    with no estimate.

    Parameters
    ----------
    claim : str
        The claim id.
    why : str
        Which hypothesis is not met, and where.
    reading : str
        The reading.
    params : mapping, optional
        The row's parameters.
    seed : int, optional
        The seed recorded with the row.
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
    from attnspec.verdicts.classify import classify_measurement

    d = classify_measurement(what="", hypothesis_unmet=why)
    return _verdict_row(
        claim=claim, verdict=d.verdict, params=dict(params or {}), bound=bound, trials=trials, seed=seed,
        evidence=d.reason + (f"; {after}" if after else ""), reading=reading,
    )  # fmt: skip
