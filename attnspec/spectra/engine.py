"""Singular values of stacks of attention matrices P: the spectrum engine.

The engine (:func:`singular_values`) works on (..., n, n) stacks; every method computes the full
spectrum (no truncation, no randomisation):

* ``lapack`` — LAPACK's divide-and-conquer SVD, values only (``?gesdd``, jobz = "N"), in
  the input's precision, from the OpenBLAS that SciPy ships, called on many matrices at
  once from a thread pool (ctypes releases the GIL; one BLAS thread per call, because at
  n = 512 one factorisation parallelises poorly and independent ones perfectly). Float32
  bidiagonalisation is backward stable: each σ is off by about ε₃₂·σ₁, so the curve is
  within ~1e-7 of float64 SVD on real attention (tolerance 1e-4; tested).
* ``svd``  — ``torch.linalg.svdvals`` in the input's precision, on its device.
* ``gram`` — the eigenvalues λ of G = P Pᵀ formed in float64 (LAPACK's two-stage
  ``dsyevd_2stage`` on the CPU, ``torch.linalg.eigvalsh`` elsewhere), σ = √λ. Squaring
  costs √ε₆₄ ≈ 1e-8·σ₁ per value; where σ₁ dominates (attention sinks: σ₂/σ₁ < 0.45) the
  dominant pair is found by power iteration and taken out first (:func:`_deflate_dominant`),
  so the small values are resolved relative to σ₂, not σ₁.
* ``gram32`` — the same in float32, for long n on the CPU: P Pᵀ from column blocks (a causal,
  lower-triangular P skips its zero upper triangle) and LAPACK's two-stage ``ssyevd_2stage``;
  a third of ``gram``'s CPU time at n = 4096, every value computed, σ off by at most about
  √ε₃₂·σ₁ (the dominant pair of attention sinks deflated in float64 first), measured curve
  error in meta.json (:mod:`attnspec.spectra.gram32`).
* ``longn`` — approximate, for long n: the top values from a block Krylov space, the rest
  estimated by stochastic Lanczos quadrature (:mod:`attnspec.spectra.longn`: algorithm,
  cost, measured error). Not exact: its curve error is stated in meta.json.
* ``auto`` (default) — ``lapack`` on the CPU (``svd`` if SciPy's OpenBLAS is missing),
  ``gram`` on CUDA: on an H200, 144 P of 512 × 512 took 0.62 s with ``gram`` against 2.75 s
  with ``svd``, whose float32 curves were off by up to 5.6e-5 on near-rank-one P where
  ``gram``'s were off by 1e-10 (benchmarks/device_check.json). GPUs with little float64
  throughput (most consumer cards) may prefer ``svd``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from attnspec.errors import InputError
from attnspec.options.spectrum import spectrum_choices
from attnspec.spectra.deflation import _deflate_dominant
from attnspec.spectra.openblas import _ROW_MAJOR, _lapack, _run_pool

#: What --svd-method allows, as its declaration lists them.
METHODS: tuple[str, ...] = spectrum_choices("svd_method")


def _svdvals_gesdd(a: np.ndarray, workers: int) -> np.ndarray:
    """Singular values (descending) of a (m, r, c) C-contiguous float32/float64 stack; destroys ``a``."""
    routine = "sgesdd" if a.dtype == np.float32 else "dgesdd"
    fn = _lapack(routine)
    m, r, c = a.shape
    out = np.empty((m, min(r, c)), dtype=a.dtype)

    def one(i: int) -> int:
        return fn(_ROW_MAJOR, b"N", r, c, a[i].ctypes.data, c, out[i].ctypes.data, None, 1, None, 1)

    _run_pool(one, m, workers, routine)
    return out


def _eigvalsh_2stage(gram: np.ndarray, workers: int) -> np.ndarray:
    """Eigenvalues (ascending) of a (m, n, n) float64 C-contiguous symmetric stack; destroys ``gram``."""
    fn = _lapack("dsyevd_2stage")
    m, n, _ = gram.shape
    out = np.empty((m, n), dtype=np.float64)

    def one(i: int) -> int:
        return fn(_ROW_MAJOR, b"N", b"L", n, gram[i].ctypes.data, n, out[i].ctypes.data)

    _run_pool(one, m, workers, "dsyevd_2stage")
    return out


def symmetric_eigh(gram: torch.Tensor, *, workers: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Eigenvalues (ascending) and eigenvectors (columns) of a (m, n, n) stack of symmetric matrices.

    float64 on the CPU. Through SciPy's LAPACK ``dsyevd``, one matrix per thread (as the
    singular values above: independent problems parallelise better than one inside BLAS),
    else ``torch.linalg.eigh``.

    Parameters
    ----------
    gram : torch.Tensor, shape (m, n, n)
        Symmetric matrices (only the lower triangle is read on the LAPACK path), any float
        dtype and device; computed in float64 on the CPU.
    workers : int, optional
        Threads of the LAPACK path, one matrix each (default: ``torch.get_num_threads()``).

    Returns
    -------
    eigenvalues : torch.Tensor, shape (m, n), float64
        Ascending.
    eigenvectors : torch.Tensor, shape (m, n, n), float64
        The eigenvector of ``eigenvalues[i, j]`` is ``eigenvectors[i, :, j]``.
    """
    fn = _lapack("dsyevd")
    if fn is None:
        return torch.linalg.eigh(gram.to(torch.float64).cpu())
    a = np.array(gram.detach().to(torch.float64).cpu().numpy(), order="C", copy=True)  # overwritten by the vectors
    m, n, _ = a.shape
    w = np.empty((m, n), dtype=np.float64)

    def one(i: int) -> int:
        return fn(_ROW_MAJOR, b"V", b"L", n, a[i].ctypes.data, n, w[i].ctypes.data)

    _run_pool(one, m, workers or torch.get_num_threads(), "dsyevd")
    return torch.from_numpy(w), torch.from_numpy(a)


def resolve_method(method: str, device: torch.device | str) -> str:
    """``auto`` → ``lapack`` on the CPU (``svd`` where SciPy's OpenBLAS is missing), ``gram`` on CUDA.

    Parameters
    ----------
    method : str
        ``--svd-method``: one of ``auto``, ``lapack``, ``svd``, ``gram``, ``longn``.
    device : torch.device or str
        The device the matrices are on.

    Returns
    -------
    str
        The method to use; a method other than ``auto`` is returned unchanged.

    Raises
    ------
    InputError
        ``method`` is not one of the methods.
    """
    if method not in METHODS:
        raise InputError(f"--svd-method must be one of {', '.join(METHODS)}, got {method!r}")
    if method == "auto":
        if torch.device(device).type == "cuda":
            return "gram"
        return "lapack" if _lapack("sgesdd") is not None else "svd"
    return method


def singular_values(
    probs: torch.Tensor,
    method: str = "auto",
    *,
    workers: int | None = None,
    seeds: torch.Tensor | None = None,
    return_error: bool = False,
) -> Any:
    """All singular values of each matrix in a stack, in descending order.

    Parameters
    ----------
    probs : Tensor, shape (..., r, c)
        Matrices (any float dtype, any device); square for self-attention, r = n_dec by
        c = n_enc for the cross-attention of an encoder-decoder.
    method : {"auto", "lapack", "svd", "gram", "gram32", "longn"}
        See the module docstring (``longn`` is approximate).
    workers : int, optional
        Threads for the CPU LAPACK paths (default: ``torch.get_num_threads()``).
    seeds : int tensor, shape (...), optional
        ``longn`` only: one seed per matrix (its random draws depend on nothing else, so a
        result does not depend on the stack the matrix came in); ignored by the exact methods.
    return_error : bool
        Also return the per-matrix error bounds of ``longn`` (a dict of (...) tensors,
        :func:`attnspec.spectra.longn.longn_singular_values`); None for the exact methods.

    Returns
    -------
    Tensor, shape (..., min(r, c)), float64, on the CPU, descending, non-negative; with
    ``return_error``, the pair (values, bounds or None).
    """
    if probs.dim() < 2:
        raise InputError(f"expected a stack of matrices (..., r, c), got shape {tuple(probs.shape)}")
    if not bool(torch.isfinite(probs).all()):  # LAPACK would return garbage or fail on NaN/inf entries
        bad = int((~torch.isfinite(probs)).sum())
        raise InputError(
            f"singular_values needs finite matrices; got {bad} NaN or infinite entries in a stack of "
            f"shape {tuple(probs.shape)}"
        )
    method = resolve_method(method, probs.device)
    lead, r, c = probs.shape[:-2], probs.shape[-2], probs.shape[-1]
    if r < c:  # the same singular values; the routines below then see (m, n, k) with n >= k
        probs = probs.mT
        r, c = c, r
    n = c  # how many singular values
    flat = probs.reshape(-1, r, c)  # (m, r, c), r >= c
    if flat.dtype not in (torch.float32, torch.float64):
        flat = flat.float()  # bfloat16/float16 models: factorise in float32
    workers = workers or torch.get_num_threads()
    bounds = None
    if method == "longn":  # approximate; its parameters and per-matrix error bounds: attnspec.spectra.longn
        from attnspec.spectra.longn import longn_singular_values

        if seeds is not None and tuple(torch.as_tensor(seeds).shape) != tuple(lead):
            raise InputError(
                f"seeds must have the stack's leading shape {tuple(lead)}, got {tuple(torch.as_tensor(seeds).shape)}"
            )
        sv, bounds = longn_singular_values(
            flat, seeds=None if seeds is None else torch.as_tensor(seeds).reshape(-1), return_error=True
        )
        bounds = {k: v.reshape(lead) for k, v in bounds.items()}
    elif method == "gram32" and r == c and flat.dtype != torch.float64:  # float64 P: the float64 gram below
        from attnspec.spectra.gram32 import available, gram32_singular_values

        if not available():
            raise InputError("--svd-method gram32 needs SciPy's bundled OpenBLAS, which was not found; use gram")
        sv = gram32_singular_values(flat, workers)
    elif method == "svd":
        sv = torch.linalg.svdvals(flat).to(torch.float64).cpu()  # descending already
    elif method == "lapack":
        if _lapack("sgesdd") is None:
            raise InputError("--svd-method lapack needs SciPy's bundled OpenBLAS, which was not found; use svd or gram")
        a = np.ascontiguousarray(flat.detach().cpu().numpy()).copy()  # gesdd overwrites its input
        sv = torch.from_numpy(_svdvals_gesdd(a, workers)).to(torch.float64)
    else:  # gram (and gram32 on rectangular cross-attention or float64 P, which it leaves to float64)
        x = flat.to(torch.float64)
        x, dominant = _deflate_dominant(x)  # (m, r, c) with σ₁ u vᵀ taken out where it dominates; (m,)
        # (m, c, c), symmetric positive semi-definite: P Pᵀ when square, else the smaller Pᵀ P
        gram = x @ x.mT if r == c else x.mT @ x
        if gram.device.type == "cpu" and _lapack("dsyevd_2stage") is not None:
            lam = torch.from_numpy(_eigvalsh_2stage(np.ascontiguousarray(gram.numpy()), workers))
        else:
            lam = torch.linalg.eigvalsh(gram).cpu()
        sv = lam.clamp_min(0).sqrt().flip(-1)  # ascending eigenvalues -> descending σ
        deflated = torch.nonzero(dominant.cpu() > 0).reshape(-1)
        if deflated.numel():  # σ₁ back in, the deflated direction's zero (the smallest value) out
            rows = torch.cat([dominant.cpu()[deflated, None], sv[deflated, :-1]], dim=-1)
            sv[deflated] = torch.sort(rows, dim=-1, descending=True).values
    sv = sv.clamp_min(0).reshape(*lead, n)
    return (sv, bounds) if return_error else sv
