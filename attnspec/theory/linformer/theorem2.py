"""Linformer Theorem 2 (eq. 8; Appendix B, eqs. 21–24): Monte Carlo with exact reduced samplers.

The statements and their readings are claims ``linformer.thm2.eq8`` and ``linformer.thm2.eq21``
(:mod:`.claims`). The column ``zero_output_passes`` marks the rows where the zero output meets
eq. (8)'s tolerance (there the existence claim cannot fail). Step (23), the tolerances and the
(ε, k) grid are in :mod:`.proof_steps`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

from attnspec.errors import check_range
from attnspec.numerics.stats import child_seed, numpy_rng
from attnspec.theorem.shared import SubPoint, draw_shared, sample_frame
from attnspec.theory.linformer import theorem2_samplers as S2
from attnspec.theory.linformer.dimensions import (
    check_eps,
    check_ks,
    check_n,
    lemma1_inner_bound,
    theorem2_union_bound,
)

THM2_ROWS: tuple[str, ...] = ("row0", "peaked", "flat")
THM2_CONSTRUCTIONS: tuple[str, ...] = ("paper", "plain")


def theorem2_setup(n: int, d: int, *, seed: int) -> dict[str, np.ndarray]:
    """Random Q, K, V ∈ R^{n×d} (standard normal; W's absorbed as in Appendix A); A = QKᵀ/√d
    is formed by rows when needed (:func:`theorem2_rows`).

    Parameters
    ----------
    n : int
        Sequence length.
    d : int
        Head dimension.
    seed : int
        Seed of Q, K and V.

    Returns
    -------
    dict
        ``Q``, ``K``, ``V``: ndarrays of shape (n, d).
    """
    rng = numpy_rng(seed)
    return {"Q": rng.standard_normal((n, d)), "K": rng.standard_normal((n, d)), "V": rng.standard_normal((n, d))}


def theorem2_rows(Q: np.ndarray, K: np.ndarray, block: int = 512) -> dict[str, int]:
    """Indices of the rows w of A = QKᵀ/√d checked: ``row0``, the most ``peaked``
    softmax(w) (largest ‖softmax(w)‖) and the ``flat``-test one (smallest).

    Parameters
    ----------
    Q, K : ndarray of shape (n, d)
    block : int
        Rows of A formed at a time (memory: block × n).

    Returns
    -------
    dict of str to int
    """
    d = Q.shape[1]
    peaks = np.empty(Q.shape[0])
    for s in range(0, Q.shape[0], block):
        A = Q[s : s + block] @ K.T / math.sqrt(d)  # (b, n)
        A -= A.max(1, keepdims=True)
        E = np.exp(A)
        peaks[s : s + block] = np.linalg.norm(E, axis=1) / E.sum(1)
    return {"row0": 0, "peaked": int(np.argmax(peaks)), "flat": int(np.argmin(peaks))}


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max())
    return e / e.sum()


def _error_samples(
    err: np.ndarray, cons: str, rname: str, ks: Sequence[int], kpos: dict[int, int], scale: float, size: int
) -> list[pd.DataFrame]:
    """The first look's relative errors ‖out − softmax(w)V‖/(‖softmax(w)‖‖V‖_2) at ``ks``."""
    columns = {"claim": "linformer.thm2.eq8", "reading": "spectral", "construction": cons, "row": rname}
    return [sample_frame(err[kpos[k]][:size] / scale, size, {**columns, "k": int(k)}) for k in ks]


def _checked_points(
    n: int, d: int, eps: float, ks: Sequence[int], trials: int, grid: dict[float, list[int]] | None
) -> tuple[np.ndarray, dict[float, list[int]], np.ndarray]:
    """The arguments checked: the main ks, the (ε, k) grid with sorted unique ks, and every k."""
    check_n(n)
    check_range("d", d, low=2)
    check_eps(eps)
    ks = check_ks(ks)
    check_range("trials", trials, low=1)
    grid = {float(e): sorted({int(k) for k in g}) for e, g in (grid or {}).items() if g}
    for e in grid:
        check_eps(e)
    return ks, grid, check_ks(sorted(set(ks.tolist()) | {k for g in grid.values() for k in g}))


def simulate_theorem2(
    n: int,
    d: int,
    eps: float,
    ks: Sequence[int],
    *,
    trials: int = 10_000,
    seed: int = 0,
    sample_ks: Sequence[int] = (),
    sample_size: int = 2000,
    grid: dict[float, list[int]] | None = None,
    look: int = 2000,
    sequential: bool = True,
    progress=None,  # noqa: ANN001 - an attnspec.runtime.progress.Progress or None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Monte Carlo of Theorem 2 (eq. 8 under both readings of ‖V‖, both constructions) and eq. 21.

    One set of draws per row w of A serves every k, the main ε and every ε of ``grid``
    (common random numbers: only the tolerance depends on ε). Trials come in looks of
    ``look``; with ``sequential`` a k stops drawing once the verdicts of its proof-construction
    and eq.-21 rows are settled (:func:`attnspec.theorem.shared.draw_shared`, one stream per
    k), else all ``trials`` are drawn. E = F = R (``plain``, not the paper's; reported as a measurement)
    is computed on the first chunk of 500 trials only.

    Parameters
    ----------
    n : int
        Sequence length, >= 2.
    d : int
        Head dimension.
    eps : float
        The main distortion ε, in (0, 1).
    ks : sequence of int
        Projection dimensions at the main ε.
    trials : int
        The most trials per point.
    seed : int
        Seed of every draw.
    sample_ks : sequence of int
        The k at which relative errors are kept for the figures.
    sample_size : int
        How many relative errors are kept per (construction, row, k).
    grid : dict of float to list of int, optional
        Further ε, each with its own k, sharing the main ε's draws.
    look : int
        Trials per look.
    sequential : bool
        Stop a k once its verdicts are settled.
    progress : attnspec.runtime.progress.Progress, optional
        Advanced as trials are drawn; None: silent.

    Returns
    -------
    table : DataFrame, one row per (claim, reading, construction, row, k); the ``grid`` rows
        (``sweep = "eps-k-grid"``) last. Readings of eq. 8: ``proof-spectral`` /
        ``proof-frobenius`` (construction ``paper``) and ``plain-spectral`` /
        ``plain-frobenius`` (construction ``plain``), with ``zero_output_passes`` (the
        zero output meets the tolerance: the existence statement cannot fail there).
    samples : relative errors ‖out − softmax(w)V‖/(‖softmax(w)‖‖V‖_2) at ``sample_ks``.
    """
    ks, grid, all_ks = _checked_points(n, d, eps, ks, trials, grid)
    kpos = {int(k): i for i, k in enumerate(all_ks)}
    s_setup = child_seed(seed, "thm2", "setup")
    setup = theorem2_setup(n, d, seed=s_setup)
    Q, K, V = setup["Q"], setup["K"], setup["V"]
    vnorms = {"spectral": float(np.linalg.norm(V, 2)), "frobenius": float(np.linalg.norm(V))}
    sample_at = sorted({int(k) for k in sample_ks} & set(kpos))
    main_rows: list[dict] = []
    grid_rows: dict[float, list[dict]] = {e: [] for e in grid}
    samples: list[pd.DataFrame] = []
    for rname, i in theorem2_rows(Q, K).items():
        w = Q[i] @ K.T / math.sqrt(d)  # (n,): row i of A
        s = _softmax(w)
        target = s @ V  # (d,)
        sd = child_seed(seed, "thm2", rname)
        looks_ = S2.Theorem2Looks(w, V, all_ks, delta=1.0 / (2 * n), seed=sd)
        f = _RowFacts(rname, i, float(np.linalg.norm(s)), float(np.linalg.norm(target)), sd, s_setup)
        plain_trials = min(look, trials, looks_.chunk)  # E = F = R: the first chunk only
        kw = {"vnorms": vnorms, "n": n, "d": d, "trials": trials, "plain_trials": plain_trials}
        main = _eq8_points(f, float(eps), [int(k) for k in ks], None, **kw)
        main += [_eq21_point(f, int(k), n=n, d=d, eps=eps, trials=trials) for k in ks]
        on_grid = {e: _eq8_points(f, e, g, "eps-k-grid", **kw) for e, g in grid.items()}
        subs = main + [sub for g in on_grid.values() for sub in g]

        errors = (samples, f.rname, sample_at, f.sn * vnorms["spectral"], sample_size)
        one_look = _row_look(
            looks_, subs, target, float(np.exp(w) @ V[:, 0]), ks=ks, all_ks=all_ks, eps=eps, errors=errors
        )
        drawn = draw_shared(one_look, subs, trials=trials, size=look, sequential=sequential, progress=progress)
        main_rows += drawn.rows(main)
        for e, g in on_grid.items():
            grid_rows[e] += drawn.rows(g)
    ordered = main_rows + [r for e in grid for r in grid_rows[e]]
    return pd.DataFrame(ordered), (pd.concat(samples, ignore_index=True) if samples else pd.DataFrame())


def _row_look(
    looks_: S2.Theorem2Looks,
    subs: list[SubPoint],
    target: np.ndarray,
    tgt21: float,
    *,
    ks: np.ndarray,
    all_ks: np.ndarray,
    eps: float,
    errors: tuple,
) -> Callable:
    """The looks of one row w of A (:data:`attnspec.theorem.shared.Look`): eq. (8)'s failures per
    sub-point (``plain`` on the first look only), eq. (21)'s per k, and the first look's
    relative errors appended to ``errors`` = (list, row name, sample ks, scale, size); ``target`` = softmax(w)V (d,),
    ``tgt21`` = exp(w)·V[:, 0]."""
    kpos = {int(k): i for i, k in enumerate(all_ks)}

    def look(c: int, first: bool, active: frozenset) -> dict:
        res = looks_.draw(c, plain=first, active=np.array([int(k) in active for k in all_ks]))
        fails = {}
        for cons in ("paper", "plain") if first else ("paper",):
            err = np.linalg.norm(res[cons] - target, axis=2)  # (len(all_ks), c), NaN where inactive
            for sub in subs:
                if sub.key[0] == cons and (cons == "plain" or sub.stream in active):
                    fails[sub.key] = int((err[kpos[sub.stream]] > sub.tail["tolerance"]).sum())
            if first:
                out, rname, sample_ks, scale, size = errors
                out.extend(_error_samples(err, cons, rname, sample_ks, kpos, scale, size))
        for k in (int(k) for k in ks if int(k) in active):
            fails[("eq21", k)] = int((np.abs(res["eq21"][kpos[k]] - tgt21) > eps * abs(tgt21)).sum())
        return fails

    return look


class _RowFacts(NamedTuple):
    """What one row w of A fixes: its name and index, ‖softmax(w)‖, the zero output's error
    ‖softmax(w)V‖, and the seeds of its draws and of Q, K, V."""

    rname: str
    i: int
    sn: float
    zero_err: float
    sd: int
    s_setup: int

    def head(self, claim: str, reading: str, cons: str, *, n: int, d: int, k: int, eps: float, bound: float) -> dict:
        """The identifying columns of a sub-point's row (no exact law: ``exact`` is NaN)."""
        return {"claim": claim, "reading": reading, "construction": cons, "row": self.rname, "row_index": self.i,
                "n": n, "d": d, "k": k, "eps": eps, "bound": bound, "exact": np.nan}  # fmt: skip


def _eq8_points(
    f: _RowFacts,
    e: float,
    ks: Sequence[int],
    sweep: str | None,
    *,
    vnorms: dict[str, float],
    n: int,
    d: int,
    trials: int,
    plain_trials: int,
) -> list[SubPoint]:
    """Eq. (8)'s sub-points at one ε: per construction, k and reading of ‖V‖. The paper's
    construction is stopped against the union bound; ``plain`` reads the first chunk only."""
    from attnspec.theorem import sequential as SQ

    out = []
    prefix = {"paper": "proof", "plain": "plain"}  # the reading's prefix, by construction
    for cons, k, (reading, vnorm) in itertools.product(THM2_CONSTRUCTIONS, ks, vnorms.items()):
        bound = float(theorem2_union_bound(n, d, k, e))
        tol = e * f.sn * vnorm
        tail = {
            "seed": f.sd,
            "setup_seed": f.s_setup,
            "zero_output_passes": bool(f.zero_err <= tol),
            "zero_output_error": f.zero_err,
            "tolerance": tol,
            "trials_max": trials,
        }
        out.append(
            SubPoint(
                (cons, e, k, reading, sweep),
                f.head("linformer.thm2.eq8", f"{prefix[cons]}-{reading}", cons, n=n, d=d, k=k, eps=e, bound=bound),
                {**tail, "sweep": sweep} if sweep else tail,
                claimed=bound,
                fixed=SQ.fixed_verdict(bound, trials_max=trials, vacuous=k >= n),
                stream=k,
                trials=plain_trials if cons == "plain" else None,
            )
        )
    return out


def _eq21_point(f: _RowFacts, k: int, *, n: int, d: int, eps: float, trials: int) -> SubPoint:
    """Eq. (21)'s sub-point at k, stopped against Lemma 1's bound 2e^{−c(ε)k}."""
    from attnspec.theorem import sequential as SQ

    bound = float(lemma1_inner_bound(k, eps))
    return SubPoint(
        ("eq21", k),
        f.head("linformer.thm2.eq21", "as-stated", "paper", n=n, d=d, k=k, eps=eps, bound=bound),
        {"seed": f.sd, "setup_seed": f.s_setup, "zero_output_passes": False, "trials_max": trials},
        claimed=bound,
        fixed=SQ.fixed_verdict(bound, trials_max=trials),
        stream=k,
    )
