"""Differences between spectrum runs, with confidence intervals from the stored statistics.

For every quantity a run stores per (layer, head) as a mean over inputs with its standard
deviation and count — the cumulative value at a reading index (``c_at``) and each metric of
``metrics.parquet`` — :func:`compare_runs` gives, per layer and overall, each run's mean
and its difference from the first run with a Welch interval.

Standard errors. A layer's value is the mean over its heads; the heads of one input are
not independent, and the runs store no covariances between heads. Two cases:

* ``per-input`` — the metric is in ``inputs.parquet`` (the head mean of every input, per
  layer): the standard error is the sample standard deviation of those per-input values
  over √m, with m − 1 degrees of freedom. Exact, as for any mean of independent inputs.
* ``bound`` — otherwise: the standard deviation of a mean of H variables is at most the
  mean of their standard deviations (Minkowski's inequality, whatever their correlation),
  so mean_h(sd_h)/√m bounds the standard error from above; degrees of freedom m − 1.
  Intervals built on it cover at least their nominal level.

The overall value is the mean over layers (and heads) with the same two rules. Two runs
are independent samples (different inputs or corpora), so the difference's interval is
Welch's: d ± t_ν·√(se_a² + se_b²), ν by Welch–Satterthwaite.

:func:`depth_trends` gives, per run and quantity, Spearman's ρ between the layer index
and the layer means with its permutation p over the layers' orderings
(:mod:`attnspec.numerics.depth`), the one depth test of the report.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as _sps

from attnspec.errors import InputError
from attnspec.spectra.metric_table import metric_names
from attnspec.storage.results import read_meta, read_table, read_table_if_held

#: ``meta.json`` kind of a comparison's output folder (``attnspec compare --out``).
KIND = "compare"

#: The built-in metrics of the metrics table, in its order (a comparison reads the table when it runs,
#: registered metrics included; a run saved without one has its column empty).
METRICS: tuple[str, ...] = metric_names()


def welch_interval(
    mean_a: float, se_a: float, dof_a: float, mean_b: float, se_b: float, dof_b: float, level: float = 0.95
) -> tuple[float, float, float]:
    """Welch interval for mean_a − mean_b from standard errors and degrees of freedom.

    The interval's degrees of freedom are Welch–Satterthwaite's; a sample with ``dof <= 0``
    adds nothing to their denominator.

    Parameters
    ----------
    mean_a, se_a, dof_a : float
        Mean, standard error and degrees of freedom of the first sample.
    mean_b, se_b, dof_b : float
        The same of the second sample.
    level : float
        Confidence level, in (0, 1).

    Returns
    -------
    difference, low, high : float
        mean_a − mean_b and the interval's ends; the interval is NaN when a standard error
        is, and a point when both are 0.
    """
    diff = mean_a - mean_b
    va, vb = se_a**2, se_b**2
    se = np.sqrt(va + vb)
    if not np.isfinite(se):
        return diff, float("nan"), float("nan")
    if se == 0:
        return diff, diff, diff
    denom = (va**2 / dof_a if dof_a > 0 else 0.0) + (vb**2 / dof_b if dof_b > 0 else 0.0)
    dof = (va + vb) ** 2 / denom if denom > 0 else np.inf  # Welch–Satterthwaite
    half = float(_sps.t.ppf(0.5 + level / 2, dof)) * se
    return float(diff), float(diff - half), float(diff + half)


def layer_statistics(
    per_head: pd.DataFrame, per_input: pd.DataFrame | None = None, column: str | None = None
) -> pd.DataFrame:
    """Per layer (and overall, ``layer`` = -1): mean, standard error, degrees of freedom, method.

    Parameters
    ----------
    per_head : DataFrame
        One row per (layer, head) with ``mean``, ``std``, ``count`` (over inputs).
    per_input : DataFrame, optional
        One row per (input, layer) with the head mean of the quantity in ``column``; when
        given, standard errors are computed from it (``per-input``), else bounded (``bound``).
    column : str, optional
        The column of ``per_input`` holding the quantity; both ``per_input`` and ``column``
        are needed for the per-input method.

    Returns
    -------
    pandas.DataFrame
        One row per layer, then ``layer`` = -1 (the mean over layers): ``layer, mean, se,
        dof, count, method``. ``per-input``: the inputs with every layer present, se =
        std / sqrt(m); ``bound``: the mean over heads, se from the mean of the heads' std
        and the smallest head count m (at least the standard error of the head mean). dof is
        m − 1; se is NaN for m < 2.
    """
    rows = []
    if per_input is not None and column is not None:
        wide = per_input.pivot(index="input", columns="layer", values=column)  # (m, L)
        wide = wide.dropna()
        m = len(wide)
        cols = {int(layer): wide[layer].to_numpy() for layer in wide.columns}
        cols[-1] = wide.to_numpy().mean(axis=1)  # mean over layers per input
        for layer, v in cols.items():
            se = float(v.std(ddof=1) / np.sqrt(m)) if m > 1 else float("nan")
            rows.append(
                {"layer": layer, "mean": float(v.mean()), "se": se, "dof": m - 1, "count": m, "method": "per-input"}
            )
    else:
        d = per_head[per_head["count"] > 0]
        groups = [(int(layer), g) for layer, g in d.groupby("layer")] + [(-1, d)]
        for layer, g in groups:
            m = int(g["count"].min())
            se = float(g["std"].mean() / np.sqrt(m)) if m > 1 else float("nan")
            rows.append(
                {"layer": layer, "mean": float(g["mean"].mean()), "se": se, "dof": m - 1, "count": m, "method": "bound"}
            )
    return pd.DataFrame(rows)


def _quantities(run: Path, at: int) -> dict[str, tuple[pd.DataFrame, pd.DataFrame | None, str | None]]:
    """Quantity name → (per-head frame with mean/std/count, per-input frame or None, its column)."""
    spec = read_table(run, "spectrum")
    n = int(spec["index"].max())
    if not 1 <= at <= n:
        raise InputError(f"--at must be in 1..{n} (the run {run} has n = {n}), got {at}")
    out: dict[str, tuple[pd.DataFrame, pd.DataFrame | None, str | None]] = {}
    from attnspec.spectra.reading import short_input_note

    note = short_input_note(read_meta(run), at)
    if note is None:
        out["c_at"] = (spec.loc[spec["index"] == at, ["layer", "head", "mean", "std", "count"]], None, None)
    else:  # an input shorter than `at` has c_at = 1 by construction: not compared
        import warnings

        warnings.warn(f"{run}: {note}; c_{at} is left out of the comparison", stacklevel=3)
    metrics = read_table(run, "metrics")
    inputs = read_table_if_held(run, "inputs")
    for name in metric_names():  # the table at this call: a metric registered since import included
        if f"{name}_mean" not in metrics.columns or metrics[f"{name}_mean"].isna().all():
            continue
        frame = metrics[["layer", "head", "count"]].assign(mean=metrics[f"{name}_mean"], std=metrics[f"{name}_std"])
        has_input = inputs is not None and name in inputs.columns
        out[name] = (frame, inputs if has_input else None, name if has_input else None)
    return out


def run_label(run: Path) -> str:
    """``model · data (n=.., inputs)`` from a run's meta.json.

    Parameters
    ----------
    run : Path
        A spectrum results directory.

    Returns
    -------
    str
        The model's last path component, the corpus, n and the number of inputs done.
    """
    meta = read_meta(run)
    ident = meta.get("identity", {})
    return f"{Path(str(ident.get('model'))).name} · {ident.get('data')} (n={ident.get('seq_len')}, {meta.get('inputs_done')} inputs)"


def _check_spread(run: Path, meta: dict[str, Any]) -> None:
    """Refuse a run whose intervals could not be computed from what it holds: fewer than two
    inputs (no spread to estimate a standard error from), or a spread that is NaN, infinite or
    negative (an edited table), in the curves or the metrics."""
    from attnspec.errors import ResultsError

    done = int(meta["inputs_done"])
    if done < 2:
        raise ResultsError(
            f"{run} holds {done} input{'s' if done != 1 else ''}: an interval needs the spread over "
            "at least 2 inputs; compare runs of 2 or more inputs"
        )
    for name in ("spectrum", "metrics"):
        table = read_table(run, name)
        spreads = [c for c in table.columns if c == "std" or c.endswith("_std")]
        for c in spreads:
            v = table.loc[table["count"] >= 2, c].to_numpy(dtype=float)
            if len(v) and not (np.isfinite(v) & (v >= 0)).all():
                raise ResultsError(
                    f"{run / (name + '.parquet')}: column {c!r} holds NaN, infinite or negative "
                    "spreads where 2 or more inputs were counted; its intervals cannot be computed"
                )


def _check_runs(runs: Sequence[Path]) -> list[Path]:
    runs = [Path(r) for r in runs]
    if len(runs) < 2:
        raise InputError(f"compare needs at least two runs, got {len(runs)}")
    from attnspec.spectra.result_checks import check_spectrum_run

    for r in runs:  # meta.json and every table checked: no comparison of NaN means or damaged tables
        _check_spread(r, check_spectrum_run(r))
    layers = {int(read_table(r, "metrics")["layer"].nunique()) for r in runs}
    if len(layers) > 1:
        raise InputError(f"runs with different numbers of layers cannot be compared layer by layer: {sorted(layers)}")
    return runs


def default_reading_index(runs: Sequence[Path]) -> int:
    """The Figure 1 reading index of the shortest run (128 at n = 512, else n / 4).

    Parameters
    ----------
    runs : sequence of Path
        Spectrum results directories.

    Returns
    -------
    int
        The index, for the smallest n among the runs.
    """
    from attnspec.spectra.reading import default_at

    return default_at(min(int(read_table(r, "spectrum")["index"].max()) for r in runs))


def compare_runs(runs: Sequence[Path], *, at: int | None = None, level: float = 0.95) -> pd.DataFrame:
    """Each run's per-layer and overall values, and their differences from the first run.

    Parameters
    ----------
    runs : sequence of paths, length >= 2
        Spectrum result directories with the same number of layers; the first is the
        reference.
    at : int, optional
        Reading index of ``c_at`` (default: :func:`default_reading_index`).
    level : float
        Confidence level.

    Returns
    -------
    DataFrame, one row per (quantity, layer, run): ``quantity``, ``layer`` (0-based;
    -1 = overall), ``run``, ``label``, ``mean``, ``se``, ``count``, ``method``, ``low``/``high``
    (t-interval of the run's mean), ``diff``, ``diff_low``, ``diff_high`` (run − reference,
    Welch; 0 for the reference itself), ``at``, ``level``. Quantities are those every run has.
    """
    from attnspec.errors import check_range
    from attnspec.spectra.reading import check_at

    if isinstance(level, bool) or not isinstance(level, (int, float)):
        raise InputError(f"level must be a number in (0, 1), got {level!r}")
    check_range("level", float(level), low=0, high=1, low_open=True, high_open=True)
    if isinstance(runs, (str, Path)):
        raise InputError(f"runs must be a list of at least two result directories, got one: {str(runs)!r}")
    runs = _check_runs(runs)
    n = min(int(read_table(r, "spectrum")["index"].max()) for r in runs)
    at = default_reading_index(runs) if at is None else check_at(at, n, "at")
    per_run = [_quantities(r, at) for r in runs]
    names = [q for q in per_run[0] if all(q in p for p in per_run)]
    rows = []
    for q in names:
        stats = []
        for _run, p in zip(runs, per_run):
            frame, inputs, col = p[q]
            st = layer_statistics(frame, inputs, col)
            # both runs must use the same method for one difference; fall back to the bound
            stats.append(st)
        methods = {m for st in stats for m in st["method"]}
        if len(methods) > 1:
            stats = [layer_statistics(p[q][0]) for p in per_run]
        ref = stats[0].set_index("layer")
        for r, st in zip(runs, stats):
            for row in st.itertuples():
                t = float(_sps.t.ppf(0.5 + level / 2, row.dof)) if row.dof > 0 else float("nan")
                b = ref.loc[row.layer]
                d, lo, hi = welch_interval(row.mean, row.se, row.dof, b["mean"], b["se"], b["dof"], level)
                rows.append(
                    {
                        "quantity": q,
                        "layer": int(row.layer),
                        "run": str(r),
                        "label": run_label(r),
                        "mean": row.mean,
                        "se": row.se,
                        "count": row.count,
                        "method": row.method,
                        "low": row.mean - t * row.se,
                        "high": row.mean + t * row.se,
                        "diff": d,
                        "diff_low": lo,
                        "diff_high": hi,
                        "at": at,
                        "level": level,
                    }
                )
    return pd.DataFrame(rows)


def depth_trends(table: pd.DataFrame, level: float = 0.95, *, seed: int = 0) -> pd.DataFrame:
    """Spearman ρ between layer index and layer mean, per run and quantity, with its permutation p.

    ``table`` is :func:`compare_runs`'s output. Needs at least 4 layers (else ρ is NaN). The
    layers are the unit: p counts the orderings of the layer means that reach the observed
    \|ρ\| (:func:`attnspec.numerics.depth.depth_permutation_test`), and ``statement`` words it by
    the one depth rule (:func:`attnspec.numerics.depth.depth_sentence`).

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`compare_runs`'s output (its rows with ``layer`` >= 0 are used).
    level : float
        Kept in the table's ``level`` column, for the comparison's other intervals.
    seed : int
        Seed of the drawn orderings (more than 8 layers).

    Returns
    -------
    pandas.DataFrame
        One row per (quantity, run): ``quantity, run, label, rho, p, orderings, phrase,
        statement, layers, level``; ρ and p are NaN with fewer than 4 layers or no variation
        over depth.
    """
    from attnspec.numerics.depth import MIN_LAYERS, depth_permutation_test, depth_phrase, depth_sentence

    rows = []
    per_layer = table[table["layer"] >= 0]
    for (q, run), g in per_layer.groupby(["quantity", "run"], sort=False):
        g = g.sort_values("layer")
        rho = p = float("nan")
        orderings = 0
        phrase = "no trend shown"
        statement = f"{q}: fewer than {MIN_LAYERS} layers or no variation over depth; no trend shown"
        if len(g) >= MIN_LAYERS and g["mean"].nunique() > 1:
            trend = depth_permutation_test(g["mean"].to_numpy(dtype=float), seed=seed)
            rho, p, orderings = trend.rho, trend.p, trend.orderings
            phrase, statement = depth_phrase(trend), depth_sentence(str(g["label"].iloc[0]), trend)
        rows.append(
            {
                "quantity": q,
                "run": run,
                "label": g["label"].iloc[0],
                "rho": rho,
                "p": p,
                "orderings": orderings,
                "phrase": phrase,
                "statement": statement,
                "layers": len(g),
                "level": level,
            }
        )
    return pd.DataFrame(rows)


def write_comparison(
    out: Path,
    table: pd.DataFrame,
    trends: pd.DataFrame,
    *,
    runs: Sequence[Path],
    draw: Callable[[pd.DataFrame, Path], list[Path]] | None = None,
) -> list[Path]:
    """Write a comparison into ``out`` as one result: ``compare.parquet``, ``trends.parquet``,
    the figures (``figures/compare_runs``, ``figures/compare_diff``) and ``meta.json`` last.

    The caller holds ``out`` (:func:`attnspec.storage.results.writing_to` with ``kind=KIND``);
    everything is renamed into place together (:func:`attnspec.storage.results.result_files`),
    so an interrupt or a full disk leaves the whole comparison or the previous one.
    ``draw(table, out / "figures")`` draws the figures and returns their paths (the CLI passes
    :func:`attnspec.plots.compare.plot_comparison`; the spectrum wing never imports the plots).

    Parameters
    ----------
    out : Path
        The comparison's folder, held by the caller.
    table : pandas.DataFrame
        :func:`compare_runs`'s output, written as ``compare.parquet``; its ``at`` and
        ``level`` are recorded in ``meta.json``.
    trends : pandas.DataFrame
        :func:`depth_trends`'s output, written as ``trends.parquet``.
    runs : sequence of Path
        The runs compared, recorded in ``meta.json``.
    draw : callable, optional
        ``draw(table, out / "figures")`` draws the figures and returns their paths. None
        (default) draws none.

    Returns
    -------
    list of Path
        The figure files written.
    """
    from attnspec.runtime.signals import deferred_interrupts
    from attnspec.storage.results import environment_meta, result_files, write_meta, write_table

    out = Path(out)
    paths: list[Path] = []
    with deferred_interrupts(), result_files(out):
        write_table(out, "compare", table)
        write_table(out, "trends", trends)
        if draw is not None:
            paths = draw(table, out / "figures")
        at = int(table["at"].iloc[0]) if len(table) else None
        level = float(table["level"].iloc[0]) if len(table) else None
        write_meta(
            out,
            {
                "kind": KIND,
                "command": "attnspec compare",
                "runs": [str(r) for r in runs],
                "at": at,
                "level": level,
                "figures": [p.relative_to(out).as_posix() for p in paths],
                "environment": environment_meta(),
            },
        )
    return paths
