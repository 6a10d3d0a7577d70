"""A probability bound against an exact law along a grid, decided where the bound is tightest.

A bound such as the Johnson–Lindenstrauss tail ``2 exp(−ε² d / 8)`` is claimed at every point
of a parameter range (every width d), and an exact law gives the true probability at each
point. :class:`ExactBound` reads the pair over the whole grid of a check, one row per claim:

* **violated** at the point where exact / bound is largest, when the exact probability exceeds
  the bound anywhere (to relative round-off ``rtol``);
* **vacuous** when the bound is 1 or more at every point (a probability bound says nothing there);
* otherwise decided by the one classifier (:func:`attnspec.verdicts.classify.classify_bound`:
  ``holds`` or ``loose``) at the tightest point among those where the bound is below 1.

The row carries that point's parameters, the exact value and the bound as fields, and (with
``ratios``) ``tightest`` and ``typical``: bound / exact at the tightest point and its median over
the points where the bound says something. Its sentence is rendered from those numbers and from
the grid-wide ``minimum`` and ``count`` notes a check asks for.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from attnspec.theorem.readings import Point, Reading

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

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
    what : str
        The bound's formula, named in the vacuous sentence (``"2 exp(−ε²d/8)"``).
    over : str
        The grid's varying parameter, named in the sentence (``"d"``).
    ratios : bool
        Add ``tightest`` and ``typical`` (bound / exact) to the row's parameters.
    minimum : tuple of (str, str)
        ``(quantity, what)`` pairs: the smallest value of each ``setup`` quantity over the grid,
        reported in the sentence as "what: value".
    count : tuple of (str, str)
        ``(quantity, what)`` pairs: the number of points where the 0/1 quantity is 1, reported as
        "what at n/N <over>".
    rtol : float
        Relative round-off allowed before ``violated``.
    value_name, bound_name : str, optional
        What ``exact`` and ``bound`` are, for the one-screen table.
    """

    exact: str = ""
    bound: str = ""
    what: str = "the bound"
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
        decision, i = decide_tightest(exact, bound, self.what, self.over, self.rtol)
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
        for quantity, what in self.minimum:
            out += f"; {what}: {min(p.value(quantity) for p in points):.4g}"
        for quantity, what in self.count:
            hits = sum(int(round(p.value(quantity))) for p in points)
            out += f"; {what} at {hits}/{len(points)} {self.over}"
        return out


def decide_tightest(
    exact: np.ndarray, bound: np.ndarray, what: str, over: str = "point", rtol: float = 1e-12
) -> tuple[Decision, int]:
    """Decide "exact <= bound at every point" from the two curves, through the one classifier.

    Parameters
    ----------
    exact : numpy.ndarray of shape (points,)
        The exact probability at each point.
    bound : numpy.ndarray of shape (points,)
        The claimed bound at each point, capped at 1.
    what : str
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
        vac = None if useful.any() else f"{what} >= 1 at every {over}: the claim says nothing here"
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
