"""The ``sa-check`` battery: ``config_from_options → run(config) → BatteryResult``.

``run`` computes the claim groups (one instance's measurements, :mod:`.measure`; the (L, k)
sweep, :mod:`.sweep`; the error map) with :func:`attnspec.theorem.groups.run_groups`, fits d*
(:mod:`.fit`), and reads the claims of :mod:`.claims` off the measurements. Tables: ``sa``
(every measurement, ``kind`` first) and ``error_map``; the verdict rows are ``verdicts``."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from attnspec.runtime.threads import torch_threads
from attnspec.theorem.fork import can_fork
from attnspec.theorem.groups import Group, run_groups
from attnspec.theorem.result import BatteryResult
from attnspec.theory.expressivity.config import Config, config_from_options
from attnspec.theory.expressivity.dimension import check_jl_dimension, check_width
from attnspec.theory.expressivity.error_map import error_map
from attnspec.theory.expressivity.fit import (
    check_klogl_heldout,
    check_klogl_measured,
    check_stated_heldout,
    check_stated_measured,
    fit_d_star,
)
from attnspec.theory.expressivity.hypotheses import check_hypotheses
from attnspec.theory.expressivity.identity import check_construction
from attnspec.theory.expressivity.jl_lemma import check_jl_lemma, check_orthogonal_norms
from attnspec.theory.expressivity.measure import (
    SEED_A,
    SEED_GAUSS,
    SEED_IDENTITY,
    SEED_ORTH,
    SEED_ORTH_NORM,
    Measurements,
    measurements,
)
from attnspec.theory.expressivity.measure import groups as measure_groups
from attnspec.theory.expressivity.reduction import check_off_support, check_on_support
from attnspec.theory.expressivity.sweep import check_sweep, sweep
from attnspec.verdicts.classify import VerdictRow

__all__ = ["COMMAND", "Config", "config_from_options", "run", "verdicts_of_instance"]

COMMAND = "sa-check"
#: The JL ε at which the single-vector lemmas are judged (against their exact laws).
JL_LEMMA_EPS = (0.1, 0.25, 0.5)
#: Monte Carlo draws that check the exact laws of the orthogonal projection's norms.
ORTH_NORM_TRIALS = 1000


def verdicts_of_instance(cfg: Config, ms: Measurements) -> list[VerdictRow]:
    """The verdict rows of one instance's measurements (everything but the sweep).

    Parameters
    ----------
    cfg : Config
    ms : Measurements, from :func:`attnspec.theory.expressivity.measure.measure`

    Returns
    -------
    list of VerdictRow
    """
    frame, at = ms.frame, ms.at
    dstar = int(frame.query("kind == 'd_star' and projection == 'gaussian' and method == 'exact'")["d"].iloc[0])
    dorth = int(frame.query("kind == 'd_star' and projection == 'orthogonal'")["d"].iloc[0])
    P = {"L": cfg.L, "k": cfg.k, "eps": cfg.eps, "delta": cfg.delta}
    # the trials at d* and at d_JL, pooled: the reduction's claims hold for any d
    trials = pd.concat([at["d_star"].assign(d=dstar), at["d_jl"].assign(d=ms.d_jl)], ignore_index=True)
    trials["seed"] = trials["seed"].astype(np.uint64)
    sd_star = int(at["d_star"]["seed"].iloc[0])
    sd_jl = int(at["d_jl"]["seed"].iloc[0])
    out = check_construction(
        L=cfg.L, k=cfg.k, m=cfg.m, M=cfg.M, eps=cfg.eps, support=cfg.support, seed=ms.seeds[SEED_IDENTITY], params=P
    )
    out += check_on_support(trials, M=cfg.M, m=cfg.m, delta=cfg.delta, params={**P, "d": dstar}, seed=sd_star)
    out += check_off_support(
        trials, L=cfg.L, k=cfg.k, m=cfg.m, eps=cfg.eps, delta=cfg.delta, params={**P, "d": dstar}, seed=sd_star,
        A_seed=ms.seeds[SEED_A],
    )  # fmt: skip
    out += check_jl_dimension(
        at["d_jl"], B=ms.B, L=cfg.L, d_jl=ms.d_jl, eps_jl=ms.eps_jl, delta=cfg.delta, beta=cfg.beta, d_star=dstar,
        params=P, seed=sd_jl, factorization=cfg.factorization, d_rownorm=ms.d_rownorm,
    )  # fmt: skip
    for proj, dd, sd in (("gaussian", dstar, ms.seeds[SEED_GAUSS]), ("orthogonal", dorth, ms.seeds[SEED_ORTH])):
        out += check_width(dd, L=cfg.L, k=cfg.k, projection=proj, params=P, trials=cfg.trials, seed=sd)
    out += check_stated_measured(frame, eps=cfg.eps, delta=cfg.delta, M=cfg.M)
    out += check_stated_heldout(frame, beta=cfg.beta)
    for e in JL_LEMMA_EPS:
        out += check_jl_lemma(cfg.L, e)
    out += check_orthogonal_norms(cfg.L, trials=ORTH_NORM_TRIALS, seed=ms.seeds[SEED_ORTH_NORM])
    out += check_hypotheses(
        frame.query("kind == 'hypotheses'"), at["d_star"], delta=cfg.delta, params={**P, "d": dstar}, seed_at=sd_star
    )
    return out


def _sweep(config: Config, tables: Mapping[str, Any]) -> tuple[list, dict[str, Any]]:
    sw = sweep(
        config.grid_L, config.grid_k, eps=config.eps, delta=config.delta, m=config.m, M=config.M, beta=config.beta,
        trials=config.sweep_trials, support=config.support, factorization=config.factorization, seed=config.seed,
    )  # fmt: skip
    return [], {"sweep": sw}


def _error_map(config: Config, tables: Mapping[str, Any]) -> tuple[list, dict[str, Any]]:
    return [], {"error_map": error_map(config)}


def _threaded(group: Group) -> Group:
    """``group`` at the run's torch threads in whichever process computes it."""

    def measure(config: Config, tables: Mapping[str, Any]) -> tuple[list, dict[str, Any]]:
        with torch_threads(config.threads):
            return group.measure(config, tables)

    return dataclasses.replace(group, measure=measure)


def groups(config: Config, beside: bool) -> list[Group]:
    """The battery's claim groups: one instance's measurements (:func:`.measure.groups`), the
    (L, k) sweep and the error map; with ``beside``, those that need nothing from the instance
    run in a second process (:func:`attnspec.theorem.groups.run_groups`).

    Parameters
    ----------
    config : Config
    beside : bool

    Returns
    -------
    list of Group
    """
    sweep_line = f"(L, k) sweep: {len(config.grid_L)} L × {len(config.grid_k)} k"
    found = measure_groups(beside)
    found[-1:-1] = [Group(_sweep, sweep_line, 0.26, beside)]
    return [_threaded(g) for g in (*found, Group(_error_map, "error-map instance", 0.06))]


def run(config: Config, *, progress: Callable[[str], None] | None = None) -> BatteryResult:
    """Run the whole ``sa-check`` battery.

    Parameters
    ----------
    config : Config (validated again here)
    progress : callable, optional, receives one-line progress messages

    Returns
    -------
    BatteryResult with tables ``sa`` and ``error_map``, the verdict rows, and ``meta``
    (parameters, seed, threads, wall and CPU seconds, of this process and of the second).
    """
    import resource

    config.validate()
    parallel = config.jobs >= 2 and can_fork()  # the one forking rule (honours ATTNSPEC_NO_FORK)
    import scipy.stats  # noqa: F401 - before the fork, so that both processes share it

    start, cpu0 = time.time(), time.process_time()
    children0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    note = "scaling sweeps, held-out tests, row-only hypotheses and (L, k) sweep: in a second process"
    with torch_threads(config.threads):
        _, tables = run_groups(groups(config, parallel), config, progress=progress, beside_note=note)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        ms, sw = measurements(config, tables), tables["sweep"]
        rows = verdicts_of_instance(config, ms)
        fits = fit_d_star(sw)
        rows += check_klogl_measured(sw, fits) + check_klogl_heldout(sw) + check_sweep(sw)
    cpu_child = children.ru_utime + children.ru_stime - children0.ru_utime - children0.ru_stime
    meta = {
        "parameters": config.parameters(),
        "identity": config.identity(),
        "seed": config.seed,
        "threads": config.threads,
        "wall_seconds": round(time.time() - start, 2),
        "cpu_seconds": round(time.process_time() - cpu0 + cpu_child, 2),
        "processes": 2 if parallel else 1,
        "cpu_seconds_second_process": round(cpu_child, 2),
    }
    sa = pd.concat([ms.frame, sw, fits], ignore_index=True)
    return BatteryResult(COMMAND, rows, tables={"sa": sa, "error_map": tables["error_map"]}, meta=meta)
