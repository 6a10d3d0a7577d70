"""Figures of a scaling run (spectrum at several n on the same documents), from saved results.

* ``scaling_k90``: per layer, against n on log–log axes, the index where the layer's mean
  curve reaches 0.9 and the effective rank, with the slopes β = 0 and β = 1 for reference;
* ``scaling_beta``: per layer and overall, the fitted exponent β of k ∝ n^β with its
  bootstrap interval, for k90 and the ranks needed for relative Frobenius error 0.1 and
  0.2, against the thresholds of the verdict.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from attnspec.plots import save_figure, style


def plot_scaling(table: pd.DataFrame, fits: pd.DataFrame, out: Path, *, title: str = "",
                 formats: Sequence[str] = ("png", "svg")) -> list[Path]:
    """Draw both figures from :func:`attnspec.scaling.scaling_table` and :func:`~attnspec.scaling.fit_scaling`."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    from attnspec.scaling import FITTED, LINEAR_ABOVE, NO_GROWTH_BELOW

    style()
    layers = sorted(table["layer"].unique())
    palette = sns.color_palette("viridis", n_colors=len(layers))
    ns = np.array(sorted(table["n"].unique()), dtype=float)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, col, label in ((axes[0], "k_mean_curve", "index where the mean curve reaches 0.9"),
                           (axes[1], "effective_rank", "effective rank (mean)")):
        for color, layer in zip(palette, layers):
            d = table[table["layer"] == layer].sort_values("n")
            ax.plot(d["n"], d[col], "o-", color=color, lw=1.2, ms=3, label=f"layer {layer + 1}")
        ref = float(table[col].median())
        ax.plot(ns, np.full_like(ns, ref), color="grey", ls=":", lw=0.9, label="β = 0")
        ax.plot(ns, ref * ns / np.median(ns), color="grey", ls="--", lw=0.9, label="β = 1")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(ns, [str(int(n)) for n in ns])
        ax.set_xlabel("sequence length n")
        ax.set_ylabel(label)
    axes[1].legend(fontsize=6, ncol=2)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    paths = save_figure(fig, Path(out) / "scaling_k90", formats)

    metrics = [m for m in FITTED if m in set(fits["metric"])]
    fig, ax = plt.subplots(figsize=(max(5.0, 0.5 * len(layers) + 3), 3.8))
    width = 0.8 / max(len(metrics), 1)
    xs = np.arange(len(layers) + 1)  # layers, then "all"
    for j, (metric, color) in enumerate(zip(metrics, sns.color_palette("deep", len(metrics)))):
        f = fits[fits["metric"] == metric].copy()
        f["pos"] = f["layer"].where(f["layer"] >= 0, len(layers))
        f = f.sort_values("pos")
        x = f["pos"].to_numpy() + (j - (len(metrics) - 1) / 2) * width
        ax.errorbar(x, f["beta"], yerr=[f["beta"] - f["low"], f["high"] - f["beta"]], fmt="o", ms=3.5, capsize=2,
                    color=color, label=FITTED[metric])
    for y in (0.0, 1.0):
        ax.axhline(y, color="grey", lw=0.7)
    for y in (NO_GROWTH_BELOW, LINEAR_ABOVE):
        ax.axhline(y, color="grey", lw=0.7, ls=":")
    ax.set_xticks(xs, [str(l + 1) for l in layers] + ["all"])
    ax.set_xlabel("layer")
    ax.set_ylabel("β in k ∝ n^β (95% bootstrap CI)")
    ax.legend(fontsize=6, loc="best")
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    return paths + save_figure(fig, Path(out) / "scaling_beta", formats)
