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

from attnspec.plots import save_figure, style
from attnspec.results import read_meta, read_table

FLOOR = 1e-8


def _mc(ax, frame: pd.DataFrame, label: str, color) -> None:  # noqa: ANN001
    f = frame.sort_values("k")
    est = np.clip(f["estimate"].to_numpy(float), FLOOR, None)
    ax.plot(f["k"], est, "o-", ms=3, color=color, label=label)
    ax.fill_between(f["k"], np.clip(f["ci_low"].to_numpy(float), FLOOR, None),
                    np.clip(f["ci_high"].to_numpy(float), FLOOR, None), color=color, alpha=0.2, lw=0)


def _marks(ax, n: int, k_thm: float, label: str) -> None:  # noqa: ANN001
    ax.axvline(k_thm, color="crimson", ls="--", lw=1, label=f"{label} k = {k_thm:.0f}")
    ax.axvline(n, color="grey", ls=":", lw=1, label=f"n = {n}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(FLOOR, 3)
    ax.set_xlabel("k")
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
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.2), squeeze=False)
    palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, panel in zip(axes[0], panels):
        if panel == "eq11":
            reading = "squared-two-sided"
            c = curves[(curves["claim"] == "linformer.lemma1.eq11") & (curves["reading"] == reading)].sort_values("k")
            ax.plot(c["k"], np.clip(c["bound"], FLOOR, None), color="black", label="bound exp(-(ε²-ε³)k/4)")
            ax.plot(c["k"], np.clip(c["exact"], FLOOR, None), color=palette[0], ls="-.", label="exact (χ²)")
            _mc(ax, g[g["reading"] == reading], "Monte Carlo", palette[1])
            ax.set_title(f"Lemma 1 eq. 11, |‖Rx‖²−1| > ε (ε = {eps})")
            _marks(ax, n, dims["linformer_k"], "Thm 1")
        elif panel == "eq12":
            rho = float(g12["rho"].max())
            c = curves[(curves["claim"] == "linformer.lemma1.eq12") & (curves["rho"] == rho)].sort_values("k")
            ax.plot(c["k"], np.clip(c["bound"], FLOOR, None), color="black", label="bound 2 exp(-(ε²-ε³)k/4)")
            if len(c):
                ax.plot(c["k"], np.clip(c["exact"], FLOOR, None), color=palette[0], ls="-.", label="exact")
            _mc(ax, g12[g12["rho"] == rho], "Monte Carlo", palette[1])
            ax.set_title(f"Lemma 1 eq. 12, tolerance ε‖x‖‖y‖, ρ = {rho:g}")
            _marks(ax, n, dims["linformer_k"], "Thm 1")
        elif panel == "thm1":
            t = table[(table["claim"] == "linformer.thm1.eq3") & (table["reading"] == "relative")]
            c = curves[curves["claim"] == "linformer.thm1.eq3"].sort_values("k")
            ax.plot(c["k"], np.clip(c["bound"], FLOOR, None), color="black", label="union bound 2n exp(-(ε²-ε³)k/4)")
            for i, ((att, w), f) in enumerate(t.groupby(["attention", "w"], sort=True)):
                if w not in ("random", "adv_bottom"):
                    continue
                _mc(ax, f, f"{att}, w = {w}", palette[i % len(palette)])
            ax.set_title("Theorem 1, ‖P̃w − Pw‖ > ε‖Pw‖")
            _marks(ax, n, dims["linformer_k"], "Thm 1")
        else:
            t = table[(table["claim"] == "linformer.thm2.eq8") & (table["construction"] == "paper")]
            for i, ((reading, row), f) in enumerate(t.groupby(["reading", "row"], sort=True)):
                _mc(ax, f, f"‖V‖ {reading}, {row}", palette[i % len(palette)])
            e21 = table[(table["claim"] == "linformer.thm2.eq21") & (table["row"] == "row0")]
            if len(e21):
                _mc(ax, e21, "eq. 21, row0", "black")
            ax.set_title("Theorem 2, E = δR, F = exp(−δ)R")
            _marks(ax, n, dims["theorem2_k_main"], "Thm 2")
        ax.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    return save_figure(fig, out_dir / "jl_failure_vs_k")


def plot_relative_errors(out_dir: Path) -> list[Path]:
    out_dir = Path(out_dir)
    if not (out_dir / "jl_errors.parquet").is_file():
        return []  # the table is optional (no sampled errors when no claim was run)
    samples = read_table(out_dir, "jl_errors")
    eps = float(read_meta(out_dir)["parameters"]["eps"])
    style()
    groups = [("linformer.lemma1.eq11", "Lemma 1: ‖Rx‖²/‖x‖² − 1 (Gaussian)"),
              ("linformer.thm1.eq3", "Theorem 1: log10 ‖P̃w − Pw‖/‖Pw‖"),
              ("linformer.thm2.eq8", "Theorem 2: error / (‖softmax(w)‖‖V‖₂), paper's E, F")]
    present = [(c, t) for c, t in groups if (samples["claim"] == c).any()]
    if not present:
        return []
    fig, axes = plt.subplots(1, len(present), figsize=(5.2 * len(present), 4.0), squeeze=False)
    for ax, (claim, title) in zip(axes[0], present):
        f = samples[samples["claim"] == claim]
        if claim == "linformer.lemma1.eq11":
            f = f[f["family"] == "gaussian"]
            key = "k"
        elif claim == "linformer.thm1.eq3":
            f = f[np.isfinite(f["value"]) & (f["value"] > 0)].assign(value=lambda x: np.log10(x["value"]))
            f = f[f["w"] == "random"]
            key = "k"
        else:
            f = f[(f["construction"] == "paper") & (f["row"] == "row0")]
            key = "k"
        for i, (kval, part) in enumerate(f.groupby(key, sort=True)):
            lab = f"k = {kval}"
            if claim == "linformer.thm1.eq3":
                for att, sub in part.groupby("attention", sort=True):
                    ax.hist(sub["value"], bins=50, histtype="step", density=True, label=f"{att}, {lab}")
            else:
                ax.hist(part["value"], bins=50, histtype="step", density=True, label=lab)
        threshold = {"linformer.lemma1.eq11": None, "linformer.thm1.eq3": float(np.log10(eps)), "linformer.thm2.eq8": eps}[claim]
        if threshold is not None:
            ax.axvline(threshold, color="crimson", ls="--", lw=1, label="ε (failure to the right)")
        ax.set_title(title)
        ax.set_ylabel("density")
        ax.legend(fontsize=6)
    fig.tight_layout()
    return save_figure(fig, out_dir / "jl_relative_errors")


def plot_jl(out_dir: Path) -> list[Path]:
    """Every jl-check figure from ``out_dir`` (jl.parquet, jl_curves.parquet, jl_errors.parquet, meta.json)."""
    return plot_failure_vs_k(out_dir) + plot_relative_errors(out_dir)
