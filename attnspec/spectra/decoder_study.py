"""The decoder study: a causal language model's P beside an encoder's, with intervals over inputs.

Four questions are asked of a causal decoder (SmolLM2-135M) against the encoder the
study already has (all-MiniLM-L6-v2), each answered from saved spectrum results only:

1. Is its attention low rank in Linformer's sense?  :func:`run_statistics` — c at the reading
   index n/4, k90/n and the other metrics per layer and over layers, with 95% intervals.
2. Does the rank it needs grow with n?  :func:`beta_fits` — β of k ∝ n^β per layer and over
   layers (:func:`attnspec.spectra.scaling_fit.fit_per_input`, bootstrap over inputs), on any subset of
   a scaling run's lengths (the range both models share); :func:`beta_difference`.
3. How do the metrics change with depth?  :func:`depth_trend` — the least-squares slope of
   a metric against relative depth (0 = first layer, 1 = last) with an interval, and the
   means of the first and last third of the layers.
4. How does a causal P differ from an encoder's at the same n?  :func:`contrast` — the
   difference of the overall means with a Welch interval.

Intervals are over inputs (independent documents), never over heads or layers (the heads
and layers of one input are correlated). As in :mod:`attnspec.spectra.compare`, a quantity kept per
input (``inputs.parquet``: k90, the ranks for error ε, effective rank) gets the exact
standard error of a mean of independent inputs; the others (c at n/4, row entropy, stable
rank, σ₂/σ₁, numerical rank) only have per-head standard deviations over inputs, and the
standard deviation of a weighted sum Σ w_l X_l is at most Σ |w_l| sd(X_l) (Minkowski's
inequality, whatever the correlations), which bounds the standard error from above: such
intervals (method ``bound``) cover at least their nominal level.

Rank-like quantities are divided by n (``k90 / n``), so that runs at different n and models
with different numbers of layers are read on one scale; the layer axis is relative depth.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from attnspec.errors import InputError, ResultsError

#: Quantities of the study: name → (label, divided by n).
QUANTITIES: dict[str, tuple[str, bool]] = {
    "c_at": ("c at n/4", False),
    "reach_index": ("k90 / n", True),
    "effective_rank": ("effective rank / n", True),
    "rank_for_error_0.1": ("rank for error ≤ 0.1, / n", True),
    "numerical_rank": ("numerical rank / n", True),
    "stable_rank": ("stable rank", False),
    "sigma2_over_sigma1": ("σ₂/σ₁", False),
    "row_entropy": ("row entropy", False),
    "c_centred": ("centred c at n/4", False),  # P less its mean row (attnspec.spectra.centred); absent in older runs
}
#: Where each quantity lies by construction: an interval is cut to it (the true value lies
#: there, so the cut interval covers it whenever the whole one did; tiny samples give
#: t-intervals far wider than the range).
RANGES: dict[str, tuple[float, float]] = {q: (0.0, 1.0) for q in QUANTITIES if q != "stable_rank"} | {
    "stable_rank": (1.0, np.inf)
}
#: Fewer inputs than this in any run of the study: its numbers are shown, not read.
FEW_INPUTS = 8


@dataclass(frozen=True)
class Run:
    """One spectrum run (a Figure 1 run, or one length of a scaling run)."""

    path: Path
    experiment: str
    model: str
    data: str
    n: int
    inputs: int
    causal: bool
    layers: int
    heads: int
    scaling: Path | None  # the scaling directory the run belongs to, if any


def _run_of(path: Path, experiment: str, scaling: Path | None) -> Run:
    from attnspec.spectra.result_checks import check_spectrum_run

    meta = check_spectrum_run(path)
    ident = meta["identity"]
    return Run(
        path=Path(path),
        experiment=experiment,
        model=str(ident.get("model")),
        data=str(ident.get("data")),
        n=int(ident["seq_len"]),
        inputs=int(meta["inputs_done"]),
        causal=bool(meta.get("causal", False)),
        layers=int(meta.get("num_layers") or 0),
        heads=int(meta.get("num_heads") or 0),
        scaling=scaling,
    )


def collect_runs(experiments: Sequence[Any], results: Path) -> tuple[list[Run], list[str]]:
    """Every finished spectrum run of the spectrum experiments, and one line per result that
    could not be read (missing results are not listed: the report says which experiments ran).

    A scaling experiment gives one :class:`Run` per finished length.

    Parameters
    ----------
    experiments : sequence of Experiment
        The report's experiments (``command``, ``name``); those of other commands are skipped.
    results : Path
        The folder holding one results directory per experiment, by name.

    Returns
    -------
    runs : list of Run
    problems : list of str
        One line per result that could not be read, naming the experiment.
    """
    from attnspec.spectra.scaling_fit import read_runs

    runs: list[Run] = []
    problems: list[str] = []
    for exp in experiments:
        if exp.command != "spectrum":
            continue
        d = Path(results) / exp.name
        meta_path = d / "meta.json"
        if not meta_path.is_file():
            continue
        try:
            import json

            kind = json.loads(meta_path.read_text()).get("kind")
            if kind == "spectrum-scaling":
                runs += [_run_of(p, exp.name, d) for _, p in sorted(read_runs(d).items())]
            elif kind == "spectrum":
                runs.append(_run_of(d, exp.name, None))
        except (ResultsError, InputError, OSError, ValueError) as e:
            # the report shows this line: the results folder by its name in the report, no path of this machine
            problems.append(f"`{exp.name}`: {str(e).replace(str(Path(results)), 'results')}")
    return runs, problems


def best_run(runs: Sequence[Run], *, causal: bool, data: str, n: int) -> Run | None:
    """The run of that kind, corpus and length with the most inputs (ties: the first).

    Parameters
    ----------
    runs : sequence of Run
    causal : bool
        A decoder's (causal P) run, or an encoder's.
    data : str
        The corpus.
    n : int
        The length.

    Returns
    -------
    Run or None
        None when no run matches.
    """
    found = [r for r in runs if r.causal == causal and r.data == data and r.n == n]
    return max(found, key=lambda r: r.inputs) if found else None


def shared_lengths(runs: Sequence[Run], data: str) -> list[int]:
    """The lengths at which both a causal and an encoder run exist on ``data``, increasing.

    Parameters
    ----------
    runs : sequence of Run
    data : str
        The corpus.

    Returns
    -------
    list of int
    """
    dec = {r.n for r in runs if r.causal and r.data == data}
    enc = {r.n for r in runs if not r.causal and r.data == data}
    return sorted(dec & enc)


# ---------------------------------------------------------------------------------------
# Per-layer and overall statistics of one run (question 1, and the inputs of 3 and 4)
# ---------------------------------------------------------------------------------------
def run_frames(run: Path, at: int | None = None) -> dict[str, tuple[pd.DataFrame, pd.DataFrame | None, str | None]]:
    """Quantity → (per-head mean/std/count, per-input frame or None, its column), as
    :mod:`attnspec.spectra.compare` reads them; ``c_at`` at ``at`` (default n/4, 128 at n = 512).

    Parameters
    ----------
    run : Path
        A spectrum results directory.
    at : int, optional
        The index at which c is read (default n/4, 128 at n = 512).

    Returns
    -------
    dict of str to tuple
    """
    from attnspec.spectra.compare import _quantities, default_reading_index

    at = default_reading_index([run]) if at is None else at
    frames = _quantities(Path(run), at)
    return {q: frames[q] for q in QUANTITIES if q in frames}


def layer_stats(
    per_head: pd.DataFrame,
    per_input: pd.DataFrame | None = None,
    column: str | None = None,
    *,
    scale: float = 1.0,
    level: float = 0.95,
) -> pd.DataFrame:
    """:func:`attnspec.spectra.compare.layer_statistics` with a t-interval and relative depth.

    Returns one row per layer (``layer`` 0-based, ``depth`` = layer / (L − 1), 0 when L = 1)
    and the overall row (``layer`` −1, ``depth`` NaN): ``mean``, ``se``, ``dof``, ``low``,
    ``high``, ``count``, ``method``; values multiplied by ``scale`` (1/n for ranks).

    Parameters
    ----------
    per_head : pandas.DataFrame
        One row per (layer, head) with ``mean``, ``std``, ``count`` (over inputs).
    per_input : pandas.DataFrame, optional
        One row per (input, layer) with the head mean of the quantity in ``column``.
    column : str, optional
        The quantity's column in ``per_input``.
    scale : float
        Factor applied to every value (1/n for ranks, making them shares of n).
    level : float
        Confidence level, in (0, 1).

    Returns
    -------
    pandas.DataFrame
    """
    from scipy import stats as sps

    from attnspec.spectra.compare import layer_statistics

    st = layer_statistics(per_head, per_input, column).copy()
    st["mean"] *= scale
    st["se"] *= scale
    t = np.array([sps.t.ppf(0.5 + level / 2, d) if d > 0 else np.nan for d in st["dof"]])
    st["low"] = st["mean"] - t * st["se"]
    st["high"] = st["mean"] + t * st["se"]
    layers = int((st["layer"] >= 0).sum())
    st["depth"] = np.where(st["layer"] >= 0, st["layer"] / max(layers - 1, 1), np.nan)
    return st


def run_statistics(run: Path, at: int | None = None, level: float = 0.95) -> pd.DataFrame:
    """Every :data:`QUANTITIES` of a run per layer and overall, with ``quantity``, ``label``,
    ``n``, ``at`` added (see :func:`layer_stats`); the run's quantities only. Intervals are
    cut to :data:`RANGES`.

    Parameters
    ----------
    run : Path
        A spectrum results directory.
    at : int, optional
        The index at which c is read (default n/4, 128 at n = 512).
    level : float
        Confidence level, in (0, 1).

    Returns
    -------
    pandas.DataFrame
    """
    from attnspec.spectra.compare import default_reading_index

    at = default_reading_index([run]) if at is None else at
    n = int(_seq_len(run))
    out = []
    for q, (per_head, per_input, col) in run_frames(run, at).items():
        label, per_n = QUANTITIES[q]
        st = layer_stats(per_head, per_input, col, scale=1.0 / n if per_n else 1.0, level=level)
        low, high = RANGES[q]
        st["low"], st["high"] = st["low"].clip(low, high), st["high"].clip(low, high)
        out.append(st.assign(quantity=q, label=label, n=n, at=at))
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame()


def _seq_len(run: Path) -> int:
    from attnspec.storage.results import read_meta

    return int(read_meta(run)["identity"]["seq_len"])


# ---------------------------------------------------------------------------------------
# Question 3: the trend over depth
# ---------------------------------------------------------------------------------------
def depth_trend(
    per_head: pd.DataFrame,
    per_input: pd.DataFrame | None = None,
    column: str | None = None,
    *,
    scale: float = 1.0,
    level: float = 0.95,
) -> dict[str, Any]:
    """The least-squares slope of a quantity's layer means against relative depth, with an interval.

    The slope b = Σ_l w_l μ_l, w_l = (x_l − x̄) / Σ (x − x̄)², x_l = l / (L − 1), is the change
    from the first layer to the last of the fitted line. Its standard error is exact when
    the quantity is kept per input (the slope of every input's layer profile, then a
    t-interval over inputs) and otherwise bounded above by Σ |w_l| · mean_h(sd_lh) / √m
    (module docstring). Also returns the means of the first and last third of the layers
    (at least one layer each) and their difference (last − first) with an interval of the
    same kind.

    Returns a dict: ``slope``, ``low``, ``high``, ``first``, ``last``, ``change``,
    ``change_low``, ``change_high``, ``method``, ``inputs``, ``layers``; NaN intervals with
    fewer than two inputs or two layers.

    Parameters
    ----------
    per_head : pandas.DataFrame
        One row per (layer, head) with ``mean``, ``std``, ``count`` (over inputs).
    per_input : pandas.DataFrame, optional
        One row per (input, layer) with the head mean of the quantity in ``column``.
    column : str, optional
        The quantity's column in ``per_input``.
    scale : float
        Factor applied to every value (1/n for ranks, making them shares of n).
    level : float
        Confidence level, in (0, 1).

    Returns
    -------
    dict
    """
    from scipy import stats as sps

    layers = sorted(int(v) for v in per_head["layer"].unique())
    L = len(layers)
    x = np.arange(L) / max(L - 1, 1)
    w = (x - x.mean()) / ((x - x.mean()) @ (x - x.mean())) if L > 1 else np.zeros(L)
    third = max(1, L // 3)
    contrast_w = np.zeros(L)
    contrast_w[:third] -= 1 / third
    contrast_w[L - third :] += 1 / third  # (L,) last-third mean − first-third mean
    if per_input is not None and column is not None:
        wide = per_input.pivot(index="input", columns="layer", values=column)[layers].dropna()  # (m, L)
        v = wide.to_numpy(dtype=float) * scale
        m = v.shape[0]
        means = v.mean(axis=0) if m else np.full(L, np.nan)
        slopes, changes = v @ w, v @ contrast_w  # (m,) per input
        se_s = slopes.std(ddof=1) / np.sqrt(m) if m > 1 else np.nan
        se_c = changes.std(ddof=1) / np.sqrt(m) if m > 1 else np.nan
        method = "per-input"
    else:
        d = per_head[per_head["count"] > 0]
        g = d.groupby("layer")
        means = g["mean"].mean().reindex(layers).to_numpy(dtype=float) * scale
        sd = g["std"].mean().reindex(layers).to_numpy(dtype=float) * scale  # bound on each layer mean's sd
        m = int(d["count"].min()) if len(d) else 0
        se_s = float(np.abs(w) @ sd) / np.sqrt(m) if m > 1 else np.nan
        se_c = float(np.abs(contrast_w) @ sd) / np.sqrt(m) if m > 1 else np.nan
        method = "bound"
    t = float(sps.t.ppf(0.5 + level / 2, m - 1)) if m > 1 else np.nan
    slope = float(w @ means) if L > 1 else np.nan
    change = float(contrast_w @ means) if L > 1 else np.nan
    if L < 2:
        se_s = se_c = np.nan
    return {
        "slope": slope,
        "low": slope - t * se_s,
        "high": slope + t * se_s,
        "first": float(means[:third].mean()),
        "last": float(means[L - third :].mean()),
        "change": change,
        "change_low": change - t * se_c,
        "change_high": change + t * se_c,
        "method": method,
        "inputs": m,
        "layers": L,
        "third": third,
        "level": level,
    }


def run_depth_trends(run: Path, quantities: Sequence[str], at: int | None = None, level: float = 0.95) -> pd.DataFrame:
    """:func:`depth_trend` of each of ``quantities`` the run has, one row each.

    The slope's interval (``low``, ``high``) resamples inputs: it says how precisely these
    layers' profile is known on this corpus. Whether the model's layers show a trend is a
    statement about layers: ``rho`` (Spearman, layer index against layer mean) with its
    permutation ``p`` over the layers' orderings, ``phrase`` and ``statement`` by the one
    depth rule (:mod:`attnspec.numerics.depth`).

    Parameters
    ----------
    run : Path
        A spectrum results directory.
    quantities : sequence of str
        The quantities wanted (of :data:`QUANTITIES`).
    at : int, optional
        The index at which c is read (default n/4, 128 at n = 512).
    level : float
        Confidence level, in (0, 1).

    Returns
    -------
    pandas.DataFrame
    """
    from attnspec.numerics.depth import MIN_LAYERS, depth_permutation_test, depth_phrase, depth_sentence

    n = _seq_len(run)
    rows = []
    for q, (per_head, per_input, col) in run_frames(run, at).items():
        if q in quantities:
            scale = 1.0 / n if QUANTITIES[q][1] else 1.0
            row = {
                "quantity": q,
                "label": QUANTITIES[q][0],
                **depth_trend(per_head, per_input, col, scale=scale, level=level),
            }
            means = per_head[per_head["count"] > 0].groupby("layer")["mean"].mean().sort_index().to_numpy() * scale
            rho = p = float("nan")
            phrase = "no trend shown"
            statement = f"{QUANTITIES[q][0]}: fewer than {MIN_LAYERS} layers or no variation over depth; no trend shown"
            if means.size >= MIN_LAYERS and np.unique(means).size > 1:
                trend = depth_permutation_test(means)
                rho, p = trend.rho, trend.p
                phrase, statement = depth_phrase(trend), depth_sentence(QUANTITIES[q][0], trend)
            rows.append({**row, "rho": rho, "p": p, "phrase": phrase, "statement": statement})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------
# Question 4: decoder against encoder at the same n
# ---------------------------------------------------------------------------------------
def contrast(a: pd.DataFrame, b: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Overall means of two runs (:func:`run_statistics`) and a − b with a Welch interval.

    The runs are independent samples (different models, documents, tokenizers). One row per
    quantity both have: ``quantity``, ``label``, ``a``, ``a_low``, ``a_high``, ``b``, ``b_low``,
    ``b_high``, ``diff``, ``diff_low``, ``diff_high``, ``outside`` (the interval excludes 0),
    ``method`` (``bound`` when either side's standard error is only bounded).

    Parameters
    ----------
    a, b : pandas.DataFrame
        :func:`run_statistics` of the two runs.
    level : float
        Confidence level, in (0, 1).

    Returns
    -------
    pandas.DataFrame
    """
    from attnspec.spectra.compare import welch_interval

    ra = a[a["layer"] < 0].set_index("quantity")
    rb = b[b["layer"] < 0].set_index("quantity")
    rows = []
    for q in [q for q in ra.index if q in rb.index]:
        x, y = ra.loc[q], rb.loc[q]
        d, lo, hi = welch_interval(
            float(x["mean"]), float(x["se"]), float(x["dof"]), float(y["mean"]), float(y["se"]), float(y["dof"]), level
        )
        rows.append(
            {
                "quantity": q,
                "label": x["label"],
                "a": x["mean"],
                "a_low": x["low"],
                "a_high": x["high"],
                "b": y["mean"],
                "b_low": y["low"],
                "b_high": y["high"],
                "diff": d,
                "diff_low": lo,
                "diff_high": hi,
                "outside": bool(lo > 0 or hi < 0),
                "method": "per-input" if {x["method"], y["method"]} == {"per-input"} else "bound",
            }
        )
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------
# Question 2: growth with n
# ---------------------------------------------------------------------------------------
def beta_fits(
    scaling_dir: Path,
    lengths: Sequence[int] | None = None,
    metric: str = "reach_index",
    *,
    resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """β of k ∝ n^β per layer and over layers (:func:`attnspec.spectra.scaling_fit.fit_per_input`) on
    ``lengths`` (default: every finished length), on the inputs present at each of them.

    Columns: ``metric``, ``layer`` (−1 = mean over layers), ``depth`` (relative, NaN overall),
    ``beta``, ``low``, ``high``, ``verdict``, ``inputs``, ``lengths`` (a string "64–512").

    Parameters
    ----------
    scaling_dir : Path
        A scaling directory.
    lengths : sequence of int, optional
        The lengths fitted (default: every finished length).
    metric : str
        The per-input metric fitted (default ``reach_index``, k90).
    resamples : int
        Bootstrap resamples.
    seed : int
        Seed of the bootstrap.
    level : float
        Confidence level, in (0, 1).

    Returns
    -------
    pandas.DataFrame
    """
    from attnspec.spectra.scaling_fit import fit_per_input, read_runs
    from attnspec.storage.results import read_table

    runs = read_runs(Path(scaling_dir))
    use = sorted(runs) if lengths is None else sorted(int(n) for n in lengths)
    missing = [n for n in use if n not in runs]
    if missing or len(use) < 2:
        raise InputError(f"{scaling_dir}: lengths {use} are not at least two of its finished lengths {sorted(runs)}")
    tables = {n: read_table(runs[n], "inputs") for n in use}
    common = sorted(set.intersection(*(set(t["input"].unique()) for t in tables.values())))
    if len(common) < 2:
        raise ResultsError(f"{scaling_dir}: fewer than two inputs are present at every length of {use}")
    stack = np.stack(
        [
            t[t["input"].isin(common)]
            .pivot(index="input", columns="layer", values=metric)
            .loc[common]
            .to_numpy(dtype=float)
            for t in tables.values()
        ]
    )  # (T, m, L)
    fits = fit_per_input(use, stack, metric=metric, resamples=resamples, seed=seed, level=level)
    L = stack.shape[2]
    return pd.DataFrame(
        [
            {
                "metric": f.metric,
                "layer": f.layer,
                "depth": f.layer / max(L - 1, 1) if f.layer >= 0 else np.nan,
                "beta": f.beta,
                "low": f.low,
                "high": f.high,
                "verdict": f.verdict,
                "inputs": len(common),
                "lengths": f"{use[0]}–{use[-1]}",
                "level": level,
            }
            for f in fits
        ]
    )


def beta_difference(
    a: pd.Series | dict[str, float], b: pd.Series | dict[str, float], level: float = 0.95
) -> tuple[float, float, float]:
    """β_a − β_b with an interval from the two bootstrap intervals, read as normal.

    The two fits rest on independent inputs; each interval's half-width over z gives a
    standard error, and the difference's interval is d ± z·√(se_a² + se_b²) — an
    approximation (percentile intervals need not be symmetric), labelled as such where shown.

    Parameters
    ----------
    a, b : pandas.Series or dict
        Fits with ``beta``, ``low``, ``high`` (:func:`beta_fits`' rows).
    level : float
        The level of both intervals, and of the difference's.

    Returns
    -------
    difference, low, high : float
    """
    from scipy import stats as sps

    z = float(sps.norm.ppf(0.5 + level / 2))
    se_a = (float(a["high"]) - float(a["low"])) / (2 * z)
    se_b = (float(b["high"]) - float(b["low"])) / (2 * z)
    d = float(a["beta"]) - float(b["beta"])
    half = z * float(np.hypot(se_a, se_b))
    return d, d - half, d + half


def predicted_share(
    base: pd.Series | dict[str, float], beta: pd.Series | dict[str, float], n0: int, n: int
) -> tuple[float, float, float]:
    """k90/n at ``n`` predicted from k90/n at ``n0`` (``base``: mean, low, high) and β of
    k90 ∝ n^β (``beta``: beta, low, high): k90(n)/n = k90(n0)/n0 · (n/n0)^(β − 1).

    The interval takes both 95% intervals at their ends (the prediction rises with each when
    n > n0), so it covers with probability at least 90% when both do.

    Parameters
    ----------
    base : pandas.Series or dict
        k90/n at ``n0``: ``mean``, ``low``, ``high``.
    beta : pandas.Series or dict
        The exponent: ``beta``, ``low``, ``high``.
    n0 : int
        The length ``base`` was measured at.
    n : int
        The length predicted for.

    Returns
    -------
    share, low, high : float
    """
    r = n / n0
    return (
        float(base["mean"]) * r ** (float(beta["beta"]) - 1),
        float(base["low"]) * r ** (float(beta["low"]) - 1),
        float(base["high"]) * r ** (float(beta["high"]) - 1),
    )
