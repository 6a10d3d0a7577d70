"""The fixed-k study's figure, from its saved ``approx_summary`` table only.

Held-out error ‖Ŷ − P V‖_F/‖P V‖_F against n at fixed k: one panel per k, stacked in one
column (3.3 in, as the report prints it), every method a
line with its 95 % band over held-out documents, the references (uniform attention, the
best rank-k P) as black lines without bands and zero output's error (1 by construction) as a
grey line, so a method is read against what a constant output and what low rank of P alone
give. Given the study's ``approx_rule``, a method that the rule finds no better than uniform
attention or no better than zero output at a k is drawn with hollow markers in that panel.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from attnspec.plots import COLUMN_IN, OKABE_ITO, fit_title, legend_below, paper_figure, save_figure, style
from attnspec.spectra.approx.rule import NO_BETTER, NO_BETTER_THAN_ZERO, ZERO_OUTPUT_ERROR

HOLLOW_LABEL = "hollow: no better than uniform or zero output (the rule)"
#: How each reference is drawn (black, no band).
_REFERENCE_STYLE = {"uniform": (0, (4, 2)), "best-rank-k": (0, (1, 1.5))}


def plot_approx(
    summary: pd.DataFrame,
    out: Path,
    *,
    rule: pd.DataFrame | None = None,
    title: str = "",
    formats: Sequence[str] = ("png", "svg"),
) -> list[Path]:
    """Draw ``approx_errors`` (error against n, one panel per k) into ``out``.

    Parameters
    ----------
    summary : pandas.DataFrame
        The study's ``approx_summary`` table (n, k, method, reference, error, error_low, error_high).
    out : Path
        The directory the figure is written to.
    rule : pandas.DataFrame, optional
        The study's ``approx_rule`` table (k, method, verdict): hollow markers where the verdict
        is "no better than uniform" or "no better than zero output".
    title : str
        The figure's title (model · corpus).
    formats : sequence of str
        File formats.

    Returns
    -------
    list of Path
        The files written.
    """
    style()
    reference = summary.groupby("method")["reference"].first().to_dict()
    ks = sorted(summary["k"].unique())
    # one panel per k, one above the other, at one column: n shared, so the panels compare down the page
    fig, axes = paper_figure(len(ks), 1, width=COLUMN_IN, height=1.5 * len(ks) + 1.1, sharex=True, sharey=True)
    methods = [m for m in dict.fromkeys(summary["method"]) if not reference[m]]
    colour = {m: OKABE_ITO[i % 7] for i, m in enumerate(methods)}
    handles: dict[str, object] = {}
    hollow = _no_better(rule)
    for ax, k in zip(axes[:, 0], ks):
        at = summary[summary["k"] == k]
        zero = ax.axhline(ZERO_OUTPUT_ERROR, color="grey", lw=0.8, linestyle=(0, (1, 3)))
        for method, g in at.groupby("method", sort=False):
            g = g.sort_values("n")
            if reference[method]:
                (line,) = ax.plot(g["n"], g["error"], color="black", lw=1, linestyle=_REFERENCE_STYLE.get(method, "-"))
            else:
                face = "white" if (k, method) in hollow else colour[method]
                (line,) = ax.plot(g["n"], g["error"], color=colour[method], lw=1.3, marker="o", ms=3, mfc=face)
                ax.fill_between(g["n"], g["error_low"], g["error_high"], color=colour[method], alpha=0.25, lw=0)
            handles.setdefault(method, line)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")  # methods span orders of magnitude (the proof's construction sits above 1)
        ax.set_xticks(sorted(at["n"].unique()), [str(n) for n in sorted(at["n"].unique())])
        ax.minorticks_off()
        ax.set_title(f"k = {k}")
        ax.set_ylabel("‖Ŷ − PV‖/‖PV‖")
    axes[-1][0].set_xlabel("n (tokens)")
    if title:
        fig.suptitle(fit_title(title, COLUMN_IN, plt.rcParams["figure.titlesize"]))
    labels = [m + (" (reference)" if reference[m] else "") for m in handles]
    handles["zero output"] = zero
    labels.append("zero output (error 1)")
    if hollow:
        from matplotlib.lines import Line2D

        handles["hollow"] = Line2D([], [], color="grey", lw=0, marker="o", ms=3, mfc="white")
        labels.append(HOLLOW_LABEL)
    legend_below(fig, list(handles.values()), labels)
    return save_figure(fig, Path(out) / "approx_errors", formats)


def _no_better(rule: pd.DataFrame | None) -> set[tuple[int, str]]:
    """The (k, method) pairs the rule finds no better than uniform attention or than zero output."""
    if rule is None or "verdict" not in rule.columns:
        return set()
    hit = rule[rule["verdict"].isin([NO_BETTER, NO_BETTER_THAN_ZERO])]
    return {(int(k), str(m)) for k, m in zip(hit["k"], hit["method"])}
