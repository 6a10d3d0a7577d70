"""The fixed-k study read back: one row per (k, method) with the numbers that decide it.

:func:`verdict_table` joins a study's saved summaries (:mod:`.rule`): held-out error at the
smallest and the largest n with their intervals, the slope against log₂ n with its interval
and the rule's verdict, the end-to-end effect at the largest n (the sentence-embedding cosine of
an encoder, the change in next-token loss of a causal model), and whether the method saw
the whole scores or the content scores only. Methods refused on causal layers appear with
their reason. Sentences are rendered from these fields (:func:`verdict_sentence`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from attnspec.spectra.approx.rule import THRESHOLD

#: Columns of :func:`verdict_table`.
COLUMNS = [
    "k",
    "method",
    "reference",
    "n_first",
    "error_first",
    "error_first_low",
    "error_first_high",
    "n_last",
    "error_last",
    "error_last_low",
    "error_last_high",
    "slope",
    "slope_low",
    "slope_high",
    "zero_gap_high",
    "uniform_gap_high",
    "verdict",
    "cosine_last",
    "cosine_last_low",
    "cosine_last_high",
    "loss_change_last",
    "loss_change_last_low",
    "loss_change_last_high",
    "scores",
    "inputs",
    "note",
]


def _at(summary: pd.DataFrame, value: str, k: int, method: str, which: int) -> tuple[int, float, float, float]:
    s = summary[(summary["k"] == k) & (summary["method"] == method)].sort_values("n")
    if s.empty:
        return -1, np.nan, np.nan, np.nan
    r = s.iloc[which]
    return int(r["n"]), float(r[value]), float(r[f"{value}_low"]), float(r[f"{value}_high"])


def verdict_table(tables: dict[str, pd.DataFrame], meta: dict[str, Any]) -> pd.DataFrame:
    """One row per (k, method): the fields of :data:`COLUMNS`.

    Parameters
    ----------
    tables : dict of str to DataFrame
        :func:`attnspec.spectra.approx.saved.read_approx`'s tables.
    meta : dict
        The study's ``meta.json["approx"]`` record.

    Returns
    -------
    pandas.DataFrame
    """
    from attnspec.spectra.approx.rule import rule_table

    rule, summary = rule_table(tables, seed=int(meta.get("seed", 0))), tables["approx_summary"]
    e2e = tables.get("approx_end_to_end_summary", pd.DataFrame(columns=["n", "k", "method"]))
    loss = tables.get("approx_loss_summary", pd.DataFrame(columns=["n", "k", "method"]))
    scores = tables["approx"].groupby("method")["scores"].first().to_dict()
    # whether a method is a reference, as saved with the summary: reading a saved study needs no
    # method's code (nor torch, which the methods import)
    reference = summary.groupby("method")["reference"].first().astype(bool).to_dict()
    rows = []
    for r in rule.itertuples():
        first, last = _at(summary, "error", r.k, r.method, 0), _at(summary, "error", r.k, r.method, -1)
        cos = _at(e2e, "cosine", r.k, r.method, -1) if len(e2e) else (-1, np.nan, np.nan, np.nan)
        lost = _at(loss, "loss_change", r.k, r.method, -1) if len(loss) else (-1, np.nan, np.nan, np.nan)
        rows.append(
            [r.k, r.method, reference.get(r.method, False), *first, *last[:4], r.slope, r.slope_low, r.slope_high]
            + [getattr(r, "zero_gap_high", np.nan), getattr(r, "uniform_gap_high", np.nan), r.verdict, *cos[1:]]
            + [*lost[1:], scores.get(r.method, ""), r.inputs, ""]
        )
    for method, why in (meta.get("refused") or {}).items():
        for k in meta.get("k", []):
            if not ((rule["method"] == method) & (rule["k"] == k)).any():
                rows.append(
                    [k, method, _is_reference(method), *[np.nan] * 13, "not applied", *[np.nan] * 6, "", 0, why]
                )
    out = pd.DataFrame(rows, columns=COLUMNS)
    return out.sort_values(["k", "reference", "method"], kind="stable").reset_index(drop=True)


def verdict_sentence(row: pd.Series) -> str:
    """The reading of one (k, method) row, for this model on this corpus.

    Parameters
    ----------
    row : pandas.Series
        A row of :func:`verdict_table`.

    Returns
    -------
    str
    """
    from attnspec.numerics.stats import format_interval

    name, k = row["method"], int(row["k"])
    if row["note"]:
        return f"{name} at k = {k}: {row['note']}."
    err = (
        f"held-out error {row['error_first']:.3f} {format_interval(row['error_first_low'], row['error_first_high'], 3)} "
        f"at n = {int(row['n_first'])} and {row['error_last']:.3f} "
        f"{format_interval(row['error_last_low'], row['error_last_high'], 3)} at n = {int(row['n_last'])}"
    )
    slope = (
        f"slope {row['slope']:+.3f} {format_interval(row['slope_low'], row['slope_high'], 3, signed=True)} per doubling"
        if np.isfinite(row["slope"])
        else "slope not estimable (one length above k)"
    )
    cos = (
        f"; sentence-embedding cosine to the exact model {row['cosine_last']:.4f} at n = {int(row['n_last'])}"
        if np.isfinite(row["cosine_last"])
        else ""
    )
    if np.isfinite(row["loss_change_last"]):
        cos += (
            f"; next-token loss {row['loss_change_last']:+.3f} "
            f"{format_interval(row['loss_change_last_low'], row['loss_change_last_high'], 3, signed=True)} "
            f"nats per token against the exact model at n = {int(row['n_last'])}, every layer replaced"
        )
    if np.isfinite(row["uniform_gap_high"]):
        below = "below" if row["uniform_gap_high"] < 0 else "not below"
        slope += (
            f"; error {below} uniform attention's at every n (largest upper end of the paired "
            f"difference {row['uniform_gap_high']:+.3f})"
        )
    if np.isfinite(row["zero_gap_high"]):
        below = "below" if row["zero_gap_high"] < 0 else "not below"
        slope += (
            f"; error {below} 1, zero output's error, at every n (largest upper end {1 + row['zero_gap_high']:.3f})"
        )
    scope = " (content scores only)" if row["scores"] == "content only" else ""
    return (
        f"{name}{scope} at k = {k}: {err}, {slope} ({row['verdict']} by the rule: error below zero output's at "
        f"every n, then slope below +{THRESHOLD} per doubling and error below uniform attention's at every n; "
        f"intervals resampling {int(row['inputs'])} held-out documents){cos}."
    )


def read_verdicts(out: Path) -> pd.DataFrame | None:
    """:func:`verdict_table` of a study's directory, or None when it holds no approximations.

    Parameters
    ----------
    out : Path

    Returns
    -------
    pandas.DataFrame or None
    """
    from attnspec.spectra.approx.saved import read_approx
    from attnspec.storage.results import read_meta

    tables = read_approx(Path(out))
    if "approx_rule" not in tables:
        return None
    return verdict_table(tables, read_meta(Path(out)).get("approx") or {})


def _is_reference(method: str) -> bool:
    """Whether a method that was not applied is a reference (its code loaded only then)."""
    from attnspec.spectra.approx.registry import get

    return get(method).reference
