"""Summaries of the fixed-k measurement and the rule that reads it.

**The rule** (stated before any number is read): for each method and k, the slope of the
held-out error against log₂ n is estimated per held-out document (least squares over the
lengths n > k that were measured; a document's error at n is its mean over layers and heads)
and averaged over documents, with a 95 % percentile-bootstrap interval over documents.

* **a fixed k holds** when the interval's upper end is below :data:`THRESHOLD` (+0.02 per
  doubling of n);
* **grows** when its lower end is above it;
* **unresolved** otherwise (also with fewer than two lengths above k).

Every interval here resamples held-out documents; per-layer tables give the same numbers
for each layer alone.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

#: The rule's threshold on the slope of error against log₂ n (per doubling of n).
THRESHOLD = 0.02
LEVEL = 0.95


def _bootstrap(values: np.ndarray, *, resamples: int, seed: int, level: float) -> tuple[float, float]:
    from attnspec.numerics.stats import numpy_rng

    if values.size < 2:
        return float("nan"), float("nan")
    alpha = (1 - level) / 2
    idx = numpy_rng(seed).integers(0, values.size, size=(resamples, values.size))  # (resamples, m)
    low, high = np.quantile(values[idx].mean(axis=1), [alpha, 1 - alpha])
    return float(low), float(high)


def summarise(
    table: pd.DataFrame,
    value: str = "error",
    *,
    by_layer: bool = False,
    resamples: int = 2000,
    seed: int = 0,
    level: float = LEVEL,
) -> pd.DataFrame:
    """Per (n, k, method[, layer]): the mean over held-out documents with a bootstrap interval.

    Parameters
    ----------
    table : pandas.DataFrame
        The ``approx`` table (``value="error"``) or the ``approx_end_to_end`` one (``value="cosine"``).
    value : str
        The column summarised; a document's value is its mean over layers (or one layer) and heads.
    by_layer : bool
        One row per layer as well (``layer`` column); else over layers.
    resamples : int
        Bootstrap resamples.
    seed : int
        Seed of the bootstrap.
    level : float
        The intervals' level.

    Returns
    -------
    pandas.DataFrame
        ``n, k, method, [layer,] inputs, <value>, <value>_low, <value>_high, resampled, level``.
    """
    keys = ["n", "k", "method"] + (["layer"] if by_layer else [])
    rows = []
    for key, g in table.groupby(keys, sort=True):
        per_input = g.groupby("input")[value].mean().to_numpy()  # (m,) each document's mean
        low, high = _bootstrap(per_input, resamples=resamples, seed=seed, level=level)
        row: dict[str, Any] = dict(zip(keys, key))
        row.update(
            {"inputs": per_input.size, value: float(per_input.mean()), f"{value}_low": low, f"{value}_high": high}
        )
        row.update({"resampled": "held-out documents", "level": level})
        rows.append(row)
    return pd.DataFrame(rows)


def slopes(table: pd.DataFrame, *, resamples: int = 2000, seed: int = 0, level: float = LEVEL) -> pd.DataFrame:
    """Per (k, method): the slope of the held-out error against log₂ n and the rule's verdict.

    Parameters
    ----------
    table : pandas.DataFrame
        The ``approx`` table.
    resamples : int
        Bootstrap resamples.
    seed : int
        Seed of the bootstrap.
    level : float
        The interval's level.

    Returns
    -------
    pandas.DataFrame
        ``k, method, lengths, inputs, slope, slope_low, slope_high, threshold, verdict``.
    """
    rows = []
    for (k, method), g in table.groupby(["k", "method"], sort=True):
        per = g.groupby(["input", "n"])["error"].mean().unstack("n").dropna(axis=0)  # (documents, lengths)
        lengths = [int(n) for n in per.columns]
        x = np.log2(np.asarray(lengths, dtype=float))
        row: dict[str, Any] = {"k": int(k), "method": method, "lengths": len(lengths), "inputs": len(per)}
        if len(lengths) < 2 or len(per) < 2:
            row.update(slope=float("nan"), slope_low=float("nan"), slope_high=float("nan"))
        else:
            xc = x - x.mean()
            per_doc = (per.to_numpy() - per.to_numpy().mean(axis=1, keepdims=True)) @ xc / (xc @ xc)  # (documents,)
            low, high = _bootstrap(per_doc, resamples=resamples, seed=seed, level=level)
            row.update(slope=float(per_doc.mean()), slope_low=low, slope_high=high)
        row["threshold"] = THRESHOLD
        row["verdict"] = verdict(row["slope_low"], row["slope_high"])
        rows.append(row)
    return pd.DataFrame(rows)


def verdict(low: float, high: float, threshold: float = THRESHOLD) -> str:
    """The rule: ``a fixed k holds`` / ``grows`` / ``unresolved`` from a slope's interval.

    Parameters
    ----------
    low, high : float
        The slope's interval (per doubling of n); NaN when not estimable.
    threshold : float
        The rule's threshold.

    Returns
    -------
    str
    """
    if np.isfinite(high) and high < threshold:
        return "a fixed k holds"
    if np.isfinite(low) and low > threshold:
        return "grows"
    return "unresolved"


def tables(raw: dict[str, pd.DataFrame], *, seed: int = 0) -> dict[str, pd.DataFrame]:
    """The saved summaries of a measurement's raw tables.

    Parameters
    ----------
    raw : dict of str to DataFrame
        :func:`attnspec.spectra.approx.study.measure_approximations`'s tables.
    seed : int
        Seed of the bootstraps.

    Returns
    -------
    dict of str to DataFrame
        ``approx_summary`` (over layers), ``approx_layers`` (per layer), ``approx_rule``
        (slopes and verdicts), ``approx_end_to_end_summary`` (when measured).
    """
    from attnspec.spectra.approx.registry import get

    errors = raw["approx"]
    summary = summarise(errors, seed=seed)
    summary.insert(3, "reference", [get(m).reference for m in summary["method"]])  # drawn as lines
    out = {
        "approx_summary": summary,
        "approx_layers": summarise(errors, by_layer=True, seed=seed),
        "approx_rule": slopes(errors, seed=seed),
    }
    e2e = raw.get("approx_end_to_end")
    if e2e is not None and len(e2e):
        out["approx_end_to_end_summary"] = summarise(e2e, "cosine", seed=seed)
    return out
