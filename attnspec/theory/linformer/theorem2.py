"""Linformer Theorem 2 (eq. 8; Appendix B, eqs. 21–24): Monte Carlo with exact reduced samplers.

E = δR, F = e^{−δ}R, δ = 1/(2n); for any row w of A = QKᵀ/√d,

    Pr(‖softmax(wEᵀ) F V − softmax(w) V‖ <= ε‖softmax(w)‖‖V‖) > 1 − o(1),

‖V‖ read as spectral and as Frobenius norm, compared with the union over the n·d
(row, column) pairs of eq. 21, 2nd·e^{−(ε² − ε³)k/4}; E = F = R ("plain") for comparison;
and eq. 21 itself, |exp(xEᵀ) F yᵀ − exp(x) yᵀ| <= ε|exp(x) yᵀ| w.p. > 1 − 2e^{−(ε² − ε³)k/4}.
Where the zero output meets the tolerance of eq. 8 (‖softmax(w)V‖ <= ε‖softmax(w)‖‖V‖),
the column ``zero_output_passes`` says so: there the existence claim cannot fail.

The proof's step (23), the tolerances' triviality and the (ε, k) sweep are in
:mod:`.proof_steps`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from attnspec.errors import check_range
from attnspec.numerics.stats import child_seed, numpy_rng
from attnspec.theorem.counts import mc_columns
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


def _count_failures(
    fails: dict,
    err: np.ndarray,
    cons: str,
    points: Sequence[tuple[float, int, str]],
    kpos: dict[int, int],
    active: np.ndarray,
    sn: float,
    vnorms: dict[str, float],
) -> None:
    """Add one look's failures to ``fails[(construction, ε, k, reading)]``; ``err`` is
    (len(all_ks), trials of the look). The paper's construction skips the k that stopped."""
    for e, k, _ in points:
        if not active[kpos[k]] and cons == "paper":
            continue
        for reading, vnorm in vnorms.items():
            key = (cons, e, k, reading)
            fails[key] = fails.get(key, 0) + int((err[kpos[k]] > e * sn * vnorm).sum())


def _error_samples(
    err: np.ndarray, cons: str, rname: str, ks: Sequence[int], kpos: dict[int, int], scale: float, size: int
) -> list[pd.DataFrame]:
    """The first look's relative errors ‖out − softmax(w)V‖/(‖softmax(w)‖‖V‖_2) at ``ks``."""
    out = []
    for k in ks:
        v = err[kpos[k]][:size] / scale
        out.append(
            pd.DataFrame(
                {
                    "claim": "linformer.thm2.eq8",
                    "reading": "spectral",
                    "construction": cons,
                    "row": rname,
                    "k": int(k),
                    "sample": np.arange(v.size),
                    "value": v,
                }
            )
        )
    return out


def _stop_settled(
    active: np.ndarray,
    all_ks: np.ndarray,
    points: Sequence[tuple[float, int, str]],
    fails: dict,
    eq21_fail: dict[int, int],
    counted: np.ndarray,
    *,
    n: int,
    d: int,
    eps: float,
    trials: int,
    n_looks: int,
) -> None:
    """Stop drawing for every k whose proof-construction and eq.-21 rows are all settled, or
    searched for violations where their claim is beyond resolution
    (:mod:`attnspec.theorem.sequential`): ``active[ik] = False``."""
    from attnspec.theorem import sequential as SQ

    for ik, k in enumerate(all_ks):
        if not active[ik]:
            continue
        k = int(k)
        ok = True
        for e, kk, _ in points:
            if kk != k:
                continue
            bound = float(theorem2_union_bound(n, d, k, e))
            if SQ.fixed_verdict(bound, trials_max=trials, vacuous=k >= n):
                continue
            ok &= all(
                SQ.can_stop(fails[("paper", e, k, r)], int(counted[ik]), bound, n_looks=n_looks, trials_max=trials)
                for r in ("spectral", "frobenius")
            )
        if k in eq21_fail:
            b21 = float(lemma1_inner_bound(k, eps))
            if not SQ.fixed_verdict(b21, trials_max=trials):
                ok &= SQ.can_stop(eq21_fail[k], int(counted[ik]), b21, n_looks=n_looks, trials_max=trials)
        if ok:
            active[ik] = False


def _output_rows(
    drawn: dict[str, Any],
    f: dict[str, Any],
    *,
    n: int,
    d: int,
    eps: float,
    ks: np.ndarray,
    grid: dict[float, list[int]],
    trials: int,
) -> tuple[list[dict], dict[float, list[dict]]]:
    """The table rows of one row w of A from its counts: eq. (8) at the main ε (both
    constructions, both readings of ‖V‖), eq. (21), then the (ε, k) grid rows per ε."""
    fails, counted, kpos = drawn["fails"], drawn["counted"], drawn["kpos"]
    rname, i, sn, sd, s_setup = f["rname"], f["i"], f["sn"], f["sd"], f["s_setup"]
    vnorms = (("spectral", f["v2"]), ("frobenius", f["vf"]))

    def row(cons: str, e: float, k: int, reading: str, vnorm: float, sweep: str | None) -> dict:
        tol = e * sn * vnorm
        t_k = drawn["plain_trials"] if cons == "plain" else int(counted[kpos[k]])
        out = {
            "claim": "linformer.thm2.eq8",
            "reading": f"{'proof' if cons == 'paper' else 'plain'}-{reading}",
            "construction": cons,
            "row": rname,
            "row_index": i,
            "n": n,
            "d": d,
            "k": int(k),
            "eps": e,
            "bound": float(theorem2_union_bound(n, d, k, e)),
            "exact": np.nan,
            **mc_columns(fails[(cons, e, k, reading)], t_k),
            "seed": sd,
            "setup_seed": s_setup,
            "zero_output_passes": bool(f["zero_err"] <= tol),
            "zero_output_error": f["zero_err"],
            "tolerance": tol,
            "trials_max": trials,
        }
        if sweep:
            out["sweep"] = sweep
        return out

    main = [
        row(cons, float(eps), int(k), reading, vnorm, None)
        for cons in THM2_CONSTRUCTIONS
        for k in ks
        for reading, vnorm in vnorms
    ]
    for k in ks:
        main.append(
            {
                "claim": "linformer.thm2.eq21",
                "reading": "as-stated",
                "construction": "paper",
                "row": rname,
                "row_index": i,
                "n": n,
                "d": d,
                "k": int(k),
                "eps": eps,
                "bound": float(lemma1_inner_bound(k, eps)),
                "exact": np.nan,
                **mc_columns(drawn["eq21_fail"][int(k)], int(counted[kpos[int(k)]])),
                "seed": sd,
                "setup_seed": s_setup,
                "zero_output_passes": False,
                "trials_max": trials,
            }
        )
    by_eps = {
        e: [
            row(cons, e, int(k), reading, vnorm, "eps-k-grid")
            for cons in THM2_CONSTRUCTIONS
            for k in g
            for reading, vnorm in vnorms
        ]
        for e, g in grid.items()
    }
    return main, by_eps


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
    and eq.-21 rows are settled (:mod:`attnspec.theorem.sequential`), else all
    ``trials`` are drawn. E = F = R (``plain``, not the paper's; reported as a measurement)
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
    from attnspec.theorem import sequential as SQ

    ks, grid, all_ks = _checked_points(n, d, eps, ks, trials, grid)
    kpos = {int(k): i for i, k in enumerate(all_ks)}
    s_setup = child_seed(seed, "thm2", "setup")
    setup = theorem2_setup(n, d, seed=s_setup)
    Q, K, V = setup["Q"], setup["K"], setup["V"]
    row_index = theorem2_rows(Q, K)
    v2 = float(np.linalg.norm(V, 2))
    vf = float(np.linalg.norm(V))
    delta = 1.0 / (2 * n)
    n_looks = SQ.looks(trials, look)
    sample_at = sorted({int(k) for k in sample_ks} & set(kpos))
    main_rows: list[dict] = []
    grid_rows: dict[float, list[dict]] = {e: [] for e in grid}
    samples: list[pd.DataFrame] = []
    # the (ε, k) points: the main ε at ks, each grid ε at its ks
    points = [(float(eps), int(k), "main") for k in ks] + [(e, k, "grid") for e, g in grid.items() for k in g]
    for rname, i in row_index.items():
        w = Q[i] @ K.T / math.sqrt(d)  # (n,): row i of A
        s = _softmax(w)
        target = s @ V  # (d,)
        sd = child_seed(seed, "thm2", rname)
        row_facts = {
            "rname": rname,
            "i": i,
            "sn": float(np.linalg.norm(s)),
            "v2": v2,
            "vf": vf,
            "zero_err": float(np.linalg.norm(target)),
            "sd": sd,
            "s_setup": s_setup,
        }
        drawn, row_samples = _draw_row(
            S2.Theorem2Looks(w, V, all_ks, delta=delta, seed=sd),
            row_facts,
            target,
            float(np.exp(w) @ V[:, 0]),
            ks=ks,
            all_ks=all_ks,
            kpos=kpos,
            points=points,
            n=n,
            d=d,
            eps=eps,
            trials=trials,
            look=look,
            n_looks=n_looks,
            sequential=sequential,
            sample_ks=sample_at,
            sample_size=sample_size,
            progress=progress,
        )
        samples += row_samples
        main, by_eps = _output_rows(drawn, row_facts, n=n, d=d, eps=eps, ks=ks, grid=grid, trials=trials)
        main_rows += main
        for e, rows_e in by_eps.items():
            grid_rows[e] += rows_e
    ordered = main_rows + [r for e in grid for r in grid_rows[e]]
    return pd.DataFrame(ordered), (pd.concat(samples, ignore_index=True) if samples else pd.DataFrame())


def _draw_row(
    looks_: S2.Theorem2Looks,
    f: dict[str, Any],
    target: np.ndarray,
    tgt21: float,
    *,
    ks: np.ndarray,
    all_ks: np.ndarray,
    kpos: dict[int, int],
    points: Sequence[tuple[float, int, str]],
    n: int,
    d: int,
    eps: float,
    trials: int,
    look: int,
    n_looks: int,
    sequential: bool,
    sample_ks: list[int],
    sample_size: int,
    progress,  # noqa: ANN001 - an attnspec.runtime.progress.Progress or None
) -> tuple[dict[str, Any], list[pd.DataFrame]]:
    """The looks of one row w of A, until every k has stopped or ``trials`` are drawn: its
    failure counts (``drawn``, as :func:`_output_rows` reads them) and the first look's
    relative errors at ``sample_ks``. ``target`` = softmax(w)V (d,), ``tgt21`` = exp(w)·V[:, 0]."""
    rname, sn, v2, vf = f["rname"], f["sn"], f["v2"], f["vf"]
    fails = {}  # (construction, eps, k, reading) -> failures
    eq21_fail = {int(k): 0 for k in ks}
    counted = np.zeros(len(all_ks), dtype=np.int64)  # trials drawn per k
    plain_trials = 0
    active = np.ones(len(all_ks), bool)
    samples: list[pd.DataFrame] = []
    done = 0
    while done < trials:
        c = min(look, trials - done)
        first = done == 0
        res = looks_.draw(c, plain=first, active=active)
        done += c
        for cons in ("paper", "plain") if first else ("paper",):
            err = np.linalg.norm(res[cons] - target, axis=2)  # (len(all_ks), c), NaN where inactive
            _count_failures(fails, err, cons, points, kpos, active, sn, {"spectral": v2, "frobenius": vf})
            if first:
                samples += _error_samples(err, cons, rname, sample_ks, kpos, sn * v2, sample_size)
        for k in eq21_fail:
            if active[kpos[k]]:
                eq21_fail[k] += int((np.abs(res["eq21"][kpos[k]] - tgt21) > eps * abs(tgt21)).sum())
        counted[active] += c
        if first:
            plain_trials = res["plain"].shape[1]
        if progress is not None:
            progress.advance(c * int(active.sum()) / len(all_ks))
        if not sequential or done >= trials:
            continue
        _stop_settled(
            active, all_ks, points, fails, eq21_fail, counted, n=n, d=d, eps=eps, trials=trials, n_looks=n_looks
        )
        if not active.any():
            break
    if progress is not None:
        progress.advance(0, total=progress.total - (trials - done) if done < trials else None)
    drawn = {"fails": fails, "eq21_fail": eq21_fail, "counted": counted, "kpos": kpos, "plain_trials": plain_trials}
    return drawn, samples
