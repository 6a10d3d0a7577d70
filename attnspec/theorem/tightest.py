"""Deciding a measured claim over a table of instances: per instance kind, at the tightest.

Many claims are deterministic statements (an inequality, an identity to round-off) that a
paper module checks on instances it builds itself: random draws with their own seeds,
adversarial constructions, instances that do not meet a hypothesis. Its table has one row per
instance. :func:`tightest_rows` turns such a table into verdict rows the one way every check
does it:

1. group the instances by kind (``by``; the whole table is one group without it);
2. in each group take the instance where the claim is tightest (largest ``tightness``:
   ``observed / bound`` for a bound, ``observed`` for an identity, or a column of the table);
3. decide the claim there with the one classifier (:func:`attnspec.verdicts.classify.classify_bound`
   for ``observed <= bound``, :func:`~attnspec.verdicts.classify.classify_identity` for
   ``observed <= tol``), after the group's hypotheses (``unmet``);
4. one row per group: the deciding numbers as fields (``estimate``, ``bound``, ``trials`` = the
   group's instances) and the classifier's sentence, with the paper's own context (``note``)
   beside it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import TYPE_CHECKING, Any

from attnspec.theorem.readings import LOOSE_FACTOR

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from attnspec.verdicts.classify import VerdictRow

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
    """One verdict row per instance kind of ``table``, decided at its tightest instance.

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
    from attnspec.verdicts.classify import VerdictRow, classify_bound, classify_identity

    if (bound is None) == (tol is None):
        raise ValueError(f"{claim}: give exactly one of bound (an inequality) and tol (an identity)")
    groups = [(None, table)] if by is None else list(table.groupby(by, sort=False))
    rows = []
    for kind, grp in groups:
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
        evidence = d.reason if not context else (f"{context}; {d.reason}" if note_first else f"{d.reason}; {context}")
        if params is not None:
            shown = dict(params(kind, grp))
        else:
            shown = {} if by is None else {by: kind}
        rows.append(
            VerdictRow(
                claim=claim,
                reading=reading,
                verdict=d.verdict,
                params=shown,
                bound=limit,
                estimate=float(worst[observed] if estimate is None else grp[estimate].max()),
                trials=len(grp),
                seed=seed,
                evidence=evidence,
            )
        )
    return rows


def _tightness(grp: Group, observed: str, bound: str | float | None, column: str | None) -> Any:
    """The tightness of each instance: the column given, else observed / bound, else observed."""
    if column is not None:
        return grp[column]
    if bound is None:
        return grp[observed]
    return grp[observed] / (grp[bound] if isinstance(bound, str) else float(bound))
