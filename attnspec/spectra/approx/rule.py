"""Summaries of the fixed-k measurement and the rule that reads it.

**The rule** (stated before any number is read): for each method and k, the slope of the
held-out error against log₂ n is estimated per held-out document (least squares over the
lengths n > k that were measured; a document's error at n is its mean over layers and heads)
and averaged over documents, with a 95 % percentile-bootstrap interval over documents.

* **a fixed k holds** when the interval's upper end is below :data:`THRESHOLD` (+0.02 per
  doubling of n);
* **grows** when its lower end is above it;
* **unresolved** otherwise (also with fewer than two lengths above k).

A constant output can hold a fixed k: uniform attention (every row the mean of V) does. So
**a fixed k holds** also requires the method's held-out error to be below the uniform
reference's at every length n > k, paired over documents: the 95 % interval of the mean
per-document difference (method − uniform) lies below 0 at each n. A method whose slope holds
but which fails that test is **no better than uniform**; the uniform reference itself is
**the null**.

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
#: The reference every method must beat at every n, and the verdicts it adds to the rule.
NULL = "uniform"
NO_BETTER = "no better than uniform"
NULL_VERDICT = "the null"


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
        The ``approx`` table (``value="error"``), the ``approx_end_to_end`` one (``value="cosine"``)
        or the ``approx_loss`` one (``value="loss_change"``).
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
    """Per (k, method): the slope of the held-out error against log₂ n, the comparison with
    uniform attention at every n, and the rule's verdict.

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
        ``k, method, lengths, inputs, slope, slope_low, slope_high, threshold, slope_verdict,
        uniform_gap_high, below_uniform, verdict`` (``below_uniform``: 1.0, 0.0 or NaN, see
        :func:`final_verdict`).
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
        row["slope_verdict"] = verdict(row["slope_low"], row["slope_high"])
        row.update(_against_null(per, table, int(k), method, resamples=resamples, seed=seed, level=level))
        row["verdict"] = final_verdict(row["slope_verdict"], row["below_uniform"], null=method == NULL)
        rows.append(row)
    return pd.DataFrame(rows)


def _against_null(
    per: pd.DataFrame, table: pd.DataFrame, k: int, method: str, *, resamples: int, seed: int, level: float
) -> dict[str, Any]:
    """Whether a method's error is below uniform attention's at every n, paired over documents.

    ``per`` is the method's (documents, lengths) error; the uniform reference's is read from
    ``table`` at the same k. ``uniform_gap_high`` is the largest upper end over n of the interval
    of the mean per-document difference (method − uniform): below 0 means below at every n.
    """
    null = table[(table["k"] == k) & (table["method"] == NULL)]
    out: dict[str, Any] = {"uniform_gap_high": float("nan"), "below_uniform": float("nan")}
    if method == NULL or null.empty or per.empty:
        return out
    ref = null.groupby(["input", "n"])["error"].mean().unstack("n")  # (documents, lengths)
    highs = []
    for n in per.columns:
        if n not in ref.columns:
            return out  # a length without the null: the comparison cannot be made
        gap = (per[n] - ref[n].reindex(per.index)).dropna().to_numpy()  # (documents,) paired differences
        highs.append(_bootstrap(gap, resamples=resamples, seed=seed, level=level)[1])
    high = float(np.max(highs)) if highs and np.all(np.isfinite(highs)) else float("nan")
    out.update(uniform_gap_high=high, below_uniform=float(high < 0) if np.isfinite(high) else float("nan"))
    return out


def final_verdict(slope_verdict: str, below_uniform: float, *, null: bool = False) -> str:
    """The rule's verdict from the slope's verdict and the comparison with uniform attention.

    Parameters
    ----------
    slope_verdict : str
        :func:`verdict` of the slope's interval.
    below_uniform : float
        1.0 when the error is below uniform attention's at every n (paired interval below 0),
        0.0 when not, NaN when the comparison could not be made.
    null : bool
        The method is the uniform reference itself.

    Returns
    -------
    str
        ``a fixed k holds``, ``grows``, ``unresolved``, :data:`NO_BETTER` or :data:`NULL_VERDICT`.
    """
    if null:
        return NULL_VERDICT
    if slope_verdict == "a fixed k holds" and below_uniform != 1.0:
        return NO_BETTER if below_uniform == 0.0 else "unresolved"
    return slope_verdict


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
        (slopes and verdicts), ``approx_end_to_end_summary`` and ``approx_loss_summary``
        (when measured).
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
    loss = raw.get("approx_loss")
    if loss is not None and len(loss):
        out["approx_loss_summary"] = summarise(loss, "loss_change", seed=seed)
    return out
