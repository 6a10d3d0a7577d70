"""A probability claim decided from failure counts a check computed itself, with its sentence.

:class:`attnspec.theorem.readings.Probability` counts the failures of the runner's trials. A
check whose sampler is vectorised over a grid (``jl-check``: Lemma 1, Theorems 1 and 2)
counts them itself, in tables with one row per claim, reading and grid point; such a row is
decided here with the one classifier (:func:`attnspec.verdicts.classify.classify_probability`)
and its sentence rendered from the numbers alone.
"""

from __future__ import annotations

from attnspec.theorem import sequential as SQ
from attnspec.theorem.readings import Decision, _share_fields


def mc_columns(failures: int, trials: int) -> dict[str, float]:
    """failures, trials, estimate and the 95% Clopper–Pearson interval, as table columns.

    Parameters
    ----------
    failures : int
        Failures observed, in 0..trials.
    trials : int
        Monte Carlo trials, >= 1.

    Returns
    -------
    dict
        ``failures``, ``trials``, ``estimate``, ``ci_low``, ``ci_high``.
    """
    return {"failures": int(failures), "trials": int(trials), **_share_fields(failures, trials)}


def counts_text(
    failures: int, trials: int, estimate: float, ci_low: float, ci_high: float, exact: float | None = None
) -> str:
    """The measured failure rate, its interval and the exact probability where a law gives it.

    Parameters
    ----------
    failures, trials : int
        The counts.
    estimate, ci_low, ci_high : float
        The failure rate and its interval.
    exact : float, optional
        The exact failure probability.

    Returns
    -------
    str
    """
    shown = f"measured {failures}/{trials} = {estimate:.4g} [{ci_low:.4g}, {ci_high:.4g}]"
    return shown + (f", exact {exact:.4g}" if exact is not None else "")


def stop_note(failures: int, trials: int, claimed: float, trials_max: int | None) -> str:
    """How the draws stopped before ``trials_max``: a settled verdict, or a violation search
    (a claim beyond the trials' resolution); empty when every trial was drawn.

    Parameters
    ----------
    failures, trials : int
        The counts when the draws stopped.
    claimed : float
        The claimed failure probability.
    trials_max : int, optional
        The most trials the row could draw; None: a fixed number.

    Returns
    -------
    str
        Starts with a space (appended to a reason), or is empty.
    """
    if trials_max is None or trials >= trials_max:
        return ""
    if SQ.searched(failures, trials, claimed, trials_max=trials_max):
        return (
            f" (violation search: stopped at {trials} of up to {trials_max} trials with no failure; a failure "
            f"rate p is missed with probability (1 − p)^{trials})"
        )
    return (
        f" (sequential: stopped at {trials} of up to {trials_max} trials once the verdict was settled, error "
        f"rate <= {SQ.ALPHA:g})"
    )


def decide_counts(
    *,
    failures: int,
    trials: int,
    claimed: float,
    estimate: float,
    ci_low: float,
    ci_high: float,
    exact: float | None = None,
    seed: int | None = None,
    vacuous: str | None = None,
    trivial: str | None = None,
    hypothesis_unmet: str | None = None,
) -> Decision:
    """The verdict of "P(failure) <= claimed" from counts, and its reason.

    Parameters
    ----------
    failures, trials : int
        The counts.
    claimed : float
        The claimed failure probability.
    estimate, ci_low, ci_high : float
        The failure rate and its 95% interval.
    exact : float, optional
        The exact failure probability, where a law gives it.
    seed : int, optional
        The instance's seed (named beside a violation, and beside an extension).
    vacuous, trivial, hypothesis_unmet : str, optional
        Why the claim says nothing here, why it cannot fail here, or which hypothesis the
        instance does not meet (:func:`attnspec.verdicts.classify.classify_probability`).

    Returns
    -------
    Decision
        The verdict; the reason adds what the same bound gives outside the hypothesis, the
        counts beside a vacuous claim (and whether its stated bound fails there anyway), or
        the instance seed beside a violation.
    """
    from attnspec.verdicts.classify import classify_probability

    counts = {"claimed": float(claimed), "failures": int(failures), "trials": int(trials), "exact": exact}
    d = classify_probability(**counts, vacuous=vacuous, trivial=trivial, hypothesis_unmet=hypothesis_unmet)
    why = d.reason
    if d.verdict == "hypothesis-unmet":
        # what the same bound gives outside the hypothesis: an extension, not a verdict on the claim
        ext = classify_probability(**counts)
        why = f"{why}; the same bound there: {ext.verdict} ({ext.reason}; instance seed {seed})"
    elif d.verdict == "vacuous":
        why = f"{why}; {counts_text(failures, trials, estimate, ci_low, ci_high, exact)} vs claimed {claimed:.4g}"
        if float(claimed) < 1 and float(ci_low) > float(claimed):
            # the statement says nothing here, but the stated probability bound was measured and fails
            why += " — the stated probability bound fails here (95% CI above it)"
    elif d.verdict == "violated":
        why = f"{why} (instance seed {seed})"
    return Decision(d.verdict, why)
