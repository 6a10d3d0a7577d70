"""The exact reduced sampler of Linformer's Theorem 1, in NumPy alone (no torch import).

Gaussian R ∈ R^{k×n} with N(0, 1/k) entries, fixed P and w = ‖w‖e: rotating e to e1,
``RᵀR e = χ e + sqrt(χ/k) Π⊥ g`` with ``χ = ‖Re‖² ~ χ²_k/k`` independent of
``g ~ N(0, I_n)`` and Π⊥ = I − eeᵀ; hence

    P(RᵀR − I)w = ‖w‖[(χ − 1) Pe + sqrt(χ/k) (Pg − (eᵀg) Pe)].

Everything that does not depend on k (u = Pe and, per trial, uᵀv and ‖v‖² with
v = Pg − (eᵀg)u) is drawn once and shared by every w and every k; each k then costs one
chi-square draw per trial. The only O(n²) step is the product P g, in float32.

Why NumPy and not torch: `jl-check` computes Theorem 1 in its main process while a forked
child computes the torch-based claim groups (:func:`.battery.plan`); keeping this module
torch-free keeps torch's two-second import out of the main process altogether. The direct
reference sampler (R drawn in full) is :func:`.samplers.theorem1_direct_errors`; the tests
compare the two in distribution.
"""

from __future__ import annotations

from collections.abc import Callable, Generator

import numpy as np

from attnspec.errors import InputError
from attnspec.numerics.stats import Seed, numpy_rng


def structured_params(P: np.ndarray) -> tuple[float, float] | None:
    """(α, β) when P = αI + β11ᵀ exactly (uniform attention: α = 0; near-identity
    softmax(cI): α = P00 − P01), else None. Checked entrywise, without an n×n temporary.

    Parameters
    ----------
    P : numpy.ndarray, shape (n, n)

    Returns
    -------
    (float, float) or None
    """
    n = P.shape[0]
    off = P[0, 1] if n > 1 else 0.0
    alpha = float(P[0, 0] - off)
    beta = float(off)
    diag = np.diagonal(P)
    if not np.all(diag == alpha + beta):
        return None
    # off-diagonal entries: every entry equals beta except the diagonal
    if np.count_nonzero(P != beta) != (0 if alpha == 0 else n):
        return None
    return alpha, beta


def structured_apply(P: np.ndarray) -> Callable[[np.ndarray], np.ndarray] | None:
    """An exact fast product G -> P G when P = αI + β11ᵀ (:func:`structured_params`), else None.

    Parameters
    ----------
    P : numpy.ndarray, shape (n, n)

    Returns
    -------
    callable or None
        G (n, c) → P G (n, c), in G's dtype.
    """
    ab = structured_params(P)
    if ab is None:
        return None
    alpha, beta = ab

    def apply(G: np.ndarray) -> np.ndarray:  # (n, c) -> (n, c), in G's dtype
        return (alpha * G + beta * G.sum(0, keepdims=True)).astype(G.dtype, copy=False)

    return apply


def theorem1_reduced_parts(
    P: np.ndarray,
    W: np.ndarray,
    trials: int,
    *,
    seed: Seed,
    chunk: int = 500,
    dtype: type = np.float32,
    fast: bool = True,
) -> dict[str, np.ndarray]:
    """The k-free parts of the Theorem-1 error for every column w of ``W``.

    With e = w/‖w‖, u = P e and v_t = P g_t − (eᵀg_t) u (g_t ~ N(0, I_n), shared by all
    columns and all k), returns ``alpha = uᵀv`` and ``beta = ‖v‖²`` of shape (m, trials),
    ``unorm2 = ‖u‖²`` and ``wnorm = ‖w‖`` of shape (m,). The error for a projection with k
    rows is then :func:`theorem1_errors_chunk`. The draws come in chunks of ``chunk``
    trials (:func:`theorem1_parts_chunks`), so the first ``c·chunk`` trials are the same
    whatever ``trials`` is.

    Parameters
    ----------
    P : ndarray (n, n)
    W : ndarray (n, m)
        The vectors w, one per column.
    trials : int
        Draws of g.
    seed : int or generator
        Seed of the draws.
    chunk : int
        Trials per block of draws.
    dtype : numpy float type
        Precision of g and of the product P g (float32: the error it adds is far below the
        Monte Carlo error; float64 for reference computations).
    fast : bool
        Use the exact fast product of :func:`structured_apply` when P has that structure.

    Returns
    -------
    dict of str to numpy.ndarray
        ``alpha``, ``beta`` (m, trials); ``unorm2``, ``wnorm`` (m,).
    """
    gen = theorem1_parts_chunks(P, W, seed=seed, chunk=chunk, dtype=dtype, fast=fast)
    head = next(gen)
    alpha = np.empty((W.shape[1], trials))
    beta = np.empty((W.shape[1], trials))
    done = 0
    while done < trials:
        a, b = gen.send(min(chunk, trials - done))
        alpha[:, done : done + a.shape[1]] = a
        beta[:, done : done + a.shape[1]] = b
        done += a.shape[1]
    gen.close()
    return {"alpha": alpha, "beta": beta, **head}


def theorem1_parts_chunks(
    P: np.ndarray,
    W: np.ndarray,
    *,
    seed: Seed,
    chunk: int = 500,
    dtype: type = np.float32,
    fast: bool = True,
) -> Generator[object, int, None]:
    """A generator of Theorem-1 parts, one chunk at a time (for sequential Monte Carlo).

    The first ``next()`` returns ``{"unorm2": (m,), "wnorm": (m,)}``; then each
    ``send(c)`` (c <= chunk) returns ``(alpha, beta)`` of shape (m, c) for the next c trials.
    Draws: one (n, c) block of g per send from one NumPy generator, so sending ``chunk``
    each time reproduces :func:`theorem1_reduced_parts` exactly.

    Parameters
    ----------
    P : ndarray (n, n)
        The attention matrix.
    W : ndarray (n, m)
        The vectors w, one per column.
    seed : int or generator
        Seed of the draws.
    chunk : int
        The most trials a send may ask for.
    dtype : numpy float type
        Precision of g and of the product P g.
    fast : bool
        Use the exact fast product of :func:`structured_apply` when P has that structure.

    Yields
    ------
    dict, then (numpy.ndarray, numpy.ndarray)
        As above.
    """
    P = np.asarray(P, dtype=np.float64)
    W = np.asarray(W, dtype=np.float64)
    n = P.shape[0]
    wnorm = np.linalg.norm(W, axis=0)  # (m,)
    if np.any(wnorm == 0):
        raise InputError("every w must be non-zero")
    E = W / wnorm  # (n, m)
    U = P @ E  # (n, m)
    rng = numpy_rng(seed)
    apply = structured_apply(P) if fast else None
    if apply is None:
        Pw = P.astype(dtype)  # (n, n) in the working precision

        def apply(G: np.ndarray) -> np.ndarray:
            return Pw @ G

    PtU = P.T @ U  # (n, m): uᵀ(Pg) = (Pᵀu)ᵀg, computed in float64
    u2 = (U * U).sum(0)[:, None]  # (m, 1)
    c = yield {"unorm2": (U * U).sum(0), "wnorm": wnorm}
    while True:
        g = rng.standard_normal((n, c), dtype=dtype)  # (n, c)
        h = apply(g).astype(np.float64)  # (n, c): P g, the one O(n²) step (O(n) for P = αI + β11ᵀ)
        hh = np.einsum("ij,ij->j", h, h)  # (c,): ‖Pg‖², summed in float64
        g64 = g.astype(np.float64)  # exact widening: the float64 products below see the same draws
        uh = PtU.T @ g64  # (m, c): uᵀPg
        eg = E.T @ g64  # (m, c): eᵀg
        # v = Pg − (eᵀg) u:  uᵀv = uᵀPg − (eᵀg)‖u‖²,  ‖v‖² = ‖Pg‖² − 2(eᵀg)uᵀPg + (eᵀg)²‖u‖²
        alpha = uh - eg * u2
        beta = np.maximum(hh[None, :] - 2 * eg * uh + eg * eg * u2, 0.0)
        c = yield alpha, beta


def theorem1_errors_chunk(parts: dict[str, np.ndarray], j: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """‖P(RᵀR − I) w_j‖ for a projection with k rows, one value per trial of ``parts``, with
    the chi-square draws taken from ``rng`` (successive chunks from one generator reproduce
    one draw of all trials).

    Parameters
    ----------
    parts : dict of str to numpy.ndarray
        The parts of one chunk or of all trials (``alpha``, ``beta`` (m, c); ``unorm2``, ``wnorm`` (m,)):
        :func:`theorem1_reduced_parts` or a send of :func:`theorem1_parts_chunks`.
    j : int
        The column of W.
    k : int
        Rows of R.
    rng : numpy.random.Generator
        The chi-square draws' generator.

    Returns
    -------
    numpy.ndarray, shape (c,)
    """
    alpha = parts["alpha"][j]
    beta = parts["beta"][j]
    chi = rng.chisquare(k, size=alpha.shape[0]) / k
    a = chi - 1.0
    b = np.sqrt(chi / k)
    sq = a * a * parts["unorm2"][j] + 2 * a * b * alpha + b * b * beta
    return parts["wnorm"][j] * np.sqrt(np.maximum(sq, 0.0))
