"""Figures of `attnspec jl-check`, made only from a saved results directory.

* ``jl_failure_vs_k``: failure probability against k for the key claims — the paper's
  bound, the exact curve (Gaussian R), the Monte Carlo estimate with its 95% band, a
  mark at the theorem's k and at n.
* ``jl_relative_errors``: distributions of the relative errors at three values of k.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from attnspec.plots import readable_log_ticks, save_figure, style
from attnspec.results import read_meta, read_table

FLOOR = 1e-8  # the lowest probability an axis shows


def _mc(ax, frame: pd.DataFrame, label: str, color) -> list[float]:  # noqa: ANN001
    """Monte Carlo estimates with their 95% band; a point with no failure is drawn as what it
    is, an upper bound (a downward triangle at the interval's upper end), not as a zero
    plunging to the axis floor. Returns the plotted values (for the axis limits)."""
    f = frame.sort_values("k")
    k = f["k"].to_numpy(float)
    est = f["estimate"].to_numpy(float)
    lo, hi = f["ci_low"].to_numpy(float), f["ci_high"].to_numpy(float)
    seen = est > 0
    ax.plot(k[seen], est[seen], "o-", ms=3.5, color=color, label=label)
    ax.fill_between(k[seen], np.clip(lo[seen], FLOOR, None), hi[seen], color=color, alpha=0.18, lw=0)
    if (~seen).any():
        ax.plot(k[~seen], hi[~seen], "v", ms=5, color=color, mfc="white", mew=1.2,
                label=None if seen.any() else label)
    return [float(v) for v in np.concatenate([est[seen], hi]) if v > 0]


def _marks(ax, n: int, k_thm: float, label: str) -> None:  # noqa: ANN001
    ax.axvline(k_thm, color="crimson", ls="--", lw=1, label=f"{label} k = {k_thm:.0f}")
    ax.axvline(n, color="grey", ls=":", lw=1, label=f"n = {n}")


def _log_axes(ax, values: list[float]) -> None:  # noqa: ANN001
    """Log axes with plain tick labels on k (1, 10, 100, 1000) and decades on the probability;
    the lower limit follows the data (never below FLOOR)."""
    ax.set_xscale("log")
    ax.set_yscale("log")
    low = min([v for v in values if v > 0] or [FLOOR])
    ax.set_ylim(max(FLOOR, min(low / 3, 1e-2)), 2)  # at least two decades, so ticks can be read
    readable_log_ticks(ax)
    ax.set_xlabel("k (projected dimension)")
    ax.set_ylabel("failure probability")


def plot_failure_vs_k(out_dir: Path) -> list[Path]:
    out_dir = Path(out_dir)
    meta = read_meta(out_dir)
    table = read_table(out_dir, "jl")
    if "sweep" in table.columns:  # the (eps, k) grid of Theorem 2 is at other eps: not on these panels
        table = table[table["sweep"].isna()]
    curves = read_table(out_dir, "jl_curves")
    n = int(meta["parameters"]["n"])
    eps = float(meta["parameters"]["eps"])
    dims = meta["dimensions"]
    style()
    panels = []
    gauss = table["family"] == "gaussian" if "family" in table.columns else pd.Series(False, index=table.index)
    g = table[(table["claim"] == "linformer.lemma1.eq11") & gauss]
    if len(g):
        panels.append("eq11")
    g12 = table[(table["claim"] == "linformer.lemma1.eq12") & gauss & (table["reading"] == "product")]
    if len(g12):
        panels.append("eq12")
    if (table["claim"] == "linformer.thm1.eq3").any():
        panels.append("thm1")
    if (table["claim"] == "linformer.thm2.eq8").any():
        panels.append("thm2")
    if not panels:
        return []
    from matplotlib.lines import Line2D

    cols = 2 if len(panels) > 1 else 1
    rows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5.6 * cols, 4.4 * rows), squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, panel in zip(axes.flat, panels):
        values: list[float] = []
        if panel == "eq11":
            reading = "squared-two-sided"
            c = curves[(curves["claim"] == "linformer.lemma1.eq11") & (curves["reading"] == reading)].sort_values("k")
            ax.plot(c["k"], np.clip(c["bound"], FLOOR, None), color="black", label="bound exp(-(ε²-ε³)k/4)")
            ax.plot(c["k"], np.clip(c["exact"], FLOOR, None), color=palette[0], ls="-.", label="exact (χ²)")
            values += _mc(ax, g[g["reading"] == reading], "Monte Carlo", palette[1])
            values += [float(v) for v in c["exact"] if v > 0]
            ax.set_title(f"Lemma 1 eq. 11, |‖Rx‖²−1| > ε (ε = {eps})")
            _marks(ax, n, dims["linformer_k"], "Thm 1")
        elif panel == "eq12":
            rho = float(g12["rho"].max())
            c = curves[(curves["claim"] == "linformer.lemma1.eq12") & (curves["rho"] == rho)].sort_values("k")
            ax.plot(c["k"], np.clip(c["bound"], FLOOR, None), color="black", label="bound 2 exp(-(ε²-ε³)k/4)")
            if len(c):
                ax.plot(c["k"], np.clip(c["exact"], FLOOR, None), color=palette[0], ls="-.", label="exact")
                values += [float(v) for v in c["exact"] if v > 0]
            values += _mc(ax, g12[g12["rho"] == rho], "Monte Carlo", palette[1])
            ax.set_title(f"Lemma 1 eq. 12, tolerance ε‖x‖‖y‖, ρ = {rho:g}")
            _marks(ax, n, dims["linformer_k"], "Thm 1")
        elif panel == "thm1":
            t = table[(table["claim"] == "linformer.thm1.eq3") & (table["reading"] == "relative")]
            c = curves[curves["claim"] == "linformer.thm1.eq3"].sort_values("k")
            ax.plot(c["k"], np.clip(c["bound"], FLOOR, None), color="black", label="union bound 2n exp(-(ε²-ε³)k/4)")
            shown = [(key, f) for key, f in t.groupby(["attention", "w"], sort=True) if key[1] in ("random", "adv_bottom")]
            for i, ((att, w), f) in enumerate(shown):
                values += _mc(ax, f, f"{att}, w = {w}", palette[i % len(palette)])
            ax.set_title("Theorem 1, ‖P̃w − Pw‖ > ε‖Pw‖")
            _marks(ax, n, dims["linformer_k"], "Thm 1")
        else:
            t = table[(table["claim"] == "linformer.thm2.eq8") & (table["construction"] == "paper")]
            for i, ((reading, row), f) in enumerate(t.groupby(["reading", "row"], sort=True)):
                values += _mc(ax, f, f"‖V‖ {reading}, {row}", palette[i % len(palette)])
            e21 = table[(table["claim"] == "linformer.thm2.eq21") & (table["row"] == "row0")]
            if len(e21):
                values += _mc(ax, e21, "eq. 21, row0", "black")
            ax.set_title("Theorem 2, E = δR, F = exp(−δ)R")
            _marks(ax, n, dims["theorem2_k_main"], "Thm 2")
        _log_axes(ax, values)
        handles, labels = ax.get_legend_handles_labels()
        handles.append(Line2D([], [], ls="", marker="v", mfc="white", mec="0.3", ms=5))
        labels.append("no failure seen: 95% upper bound")
        ax.legend(handles, labels, fontsize=7.5, loc="best", framealpha=0.9)
    fig.tight_layout()
    return save_figure(fig, out_dir / "jl_failure_vs_k")


def plot_relative_errors(out_dir: Path) -> list[Path]:
    out_dir = Path(out_dir)
    if not (out_dir / "jl_errors.parquet").is_file():
        return []  # the table is optional (no sampled errors when no claim was run)
    samples = read_table(out_dir, "jl_errors")
    eps = float(read_meta(out_dir)["parameters"]["eps"])
    style()
    # (claim, title, x label); Theorems 1 and 2 are read on a log10 scale (errors span decades)
    groups = [("linformer.lemma1.eq11", "Lemma 1 (Gaussian R)", "‖Rx‖²/‖x‖² − 1"),
              ("linformer.thm1.eq3", "Theorem 1, w random", "log10 of ‖P̃w − Pw‖ / ‖Pw‖"),
              ("linformer.thm2.eq8", "Theorem 2, paper's E, F, row 0", "log10 of error / (‖softmax(w)‖ ‖V‖₂)")]
    present = [g for g in groups if (samples["claim"] == g[0]).any()]
    if not present:
        return []
    fig, axes = plt.subplots(1, len(present), figsize=(4.6 * len(present), 4.0), squeeze=False)
    styles = ["-", "--", ":"]
    for ax, (claim, title, xlabel) in zip(axes[0], present):
        f = samples[samples["claim"] == claim]
        if claim == "linformer.lemma1.eq11":
            f = f[f["family"] == "gaussian"]
        elif claim == "linformer.thm1.eq3":
            f = f[np.isfinite(f["value"]) & (f["value"] > 0) & (f["w"] == "random")]
            f = f.assign(value=np.log10(f["value"]))
        else:
            f = f[(f["construction"] == "paper") & (f["row"] == "row0")]
            f = f[np.isfinite(f["value"]) & (f["value"] > 0)]
            f = f.assign(value=np.log10(f["value"]))
        palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for i, (kval, part) in enumerate(f.groupby("k", sort=True)):
            color = palette[i % len(palette)]  # one colour per k
            if claim == "linformer.thm1.eq3":  # one line style per attention pattern
                for j, (att, sub) in enumerate(part.groupby("attention", sort=True)):
                    ax.hist(sub["value"], bins=50, histtype="step", density=True, color=color,
                            ls=styles[j % len(styles)], label=f"k = {kval}, {att}")
            else:
                ax.hist(part["value"], bins=50, histtype="step", density=True, color=color, label=f"k = {kval}")
        if claim == "linformer.lemma1.eq11":
            for x in (-eps, eps):
                ax.axvline(x, color="crimson", ls="--", lw=1, label="±ε (failure outside)" if x > 0 else None)
        else:
            ax.axvline(np.log10(eps), color="crimson", ls="--", lw=1, label="ε (failure to the right)")
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("density")
        ax.legend(fontsize=7.5, framealpha=0.9)
    fig.tight_layout()
    return save_figure(fig, out_dir / "jl_relative_errors")


def plot_jl(out_dir: Path) -> list[Path]:
    """Every jl-check figure from ``out_dir`` (jl.parquet, jl_curves.parquet, jl_errors.parquet, meta.json)."""
    return plot_failure_vs_k(out_dir) + plot_relative_errors(out_dir)
