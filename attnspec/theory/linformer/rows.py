"""From Monte Carlo tables to verdict rows, and the one-row-per-group summary of `jl-check`.

Verdict rules (a measurement, never a restatement of the paper), all decided by
:func:`attnspec.verdicts.classify_probability`:

* ``hypothesis-unmet`` for Lemma 1 with a non-Gaussian R (the lemma is stated for
  Gaussian R) or k > n (it assumes 1 <= k <= n); the evidence says what the same bound
  gives there, as an extension;
* ``vacuous`` when the statement says nothing at the parameters: the claimed failure
  probability is >= 1, or k >= n for Theorems 1–2 (P̃ = PRᵀR is then not low-rank, and
  Lemma 1, which the proofs use, assumes 1 <= k <= n);
* ``cannot-fail`` where the zero output meets the tolerance of an existence claim
  (Theorem 1 additive, Theorem 2 eq. 8: P̃ = 0, E = F = 0 would do), or where the claimed
  failure probability is so close to 1 that no outcome of the trials could contradict it;
* otherwise ``violated`` / ``loose`` / ``holds`` from the failure counts (and the exact
  probability where one is known).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from attnspec.verdicts import VerdictRow, classify_probability

#: Parameter columns of the verdict rows, by group (the reading is a column of its own).
_PARAM_COLS = {
    "lemma1": ("family", "vectors", "rho"),
    "thm1": ("attention", "w", "pw_ratio"),
    "thm2": ("construction", "row", "d", "sweep"),
}


def group_of(claim: str) -> str:
    """``"linformer.thm1.eq3"`` → ``"thm1"``: the table group of a claim id."""
    return claim.split(".")[1]


def _clean(v: Any) -> Any:
    if isinstance(v, (np.floating, float)):
        v = float(v)
        return None if math.isnan(v) else v
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, np.bool_):
        return bool(v)
    return v


def verdict_for(row: dict[str, Any]) -> tuple[str, str]:
    """The verdict and its one-line evidence for one Monte Carlo row of the ``jl`` table.

    Parameters
    ----------
    row : dict
        A record of the ``jl`` table: ``claim`` (id), ``reading``, ``n``, ``k``, ``bound``,
        ``exact`` (NaN where no law), ``failures``, ``trials``, ``estimate``, ``ci_low``,
        ``ci_high``, ``seed``, and where present ``family`` and ``zero_output_passes``.

    Returns
    -------
    (verdict, evidence) : tuple of str
    """
    claim, n, k = row["claim"], int(row["n"]), int(row["k"])
    group = group_of(claim)
    exact = row.get("exact")
    exact = None if exact is None or (isinstance(exact, float) and math.isnan(exact)) else float(exact)
    measured = (f"measured {row['failures']}/{row['trials']} = {row['estimate']:.4g} "
                f"[{row['ci_low']:.4g}, {row['ci_high']:.4g}]" + (f", exact {exact:.4g}" if exact is not None else ""))
    unmet = None
    if group == "lemma1" and row.get("family") != "gaussian":
        unmet = f"Lemma 1 is stated for Gaussian R, this is {row['family']} R"
    elif group == "lemma1" and k > n:
        unmet = f"k = {k} > n = {n}, outside Lemma 1's 1 <= k <= n"
    vacuous = None
    if group in ("thm1", "thm2") and k >= n:
        what = "P̃ = PRᵀR need not be low-rank" if group == "thm1" else "E, F project nothing away"
        vacuous = f"k = {k} >= n = {n}: {what}, and Lemma 1 assumes k <= n"
    trivial = None
    if group in ("thm1", "thm2") and _true(row.get("zero_output_passes")):
        trivial = ("the zero output meets this tolerance (‖Pw‖ <= ε‖P‖_F‖w‖): P̃ = 0 would do" if group == "thm1"
                   else "the zero output meets this tolerance: E = F = 0 would do")
    counts = {"claimed": float(row["bound"]), "failures": int(row["failures"]), "trials": int(row["trials"]),
              "exact": exact}
    d = classify_probability(**counts, vacuous=vacuous, trivial=trivial, hypothesis_unmet=unmet)
    why = d.reason
    if d.verdict == "hypothesis-unmet":
        # what the same bound gives outside the lemma's hypothesis: an extension, not a verdict on the lemma
        ext = classify_probability(**counts)
        why = f"{why}; the same bound there: {ext.verdict} ({ext.reason}; instance seed {row['seed']})"
    elif d.verdict == "vacuous":
        why = f"{why}; {measured} vs claimed {row['bound']:.4g}"
    elif d.verdict == "violated":
        why = f"{why} (instance seed {row['seed']})"
    return d.verdict, why


def _true(v: Any) -> bool:
    if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
        return False
    return bool(v)


def verdict_rows(table: pd.DataFrame) -> list[VerdictRow]:
    """One :class:`VerdictRow` per row of the Monte Carlo table.

    Parameters
    ----------
    table : DataFrame
        The ``jl`` table (one row per claim, reading, configuration and k).

    Returns
    -------
    list of VerdictRow
        In table order, with the claim id, reading, parameters and evidence.
    """
    out = []
    for rec in table.to_dict("records"):
        verdict, evidence = verdict_for(rec)
        params: dict[str, Any] = {"n": int(rec["n"]), "k": int(rec["k"]), "eps": float(rec["eps"])}
        for c in _PARAM_COLS[group_of(rec["claim"])]:
            if c in rec and _clean(rec[c]) is not None:
                params[c] = _clean(rec[c])
        out.append(VerdictRow(claim=rec["claim"], reading=rec["reading"], verdict=verdict, params=params,
                              bound=_clean(rec["bound"]), exact=_clean(rec.get("exact")),
                              estimate=_clean(rec["estimate"]), ci_low=_clean(rec["ci_low"]),
                              ci_high=_clean(rec["ci_high"]), trials=int(rec["trials"]), seed=int(rec["seed"]),
                              evidence=evidence))
    return out


def eq18_rows(table: pd.DataFrame, k_log: int, k_thm: int) -> list[VerdictRow]:
    """Appendix A eq. (18): the relative Theorem-1 rows at k = ⌈ln n⌉ and at the theorem's k,
    relabelled as claim ``linformer.thm1.eq18`` (readings ``log-n``, ``theorem-k``)."""
    rel = table[(table["claim"] == "linformer.thm1.eq3") & (table["reading"] == "relative")]
    out = []
    for reading, k in (("log-n", k_log), ("theorem-k", k_thm)):
        part = rel[rel["k"] == k]
        for r in verdict_rows(part):
            what = (f"eq. (18) says k = log(n): k = {k}" if reading == "log-n"
                    else f"the theorem's k = 5 ln(n)/(ε² − ε³) = {k}")
            out.append(VerdictRow(claim="linformer.thm1.eq18", reading=reading, verdict=r.verdict, params=r.params,
                                  bound=r.bound, exact=r.exact, estimate=r.estimate, ci_low=r.ci_low,
                                  ci_high=r.ci_high, trials=r.trials, seed=r.seed, evidence=f"{what}; {r.evidence}"))
    return out


def _pick(rows: list[VerdictRow]) -> VerdictRow:
    """The row that best represents a group: the worst violation, else the tightest
    non-vacuous row, else the largest-k vacuous row."""
    viol = [r for r in rows if r.verdict == "violated"]

    def excess(r: VerdictRow) -> float:
        ref = r.exact if r.exact is not None else (r.ci_low or 0.0)
        return ref - (r.bound or 0.0)

    if viol:
        return max(viol, key=excess)
    # outside the hypothesis: show where the same bound would be violated, if anywhere
    ext = [r for r in rows if r.verdict == "hypothesis-unmet" and "the same bound there: violated" in r.evidence]
    if ext:
        return max(ext, key=excess)
    for kind in ("holds", "loose"):
        cand = [r for r in rows if r.verdict == kind]
        if cand:
            def ratio(r: VerdictRow) -> float:
                ref = r.exact if r.exact is not None else (r.ci_high or 0.0)
                return (r.bound or math.inf) / ref if ref > 0 else math.inf

            return min(cand, key=ratio)
    kmax = max(r.params.get("k", 0) for r in rows)
    return max((r for r in rows if r.params.get("k", 0) == kmax), key=lambda r: r.estimate or 0.0)


def summarize(rows: list[VerdictRow]) -> dict[str, list[VerdictRow]]:
    """One representative row per (claim, reading, family | attention | construction), by group."""
    third = {"lemma1": "family", "thm1": "attention", "thm2": "construction"}
    groups: dict[tuple, list[VerdictRow]] = {}
    for r in rows:
        g = group_of(r.claim)
        groups.setdefault((g, r.claim, r.reading, r.params.get(third.get(g, "attention")),
                           r.params.get("sweep")), []).append(r)
    out: dict[str, list[VerdictRow]] = {}
    for (g, *_), rs in groups.items():
        best = _pick(rs)
        counts = {v: sum(1 for r in rs if r.verdict == v) for v in
                  ("violated", "holds", "loose", "vacuous", "cannot-fail", "measured", "hypothesis-unmet")}
        tally = ", ".join(f"{c} {v}" for v, c in counts.items() if c)
        shown = VerdictRow(claim=best.claim, reading=best.reading, verdict=best.verdict, params=dict(best.params),
                           bound=best.bound, exact=best.exact, estimate=best.estimate, ci_low=best.ci_low,
                           ci_high=best.ci_high, trials=best.trials, seed=best.seed,
                           evidence=f"{best.evidence} [{tally} of {len(rs)} parameter sets]" if len(rs) > 1
                           else best.evidence)
        out.setdefault(g, []).append(shown)
    return out
