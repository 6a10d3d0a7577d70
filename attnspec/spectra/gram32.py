"""``gram32``: the full spectrum of long P from its Gram matrix in float32, for long n on the CPU.

Why: at n = 4096 the float64 ``gram`` costs about 6 CPU seconds per matrix (SmolLM2's 270
matrices: 27 CPU minutes per input), and the approximate ``longn`` cannot reach a curve error
of 1e-3 on real attention there: its spectra are full (on SmolLM2 at n = 4096 the top 1,024
values carry only 71–92 % of Σσ and the rest decays to 0), so the tail's partial sums need a
quadrature of √λ near 0, which polynomial (Krylov) methods resolve only at a degree of many
hundreds. This method computes every value, in single precision, at about a third of
``gram``'s cost:

1. **G = P Pᵀ in float32, from column blocks.** A causal P is lower-triangular, so column
   block [a, b) of P is zero above row a and adds P[a:, a:b] P[a:, a:b]ᵀ to the lower triangle
   of G[a:, a:] only (BLAS ``ssyrk``). With BLOCKS blocks that is about n³/3 · (1 + 1/BLOCKS)
   multiply-adds instead of n³ for a full product (a non-triangular P takes every block from
   row 0: a plain ``ssyrk``).
2. **Eigenvalues of G** by LAPACK's two-stage ``ssyevd_2stage`` (dense to band by BLAS-3, band
   to tridiagonal, then the values only), σ = √max(λ, 0).

Precision. Each λ is off by about ε₃₂·‖G‖ = ε₃₂·σ₁², so a small σ_i by about ε₃₂·σ₁²/(2σ_i),
at most √ε₃₂·σ₁ ≈ 2.4e-4·σ₁. That matters where σ₁ dominates (σ₁² at least half of ‖P‖_F²:
attention sinks, and heads whose values mostly lie below 1e-3·σ₁): on SmolLM2's layer 7, head 1
at n = 4096 (σ₁ = 15.1, σ₂ = 6.8, 3,779 of 4,096 values below 1e-3·σ₁ holding 12 % of Σσ) the
whole-matrix float32 Gram matrix puts the curve off by 1.8e-3. There the top k pairs are taken out
first: a subspace iteration in float32 finds their right Ritz vectors V, the Ritz values σ(P V) are
kept and P − P V Vᵀ, whose values are σ(P V⊥) and zeros, is factorised (a dense product: the
triangle is lost), so the rest is resolved relative to σ_{k+1}, not σ₁. By Mirsky's theorem the
union of the two sets is within 2‖E‖_* of σ(P) in ℓ1 (E = Uᵀ P V⊥, U the left Ritz vectors; one
product Pᵀ U). k is the largest count up to DEFLATE_PAIRS for which that bound is within
DEFLATE_TOL · Σσ̂ of the top and whose rest is not dominated (by the whole-matrix rule above):
an attention sink (σ₁ tens of times σ₂) needs only its dominant pair, whose split converges in a
few iterations, where the pairs after it, close together, would not. Where no k qualifies after
the last of DEFLATE_ITERATIONS, the matrix is factorised in float64 instead, as ``gram`` does. The curve error measured
against the float64 ``gram`` on real SmolLM2 P is stated in meta.json
(``attnspec.spectra.config.SVD_METHOD_ERROR``).

A float64 P (a float64 model) is left to the float64 ``gram`` by the engine, so that a float64 run
computes everything in float64; rectangular P (cross-attention) too. Matrices are independent: each runs on its own thread of a pool with one BLAS thread (as the
engine's other CPU paths), holding its G (4·n² bytes) and, for a sink, a float64 copy of its P.
"""

from __future__ import annotations

import numpy as np
import torch

from attnspec.spectra.deflation import _deflate_dominant, _dominated
from attnspec.spectra.openblas import _lapack, _run_pool

#: Column blocks of the triangular Gram product: more blocks skip more of the zero upper
#: triangle (flops n³/3 · (1 + 1/BLOCKS)) but make smaller, less efficient ``ssyrk`` calls.
BLOCKS = 8

_ROW_MAJOR, _LOWER, _NO_TRANS = 101, 122, 111


def is_lower_triangular(p: torch.Tensor) -> bool:
    """Whether a square (n, n) matrix has an exactly zero strict upper triangle (causal P).

    Parameters
    ----------
    p : torch.Tensor
        A square (n, n) matrix.

    Returns
    -------
    bool
    """
    return not bool(torch.triu(p, diagonal=1).any())


def _gram_lower(p: np.ndarray, triangular: bool) -> np.ndarray:
    """Lower triangle of G = p pᵀ (n, n) float32 for a C-contiguous float32 (n, n) ``p``.

    Column block [a, b) adds p[s:, a:b] p[s:, a:b]ᵀ to G[s:, s:], with s = a when p is
    lower-triangular (rows above a are zero in those columns) and s = 0 otherwise.
    """
    n = p.shape[0]
    g = np.zeros((n, n), dtype=np.float32)
    ssyrk = _lapack("cblas_ssyrk")
    edges = np.linspace(0, n, min(BLOCKS, n) + 1).astype(int)
    for a, b in zip(edges[:-1], edges[1:]):
        s = int(a) if triangular else 0
        if b <= a:
            continue
        # row-major: C (n − s)² at G[s, s] (ldc n) += A Aᵀ, A (n − s) × (b − a) at p[s, a] (lda n)
        ssyrk(
            _ROW_MAJOR,
            _LOWER,
            _NO_TRANS,
            n - s,
            int(b - a),
            1.0,
            p[s:, a:].ctypes.data,
            n,
            1.0,
            g[s:, s:].ctypes.data,
            n,
        )
    return g


#: At most this many top singular pairs are taken out of a dominated matrix before its Gram matrix is
#: formed, from a subspace iteration of this block, checked after each of these iteration counts
#: (module docstring, "Precision").
DEFLATE_PAIRS, DEFLATE_BLOCK, DEFLATE_ITERATIONS = 8, 16, (12, 24, 48)
#: A deflation counts when its Mirsky bound 2‖E‖_* on the ℓ1 error of the values is below this
#: share of the top pairs' Σσ̂ (at most Σσ), so that it moves the curve by at most 2e-4, a fifth
#: of the long-context goal of 1e-3; else the matrix goes to the float64 Gram matrix.
DEFLATE_TOL = 1e-4


def _deflate_top(p: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, float] | None:
    """P − P V Vᵀ for the top k ≤ DEFLATE_PAIRS right Ritz vectors V of one float32 matrix (n, n), or None.

    Subspace iteration on PᵀP from a fixed Gaussian block (n, DEFLATE_BLOCK), then Rayleigh–Ritz. k is
    the largest count whose split passes its Mirsky check and leaves a rest that is not dominated
    (σ̂_{k+1}² below half of ‖P‖_F² − Σ_{i≤k} σ̂_i², the whole-matrix rule): a sink needs only its
    dominant pair, a head like layer 7, head 1 more. Without such a k after the last iteration count,
    None (the caller factorises in float64). Returns the deflated matrix (n, n) float32, whose values
    are σ(P V⊥) and k zeros, the Ritz values σ(P V) (k,) float64, and 2‖E‖_* with E = Uᵀ P V⊥ (U the
    left Ritz vectors): by Mirsky's theorem the union of the two sets is within it of σ(P) in ℓ1.
    """
    n = p.shape[-1]
    g = torch.Generator().manual_seed(0)
    y = torch.linalg.qr(torch.randn(n, DEFLATE_BLOCK, generator=g)).Q  # (n, b)
    # Eᵀ = (I − VVᵀ) Pᵀ U in float64: in float32 the rounding of Pᵀ U (about ε₃₂·σ₁·√n per column)
    # would pass for a coupling on a sink and send a converged matrix to float64
    p64 = p.double()
    frob2 = float(torch.linalg.vector_norm(p64) ** 2)
    done = 0
    for iterations in DEFLATE_ITERATIONS:
        for _ in range(iterations - done):
            y = torch.linalg.qr(((p @ y).T @ p).T).Q  # (n, b): Pᵀ P y as (yᵀ Pᵀ P)ᵀ, the fast layout
        done = iterations
        u, sig, wt = torch.linalg.svd((p @ y).double(), full_matrices=False)  # (n, b), (b,), (b, b)
        v = y.double() @ wt[:DEFLATE_PAIRS].T  # (n, K) top right Ritz vectors, float64
        pu = (u[:, :DEFLATE_PAIRS].T @ p64).T  # (n, K): Pᵀ U
        for k in range(DEFLATE_PAIRS, 0, -1):
            rest2 = frob2 - float((sig[:k] ** 2).sum())
            if float(sig[k]) ** 2 >= 0.5 * rest2:  # the rest would still be dominated
                continue
            e_t = pu[:, :k] - v[:, :k] @ (v[:, :k].T @ pu[:, :k])  # (n, k): Eᵀ
            mirsky = 2 * float(torch.linalg.svdvals(e_t).sum())
            if mirsky <= DEFLATE_TOL * float(sig[:k].sum()):
                vk = v[:, :k].float()
                return p - (p @ vk) @ vk.T, sig[:k], mirsky
    return None


def _eig_lower(g: np.ndarray) -> np.ndarray:
    """Eigenvalues (n,) ascending of a float32 symmetric matrix given by its lower triangle."""
    n = g.shape[0]
    lam = np.empty(n, dtype=np.float32)
    info = _lapack("ssyevd_2stage")(_ROW_MAJOR, b"N", b"L", n, g.ctypes.data, n, lam.ctypes.data)
    if info != 0:
        raise np.linalg.LinAlgError(f"ssyevd_2stage failed (info {info})")
    return lam


def _float64(p: torch.Tensor) -> torch.Tensor:
    """σ (n,) float64, descending, from the float64 Gram matrix with the dominant pair out (as ``gram``)."""
    x, s1 = _deflate_dominant(p.double()[None])
    g = (x[0] @ x[0].T).numpy()  # (n, n) float64, C-contiguous; overwritten by the eigensolver
    lam = np.empty(g.shape[0], dtype=np.float64)
    info = _lapack("dsyevd_2stage")(_ROW_MAJOR, b"N", b"L", g.shape[0], g.ctypes.data, g.shape[0], lam.ctypes.data)
    if info != 0:
        raise np.linalg.LinAlgError(f"dsyevd_2stage failed (info {info})")
    sv = torch.from_numpy(np.sqrt(np.clip(lam, 0.0, None))[::-1].copy())
    if float(s1[0]) > 0:  # σ₁ back in, the deflated direction's zero out
        sv = torch.cat([s1[:1], sv[:-1]])
    return torch.sort(sv, descending=True).values


def _one(p: torch.Tensor, dominated: bool) -> torch.Tensor:
    """All singular values (n,) float64, descending, of one square float32 matrix (n, n)."""
    n = p.shape[-1]
    if dominated and n <= 4 * DEFLATE_BLOCK:  # small: float64 throughout costs little
        return _float64(p)
    if dominated:  # the top pairs out first (module docstring, "Precision")
        split = _deflate_top(p)
        if split is None:  # not converged: float64 throughout
            return _float64(p)
        rest, top, _ = split
        lam = _eig_lower(_gram_lower(np.ascontiguousarray(rest.numpy()), False))
        sv = np.sqrt(np.clip(lam.astype(np.float64), 0.0, None))[::-1][: n - len(top)]
        return torch.from_numpy(np.sort(np.concatenate([top.numpy(), sv]))[::-1].copy())
    lam = _eig_lower(_gram_lower(np.ascontiguousarray(p.numpy()), is_lower_triangular(p)))
    return torch.from_numpy(np.sqrt(np.clip(lam.astype(np.float64), 0.0, None))[::-1].copy())


def available() -> bool:
    """Whether SciPy's OpenBLAS offers the two routines (else the engine refuses the method).

    Returns
    -------
    bool
        True when both ``cblas_ssyrk`` and ``ssyevd_2stage`` are found.
    """
    return _lapack("cblas_ssyrk") is not None and _lapack("ssyevd_2stage") is not None


def gram32_singular_values(flat: torch.Tensor, workers: int) -> torch.Tensor:
    """Singular values (m, n) float64, descending, of a (m, n, n) stack, each matrix on its own thread.

    ``flat`` is converted to float32 on the CPU; rectangular stacks are the engine's to route
    elsewhere (this method squares P Pᵀ of square P only).

    Parameters
    ----------
    flat : torch.Tensor
        A stack of m square (n, n) matrices, shape (m, n, n).
    workers : int
        Threads, one matrix each.

    Returns
    -------
    torch.Tensor
        Shape (m, n), float64, each row descending.
    """
    p = flat.detach().to(device="cpu", dtype=torch.float32).contiguous()
    m, n = p.shape[0], p.shape[-1]
    dominated = _dominated(p)
    # numpy, not torch: under the caller's torch.inference_mode a torch buffer would be an inference
    # tensor, and inference mode is per thread, so a pool thread's in-place write to it would fail
    out = np.empty((m, n), dtype=np.float64)

    def one(i: int) -> int:
        out[i] = _one(p[i], bool(dominated[i])).numpy()
        return 0

    _run_pool(one, m, workers, "gram32")
    return torch.from_numpy(out)
