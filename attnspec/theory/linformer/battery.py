"""The `jl-check` battery: options → validated config (:mod:`.config`) → Monte Carlo and
measurements, in run groups computed by :func:`attnspec.theorem.groups.run_groups` → verdict rows.

Tables: ``jl`` (one row per Monte Carlo parameter set, with its verdict), ``jl_errors``
(sampled relative errors, for figures) and ``jl_curves`` (bounds and exact laws on a dense k
grid). Real attention matrices (``--model``, ``--data``) are requested through
:func:`attention_request` and loaded by :func:`attnspec.battery.run_battery`, never here.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from typing import NamedTuple

import numpy as np
import pandas as pd

from attnspec.errors import InputError
from attnspec.numerics.stats import child_seed
from attnspec.theorem import fork as FK
from attnspec.theorem import groups as G
from attnspec.theorem.groups import Done, Group, Keep, concat
from attnspec.theorem.measured import Instance, instance_rows
from attnspec.theorem.result import AttentionRequest, BatteryResult, config_identity
from attnspec.theory.linformer import lemma1 as L1
from attnspec.theory.linformer import proof_steps as PS
from attnspec.theory.linformer import theorem1 as T1
from attnspec.theory.linformer import theorem2 as T2
from attnspec.theory.linformer.claims import EQ8_NO_K
from attnspec.theory.linformer.config import COMMAND, JLConfig, parse_claims, parse_families
from attnspec.theory.linformer.config import (  # the battery interface attnspec.battery.run_battery calls
    config_from_options as config_from_options,
)
from attnspec.theory.linformer.dimensions import (
    appendix_a_k,
    dimensions,
    theorem1_union_bound,
    theorem2_k_main,
    union_bound_min_k,
)
from attnspec.theory.linformer.printed import check_eq4
from attnspec.theory.linformer.quantifier import check_quantifier
from attnspec.theory.linformer.rows import clipped_rows, eq18_rows, verdict_rows
from attnspec.verdicts.classify import VerdictRow

#: theorem dimensions above this are reported but not simulated
MAX_SIMULATED_K = 20_000
#: draws of Gaussian V for the ‖V‖₂ <= ε‖V‖_F fraction, and of R per rank for the quantifier
TOLERANCE_DRAWS = 200
QUANTIFIER_DRAWS = 2


def default_ks(n: int, eps: float, points: int = 10, *, union_threshold: bool = True) -> list[int]:
    """The default sweep, below n: geometric from 16 (or 1) to n − 1, plus (with
    ``union_threshold``) the smallest k at which Theorem 1's union bound drops below 1
    (when that is below n).

    Parameters
    ----------
    n : int
        Sequence length.
    eps : float
        Distortion ε.
    points : int
        Points of the geometric sweep.
    union_threshold : bool
        Add the union bound's threshold k.

    Returns
    -------
    list of int
        Sorted, distinct, each below n.
    """
    lo = min(16, max(1, n // 4))
    ks = {int(round(x)) for x in np.geomspace(lo, n - 1, points)} if n > 2 else {1}
    kub = union_bound_min_k(n, eps)
    if union_threshold and kub < n:
        ks.add(kub)
    return sorted(k for k in ks if 1 <= k < n)


def attention_request(config: JLConfig) -> AttentionRequest | None:
    """The real attention matrices Theorem 1 is checked on, when ``--model``/``--data`` are given.

    Parameters
    ----------
    config : JLConfig

    Returns
    -------
    AttentionRequest or None
        None without ``--model``.
    """
    if config.model is None or "thm1" not in parse_claims(list(config.claims)):
        return None
    return AttentionRequest(
        model=config.model,
        data=config.data,
        seq_len=config.n,
        count=config.count,
        seed=child_seed(config.seed, "real"),
        data_dir=config.data_dir,
    )


def _notes(config: JLConfig, dims: dict[str, float], sweep: list[int], claims: Sequence[str]) -> list[str]:
    n, eps = config.n, config.eps
    notes: list[str] = []
    if dims["linformer_k"] >= n:
        notes.append(
            f"Theorem 1's k = 5 ln(n)/(eps^2 - eps^3) = {dims['linformer_k']:.1f} >= n = {n}: the theorem "
            f"is vacuous at these parameters (no rank reduction); sweeping k below n: {sweep}"
        )
    if "thm2" in claims and dims["theorem2_k_main"] >= n:
        notes.append(
            f"Theorem 2's k = min(9 d ln d, 5 ln n)/eps^2 = {dims['theorem2_k_main']:.1f} >= n = {n} "
            f"(d = {config.d}): vacuous at these parameters; sweeping k below n. Each of its formulas: "
            f"9 d ln d/eps^2 = {dims['theorem2_k_main_d']:.1f}, 5 ln n/eps^2 = {dims['theorem2_k_main_n']:.1f}, "
            f"9 ln d/(eps^2 - eps^3) = {dims['theorem2_k_appendix_d']:.1f}, "
            f"5 ln(nd)/(eps^2 - eps^3) = {dims['theorem2_k_appendix_nd']:.1f} (rows linformer.thm2.k)"
        )
    notes.append(
        f"Theorem 1's union bound 2n exp(-(eps^2 - eps^3) k/4) is < 1 only for k >= "
        f"{int(dims['theorem1_union_bound_min_k'])}; at the theorem's k it equals 2 n^(-1/4) = "
        f"{2 * n**-0.25:.4g}, the paper's 'o(1)' at n = {n}"
    )
    k18 = appendix_a_k(n)
    notes.append(
        f"Appendix A (eq. 18) states the theorem 'when k = log(n)': k = {k18} is added to the sweep; "
        f"the union bound there is {min(theorem1_union_bound(n, k18, eps), float('inf')):.4g}"
    )
    return notes


def _with_eckart_young(
    table: pd.DataFrame, samples: pd.DataFrame, P: np.ndarray, vecs: dict, name: str, say: Callable[[str], None]
) -> pd.DataFrame:
    """P's Theorem 1 rows with the best rank-k errors (Frobenius, and on the same w ``vecs``) beside each k;
    says how they compare."""
    from attnspec.spectra.metrics import best_rank_k_errors

    best = best_rank_k_errors(P, sorted(table["k"].unique()), vecs)
    parts = []
    for k, g in samples.groupby("k") if len(samples) else []:
        b = best[(best["k"] == k) & (best["w"] == "value")]
        parts.append(
            f"k = {k}: median ‖P̃w − Pw‖/‖Pw‖ {g.loc[g['w'] == 'value', 'value'].median():.3g} "
            f"vs best rank-k {float(b['eckart_young_w_error'].iloc[0]):.3g}"
        )
    if parts:
        say(f"{name}: Eckart–Young optimum beside the random projection (w = value) — " + "; ".join(parts))
    return table.merge(best, on=["w", "k"], how="left")


def _k_lists(
    config: JLConfig,
    dims: dict[str, float],
    claims: Sequence[str],
) -> tuple[list[int], list[int], list[int], list[int]]:
    """The k sweep, the k of Lemma 1 / Theorem 1 (sweep + the theorem's k + Appendix A's
    ⌈ln n⌉), the k of Theorem 2 (sweep + its printed min k) and the three k with samples."""
    n, eps = config.n, config.eps
    k1, k2 = int(math.ceil(dims["linformer_k"])), int(math.ceil(dims["theorem2_k_main"]))
    sweep = list(config.ks) if config.ks is not None else default_ks(n, eps)
    ks1 = sorted(
        set(sweep) | ({k1} if k1 <= MAX_SIMULATED_K else set()) | ({appendix_a_k(n)} if "thm1" in claims else set())
    )
    sweep2 = list(config.ks) if config.ks is not None else default_ks(n, eps, union_threshold=False)
    ks2 = sorted(set(sweep2) | ({k2} if k2 <= MAX_SIMULATED_K else set()))
    small = [k for k in sweep if k < n] or sweep
    return sweep, ks1, ks2, sorted({small[0], small[len(small) // 2], small[-1]})


#: The units a run is computed (and an interrupted run kept) in, in this order: each draws its
#: seeds from ``config.seed`` alone (``child_seed(seed, <its own labels>)``), so a group computed
#: in a later, resumed process equals the one an uninterrupted run computes.
RUN_GROUPS: tuple[str, ...] = ("lemma1", "thm1", "thm2", "thm2-proof", "eq4")

#: The claim group each run group serves, where their names differ.
_SERVES: dict[str, str] = {"thm2-proof": "thm2"}

#: Relative cost of each run group: single-thread seconds of the default run (n = 4096,
#: ε = 0.1), each group alone on an idle machine, torch already imported (docs/jl-check.md,
#: "Performance"). Theorem 1's LU weighs almost half of its group.
GROUP_COST: dict[str, float] = {"lemma1": 2.0, "thm1": 5.1, "thm2": 1.7, "thm2-proof": 1.1, "eq4": 0.95}

#: The run groups computed without torch (NumPy and SciPy only): a process that computes
#: only these never imports it.
TORCH_FREE: frozenset[str] = frozenset({"thm1", "thm2-proof", "eq4"})

#: Seconds of `import torch` on the same machine, paid by a process that computes a group
#: outside :data:`TORCH_FREE` (once; nothing when torch is already imported).
TORCH_IMPORT_COST = 2.0


def needs_torch(groups: Sequence[str]) -> bool:
    """True when computing ``groups`` imports torch (some group is not :data:`TORCH_FREE`).

    Parameters
    ----------
    groups : sequence of str
        Run groups (of :data:`RUN_GROUPS`).

    Returns
    -------
    bool
    """
    return any(g not in TORCH_FREE for g in groups)


def plan(pending: Sequence[str]) -> list[str]:
    """The pending groups to compute in a side process (:func:`attnspec.theorem.fork.split_by_cost`
    over :data:`GROUP_COST`, a share paying :data:`TORCH_IMPORT_COST` when it needs torch and
    torch is not imported yet); empty when one process is as fast.

    Parameters
    ----------
    pending : sequence of str
        The run groups still to compute.

    Returns
    -------
    list of str
    """
    import sys

    imported = "torch" in sys.modules

    def share(groups: Sequence[str]) -> float:
        torch_cost = TORCH_IMPORT_COST if needs_torch(groups) and not imported else 0.0
        return sum(GROUP_COST.get(g, 1.0) for g in groups) + torch_cost

    return FK.split_by_cost(pending, share)


#: What a partial result of an interrupted run holds (tables ``jl_partial_<group>_<part>``).
NOTE_PARTIAL = (
    "interrupted: the jl_partial_* tables hold the finished claim groups only (no jl table, no "
    "verdicts, no figures); the same command with --resume computes the missing groups"
)


class GroupInputs(NamedTuple):
    """What a run group reads."""

    config: JLConfig
    claims: Sequence[str]
    families: Sequence[str]
    ks: list[int]  # Lemma 1 and Theorem 1's k, or Theorem 2's
    sample_ks: list[int]  # the k with sampled errors
    attention: np.ndarray | None  # real attention matrices, (count, n, n)
    say: Callable[[str], None]


def _lemma1_group(g: GroupInputs) -> Done:
    config = g.config
    lemma_claims = [f"linformer.{c}" for c in g.claims if c.startswith("lemma1")]
    g.say(
        f"Lemma 1: families {', '.join(g.families)}, {len(g.ks)} values of k, {config.trials} Gaussian trials, "
        f"{config.trials_other} for other families"
    )
    t, s = L1.simulate_lemma1(
        config.n,
        config.eps,
        g.ks,
        families=g.families,
        trials=config.trials,
        trials_other=config.trials_other,
        rhos=config.rhos,
        seed=config.seed,
        sample_ks=g.sample_ks,
    )
    return [], {
        "jl": concat([t[t["claim"].isin(lemma_claims)]]),
        "errors": concat([s[s["claim"].isin(lemma_claims)]] if len(s) else []),
    }


def _thm1_group(g: GroupInputs) -> Done:
    config, ks1, sample_ks, attention, say = g.config, g.ks, g.sample_ks, g.attention, g.say
    n, seed = config.n, config.seed
    # One attention matrix at a time: at n = 4096 each is 134 MB.
    sources: list[tuple[str, Callable[[], np.ndarray]]] = [
        (
            kind,
            lambda kind=kind: T1.attention_matrix(
                kind, n, seed=child_seed(seed, "attention", kind), d=config.d, temperature=config.temperature
            ),
        )
        for kind in config.attention_kinds
    ]
    if attention is not None:
        if attention.ndim != 3 or attention.shape[1:] != (n, n):
            raise InputError(f"captured attention must have shape (count, {n}, {n}), got {attention.shape}")
        sources += [(f"{config.model}[{i}]", lambda i=i: attention[i]) for i in range(attention.shape[0])]
    say(
        f"Theorem 1: {len(sources)} attention matrices x {len(T1.W_KINDS)} vectors w, {len(ks1)} values of k, "
        f"{config.trials} trials"
    )
    tables, samples, extra = [], [], []
    from attnspec.runtime.progress import Progress

    prog = Progress("Theorem 1", total=config.trials * len(sources), unit="trials", at_most=True, say=say)
    for i, (name, make) in enumerate(sources):
        P = make()
        # the w of simulate_theorem1, computed once (the inverse iteration's LU is O(n³))
        vecs = T1.theorem1_vectors(P, seed=child_seed(seed, "thm1", "vectors", name))
        t, s = T1.simulate_theorem1(
            {name: P},
            config.eps,
            ks1,
            trials=config.trials,
            seed=seed,
            sample_ks=sample_ks,
            vectors={name: vecs},
            progress=prog,
        )
        if i >= len(config.attention_kinds):  # real P: the Eckart–Young optimum beside each k
            t = _with_eckart_young(t, s, P, vecs, name, say)
        tables.append(t)
        samples.append(s)
        if i == 0:  # the quantifier on the first matrix (the softmax one by default)
            say(f"Theorem 1's quantifier on {name}")
            # ranks up to n/2 only: the kernel of R costs O(n k²), and w in ker R gives P̃w = 0 at any k < n
            extra += check_quantifier(
                P,
                vecs,
                config.eps,
                [k for k in sample_ks if k <= max(1, n // 2)],
                name=name,
                seed=child_seed(seed, "thm1", "quantifier"),
                draws=QUANTIFIER_DRAWS,
            )
    prog.close()
    return extra, {"jl": concat(tables), "errors": concat(samples)}


def _thm2_group(g: GroupInputs) -> Done:
    from attnspec.runtime.progress import Progress

    config = g.config
    grid = PS.eq8_grid(config.n, config.d)
    g.say(
        f"Theorem 2: d = {config.d}, {len(g.ks)} values of k, up to {config.trials} trials (sequential), and eq. (8) "
        f"where its union bound is < 1: " + "; ".join(f"eps = {e:.3g}, k = {g}" for e, g in grid.items() if g)
    )
    with Progress("Theorem 2", total=3 * config.trials, unit="trials", at_most=True, say=g.say) as prog:
        t, s = T2.simulate_theorem2(
            config.n,
            config.d,
            config.eps,
            g.ks,
            trials=config.trials,
            seed=config.seed,
            sample_ks=g.sample_ks,
            grid=grid,
            progress=prog,
        )
    in_grid = t["sweep"].eq("eps-k-grid") if "sweep" in t else pd.Series(False, index=t.index)
    jl = concat([t[~in_grid].drop(columns=["sweep"], errors="ignore")])
    return [], {"jl": jl, "grid": concat([t[in_grid]]), "errors": concat([s])}


def _thm2_proof_group(g: GroupInputs) -> Done:
    """Theorem 2's printed formulas, proof steps and tolerances: no Monte Carlo of eq. (8), no
    torch, so a group of its own that the process computing Theorem 1 can take (see :func:`plan`)."""
    config, sample_ks, say = g.config, g.sample_ks, g.say
    n, d, eps, seed = config.n, config.d, config.eps, config.seed
    extra = PS.formula_rows(n, d, eps)
    s_setup = child_seed(seed, "thm2", "setup")
    setup = T2.theorem2_setup(n, d, seed=s_setup)
    say("Theorem 2: step (23), the zero output against the tolerances")
    x_row = setup["Q"][0] @ setup["K"].T / math.sqrt(d)
    extra += PS.step23_rows(
        {"x-zero": np.zeros(n), "x-row": x_row},
        sample_ks,
        config.trials_other,
        delta=1.0 / (2 * n),
        eps=eps,
        seed=child_seed(seed, "thm2", "step23"),
    )
    extra.append(PS.orientation_row(n, int(math.ceil(theorem2_k_main(n, d, eps))), eps))
    extra += PS.proof_step_rows(setup["Q"], setup["K"], setup["V"], eps, seed=child_seed(seed, "thm2", "proof"))
    extra += PS.tolerance_rows(
        setup["Q"],
        setup["K"],
        setup["V"],
        eps,
        draws=min(TOLERANCE_DRAWS, config.trials_other),
        seed=child_seed(seed, "thm2", "gaussian-v"),
        setup_seed=s_setup,
    )
    for eps_g, ks in PS.eq8_grid(n, d).items():
        if not ks:  # no k < n with a union bound below 1 at this ε
            kmin = union_bound_min_k(n, eps_g, pairs=n * d)
            params = {"n": n, "k": kmin, "eps": eps_g, "d": d, "sweep": "eps-k-grid"}
            extra += instance_rows("linformer.thm2.eq8", [Instance(params, params)], EQ8_NO_K)
    return extra, {}


def _eq4_group(g: GroupInputs) -> Done:
    config = g.config
    g.say("eqs. (4)/(15) as printed")
    s_att = child_seed(config.seed, "attention", "softmax")
    rows = check_eq4(
        T1.attention_logits(config.n, seed=s_att, d=config.d, temperature=config.temperature),
        name="softmax",
        seed=s_att,
    )
    return rows, {}


_GROUP_FUNCS: dict[str, Callable[..., Done]] = {
    "lemma1": _lemma1_group,
    "thm1": _thm1_group,
    "thm2": _thm2_group,
    "thm2-proof": _thm2_proof_group,
    "eq4": _eq4_group,
}


def run_groups(claims: Sequence[str]) -> list[str]:
    """The :data:`RUN_GROUPS` that the claim groups ``claims`` (as from :func:`parse_claims`) need.

    Parameters
    ----------
    claims : sequence of str
        Claim groups.

    Returns
    -------
    list of str
        In :data:`RUN_GROUPS`' order.
    """
    return [
        g for g in RUN_GROUPS if any(c == _SERVES.get(g, g) or c.startswith(_SERVES.get(g, g) + ".") for c in claims)
    ]


def run(
    config: JLConfig,
    *,
    progress: Callable[[str], None] | None = None,
    attention: np.ndarray | None = None,
    previous: Mapping[str, pd.DataFrame] | None = None,
) -> BatteryResult:
    """Run every selected claim at ``config``.

    Parameters
    ----------
    config : JLConfig
    progress : callable, optional
        Receives one-line progress messages.
    attention : ndarray of shape (count, n, n), optional
        Real row-stochastic attention matrices, checked against Theorem 1 beside the
        synthetic ones (named ``<model>[i]``).
    previous : mapping of str to DataFrame, optional
        The tables of an interrupted (partial) result of the same config (``--resume``): its
        finished claim groups are kept, only the missing ones are computed; the result is
        that of an uninterrupted run (wall time aside).

    Returns
    -------
    BatteryResult
        Tables ``jl``, ``jl_errors``, ``jl_curves``; the verdict rows; meta with the
        parameters, dimensions, notes, the k sweep and ``status: complete``.

    Raises
    ------
    attnspec.runtime.signals.InterruptedRun
        On Ctrl-C or SIGTERM, with the finished claim groups as a partial result.
    """
    start = time.time()
    config.validate()
    say = progress or (lambda _msg: None)
    n, eps = config.n, config.eps
    claims = parse_claims(list(config.claims))
    families = parse_families(list(config.families))
    dims = dimensions(n, eps, config.d)
    sweep, ks1, ks2, sample_ks = _k_lists(config, dims, claims)
    notes = _notes(config, dims, sweep, claims)
    names = run_groups(claims)

    def group(name: str) -> Group:
        def measure(_config: JLConfig, _tables: Mapping[str, pd.DataFrame]) -> Done:
            ks = ks2 if name.startswith("thm2") else ks1
            return _GROUP_FUNCS[name](GroupInputs(config, claims, families, ks, sample_ks, attention, say))

        return Group(measure, name=name)

    meta = {"identity": config_identity(config), "parameters": asdict(config), "seed": config.seed}
    keep = Keep(COMMAND, "jl", ("jl", "grid", "errors"), NOTE_PARTIAL, meta, previous)
    kept = sorted(keep.kept(names)) if previous else []

    def finish(rows: list[VerdictRow], tables: dict[str, pd.DataFrame]) -> BatteryResult:
        return _finish(config, claims, rows, tables, kept, ks1, notes, dims, sweep, start, say)

    # some groups in a forked process beside the others (both cores, split by cost: :func:`plan`)
    return G.run_groups(
        [group(n) for n in names],
        config,
        progress=say,
        split=lambda pending: plan(pending),  # looked up at the call: tests replace GROUP_COST
        needs_torch=needs_torch,
        keep=keep,
        finish=finish,
    )


def _finish(
    config: JLConfig,
    claims: Sequence[str],
    extra: list[VerdictRow],
    tables: Mapping[str, pd.DataFrame],
    kept: list[str],
    ks1: list[int],
    notes: list[str],
    dims: dict[str, float],
    sweep: list[int],
    start: float,
    say: Callable[[str], None],
) -> BatteryResult:
    """The result of a run whose groups are all done: their rows in group order (Theorem 2's
    (ε, k) grid last), the verdicts read off the whole ``jl`` table, eq. 18, the exact curves."""
    n, eps = config.n, config.eps
    k1, k18 = int(math.ceil(dims["linformer_k"])), appendix_a_k(n)
    table = concat([tables.get("jl", pd.DataFrame()), tables.get("grid", pd.DataFrame())])
    samp = tables.get("errors", pd.DataFrame())
    extra = list(extra)
    say("exact curves")
    kmax = max(max(ks1), n)
    dense = sorted({int(round(x)) for x in np.geomspace(1, kmax * 1.05, 60)} | set(ks1))
    curves = L1.exact_curves(n, eps, dense)
    rows = verdict_rows(table) if len(table) else []
    if len(table):
        own = [r for r in rows if r.params.get("construction") != "exists"]  # one per table row
        table = table.assign(verdict=[r.verdict for r in own], evidence=[r.evidence for r in own])
    if "thm1" in claims:
        extra += eq18_rows(table, k18, k1)
        extra += clipped_rows(table, k1)
    meta = {
        "parameters": asdict(config),
        "seed": config.seed,
        "dimensions": dims,
        "notes": notes,
        "sweep_k": sweep,
        "status": "complete",
        "groups_kept_from_before": kept,
        "wall_seconds": round(time.time() - start, 3),
    }
    return BatteryResult(
        command=COMMAND, verdicts=rows + extra, tables={"jl": table, "jl_errors": samp, "jl_curves": curves}, meta=meta
    )
