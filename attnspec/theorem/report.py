"""A report section from any check's result: the same for a built-in battery and a plug-in.

:func:`check_section` renders a :class:`~attnspec.checks.CheckResult` (or the
:class:`~attnspec.theorem.result.BatteryResult` inside it) as Markdown: a heading, the paper's
citation and the run's parameters, one table row per claim (:func:`attnspec.verdicts.table.markdown`,
the verdict over its rows and why), and one sentence per claim (verdict first, with its deciding
numbers). ``attnspec report`` gives a plug-in's experiments the same section as the built-ins'
from one TOML file in ``experiments/`` naming its command and paper (docs/theorem-api.md).
"""

from __future__ import annotations

from typing import Any


def check_section(result: Any, heading: str | None = None, *, level: int = 3) -> str:
    """The Markdown section of a check's result.

    Parameters
    ----------
    result : CheckResult or BatteryResult
        What ``attnspec.check(...)`` (or :func:`attnspec.battery.run_battery`) returned.
    heading : str, optional
        The section's title; default: the command and the paper's title.
    level : int
        The heading's level (``###`` by default: a section under a paper).

    Returns
    -------
    str
        Markdown, ending with a newline.
    """
    from attnspec.theorem.registry import commands, papers
    from attnspec.verdicts.sentences import summary_lines
    from attnspec.verdicts.table import count_line, markdown

    battery = getattr(result, "battery_result", result)
    command = commands().get(battery.command)
    paper = papers().get(command.paper) if command is not None else None
    title = heading or (f"{battery.command}: {paper.title}" if paper else battery.command)
    params = battery.meta.get("identity") or battery.meta.get("parameters") or {}
    shown = ", ".join(f"{k} = {v}" for k, v in params.items())
    lines = [f"{'#' * level} {title}", ""]
    if paper is not None:
        lines += [f"{paper.citation(markdown=True)}.", ""]
    lines += [f"`attnspec check {battery.command}` with {shown}: {count_line(battery.verdicts)}.", ""]
    lines += [markdown(battery.verdicts).rstrip(), ""]
    lines += [f"- {s}" for s in summary_lines(battery.verdicts)]
    return "\n".join(lines).rstrip() + "\n"
