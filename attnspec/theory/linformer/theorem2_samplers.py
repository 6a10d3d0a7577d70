"""The exact reduced samplers of Linformer's Theorem 2 (and the direct ones they are tested against).

Gaussian R, softmax(δ wRᵀ) (e^{−δ}R) V: with ŵ = w/‖w‖, a = Rŵ and V = ŵcᵀ + V⊥, the rows
of R V⊥ are independent of a and i.i.d. N(0, V⊥ᵀV⊥/k), so
``pᵀRV = (pᵀa) cᵀ + (‖p‖/sqrt(k)) (L g)ᵀ`` for any p that depends on a only, with
``L Lᵀ = V⊥ᵀV⊥`` and ``g ~ N(0, I_d)``. The projection families and Lemma 1's samplers are
in :mod:`attnspec.theory.linformer.samplers`, Theorem 1's in
:mod:`attnspec.theory.linformer.theorem1_samplers`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from attnspec.errors import InputError
from attnspec.numerics.stats import Seed, torch_generator

if TYPE_CHECKING:
    import torch

# torch is imported in the functions that draw with it, not here: `jl-check` imports this module
# before it forks, and only the process that computes a torch group should pay torch's import
# (see .battery.plan: the forked process computes the torch-free groups and never loads it).


def theorem2_direct_outputs(
    w: np.ndarray, V: np.ndarray, k: int, trials: int, *, delta: float | None, seed: Seed
) -> np.ndarray:
    """Reference sampler: softmax(w Eᵀ) F V with E = δR, F = e^{−δ}R (or E = F = R when
    ``delta`` is None), R ∈ R^{k×n} Gaussian drawn in full each trial.

    Parameters
    ----------
    w : ndarray of shape (n,)
        A row of A (the softmax's argument).
    V : ndarray of shape (n, d)
        The values.
    k : int
        Rows of R.
    trials : int
        Draws.
    delta : float or None
        The paper's δ; None: E = F = R.
    seed : int or generator
        Seed of the draws.

    Returns
    -------
    outputs : ndarray of shape (trials, d)
    """
    import torch

    n = w.shape[0]
    gen = torch_generator(seed)
    wt = torch.from_numpy(np.asarray(w, dtype=np.float64))
    Vt = torch.from_numpy(np.asarray(V, dtype=np.float64))
    out = np.empty((trials, Vt.shape[1]))
    for t in range(trials):
        r = torch.randn((k, n), generator=gen, dtype=torch.float64) / math.sqrt(k)
        if delta is None:
            p = torch.softmax(r @ wt, 0)
            out[t] = (p @ (r @ Vt)).numpy()
        else:
            p = torch.softmax(delta * (r @ wt), 0)
            out[t] = (p @ (math.exp(-delta) * (r @ Vt))).numpy()
    return out


def theorem2_eq21_direct(x: np.ndarray, y: np.ndarray, k: int, trials: int, *, delta: float, seed: Seed) -> np.ndarray:
    """Reference sampler of exp(x Eᵀ) F yᵀ = e^{−δ} Σ_j exp(δ (Rx)_j) (Ry)_j (eq. 21).

    Parameters
    ----------
    x : ndarray of shape (n,)
        A row of A.
    y : ndarray of shape (n,)
        A column of V.
    k : int
        Rows of R.
    trials : int
        Draws.
    delta : float
        The paper's δ (= 1/(2n)).
    seed : int or generator
        Seed of the draws.

    Returns
    -------
    numpy.ndarray, shape (trials,)
    """
    import torch

    n = x.shape[0]
    gen = torch_generator(seed)
    xy = torch.from_numpy(np.stack([x, y], axis=1).astype(np.float64))  # (n, 2)
    out = np.empty(trials)
    for t in range(trials):
        r = torch.randn((k, n), generator=gen, dtype=torch.float64) / math.sqrt(k)
        im = r @ xy  # (k, 2)
        out[t] = float(math.exp(-delta) * (torch.exp(delta * im[:, 0]) * im[:, 1]).sum())
    return out


def theorem2_reduced_all(
    w: np.ndarray,
    V: np.ndarray,
    ks: np.ndarray,
    trials: int,
    *,
    delta: float,
    seed: Seed,
    chunk: int = 500,
    y_index: int = 0,
    work_dtype: torch.dtype | None = None,
) -> dict[str, np.ndarray]:
    """All Theorem-2 statistics from one set of draws (common random numbers).

    Returns the outputs of :func:`theorem2_direct_outputs` with ``delta`` (``paper``) and with
    None (``plain``), shape (len(ks), trials, d), and eq. (21)'s left-hand side of
    :func:`theorem2_eq21_direct` with y = V[:, y_index] (``eq21``, shape (len(ks), trials)),
    every k from one set of draws. Each is exact in distribution: given a = R ŵ,
    Σ_j q_j (R y⊥)_j ~ N(0, ‖q‖² ‖y⊥‖²/k) for q = exp(δ‖w‖ a).

    Parameters
    ----------
    w : ndarray of shape (n,)
        A row of A (the softmax's argument).
    V : ndarray of shape (n, d)
        The values.
    ks : ndarray of int
        The projection dimensions.
    trials : int
        Draws.
    delta : float
        The paper's δ (= 1/(2n)).
    seed : int or generator
        Seed of the draws.
    chunk : int
        Trials drawn at a time (memory; the same draws whatever ``trials`` is).
    y_index : int
        The column of V that eq. (21) reads.
    work_dtype : torch.dtype, optional
        Precision of the Gaussian draws and products (default float32).

    Returns
    -------
    dict of str to numpy.ndarray
        ``paper``, ``plain``, ``eq21``.
    """
    import torch

    work_dtype = torch.float32 if work_dtype is None else work_dtype

    ks = np.asarray(ks, dtype=np.int64)
    w, wn, what, c, Vperp, L = _split_along_w(w, V)
    ct = torch.from_numpy(c)
    cy = float(c[y_index])
    yperp = float(np.linalg.norm(Vperp[:, y_index]))
    gen = torch_generator(seed)
    k_max = int(ks.max())
    d = V.shape[1]
    paper = np.empty((len(ks), trials, d))
    plain = np.empty((len(ks), trials, d))
    eq21 = np.empty((len(ks), trials))
    ed = math.exp(-delta)
    # The O(trials·k) work runs in ``work_dtype`` (float32 by default: the exponents are
    # O(1) after the softmax shift, sums have <= k_max terms); outputs are float64.
    L = L.to(work_dtype)
    ct = ct.to(work_dtype)
    for start in range(0, trials, chunk):
        m = min(chunk, trials - start)
        z = torch.randn((m, k_max), generator=gen, dtype=work_dtype)  # sqrt(k)·(R ŵ)
        g = torch.randn((m, d), generator=gen, dtype=work_dtype)
        g1 = torch.randn((m,), generator=gen, dtype=torch.float64)
        lg = g @ L.T  # (m, d) ~ N(0, V⊥ᵀV⊥)
        for i, k in enumerate(ks):
            zk = z[:, :k]  # (m, k); R ŵ = zk / sqrt(k)
            rk = 1.0 / math.sqrt(k)
            q = torch.exp((delta * wn * rk) * zk)  # (m, k): exp(x Eᵀ) with E = δR
            qs = q.sum(1, keepdim=True)
            qa = (q * zk).sum(1, keepdim=True) * rk
            qn = torch.linalg.vector_norm(q, dim=1, keepdim=True)
            # softmax(δ w Rᵀ) e^{−δ} R V
            paper[i, start : start + m] = (ed * (qa / qs * ct + qn / qs * rk * lg)).numpy()
            # eq. 21: e^{−δ} Σ_j q_j (R y)_j with R y = cy·a + R y⊥
            eq21[i, start : start + m] = ed * (cy * qa[:, 0].double() + qn[:, 0].double() * yperp * rk * g1).numpy()
            plain[i, start : start + m] = _plain_outputs(zk, wn, k, ct, lg).numpy()
    return {"paper": paper, "plain": plain, "eq21": eq21}


def _plain_outputs(zk: torch.Tensor, wn: float, k: int, ct: torch.Tensor, lg: torch.Tensor) -> torch.Tensor:
    """softmax(w Rᵀ) R V for E = F = R at k, shape (m, d), from zk = sqrt(k)·(R ŵ) (m, k),
    ‖w‖, c (d,) and L g (m, d)."""
    import torch

    rk = 1.0 / math.sqrt(k)
    p = torch.softmax((wn * rk) * zk, dim=1)
    pa = (p * zk).sum(1, keepdim=True) * rk
    pn = torch.linalg.vector_norm(p, dim=1, keepdim=True)
    return pa * ct + pn * rk * lg


def _split_along_w(
    w: np.ndarray, V: np.ndarray
) -> tuple[np.ndarray, float, np.ndarray, np.ndarray, np.ndarray, torch.Tensor]:
    """Decompose V along ŵ = w/‖w‖: returns (w, ‖w‖, ŵ, c = Vᵀŵ, V⊥ = V − ŵcᵀ, L) with L Lᵀ = V⊥ᵀV⊥.

    Shapes: w (n,), V (n, d), c (d,), V⊥ (n, d), L (d, d). L comes from an eigendecomposition, since
    V⊥ᵀV⊥ may be singular (no Cholesky).
    """
    import torch

    w = np.asarray(w, dtype=np.float64)
    V = np.asarray(V, dtype=np.float64)
    wn = float(np.linalg.norm(w))
    if wn == 0:
        raise InputError("w must be non-zero")
    what = w / wn
    c = V.T @ what  # (d,)
    Vperp = V - np.outer(what, c)  # (n, d)
    lam, Q = np.linalg.eigh(Vperp.T @ Vperp)
    return w, wn, what, c, Vperp, torch.from_numpy(Q * np.sqrt(np.clip(lam, 0, None)))  # L: (d, d)


# --------------------------------------------------------------------------- Theorem 2, by looks


def _series_order(xmax: float, rtol: float = 1e-12) -> int | None:
    """The smallest P with (2x)^{P+1}/(P+1)!·e^{2x} <= rtol (x = max |c z|): the truncation
    error of exp(c z) and exp(2 c z) at order P, relative; None when P would exceed 8."""
    x2 = 2.0 * xmax
    for p in range(1, 9):
        if x2 ** (p + 1) / math.factorial(p + 1) * math.exp(x2) <= rtol:
            return p
    return None


class Theorem2Looks:
    """Theorem-2 statistics for every k in ``ks``, one look of trials at a time.

    Draws are those of :func:`theorem2_reduced_all` (chunks of ``chunk`` trials: z (m, k_max)
    and g (m, d) in ``work_dtype``, g1 (m,) in float64, in that order), so the first looks
    see the same Gaussian draws as a fixed-size run. The paper's construction (E = δR,
    F = e^{−δ}R) and eq. (21) need Σ_j exp(c z_j), Σ_j exp(c z_j) z_j and Σ_j exp(2c z_j)
    over the first k draws, c = δ‖w‖/√k; with |c z| tiny (δ = 1/(2n)) they are evaluated
    from the power sums Σ z_j^p by the exponential series, truncated where the remainder is
    <= 1e-12 relative (checked per chunk; the direct exp where it is not), in float64 —
    more accurate than the float32 exp of :func:`theorem2_reduced_all`, and O(k_max) per
    trial whatever the number of k. ``plain`` (E = F = R) needs a softmax per k: computed
    only when asked (the first look).

    Parameters
    ----------
    w : ndarray of shape (n,)
        A row of A (the softmax's argument).
    V : ndarray of shape (n, d)
        The values.
    ks : ndarray of int
        The projection dimensions.
    delta : float
        The paper's δ (= 1/(2n)).
    seed : int or generator
        Seed of the draws.
    chunk : int
        Trials drawn at a time (memory; the same draws whatever ``trials`` is).
    y_index : int
        The column of V that eq. (21) reads.
    work_dtype : torch.dtype, optional
        Precision of the Gaussian draws (default float32).
    """

    def __init__(
        self,
        w: np.ndarray,
        V: np.ndarray,
        ks: np.ndarray,
        *,
        delta: float,
        seed: Seed,
        chunk: int = 500,
        y_index: int = 0,
        work_dtype: torch.dtype | None = None,
    ) -> None:
        import torch

        work_dtype = torch.float32 if work_dtype is None else work_dtype

        self.ks = np.asarray(ks, dtype=np.int64)
        w, wn, what, c, Vperp, L = _split_along_w(w, V)
        self.wn, self.delta = wn, delta
        self.c = c  # (d,)
        self.cy = float(c[y_index])
        self.yperp = float(np.linalg.norm(Vperp[:, y_index]))
        self.L = L.to(work_dtype)
        self.ct = torch.from_numpy(c).to(work_dtype)
        self.gen = torch_generator(seed)
        self.k_max = int(self.ks.max())
        self.d = V.shape[1]
        self.chunk, self.work_dtype = chunk, work_dtype

    def draw(self, trials: int, *, plain: bool, active: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """The next ``trials`` (a multiple of ``chunk``, or the last few) trials.

        Parameters
        ----------
        trials : int
            Trials to draw.
        plain : bool
            Also compute the ``plain`` construction (from the first chunk only).
        active : numpy.ndarray of bool, shape (len(ks),), optional
            The k still drawing (default: all); the others' rows are NaN.

        Returns
        -------
        dict of str to numpy.ndarray
            ``paper`` (len(ks), trials, d), ``eq21`` (len(ks), trials) and, with ``plain``,
            ``plain`` (len(ks), min(trials, chunk), d).
        """
        import torch

        ks = self.ks
        act = np.ones(len(ks), bool) if active is None else np.asarray(active, bool)
        nk = len(ks)
        paper = np.full((nk, trials, self.d), np.nan)
        eq21 = np.full((nk, trials), np.nan)
        plain_out = np.full((nk, min(trials, self.chunk), self.d), np.nan) if plain else None
        ed = math.exp(-self.delta)
        for start in range(0, trials, self.chunk):
            m = min(self.chunk, trials - start)
            z = torch.randn((m, self.k_max), generator=self.gen, dtype=self.work_dtype)  # sqrt(k)·(R ŵ)
            g = torch.randn((m, self.d), generator=self.gen, dtype=self.work_dtype)
            g1 = torch.randn((m,), generator=self.gen, dtype=torch.float64)
            lg = (g @ self.L.T).double().numpy()  # (m, d) ~ N(0, V⊥ᵀV⊥)
            g1n = g1.numpy()
            idx = np.flatnonzero(act)
            if idx.size == 0:
                continue
            kk = ks[idx]
            z64 = z[:, : int(kk.max())].double().numpy()  # (m, k): exact widening of the draws
            zmax = float(np.abs(z64).max()) if z64.size else 0.0
            cs = self.delta * self.wn / np.sqrt(kk.astype(float))  # (len(kk),)
            order = _series_order(float(cs.max()) * zmax)
            if order is not None:
                # power sums S_p(k) = Σ_{j<=k} z_j^p, p = 0..order+1, at every active k
                bounds = np.concatenate([[0], kk])
                seg = [slice(int(bounds[i]), int(bounds[i + 1])) for i in range(len(kk))]
                S = np.empty((order + 2, m, len(kk)))
                # S_0(k) = k exactly (the sum of k ones, which is what summing ones gave); S_1 from
                # z itself (1·z = z exactly): the same values, without two passes over (m, k_max)
                S[0] = kk.astype(np.float64)[None, :]
                zp = z64
                for p in range(1, order + 2):
                    if p > 1:
                        zp = zp * z64
                    part = np.stack([zp[:, sl].sum(1) for sl in seg], axis=1)  # (m, len(kk))
                    S[p] = np.cumsum(part, axis=1)
                fac = np.array([1.0 / math.factorial(p) for p in range(order + 1)])
                cp = cs[None, :] ** np.arange(order + 1)[:, None] * fac[:, None]  # (order+1, len(kk))
                c2p = (2 * cs[None, :]) ** np.arange(order + 1)[:, None] * fac[:, None]
                qs = np.einsum("pk,pmk->mk", cp, S[: order + 1])  # Σ exp(c z)
                qz = np.einsum("pk,pmk->mk", cp, S[1 : order + 2])  # Σ exp(c z) z
                q2 = np.einsum("pk,pmk->mk", c2p, S[: order + 1])  # Σ exp(2 c z)
            else:  # not small enough for the series: the direct exponentials, in float64
                qs = np.empty((m, len(kk)))
                qz = np.empty((m, len(kk)))
                q2 = np.empty((m, len(kk)))
                for i, k in enumerate(kk):
                    q = np.exp(cs[i] * z64[:, :k])
                    qs[:, i], qz[:, i], q2[:, i] = q.sum(1), (q * z64[:, :k]).sum(1), (q * q).sum(1)
            rk = 1.0 / np.sqrt(kk.astype(float))  # (len(kk),)
            qa = qz * rk  # Σ q_j (R ŵ)_j
            qn = np.sqrt(np.maximum(q2, 0.0))
            # softmax(δ w Rᵀ) e^{−δ} R V = e^{−δ}[(qa/qs) c + (qn/qs)/√k · L g]
            paper[idx, start : start + m] = ed * (
                (qa / qs).T[:, :, None] * self.c[None, None, :] + ((qn / qs) * rk).T[:, :, None] * lg[None, :, :]
            )
            eq21[idx, start : start + m] = (ed * (self.cy * qa + qn * self.yperp * rk * g1n[:, None])).T
            if plain and start == 0:  # E = F = R: a comparison, on the first chunk only (a softmax per k)
                for i, k in zip(idx, kk):
                    plain_out[i, start : start + m] = _plain_outputs(
                        z[:, :k], self.wn, k, self.ct, g @ self.L.T
                    ).numpy()
        out = {"paper": paper, "eq21": eq21}
        if plain:
            out["plain"] = plain_out
        return out
