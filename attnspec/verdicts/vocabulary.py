"""The seven verdicts, the claim-level words built from them, and their one-line meanings,
with no heavy import.

:mod:`attnspec.verdicts.classify` (the classifier) re-exports them; every ``--help`` of a checking
command, the README and docs/*.md quote them from here (``tests/integration/test_docs_commands.py``
compares them), so that one vocabulary is used everywhere.
"""

from __future__ import annotations

VERDICTS: tuple[str, ...] = ("holds", "loose", "violated", "vacuous", "hypothesis-unmet", "cannot-fail", "measured")

#: What each verdict means, for tables, ``attnspec claims``, every --help and the report.
VERDICT_MEANINGS: dict[str, str] = {
    "holds": "consistent with the claim, and the claim is within 10x of what was measured",
    "loose": "consistent with the claim, but the claimed value exceeds the exact/measured one by more than 10x",
    "violated": "contradicted at an instance that meets the claim's hypotheses (evidence names it)",
    "vacuous": "the claim says nothing at these parameters (bound >= 1, required dimension >= ambient one)",
    "hypothesis-unmet": "the instance does not meet the claim's hypothesis: neither confirmation nor counterexample",
    "cannot-fail": "the check could not have failed here (a trivial output meets the tolerance, or no outcome "
    "of these trials could contradict the claimed probability)",
    "measured": "a measurement without a verdict (a fitted constant, a ratio, a printed formula vs the intended "
    "one, a consistent Monte Carlo rate whose looseness the trials cannot resolve, or an interval that straddles "
    "the claim with the estimate above it)",
}

#: A claim's verdict where its printed form fails and the corrected form holds: a misprint,
#: listed apart from failures wherever claims are counted.
MISPRINT = "misprint: holds as corrected"

#: The arrow of a claim's verdict that changes along a parameter ("vacuous → violated").
ARROW = " → "

#: What a claim's verdict means where it is not one of the seven row verdicts.
CLAIM_VERDICT_MEANINGS: dict[str, str] = {
    MISPRINT: "the formula as printed is violated where it can be evaluated, and the corrected formula holds "
    "in every row: a misprint, not a failure of the paper's result",
    "A → B": "A at the claim's own setting (e.g. a theorem's own k), B at the other values of the parameter the "
    "why names (e.g. k below n); each of A and B is one of the seven verdicts",
}


def defined(verdict: str) -> bool:
    """True when ``verdict`` is a word of this vocabulary: one of the seven, the misprint
    outcome, or two of the seven joined by :data:`ARROW`.

    Parameters
    ----------
    verdict : str
        A row's or a claim's verdict, as printed.

    Returns
    -------
    bool
    """
    if verdict in VERDICTS or verdict == MISPRINT:
        return True
    parts = verdict.split(ARROW)
    return len(parts) == 2 and all(p in VERDICTS for p in parts) and parts[0] != parts[1]


def is_failure(verdict: str) -> bool:
    """True when a claim's verdict counts as a failure of what the source states: ``violated``
    alone or at the end of a change (``vacuous → violated``); a misprint never does.

    Parameters
    ----------
    verdict : str
        A claim's verdict (:func:`defined`).

    Returns
    -------
    bool
    """
    return verdict != MISPRINT and verdict.split(ARROW)[-1] == "violated"


def verdict_lines(bullet: str = "") -> list[str]:
    """``holds: consistent with ...``, one line per verdict, in the classifier's order.

    Parameters
    ----------
    bullet : str
        Text put before each line (``"  "``, ``"- "``).

    Returns
    -------
    list of str
    """
    return [f"{bullet}{v}: {VERDICT_MEANINGS[v]}" for v in VERDICTS]


def claim_verdict_lines(bullet: str = "") -> list[str]:
    """```misprint: holds as corrected` — ...`` and ```A → B` — ...``, one line each (Markdown).

    Parameters
    ----------
    bullet : str
        Text put before each line.

    Returns
    -------
    list of str
    """
    return [f"{bullet}`{v}` — {m}" for v, m in CLAIM_VERDICT_MEANINGS.items()]


def verdict_epilog() -> str:
    """The seven verdicts as the last block of a command's --help (kept unwrapped, one a line).

    Returns
    -------
    str
        Click's no-rewrap marker ``\\b``, a heading, then :func:`verdict_lines` indented by two spaces.
    """
    return "\b\nVerdicts (the same seven everywhere; `attnspec claims` lists the claims):\n" + "\n".join(
        verdict_lines("  ")
    )
