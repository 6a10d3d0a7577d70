"""Figures of ``attnspec sa-check``, made only from its saved tables (``sa.parquet``,
``error_map.parquet``): success probability vs d, d* vs k·log L with the least-squares
fit, and the error maps of A vs Â for one instance."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.colors import LogNorm

from matplotlib.ticker import FuncFormatter

from attnspec.plots import COLUMN_IN, PAGE_IN, _plain_number, paper_figure, readable_log_ticks, save_figure, style


def success_curves(sa: pd.DataFrame, stem: Path) -> list[Path]:
    """P(‖B − B̂‖∞ <= δ) vs d with 95% CIs: one panel per L, one line per (k, method)."""
    style()
    cur = sa[sa["kind"].isin(["curve", "sweep_curve"])].copy()
    cur["L"] = cur["L"].astype(int)
    cur["k"] = cur["k"].astype(int)
    Ls = sorted(cur["L"].unique())
    n = len(Ls)
    all_k = sorted(cur["k"].unique())  # one colour per k in every panel, as the one legend says
    colour_of = dict(zip(all_k, plt.cm.viridis(np.linspace(0, 0.9, max(len(all_k), 1)))))
    cols = min(n, 3)
    rows = int(np.ceil(n / cols))
    fig, axes = paper_figure(rows, cols, width=PAGE_IN if cols > 1 else COLUMN_IN, height=2.4 * rows + 1.0,
                             sharey=True)
    for ax, L in zip(axes.ravel(), Ls):
        sub = cur[cur["L"] == L]
        ks = sorted(sub["k"].unique())
        for k in ks:
            c = colour_of[k]
            for (proj, method), g in sub[sub["k"] == k].groupby(["projection", "method"]):
                g = g.sort_values("d")
                ls = {"asymptotic": "-", "exact": "o"}.get(method, "-")
                mk = "s" if proj == "orthogonal" else "o"
                lab = f"k={k} {proj[:5]} {method[:5]}"
                if method == "asymptotic":
                    ax.plot(g["d"], g["estimate"], ls, color=c, label=lab)
                    ax.fill_between(g["d"], g["ci_low"], g["ci_high"], color=c, alpha=0.2, lw=0)
                else:
                    yerr = np.vstack([g["estimate"] - g["ci_low"], g["ci_high"] - g["estimate"]])
                    ax.errorbar(g["d"], g["estimate"], yerr=yerr, fmt=mk, color=c, ms=4, capsize=2,
                                label=lab, mfc="none" if proj == "orthogonal" else c)
        ax.axvline(L, color="k", ls=":", lw=1)
        ax.text(L, 0.02, " d = L", fontsize=7)
        beta = float(sub["beta"].iloc[0])
        ax.axhline(1 - beta, color="grey", ls="--", lw=0.8)
        ax.set_xscale("log")
        ax.set_title(f"L = {L}, δ = {sub['delta'].iloc[0]:g}, eps = {sub['eps'].iloc[0]:g}")
        ax.set_xlabel("d (projection; model width 2d)")
        ax.set_ylabel("P(‖B − B̂‖∞ ≤ δ)")
        readable_log_ticks(ax, "x")
    # one legend for the figure (the same k and methods in every panel), not one per panel
    first = axes.ravel()[0]
    handles, labels = first.get_legend_handles_labels()
    for ax in axes.ravel()[1:n]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, loc="outside lower center", ncol=min(4, len(labels)), frameon=False,
               title="k, R, law (dotted: d = L; dashed: 1 − β)")
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    return save_figure(fig, stem)


def d_star_fit(sa: pd.DataFrame, stem: Path) -> list[Path]:
    """d* vs k·log L (log-log) for Gaussian (asymptotic and exact) and orthogonal R, with
    the least-squares line d* = C k log L and the line d = L."""
    style()
    sw = sa[sa["kind"] == "sweep"].copy()
    sw["L"] = sw["L"].astype(int)
    sw["k"] = sw["k"].astype(int)
    fits = sa[sa["kind"] == "fit"]
    fig, axes = paper_figure(1, 2, width=PAGE_IN, height=3.4)
    axes = axes[0]
    ax = axes[0]
    markers = {("gaussian", "asymptotic"): "o", ("gaussian", "exact"): "x", ("orthogonal", "exact"): "s"}
    Ls = sorted(sw["L"].unique())
    colors = dict(zip(Ls, plt.cm.plasma(np.linspace(0, 0.85, len(Ls)))))
    for (proj, method), g in sw.groupby(["projection", "method"]):
        for n, (L, gl) in enumerate(g.groupby("L")):
            mk = markers.get((proj, method), ".")
            kw = {"facecolors": "none", "edgecolors": colors[L]} if proj == "orthogonal" else {"color": colors[L]}
            ax.scatter(gl["k_log_L"], gl["d"], marker=mk, s=28, label=f"{proj} {method}" if n == 0 else None, **kw)
    x = np.geomspace(sw["k_log_L"].min(), sw["k_log_L"].max(), 50)
    row = fits[fits["model"] == "k log L"]
    if len(row):
        C = float(row["C"].iloc[0])
        ax.plot(x, C * x, "k-", lw=1, label=f"LS fit d* = {C:.3g}·k log L (R² = {float(row['r2'].iloc[0]):.3f})")
    for L in Ls:
        ax.axhline(L, color=colors[L], ls=":", lw=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("k · log L")
    ax.set_ylabel("d* (success ≥ 1 − β)")
    ax.set_title("d* vs k log L (dotted: d = L per L)")
    readable_log_ticks(ax)
    ax.legend()
    ax = axes[1]
    g = sw[(sw["projection"] == "gaussian") & (sw["method"] == "asymptotic")]
    xx = g["max_row_norm"] ** 2 * np.log(g["L"]) / g["delta"] ** 2
    for L, gl in g.assign(x=xx).groupby("L"):
        ax.scatter(gl["x"], gl["d"], color=colors[L], label=f"L={L}", s=20)
    row = fits[fits["model"] == "max‖b_i‖² log L / δ²"]
    if len(row):
        C = float(row["C"].iloc[0])
        xs = np.geomspace(xx.min(), xx.max(), 50)
        ax.plot(xs, C * xs, "k-", lw=1, label=f"LS fit C = {C:.3g} (R² = {float(row['r2'].iloc[0]):.3f})")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("max‖b_i‖² · log L / δ²")
    ax.set_ylabel("d* (Gaussian, asymptotic law)")
    ax.set_title("d* vs the JL scale of the instance")
    readable_log_ticks(ax)
    ax.legend()
    return save_figure(fig, stem)


def error_maps(em: pd.DataFrame, stem: Path) -> list[Path]:
    """One instance as four maps on ONE logarithmic colour scale with one colour bar: A (on
    its support), Â = eps·SA(X), |Â − A| and |SAN(X) − row-normalised A|; rows and columns
    labelled, the suptitle giving only the instance's parameters and its ‖B − B̂‖∞."""
    style()
    L = int(em["i"].max()) + 1

    def grid(col: str) -> np.ndarray:
        out = np.zeros((L, L))
        out[em["i"].to_numpy(), em["j"].to_numpy()] = em[col].to_numpy()
        return out

    A, Ah, P, Pt = grid("A"), grid("A_hat"), grid("san"), grid("san_target")
    maps = [(np.where(A > 0, A, np.nan), "A (white: off the support)"),
            (Ah, "Â = eps·SA(X)"),
            (np.abs(Ah - A), "|Â − A| (off the support ≈ eps)"),
            (np.abs(P - Pt), "|SAN(X) − row-normalised A|")]
    pos = np.concatenate([m[np.isfinite(m) & (m > 0)] for m, _ in maps])
    # one scale for all four: at most 8 decades below the largest value, so that round-off
    # zeros do not stretch it
    vmax = float(pos.max())
    norm = LogNorm(vmin=max(float(pos.min()), vmax * 1e-8), vmax=vmax)
    fig, axes = paper_figure(2, 2, width=PAGE_IN, height=6.6)
    im = None
    for ax, (M, title) in zip(axes.flat, maps):
        shown = np.where(np.isfinite(M) & (M > 0), M, np.nan)
        im = ax.imshow(np.clip(shown, norm.vmin, None), norm=norm, cmap="viridis", interpolation="nearest")
        ax.set_title(title)
        ax.set_xlabel("column j")
        ax.set_ylabel("row i")
        ax.grid(False)
    cb = fig.colorbar(im, ax=list(axes.flat), shrink=0.8, pad=0.02)
    cb.set_label("entry (log scale, one scale for all four maps)")
    cb.ax.yaxis.set_major_formatter(FuncFormatter(_plain_number))
    err = f"; ‖B − B̂‖∞ = {float(em['err_inf'].iloc[0]):.2g}" if "err_inf" in em else ""
    d = int(em["d"].iloc[0])
    below = f" (< d* = {int(em['d_star'].iloc[0]):,})" if "d_star" in em and int(em["d_star"].iloc[0]) > d else ""
    fig.suptitle(f"One instance: L = {L}, k = {int(em['k'].iloc[0])} nonzeros per row, d = {d:,}{below}{err}")
    return save_figure(fig, stem)


def plot_expressivity(out_dir: Path) -> list[Path]:
    """Every sa-check figure from the tables saved in ``out_dir`` (``sa``, ``error_map``).

    Parameters
    ----------
    out_dir : Path, a results directory written by ``attnspec sa-check --out``

    Returns
    -------
    list of Path, the figure files written (PNG and SVG)
    """
    from attnspec.results import read_table

    out_dir = Path(out_dir)
    sa = read_table(out_dir, "sa")
    paths = success_curves(sa, out_dir / "sa_success_vs_d")
    if (sa["kind"] == "sweep").any():
        paths += d_star_fit(sa, out_dir / "sa_dstar_vs_klogL")
    if (out_dir / "error_map.parquet").is_file():
        paths += error_maps(read_table(out_dir, "error_map"), out_dir / "sa_error_map")
    return paths
