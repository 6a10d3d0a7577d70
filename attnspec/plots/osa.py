"""Figures of ``attnspec osa-check``, made only from its saved tables.

* ``orthogonality_vs_K``: Theorem 3.1 — median ||YᵀY − I||₂ with its 10–90 % band and the
  medians of bounds (10) and (11) against the Newton–Schulz step K, one column per
  schedule; a second row shows the range of σ(B) (the bound's proof needs σ <= 1).
* ``kappa_vs_alpha``: Theorems 4.3/4.4 — κ(J) and ||J1||₂/alpha against alpha per basis, the
  maximum and the median over draws.
* ``time_vs_n``: forward time (min over repeats) against N on log–log axes, with fitted
  exponents.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from attnspec.plots import COLUMN_IN, PAGE_IN, legend_below, paper_figure, readable_log_ticks, save_figure, style
from attnspec.storage.results import read_table

_FLOOR = 1e-17  # log axes: exact zeros are drawn at this floor


def plot_orthogonality(frame: pd.DataFrame, stem: Path) -> list[Path]:
    """Theorem 3.1 figure from the ``thm31`` table.

    Parameters
    ----------
    frame : pandas.DataFrame
        The ``thm31`` table (``thm31.parquet``).
    stem : Path
        The figure's path without suffix: ``stem.png`` and ``stem.svg`` are written.

    Returns
    -------
    list of Path
        The files written (PNG and SVG).
    """
    style()
    schedules = list(dict.fromkeys(frame["schedule"]))
    fig, axes = paper_figure(
        2,
        len(schedules),
        width=PAGE_IN if len(schedules) > 1 else COLUMN_IN,
        height=4.8,
        sharex=True,
        gridspec_kw={"height_ratios": [2.2, 1]},
    )
    for j, sch in enumerate(schedules):
        sub = frame[frame["schedule"] == sch]
        g = sub.groupby("steps")
        k = np.array(sorted(sub["steps"].unique()))
        ax = axes[0, j]
        err = g["error"]
        ax.fill_between(
            k,
            np.maximum(err.quantile(0.1).to_numpy(), _FLOOR),
            np.maximum(err.quantile(0.9).to_numpy(), _FLOOR),
            alpha=0.25,
            color="C0",
            lw=0,
        )
        ax.plot(k, np.maximum(err.median().to_numpy(), _FLOOR), "o-", color="C0", label="||YᵀY − I||₂ (median, 10–90%)")
        ax.plot(k, np.maximum(g["bound10"].median().to_numpy(), _FLOOR), "s--", color="C1", label="bound (10) (median)")
        ax.plot(k, np.maximum(g["bound11"].median().to_numpy(), _FLOOR), "^:", color="C2", label="bound (11) (median)")
        viol = sub[sub["error"] > sub["bound10"] * (1 + 1e-9) + 1e-12]
        if not viol.empty:
            ax.scatter(
                viol["steps"],
                np.maximum(viol["error"], _FLOOR),
                marker="x",
                color="C3",
                s=18,
                zorder=5,
                label="error > bound (10)",
            )
        ax.axhspan(_FLOOR, 1e-12, color="0.85", alpha=0.5, lw=0, label="< 1e-12: float64 rounding")
        ax.set_yscale("log")
        ax.set_title(sch + (f"\n{len(viol)} above bound (10)" if not viol.empty else "\nnone above bound (10)"))
        if j == 0:
            ax.set_ylabel("orthogonality error / bound")
        ax2 = axes[1, j]
        ax2.fill_between(
            k, g["sigma_min"].min().to_numpy(), g["sigma_max"].max().to_numpy(), alpha=0.3, color="C4", lw=0
        )
        ax2.plot(k, g["sigma_max"].max().to_numpy(), color="C4", lw=1, label="σ(B) range over instances")
        ax2.axhline(1.0, color="k", lw=0.8, ls="--")
        ax2.set_xlabel("Newton–Schulz steps K")
        if j == 0:
            ax2.set_ylabel("σ(B)")
    # one legend below the panels (the same entries in every column), covering no data
    entries: dict = {}
    for ax in axes.ravel():
        for h, lab in zip(*ax.get_legend_handles_labels()):
            entries.setdefault(lab, h)
    fig.legend(list(entries.values()), list(entries), loc="outside lower center", ncol=3, frameon=False)
    fig.suptitle("osa-check · Theorem 3.1")
    return save_figure(fig, stem)


#: The statistics over draws a κ figure shows, and how: the maximum is what the verdicts
#: quote (the worst draw), the median the typical one.
KAPPA_STATS = {"max": ("-", "maximum over draws"), "median": (":", "median over draws")}


def plot_kappa(frame: pd.DataFrame, stem: Path) -> list[Path]:
    """Theorems 4.3/4.4 figure from the ``jacobian`` table: per basis, the maximum and the
    median over draws of κ(J) − 1 (single head), of κ(J) (several heads, the multi-head
    reading) and of ||J1||₂/alpha, against alpha.

    κ(J) − 1 rather than κ(J): near alpha → 0 every single-head κ is 1 + O(alpha), so on a
    κ axis the bases coincide with one another and with the multi-head curve's floor. QR and
    the cubic Newton–Schulz basis agree to three digits: QR is drawn last, with open markers
    on a dashed line, so it shows where it lies on top of the other.

    Parameters
    ----------
    frame : pandas.DataFrame
        The ``jacobian`` table (``jacobian.parquet``).
    stem : Path
        The figure's path without suffix: ``stem.png`` and ``stem.svg`` are written.

    Returns
    -------
    list of Path
        The files written (PNG and SVG).
    """
    from matplotlib.lines import Line2D

    from attnspec.plots import OKABE_ITO, legend_below

    style()
    single = frame[frame["reading"] == "single"]
    multi = frame[frame["reading"] != "single"]
    panels = [
        ("single", "single head: κ(J) − 1"),
        *([("multi", "multi-head reading: κ(J)")] if len(multi) else []),
        ("j1", "single head: ||J1||₂ / alpha"),
    ]
    fig, axes = paper_figure(1, len(panels), width=PAGE_IN, height=2.9)
    bases = list(dict.fromkeys(single["basis"]))
    bases = [b for b in bases if b != "qr"] + [b for b in bases if b == "qr"]  # qr last: on top
    colour = {b: OKABE_ITO[i % len(OKABE_ITO)] for i, b in enumerate(bases)}
    for ax, (panel, title) in zip(axes[0], panels):
        data = multi if panel == "multi" else single
        for basis in [b for b in bases if (data["basis"] == b).any()]:
            sub = data[data["basis"] == basis]
            value = {"single": sub["kappa_j"] - 1, "multi": sub["kappa_j"], "j1": sub["j1_over_alpha"]}[panel]
            g = value.groupby(sub["alpha"])
            a = np.array(sorted(sub["alpha"].unique()))
            qr = basis == "qr"
            for stat, (ls, _) in KAPPA_STATS.items():
                y = np.maximum(getattr(g, stat)().to_numpy(), _FLOOR)
                ax.plot(
                    a,
                    y,
                    "--" if qr and stat == "max" else ls,
                    marker="o" if stat == "max" else None,
                    ms=4 if qr else 2.5,
                    mfc="white" if qr else colour[basis],
                    lw=1.0,
                    color=colour[basis],
                    zorder=3 if qr else 2,
                )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("alpha")
        ax.set_title(title)
        readable_log_ticks(ax)
    axes[0, 0].set_ylabel("value at each alpha")
    heads = sorted(int(h) for h in multi["heads"].unique()) if len(multi) else []
    handles = [
        Line2D(
            [],
            [],
            color=c,
            marker="o",
            ms=3,
            mfc="white" if b == "qr" else c,
            ls="--" if b == "qr" else "-",
            label=b + (f" ({', '.join(map(str, heads))} heads in the multi-head panel)" if b == "qr" and heads else ""),
        )
        for b, c in colour.items()
    ]
    handles += [
        Line2D([], [], color="0.3", ls=ls, marker="o" if stat == "max" else None, ms=3, label=label)
        for stat, (ls, label) in KAPPA_STATS.items()
    ]
    legend_below(fig, handles, [h.get_label() for h in handles], ncol=3)
    fig.suptitle("osa-check · Theorems 4.3, 4.4")
    return save_figure(fig, stem)


def plot_timing(frame: pd.DataFrame, stem: Path) -> list[Path]:
    """Forward time vs N, log–log, with the fitted exponent of each method in the legend.

    Parameters
    ----------
    frame : pandas.DataFrame
        The ``timing`` table (``timing.parquet``).
    stem : Path
        The figure's path without suffix: ``stem.png`` and ``stem.svg`` are written.

    Returns
    -------
    list of Path
        The files written (PNG and SVG).
    """
    style()
    fig, axes = paper_figure(width=COLUMN_IN, height=3.3)
    ax = axes[0, 0]
    for i, (meth, sub) in enumerate(frame.groupby("method", sort=False)):
        sub = sub.sort_values("n")
        if len(sub) >= 2:
            slope = float(np.polyfit(np.log(sub["n"].to_numpy(float)), np.log(sub["seconds"].to_numpy(float)), 1)[0])
            lab = f"{meth} (∝ N^{slope:.2f})"
        else:
            lab = meth
        ax.plot(sub["n"], sub["seconds"], "o-", color=f"C{i}", label=lab)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("sequence length N")
    ax.set_ylabel("forward CPU time (s, min of repeats)")
    d_v = int(frame["d_v"].iloc[0]) if "d_v" in frame else None
    ax.set_title(f"osa-check · d_v = {d_v}, one head")
    handles, labels = ax.get_legend_handles_labels()
    legend_below(fig, handles, labels, ncol=1)
    return save_figure(fig, stem)


def plot_osa_check(out_dir: Path) -> list[Path]:
    """Every osa-check figure from the tables saved in ``out_dir``.

    Parameters
    ----------
    out_dir : Path
        A results directory written by ``attnspec osa-check --out``; the figures are written into it.

    Returns
    -------
    list of Path
        The files written (PNG and SVG).
    """
    out_dir = Path(out_dir)
    paths = plot_orthogonality(read_table(out_dir, "thm31"), out_dir / "orthogonality_vs_K")
    paths += plot_kappa(read_table(out_dir, "jacobian"), out_dir / "kappa_vs_alpha")
    if (out_dir / "timing.parquet").is_file():
        paths += plot_timing(read_table(out_dir, "timing"), out_dir / "time_vs_n")
    return paths
