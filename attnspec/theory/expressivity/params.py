"""The choices and parameter checks shared by every sa-check module.

Every check raises :class:`attnspec.errors.InputError` with a one-line message naming the
value and the allowed range, before any computation.
"""

from __future__ import annotations

from attnspec.errors import InputError, check_choice, check_int, check_range  # noqa: F401 - re-exported

#: Supports of the test matrix A (see :func:`attnspec.theory.expressivity.construction.sparse_target`).
SUPPORTS: tuple[str, ...] = ("random", "banded", "both", "dense-column")
#: Projections R: i.i.d. Gaussian N(0, 1/d), or scaled Haar-orthonormal rows.
PROJECTIONS: tuple[str, ...] = ("gaussian", "orthogonal")
#: B = B1 B2ᵀ with B1 = B, B2 = I (row sparsity) or B1 = I, B2 = Bᵀ (column sparsity).
FACTORIZATIONS: tuple[str, ...] = ("row", "column")
#: How a success probability was obtained: the exact sampler or the d → ∞ law.
METHODS: tuple[str, ...] = ("exact", "asymptotic")

#: Exact-sampler trials at the run's L when d* >= 2L (the grid check of the asymptotic d*):
#: the d → ∞ law gives d* from ``trials`` draws; the exact law confirms it on this many.
EXACT_TRIALS = 40  # here, below config, resources and measure: all three read it


def check_params(
    *, L: int, k: int, m: float, M: float, eps: float, delta: float | None = None, beta: float | None = None
) -> None:
    """Validate the problem parameters; raise :class:`InputError` naming the bad value.

    Parameters
    ----------
    L, k : int
        A is L×L with k nonzeros per row, ``1 <= k <= L``.
    m, M : float
        ``0 < m <= M``, the range of the nonzero entries.
    eps : float
        The off-support level of ``B = log(A / eps)``, > 0.
    delta : float, optional
        Target ``||B − B̂||_∞``, > 0.
    beta : float, optional
        Allowed failure probability, in (0, 1).
    """
    check_int("L", L, 1)
    check_int("k", k, 1)
    if k > L:
        raise InputError(f"k must be in [1, L={L}], got k={k}")
    check_range("m", m, low=0, low_open=True)
    check_range("M", M, low=0, low_open=True)
    if m > M:
        raise InputError(f"m must be <= M, got m={m} > M={M}")
    check_range("eps", eps, low=0, low_open=True)
    if delta is not None:
        check_range("delta", delta, low=0, low_open=True)
    if beta is not None:
        check_range("beta", beta, low=0, high=1, low_open=True, high_open=True)
