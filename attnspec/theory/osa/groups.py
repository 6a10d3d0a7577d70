"""The claim groups of osa-check (:mod:`attnspec.theorem.groups`), in the order of their rows.

The ``beside`` groups (the Jacobian theorems, Lemmas C.1 and C.7, the printed formulas: about
half of the CPU time without the timing sweep) run in a second process where one may fork;
``weight`` is each group's measured share of the CPU time (seed 0, defaults). Eq. (9)'s range
reads Theorem 3.1's table and Theorem 4.4's constant the Jacobian table, so each is declared
after, and in the same process as, the group it reads.
"""

from __future__ import annotations

from typing import Any

from attnspec.theorem.groups import Group

#: The K the layer-level checks use (the paper's K = 6) and the longest fixed sweep (K = 14).
LAYER_STEPS = 6
KERNEL_STEPS = 14

#: The first progress line when the ``beside`` groups run in a second process.
PARALLEL_NOTE = "in a second process"

#: The paper's own settings (Sec. 5: QR, or cubic Newton–Schulz with K = 6; Sec. 4's initialisation).
PAPER_BASES = frozenset({"qr", f"NS cubic K={LAYER_STEPS}"})

Config = Any  # attnspec.theory.osa.battery.OsaCheckConfig
Tables = dict[str, Any]


def jacobian_n(d_v: int) -> int:
    """N of the default Jacobian instance: 3 d_v > 2 d_v, so span(Q, K) (dimension 2 d_v) is a
    proper subspace of R^N — the low-rank regime of Theorems 4.1, 4.3, 4.4.

    Parameters
    ----------
    d_v : int
        The head width.

    Returns
    -------
    int
    """
    return 3 * d_v


def jacobian_full_span_n(d_v: int) -> int:
    """N of the one full-span case kept beside it: N = 2 d_v, where span(Q, K) is all of R^N
    and the basis is square.

    Parameters
    ----------
    d_v : int
        The head width.

    Returns
    -------
    int
    """
    return 2 * d_v


def _fit_draws(cfg: Config) -> int:
    """Draws the Jacobian check fits Theorem 4.4's C on (and tests it on as many others)."""
    from attnspec.theory.osa import jacobian

    return max(jacobian.THM44_FIT_DRAWS, cfg.trials)


def parallel_note(cfg: Config) -> str:
    """The progress line that says which groups the second process computes.

    Parameters
    ----------
    cfg : OsaCheckConfig

    Returns
    -------
    str
    """
    return (
        f"{PARALLEL_NOTE}: Theorems 4.1, 4.3, 4.4 (Jacobian; C fitted on {_fit_draws(cfg)} draws), "
        f"Lemmas C.1 and C.7, the printed formulas"
    )


def _thm21(cfg: Config, _t: Tables) -> tuple[list, Tables]:
    from attnspec.theory.osa import thm21

    rows, table = thm21.check_lowrank_expm(cfg.seed, alphas=tuple(sorted(set(cfg.alphas) | {4.0})))
    return rows, {"thm21": table}


def _layer(cfg: Config, _t: Tables) -> tuple[list, Tables]:
    from attnspec.theory.osa import thm21

    rows, table = thm21.check_layer_orthogonality(
        cfg.seed, alphas=cfg.alphas, schedules=list(cfg.schedules), trials=cfg.trials, ns_steps=LAYER_STEPS
    )
    return rows, {"layer_orthogonality": table}


def _thm31(cfg: Config, _t: Tables) -> tuple[list, Tables]:
    from attnspec.theory.osa import thm31

    table = thm31.simulate_orthogonality(
        cfg.seed, schedules=list(cfg.schedules), max_steps=cfg.steps, alphas=cfg.alphas, trials=cfg.trials
    )
    rows = thm31.verdicts_orthogonality(table, cfg.seed)
    return rows, {"thm31": table, "thm31_violations": thm31.orthogonality_violations(table)}


def _thm42(cfg: Config, _t: Tables) -> tuple[list, Tables]:
    from attnspec.theory.osa import thm42

    rows, table = thm42.check_wtilde(cfg.seed)
    return rows, {"thm42": table}


def _thm22(cfg: Config, _t: Tables) -> tuple[list, Tables]:
    from attnspec.theory.osa import thm22

    bases = (
        [("qr", "cubic", 0)]
        + [("newton-schulz", s, LAYER_STEPS) for s in cfg.schedules]
        + [("newton-schulz", "polar-express", KERNEL_STEPS)]
    )
    rows, table = thm22.check_kernel(cfg.seed, bases=bases, trials=cfg.trials)
    return rows, {"thm22": table}


def _jacobian(cfg: Config, _t: Tables) -> tuple[list, Tables]:
    from attnspec.theory.osa import jacobian

    bases = [("qr", "cubic", 0)] + [("newton-schulz", s, LAYER_STEPS) for s in cfg.schedules]
    common = {"d_model": cfg.d_model, "d_v": cfg.d_v, "bases": bases, "trials": _fit_draws(cfg)}
    # the low-rank regime the theorems are about (N > 2 d_v), and one full-span case (N <= 2 d_v)
    rows, low = jacobian.check_jacobian(
        cfg.seed, n=jacobian_n(cfg.d_v), multihead=2 if cfg.d_model % 2 == 0 else 0, **common
    )
    more, full = jacobian.check_jacobian(cfg.seed, n=jacobian_full_span_n(cfg.d_v), multihead=0, **common)
    return rows + more, {"jacobian": low, "jacobian_full_span": full}


def _lemc1(cfg: Config, _t: Tables) -> tuple[list, Tables]:
    from attnspec.theory.osa import lemc1

    return lemc1.lemma_c1_rows(list(cfg.schedules), max(cfg.steps, LAYER_STEPS), cfg.seed), {}


def _eq9(cfg: Config, tables: Tables) -> tuple[list, Tables]:
    from attnspec.theory.osa import lemc1

    return lemc1.eq9_range_rows(tables["thm31"], cfg.steps, cfg.seed), {}


def _lemc2(cfg: Config, _t: Tables) -> tuple[list, Tables]:
    from attnspec.theory.osa import lemmas

    table = lemmas.lemma_c2_table(cfg.seed, trials=cfg.trials)
    return lemmas.lemma_c2_rows(table, cfg.seed), {"lemma_c2": table}


def _lemc3(cfg: Config, _t: Tables) -> tuple[list, Tables]:
    from attnspec.theory.osa import lemmas

    table = lemmas.lemma_c3_table(cfg.seed, trials=cfg.trials)
    return lemmas.lemma_c3_rows(table, cfg.seed), {"lemma_c3": table}


def _lemc7(cfg: Config, _t: Tables) -> tuple[list, Tables]:
    from attnspec.theory.osa import lemmas

    table = lemmas.lemma_c7_table(cfg.seed, trials=min(cfg.trials, 2))
    return lemmas.lemma_c7_rows(table, cfg.seed), {"lemma_c7": table}


def _alg1(cfg: Config, _t: Tables) -> tuple[list, Tables]:
    from attnspec.theory.osa import algorithm1

    table = algorithm1.algorithm1_table(cfg.seed)
    return algorithm1.algorithm1_rows(table, cfg.seed), {"algorithm1": table}


def _printed(cfg: Config, tables: Tables) -> tuple[list, Tables]:
    from attnspec.theory.osa import printed

    rows, table = printed.printed_rows(cfg.seed)
    return rows + [printed.thm44_constant_row(tables["jacobian"], cfg.seed)], {"printed": table}


def _timing(cfg: Config, _t: Tables) -> tuple[list, Tables]:
    from attnspec.theory.osa.timing import time_forward

    return [], {"timing": time_forward(cfg.timing_ns, seed=cfg.seed)}


#: The timing sweep (last; left out with ``timing=False``).
TIMING = Group(_timing, lambda c: f"timing the forward pass, N = {', '.join(map(str, c.timing_ns))}", 3.0)

#: Every group, in the order of the rows and tables.
GROUPS: tuple[Group, ...] = (
    Group(_thm21, "Theorem 2.1 and exp(S) ∈ SO(N) against dense expm", 0.45),
    Group(_layer, f"orthogonality of the layer's A at K = {LAYER_STEPS}", 0.35),
    Group(_thm31, lambda c: f"Theorem 3.1 bounds over K = 0..{c.steps}", 1.4),
    Group(_thm42, "Theorem 4.2 κ(W̃)", 0.25),
    Group(_thm22, "Theorem 2.2 kernel eigenvalues", 0.9),
    Group(
        _jacobian,
        lambda c: (
            f"Theorems 4.1, 4.3, 4.4 (Jacobian by a written-out forward derivative; C fitted on {_fit_draws(c)} "
            f"draws, tested on {_fit_draws(c)} others)"
        ),
        4.4,
        beside=True,
    ),
    Group(
        _lemc1,
        "Lemmas C.1, C.2, C.3, C.7, eq. (9)'s σ range, Algorithm 1's sign fix, printed formulas",
        1.7,
        beside=True,
    ),
    Group(_eq9),
    Group(_lemc2),
    Group(_lemc3),
    Group(_lemc7, beside=True),
    Group(_alg1),
    Group(_printed, beside=True),
    TIMING,
)


def mark_paper_params(rows: list) -> None:
    """Set ``at_paper_params`` on the rows at the paper's own settings: the layer and kernel
    checks with its bases, Theorem 4.2 (its initialisation, up to its width d = 64) and the
    multihead reading (which evaluates the paper's d = 64, h = 4). Rows decided elsewhere
    (Thm 3.1, 4.3, 4.4) set it themselves.

    Parameters
    ----------
    rows : list of VerdictRow
        Changed in place.
    """
    for r in rows:
        if r.claim in ("osa.thm21.so_n", "osa.thm22") and r.params.get("basis") in PAPER_BASES:
            r.at_paper_params = True
        elif r.claim in ("osa.thm42", "osa.thm44.multihead"):
            r.at_paper_params = True
