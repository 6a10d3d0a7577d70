"""Linformer Theorem 1 (eq. 3; Appendix A, eqs. 16–20): Monte Carlo with an exact reduced sampler.

The statement and its readings are claim ``linformer.thm1.eq3`` (:mod:`.claims`); each row is
read against the union bound 2n·e^{−(ε² − ε³)k/4} of eq. (20).
The column ``zero_output_passes`` marks the w where P̃ = 0 meets the additive tolerance.
The quantifier is in :mod:`.quantifier`, Appendix A's k = log n in :mod:`.rows`; the sampler
(:mod:`.theorem1_samplers`) is exact in distribution, and the vectors w include adversarial
ones the toolkit searches for.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

from attnspec.errors import InputError, check_choice, check_range
from attnspec.numerics.stats import child_seed, numpy_rng
from attnspec.theorem.shared import SubPoint, draw_shared, sample_frame
from attnspec.theory.linformer import theorem1_samplers as S
from attnspec.theory.linformer.dimensions import check_eps, check_ks, check_n, theorem1_union_bound

ATTENTION_KINDS: tuple[str, ...] = ("softmax", "uniform", "near_identity")
W_KINDS: tuple[str, ...] = ("value", "random", "adv_bottom", "adv_top")

#: The power iteration for ``adv_top`` stops once a step moves the unit vector by at most this.
POWER_TOL = 1e-14


def attention_logits(n: int, *, seed: int, d: int = 64, temperature: float = 1.0) -> np.ndarray:
    """The logits A = QKᵀ/(√d·temperature) behind the ``softmax`` attention kind.

    Q, K ∈ R^{n×d} are standard normal, drawn from ``seed`` in that order.

    Parameters
    ----------
    n : int
        Sequence length.
    seed : int
        Seed of Q and K.
    d : int
        Head dimension.
    temperature : float
        Softmax temperature, > 0.

    Returns
    -------
    A : ndarray of shape (n, n), float64
    """
    check_n(n)
    check_range("temperature", temperature, low=0.0, low_open=True)
    rng = numpy_rng(seed)
    Q = rng.standard_normal((n, d))
    K = rng.standard_normal((n, d))
    return Q @ K.T / (math.sqrt(d) * temperature)


def attention_matrix(kind: str, n: int, *, seed: int, d: int = 64, temperature: float = 1.0) -> np.ndarray:
    """A synthetic attention matrix P (n×n, rows summing to 1).

    ``softmax``: softmax(QKᵀ/(√d·temperature)) with Q, K ∈ R^{n×d} standard normal;
    ``uniform``: every entry 1/n; ``near_identity``: softmax(β I) with β = ln(n) + 4
    (diagonal ≈ 0.98).

    Parameters
    ----------
    kind : str
        One of :data:`ATTENTION_KINDS`.
    n : int
    seed : int
        Seed of Q, K (``softmax`` only).
    d : int
    temperature : float

    Returns
    -------
    P : ndarray of shape (n, n), float64, rows summing to 1
    """
    check_n(n)
    if kind == "uniform":
        return np.full((n, n), 1.0 / n)
    if kind == "near_identity":
        beta = math.log(n) + 4.0
        P = np.ones((n, n))
        np.fill_diagonal(P, math.exp(beta))
        return P / P.sum(1, keepdims=True)
    if kind == "softmax":
        P = attention_logits(n, seed=seed, d=d, temperature=temperature)  # (n, n), worked on in place
        P -= P.max(1, keepdims=True)
        np.exp(P, out=P)
        P /= P.sum(1, keepdims=True)
        return P
    raise InputError(f"attention kind must be one of {', '.join(ATTENTION_KINDS)}, got {kind!r}")


def theorem1_vectors(P: np.ndarray, *, seed: int, d: int = 64, iterations: int = 8) -> dict[str, np.ndarray]:
    """The vectors w checked against P.

    ``value``: a column of V W^V with token embeddings sharing a mean (V = 1μᵀ + Z);
    ``random``: N(0, I_n); ``adv_bottom``: the toolkit's search for the w minimising
    ‖Pw‖/‖w‖ (inverse iteration on PᵀP, which makes the relative claim hardest);
    ``adv_top``: the w maximising it (power iteration; the hardest for the additive one).

    Parameters
    ----------
    P : ndarray of shape (n, n)
    seed : int
    d : int
        Embedding dimension of the ``value`` column.
    iterations : int
        Inverse-iteration steps (power iteration uses up to four times as many, stopping
        once a step moves the vector by at most :data:`POWER_TOL`).

    Returns
    -------
    dict of str to ndarray of shape (n,)
        By kind: ``value``, ``random``, ``adv_bottom``, ``adv_top``.
    """
    from scipy import linalg as sla

    n = P.shape[0]
    rng = numpy_rng(seed)
    mu = rng.standard_normal(d)
    Z = rng.standard_normal((n, d))
    Wv = rng.standard_normal((d, d)) / math.sqrt(d)
    value = ((np.ones((n, 1)) * mu + Z) @ Wv)[:, 0]
    random = rng.standard_normal(n)
    # smallest right singular vector: x <- (PᵀP)^{-1} x through an LU of P + σI
    shift = 1e-10 * max(1.0, float(np.abs(P).max()))
    x = rng.standard_normal(n)
    ab = S.structured_params(P)
    if ab is not None:
        # P = αI + β11ᵀ (uniform, near-identity attention): (P + σI)^{-1} in closed form
        # (Sherman–Morrison), symmetric, O(n) per solve instead of an O(n³) LU
        a, b = ab[0] + shift, ab[1]

        def solve(v: np.ndarray) -> np.ndarray:
            return (v - b * v.sum() / (a + n * b)) / a

        for _ in range(iterations):
            x = solve(solve(x))
            x /= np.linalg.norm(x)
    else:
        shifted = P.copy()  # P + σI without an n×n identity (adding 0.0 off the diagonal changes no bit)
        shifted.flat[:: n + 1] += shift
        lu = sla.lu_factor(shifted, check_finite=False, overwrite_a=True)
        for _ in range(iterations):
            y = sla.lu_solve(lu, x, trans=1, check_finite=False)
            x = sla.lu_solve(lu, y, check_finite=False)
            x /= np.linalg.norm(x)
    bottom = x
    x = rng.standard_normal(n)
    for _ in range(4 * iterations):
        prev = x
        if ab is not None:  # P = αI + β11ᵀ is symmetric: PᵀPx = P(Px) in O(n)
            for _ in range(2):
                x = ab[0] * x + ab[1] * x.sum()
        else:
            x = P.T @ (P @ x)
        x /= np.linalg.norm(x)
        # converged to round-off: more steps would only move x by round-off (each costs two
        # passes over P; a softmax P at n = 4096 gets here in about ten of the 32 allowed)
        if np.linalg.norm(x - prev) <= POWER_TOL:
            break
    return {"value": value, "random": random, "adv_bottom": bottom, "adv_top": x}


def _square_attention(name: str, P: np.ndarray) -> tuple[np.ndarray, int]:
    """``P`` as a float64 square matrix and its n, or an InputError naming the matrix."""
    P = np.asarray(P, dtype=np.float64)
    if P.ndim != 2 or P.shape[0] != P.shape[1]:
        raise InputError(f"attention {name!r} must be a square matrix, got shape {P.shape}")
    return P, check_n(P.shape[0])


def simulate_theorem1(
    attention: Mapping[str, np.ndarray],
    eps: float,
    ks: Sequence[int],
    *,
    trials: int = 10_000,
    seed: int = 0,
    w_kinds: Sequence[str] = W_KINDS,
    sample_ks: Sequence[int] = (),
    sample_size: int = 500,
    look: int = 500,
    sequential: bool = True,
    vectors: Mapping[str, dict[str, np.ndarray]] | None = None,
    progress=None,  # noqa: ANN001 - an attnspec.runtime.progress.Progress or None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Monte Carlo of Theorem 1 (Gaussian R) for each attention matrix and each w.

    Trials come in looks of ``look`` (each one P·g block shared by every w and k); with
    ``sequential`` the draws of a matrix stop after the first look at which every row's
    verdict is settled (:func:`attnspec.theorem.shared.draw_shared`, one stream; error rate
    <= 0.01 for a row that stops early), else all ``trials`` are drawn.

    Parameters
    ----------
    attention : mapping name -> ndarray (n, n)
        Row-stochastic matrices P (synthetic kinds or captured ones).
    eps : float
        Distortion ε, in (0, 1).
    ks : sequence of int
        The projection dimensions (k > n allowed: the law is still defined).
    trials : int
        The most trials per point.
    seed : int
        Seed of every draw.
    w_kinds : sequence of str
        The kinds of vector w, of :data:`W_KINDS`.
    sample_ks : sequence of int
        The k at which relative errors are kept for the figures.
    sample_size : int
        How many relative errors are kept per (attention, w, k).
    look : int
        Trials per look (one shared P·g block).
    sequential : bool
        Stop after the first look at which every row's verdict is settled.
    vectors : mapping name -> {w kind: ndarray (n,)}, optional
        The vectors w per matrix, if already computed (:func:`theorem1_vectors`).
    progress : attnspec.runtime.progress.Progress, optional
        Advanced by the trials of each look drawn (its total lowered when the looks stop
        early); None: silent.

    Returns
    -------
    table : DataFrame, one row per (reading, attention, w, k): bound 2n e^{−c(ε)k},
        failures, trials, estimate and 95% CI, plus ``pw_ratio`` = ‖Pw‖/(‖P‖_F‖w‖).
    samples : relative errors ‖P̃w − Pw‖/‖Pw‖ at ``sample_ks`` (from the first look).
    """
    check_eps(eps)
    ks = check_ks(ks)
    check_range("trials", trials, low=1)
    for wk in w_kinds:
        check_choice("w kind", wk, W_KINDS)
    rows: list[dict] = []
    samples: list[pd.DataFrame] = []
    sample_at = {int(x) for x in sample_ks}
    for name, P in attention.items():
        P, n = _square_attention(name, P)
        s_vec = child_seed(seed, "thm1", "vectors", name)
        vecs = vectors[name] if vectors is not None and name in vectors else theorem1_vectors(P, seed=s_vec)
        vecs = {wk: vecs[wk] for wk in w_kinds}
        W = np.stack(list(vecs.values()), axis=1)  # (n, m)
        s_parts = child_seed(seed, "thm1", "parts", name)
        gen = S.theorem1_parts_chunks(P, W, seed=s_parts, chunk=look)
        head = next(gen)
        pf = float(np.linalg.norm(P))
        points = _points(head, list(vecs), ks, seed=seed, name=name)
        subs = [
            sub
            for p in points
            for sub in _sub_points(p, name, n=n, eps=eps, pf=pf, trials=trials, seeds=(s_parts, s_vec))
        ]

        def one_look(
            c: int, first: bool, _active: frozenset, gen=gen, head=head, points=points, pf=pf, name=name
        ) -> dict:
            alpha, beta = gen.send(c)
            parts = {"alpha": alpha, "beta": beta, **head}
            fails = {}
            for p in points:
                err = S.theorem1_errors_chunk(parts, p.j, p.k, p.rng)
                fails[(p.w, p.k, "relative")] = int((err > eps * p.pw).sum())
                fails[(p.w, p.k, "additive")] = int((err > eps * pf * p.wn).sum())
                if first and p.k in sample_at:
                    samples.append(_relative_errors(err, p.pw, name, p.w, p.k, sample_size))
            return fails

        rows += draw_shared(one_look, subs, trials=trials, size=look, sequential=sequential, progress=progress).rows(
            subs
        )
        gen.close()
    return pd.DataFrame(rows), (pd.concat(samples, ignore_index=True) if samples else pd.DataFrame())


class _Point(NamedTuple):
    """One (w, k) of a matrix: the column j of w, its chi-square generator and seed, ‖Pw‖ and ‖w‖."""

    w: str
    k: int
    j: int
    rng: np.random.Generator
    seed: int
    pw: float
    wn: float


def _points(head: dict[str, np.ndarray], w_kinds: list[str], ks: np.ndarray, *, seed: int, name: str) -> list[_Point]:
    """The (w, k) of one matrix, w outer, each with its own chi-square generator."""
    out = []
    for j, wk in enumerate(w_kinds):
        wn = head["wnorm"][j]
        pw = math.sqrt(head["unorm2"][j]) * wn
        for k in ks:
            s_k = child_seed(seed, "thm1", "chi", name, wk, int(k))
            out.append(_Point(wk, int(k), j, numpy_rng(s_k), s_k, pw, wn))
    return out


def _sub_points(
    p: _Point, name: str, *, n: int, eps: float, pf: float, trials: int, seeds: tuple[int, int]
) -> list[SubPoint]:
    """The relative and the additive sub-point of one (w, k), against the union bound
    2n e^{−c(ε)k}; ``pf`` = ‖P‖_F, ``seeds``: those of the parts and of the vectors w."""
    from attnspec.theorem import sequential as SQ

    bound = float(theorem1_union_bound(n, p.k, eps))
    # rows whose verdict the counts cannot change need no more than one look
    fixed = SQ.fixed_verdict(bound, trials_max=trials, vacuous=p.k >= n)
    zero_ok = p.pw <= eps * pf * p.wn  # P̃ = 0 meets the additive tolerance: that claim cannot fail at this w
    head = {"attention": name, "w": p.w, "n": n, "k": p.k, "eps": eps, "bound": bound, "exact": np.nan}
    return [
        SubPoint(
            (p.w, p.k, reading),
            {"claim": "linformer.thm1.eq3", "reading": reading, **head},
            {
                "seed": p.seed,
                "parts_seed": seeds[0],
                "vectors_seed": seeds[1],
                "pw_ratio": p.pw / (pf * p.wn),
                "zero_output_passes": bool(zero),
                "trials_max": trials,
            },
            claimed=bound,
            fixed=fixed or zero,
        )
        for reading, zero in (("relative", False), ("additive", zero_ok))
    ]


def _relative_errors(err: np.ndarray, pw: float, name: str, wk: str, k: int, size: int) -> pd.DataFrame:
    """The first ``size`` relative errors ‖P̃w − Pw‖/‖Pw‖ of a look, from its errors ``err``."""
    rel = err / pw if pw > 0 else np.where(err > 0, np.inf, 0.0)
    return sample_frame(
        rel, size, {"claim": "linformer.thm1.eq3", "reading": "relative", "attention": name, "w": wk, "k": k}
    )
