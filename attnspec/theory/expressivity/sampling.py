"""Monte Carlo of the construction: the exact sampler of ``B̂ = B1 RᵀR B2ᵀ``
(:func:`sample_errors`, :func:`sample_errors_grid`) and the ``d → ∞`` law
``sqrt(d)(RᵀR − I) → Z`` of Gaussian projections (:func:`asymptotic_errors`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from attnspec.errors import InputError, check_range
from attnspec.numerics.stats import Seed, numpy_rng, torch_generator
from attnspec.theory.expressivity.construction import check_matrix, factorize, log_targets
from attnspec.theory.expressivity.params import FACTORIZATIONS, PROJECTIONS, check_choice, check_int

#: Per-trial statistics returned by :func:`sample_errors` (columns of its frame).
TRIAL_COLUMNS: tuple[str, ...] = (
    "err_inf",  # ||B − B̂||_∞
    "err_on",  # max over S of |B − B̂|
    "err_off",  # max over the complement of S of |B − B̂|
    "jl_ratio",  # max_ij |E_ij| / (||b1_i|| ||b2_j||): the JL ε this draw achieves
    "on_abs",  # max over S of |Â − A|
    "on_rel",  # max over S of |Â − A| / A
    "off_max",  # max over the complement of S of Â (Â = eps exp(B̂))
    "off_min",  # min over the complement of S of Â
    "off_argmax",  # flat index i*L + j of that max
    "san_off_mass",  # max over rows of the SAN mass outside S
    "ratio_on",  # max over rows of max − min of E on the row's support: the log-ratio error
)


def _left(B: torch.Tensor, Bs: torch.Tensor | None, M: torch.Tensor) -> torch.Tensor:
    """``B @ M``, M (t, L, n) → (t, L, n); through ``Bs``, B as a sparse CSR tensor, when given."""
    return B @ M if Bs is None else torch.stack([Bs @ M[i] for i in range(M.shape[0])])


def _frame(parts: list[dict[str, np.ndarray]], columns: tuple[str, ...], trials: int) -> pd.DataFrame:
    """The per-trial frame of :func:`sample_errors` from its batches' statistics."""
    return pd.DataFrame({"trial": np.arange(trials), **{c: np.concatenate([p[c] for p in parts]) for c in columns}})


def _project_batch(
    B: torch.Tensor,
    t: int,
    d: int,
    projection: str,
    g: torch.Generator,
    rng: np.random.Generator,
    dtype: torch.dtype,
    direct: bool = False,
    Bs: torch.Tensor | None = None,
) -> torch.Tensor:
    """Draw t projections R (d×L) and return ``B RᵀR``, shape (t, L, L), batched.

    ``Bs`` is B as a sparse CSR tensor (k nonzeros per row): products ``B @ M`` then cost
    O(k L n) instead of O(L² n); the remaining dense product is one batched matmul.
    """
    L = B.shape[-1]

    def randn(*shape: int) -> torch.Tensor:
        # always drawn in float64, so float32 and float64 runs see the same numbers
        return torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)

    if projection == "gaussian":
        if d < L or direct:
            R = randn(t, d, L) / math.sqrt(d)  # (t, d, L)
            return _left(B, Bs, R.mT.contiguous()) @ R  # (t, L, d) @ (t, d, L) -> (t, L, L)
        # d >= L: RᵀR ~ Wishart_L(d, I) / d; Bartlett: W = T Tᵀ with T lower triangular,
        # T_ii = sqrt(χ²_{d−i}) (i = 0..L−1), N(0, 1) below the diagonal.
        T = randn(t, L, L).tril_(-1)  # (t, L, L)
        chi = np.sqrt(rng.chisquare(d - np.arange(L), size=(t, L)))  # (t, L)
        T.diagonal(dim1=-2, dim2=-1).copy_(torch.from_numpy(chi).to(dtype))
        T *= 1.0 / math.sqrt(d)
        return _left(B, Bs, T) @ T.mT  # (B T) Tᵀ, (t, L, L)
    # orthogonal: RᵀR = (L/d) P, P the projection on a uniform d-dim subspace (span of a
    # Gaussian L×d matrix); for d > L/2 draw the complement: P = I − Qc Qcᵀ.
    if d > L:
        raise InputError(f"d must be in [1, L={L}] for orthogonal projections, got d={d}")
    if d == L:
        return B.expand(t, L, L).clone()
    complement = L - d < d
    r = L - d if complement else d
    Q = torch.linalg.qr(randn(t, L, r)).Q  # (t, L, r)
    low = _left(B, Bs, Q) @ Q.mT  # (t, L, L) = B Q Qᵀ
    return (L / d) * (B - low) if complement else (L / d) * low


def _trial_stats(
    E: torch.Tensor, A: torch.Tensor, S: torch.Tensor, idx: torch.Tensor, eps: float, n1: torch.Tensor, n2: torch.Tensor
) -> dict[str, np.ndarray]:
    """Per-trial statistics of E = B̂ − B, shape (t, L, L); E is overwritten.

    ``idx`` (L, kmax) lists each row's support (padded by repeating an entry), so the
    on-support statistics are computed on (t, L, kmax) gathers; a handful of full passes
    remain (|E|, masked maxima, exp).
    """
    t, L, _ = E.shape
    rows = torch.arange(L)[:, None]
    E_on = E[:, rows, idx]  # (t, L, kmax)
    A_on = A[rows, idx]  # (L, kmax)
    exp_on = torch.exp(E_on)
    on_dev = (A_on * (exp_on - 1.0)).abs()
    on_rel = (exp_on - 1.0).abs()
    has_off = bool((~S).any())
    nan = np.full(t, np.nan)
    # off-support extremes of E (S masked out), then |E|
    Emask = E.masked_fill(S, -math.inf)
    off_max_E, off_arg = Emask.flatten(1).max(1)
    off_min_E = E.masked_fill(S, math.inf).flatten(1).amin(1)
    absE = E.abs_()  # (t, L, L), in place
    rowmax = absE.amax(-1)  # (t, L)
    if bool(torch.all(n2 == 1)):
        jl = (rowmax / n1).amax(-1)
    elif bool(torch.all(n1 == 1)):
        jl = (absE.amax(-2) / n2).amax(-1)
    else:
        jl = (absE / (n1[:, None] * n2[None, :])).flatten(1).amax(1)
    err_off = absE.masked_fill_(S, 0.0).flatten(1).amax(1) if has_off else None
    # SAN mass off S: sum_{j∉S} eps e^{E_ij} / (that + sum_{j∈S} A_ij e^{E_ij})
    off_sum = torch.exp(Emask).sum(-1) * eps  # exp(-inf) = 0 on S
    on_sum = (A_on * exp_on * _first_mask(idx)).sum(-1)  # (t, L), padding counted once
    mass = off_sum / (off_sum + on_sum)

    def np_(x: torch.Tensor) -> np.ndarray:
        return x.double().numpy()

    return {
        "err_inf": np_(rowmax.amax(-1)),
        "err_on": np_(E_on.abs().flatten(1).amax(1)),
        "err_off": np_(err_off) if has_off else nan,
        "jl_ratio": np_(jl),
        "on_abs": np_(on_dev.flatten(1).amax(1)),
        "on_rel": np_(on_rel.flatten(1).amax(1)),
        "off_max": np_(eps * torch.exp(off_max_E)) if has_off else nan,
        "off_min": np_(eps * torch.exp(off_min_E)) if has_off else nan,
        "off_argmax": off_arg.numpy().astype(np.int64) if has_off else np.full(t, -1),
        "san_off_mass": np_(mass.amax(-1)),
        "ratio_on": np_((E_on.amax(-1) - E_on.amin(-1)).flatten(1).amax(1)),
    }


def _support_index(A: np.ndarray) -> torch.Tensor:
    """(L, kmax) column indices of each row's nonzeros, padded by repeating the first one."""
    S = A > 0
    kmax = max(1, int(S.sum(1).max()))
    order = np.argsort(~S, axis=1, kind="stable")[:, :kmax]  # nonzeros first
    nz = S.sum(1)
    pad = np.arange(kmax)[None, :] >= nz[:, None]
    order = np.where(pad, order[:, :1], order)
    return torch.from_numpy(order.astype(np.int64))


def _first_mask(idx: torch.Tensor) -> torch.Tensor:
    """1 where an index appears for the first time in its row (padding repeats count 0)."""
    first = torch.ones_like(idx, dtype=torch.bool)
    first[:, 1:] = idx[:, 1:] != idx[:, :1]
    return first.to(torch.get_default_dtype())


def _csr(B: torch.Tensor) -> torch.Tensor:
    import warnings

    with warnings.catch_warnings():  # "sparse CSR support is in beta"
        warnings.simplefilter("ignore", UserWarning)
        return B.to_sparse_csr()


@dataclass(frozen=True)
class _Targets:
    """What both exact samplers start from (:func:`_targets`)."""

    B: torch.Tensor  # (L, L), the log targets
    n1: torch.Tensor  # (L,), the row norms of B1
    n2: torch.Tensor  # (L,), the row norms of B2
    left: torch.Tensor  # (L, L), the side R multiplies: B (row) or Bᵀ (column; B̂ = (Bᵀ RᵀR)ᵀ, RᵀR symmetric)
    sparse: torch.Tensor | None  # that side in CSR when sparse
    A: torch.Tensor  # (L, L)
    S: torch.Tensor  # (L, L), the support A > 0
    idx: torch.Tensor  # (L, kmax), each row's support (:func:`_support_index`)


def _targets(A: np.ndarray, eps: float, factorization: str, dtype: torch.dtype) -> _Targets:
    L = A.shape[0]
    Bn = log_targets(A, eps)
    B1, B2 = factorize(Bn, factorization)
    n1 = torch.from_numpy(np.linalg.norm(B1, axis=1)).to(dtype)
    n2 = torch.from_numpy(np.linalg.norm(B2, axis=1)).to(dtype)
    B = torch.from_numpy(Bn).to(dtype)
    Bl = B if factorization == "row" else B.T.contiguous()
    sparse = L >= 128 and float((Bl != 0).float().mean()) < 0.25
    At = torch.from_numpy(A).to(dtype)
    return _Targets(B, n1, n2, Bl, _csr(Bl) if sparse else None, At, At > 0, _support_index(A))


def _streams(seed: Seed) -> tuple[torch.Generator, np.random.Generator]:
    """The torch generator of the normals and the numpy generator of the χ² draws, from one seed."""
    g = torch_generator(seed)
    return g, numpy_rng(int(torch.randint(0, 2**62, (1,), generator=g)))


def largest_d(dtype: torch.dtype) -> int:
    """The largest d whose products in ``dtype`` resolve the draws: 2^44 in float32
    (:data:`~attnspec.theory.expressivity.resources.MAX_MEASURED_DIMENSION`), 2^53 in float64.

    Parameters
    ----------
    dtype : torch.dtype
        The dtype of the sampler's products.

    Returns
    -------
    int
        The largest d accepted.
    """
    from attnspec.theory.expressivity.resources import MAX_DIMENSION, MAX_MEASURED_DIMENSION

    return MAX_MEASURED_DIMENSION if torch.finfo(dtype).bits <= 32 else int(MAX_DIMENSION)


def sample_errors(
    A: np.ndarray,
    d: int,
    *,
    eps: float,
    trials: int,
    projection: str = "gaussian",
    factorization: str = "row",
    seed: Seed = 0,
    dtype: torch.dtype = torch.float32,
    direct: bool = False,
    only_max: bool = False,
    stop: Callable[[np.ndarray], bool] | None = None,
    batch: int | None = None,
) -> pd.DataFrame:
    """Exact Monte Carlo of the construction: one row per trial with :data:`TRIAL_COLUMNS`.

    Each trial draws R (d×L) and measures E = B̂ − B (B̂ = B1 RᵀR B2ᵀ) and Â = eps exp(B̂),
    without forming X: only ``RᵀR`` matters. Trials are batched; Gaussian R with d >= L is
    drawn through the Wishart law of RᵀR (Bartlett), orthogonal R with d > L/2 through
    the complement subspace, so one trial costs O(L² min(d, L)).

    Parameters
    ----------
    A : array (L, L), nonnegative
    d : int >= 1 (<= L for orthogonal)
    eps : float > 0
    trials : int >= 1
    projection, factorization : see :func:`construct`
    seed : int or generator; the same seed gives the same draws for every d.
    dtype : torch dtype of the batched products. The normals are drawn in float64 either
        way, so both dtypes see the same draws; the statistics agree to ~1e-5 relative.
    direct : bool
        Draw R itself even when d >= L (the reference the Wishart shortcut is tested
        against; costs O(d L²) per trial).
    only_max : bool
        Measure only ``err_inf`` (what a search for d* needs; one pass instead of ~8).
    stop : callable, optional
        Curtailment: called after each batch with the ``err_inf`` of the trials so far; when
        it returns True no further trial is drawn and the frame holds the trials done.
    batch : int, optional
        Trials per batch (default: as many as ~192 MB allow). The draws depend on the
        batching, so a fixed batch keeps results reproducible.

    Returns
    -------
    DataFrame with columns ``trial`` and :data:`TRIAL_COLUMNS`, ``trials`` rows.
    """
    A = check_matrix(A)
    L = A.shape[0]
    check_int("d", d, 1, L if projection == "orthogonal" else largest_d(dtype))
    check_int("trials", trials, 1)
    check_choice("projection", projection, PROJECTIONS)
    check_choice("factorization", factorization, FACTORIZATIONS)
    check_range("eps", eps, low=0, low_open=True)
    tg = _targets(A, eps, factorization, dtype)
    g, rng = _streams(seed)
    elem = torch.finfo(dtype).bits // 8
    per = max(1, (192 * 2**20) // (5 * L * max(L, d if direct else min(d, L)) * elem))
    if batch is not None:
        per = max(1, min(per, int(batch)))
    parts = []
    done = 0
    while done < trials:
        if stop is not None and parts and stop(np.concatenate([p["err_inf"] for p in parts])):
            break
        t = min(per, trials - done)
        Bh = _project_batch(tg.left, t, d, projection, g, rng, dtype, direct, tg.sparse)
        if factorization == "column":
            Bh = Bh.mT.contiguous()
        E = Bh.sub_(tg.B)  # (t, L, L), in place
        if only_max:
            parts.append({"err_inf": E.abs_().flatten(1).amax(1).double().numpy()})
        else:
            parts.append(_trial_stats(E, tg.A, tg.S, tg.idx, eps, tg.n1, tg.n2))
        done += t
    return _frame(parts, ("err_inf",) if only_max else TRIAL_COLUMNS, done)


def measures(A: np.ndarray, B_hat: torch.Tensor | np.ndarray, eps: float) -> dict[str, float]:
    """The :data:`TRIAL_COLUMNS` of one approximation B̂ of B = log(A/eps) (row norms for ``jl_ratio``).

    Parameters
    ----------
    A : array of shape (L, L), nonnegative
    B_hat : array or tensor of shape (L, L)
    eps : float > 0

    Returns
    -------
    dict of str to float
    """
    A = check_matrix(A)
    Bn = log_targets(A, eps)
    Bh = torch.as_tensor(np.asarray(B_hat, dtype=np.float64))
    E = (Bh - torch.from_numpy(Bn)).unsqueeze(0)  # (1, L, L)
    n1 = torch.from_numpy(np.linalg.norm(Bn, axis=1))
    n2 = torch.ones(A.shape[0], dtype=torch.float64)
    st = _trial_stats(E, torch.from_numpy(A), torch.from_numpy(A > 0), _support_index(A), eps, n1, n2)
    return {c: float(v[0]) for c, v in st.items()}


def asymptotic_errors(
    A: np.ndarray,
    *,
    eps: float,
    trials: int,
    factorization: str = "row",
    seed: Seed = 0,
    dtype: torch.dtype = torch.float32,
    statistic: str = "max",
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """The d → ∞ law of Gaussian projections: ``sqrt(d) ||B − B̂||_∞ → max |B Z|`` (row) or
    ``max |Z B|`` (column), Z symmetric with N(0, 1) off and N(0, 2) on the diagonal.

    Parameters
    ----------
    A : array of shape (L, L), nonnegative
    eps : float > 0
    trials : int >= 1
    factorization : {"row", "column"}
    seed : int or generator
    dtype : torch dtype of the products
    statistic : {"max", "ratio", "both"}
        ``max``: ``Λ = max|BZ|`` (additive precision). ``ratio`` (row factorization only):
        ``max_i (max_{j∈S_i} − min_{j∈S_i}) (BZ)_ij``, the law of the worst error of the
        log-ratios ``log(Â_ij/Â_il)`` within a row's support (ratio precision). ``both``:
        the pair from one set of draws (the same seed gives the same Z for all three).

    Returns
    -------
    lam : ndarray of shape (trials,), or a pair of them for ``both``
        The draws of Λ; ``P(||B − B̂||_∞ <= δ) ≈ P(Λ <= δ sqrt(d))`` (likewise for ratios).
    """
    A = check_matrix(A)
    L = A.shape[0]
    check_int("trials", trials, 1)
    check_choice("factorization", factorization, FACTORIZATIONS)
    check_choice("statistic", statistic, ("max", "ratio", "both"))
    if statistic != "max" and factorization != "row":
        raise InputError("statistic 'ratio' needs factorization 'row'")
    Bn = log_targets(A, eps)
    B = torch.from_numpy(Bn if factorization == "row" else Bn.T.copy()).to(dtype)
    Bs = _csr(B) if L >= 256 else B
    idx = _support_index(A) if statistic != "max" else None
    rows = torch.arange(L)[:, None]
    g = torch_generator(seed)
    out = np.empty(trials)
    out_ratio = np.empty(trials)
    for t in range(trials):  # each draw is one O(L²) sparse product; batching adds nothing
        N = torch.randn(L, L, generator=g, dtype=dtype)
        Z = (N + N.T) * (1.0 / math.sqrt(2.0))  # (L, L) symmetric, var 1 off / 2 on diagonal
        # column factorization: Z B = (Bᵀ Z)ᵀ, same max
        BZ = Bs @ Z  # (L, L)
        if statistic != "ratio":
            out[t] = float(BZ.abs().amax())
        if idx is not None:  # range of each row's support entries (padding repeats an entry: harmless)
            on = BZ[rows, idx]  # (L, kmax)
            out_ratio[t] = float((on.amax(-1) - on.amin(-1)).amax())
    if statistic == "both":
        return out, out_ratio
    return out_ratio if statistic == "ratio" else out


def gram_diagonal_draws(L: int, d: int, projection: str, trials: int, seed: Seed = 0) -> np.ndarray:
    """Draws of ``‖R e_1‖²`` (the (0, 0) entry of RᵀR) for the projections of :func:`sample_errors`:
    the law of ``‖Ru‖²/‖u‖²`` for any fixed u, both projections being rotation invariant.

    Parameters
    ----------
    L, d : int, 1 <= d (<= L for orthogonal)
    projection : {"gaussian", "orthogonal"}
    trials : int >= 1
    seed : int or generator

    Returns
    -------
    ndarray of shape (trials,)
    """
    check_int("trials", trials, 1)
    check_choice("projection", projection, PROJECTIONS)
    g, rng = _streams(seed)
    e1 = torch.zeros(1, L, dtype=torch.float64)
    e1[0, 0] = 1.0
    # B = e_1ᵀ (1 × L): B RᵀR is the first row of RᵀR
    G = _project_batch(e1, trials, d, projection, g, rng, torch.float64)  # (trials, 1, L)
    return G[:, 0, 0].numpy().copy()


def sample_errors_grid(
    A: np.ndarray,
    ds: list[int] | tuple[int, ...],
    *,
    eps: float,
    trials: int,
    factorization: str = "row",
    seed: Seed = 0,
    full_at: tuple[int, ...] = (),
    dtype: torch.dtype = torch.float32,
) -> tuple[np.ndarray, dict[int, pd.DataFrame]]:
    """Exact Monte Carlo of Gaussian projections at several d >= L in one pass (common draws).

    Bartlett: ``RᵀR ~ T Tᵀ / d`` with ``T = N + D_d``, N strictly lower triangular N(0, 1)
    and ``D_d = diag(sqrt(χ²_{d−i}))``. N does not depend on d, so the O(L³) product
    ``(B N) Nᵀ`` of ``B T Tᵀ = (B N) Nᵀ + (B N) D + B (D Nᵀ) + B D²`` is shared by every d,
    each further d costing O(k L²) (B sparse). The law at each d is that of
    :func:`sample_errors`; the draws are a different stream.

    Parameters
    ----------
    A : array (L, L), nonnegative
    ds : the d to evaluate, each >= L
    eps : float > 0
    trials : int >= 1
    factorization : {"row", "column"}
    seed : int or generator
    full_at : the d (among ``ds``) at which every measure of :data:`TRIAL_COLUMNS` is kept
    dtype : torch dtype of the products

    Returns
    -------
    (err, frames) : err of shape (trials, len(ds)), ``||B − B̂||_∞`` per trial and d; frames
        maps each d of ``full_at`` to the per-trial frame of :func:`sample_errors`.
    """
    A = check_matrix(A)
    L = A.shape[0]
    ds = [int(d) for d in ds]
    for d in ds:
        check_int("d", d, L, largest_d(dtype))
    check_int("trials", trials, 1)
    check_choice("factorization", factorization, FACTORIZATIONS)
    check_range("eps", eps, low=0, low_open=True)
    tg = _targets(A, eps, factorization, dtype)
    Bl = tg.left

    g, rng = _streams(seed)
    elem = torch.finfo(dtype).bits // 8
    per = max(1, (160 * 2**20) // (6 * L * L * elem))
    err = np.empty((trials, len(ds)))
    parts: dict[int, list[dict[str, np.ndarray]]] = {d: [] for d in full_at}
    done = 0
    while done < trials:
        t = min(per, trials - done)
        N = torch.randn(t, L, L, generator=g, dtype=torch.float64).to(dtype).tril_(-1)  # (t, L, L)
        BN = _left(Bl, tg.sparse, N)  # (t, L, L)
        P1 = BN @ N.mT  # (t, L, L), the shared O(L³) product
        for j, d in enumerate(ds):
            diag = torch.from_numpy(np.sqrt(rng.chisquare(d - np.arange(L), size=(t, L)))).to(dtype)  # (t, L)
            # B T Tᵀ = P1 + (BN) D + B (D Nᵀ) + B D²   (D = diag(diag), per trial)
            BD2 = Bl.unsqueeze(0) * (diag * diag).unsqueeze(1)  # (t, L, L): columns of B scaled by D²
            E = P1 + BN * diag.unsqueeze(1) + _left(Bl, tg.sparse, diag.unsqueeze(2) * N.mT) + BD2
            E.mul_(1.0 / d)
            if factorization == "column":
                E = E.mT.contiguous()
            E.sub_(tg.B)  # (t, L, L), E = B̂ − B
            if d in parts:
                st = _trial_stats(E, tg.A, tg.S, tg.idx, eps, tg.n1, tg.n2)
                parts[d].append(st)
                err[done : done + t, j] = st["err_inf"]
            else:
                err[done : done + t, j] = E.abs_().flatten(1).amax(1).double().numpy()
        done += t
    return err, {d: _frame(ps, TRIAL_COLUMNS, trials) for d, ps in parts.items()}
