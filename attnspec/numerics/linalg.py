"""Shared numerics: Newton–Schulz orthogonalisation, the low-rank matrix exponential of
Orthogonal Self-Attention, and uniform sampling on the Stiefel manifold.

Newton–Schulz (Zhang & Martens, "Orthogonal Self-Attention", eq. (9); Higham 2008)
---------------------------------------------------------------------------------
For ``M`` of shape (..., N, r), start from ``M_0 = M / (||M||_F + eps)`` (every singular
value <= 1) and iterate an odd polynomial on the singular values,

    M_{k+1} = a_k M_k + b_k M_k (M_kᵀ M_k) + c_k M_k (M_kᵀ M_k)²,

so that ``M_K = U p_K(...p_1(Σ)) Vᵀ`` approaches the polar factor ``U Vᵀ``. Schedules:

* ``"cubic"``          (3/2, −1/2): the paper's eq. (9), converges to 1 for σ in (0, √3);
* ``"muon"``           (3.4445, −4.7750, 2.0315): K. Jordan's Muon quintic, does *not*
  converge — singular values oscillate in roughly [0.7, 1.2];
* ``"polar-express"``  the per-step degree-5 coefficients of Amsel, Persson, Musco &
  Gower 2025, "The Polar Express" (arXiv:2505.16932, Algorithm 1), with the paper's
  safety factor 1.01 on all but the last polynomial, which is repeated afterwards;
* custom: one ``(a, b)`` / ``(a, b, c)`` tuple (used at every step) or a list of them
  (one per step, the last repeated).

Low-rank exponential (Zhang & Martens, Theorem 2.1, eq. (6)–(7))
-----------------------------------------------------------------
If the columns of ``B`` (N, r) are an orthonormal basis of a space that contains the range
of a skew-symmetric ``S`` (N, N), then ``exp(S) = I_N + B (exp(BᵀSB) − I_r) Bᵀ``. With
``S = c (Q Kᵀ − K Qᵀ)`` the small matrix ``BᵀSB = c ((BᵀQ)(BᵀK)ᵀ − (BᵀK)(BᵀQ)ᵀ)`` is formed
from (r, d_v) factors, so ``exp(S) V`` costs O(N r d_v + r³) and never an N×N matrix.

Stiefel sampling (Zhang & Martens, Appendix B, Algorithm 1; Mezzadri 2006)
-------------------------------------------------------------------------
``Z`` (n, m) with iid N(0, 1) entries, reduced QR ``Z = Q R``, then ``Q diag(sign R_ii)``:
the sign fix makes the law of ``Q`` exactly uniform (Haar) on V_m(R^n).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from attnspec.errors import InputError
from attnspec.numerics.stats import Seed, torch_generator

# Polar Express, degree 5: Amsel et al. 2025, arXiv:2505.16932, Algorithm 1 (also
# github.com/NoahAmsel/PolarExpress). p_k(x) = a x + b x³ + c x⁵.
_POLAR_EXPRESS_RAW: tuple[tuple[float, float, float], ...] = (
    (8.28721201814563, -23.595886519098837, 17.300387312530933),
    (4.107059111542203, -2.9478499167379106, 0.5448431082926601),
    (3.9486908534822946, -2.908902115962949, 0.5518191394370137),
    (3.3184196573706015, -2.488488024314874, 0.51004894012372),
    (2.300652019954817, -1.6689039845747493, 0.4188073119525673),
    (1.891301407787398, -1.2679958271945868, 0.37680408948524835),
    (1.8750014808534479, -1.2500016453999487, 0.3750001645474248),
    (1.875, -1.25, 0.375),  # subsequent coefficients equal this numerically
)
#: The published schedule with its safety factor 1.01 (all but the last polynomial).
POLAR_EXPRESS: tuple[tuple[float, float, float], ...] = tuple(
    (a / 1.01, b / 1.01**3, c / 1.01**5) for (a, b, c) in _POLAR_EXPRESS_RAW[:-1]
) + (_POLAR_EXPRESS_RAW[-1],)

CUBIC: tuple[float, float] = (1.5, -0.5)
MUON: tuple[float, float, float] = (3.4445, -4.7750, 2.0315)

#: Names accepted wherever a Newton–Schulz schedule is expected.
SCHEDULES: tuple[str, ...] = ("cubic", "muon", "polar-express")

Coefficients = str | Sequence[float] | Sequence[Sequence[float]]


def ns_schedule(coefficients: Coefficients, steps: int) -> list[tuple[float, ...]]:
    """The list of ``steps`` polynomial coefficient tuples for a named or custom schedule.

    Parameters
    ----------
    coefficients : str or tuple or list of tuples
        ``"cubic"``, ``"muon"``, ``"polar-express"``; a single tuple ``(a, b)`` or
        ``(a, b, c)`` used at every step; or a list of tuples, one per step (the last is
        repeated when ``steps`` exceeds the list).
    steps : int
        Number of iterations K >= 0.

    Returns
    -------
    list of tuple
        ``steps`` tuples (a, b[, c]) with finite entries.
    """
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise InputError(f"steps must be an integer >= 0, got {steps!r}")
    if isinstance(coefficients, str):
        name = coefficients.lower().replace("_", "-")
        if name == "cubic":
            base: list[tuple[float, ...]] = [CUBIC]
        elif name == "muon":
            base = [MUON]
        elif name in ("polar-express", "polarexpress"):
            base = list(POLAR_EXPRESS)
        else:
            raise InputError(
                f"Newton–Schulz schedule must be one of {', '.join(SCHEDULES)} or a list of "
                f"coefficient tuples, got {coefficients!r}"
            )
    else:
        seq = list(coefficients)
        if not seq:
            raise InputError("custom Newton–Schulz coefficients must not be empty")
        if all(isinstance(c, (int, float)) for c in seq):
            seq = [tuple(seq)]
        base = []
        for tup in seq:
            try:
                t = tuple(float(v) for v in tup)
            except TypeError:
                raise InputError(
                    f"custom Newton–Schulz coefficients must be a tuple (a, b[, c]) or a list of "
                    f"them, got {coefficients!r}"
                ) from None
            if not 1 <= len(t) <= 3 or not all(math.isfinite(v) for v in t):
                raise InputError(
                    f"each Newton–Schulz coefficient tuple needs 1 to 3 finite numbers (a, b[, c]), got {tup!r}"
                )
            base.append(t)
    return [base[min(k, len(base) - 1)] for k in range(steps)]


def ns_normalise(m: torch.Tensor, eps: float = 0.0) -> torch.Tensor:
    """``M / (||M||_F + eps)`` over the last two axes (the paper's pre-normalisation).

    Parameters
    ----------
    m : torch.Tensor, shape (..., N, r)
        The matrices.
    eps : float
        Added to each Frobenius norm, >= 0 and finite.

    Returns
    -------
    torch.Tensor, shape (..., N, r)
        Each matrix with Frobenius norm 1 (below 1 when ``eps`` > 0).

    Raises
    ------
    InputError
        ``eps`` negative or not finite.
    """
    if not (math.isfinite(eps) and eps >= 0):
        raise InputError(f"eps must be in [0, inf), got {eps!r}")
    return m / (torch.linalg.matrix_norm(m, ord="fro", keepdim=True) + eps)


def ns_step(m: torch.Tensor, coeffs: Sequence[float]) -> torch.Tensor:
    """One odd-polynomial step ``a M + b M G + c M G²`` with ``G = MᵀM`` (r×r, never N×N).

    The cost is O(N r²).

    Parameters
    ----------
    m : torch.Tensor, shape (..., N, r)
        The current iterate.
    coeffs : sequence of float
        ``(a,)``, ``(a, b)`` or ``(a, b, c)``: the odd polynomial's coefficients.

    Returns
    -------
    torch.Tensor, shape (..., N, r)
        The next iterate.
    """
    g = m.mT @ m  # (..., r, r)
    a = coeffs[0]
    if len(coeffs) == 1:
        return a * m
    poly = coeffs[1] * g  # (..., r, r)
    if len(coeffs) == 3:
        poly = poly + coeffs[2] * (g @ g)
    return a * m + m @ poly


def newton_schulz(
    m: torch.Tensor,
    steps: int,
    coefficients: Coefficients = "cubic",
    eps: float = 0.0,
    *,
    normalise: bool = True,
    return_all: bool = False,
) -> torch.Tensor | list[torch.Tensor]:
    """Newton–Schulz iterates of ``M`` (..., N, r) towards its polar factor.

    Parameters
    ----------
    m : Tensor, shape (..., N, r)
    steps : int
        K >= 0 iterations (K = 0 returns the normalised matrix).
    coefficients : str or tuple or list
        See :func:`ns_schedule`.
    eps : float
        Added to the Frobenius norm in the pre-normalisation (>= 0).
    normalise : bool
        Divide by ``||M||_F + eps`` first (the paper's M_0); False iterates on ``m`` as is.
    return_all : bool
        Return the list ``[M_0, ..., M_K]`` instead of ``M_K``.

    Returns
    -------
    Tensor (..., N, r), or a list of K + 1 of them. Differentiable.
    """
    schedule = ns_schedule(coefficients, steps)
    x = ns_normalise(m, eps) if normalise else m
    out = [x]
    for c in schedule:
        x = ns_step(x, c)
        if return_all:
            out.append(x)
    return out if return_all else x


def qr_basis(m: torch.Tensor) -> torch.Tensor:
    """Orthonormal basis of span(M) by reduced QR with Algorithm 1's sign fix.

    The columns are multiplied by sign(R_ii) (zero → +1), which makes the basis a
    continuous function of ``M`` where R has a nonzero diagonal.

    Parameters
    ----------
    m : torch.Tensor, shape (..., N, r)
        The matrices whose column span is wanted.

    Returns
    -------
    torch.Tensor, shape (..., N, min(N, r))
        Orthonormal columns.
    """
    q, r = torch.linalg.qr(m, mode="reduced")
    d = torch.diagonal(r, dim1=-2, dim2=-1)  # (..., k)
    s = torch.where(d < 0, -torch.ones_like(d), torch.ones_like(d)).detach()
    return q * s.unsqueeze(-2)


def skew_small(b: torch.Tensor, q: torch.Tensor, k: torch.Tensor, scale: float | torch.Tensor) -> torch.Tensor:
    """``[S] = Bᵀ S B`` for ``S = scale (Q Kᵀ − K Qᵀ)``, from (r, d_v) factors.

    Parameters
    ----------
    b : torch.Tensor, shape (..., N, r)
        The basis B.
    q, k : torch.Tensor, shape (..., N, d_v)
        The factors Q and K.
    scale : float or torch.Tensor
        The scale of S; a tensor of the batch shape (...) gives one scale per matrix.

    Returns
    -------
    torch.Tensor, shape (..., r, r)
        ``[S]``, skew-symmetric.
    """
    bq = b.mT @ q  # (..., r, d_v)
    bk = b.mT @ k  # (..., r, d_v)
    prod = bq @ bk.mT  # (..., r, r)
    if isinstance(scale, torch.Tensor):
        scale = scale.reshape(scale.shape + (1, 1)) if scale.dim() else scale
    return scale * (prod - prod.mT)


def lowrank_expm_apply(b: torch.Tensor, s_small: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """``(I_N + B (exp([S]) − I_r) Bᵀ) V`` without forming N×N (Theorem 2.1, eq. (6)).

    Parameters
    ----------
    b : torch.Tensor, shape (..., N, r)
        The basis B, orthonormal columns.
    s_small : torch.Tensor, shape (..., r, r)
        ``[S] = Bᵀ S B`` (:func:`skew_small`).
    v : torch.Tensor, shape (..., N, p)
        The matrix the exponential is applied to.

    Returns
    -------
    torch.Tensor, shape (..., N, p)
    """
    r = s_small.shape[-1]
    eye = torch.eye(r, dtype=s_small.dtype, device=s_small.device)
    c = torch.linalg.matrix_exp(s_small) - eye  # (..., r, r)
    return v + b @ (c @ (b.mT @ v))


def lowrank_expm_dense(b: torch.Tensor, s_small: torch.Tensor) -> torch.Tensor:
    """The N×N matrix ``I_N + B (exp([S]) − I_r) Bᵀ`` (for tests and small-N checks only).

    Parameters
    ----------
    b : torch.Tensor, shape (..., N, r)
        The basis B, orthonormal columns.
    s_small : torch.Tensor, shape (..., r, r)
        ``[S] = Bᵀ S B`` (:func:`skew_small`).

    Returns
    -------
    torch.Tensor, shape (..., N, N)
    """
    n, r = b.shape[-2], s_small.shape[-1]
    eye_r = torch.eye(r, dtype=s_small.dtype, device=s_small.device)
    eye_n = torch.eye(n, dtype=b.dtype, device=b.device)
    return eye_n + b @ (torch.linalg.matrix_exp(s_small) - eye_r) @ b.mT


def sample_stiefel(
    n: int,
    m: int,
    seed: Seed,
    *,
    dtype: torch.dtype = torch.float32,
    batch: tuple[int, ...] = (),
    device: str | torch.device = "cpu",
) -> torch.Tensor:
    """Uniform (Haar) sample from the Stiefel manifold V_m(R^n) (Algorithm 1 of Zhang & Martens).

    Parameters
    ----------
    n, m : int
        Shape of the sample, n >= m >= 1.
    seed : int or torch.Generator
        Seed of the Gaussian draw (a generator is used as is).
    dtype, batch, device
        Output dtype, leading batch shape, device.

    Returns
    -------
    Tensor, shape (*batch, n, m), with ``WᵀW = I_m``.
    """
    if isinstance(n, bool) or isinstance(m, bool) or not isinstance(n, int) or not isinstance(m, int):
        raise InputError(f"n and m must be integers, got n={n!r}, m={m!r}")
    if m < 1 or n < m:
        raise InputError(f"Stiefel sampling needs n >= m >= 1, got n={n}, m={m}")
    g = torch_generator(seed, device)
    z = torch.randn(*batch, n, m, generator=g, dtype=torch.float64, device=device)
    q, r = torch.linalg.qr(z, mode="reduced")
    d = torch.diagonal(r, dim1=-2, dim2=-1)
    s = torch.where(d < 0, -1.0, 1.0).to(q.dtype)
    return (q * s.unsqueeze(-2)).to(dtype)


def expm_skew_eigh(s: torch.Tensor) -> torch.Tensor:
    """exp(S) for real skew-symmetric S (..., N, N) from the eigendecomposition of the
    Hermitian matrix iS (complex128): a third, independent reference for expm.

    iS = V diag(w) Vᴴ  ⇒  exp(S) = exp(−i · iS) = V diag(e^{−i w}) Vᴴ (real up to rounding).

    Parameters
    ----------
    s : torch.Tensor, shape (..., N, N)
        Real skew-symmetric matrices.

    Returns
    -------
    torch.Tensor, shape (..., N, N), float64
        The real part of exp(S).
    """
    h = 1j * s.to(torch.complex128)
    w, v = torch.linalg.eigh(h)
    e = (v * torch.exp(-1j * w).unsqueeze(-2)) @ v.mH
    return e.real.to(torch.float64)
