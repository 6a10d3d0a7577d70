"""The seven verdicts and their one-line meanings, with no heavy import.

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
    "one, or a consistent Monte Carlo rate whose looseness the trials cannot resolve)",
}


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
