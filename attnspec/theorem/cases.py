"""A measurement over a few fixed cases, and a reading confined to some grid points.

Not every claim is checked by random draws: an identity may be checked on a handful of
materialised cases (each factorization, each width), and one check may hold points that only
some of its readings read.

* :class:`Cases`: ``setup`` returns ``{"residual": Cases([r1, r2, ...])}`` and the values are
  tabulated as a sample of that size (count, mean, sd, low, high, total), as trials are; the
  runner draws nothing for them, so a reading of them reads every case.
* :class:`Scoped`: a reading made only at the grid points where it applies (``where``), its rows
  marked as at the paper's own parameters when ``at_paper_params`` is set.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from attnspec.theorem.readings import Point, Reading

if TYPE_CHECKING:  # pragma: no cover
    from attnspec.verdicts.classify import VerdictRow


@dataclass(frozen=True)
class Cases:
    """The values of one quantity over a point's fixed cases (a ``setup`` return value).

    Parameters
    ----------
    values : sequence of float
        One value per case, at least one.
    """

    values: Sequence[float]

    def __post_init__(self) -> None:
        values = tuple(float(v) for v in self.values)
        if not values:
            raise ValueError("Cases needs at least one value")
        object.__setattr__(self, "values", values)


@dataclass(frozen=True)
class Scoped(Reading):
    """``reading``, made only at the grid points whose parameters satisfy ``where``.

    Its name and description are the wrapped reading's.

    Parameters
    ----------
    reading : Reading
        The reading made there.
    where : callable, optional
        ``where(params) -> bool`` on a point's parameters; default every point.
    at_paper_params : bool
        Mark the rows as at the paper's own parameters (the one-screen summary leads with them).
    """

    reading: Reading | None = None
    where: Callable[[dict[str, Any]], bool] | None = None
    at_paper_params: bool = False

    def __post_init__(self) -> None:
        if self.reading is None:
            raise ValueError("Scoped needs the reading it confines: Scoped(reading=...)")
        object.__setattr__(self, "name", self.reading.name)
        object.__setattr__(self, "description", self.reading.description)

    def _reads(self) -> tuple[str, ...]:
        assert self.reading is not None
        return self.reading.trial_quantities()

    def _rows(self, claim: str, points: list[Point]) -> list[VerdictRow]:
        assert self.reading is not None
        chosen = [p for p in points if self.where is None or self.where(p.params)]
        rows = self.reading.rows(claim, chosen) if chosen else []
        return [dataclasses.replace(r, at_paper_params=True) for r in rows] if self.at_paper_params else rows
