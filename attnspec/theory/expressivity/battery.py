"""The ``sa-check`` battery: ``config_from_options → run(config) → BatteryResult``.

``run`` measures one instance (:mod:`.measure`), sweeps the (L, k) grid (:mod:`.sweep`),
fits d* (:mod:`.fit`), builds the error-map instance, and turns the measurements into
verdict rows keyed on the claim ids of :mod:`.claims`, each decided by the one classifier
(:mod:`attnspec.verdicts.classify`).

Tables: ``sa`` (every measurement, ``kind`` first) and ``error_map`` (one instance entry
by entry); the verdict rows are the result's ``verdicts``.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import pandas as pd

from attnspec.runtime.threads import torch_threads
from attnspec.theorem.fork import Forked, can_fork
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
    measure,
    row_only_rows,
    scaling_rows,
)
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
        trials,
        L=cfg.L,
        k=cfg.k,
        m=cfg.m,
        eps=cfg.eps,
        delta=cfg.delta,
        params={**P, "d": dstar},
        seed=sd_star,
        A_seed=ms.seeds[SEED_A],
    )
    out += check_jl_dimension(
        at["d_jl"],
        B=ms.B,
        L=cfg.L,
        d_jl=ms.d_jl,
        eps_jl=ms.eps_jl,
        delta=cfg.delta,
        beta=cfg.beta,
        d_star=dstar,
        params=P,
        seed=sd_jl,
        factorization=cfg.factorization,
        d_rownorm=ms.d_rownorm,
    )
    out += [
        check_width(dd, L=cfg.L, k=cfg.k, projection=proj, params=P, trials=cfg.trials, seed=sd)
        for proj, dd, sd in (("gaussian", dstar, ms.seeds[SEED_GAUSS]), ("orthogonal", dorth, ms.seeds[SEED_ORTH]))
    ]
    out += check_stated_measured(frame, eps=cfg.eps, delta=cfg.delta, M=cfg.M)
    out += check_stated_heldout(frame, beta=cfg.beta)
    for e in JL_LEMMA_EPS:
        out += check_jl_lemma(cfg.L, e)
    out += check_orthogonal_norms(cfg.L, trials=ORTH_NORM_TRIALS, seed=ms.seeds[SEED_ORTH_NORM])
    out += check_hypotheses(
        frame.query("kind == 'hypotheses'"), at["d_star"], delta=cfg.delta, params={**P, "d": dstar}, seed_at=sd_star
    )
    return out


#: The phases of :func:`run` in order, by the first words of their progress messages, with
#: their share of the default run's CPU time (measured on the default run); the ETA reads them.
PHASES: tuple[tuple[str, float], ...] = (
    ("asymptotic law", 0.09),
    ("exact", 0.25),
    ("orthogonal projections", 0.05),
    ("error measures", 0.01),
    ("scaling", 0.15),
    ("held-out", 0.01),
    ("hypotheses", 0.11),
    ("sweep", 0.26),
    ("error-map", 0.06),
)


#: The same with ``jobs = 2``: the scaling sweeps, the row-only hypotheses and the sweep run
#: in the second process; the main one draws the error map before it waits for the sweep
#: (shares of the main process's time after the fork, measured on the default run).
PHASES_PARALLEL: tuple[tuple[str, float], ...] = (
    ("scaling sweeps", 0.0),
    ("asymptotic law", 0.21),
    ("exact", 0.56),
    ("orthogonal projections", 0.01),
    ("error measures", 0.02),
    ("held-out", 0.01),
    ("hypotheses", 0.08),
    ("error-map", 0.1),
    ("sweep", 0.01),
)


def with_eta(say: Callable[[str], None], phases: tuple[tuple[str, float], ...] = PHASES) -> Callable[[str], None]:
    """Wrap a progress callable: each message gets the elapsed time's extrapolation to the end
    of the run, from the share of the default run's time its phase starts at (:data:`PHASES`).

    The estimate is for the default proportions; a run with a large sweep or many trials
    may see it move. (When ``attnspec.runtime.progress`` exists, this is where it plugs in.)
    """
    start = time.time()

    def out(msg: str) -> None:
        done = 0.0
        for prefix, share in phases:
            if msg.startswith(prefix):
                break
            done += share
        elapsed = time.time() - start
        if 0.05 < done < 1.0 and elapsed > 0.5:
            left = elapsed * (1.0 - done) / done
            say(f"{msg} (about {left:.0f} s left)")
        else:
            say(msg)

    return out


def _set_torch_threads(threads: int) -> None:
    import torch

    torch.set_num_threads(threads)


def run(config: Config, *, progress: Callable[[str], None] | None = None) -> BatteryResult:
    """Run the whole ``sa-check`` battery.

    Parameters
    ----------
    config : Config (validated again here)
    progress : callable, optional, receives one-line progress messages

    Returns
    -------
    BatteryResult with tables ``sa`` and ``error_map``, the verdict rows, and ``meta``
    (parameters, seed, threads, wall and CPU seconds).
    """
    config.validate()
    parallel = config.jobs >= 2 and can_fork()  # the one forking rule (honours ATTNSPEC_NO_FORK)
    say = with_eta(progress, PHASES_PARALLEL if parallel else PHASES) if progress else (lambda s: None)
    start, cpu0 = time.time(), time.process_time()

    def sweep_part() -> pd.DataFrame:
        return sweep(
            config.grid_L,
            config.grid_k,
            eps=config.eps,
            delta=config.delta,
            m=config.m,
            M=config.M,
            beta=config.beta,
            trials=config.sweep_trials,
            support=config.support,
            factorization=config.factorization,
            seed=config.seed,
            progress=None if parallel else say,
        )

    child, cpu_fork = None, 0.0
    with torch_threads(config.threads):
        try:
            if parallel:
                # the parts that need nothing from the main measurement, each on its own seeds:
                # the same numbers as in one process (tested); scipy.stats first, so both share it
                import scipy.stats  # noqa: F401

                cpu_fork = time.process_time() - cpu0
                child = Forked(
                    [lambda: scaling_rows(config), lambda: row_only_rows(config), sweep_part],
                    initializer=lambda: _set_torch_threads(config.threads),
                )
                say("scaling sweeps, row-only hypotheses and (L, k) sweep: in a second process")
            ms = measure(
                config,
                progress=say,
                scaling=child.next if child is not None else None,
                row_only=child.next if child is not None else None,
            )
            rows = verdicts_of_instance(config, ms)
            if child is not None:  # the error map here, while the second process finishes the sweep
                say("error-map instance")
                em = error_map(config)
                say("sweep: waiting for the second process")
            sw = child.next() if child is not None else sweep_part()
            fits = fit_d_star(sw)
            rows += check_klogl_measured(sw, fits)
            rows += check_klogl_heldout(sw)
            rows += check_sweep(sw)
            if child is None:
                say("error-map instance")
                em = error_map(config)
        finally:
            if child is not None:
                child.close()
    cpu_child = child.cpu_seconds if child is not None else 0.0
    meta = {
        "parameters": config.parameters(),
        "identity": config.identity(),
        "seed": config.seed,
        "threads": config.threads,
        "wall_seconds": round(time.time() - start, 2),
        "cpu_seconds": round(time.process_time() - cpu0 + cpu_child, 2),
        "processes": 2 if parallel else 1,
        "cpu_seconds_second_process": round(cpu_child, 2),
        "cpu_seconds_before_second_process": round(cpu_fork, 2),
    }
    sa = pd.concat([ms.frame, sw, fits], ignore_index=True)
    return BatteryResult(COMMAND, rows, tables={"sa": sa, "error_map": em}, meta=meta)
