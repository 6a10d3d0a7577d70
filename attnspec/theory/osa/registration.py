"""The OSA paper, ``osa-check`` and ``osa-train``, registered through :mod:`attnspec.theorem.registry` (as a plug-in would)."""

from __future__ import annotations

from attnspec.options.checks import OSA_CHECK, OSA_TRAIN
from attnspec.theorem.registry import Command, Paper, register_command, register_paper

PAPER = register_paper(Paper("osa", "Zhang & Martens", "Orthogonal Self-Attention", where="arXiv 2602.05996"))

register_command(
    Command(
        "osa-check",
        paper="osa",
        battery="attnspec.theory.osa.battery",
        options=OSA_CHECK,
        run_arguments=("out", "csv"),
        plotter="attnspec.plots.osa:plot_osa_check",
        claims_module="attnspec.theory.osa.claims",
        summary="Check the Orthogonal Self-Attention theorems.",
    )
)
register_command(
    Command(
        "osa-train",
        paper="osa",
        battery="attnspec.theory.osa.train_battery",
        options=OSA_TRAIN,
        run_arguments=("out", "resume", "csv"),
        plotter="attnspec.plots.osa_train:plot_osa_train",
        claims_module="attnspec.theory.osa.claims",
        code_files=("train*.py", "layer.py"),  # it shares the package with osa-check, but runs only these
        verdicts=False,
        summary="Train ViT, its ablations and the OSA-Transformer on 8×8 digits beside the OSA paper's Table 2.",
    )
)
