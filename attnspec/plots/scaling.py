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


MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p")


def full_title(title: str, table: pd.DataFrame, fits: pd.DataFrame) -> str:
    """``title`` (model · corpus) with the lengths and the input count the fits rest on."""
    ns = sorted(int(n) for n in table["n"].unique())
    parts = [title] if title else []
    parts.append(f"n = {ns[0]}–{ns[-1]}" if len(ns) > 1 else f"n = {ns[0]}")
    if "inputs" in fits.columns and len(fits) and "inputs" not in title:
        parts.append(f"{int(fits['inputs'].iloc[0])} inputs")
    return " · ".join(parts)


def plot_scaling(table: pd.DataFrame, fits: pd.DataFrame, out: Path, *, title: str = "",
                 formats: Sequence[str] = ("png", "svg")) -> list[Path]:
    """Draw both figures from :func:`attnspec.spectra.scaling.scaling_table` and :func:`~attnspec.spectra.scaling.fit_scaling`.

    ``title`` names the run (model · corpus); the lengths and the number of inputs are added.
    """
    import seaborn as sns
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter, NullLocator

    from attnspec.plots import COLUMN_IN, OKABE_ITO, PAGE_IN, fit_title, paper_figure, readable_log_ticks
    from attnspec.spectra.reading import FITTED, LINEAR_ABOVE, NO_GROWTH_BELOW

    style()
    title = full_title(title, table, fits)
    layers = sorted(table["layer"].unique())
    palette = sns.color_palette("viridis", n_colors=len(layers))
    ns = np.array(sorted(table["n"].unique()), dtype=float)
    fig, axes = paper_figure(1, 2, width=PAGE_IN, height=3.1)
    # layers drawn side by side at each n (a small shift on the log axis) with their own marker,
    # so that layers with the same values stay distinguishable
    shift = {layer: 2 ** (0.06 * (i - (len(layers) - 1) / 2)) for i, layer in enumerate(layers)}
    for ax, col, label in ((axes[0, 0], "k_mean_curve", "k90: index where the mean curve reaches 0.9"),
                           (axes[0, 1], "effective_rank", "effective rank (mean over heads)")):
        for color, layer, marker in zip(palette, layers, MARKERS * 3):
            d = table[table["layer"] == layer].sort_values("n")
            ax.plot(d["n"] * shift[layer], d[col], marker=marker, ls="-", color=color, lw=1.0, ms=3.5,
                    label=f"layer {layer + 1}")
        # the references go through the data's geometric centre: slope 0 and slope 1 there
        v = table[col].to_numpy(float)
        v = v[np.isfinite(v) & (v > 0)]
        centre_n, centre_v = float(np.exp(np.log(ns).mean())), float(np.exp(np.log(v).mean()))
        ax.plot(ns, np.full_like(ns, centre_v), color="0.35", ls=":", lw=1.0, label="β = 0 (no growth)")
        ax.plot(ns, centre_v * ns / centre_n, color="0.35", ls="--", lw=1.0, label="β = 1 (linear)")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.xaxis.set_major_locator(FixedLocator(ns))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _p: f"{x:g}"))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.xaxis.set_minor_formatter(NullFormatter())
        readable_log_ticks(ax, "y")
        ax.set_xlabel("sequence length n (tokens)")
        ax.set_ylabel(label)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside right center", frameon=False)
    fig.suptitle(fit_title(title, PAGE_IN, 8.5))
    paths = save_figure(fig, Path(out) / "scaling_k90", formats)

    metrics = [m for m in FITTED if m in set(fits["metric"])]
    # a column while a layer's group of error bars keeps 0.2 in, else the page
    fig, axes = paper_figure(width=COLUMN_IN if 0.2 * (len(layers) + 1) + 1.0 <= COLUMN_IN else PAGE_IN, height=3.2)
    ax = axes[0, 0]
    width = 0.8 / max(len(metrics), 1)
    xs = np.arange(len(layers) + 1)  # layers, then "all"
    for j, (metric, color, marker) in enumerate(zip(metrics, OKABE_ITO, MARKERS)):
        f = fits[fits["metric"] == metric].copy()
        f["pos"] = f["layer"].where(f["layer"] >= 0, len(layers))
        f = f.sort_values("pos")
        x = f["pos"].to_numpy() + (j - (len(metrics) - 1) / 2) * width
        ax.errorbar(x, f["beta"], yerr=[f["beta"] - f["low"], f["high"] - f["beta"]], fmt=marker, ms=3.5, capsize=2,
                    color=color, label=FITTED[metric])
    for y in (0.0, 1.0):
        ax.axhline(y, color="grey", lw=0.7)
    for y in (NO_GROWTH_BELOW, LINEAR_ABOVE):
        ax.axhline(y, color="grey", lw=0.7, ls=":")
    ax.set_xticks(xs, [str(l + 1) for l in layers] + ["all"])
    ax.set_xlabel("layer (1 = first; all = mean over layers)")
    ax.set_ylabel("β in k ∝ n^β (95% bootstrap CI)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), frameon=False)  # below: the points fill the panel
    ax.set_title(fit_title(title, ax.figure.get_figwidth(), 8))
    return paths + save_figure(fig, Path(out) / "scaling_beta", formats)
