"""The whole `jl-check` battery: parameters -> Monte Carlo tables -> verdicts.

Verdict rules (a measurement, never a restatement of the paper):

* ``vacuous`` when the statement says nothing at the parameters: the claimed failure
  probability is >= 1, or k >= n for Theorems 1–2 (P̃ = PRᵀR is then not low-rank, and
  Lemma 1, which the proofs use, assumes 1 <= k <= n), or k > n for Lemma 1 itself. The
  Monte Carlo numbers are still reported in the evidence.
* otherwise :func:`attnspec.verdicts.classify_failure_probability` decides from the
  failure counts (and the exact probability where one is known): ``violated`` when the
  exact probability or the 95% Clopper–Pearson lower end exceeds the claimed one,
  ``loose`` when the claim exceeds the exact value (or the upper CI end) by more than 10×,
  ``holds`` otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from attnspec.errors import InputError, check_range
from attnspec.theory import jl
from attnspec.theory import jl_samplers as S
from attnspec.verdicts import VerdictRow, classify_failure_probability

CLAIM_GROUPS: tuple[str, ...] = ("lemma1.eq11", "lemma1.eq12", "thm1", "thm2")
_ALIASES = {"lemma1": ("lemma1.eq11", "lemma1.eq12"), "all": CLAIM_GROUPS}
#: theorem dimensions above this are reported but not simulated
MAX_SIMULATED_K = 20_000


def parse_claims(spec: str | Sequence[str]) -> tuple[str, ...]:
    """``"all"``, ``"lemma1"``, or a comma list of lemma1.eq11, lemma1.eq12, thm1, thm2."""
    items = [s.strip() for s in (spec.split(",") if isinstance(spec, str) else spec) if s.strip()]
    if not items:
        raise InputError(f"claims must name at least one of {', '.join(CLAIM_GROUPS)} (or lemma1, all), got none")
    out: list[str] = []
    for it in items:
        if it in _ALIASES:
            out.extend(_ALIASES[it])
        elif it in CLAIM_GROUPS:
            out.append(it)
        else:
            raise InputError(f"claim must be one of {', '.join(CLAIM_GROUPS)}, lemma1 or all, got {it!r}")
    return tuple(dict.fromkeys(out))


def parse_families(spec: str | Sequence[str]) -> tuple[str, ...]:
    """``"all"`` or a comma list of gaussian, orthogonal, achlioptas, sparse."""
    items = [s.strip() for s in (spec.split(",") if isinstance(spec, str) else spec) if s.strip()]
    if items == ["all"]:
        return S.FAMILIES
    if not items:
        raise InputError(f"family must name at least one of {', '.join(S.FAMILIES)} (or all), got none")
    for it in items:
        S.check_family(it)
    return tuple(dict.fromkeys(items))


def parse_ks(spec: str) -> list[int]:
    """k values: a comma list of integers and inclusive ranges ``start:stop[:step]``.

    ``"64,128,256"``, ``"64:4096:64"`` (64, 128, ..., 4096), ``"16:32"`` (step 1).
    """
    out: list[int] = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        try:
            if ":" in part:
                fields = [int(x) for x in part.split(":")]
                if len(fields) not in (2, 3):
                    raise ValueError
                start, stop = fields[0], fields[1]
                step = fields[2] if len(fields) == 3 else 1
                if step < 1:
                    raise InputError(f"k range step must be >= 1, got {step} in {part!r}")
                if stop < start:
                    raise InputError(f"k range {part!r} is empty (stop < start)")
                out.extend(range(start, stop + 1, step))
            else:
                out.append(int(part))
        except ValueError as e:
            if isinstance(e, InputError):
                raise
            raise InputError(f"k must be integers or ranges start:stop[:step], got {part!r}") from None
    if not out:
        raise InputError(f"k must hold at least one value, got {spec!r}")
    for k in out:
        check_range("k", k, low=1)
    return sorted(set(out))


def default_ks(n: int, eps: float, points: int = 10, *, union_threshold: bool = True) -> list[int]:
    """The default sweep, below n: geometric from 16 (or 1) to n − 1, plus (with
    ``union_threshold``) the smallest k at which Theorem 1's union bound drops below 1
    (when that is below n)."""
    lo = min(16, max(1, n // 4))
    ks = {int(round(x)) for x in np.geomspace(lo, n - 1, points)} if n > 2 else {1}
    kub = jl.union_bound_min_k(n, eps)
    if union_threshold and kub < n:
        ks.add(kub)
    return sorted(k for k in ks if 1 <= k < n)


def _sample_attention(model: str, data: str, *, seq_len: int, count: int, seed: int,
                      data_dir: str | None) -> np.ndarray:
    """Real attention matrices from the capture module, as float64 (count, n, n)."""
    try:
        from attnspec.capture import sample_attention
    except ImportError as e:  # the capture module is written by another engineer
        from attnspec.errors import DataError

        raise DataError(f"real attention needs attnspec.capture.sample_attention, which is unavailable ({e})") from None
    P = sample_attention(model, data, seq_len=seq_len, count=count, seed=seed, data_dir=data_dir)
    return np.asarray(P.detach().cpu().numpy() if hasattr(P, "detach") else P, dtype=np.float64)


@dataclass
class JLConfig:
    n: int = 4096
    eps: float = 0.1
    ks: Sequence[int] | None = None
    trials: int = 10_000
    trials_other: int = 1_000
    seed: int = 0
    families: Sequence[str] = S.FAMILIES
    claims: Sequence[str] = CLAIM_GROUPS
    d: int = 64
    temperature: float = 1.0
    rhos: Sequence[float] = jl.DEFAULT_RHOS
    attention_kinds: Sequence[str] = jl.ATTENTION_KINDS
    model: str | None = None
    data: str | None = None
    data_dir: str | None = None
    count: int = 2

    def validate(self) -> None:
        jl.check_n(self.n)
        jl.check_eps(self.eps)
        check_range("trials", self.trials, low=1)
        check_range("trials_other", self.trials_other, low=1)
        check_range("d", self.d, low=2)
        check_range("temperature", self.temperature, low=0.0, low_open=True)
        check_range("count", self.count, low=1)
        if self.ks is not None:
            jl.check_ks(self.ks)
        parse_claims(list(self.claims))
        parse_families(list(self.families))
        for a in self.attention_kinds:
            if a not in jl.ATTENTION_KINDS:
                raise InputError(f"attention kind must be one of {', '.join(jl.ATTENTION_KINDS)}, got {a!r}")
        if (self.model is None) != (self.data is None):
            raise InputError("--model and --data go together: give both (real attention) or neither")


@dataclass
class JLResult:
    config: JLConfig
    table: pd.DataFrame
    samples: pd.DataFrame
    curves: pd.DataFrame
    rows: list[VerdictRow]
    summary: dict[str, list[VerdictRow]]
    dims: dict[str, float]
    notes: list[str] = field(default_factory=list)
    sweep_ks: list[int] = field(default_factory=list)


_PARAM_COLS = {
    "lemma1": ("reading", "family", "vectors", "rho"),
    "thm1": ("reading", "attention", "w", "pw_ratio"),
    "thm2": ("reading", "construction", "row"),
}


def _group(claim: str) -> str:
    return claim.split(".")[0]


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
    """The verdict and its one-line evidence for one Monte Carlo row."""
    claim, n, k = row["claim"], int(row["n"]), int(row["k"])
    exact = row.get("exact")
    exact = None if exact is None or (isinstance(exact, float) and math.isnan(exact)) else float(exact)
    measured = (f"measured {row['failures']}/{row['trials']} = {row['estimate']:.4g} "
                f"[{row['ci_low']:.4g}, {row['ci_high']:.4g}]" + (f", exact {exact:.4g}" if exact is not None else ""))
    prefix = ""
    if claim.startswith("lemma1") and row.get("family") != "gaussian":
        prefix = f"[{row['family']} R: Lemma 1 is stated for Gaussian R] "
    if claim.startswith("thm2.eq8") and row.get("zero_output_passes"):
        prefix += "[the zero output also meets this tolerance] "
    if claim.startswith("thm") and k >= n:
        what = "P̃ = PRᵀR need not be low-rank" if claim.startswith("thm1") else "E, F project nothing away"
        return "vacuous", (f"{prefix}k = {k} >= n = {n}: {what}, and Lemma 1 assumes k <= n; "
                           f"{measured} vs claimed {row['bound']:.4g}")
    if claim.startswith("lemma1") and k > n:
        return "vacuous", f"{prefix}k = {k} > n = {n}, outside Lemma 1's 1 <= k <= n; {measured}"
    verdict, why = classify_failure_probability(claimed=float(row["bound"]), failures=int(row["failures"]),
                                                trials=int(row["trials"]), exact=exact)
    if verdict == "vacuous":
        why = f"{why}; {measured}"
    elif verdict == "violated":
        why = f"{why} (instance seed {row['seed']})"
    return verdict, prefix + why


def _verdict_rows(table: pd.DataFrame) -> list[VerdictRow]:
    out = []
    for rec in table.to_dict("records"):
        verdict, evidence = verdict_for(rec)
        grp = _group(rec["claim"])
        params: dict[str, Any] = {"n": int(rec["n"]), "k": int(rec["k"]), "eps": float(rec["eps"])}
        for c in _PARAM_COLS[grp]:
            if c in rec:
                params[c] = _clean(rec[c])
        out.append(VerdictRow(claim=rec["claim"], verdict=verdict, params=params, bound=_clean(rec["bound"]),
                              exact=_clean(rec.get("exact")), estimate=_clean(rec["estimate"]),
                              ci_low=_clean(rec["ci_low"]), ci_high=_clean(rec["ci_high"]),
                              trials=int(rec["trials"]), seed=int(rec["seed"]), evidence=evidence))
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
    for kind in ("holds", "loose"):
        cand = [r for r in rows if r.verdict == kind]
        if cand:
            def ratio(r: VerdictRow) -> float:
                ref = r.exact if r.exact is not None else (r.ci_high or 0.0)
                return (r.bound or math.inf) / ref if ref > 0 else math.inf

            return min(cand, key=ratio)
    kmax = max(r.params["k"] for r in rows)
    return max((r for r in rows if r.params["k"] == kmax), key=lambda r: r.estimate or 0.0)


def summarize(rows: list[VerdictRow]) -> dict[str, list[VerdictRow]]:
    """One representative row per (claim, reading, family | attention | construction)."""
    groups: dict[tuple, list[VerdictRow]] = {}
    for r in rows:
        g = _group(r.claim)
        third = {"lemma1": "family", "thm1": "attention", "thm2": "construction"}[g]
        groups.setdefault((g, r.claim, r.params.get("reading"), r.params.get(third)), []).append(r)
    out: dict[str, list[VerdictRow]] = {"lemma1": [], "thm1": [], "thm2": []}
    for (g, *_), rs in groups.items():
        best = _pick(rs)
        counts = {v: sum(1 for r in rs if r.verdict == v) for v in ("violated", "holds", "loose", "vacuous")}
        tally = ", ".join(f"{c} {v}" for v, c in counts.items() if c)
        shown = VerdictRow(claim=best.claim, verdict=best.verdict, params=dict(best.params), bound=best.bound,
                           exact=best.exact, estimate=best.estimate, ci_low=best.ci_low, ci_high=best.ci_high,
                           trials=best.trials, seed=best.seed,
                           evidence=f"{best.evidence} [{tally} of {len(rs)} parameter sets]")
        out[g].append(shown)
    return out


def _with_eckart_young(table: pd.DataFrame, samples: pd.DataFrame, P: np.ndarray, name: str, seed: int) -> tuple[pd.DataFrame, str]:
    """Add the best rank-k errors of P (on the same w) to its Theorem 1 rows; a note comparing them."""
    from attnspec.spectrum import best_rank_k_errors

    vecs = jl.theorem1_vectors(P, seed=jl.subseed(seed, "thm1", "vectors", name))  # the w of simulate_theorem1
    best = best_rank_k_errors(P, sorted(table["k"].unique()), vecs)
    table = table.merge(best, on=["w", "k"], how="left")
    parts = []
    for k, g in samples.groupby("k") if len(samples) else []:
        b = best[(best["k"] == k) & (best["w"] == "value")]
        med = g.loc[g["w"] == "value", "value"].median()
        parts.append(f"k = {k}: median ‖P̃w − Pw‖/‖Pw‖ {med:.3g} vs best rank-k {float(b['eckart_young_w_error'].iloc[0]):.3g}")
    fro = best.drop_duplicates("k").set_index("k")["eckart_young_error"]
    note = (f"{name}: Eckart–Young optimum beside the random projection (w = value) — " + "; ".join(parts)
            + "; best rank-k relative Frobenius error " + ", ".join(f"{fro[k]:.3g} at k = {k}" for k in fro.index[:: max(1, len(fro) // 4)]))
    return table, note


def run_jl_check(config: JLConfig, progress: Callable[[str], None] | None = None) -> JLResult:
    """Run every selected claim at ``config`` and return tables, verdicts and notes."""
    config.validate()
    say = progress or (lambda _msg: None)
    n, eps = config.n, config.eps
    claims = parse_claims(list(config.claims))
    families = parse_families(list(config.families))
    dims = jl.dimensions(n, eps, config.d)
    k1 = int(math.ceil(dims["linformer_k"]))
    k2 = int(math.ceil(dims["theorem2_k_main"]))
    notes: list[str] = []
    sweep = list(config.ks) if config.ks is not None else default_ks(n, eps)
    if k1 >= n:
        notes.append(f"Theorem 1's k = 5 ln(n)/(eps^2 - eps^3) = {dims['linformer_k']:.1f} >= n = {n}: the theorem "
                     f"is vacuous at these parameters (no rank reduction); sweeping k below n: {sweep}")
    if "thm2" in claims and k2 >= n:
        notes.append(f"Theorem 2's k = min(9 d ln d, 5 ln n)/eps^2 = {dims['theorem2_k_main']:.1f} >= n = {n} "
                     f"(d = {config.d}): vacuous at these parameters; sweeping k below n")
    notes.append(f"Theorem 1's union bound 2n exp(-(eps^2 - eps^3) k/4) is < 1 only for k >= "
                 f"{int(dims['theorem1_union_bound_min_k'])}; at the theorem's k it equals 2 n^(-1/4) = "
                 f"{2 * n ** -0.25:.4g}, the paper's 'o(1)' at n = {n}")
    # Appendix A, eq. 18 says "when k = log(n)": that reading of the theorem's k is swept too.
    k18 = max(1, int(math.ceil(math.log(n))))
    notes.append(f"Appendix A (eq. 18) states the theorem 'when k = log(n)': k = {k18} is added to the sweep; "
                 f"the union bound there is {min(jl.theorem1_union_bound(n, k18, eps), float('inf')):.4g}")
    ks1 = sorted(set(sweep) | ({k1} if k1 <= MAX_SIMULATED_K else set()) | ({k18} if "thm1" in claims else set()))
    sweep2 = list(config.ks) if config.ks is not None else default_ks(n, eps, union_threshold=False)
    ks2 = sorted(set(sweep2) | ({k2} if k2 <= MAX_SIMULATED_K else set()))
    small = [k for k in sweep if k < n] or sweep
    sample_ks = sorted({small[0], small[len(small) // 2], small[-1]})
    tables: list[pd.DataFrame] = []
    samples: list[pd.DataFrame] = []
    lemma_claims = [c for c in claims if c.startswith("lemma1")]
    if lemma_claims:
        say(f"Lemma 1: families {', '.join(families)}, {len(ks1)} values of k, {config.trials} Gaussian trials, "
            f"{config.trials_other} for other families")
        t, s = jl.simulate_lemma1(n, eps, ks1, families=families, trials=config.trials,
                                  trials_other=config.trials_other, rhos=config.rhos, seed=config.seed,
                                  sample_ks=sample_ks)
        t = t[t["claim"].isin(lemma_claims)]
        tables.append(t)
        if len(s):
            samples.append(s[s["claim"].isin(lemma_claims)])
    if "thm1" in claims:
        # One attention matrix at a time: at n = 4096 each is 134 MB.
        sources: list[tuple[str, Callable[[], np.ndarray]]] = [
            (kind, lambda kind=kind: jl.attention_matrix(kind, n, seed=jl.subseed(config.seed, "attention", kind),
                                                         d=config.d, temperature=config.temperature))
            for kind in config.attention_kinds]
        if config.model is not None:
            say(f"capturing {config.count} real attention matrices from {config.model} on {config.data} (n = {n})")
            real = _sample_attention(config.model, config.data, seq_len=n, count=config.count,
                                     seed=jl.subseed(config.seed, "real"), data_dir=config.data_dir)
            if real.ndim != 3 or real.shape[1:] != (n, n):
                raise InputError(f"captured attention must have shape (count, {n}, {n}), got {real.shape}")
            sources += [(f"{config.model}[{i}]", lambda i=i: real[i]) for i in range(real.shape[0])]
        say(f"Theorem 1: {len(sources)} attention matrices x {len(jl.W_KINDS)} vectors w, {len(ks1)} values of k, "
            f"{config.trials} trials")
        for name, make in sources:
            t, s = jl.simulate_theorem1({name: make()}, eps, ks1, trials=config.trials, seed=config.seed,
                                        sample_ks=sample_ks)
            if config.model is not None and name.startswith(f"{config.model}["):  # real P: the optimum beside each k
                t, note = _with_eckart_young(t, s, make(), name, config.seed)
                notes.append(note)
            tables.append(t)
            samples.append(s)
    if "thm2" in claims:
        say(f"Theorem 2: d = {config.d}, {len(ks2)} values of k, {config.trials} trials")
        t, s = jl.simulate_theorem2(n, config.d, eps, ks2, trials=config.trials, seed=config.seed,
                                    sample_ks=sample_ks)
        tables.append(t)
        samples.append(s)
    table = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()
    samp = pd.concat([s for s in samples if len(s)], ignore_index=True) if any(len(s) for s in samples) else pd.DataFrame()
    say("exact curves")
    kmax = max(max(ks1), n)
    dense = sorted({int(round(x)) for x in np.geomspace(1, kmax * 1.05, 60)} | set(ks1))
    curves = jl.exact_curves(n, eps, dense)
    verdict_rows = _verdict_rows(table)
    table = table.assign(verdict=[r.verdict for r in verdict_rows], evidence=[r.evidence for r in verdict_rows])
    return JLResult(config=config, table=table, samples=samp, curves=curves, rows=verdict_rows,
                    summary=summarize(verdict_rows), dims=dims, notes=notes, sweep_ks=sweep)
