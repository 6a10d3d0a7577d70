"""Figures of ``attnspec sa-check``, made only from its saved tables (``sa.parquet``,
``error_map.parquet``): success probability vs d, d* vs k·log L with the least-squares
fit, and one instance's per-row error split on and off the target's support."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from attnspec.plots import COLUMN_IN, PAGE_IN, paper_figure, readable_log_ticks, save_figure, style


def success_curves(sa: pd.DataFrame, stem: Path) -> list[Path]:
    """P(‖B − B̂‖∞ <= δ) vs d with 95% CIs: one panel per L, one line per (k, method).

    Parameters
    ----------
    sa : pandas.DataFrame
        The ``sa`` table.
    stem : Path
        The figure's path without suffix: ``stem.png`` and ``stem.svg`` are written.

    Returns
    -------
    list of Path
        The files written (PNG and SVG).
    """
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
    fig, axes = paper_figure(rows, cols, width=PAGE_IN if cols > 1 else COLUMN_IN, height=2.4 * rows + 1.0, sharey=True)
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
                    ax.errorbar(
                        g["d"],
                        g["estimate"],
                        yerr=yerr,
                        fmt=mk,
                        color=c,
                        ms=4,
                        capsize=2,
                        label=lab,
                        mfc="none" if proj == "orthogonal" else c,
                    )
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
    fig.legend(
        handles,
        labels,
        loc="outside lower center",
        ncol=min(4, len(labels)),
        frameon=False,
        title="k, R, law (dotted: d = L; dashed: 1 − β)",
    )
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    return save_figure(fig, stem)


def d_star_fit(sa: pd.DataFrame, stem: Path) -> list[Path]:
    """d* vs k·log L (log-log) for Gaussian (asymptotic and exact) and orthogonal R, with
    the least-squares line d* = C k log L and the line d = L.

    Parameters
    ----------
    sa : pandas.DataFrame
        The ``sa`` table.
    stem : Path
        The figure's path without suffix: ``stem.png`` and ``stem.svg`` are written.

    Returns
    -------
    list of Path
        The files written (PNG and SVG).
    """
    style()
    sw = sa[sa["kind"] == "sweep"].copy()
    sw["L"] = sw["L"].astype(int)
    sw["k"] = sw["k"].astype(int)
    fits = sa[sa["kind"] == "fit"]
    fig, axes = paper_figure(1, 2, width=PAGE_IN, height=4.0)
    axes = axes[0]
    ax = axes[0]
    markers = {("gaussian", "asymptotic"): "o", ("gaussian", "exact"): "x", ("orthogonal", "exact"): "s"}
    Ls = sorted(sw["L"].unique())
    colors = dict(zip(Ls, plt.cm.viridis(np.linspace(0, 0.85, len(Ls)))))
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
    ax.set_title("d* against k log L")
    readable_log_ticks(ax)
    _legend_under(ax)
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
    ax.set_title("d* against the JL scale")
    readable_log_ticks(ax)
    _legend_under(ax)
    return save_figure(fig, stem)


def _legend_under(ax) -> None:  # noqa: ANN001
    """A panel's legend under its x label, where it covers no point."""
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), frameon=False, ncol=1)


def row_error_mass(em: pd.DataFrame) -> pd.DataFrame:
    """Per row i of one instance: the absolute error Σ_j |Â_ij − A_ij| split into its part on
    A's support and its part off it (where A = 0 and Â = eps·SA(X) > 0), rows ordered by
    their total.

    Parameters
    ----------
    em : pandas.DataFrame
        The ``error_map`` table of one instance (one row per entry (i, j)).

    Returns
    -------
    pandas.DataFrame
        Columns ``i, on, off, total, off_share``.
    """
    err = (em["A_hat"] - em["A"]).abs()
    on_support = em["A"] > 0
    rows = pd.DataFrame({"i": em["i"], "on": err.where(on_support, 0.0), "off": err.where(~on_support, 0.0)})
    out = rows.groupby("i", as_index=False).sum()
    out["total"] = out["on"] + out["off"]
    out["off_share"] = out["off"] / out["total"]
    return out.sort_values("total", ascending=False, kind="stable").reset_index(drop=True)


def row_mass_bars(em: pd.DataFrame, stem: Path) -> list[Path]:
    """One instance's rows as stacked bars: the error Σ_j |Â_ij − A_ij| on A's support and off
    it, rows ordered by their total. Off the support every entry of Â is about eps, small one
    by one; the bars show what the entries add up to per row.

    Parameters
    ----------
    em : pandas.DataFrame
        The ``error_map`` table.
    stem : Path
        The figure's path without suffix: ``stem.png`` and ``stem.svg`` are written.

    Returns
    -------
    list of Path
        The files written (PNG and SVG).
    """
    from attnspec.plots import OKABE_ITO, legend_below

    style()
    mass = row_error_mass(em)
    L = int(em["i"].max()) + 1
    fig, axes = paper_figure(width=COLUMN_IN, height=2.6)
    ax = axes[0, 0]
    x = np.arange(len(mass))
    on = ax.bar(x, mass["on"], width=0.85, color=OKABE_ITO[0], lw=0, label="on A's support")
    off = ax.bar(
        x,
        mass["off"],
        bottom=mass["on"],
        width=0.85,
        color=OKABE_ITO[1],
        lw=0,
        label="off the support (A = 0, Â ≈ eps)",
    )
    ax.set_xlim(-0.8, len(mass) - 0.2)
    ax.set_xticks([])
    ax.set_xlabel(f"row i of the instance ({L} rows, largest error first)")
    ax.set_ylabel("Σ over the row of |Â − A|")
    ax.grid(axis="x", visible=False)
    legend_below(fig, [on, off], [on.get_label(), off.get_label()], ncol=1)
    d = int(em["d"].iloc[0])
    below = f" (< d* = {int(em['d_star'].iloc[0]):,})" if "d_star" in em and int(em["d_star"].iloc[0]) > d else ""
    fig.suptitle(f"L = {L}, k = {int(em['k'].iloc[0])}, d = {d:,}{below}")
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
    from attnspec.storage.results import read_table

    out_dir = Path(out_dir)
    sa = read_table(out_dir, "sa")
    paths = success_curves(sa, out_dir / "sa_success_vs_d")
    if (sa["kind"] == "sweep").any():
        paths += d_star_fit(sa, out_dir / "sa_dstar_vs_klogL")
    if (out_dir / "error_map.parquet").is_file():
        paths += row_mass_bars(read_table(out_dir, "error_map"), out_dir / "sa_row_error")
    return paths
