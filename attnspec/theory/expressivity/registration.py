"""The expressivity notes' paper and ``sa-check``, registered through :mod:`attnspec.theorem.registry` (as a plug-in would)."""

from __future__ import annotations

from attnspec.options.checks import SA_CHECK
from attnspec.theorem.registry import Command, Paper, register_command, register_paper

PAPER = register_paper(
    Paper(
        "expressivity",
        "Likhosherstov, Choromanski & Weller",
        "On the Expressive Power of Self-Attention Matrices",
        year=2021,
        where="arXiv 2106.03764",
        notes="lecture notes, ../shared/papers/expressive-power-notes-fr.txt",
    )
)

register_command(
    Command(
        "sa-check",
        paper="expressivity",
        battery="attnspec.theory.expressivity.battery",
        options=SA_CHECK,
        run_arguments=("out", "csv", "plots"),
        plotter="attnspec.plots.expressivity:plot_expressivity",
        claims_module="attnspec.theory.expressivity.claims",
        summary="Check the sparse-expressivity construction SA(X) = exp(X W_Q W_Kᵀ Xᵀ) ≈ A/eps.",
    )
)
