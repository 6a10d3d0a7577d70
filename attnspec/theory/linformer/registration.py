"""Linformer's paper and ``jl-check``, registered through :mod:`attnspec.theorem.registry` (as a plug-in would)."""

from __future__ import annotations

from attnspec.options.checks import JL_CHECK
from attnspec.theorem.registry import Command, Paper, register_command, register_paper

PAPER = register_paper(
    Paper(
        "linformer",
        "Wang, Li, Khabsa, Fang & Ma",
        "Linformer: Self-Attention with Linear Complexity",
        year=2020,
        where="arXiv 2006.04768",
    )
)

register_command(
    Command(
        "jl-check",
        paper="linformer",
        battery="attnspec.theory.linformer.battery",
        options=JL_CHECK,
        run_arguments=("out", "resume", "csv"),
        plotter="attnspec.plots.jl:plot_jl",
        claims_module="attnspec.theory.linformer.claims",
        summary="Check Linformer's Lemma 1 (JL), Theorem 1 and Theorem 2.",
    )
)
