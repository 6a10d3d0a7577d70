"""Summaries of the fixed-k measurement and the rule that reads it.

**The rule** (stated before any number is read). Two references need no fit: **zero output**
(Ŷ = 0), whose error ‖0 − PV‖_F/‖PV‖_F is exactly 1 for every document, layer and head by
construction, and **uniform attention** (every row the mean of V), measured beside the methods.
For each method and k, the slope of the held-out error against log₂ n is estimated per held-out
document (least squares over the lengths n > k that were measured; a document's error at n is
its mean over layers and heads) and averaged over documents, with a 95 % percentile-bootstrap
interval over documents. The verdicts, in this order of precedence:

1. **the null**: the uniform reference itself (its slope is in the table; it has no verdict);
2. **no better than zero output** when, at some length n > k, the upper end of the 95 %
   interval of the mean error over documents is not below 1: the method does not beat
   outputting zero there, whatever its slope and whatever uniform attention does;
3. **grows** when the slope's lower end is above :data:`THRESHOLD` (+0.02 per doubling of n);
4. **a fixed k holds** when the slope's upper end is below :data:`THRESHOLD` and the error is
   below the uniform reference's at every n > k, paired over documents (the 95 % interval of the
   mean per-document difference, method − uniform, lies below 0 at each n);
5. **no better than uniform** when the slope's upper end is below the threshold but that paired
   comparison fails at some n (a constant output also keeps its error flat);
6. **unresolved** otherwise (also with fewer than two lengths above k, or when a comparison
   could not be made).

:data:`VERDICTS` holds these words and their short forms for tables; nothing else defines them.
Every interval here resamples held-out documents; per-layer tables give the same numbers for
each layer alone.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

#: The rule's threshold on the slope of error against log₂ n (per doubling of n).
THRESHOLD = 0.02
LEVEL = 0.95
#: The reference every method must beat at every n, measured beside the methods.
NULL = "uniform"
#: The error of outputting zero, ‖0 − PV‖/‖PV‖: 1 for every document, layer and head by construction.
ZERO_OUTPUT_ERROR = 1.0
HOLDS = "a fixed k holds"
GROWS = "grows"
UNRESOLVED = "unresolved"
NO_BETTER = "no better than uniform"
NO_BETTER_THAN_ZERO = "no better than zero output"
NULL_VERDICT = "the null"
#: The rule's verdicts in their order of precedence, each with its short form (printed tables, the report).
VERDICTS = {
    NULL_VERDICT: "null",
    NO_BETTER_THAN_ZERO: "≥ zero",
    GROWS: "grows",
    HOLDS: "holds",
    NO_BETTER: "≥ uniform",
    UNRESOLVED: "unresolved",
}
#: The columns of ``approx_rule`` that the verdict is decided from: a saved rule without one of them
#: is read again from the raw errors (:func:`rule_table`).
DECIDING = ("slope_verdict", "uniform_gap_high", "below_uniform", "zero_gap_high", "below_zero_output")


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
    """Per (k, method): the slope of the held-out error against log₂ n, the comparisons with
    zero output and with uniform attention at every n, and the rule's verdict.

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
        zero_gap_high, below_zero_output, uniform_gap_high, below_uniform, verdict``
        (``below_*``: 1.0, 0.0 or NaN, see :func:`final_verdict`).
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
        row.update(_against_zero(per, resamples=resamples, seed=seed, level=level))
        row.update(_against_null(per, table, int(k), method, resamples=resamples, seed=seed, level=level))
        row["verdict"] = final_verdict(
            row["slope_verdict"], row["below_uniform"], row["below_zero_output"], null=method == NULL
        )
        rows.append(row)
    return pd.DataFrame(rows)


def _below(highs: list[float]) -> tuple[float, float]:
    """(the largest upper end over n, 1.0 when it is below 0 / 0.0 when not / NaN when some n has no interval)."""
    high = float(np.max(highs)) if highs and np.all(np.isfinite(highs)) else float("nan")
    return high, float(high < 0) if np.isfinite(high) else float("nan")


def _against_zero(per: pd.DataFrame, *, resamples: int, seed: int, level: float) -> dict[str, Any]:
    """Whether a method's error is below zero output's (1, by construction) at every n.

    ``per`` is the method's (documents, lengths) error. Zero output's error is 1 for every
    document, so the paired difference (method − zero output) is the error minus 1 and its
    interval is the error's own interval shifted by 1 (the same resamples as ``approx_summary``'s).
    ``zero_gap_high`` is the largest upper end over n: below 0 means below 1 at every n.
    """
    highs = [
        _bootstrap(per[n].to_numpy() - ZERO_OUTPUT_ERROR, resamples=resamples, seed=seed, level=level)[1]
        for n in per.columns
    ]
    high, below = _below(highs)
    return {"zero_gap_high": high, "below_zero_output": below}


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
    high, below = _below(highs)
    out.update(uniform_gap_high=high, below_uniform=below)
    return out


def final_verdict(slope_verdict: str, below_uniform: float, below_zero_output: float, *, null: bool = False) -> str:
    """The rule's verdict from the slope's verdict and the comparisons with the two references,
    in the order of precedence of :data:`VERDICTS`.

    Parameters
    ----------
    slope_verdict : str
        :func:`verdict` of the slope's interval.
    below_uniform : float
        1.0 when the error is below uniform attention's at every n (paired interval below 0),
        0.0 when not, NaN when the comparison could not be made.
    below_zero_output : float
        1.0 when the error's interval is below 1 (zero output's error) at every n, 0.0 when not,
        NaN when it could not be estimated.
    null : bool
        The method is the uniform reference itself.

    Returns
    -------
    str
        A key of :data:`VERDICTS`.
    """
    if null:
        return NULL_VERDICT
    if below_zero_output == 0.0:
        return NO_BETTER_THAN_ZERO
    if slope_verdict == HOLDS and (below_uniform != 1.0 or below_zero_output != 1.0):
        return NO_BETTER if below_uniform == 0.0 else UNRESOLVED
    return slope_verdict


def verdict(low: float, high: float, threshold: float = THRESHOLD) -> str:
    """The slope's part of the rule: ``a fixed k holds`` / ``grows`` / ``unresolved`` from its interval.

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
        return HOLDS
    if np.isfinite(low) and low > threshold:
        return GROWS
    return UNRESOLVED


def rule_table(tables: dict[str, pd.DataFrame], *, seed: int = 0) -> pd.DataFrame:
    """A study's ``approx_rule``: as saved when it holds every column the verdict is decided from
    (:data:`DECIDING`), else read again from the raw ``approx`` errors, so that a study saved
    without one of these columns gets the rule stated here without being measured again.

    Parameters
    ----------
    tables : dict of str to DataFrame
        The study's tables (``approx_rule`` and, to read again, ``approx``).
    seed : int
        Seed of the bootstraps (the study's plan's, as when it was saved).

    Returns
    -------
    pandas.DataFrame
    """
    rule = tables["approx_rule"]
    if all(c in rule.columns for c in DECIDING) or "approx" not in tables:
        return rule
    return slopes(tables["approx"], seed=seed)


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
