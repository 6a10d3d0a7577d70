"""Every measurement of one ``sa-check`` instance (no verdicts: those are in the claim modules).

:func:`measure` draws A, finds d* for Gaussian R (the d → ∞ law, then the exact bisection
around it) and for orthogonal R, measures every error of the construction at d*, at the JL
dimension d_JL and at a requested d, and runs the δ, M/m and eps scaling sweeps at a smaller
L. The tidy frame has one row per measured configuration, ``kind`` saying which:
``curve`` (success probability vs d, exact and asymptotic), ``d_star`` (Gaussian,
orthogonal), ``at_d`` (all error measures at one d), ``scaling_delta``, ``scaling_eps``,
``scaling_M`` (d* as δ, eps or M/m vary).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from attnspec.numerics.stats import clopper_pearson, spawn_seeds
from attnspec.theorem.groups import Group
from attnspec.theory.expressivity.bounds import dimension_jl, eps_jl_needed, eps_jl_paper
from attnspec.theory.expressivity.config import Config
from attnspec.theory.expressivity.construction import log_targets, sparse_target
from attnspec.theory.expressivity.dstar import DStar, asymptotic_d_star, find_d_star, grid_d_star
from attnspec.theory.expressivity.params import EXACT_TRIALS
from attnspec.theory.expressivity.sampling import TRIAL_COLUMNS, asymptotic_errors, sample_errors

#: The seeds of one run: spawn_seeds(cfg.seed, N_SEEDS); indices below say what each draws.
#: (SeedSequence children do not depend on the count, so adding seeds keeps the others.)
N_SEEDS = 15
(
    SEED_A,
    SEED_ASYM,
    SEED_GAUSS,
    SEED_ORTH,
    SEED_AT,
    SEED_SCALING_A,
    SEED_SCALING,
    SEED_MAP,
    SEED_HELDOUT_DELTA,
    SEED_HELDOUT_EPS,
    SEED_HYP_A,
    SEED_HYP_FIT,
    SEED_HYP_TEST,
    SEED_ORTH_NORM,
    SEED_IDENTITY,
) = range(15)


@dataclass
class Measurements:
    """What :func:`measure` returns."""

    frame: pd.DataFrame  # the tidy table (module docstring)
    at: dict[str, pd.DataFrame]  # per-trial measures (TRIAL_COLUMNS and seed) at "d_star" and "d_jl"
    lam: np.ndarray  # (trials,), the draws of the d → ∞ law at the run's instance
    A: np.ndarray  # (L, L)
    eps_jl: float  # the notes' JL ε, δ/(√k max|B|)
    d_jl: int  # the JL dimension for it, 8 ln(4L²/β) k max|B|²/δ²
    seeds: list[int]
    B: np.ndarray | None = None  # (L, L), the target logits
    d_rownorm: int | None = None  # the JL dimension with max‖b1_i‖² for k max|B|² (what polarisation needs)


def row(kind: str, cfg: Config, **values: object) -> dict[str, object]:
    """One row of the tidy frame: the run's parameters, then ``values``.

    Parameters
    ----------
    kind : str
        The row's ``kind`` column.
    cfg : Config
        The sa-check run's validated options.
    **values : object
        The row's measured columns.

    Returns
    -------
    dict
    """
    base = {
        "kind": kind,
        "L": cfg.L,
        "k": cfg.k,
        "eps": cfg.eps,
        "delta": cfg.delta,
        "m": cfg.m,
        "M": cfg.M,
        "beta": cfg.beta,
        "support": cfg.support,
        "factorization": cfg.factorization,
        "projection": "gaussian",
        "method": "exact",
        "d": np.nan,
        "seed": cfg.seed,
    }
    base.update(values)
    return base


def _search_rows(cfg: Config, ds: DStar, trials: int, seed: int, **values: object) -> list[dict[str, object]]:
    """A search for d*: a curve row per d it evaluated (its own counts where it stopped drawing
    once the verdict at d was certain, else the estimate times ``trials``), then its d* row."""
    rows = []
    for d, p in sorted(ds.evaluations):
        successes, drawn = ds.counts[d] if ds.counts and d in ds.counts else (int(round(p * trials)), trials)
        rows.append(_curve_row(cfg, d, successes, drawn, seed=seed, **values))
    return rows + [_d_star_row(cfg, ds, trials, seed, **values)]


def _d_star_row(cfg: Config, ds: DStar, trials: int, seed: int, **values: object) -> dict[str, object]:
    return row(
        "d_star", cfg, **values, d=ds.d_star, estimate=ds.d_star, d_low=ds.d_low, success=ds.success, trials=trials,
        seed=seed, evaluations=len(ds.evaluations),
    )  # fmt: skip


def _curve_row(cfg: Config, d: int, successes: int, trials: int, **values: object) -> dict[str, object]:
    ci = clopper_pearson(successes, trials)
    return row("curve", cfg, d=d, estimate=ci.estimate, ci_low=ci.low, ci_high=ci.high, trials=trials, **values)


#: Trials at the few exact points below L drawn for the success curve.
BELOW_L_TRIALS = 20


def _gaussian(
    cfg: Config, A: np.ndarray, seeds: list[int], d_jl: int
) -> tuple[list[dict[str, object]], tuple[np.ndarray, np.ndarray | None], DStar, dict[int, pd.DataFrame]]:
    """The asymptotic law (whole curve), the exact d* around it (:func:`_exact_d_star`), a few d < L."""
    # the row factorization also gets the ratio statistic of the same Z (for :mod:`.hypotheses`)
    lam = asymptotic_errors(
        A, eps=cfg.eps, trials=cfg.trials, factorization=cfg.factorization, seed=seeds[SEED_ASYM],
        statistic="both" if cfg.factorization == "row" else "max",
    )  # fmt: skip
    lam, lam_ratio = lam if isinstance(lam, tuple) else (lam, None)
    d_asym, d_asym_lo, d_asym_hi = asymptotic_d_star(lam, cfg.delta, cfg.beta)
    ds, frames, n_exact = _exact_d_star(cfg, A, seeds, d_asym, d_jl)
    evaluated = [d for d, _ in ds.evaluations]
    grid = np.unique(np.geomspace(max(1, min(evaluated) // 4), max(evaluated) * 2, 40).astype(int))
    rows = [
        _curve_row(cfg, int(d), int(np.sum(lam <= cfg.delta * math.sqrt(d))), lam.size, method="asymptotic",
                   seed=seeds[SEED_ASYM])
        for d in grid
    ]  # fmt: skip
    search = _search_rows(cfg, ds, n_exact, seeds[SEED_GAUSS], method="exact")
    rows += search[:-1] + _below_L_rows(cfg, A, seeds, ds) + search[-1:]
    rows.append(
        row("d_star", cfg, method="asymptotic", d=d_asym, estimate=d_asym, ci_low=d_asym_lo, ci_high=d_asym_hi,
            trials=cfg.trials, seed=seeds[SEED_ASYM])
    )  # fmt: skip
    return rows, (lam, lam_ratio), ds, frames


def _exact_d_star(
    cfg: Config, A: np.ndarray, seeds: list[int], d_asym: int, d_jl: int
) -> tuple[DStar, dict[int, pd.DataFrame], int]:
    """The exact d* for Gaussian R around the asymptotic d*, its draws by d, and its trials per d.

    When the asymptotic d* is >= 2L (the Wishart regime; the default instance has
    d* ≈ 670 L), the exact sampler runs once on a 2^(1/8) grid around it with common draws,
    d_JL included (:func:`~.dstar.grid_d_star`, ``min(trials, EXACT_TRIALS)`` trials);
    otherwise the galloping/bisection search :func:`~.dstar.find_d_star` with ``trials``.
    """
    common = {"eps": cfg.eps, "delta": cfg.delta, "beta": cfg.beta, "factorization": cfg.factorization}
    if d_asym >= 2 * cfg.L:
        n_exact = min(cfg.trials, EXACT_TRIALS)
        ds, frames = grid_d_star(A, **common, trials=n_exact, d_hint=d_asym, extra=(d_jl,), seed=seeds[SEED_GAUSS])
        return ds, frames, n_exact
    ds = find_d_star(
        A, **common, trials=cfg.trials, projection="gaussian", seed=seeds[SEED_GAUSS], d_hint=d_asym, full_stats=True
    )
    return ds, {}, cfg.trials


def _below_L_rows(cfg: Config, A: np.ndarray, seeds: list[int], ds: DStar) -> list[dict[str, object]]:
    """Curve rows at a few exact points below L, where the construction would actually save width."""
    rows: list[dict[str, object]] = []
    for d in sorted({max(1, cfg.L // 8), max(1, cfg.L // 4), max(1, cfg.L // 2)} - dict(ds.evaluations).keys()):
        df = sample_errors(
            A, d, eps=cfg.eps, trials=min(cfg.trials, BELOW_L_TRIALS), seed=seeds[SEED_GAUSS],
            factorization=cfg.factorization, only_max=True,
        )  # fmt: skip
        rows.append(_curve_row(cfg, d, int(np.sum(df["err_inf"] <= cfg.delta)), len(df), seed=seeds[SEED_GAUSS]))
    return rows


def _orthogonal(cfg: Config, A: np.ndarray, seeds: list[int]) -> list[dict[str, object]]:
    """d* for orthogonal R, by bisection on L − d."""
    do = find_d_star(
        A, eps=cfg.eps, delta=cfg.delta, beta=cfg.beta, trials=cfg.trials, projection="orthogonal",
        factorization=cfg.factorization, seed=seeds[SEED_ORTH],
    )  # fmt: skip
    return _search_rows(cfg, do, cfg.trials, seeds[SEED_ORTH], projection="orthogonal")


def _at_d_row(cfg: Config, df: pd.DataFrame, d: int, eps_jl: float, **values: object) -> dict[str, object]:
    """Every error measure of the trials ``df`` at one d, summarised (worst values)."""
    summary = {c: float(np.nanmax(df[c])) for c in TRIAL_COLUMNS if c != "off_argmax"}
    ci = clopper_pearson(int(np.sum(df["err_inf"] <= cfg.delta)), len(df))
    return row(
        "at_d", cfg, d=d, estimate=ci.estimate, ci_low=ci.low, ci_high=ci.high, trials=len(df),
        jl_failures=int(np.sum(df["jl_ratio"] > eps_jl)), eps_jl=eps_jl, **values,
        **{f"max_{c}": v for c, v in summary.items()}, min_off_min=float(np.nanmin(df["off_min"])),
    )  # fmt: skip


def _at_d(
    cfg: Config, A: np.ndarray, seeds: list[int], ds: DStar, eps_jl: float, d_jl: int, frames: dict[int, pd.DataFrame]
) -> tuple[list[dict[str, object]], dict[str, pd.DataFrame]]:
    """Every error measure at d* (the search's own draws), at d_JL (the grid pass's draws
    when it measured d_JL, else fresh draws) and at ``cfg.d``, Gaussian and orthogonal."""

    def fresh(d: int, projection: str = "gaussian") -> pd.DataFrame:
        return sample_errors(
            A, d, eps=cfg.eps, trials=cfg.trials, projection=projection, factorization=cfg.factorization,
            seed=seeds[SEED_AT],
        )  # fmt: skip

    rows: list[dict[str, object]] = []
    at: dict[str, pd.DataFrame] = {}
    for name, d in (("d_star", ds.d_star), ("d_jl", d_jl)):
        if name == "d_star" and ds.frame is not None:
            df, sd = ds.frame, seeds[SEED_GAUSS]
        elif d in frames:
            df, sd = frames[d], seeds[SEED_GAUSS]
        else:
            df, sd = fresh(d), seeds[SEED_AT]
        at[name] = df.assign(seed=sd)
        rows.append(_at_d_row(cfg, df, d, eps_jl, at=name, seed=sd))
    if cfg.d is not None:
        for proj in ("gaussian", "orthogonal") if cfg.d <= cfg.L else ("gaussian",):
            rows.append(
                _at_d_row(cfg, fresh(cfg.d, proj), cfg.d, eps_jl, projection=proj, at="user", seed=seeds[SEED_AT])
            )
    return rows, at


def _scaling_d_star(
    A: np.ndarray, *, eps: float, delta: float, beta: float, trials: int, factorization: str, seed: int
) -> tuple[DStar, int]:
    """d* of one scaling point: the asymptotic hint, then the exact bisection to 2^(1/16)."""
    lam = asymptotic_errors(A, eps=eps, trials=trials, factorization=factorization, seed=seed)
    hint = asymptotic_d_star(lam, delta, beta)[0]
    r = find_d_star(
        A,
        eps=eps,
        delta=delta,
        beta=beta,
        trials=trials,
        factorization=factorization,
        seed=seed,
        d_hint=hint,
        rel=2 ** (1 / 16),
    )
    return r, hint


#: The scaling sweeps: δ as multiples of the run's δ, M/m at fixed m, eps as multiples of m.
DELTA_FACTORS = (0.25, 0.5, 1.0, 2.0, 4.0)
M_RATIOS = (1.0, 4.0, 16.0, 64.0)
EPS_FACTORS = (0.5, 1e-1, 1e-2, 1e-3, 1e-4)


def _scaling_target(cfg: Config, M: float) -> np.ndarray:
    """The scaling sweeps' A at L = min(scaling_L, L), with largest entry M, on its own seed."""
    Ls = min(cfg.scaling_L, cfg.L)
    seed = spawn_seeds(cfg.seed, N_SEEDS)[SEED_SCALING_A]
    return sparse_target(Ls, min(cfg.k, Ls), m=cfg.m, M=M, support=cfg.support, seed=seed)


def _scaling_trials(cfg: Config) -> int:
    """Trials per scaling point: half the run's, at least 50."""
    return max(50, cfg.trials // 2)


def _scaling_group(cfg: Config, tables: Mapping[str, Any]) -> tuple[list, dict[str, Any]]:
    """d* as δ, M/m and eps vary (exact sampler) at L = min(scaling_L, L)."""
    seeds = spawn_seeds(cfg.seed, N_SEEDS)
    Ls = min(cfg.scaling_L, cfg.L)
    ks = min(cfg.k, Ls)

    As, st, sd = _scaling_target(cfg, cfg.M), _scaling_trials(cfg), seeds[SEED_SCALING]
    # (kind, A, eps, δ, the row's own columns) of every scaling point, in the frame's order
    points = [("scaling_delta", As, cfg.eps, x, {"delta": x}) for x in [cfg.delta * f for f in DELTA_FACTORS]]
    points += [
        ("scaling_M", _scaling_target(cfg, cfg.m * r), cfg.eps, cfg.delta, {"M": cfg.m * r, "M_over_m": r})
        for r in M_RATIOS
    ]
    points += [("scaling_eps", As, x, cfg.delta, {"eps": x}) for x in [cfg.m * f for f in EPS_FACTORS]]
    rows: list[dict[str, object]] = []
    for kind, A, eps, delta, own in points:
        r, hint = _scaling_d_star(
            A, eps=eps, delta=delta, beta=cfg.beta, trials=st, factorization=cfg.factorization, seed=sd
        )
        B = log_targets(A, eps)
        norms = {"max_row_norm": float(np.linalg.norm(B, axis=1).max())} if kind == "scaling_eps" else {}
        rows.append(
            row(
                kind, cfg, L=Ls, k=ks, **own, d=r.d_star, estimate=r.d_star, d_low=r.d_low, success=r.success,
                trials=st, seed=sd, d_asymptotic=hint, max_abs_B=float(np.abs(B).max()), **norms,
            )
        )  # fmt: skip
    return [], {"scaling_rows": rows}


#: The held-out tests of the scaling fits: the constant is fitted on the scaling points in
#: ``train`` and the bound it implies is tested at ``test`` on independent draws.
HELDOUT_DELTA = {"train": (2.0, 4.0), "test": 0.25}  # multiples of the run's δ
HELDOUT_EPS = {"train": 0.5, "test": 1e-4}  # multiples of m


def _heldout(
    cfg: Config, As: np.ndarray, *, d: int, eps: float, delta: float, seed: int, **own: object
) -> dict[str, object]:
    """One ``heldout`` row: fresh draws of the construction at width ``d``, failures of ``‖B − B̂‖∞ <= δ``."""
    st = _scaling_trials(cfg)
    err = sample_errors(As, d, eps=eps, trials=st, factorization=cfg.factorization, seed=seed, only_max=True)
    return row(
        "heldout", cfg, L=As.shape[0], k=int((As > 0).sum(1).max()), eps=eps, delta=delta, d=d, **own,
        failures=int(np.sum(err["err_inf"].to_numpy() > delta)), trials=st, seed=seed,
    )  # fmt: skip


def heldout_delta(
    cfg: Config, As: np.ndarray, frame: pd.DataFrame, seed: int, *, exponent: float = 1.0
) -> dict[str, object]:
    """Test ``d = C/δ^p`` (the notes: p = 1) at a δ it was not fitted on, with fresh draws.

    ``C = max d*·δ^p`` over the δ of :data:`HELDOUT_DELTA` ``train`` (each d* the upper end
    of its bisection bracket, so every training point meets its target with that C); at
    ``δ_test`` the bound ``d = ⌈C/δ_test^p⌉`` is drawn again with ``seed``.

    Parameters
    ----------
    cfg : Config
    As : array of shape (Ls, Ls), the scaling sweep's matrix
    frame : DataFrame with the ``scaling_delta`` rows
    seed : int, independent of the scaling sweep's
    exponent : float, p

    Returns
    -------
    dict, one ``heldout`` row: d tested, failures among trials, C, the training δ, seed
    """
    sd = frame.query("kind == 'scaling_delta'")
    train = sd[np.isin(np.round(sd["delta"] / cfg.delta, 9), HELDOUT_DELTA["train"])]
    c_fit = float((train["d"] * train["delta"] ** exponent).max())
    d_test = HELDOUT_DELTA["test"] * cfg.delta
    return _heldout(
        cfg, As, d=int(math.ceil(c_fit / d_test**exponent)), eps=cfg.eps, delta=d_test, seed=seed, fit="delta",
        exponent=exponent, C=c_fit, train=",".join(f"{x:g}" for x in sorted(train["delta"])),
    )  # fmt: skip


def _heldout_eps(cfg: Config, As: np.ndarray, frame: pd.DataFrame, seed: int) -> dict[str, object]:
    """Test "d does not depend on eps" (M = max A): the d* at eps = 0.5 m, drawn again at
    eps = 1e-4 m with ``seed`` (:data:`HELDOUT_EPS`).
    """
    se = frame.query("kind == 'scaling_eps'")
    e_train, e_test = HELDOUT_EPS["train"] * cfg.m, HELDOUT_EPS["test"] * cfg.m
    d_pred = int(se.loc[np.isclose(se["eps"], e_train), "d"].iloc[0])
    return _heldout(
        cfg, As, d=d_pred, eps=e_test, delta=cfg.delta, seed=seed, fit="eps", C=float(d_pred), train=f"{e_train:g}"
    )


#: The row-only hypothesis is checked at L = min(run's L, HYPOTHESES_MAX_L).
HYPOTHESES_MAX_L = 256


def _row_only_group(cfg: Config, tables: Mapping[str, Any]) -> tuple[list, dict[str, Any]]:
    """The two row-only sparsity rows (row and column factorization; :mod:`.hypotheses`)."""
    from attnspec.theory.expressivity.hypotheses import row_only_test

    seeds, Lh = spawn_seeds(cfg.seed, N_SEEDS), min(cfg.L, HYPOTHESES_MAX_L)
    rows = [
        row_only_test(
            L=Lh, k=min(cfg.k, HYPOTHESES_MAX_L), m=cfg.m, M=cfg.M, eps=cfg.eps, delta=cfg.delta, beta=cfg.beta,
            trials=cfg.trials, factorization=f, seed_A=seeds[SEED_HYP_A], seed_fit=seeds[SEED_HYP_FIT],
            seed_test=seeds[SEED_HYP_TEST],
        )
        for f in ("row", "column")
    ]  # fmt: skip
    return [], {"row_only_rows": rows}


def _instance(cfg: Config, tables: Mapping[str, Any]) -> tuple[list, dict[str, Any]]:
    """A and its logits, the notes' JL ε and d_JL, the Gaussian d* (d → ∞ law, then exact)."""
    seeds = spawn_seeds(cfg.seed, N_SEEDS)
    A = sparse_target(cfg.L, cfg.k, m=cfg.m, M=cfg.M, support=cfg.support, seed=seeds[SEED_A])
    B = log_targets(A, cfg.eps)
    # the notes' ε = δ/(√k max|B|) and its dimension d_JL = 8 ln(4L²/β) k max|B|²/δ²
    eps_jl = eps_jl_paper(B, cfg.delta, cfg.factorization)
    d_jl = dimension_jl(cfg.L, eps_jl, cfg.beta)
    rows, lams, ds, frames = _gaussian(cfg, A, seeds, d_jl)
    instance = {"A": A, "B": B, "eps_jl": eps_jl, "d_jl": d_jl, "seeds": seeds, "lams": lams, "ds": ds}
    return [], {"instance": instance, "frames": frames, "gaussian_rows": rows}


def _orthogonal_group(cfg: Config, tables: Mapping[str, Any]) -> tuple[list, dict[str, Any]]:
    i = tables["instance"]
    return [], {"orthogonal_rows": _orthogonal(cfg, i["A"], i["seeds"])}


def _at_d_group(cfg: Config, tables: Mapping[str, Any]) -> tuple[list, dict[str, Any]]:
    i = tables["instance"]
    rows, at = _at_d(cfg, i["A"], i["seeds"], i["ds"], i["eps_jl"], i["d_jl"], tables["frames"])
    return [], {"at_rows": rows, "at": at}


def _heldout_group(cfg: Config, tables: Mapping[str, Any]) -> tuple[list, dict[str, Any]]:
    """The held-out tests of the scaling fits (kind ``heldout``): :func:`heldout_delta` (p = 1, as
    in the notes) and :func:`_heldout_eps`, each on its own fresh seed."""
    frame, seeds, As = pd.DataFrame(tables["scaling_rows"]), spawn_seeds(cfg.seed, N_SEEDS), _scaling_target(cfg, cfg.M)
    rows = [
        heldout_delta(cfg, As, frame, seeds[SEED_HELDOUT_DELTA]),
        _heldout_eps(cfg, As, frame, seeds[SEED_HELDOUT_EPS]),
    ]
    return [], {"heldout_rows": rows}


def _ratio_group(cfg: Config, tables: Mapping[str, Any]) -> tuple[list, dict[str, Any]]:
    """Ratio against additive precision at the run's A, on the same Z draws as its d → ∞ law
    (a paired comparison; :func:`~.hypotheses.ratio_test`)."""
    from attnspec.theory.expressivity.hypotheses import ratio_test

    i = tables["instance"]
    lam, lam_ratio = i["lams"]
    row = ratio_test(
        i["A"], eps=cfg.eps, delta=cfg.delta, beta=cfg.beta, trials=cfg.trials, seed=i["seeds"][SEED_ASYM],
        lam_add=lam, lam_ratio=lam_ratio,
    )  # fmt: skip
    return [], {"ratio_rows": [row]}


def groups(beside: bool = False) -> list[Group]:
    """The measurements of one instance as claim groups (:class:`attnspec.theorem.groups.Group`),
    in the order of the tidy frame; each draws from its own seeds.

    Parameters
    ----------
    beside : bool
        Mark the groups that need nothing from the run's instance (the scaling sweeps, their
        held-out tests, the row-only hypothesis) to run in a second process.

    Returns
    -------
    list of Group
        Weights: their shares of the default run's CPU time.
    """
    return [
        Group(_instance, "asymptotic law of Gaussian projections, then the exact d* around it", 0.34),
        Group(_orthogonal_group, "orthogonal projections: bisection on L − d", 0.05),
        Group(_at_d_group, "error measures at d*, at d_JL and at the requested d", 0.01),
        Group(_scaling_group, "scaling sweeps in δ, M/m and eps", 0.15, beside),
        Group(_heldout_group, "held-out tests of the scaling fits", 0.01, beside),
        Group(_row_only_group, "hypotheses: row-only sparsity", 0.06, beside),
        Group(_ratio_group, "hypotheses: ratio precision", 0.05),
    ]


#: The tables of :func:`groups` that make the tidy frame, in its row order.
FRAME_PARTS = (
    "gaussian_rows",
    "orthogonal_rows",
    "at_rows",
    "scaling_rows",
    "heldout_rows",
    "row_only_rows",
    "ratio_rows",
)


def measurements(cfg: Config, tables: Mapping[str, Any]) -> Measurements:
    """The :class:`Measurements` of the tables of :func:`groups`.

    Parameters
    ----------
    cfg : Config
    tables : mapping
        Every table of :func:`groups` (:func:`attnspec.theorem.groups.run_groups`).

    Returns
    -------
    Measurements
    """
    i = tables["instance"]
    frame = pd.DataFrame([row for part in FRAME_PARTS for row in tables[part]])
    d_rownorm = dimension_jl(cfg.L, eps_jl_needed(i["B"], cfg.delta, cfg.factorization), cfg.beta)
    return Measurements(
        frame=frame, at=tables["at"], lam=i["lams"][0], A=i["A"], eps_jl=i["eps_jl"], d_jl=i["d_jl"],
        seeds=i["seeds"], B=i["B"], d_rownorm=d_rownorm,
    )  # fmt: skip


def measure(cfg: Config, *, progress: Callable[[str], None] | None = None) -> Measurements:
    """Run every measurement at the instance of ``cfg``, in this process.

    Parameters
    ----------
    cfg : Config (validated here)
    progress : callable, optional, receives one-line messages

    Returns
    -------
    Measurements
    """
    from attnspec.theorem.groups import run_groups

    cfg.validate()
    return measurements(cfg, run_groups(groups(), cfg, progress=progress)[1])
