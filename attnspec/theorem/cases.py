"""A measurement over a few fixed cases, and readings made through another reading.

Not every claim is checked by random draws: an identity may be checked on a handful of
materialised cases (:class:`Cases`: each factorization, each width), and one check may hold
points that only some of its readings read (:class:`Scoped`).
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
class Wrapped(Reading):
    """A reading made through another, whose name, description and trial quantities it takes.

    Parameters
    ----------
    reading : Reading
        The reading it wraps.
    """

    reading: Reading | None = None

    def __post_init__(self) -> None:
        if self.reading is None:
            kind = type(self).__name__
            raise ValueError(f"{kind} needs the reading it wraps: {kind}(reading=...)")
        object.__setattr__(self, "name", self.reading.name)
        object.__setattr__(self, "description", self.reading.description)

    def _reads(self) -> tuple[str, ...]:
        return self.reading.trial_quantities()  # type: ignore[union-attr]

    def _rows(self, claim: str, points: list[Point]) -> list[VerdictRow]:
        return [self._reshaped(p, r) for p in points for r in self.reading.rows(claim, [p])]  # type: ignore[union-attr]

    def _reshaped(self, point: Point, row: VerdictRow) -> VerdictRow:
        """The wrapped reading's row at ``point``, as this reading shows it."""
        return row


@dataclass(frozen=True)
class Scoped(Wrapped):
    """``reading``, made only at the grid points whose parameters satisfy ``where``.

    Parameters
    ----------
    reading : Reading
        The reading made there.
    where : callable, optional
        ``where(params) -> bool`` on a point's parameters; default every point.
    at_paper_params : bool
        Mark the rows as at the paper's own parameters (the one-screen summary leads with them).
    """

    where: Callable[[dict[str, Any]], bool] | None = None
    at_paper_params: bool = False

    def _rows(self, claim: str, points: list[Point]) -> list[VerdictRow]:
        assert self.reading is not None
        chosen = [p for p in points if self.where is None or self.where(p.params)]
        rows = self.reading.rows(claim, chosen) if chosen else []
        return [dataclasses.replace(r, at_paper_params=True) for r in rows] if self.at_paper_params else rows
