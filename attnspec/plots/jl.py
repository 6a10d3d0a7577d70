"""Figures of `attnspec jl-check`, made only from a saved results directory.

* ``jl_failure_vs_k``: failure probability against k for the key claims — the paper's
  bound, the exact curve (Gaussian R), the Monte Carlo estimate with its 95% band, a
  mark at the theorem's k and at n. A run on real attention matrices (``--model``) shows
  Theorem 1 on those matrices only, for the two choices of w that separate them (w = V's
  column and the adversarial w = adv_top), in both readings, for k up to n.
* ``jl_relative_errors``: distributions of the relative errors at three values of k (on
  the real matrices, for a run that has them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from attnspec.plots import COLUMN_IN, MARK, PAGE_IN, paper_figure, readable_log_ticks, save_figure, style
from attnspec.storage.results import read_meta, read_table

FLOOR = 1e-8  # the lowest probability an axis shows


#: Okabe–Ito colours, without the vermillion of the theorem's k (MARK) or the black of the bound
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#F0E442", "#999999")
#: The two choices of w a real-attention figure shows: w = a column of V, the case the
#: theorem is about, and adv_top, the w that makes the additive reading hardest.
REAL_W = {"value": ("-", "o"), "adv_top": ("--", "s")}


def real_matrices(table: pd.DataFrame, meta: dict[str, Any]) -> list[str]:
    """The attention matrices of a run that are real (``minilm[0]``, ...): every name in the
    table's ``attention`` column that is not one of the synthetic kinds the run drew.

    Parameters
    ----------
    table : pandas.DataFrame
        A jl-check table (``jl``, ``jl_errors``).
    meta : dict
        The run's meta.json (its ``parameters.attention_kinds``).

    Returns
    -------
    list of str
        The real matrices' names, sorted.
    """
    if "attention" not in table.columns:
        return []
    synthetic = set(meta.get("parameters", {}).get("attention_kinds") or ())
    return sorted(a for a in table["attention"].dropna().unique() if a not in synthetic)


def run_title(meta: dict[str, Any]) -> str:
    """The run label a jl-check figure carries: model and corpus for a run on real attention,
    then n and ε (the rest belongs in the caption).

    Parameters
    ----------
    meta : dict
        The run's meta.json.

    Returns
    -------
    str
        The parts joined by `` · ``.
    """
    params = meta["parameters"]
    head = [str(params["model"]), str(params.get("data"))] if params.get("model") else ["jl-check"]
    return " · ".join([*head, f"n = {int(params['n'])}", f"ε = {float(params['eps']):.3g}"])


def _mc(ax, frame: pd.DataFrame, label: str | None, color, ls: str = "-", marker: str = "o") -> list[float]:  # noqa: ANN001
    """Monte Carlo estimates with their 95% band; a point with no failure is drawn as what it
    is, an upper bound (a downward triangle at the interval's upper end), not as a zero
    plunging to the axis floor. Returns the plotted values (for the axis limits)."""
    f = frame.sort_values("k")
    k = f["k"].to_numpy(float)
    est = f["estimate"].to_numpy(float)
    lo, hi = f["ci_low"].to_numpy(float), f["ci_high"].to_numpy(float)
    seen = est > 0
    ax.plot(k[seen], est[seen], marker=marker, ls=ls, ms=3, lw=1.1, color=color, label=label)
    ax.fill_between(k[seen], np.clip(lo[seen], FLOOR, None), hi[seen], color=color, alpha=0.18, lw=0)
    if (~seen).any():
        ax.plot(
            k[~seen], hi[~seen], "v", ms=4.5, color=color, mfc="white", mew=1.1, label=None if seen.any() else label
        )
    return [float(v) for v in np.concatenate([est[seen], hi]) if v > 0]


def _marks(ax, n: int, k_thm: float, label: str) -> None:  # noqa: ANN001
    """The theorem's k and n as vertical lines, named beside them (not in the legend)."""
    ax.axvline(k_thm, color=MARK, ls="--", lw=1)
    ax.axvline(n, color="0.4", ls=":", lw=1)
    left, right = (n, k_thm) if n <= k_thm else (k_thm, n)
    y = 0.97
    ax.text(
        left,
        y,
        f"{'n' if left == n else label + ' k'} ",
        transform=ax.get_xaxis_transform(),
        ha="right",
        va="top",
        fontsize=7,
        color="0.3" if left == n else MARK,
    )
    ax.text(
        right,
        y,
        f" {'n' if right == n else label + ' k'}",
        transform=ax.get_xaxis_transform(),
        ha="left",
        va="top",
        fontsize=7,
        color="0.3" if right == n else MARK,
    )


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


def _style_key(ax, colours: dict[str, str], styles: dict[str, tuple[str, str]], extra: list | None = None) -> None:  # noqa: ANN001
    """A compact legend: one entry per colour and one per line style, instead of every pair."""
    from matplotlib.lines import Line2D

    handles = list(extra or [])
    handles += [Line2D([], [], color=c, lw=1.5, label=name) for name, c in colours.items()]
    handles += [
        Line2D([], [], color="0.3", ls=ls, marker=m, ms=3, lw=1, label=name) for name, (ls, m) in styles.items()
    ]
    # below the panel: the curves fill the panel down to its upper-bound markers
    _key_below(ax, handles, ncol=3)


def _key_below(ax, handles: list, ncol: int = 2) -> None:  # noqa: ANN001
    """A panel's own legend under its x label, where it covers no data."""
    ax.legend(
        handles=handles,
        ncol=ncol,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.2),
        frameon=False,
        columnspacing=0.8,
        handlelength=1.8,
    )


def plot_failure_vs_k(out_dir: Path) -> list[Path]:
    """Failure probability against k: Lemma 1, Theorem 1 and Theorem 2 beside their bounds
    (``jl_failure_vs_k``); on real attention, one panel per reading, one colour per matrix.

    Parameters
    ----------
    out_dir : Path
        A results directory written by ``attnspec jl-check --out``; the figure is written into it.

    Returns
    -------
    list of Path
        The files written (PNG and SVG).
    """
    out_dir = Path(out_dir)
    meta = read_meta(out_dir)
    table = read_table(out_dir, "jl")
    if "sweep" in table.columns:  # the (eps, k) grid of Theorem 2 is at other eps: not on these panels
        table = table[table["sweep"].isna()]
    if real_matrices(table, meta):
        return _plot_real_failure(table, meta, out_dir)
    curves = read_table(out_dir, "jl_curves")
    n = int(meta["parameters"]["n"])
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
    fig, axes = paper_figure(rows, cols, width=PAGE_IN if cols > 1 else COLUMN_IN, height=2.75 * rows + 0.9)
    for ax in axes.flat[len(panels) :]:
        ax.set_visible(False)
    for ax, panel in zip(axes.flat, panels):
        if panel == "eq11":
            values = _panel_eq11(ax, curves, g, n, dims)
        elif panel == "eq12":
            values = _panel_eq12(ax, curves, g12, n, dims)
        elif panel == "thm1":
            values = _panel_thm1(ax, table, curves, n, dims)
        else:
            values = _panel_thm2(ax, table, n, dims)
        _log_axes(ax, values)
    fig.legend(
        handles=[
            Line2D([], [], ls="", marker="v", mfc="white", mec="0.3", ms=4.5, label="no failure seen: 95% upper bound"),
            Line2D([], [], color=MARK, ls="--", lw=1, label="the theorem's k"),
            Line2D([], [], color="0.4", ls=":", lw=1, label="n"),
        ],
        loc="outside lower center",
        ncol=3,
        frameon=False,
    )
    fig.suptitle(run_title(meta))
    return save_figure(fig, out_dir / "jl_failure_vs_k")


def trials_span(table: pd.DataFrame) -> tuple[int, int]:
    """The fewest and the most trials drawn at one point (sequential points stop once their
    verdict settles, so the budget is not what was drawn); (0, 0) without a trials column.

    Parameters
    ----------
    table : pandas.DataFrame
        The ``jl`` table.

    Returns
    -------
    fewest, most : int
    """
    drawn = table["trials"].dropna() if "trials" in table else pd.Series(dtype=float)
    return (int(drawn.min()), int(drawn.max())) if len(drawn) else (0, 0)


def _plot_real_failure(table: pd.DataFrame, meta: dict[str, Any], out_dir: Path) -> list[Path]:
    """Theorem 1 on real attention matrices: one panel per reading, one colour per matrix,
    one line style per w (REAL_W), k from the sweep's smallest up to n, and the claimed failure
    probability where it is below 1. The axis stops at n: where the theorem's own k lies beyond
    it (no rank reduction) the label says where; below n it is drawn dashed."""
    from matplotlib.lines import Line2D

    style()
    n = int(meta["parameters"]["n"])
    k_thm = float(meta["dimensions"]["linformer_k"])
    mats = real_matrices(table, meta)
    t = table[
        (table["claim"] == "linformer.thm1.eq3")
        & table["attention"].isin(mats)
        & table["w"].isin(list(REAL_W))
        & (table["k"] <= n)
    ]
    readings = [r for r in ("relative", "additive") if (t["reading"] == r).any()]
    if not readings:
        return []
    titles = {"relative": "relative: ‖P̃w − Pw‖ > ε‖Pw‖", "additive": "additive: ‖P̃w − Pw‖ > ε‖P‖_F‖w‖"}
    colours = {m: PALETTE[i % len(PALETTE)] for i, m in enumerate(mats)}
    fig, axes = paper_figure(1, len(readings), width=PAGE_IN if len(readings) > 1 else COLUMN_IN, height=3.1)
    for ax, reading in zip(axes[0], readings):
        values: list[float] = []
        for (mat, w), f in t[t["reading"] == reading].groupby(["attention", "w"], sort=True):
            values += _mc(ax, f, None, colours[mat], *REAL_W[w])
        claim = t[(t["reading"] == reading) & (t["bound"] < 1)].drop_duplicates("k").sort_values("k")
        if len(claim):  # the claimed failure probability, where it says something
            ax.plot(claim["k"], claim["bound"], color="black", lw=1.1)
            values += [float(v) for v in claim["bound"]]
        if k_thm < n:
            ax.axvline(k_thm, color="0.4", ls="--", lw=1)
        _log_axes(ax, values)
        ax.set_xlim(float(t["k"].min()) / 1.3, n * 1.3)
        ax.axvline(n, color="0.4", ls=":", lw=1)
        ax.text(n, 0.03, "n ", transform=ax.get_xaxis_transform(), ha="right", va="bottom", fontsize=7, color="0.3")
        if k_thm > n:  # named on the axis, not drawn: it lies beyond every k a matrix can take
            ax.set_xlabel(f"k (projected dimension; Theorem 1's k = {k_thm:.0f} > n)")
        ax.set_title(titles.get(reading, reading))
    handles = [Line2D([], [], color=c, lw=1.5, label=m) for m, c in colours.items()]
    handles += [
        Line2D([], [], color="0.3", ls=ls, marker=mk, ms=3, lw=1, label=f"w = {w.replace('_', ' ')}")
        for w, (ls, mk) in REAL_W.items()
    ]
    handles += [
        Line2D([], [], ls="", marker="v", mfc="white", mec="0.3", ms=4.5, label="no failure seen: 95% upper bound")
    ]
    if (t["bound"] < 1).any():
        handles += [Line2D([], [], color="black", lw=1.1, label="claimed (eq. 20)")]
    if k_thm < n:
        handles += [Line2D([], [], color="0.4", ls="--", lw=1, label=f"Theorem 1's k = {k_thm:.0f}")]
    fig.legend(handles=handles, loc="outside lower center", ncol=min(len(handles), 4), frameon=False)
    fig.suptitle(run_title(meta))
    return save_figure(fig, out_dir / "jl_failure_vs_k")


def _panel_eq11(ax: Any, curves: pd.DataFrame, g: pd.DataFrame, n: int, dims: dict[str, Any]) -> list[float]:
    """Lemma 1 eq. 11: Monte Carlo beside the bound and the exact χ² law. Returns the values drawn (for the axes' range)."""
    values: list[float] = []
    reading = "squared-two-sided"
    c = curves[(curves["claim"] == "linformer.lemma1.eq11") & (curves["reading"] == reading)].sort_values("k")
    ax.plot(c["k"], np.clip(c["bound"], FLOOR, None), color="black", lw=1.1, label="bound exp(−(ε²−ε³)k/4)")
    ax.plot(c["k"], np.clip(c["exact"], FLOOR, None), color=PALETTE[0], ls="-.", lw=1.1, label="exact (χ²)")
    values += _mc(ax, g[g["reading"] == reading], "Monte Carlo", PALETTE[1])
    values += [float(v) for v in c["exact"] if v > 0]
    ax.set_title("Lemma 1 eq. 11: P(|‖Rx‖² − 1| > ε)")
    _marks(ax, n, dims["linformer_k"], "Thm 1")
    _key_below(ax, ax.get_legend_handles_labels()[0])
    return values


def _panel_eq12(ax: Any, curves: pd.DataFrame, g12: pd.DataFrame, n: int, dims: dict[str, Any]) -> list[float]:
    """Lemma 1 eq. 12 at the largest ρ: Monte Carlo, bound and exact law. Returns the values drawn (for the axes' range)."""
    values: list[float] = []
    rho = float(g12["rho"].max())
    c = curves[(curves["claim"] == "linformer.lemma1.eq12") & (curves["rho"] == rho)].sort_values("k")
    ax.plot(c["k"], np.clip(c["bound"], FLOOR, None), color="black", lw=1.1, label="bound 2 exp(−(ε²−ε³)k/4)")
    if len(c):
        ax.plot(c["k"], np.clip(c["exact"], FLOOR, None), color=PALETTE[0], ls="-.", lw=1.1, label="exact")
        values += [float(v) for v in c["exact"] if v > 0]
    values += _mc(ax, g12[g12["rho"] == rho], "Monte Carlo", PALETTE[1])
    ax.set_title(f"Lemma 1 eq. 12: tolerance ε‖x‖‖y‖, ρ = {rho:g}")
    _marks(ax, n, dims["linformer_k"], "Thm 1")
    _key_below(ax, ax.get_legend_handles_labels()[0])
    return values


def _panel_thm1(ax: Any, table: pd.DataFrame, curves: pd.DataFrame, n: int, dims: dict[str, Any]) -> list[float]:
    """Theorem 1 (relative reading): one colour per attention, one style per w. A random w and one along
    P's bottom singular directions fail at every k < n; a column of V, which lies along P's top
    directions, is where the probability falls with k: the three styles show that the claim "for every
    w" is decided by w's direction. Returns the values drawn (for the axes' range)."""
    from matplotlib.lines import Line2D

    values: list[float] = []
    t = table[(table["claim"] == "linformer.thm1.eq3") & (table["reading"] == "relative")]
    c = curves[curves["claim"] == "linformer.thm1.eq3"].sort_values("k")
    ax.plot(c["k"], np.clip(c["bound"], FLOOR, None), color="black", lw=1.1)
    atts = sorted(t["attention"].dropna().unique())
    colours = {a: PALETTE[i % len(PALETTE)] for i, a in enumerate(atts)}
    ws = {"value": ("-", "o"), "random": ("--", "s"), "adv_bottom": (":", "^")}
    names = {"value": "w = V's column", "random": "w random", "adv_bottom": "w bottom σ"}
    for (att, w), f in t.groupby(["attention", "w"], sort=True):
        if w in ws:
            values += _mc(ax, f, None, colours[att], *ws[w])
    ax.set_title("Theorem 1: P(‖P̃w − Pw‖ > ε‖Pw‖) by w")
    _marks(ax, n, dims["linformer_k"], "Thm 1")
    _style_key(
        ax,
        {a.replace("_", " "): col for a, col in colours.items()},
        {names[w]: st for w, st in ws.items() if (t["w"] == w).any()},
        [Line2D([], [], color="black", lw=1.1, label="union bound")],
    )
    return values


def _panel_thm2(ax: Any, table: pd.DataFrame, n: int, dims: dict[str, Any]) -> list[float]:
    """Theorem 2 eq. 8 (the proof's construction), with eq. 21 on row 0. Returns the values drawn (for the axes' range)."""
    from matplotlib.lines import Line2D

    values: list[float] = []
    t = table[(table["claim"] == "linformer.thm2.eq8") & (table["construction"] == "paper")]
    rows_ = sorted(t["row"].dropna().unique())
    colours = {r: PALETTE[i % len(PALETTE)] for i, r in enumerate(rows_)}
    readings = {"frobenius": ("-", "o"), "spectral": ("--", "s")}
    for (reading, row), f in t.groupby(["reading", "row"], sort=True):
        values += _mc(ax, f, None, colours[row], *readings.get(reading, ("-.", "^")))
    e21 = table[(table["claim"] == "linformer.thm2.eq21") & (table["row"] == "row0")]
    extra = []
    if len(e21):
        values += _mc(ax, e21, None, "black", ":", "D")
        extra = [Line2D([], [], color="black", ls=":", marker="D", ms=3, lw=1, label="eq. 21, row0")]
    ax.set_title("Theorem 2 eq. 8: E = δR, F = exp(−δ)R")
    _marks(ax, n, dims["theorem2_k_main"], "Thm 2")
    _style_key(
        ax,
        {f"row {r.removeprefix('row')}" if r.startswith("row") else r: c for r, c in colours.items()},
        {f"‖V‖ {r}": st for r, st in readings.items()},
        extra,
    )
    return values


def _quantile_range(values: np.ndarray, marks: list[float], q: float = 0.005) -> tuple[float, float]:
    """An x range that shows the bulk of the distributions (quantiles q, 1 − q) and the
    marked thresholds, with a margin; no outlier stretches it."""
    lo, hi = np.quantile(values, [q, 1 - q]) if len(values) else (0.0, 1.0)
    lo, hi = min([lo, *marks]), max([hi, *marks])
    pad = 0.05 * (hi - lo or 1.0)
    return float(lo - pad), float(hi + pad)


def plot_relative_errors(out_dir: Path) -> list[Path]:
    """The sampled relative errors' distributions (``jl_relative_errors``); none when the
    run kept no samples (no ``jl_errors`` table).

    Parameters
    ----------
    out_dir : Path
        A results directory written by ``attnspec jl-check --out``; the figure is written into it.

    Returns
    -------
    list of Path
        The files written (PNG and SVG).
    """
    out_dir = Path(out_dir)
    if not (out_dir / "jl_errors.parquet").is_file():
        return []  # the table is optional (no sampled errors when no claim was run)
    samples = read_table(out_dir, "jl_errors")
    meta = read_meta(out_dir)
    eps = float(meta["parameters"]["eps"])
    style()
    real = real_matrices(samples, meta)
    # (selection, title, x label); Theorems 1 and 2 are read on a log10 scale (errors span decades)
    if real:  # the real matrices only: a synthetic P has no place beside them
        groups = [
            (("linformer.thm1.eq3", m), f"Theorem 1, {m}, w = V's column", "log₁₀ ‖P̃w − Pw‖ / ‖Pw‖") for m in real
        ]
    else:
        groups = [
            (("linformer.lemma1.eq11", None), "Lemma 1, Gaussian R", "‖Rx‖²/‖x‖² − 1"),
            (("linformer.thm1.eq3", "softmax"), "Theorem 1, softmax P, random w", "log₁₀ ‖P̃w − Pw‖ / ‖Pw‖"),
            (("linformer.thm2.eq8", None), "Theorem 2, paper's E, F, row 0", "log₁₀ error / (‖softmax‖ ‖V‖₂)"),
        ]
    present = [g for g in groups if (samples["claim"] == g[0][0]).any()]
    if not present:
        return []
    cols = min(len(present), 3)
    fig, axes = paper_figure(1, cols, width=PAGE_IN if cols > 1 else COLUMN_IN, height=2.8)
    colour_of = {k: PALETTE[i % len(PALETTE)] for i, k in enumerate(sorted(samples["k"].dropna().unique()))}
    for ax, ((claim, which), title, xlabel) in zip(axes[0], present):
        f = samples[samples["claim"] == claim]
        if claim == "linformer.lemma1.eq11":
            f = f[f["family"] == "gaussian"]
            marks = [-eps, eps]
        else:
            if claim == "linformer.thm1.eq3":
                w = "value" if real else "random"
                f = f[np.isfinite(f["value"]) & (f["value"] > 0) & (f["w"] == w)]
                if "attention" in f.columns and (f["attention"] == which).any():
                    f = f[f["attention"] == which]  # one pattern: three distributions, not nine
            else:
                f = f[(f["construction"] == "paper") & (f["row"] == "row0")]
                f = f[np.isfinite(f["value"]) & (f["value"] > 0)]
            f = f.assign(value=np.log10(f["value"]))
            marks = [float(np.log10(eps))]
        lo, hi = _quantile_range(f["value"].to_numpy(float), marks)
        bins = np.linspace(lo, hi, 60)
        for kval, part in f.groupby("k", sort=True):
            ax.hist(
                part["value"].clip(lo, hi),
                bins=bins,
                histtype="step",
                density=True,
                lw=1.2,
                color=colour_of[kval],
                label=f"k = {kval}",
            )
        for x in marks:
            ax.axvline(x, color=MARK, ls="--", lw=1)
        ax.set_xlim(lo, hi)
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("density")
    from matplotlib.lines import Line2D

    handles = {h.get_label(): h for ax in axes[0] for h in ax.get_legend_handles_labels()[0]}
    keys = sorted(handles, key=lambda lab: int(lab.split("= ")[1]))
    fig.legend(
        [Line2D([], [], color=handles[k].get_edgecolor(), lw=1.2) for k in keys]
        + [Line2D([], [], color=MARK, ls="--", lw=1)],
        keys
        + ["log₁₀ ε: failure right of the dashed line" if real else "ε (Lemma 1: ±ε): failure beyond the dashed line"],
        loc="outside lower center",
        ncol=len(keys) + 1 if cols > 1 else 2,
        frameon=False,
    )
    fig.suptitle(run_title(meta))
    return save_figure(fig, out_dir / "jl_relative_errors")


def plot_jl(out_dir: Path) -> list[Path]:
    """Every jl-check figure from ``out_dir`` (jl.parquet, jl_curves.parquet, jl_errors.parquet, meta.json).

    Parameters
    ----------
    out_dir : Path
        A results directory written by ``attnspec jl-check --out``; the figures are written into it.

    Returns
    -------
    list of Path
        The files written (PNG and SVG).
    """
    return plot_failure_vs_k(out_dir) + plot_relative_errors(out_dir)
