"""Read a finished scaling study back and fit how the rank attention needs grows with n.

The study itself (one spectrum run per length, on the same documents) is made by
:func:`attnspec.spectra.scaling.run_scaling`; this module only reads its runs:

* :func:`read_runs` finds the finished lengths, every file checked;
* :func:`scaling_table` gives per (n, layer) the index where the layer's mean curve
  reaches 0.9, the effective rank, and the input means of the per-input summaries;
* :func:`fit_scaling` fits k ∝ n^β per layer and overall by least squares on log–log
  axes, with a bootstrap interval over inputs (inputs are resampled jointly across
  lengths, since each length sees the same documents), and :func:`verdict` reads β;
* :func:`null_comparison` sets β and k/n of the model's P beside every null baseline the
  study holds, :func:`fit_study` gathers every table and fit, and :func:`null_sentence`
  says the comparison in one sentence.

The fitted k is the mean over inputs of a per-input value (the head mean, per layer, of
the index where that input's curve reaches 0.9, or of the smallest rank whose best
rank-k approximation has relative Frobenius error <= ε): a mean over inputs is what a
bootstrap over inputs can resample from the small per-input table each run keeps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from attnspec.errors import InputError, ResultsError
from attnspec.spectra.reading import FITTED, LINEAR_ABOVE, NO_GROWTH_BELOW, first_reach
from attnspec.spectra.result_checks import SCALING_KIND
from attnspec.storage.results import read_table, result_files, write_table


def _layer_mean_curve(spectrum: pd.DataFrame) -> pd.DataFrame:
    """Mean over heads of the mean curve, per (layer, index)."""
    return spectrum.groupby(["layer", "index"], as_index=False)["mean"].mean()


def read_runs(out: Path) -> dict[int, Path]:
    """Length → run directory of the finished lengths of a scaling directory (at least two).

    Every file is checked first (:func:`attnspec.spectra.result_checks.check_scaling_run`): the
    lengths meta.json records must agree with each run's own seq_len and curve table.

    Parameters
    ----------
    out : Path
        A scaling directory (``attnspec spectrum --seq-len 64,128,...``).

    Returns
    -------
    dict of int to Path
        n → the run directory ``out/n<n>``, for each finished length.

    Raises
    ------
    ResultsError
        ``out`` is not a scaling run, or a file in it is damaged or disagrees with meta.json.
    """
    from attnspec.spectra.result_checks import check_meta, check_scaling_run, read_kind

    found = read_kind(out)  # the kind first: another command's result is named as such, not by its fields
    if isinstance(found, str) and found != SCALING_KIND:
        raise ResultsError(
            f"{out} holds a {found!r} result, not a scaling run (attnspec spectrum --seq-len 64,128,...)"
        )
    check_meta(out, kind=SCALING_KIND)
    return check_scaling_run(out)


def _source_table(run: Path, source: str, table: str) -> pd.DataFrame:
    """A run's ``table`` (spectrum, metrics, inputs) for ``source``: "real" or a null baseline's name."""
    if source == REAL:
        return read_table(run, table)
    from attnspec.spectra.nulls import read_baseline

    return read_baseline(run, source, table)


#: The source of a scaling table or fit measured on the model's own P (the others are null baselines).
REAL = "real"


def scaling_table(out: Path, level: float = 0.9, source: str = REAL) -> pd.DataFrame:
    """Per (n, layer): index where the layer's mean curve reaches ``level``, effective rank, per-input means.

    Columns: ``n``, ``layer``, ``k_mean_curve`` (first index where the head-averaged mean
    curve reaches ``level``), ``effective_rank`` (mean over heads and inputs), ``inputs``,
    and the input means of every column of ``inputs.parquet``. ``source``: ``"real"`` (the
    model's P) or a null baseline every length holds (an "input" of a null is a draw).

    Parameters
    ----------
    out : Path
        A scaling directory.
    level : float
        The level the head-averaged mean curve must reach, in (0, 1].
    source : str
        ``"real"`` or the name of a null baseline.

    Returns
    -------
    pandas.DataFrame
        One row per (layer, n), sorted by layer then n, with the columns above.
    """
    rows = []
    for n, d in read_runs(out).items():
        curve = _layer_mean_curve(_source_table(d, source, "spectrum"))
        metrics = _source_table(d, source, "metrics")
        inputs = _source_table(d, source, "inputs")
        per_layer = inputs.groupby("layer").mean(numeric_only=True).drop(columns="input")
        for layer, g in curve.groupby("layer"):
            c = g.sort_values("index")["mean"].to_numpy()  # (n,) the layer's head-averaged mean curve
            row = {
                "n": n,
                "layer": int(layer),
                "k_mean_curve": int(first_reach(c, level)),
                "effective_rank": float(metrics.loc[metrics["layer"] == layer, "effective_rank_mean"].mean()),
                "inputs": int(inputs.loc[inputs["layer"] == layer, "input"].nunique()),
            }
            row.update({f"{c}_input_mean": float(per_layer.loc[layer, c]) for c in per_layer.columns})
            rows.append(row)
    return pd.DataFrame(rows).sort_values(["layer", "n"]).reset_index(drop=True)


def power_law(n: np.ndarray, k: np.ndarray) -> tuple[float, float]:
    """Least-squares fit of log k = a + β log n.

    Parameters
    ----------
    n : numpy.ndarray, shape (m,)
        Lengths, positive.
    k : numpy.ndarray, shape (m,)
        The values at those lengths, positive.

    Returns
    -------
    beta, scale : float
        The exponent β and exp(a): k ≈ scale·n^β.
    """
    x, y = np.log(np.asarray(n, dtype=float)), np.log(np.asarray(k, dtype=float))
    beta, a = np.polyfit(x, y, 1)
    return float(beta), float(np.exp(a))


@dataclass(frozen=True)
class PowerFit:
    """k ∝ n^β for one layer (``layer`` = -1 for the mean over layers) and one metric."""

    metric: str
    layer: int
    beta: float
    low: float
    high: float
    scale: float
    verdict: str


def verdict(low: float, high: float) -> str:
    """Reading of a β interval against :data:`NO_GROWTH_BELOW` and :data:`LINEAR_ABOVE`.

    Parameters
    ----------
    low, high : float
        The interval's ends.

    Returns
    -------
    str
        "does not grow with n", "grows about linearly with n", "grows with n, sublinearly"
        or "inconclusive", each with the thresholds it was read against.
    """
    if high < NO_GROWTH_BELOW:
        return f"does not grow with n (β < {NO_GROWTH_BELOW:g})"
    if low > LINEAR_ABOVE:
        return f"grows about linearly with n (β > {LINEAR_ABOVE:g})"
    if low > NO_GROWTH_BELOW and high < LINEAR_ABOVE:
        return f"grows with n, sublinearly ({NO_GROWTH_BELOW:g} < β < {LINEAR_ABOVE:g})"
    return f"inconclusive (interval crosses {NO_GROWTH_BELOW:g} or {LINEAR_ABOVE:g})"


def fit_per_input(
    lengths: Sequence[int],
    values: np.ndarray,
    *,
    metric: str = "k",
    level: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> list[PowerFit]:
    """Fit k ∝ n^β per layer and overall, with a percentile bootstrap over inputs.

    Parameters
    ----------
    lengths : sequence of int, length T
        The sequence lengths n.
    values : array, shape (T, m, L)
        Per-input values at each length (the same m inputs at every length) per layer;
        positive, at least 2 lengths and 2 inputs.
    metric : str
        The metric's name, recorded in each fit.
    level : float
        The interval's level.
    resamples : int
        Bootstrap resamples (of the m inputs, jointly across lengths).
    seed : int
        Seed of the bootstrap.

    Returns
    -------
    list of PowerFit: layers 0..L-1, then layer -1 for the mean over layers.
    """
    from attnspec.numerics.stats import numpy_rng

    n = np.asarray(lengths, dtype=float)
    v = np.asarray(values, dtype=float)
    if v.ndim != 3 or v.shape[0] != n.size:
        raise InputError(f"values must have shape ({n.size}, inputs, layers), got {v.shape}")
    if n.size < 2 or v.shape[1] < 2:
        raise InputError(
            f"a power-law fit with a bootstrap needs >= 2 lengths and >= 2 inputs, got {n.size} and {v.shape[1]}"
        )
    if not np.all(v > 0):
        raise InputError("every value must be positive for a log–log fit")
    v = np.concatenate([v, v.mean(axis=2, keepdims=True)], axis=2)  # (T, m, L + 1): last = mean over layers
    x = np.log(n) - np.log(n).mean()

    def slopes(means: np.ndarray) -> np.ndarray:  # (..., T, L+1) → (..., L+1)
        y = np.log(means)
        return np.einsum("t,...tl->...l", x, y - y.mean(axis=-2, keepdims=True)) / (x @ x)

    point = slopes(v.mean(axis=1))  # (L+1,)
    rng = numpy_rng(seed)
    m = v.shape[1]
    boot = np.empty((resamples, v.shape[2]))
    for b0 in range(0, resamples, 50):  # chunks keep memory at 50·T·m·(L+1) floats
        idx = rng.integers(0, m, size=(min(50, resamples - b0), m))  # (b, m)
        means = v[:, idx, :].mean(axis=2)  # (T, b, L+1)
        boot[b0 : b0 + idx.shape[0]] = slopes(np.moveaxis(means, 0, 1))
    alpha = (1 - level) / 2
    lo, hi = np.quantile(boot, [alpha, 1 - alpha], axis=0)
    fits = []
    for j in range(v.shape[2]):
        layer = j if j < v.shape[2] - 1 else -1
        scale = float(np.exp(np.log(v.mean(axis=1)[:, j]).mean() - point[j] * np.log(n).mean()))
        fits.append(
            PowerFit(
                metric, layer, float(point[j]), float(lo[j]), float(hi[j]), scale, verdict(float(lo[j]), float(hi[j]))
            )
        )
    return fits


def fit_scaling(
    out: Path, *, resamples: int = 2000, seed: int = 0, level: float = 0.95, source: str = REAL
) -> pd.DataFrame:
    """Power-law fits of every :data:`FITTED` metric of a scaling directory, per layer and overall.

    Uses the inputs present at every length (joined on their position in the selection).
    Columns: ``metric``, ``layer`` (-1 = mean over layers), ``beta``, ``low``, ``high``,
    ``scale`` (k ≈ scale·n^β), ``verdict``, ``inputs``, ``level``, ``resampled`` (what the
    bootstrap resamples). A deterministic null (one matrix per length: uniform) is fitted
    exactly, its interval is the point.

    Parameters
    ----------
    out : Path
        A scaling directory.
    resamples : int
        Bootstrap resamples, >= 100.
    seed : int
        Seed of the bootstrap, >= 0.
    level : float
        The intervals' level, in (0, 1).
    source : str
        ``"real"`` (the model's P) or the name of a null baseline every length holds.

    Returns
    -------
    pandas.DataFrame
        One row per (metric, layer), with the columns above.

    Raises
    ------
    InputError
        An argument out of range, or a bootstrap that would not fit in memory.
    ResultsError
        Fewer than two inputs (draws) present at every length.
    """
    from attnspec.errors import check_int, check_memory, check_range

    check_int("resamples", resamples, low=100)  # as `plot scaling --resamples` (min 100)
    check_int("seed", seed, low=0)
    if isinstance(level, bool) or not isinstance(level, (int, float)):
        raise InputError(f"level must be a number in (0, 1), got {level!r}")
    check_range("level", float(level), low=0, high=1, low_open=True, high_open=True)
    runs = read_runs(out)
    lengths = sorted(runs)
    tables = {n: _source_table(runs[n], source, "inputs") for n in lengths}
    layers = max(int(t["layer"].nunique()) for t in tables.values())
    # the bootstrap keeps resamples x (layers + 1) float64 slopes, and np.quantile copies them
    check_memory(f"--resamples {resamples} (the bootstrap over {layers} layers)", 2 * 8 * resamples * (layers + 1))
    common = set.intersection(*(set(t["input"].unique()) for t in tables.values()))
    exact = source != REAL and len(common) == 1  # a deterministic null: one matrix per length
    if len(common) < 2 and not exact:
        raise ResultsError(
            f"{out}: fewer than two {'inputs' if source == REAL else 'draws'} are present at every length"
        )
    keep = np.array(sorted(common))
    from attnspec.spectra.nulls import needs_model

    resampled = (
        "exact (one deterministic matrix per length)"
        if exact
        else "inputs (documents, jointly across lengths)"
        if source == REAL or needs_model(source)
        else "draws of the null (jointly across lengths)"
    )
    rows = []
    for metric in FITTED:
        stack = []
        for n in lengths:
            t = tables[n]
            wide = t[t["input"].isin(keep)].pivot(index="input", columns="layer", values=metric).loc[keep]
            stack.append(wide.to_numpy())  # (m, L)
        fits = (
            _exact_fits(lengths, np.stack(stack), metric)
            if exact
            else fit_per_input(lengths, np.stack(stack), metric=metric, resamples=resamples, seed=seed, level=level)
        )
        for f in fits:
            rows.append({**f.__dict__, "inputs": int(keep.size), "level": level, "resampled": resampled})
    return pd.DataFrame(rows)


def _exact_fits(lengths: Sequence[int], values: np.ndarray, metric: str) -> list[PowerFit]:
    """Least-squares β per layer and over layers of one deterministic series, values (T, 1, L)."""
    v = np.asarray(values, dtype=float)[:, 0, :]  # (T, L)
    v = np.concatenate([v, v.mean(axis=1, keepdims=True)], axis=1)  # (T, L + 1)
    fits = []
    for j in range(v.shape[1]):
        beta, scale = power_law(np.asarray(lengths), v[:, j])
        fits.append(PowerFit(metric, j if j < v.shape[1] - 1 else -1, beta, beta, beta, scale, verdict(beta, beta)))
    return fits


def null_comparison(
    out: Path, *, resamples: int = 2000, seed: int = 0, level: float = 0.95, metric: str = "reach_index"
) -> pd.DataFrame:
    """β and the constant k/n of the model's P beside every null baseline the study holds.

    One row per source (``real`` first, then each null every length holds): ``beta``,
    ``low``, ``high`` (over layers' mean, :func:`fit_scaling`), ``verdict``, ``resampled``,
    and per length ``share_n<len>`` = mean over layers and inputs (draws) of k/n, and
    ``share_ratio`` = real k/n over this source's k/n at the longest length (1 for real).

    Parameters
    ----------
    out : Path
        A scaling directory.
    resamples : int
        Bootstrap resamples of each fit, >= 100.
    seed : int
        Seed of the bootstraps, >= 0.
    level : float
        The intervals' level, in (0, 1).
    metric : str
        The fitted metric compared (default ``reach_index``, k90).

    Returns
    -------
    pandas.DataFrame
        One row per source, with the columns above and ``source``, ``metric``, ``inputs``.
    """
    from attnspec.spectra.nulls import baselines_of

    runs = read_runs(out)
    lengths = sorted(runs)
    nulls = [b for b in baselines_of(runs[lengths[0]]) if all(b in baselines_of(runs[n]) for n in lengths)]
    rows = []
    for source in (REAL, *nulls):
        fit = fit_scaling(out, resamples=resamples, seed=seed, level=level, source=source)
        f = fit[(fit["metric"] == metric) & (fit["layer"] == -1)].iloc[0]
        row = {
            "source": source,
            "metric": metric,
            "beta": float(f["beta"]),
            "low": float(f["low"]),
            "high": float(f["high"]),
            "verdict": f["verdict"],
            "resampled": f["resampled"],
            "inputs": int(f["inputs"]),
        }
        for n in lengths:
            row[f"share_n{n}"] = float(_source_table(runs[n], source, "inputs")[metric].mean()) / n
        rows.append(row)
    table = pd.DataFrame(rows)
    last = f"share_n{lengths[-1]}"
    table["share_ratio"] = float(table.loc[0, last]) / table[last]
    return table


@dataclass(frozen=True)
class StudyFit:
    """The fits of a scaling study (:func:`fit_study`).

    Attributes
    ----------
    table : pandas.DataFrame
        :func:`scaling_table`: per (n, layer), k90 of the mean curve, effective rank, input means.
    fits : pandas.DataFrame
        :func:`fit_scaling`: k ∝ n^β per metric and layer (-1 = mean over layers), CI, verdict.
    nulls : pandas.DataFrame
        :func:`null_comparison`: the real β and k/n beside every null the study holds.
    null_tables : dict of str to pandas.DataFrame
        Each null's :func:`scaling_table`.
    """

    table: pd.DataFrame
    fits: pd.DataFrame
    nulls: pd.DataFrame
    null_tables: dict[str, pd.DataFrame]

    def save(self, out: Path, *, csv: bool = False) -> None:
        """``scaling.parquet``, ``scaling_fit.parquet`` and, with nulls, ``scaling_null.parquet`` in ``out``, as one unit.

        Parameters
        ----------
        out : Path
            The scaling study's directory.
        csv : bool
            Also write a CSV copy of each table.
        """
        with result_files(out):
            write_table(out, "scaling", self.table, csv=csv)
            write_table(out, "scaling_fit", self.fits, csv=csv)
            if len(self.nulls) > 1:
                write_table(out, "scaling_null", self.nulls, csv=csv)


def fit_study(out: Path, *, resamples: int = 2000, seed: int = 0) -> StudyFit:
    """Every table and fit of a finished scaling study (nothing is written: :meth:`StudyFit.save`).

    Parameters
    ----------
    out : Path
        A scaling directory, one finished run per length.
    resamples : int
        Bootstrap resamples of each fit, >= 100.
    seed : int
        Seed of the bootstraps, >= 0.

    Returns
    -------
    StudyFit
        :func:`scaling_table`, :func:`fit_scaling` and :func:`null_comparison` (intervals at
        level 0.95) of the model's P, and the scaling table of each null every length holds.

    Raises
    ------
    InputError
        ``resamples`` or ``seed`` out of range, or a bootstrap that would not fit in memory.
    ResultsError
        ``out`` is not a scaling run, a file in it is damaged or disagrees with meta.json,
        or fewer than two inputs (draws) are present at every length.
    """
    nulls = null_comparison(out, resamples=resamples, seed=seed)
    return StudyFit(
        table=scaling_table(out),
        fits=fit_scaling(out, resamples=resamples, seed=seed),
        nulls=nulls,
        null_tables={s: scaling_table(out, source=s) for s in nulls["source"] if s != REAL},
    )


def null_sentence(table: pd.DataFrame, *, level: float = 0.95) -> str:
    """The real β and k/n beside each null's, in one sentence (:func:`null_comparison`'s table).

    A null whose β interval overlaps the real one is said, in the same sentence, to give the
    same exponent: the exponent then does not tell this model's attention from chance, and
    the constant k/n is the finding.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`null_comparison`'s table.
    level : float
        The intervals' level, as the sentence states it.

    Returns
    -------
    str
        The sentence.
    """
    from attnspec.numerics.stats import format_interval
    from attnspec.spectra.nulls import LABELS

    shares = sorted((c for c in table.columns if c.startswith("share_n")), key=lambda c: int(c[len("share_n") :]))
    last = shares[-1]
    n = int(last[len("share_n") :])
    real = table[table["source"] == REAL].iloc[0]
    what = "k90" if real["metric"] == "reach_index" else str(real["metric"])
    text = (
        f"For this model on this corpus, {what} grows as n^{real['beta']:.2f} "
        f"({level:.0%} interval {format_interval(real['low'], real['high'])}, resampling {real['resampled']})"
    )
    parts = []
    for r in table[table["source"] != REAL].itertuples():
        ci = format_interval(r.low, r.high, exact=r.resampled.startswith("exact"))
        overlap = r.low <= real["high"] and real["low"] <= r.high
        alike = r.verdict == real["verdict"]  # e.g. both "grows about linearly with n"
        parts.append(
            f"the {LABELS.get(r.source, r.source)} gives β = {r.beta:.2f} "
            f"({ci}{'' if ci == 'exact' else ', resampling ' + r.resampled})"
            + (
                ", the same exponent: β does not tell this attention from chance"
                if overlap
                else f", read alike ({r.verdict}): β does not tell this attention from chance"
                if alike
                else ""
            )
        )
    if parts:
        text += "; " + "; ".join(parts)
    text += f". At n = {n}, {what}/n is {real[last]:.3g}"
    for r in table[table["source"] != REAL].itertuples():
        text += f" against {getattr(r, last):.3g} for the {LABELS.get(r.source, r.source)} (real/null = {r.share_ratio:.2f})"
    return text + "."
