"""attnspec.theorem: check your own theorem, with no edit of attnspec.

Declare a paper, its claims, the options and grid of the check, and one seeded trial (or an
exact law); name how each claim is read; register the check. The runner owns the grid, the
per-point seeds, sequential stopping, forking, ``--resume`` and the verdict rows, and every
consumer of attnspec sees the check: ``attnspec claims``, ``attnspec check NAME``,
``attnspec.check(NAME)``, the report. An installed package makes its checks visible through
the entry-point group ``attnspec.theorems`` (docs/theorem-api.md, with the FAVOR+ plug-in in
examples/attnspec-favor as the worked example).

The names (imported on first use, so that the registries stay light)::

    Paper, Command, register_paper, register_command      # attnspec.theorem.registry
    Check, Claim, Reading kinds: Covers, AtMost, Probability, WorstBound, Identity,
    ExactLaw                                  # attnspec.theorem.declare, .readings
    ExactBound, tightest_rows                              # attnspec.theorem.tightest
    Cases, Scoped                                          # attnspec.theorem.cases
    Ceiling                                                # attnspec.theorem.ceiling
    run_check                                              # attnspec.theorem.runner
    fork_map, Forked, fork_beside                          # attnspec.theorem.fork
    Group, Keep, run_groups                                # attnspec.theorem.groups
    check_section                                          # attnspec.theorem.report
    Instance, Bound, InstanceResidual, Measure, InstanceShare, AsPrinted,
    instance_rows, read_off, indicators, Noted, Unmet      # attnspec.theorem.measured
    SubPoint, Drawn, draw_shared, sample_frame             # attnspec.theorem.shared
"""

from typing import Any

#: name → the module that defines it (imported on first use).
_API: dict[str, str] = {
    "Paper": "attnspec.theorem.registry",
    "Command": "attnspec.theorem.registry",
    "register_paper": "attnspec.theorem.registry",
    "register_command": "attnspec.theorem.registry",
    "Option": "attnspec.options.declaration",
    "Check": "attnspec.theorem.declare",
    "Claim": "attnspec.theorem.declare",
    "Covers": "attnspec.theorem.readings",
    "AtMost": "attnspec.theorem.readings",
    "Probability": "attnspec.theorem.readings",
    "WorstBound": "attnspec.theorem.readings",
    "Identity": "attnspec.theorem.readings",
    "ExactLaw": "attnspec.theorem.readings",
    "ExactBound": "attnspec.theorem.tightest",
    "Cases": "attnspec.theorem.cases",
    "Scoped": "attnspec.theorem.cases",
    "Ceiling": "attnspec.theorem.ceiling",
    "run_check": "attnspec.theorem.runner",
    "fork_map": "attnspec.theorem.fork",
    "Forked": "attnspec.theorem.fork",
    "fork_beside": "attnspec.theorem.fork",
    "tightest_rows": "attnspec.theorem.tightest",
    "Group": "attnspec.theorem.groups",
    "Keep": "attnspec.theorem.groups",
    "run_groups": "attnspec.theorem.groups",
    "check_section": "attnspec.theorem.report",
    "Instance": "attnspec.theorem.measured",
    "Bound": "attnspec.theorem.measured",
    "InstanceResidual": "attnspec.theorem.measured",
    "Measure": "attnspec.theorem.measured",
    "InstanceShare": "attnspec.theorem.measured",
    "AsPrinted": "attnspec.theorem.measured",
    "instance_rows": "attnspec.theorem.measured",
    "read_off": "attnspec.theorem.measured",
    "indicators": "attnspec.theorem.measured",
    "Noted": "attnspec.theorem.measured",
    "Unmet": "attnspec.theorem.measured",
    "SubPoint": "attnspec.theorem.shared",
    "Drawn": "attnspec.theorem.shared",
    "draw_shared": "attnspec.theorem.shared",
    "sample_frame": "attnspec.theorem.shared",
}

__all__ = sorted(_API)


def __getattr__(name: str) -> Any:
    import importlib

    if name in _API:
        return getattr(importlib.import_module(_API[name]), name)
    raise AttributeError(f"module 'attnspec.theorem' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(_API)
