"""The error map of ``sa-check``: one small instance of the construction, entry by entry.

:func:`error_map` builds A, Â = eps SA(X) and SAN at the d* of the asymptotic law for a
``size``×``size`` problem with the run's parameters, drawn from the run's seeds
(:data:`~.measure.SEED_A`, :data:`~.measure.SEED_ASYM`, :data:`~.measure.SEED_MAP`). It is
the ``error_map`` table, apart from the measurements of :func:`~.measure.measure`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from attnspec.numerics.stats import spawn_seeds
from attnspec.theory.expressivity.config import Config
from attnspec.theory.expressivity.construction import construct, log_targets, san, sparse_target
from attnspec.theory.expressivity.dstar import asymptotic_d_star
from attnspec.theory.expressivity.measure import N_SEEDS, SEED_A, SEED_ASYM, SEED_MAP
from attnspec.theory.expressivity.sampling import asymptotic_errors


def error_map(cfg: Config, size: int = 64) -> pd.DataFrame:
    """One instance for the error maps: A, Â = eps SA(X) and SAN, entry by entry.

    A ``size``×``size`` problem with the run's k, m, M, eps, at the d* of the asymptotic
    law for it, capped so that X (L × 2d) holds at most 4e6 numbers.

    Parameters
    ----------
    cfg : Config
    size : int, the L of the instance (at most cfg.L)

    Returns
    -------
    DataFrame with one row per entry (L² rows): i, j, support, A, A_hat, san_target, san,
    and the instance's L, k, d, d_star, err_inf, seed.
    """
    cfg.validate()
    Ls = min(size, cfg.L)
    ks = min(cfg.k, Ls)
    seeds = spawn_seeds(cfg.seed, N_SEEDS)
    A = sparse_target(Ls, ks, m=cfg.m, M=cfg.M, support=cfg.support, seed=seeds[SEED_A])
    lam = asymptotic_errors(A, eps=cfg.eps, trials=100, factorization=cfg.factorization, seed=seeds[SEED_ASYM])
    d_star = asymptotic_d_star(lam, cfg.delta, cfg.beta)[0]
    # the construction materialises X (L × 2d): cap d so that X holds <= 4e6 numbers
    d = min(d_star, 2_000_000 // Ls)
    c = construct(A, d, cfg.eps, factorization=cfg.factorization, seed=seeds[SEED_MAP])
    Ahat = c.approximation().numpy()
    P = san(c.X, c.W_Q, c.W_K).numpy()
    Pt = A / A.sum(1, keepdims=True)
    i, j = np.meshgrid(np.arange(Ls), np.arange(Ls), indexing="ij")
    err = float(np.abs(c.logits().numpy() - log_targets(A, cfg.eps)).max())
    return pd.DataFrame(
        {
            "L": Ls,
            "k": ks,
            "d": d,
            "d_star": d_star,
            "err_inf": err,
            "seed": seeds[SEED_MAP],
            "i": i.ravel(),
            "j": j.ravel(),
            "support": (A > 0).ravel(),
            "A": A.ravel(),
            "A_hat": Ahat.ravel(),
            "san_target": Pt.ravel(),
            "san": P.ravel(),
        }
    )
