"""Claims decided where they are tightest: over a grid of an exact law, or over a table of
measured instances.

A bound claimed at every point of a parameter range (a Johnson–Lindenstrauss tail
``2 exp(−ε² d / 8)`` at every width d) is read against its exact law over the whole grid of a
check by :class:`ExactBound`; a deterministic statement (an inequality, an identity to
round-off) that a paper module checks on instances it builds is decided per kind of instance by
:func:`tightest_rows`. Both decide with the one classifier at the tightest point or instance,
after a violation anywhere, and carry the deciding numbers as the row's fields.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from attnspec.theorem.readings import LOOSE_FACTOR, Point, Reading, _verdict_row

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import pandas as pd

    from attnspec.verdicts.classify import Decision, VerdictRow


@dataclass(frozen=True)
class ExactBound(Reading):
    """exact <= bound at every grid point: one row, at the worst point if violated, else at the
    tightest point where the bound is below 1 (vacuous when it never is).

    Parameters
    ----------
    exact : str
        A ``setup`` quantity: the exact probability at the point.
    bound : str
        A ``setup`` quantity: the claimed bound at the point, capped at 1.
    label : str
        The bound's formula, named in the vacuous sentence (``"2 exp(−ε²d/8)"``).
    over : str
        The grid's varying parameter, named in the sentence (``"d"``).
    ratios : bool
        Add ``tightest`` and ``typical`` (bound / exact) to the row's parameters.
    minimum : tuple of (str, str)
        ``(quantity, label)`` pairs: the smallest value of each ``setup`` quantity over the grid,
        reported in the sentence as "label: value".
    count : tuple of (str, str)
        ``(quantity, label)`` pairs: the number of points where the 0/1 quantity is 1, reported as
        "label at n/N <over>".
    rtol : float
        Relative round-off allowed before ``violated``.
    value_name, bound_name : str, optional
        What ``exact`` and ``bound`` are, for the one-screen table.
    """

    exact: str = ""
    bound: str = ""
    label: str = "the bound"
    over: str = "point"
    ratios: bool = True
    minimum: tuple[tuple[str, str], ...] = ()
    count: tuple[tuple[str, str], ...] = ()
    rtol: float = 1e-12
    value_name: str | None = "exact P"
    bound_name: str | None = "claimed"

    def _rows(self, claim: str, points: list[Point]) -> list[VerdictRow]:
        import numpy as np

        from attnspec.verdicts.classify import VerdictRow

        exact = np.array([p.value(self.exact) for p in points])  # (points,)
        bound = np.array([p.value(self.bound) for p in points])  # (points,)
        decision, i = decide_tightest(exact, bound, self.label, self.over, self.rtol)
        params = dict(points[i].params)
        useful = bound < 1
        sentence = decision.reason
        if useful.any():
            tight, typical = ratio_summary(exact, bound)
            if self.ratios:
                params.update(tightest=tight, typical=typical)
            first = points[int(np.flatnonzero(useful)[0])].params.get(self.over)
            rests = " (the label rests on it)" if decision.verdict in ("holds", "loose") else ""
            sentence += (
                f"; the bound is < 1 from {self.over} = {first}; bound/exact there: smallest {tight:.3g}"
                f"{rests}, median {typical:.3g}"
            )
        elif self.ratios:
            params.update(tightest=math.nan, typical=math.nan)
        sentence += self._notes(points)
        return [
            VerdictRow(
                claim, decision.verdict, params, bound=float(bound[i]), exact=float(exact[i]),
                value_name=self.value_name, bound_name=self.bound_name, reading=self.name, evidence=sentence,
            )
        ]  # fmt: skip

    def _notes(self, points: list[Point]) -> str:
        out = ""
        for quantity, label in self.minimum:
            out += f"; {label}: {min(p.value(quantity) for p in points):.4g}"
        for quantity, label in self.count:
            hits = sum(int(round(p.value(quantity))) for p in points)
            out += f"; {label} at {hits}/{len(points)} {self.over}"
        return out


def decide_tightest(
    exact: np.ndarray, bound: np.ndarray, label: str, over: str = "point", rtol: float = 1e-12
) -> tuple[Decision, int]:
    """Decide "exact <= bound at every point" from the two curves, through the one classifier.

    Parameters
    ----------
    exact : numpy.ndarray of shape (points,)
        The exact probability at each point.
    bound : numpy.ndarray of shape (points,)
        The claimed bound at each point, capped at 1.
    label : str
        The bound's formula, named when it says nothing anywhere.
    over : str
        The varying parameter, named in the same sentence.
    rtol : float
        Relative round-off allowed before ``violated``.

    Returns
    -------
    tuple of (Decision, int)
        The decision and the index of the point it was decided at: the largest exact / bound
        when violated or vacuous, else the largest among the points where the bound is < 1.
    """
    import numpy as np

    from attnspec.verdicts.classify import classify_bound

    ratio = exact / bound
    worst = int(np.argmax(ratio))
    useful = bound < 1
    if exact[worst] > bound[worst] * (1 + rtol) or not useful.any():
        vac = None if useful.any() else f"{label} >= 1 at every {over}: the claim says nothing here"
        return classify_bound(observed=float(exact[worst]), bound=float(bound[worst]), rtol=rtol, vacuous=vac), worst
    tight = int(np.flatnonzero(useful)[np.argmax(ratio[useful])])
    return classify_bound(observed=float(exact[tight]), bound=float(bound[tight]), rtol=rtol), tight


def ratio_summary(exact: np.ndarray, bound: np.ndarray) -> tuple[float, float]:
    """bound / exact at the tightest point (the smallest ratio) and its median, over the points
    where the bound is below 1.

    Parameters
    ----------
    exact : numpy.ndarray of shape (points,)
        The exact probability at each point.
    bound : numpy.ndarray of shape (points,)
        The claimed bound at each point.

    Returns
    -------
    tuple of float
        ``(tightest, typical)``; NaN both where the bound is nowhere below 1.
    """
    import numpy as np

    useful = bound < 1
    if not useful.any():
        return math.nan, math.nan
    r = bound[useful] / np.maximum(exact[useful], 1e-300)
    return float(r.min()), float(np.median(r))


#: The classifier's relative slack of a bound attained with equality (its default).
RTOL = 1e-9

Group = Any  # a pandas DataFrame: one group's instances
Worst = Any  # a pandas Series: the group's tightest instance


def tightest_rows(
    claim: str,
    table: pd.DataFrame,
    *,
    observed: str,
    bound: str | float | None = None,
    tol: float | None = None,
    by: str | None = None,
    tightness: str | None = None,
    reading: str = "as-stated",
    params: Callable[[Hashable, Group], Mapping[str, Any]] | None = None,
    seed: int | None = None,
    rtol: float = RTOL,
    atol: float = 0.0,
    loose_factor: float | None = LOOSE_FACTOR,
    unmet: Callable[[Group], str | None] | None = None,
    note: Callable[[Group, Worst], str] | None = None,
    note_first: bool = False,
    estimate: str | None = None,
) -> list[VerdictRow]:
    """One verdict row per instance kind of ``table``, decided at its tightest instance by the one
    classifier after the kind's hypotheses (``unmet``); its instances are the row's ``trials``, and
    the paper's context (``note``) stands beside the classifier's sentence.

    Parameters
    ----------
    claim : str
        The claim id.
    table : DataFrame
        One row per instance.
    observed : str
        The column of the claim's left-hand side (a norm, a residual).
    bound : str or float, optional
        The bound ``observed <= bound`` (a column, or one number); give it or ``tol``.
    tol : float, optional
        The round-off tolerance of an identity (``observed <= tol``); give it or ``bound``.
    by : str, optional
        The column of the instance kind: one row per kind, in order of first appearance.
        None: one row for the whole table.
    tightness : str, optional
        The column whose largest value marks the tightest instance. Default: ``observed /
        bound`` for a bound, ``observed`` for an identity.
    reading : str
        The reading the rows decide.
    params : callable, optional
        ``params(kind, group) -> dict``: the rows' parameters (default ``{by: kind}``, or no
        parameter without ``by``).
    seed : int, optional
        The seed recorded with the rows.
    rtol, atol : float
        Slack of a bound (:func:`~attnspec.verdicts.classify.classify_bound`).
    loose_factor : float or None
        A bound more than this many times the observed value is ``loose``; None: never.
    unmet : callable, optional
        ``unmet(group) -> str or None``: which hypothesis the group's instances do not meet.
    note : callable, optional
        ``note(group, worst) -> str``: the paper's context beside the classifier's sentence.
    note_first : bool
        Put the note before the classifier's sentence (default after).
    estimate : str, optional
        The column whose largest value over the group the row reports as its estimate, where
        ``observed`` folds several residuals into one decision (default: ``observed`` at the
        tightest instance).

    Returns
    -------
    list of VerdictRow
    """
    from attnspec.verdicts.classify import classify_bound, classify_identity

    if (bound is None) == (tol is None):
        raise ValueError(f"{claim}: give exactly one of bound (an inequality) and tol (an identity)")
    rows = []
    for shown, grp in by_kind(table, by, params):
        worst = grp.loc[_tightness(grp, observed, bound, tightness).idxmax()]
        why = unmet(grp) if unmet is not None else None
        if tol is not None:
            limit = float(tol)
            d = classify_identity(residual=float(worst[observed]), tol=limit, hypothesis_unmet=why)
        else:
            limit = float(worst[bound]) if isinstance(bound, str) else float(bound)  # type: ignore[index]
            d = classify_bound(
                observed=float(worst[observed]), bound=limit, rtol=rtol, atol=atol, loose_factor=loose_factor,
                hypothesis_unmet=why,
            )  # fmt: skip
        context = note(grp, worst) if note is not None else ""
        if note_first and context:
            d = d._replace(reason=f"{context}; {d.reason}")
        rows.append(
            _verdict_row(
                claim, d, reading=reading, params=shown, seed=seed, after="" if note_first else context, bound=limit,
                estimate=float(worst[observed] if estimate is None else grp[estimate].max()), trials=len(grp),
            )
        )  # fmt: skip
    return rows


def by_kind(
    table: pd.DataFrame, by: str | None, params: Callable[[Hashable, Group], Mapping[str, Any]] | None
) -> list[tuple[dict[str, Any], Group]]:
    """The instances of ``table`` by kind, each kind with its row's parameters.

    Parameters
    ----------
    table : DataFrame
        One row per instance.
    by : str or None
        The column of the instance kind, in order of first appearance; None: one kind.
    params : callable or None
        ``params(kind, group) -> dict``; None: ``{by: kind}``, or nothing without ``by``.

    Returns
    -------
    list of (dict, DataFrame)
    """
    groups = [(None, table)] if by is None else list(table.groupby(by, sort=False))
    return [(dict(params(k, g)) if params is not None else ({} if by is None else {by: k}), g) for k, g in groups]


def _tightness(grp: Group, observed: str, bound: str | float | None, column: str | None) -> Any:
    """The tightness of each instance: the column given, else observed / bound, else observed."""
    if column is not None:
        return grp[column]
    if bound is None:
        return grp[observed]
    return grp[observed] / (grp[bound] if isinstance(bound, str) else float(bound))
