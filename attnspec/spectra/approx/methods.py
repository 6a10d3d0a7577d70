"""The shipped approximations without a fit: the references, Linformer's proof construction,
Performer (FAVOR+) and Nyströmformer; each registered through :mod:`.protocol`.

* ``uniform`` (reference): every row the mean of V, or of the visible prefix when causal;
  any method must beat it.
* ``best-rank-k`` (reference): P_k V with P_k the best rank-k approximation of P (truncated
  SVD). What low rank of P alone allows; not a lower bound for Linformer's E and F, which act
  on K and V, not on P.
* ``linformer-proof``: Linformer Theorem 2's construction (Wang et al. 2020, Appendix B):
  E = δR, F = e^(−δ)R with R ∈ R^{k×n} Gaussian, entries N(0, 1/k), δ = 1/(2n), applied at
  the k given (the proof's own k is far above these n).
* ``performer``: FAVOR+ (Choromanski et al. 2021): m = k positive orthogonal random features,
  exp(wᵀx − ‖x‖²/2)/√m; causal layers use its prefix-sum form.
* ``nystrom``: Nyströmformer (Xiong et al. 2021): k landmarks from segment means of Q and K,
  softmax(Q K̃ᵀ) pinv(softmax(Q̃ K̃ᵀ)) softmax(Q̃ Kᵀ) V with the paper's 6-step iterative
  pseudo-inverse (the exact one amplifies the small singular values of real attention); no
  causal form.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from attnspec.spectra.approx.dense import attention_weights, probabilities
from attnspec.spectra.approx.protocol import Heads, approximation


def _generator(seed: int) -> torch.Generator:
    from attnspec.numerics.stats import torch_generator

    return torch_generator(seed)


@approximation("uniform", label="uniform attention (mean of V)", causal=True, bias=True, reference=True)
def uniform(heads: Heads, *, k: int, state: Any, seed: int) -> torch.Tensor:
    """Every row the mean of V (of the visible prefix when causal); ignores k.

    Parameters
    ----------
    heads : Heads
    k : int
        Unused.
    state : Any
        Unused.
    seed : int
        Unused.

    Returns
    -------
    Tensor, shape (H, n, d)
    """
    v = heads.v  # (H, n, d)
    if heads.causal:
        counts = torch.arange(1, heads.n + 1, dtype=v.dtype, device=v.device)[:, None]  # (n, 1)
        return v.cumsum(dim=-2) / counts
    return v.mean(dim=-2, keepdim=True).expand_as(v)


#: The last heads best-rank-k decomposed and their right singular vectors (one entry).
_EIGH_CACHE: dict[str, Any] = {}


@approximation("best-rank-k", label="best rank-k P applied to V", causal=True, bias=True, reference=True)
def best_rank_k(heads: Heads, *, k: int, state: Any, seed: int) -> torch.Tensor:
    """P_k V, P_k the truncated SVD of P: with P = Σ σ_i u_i w_iᵀ, P_k V = P W_k W_kᵀ V.

    Parameters
    ----------
    heads : Heads
    k : int
        The rank kept (k >= n: P V itself).
    state : Any
        Unused.
    seed : int
        Unused.

    Returns
    -------
    Tensor, shape (H, n, d)
    """
    from attnspec.spectra.engine import symmetric_eigh

    p = probabilities(heads).double()  # (H, n, n)
    if k >= heads.n:
        return p @ heads.v.double()
    # right singular vectors from eigh(PᵀP) (several times cheaper than a full SVD), kept for
    # the next k on the same heads (the measurement asks every k of one document in a row)
    if _EIGH_CACHE.get("heads") is not heads:
        _EIGH_CACHE.update(heads=heads, vectors=symmetric_eigh(p.mT @ p)[1])
    w = _EIGH_CACHE["vectors"]  # (H, n, n), columns by ascending eigenvalue
    wk = w[..., -k:].to(p.device)  # (H, n, k): the top k right singular vectors
    return p @ (wk @ (wk.mT @ heads.v.double()))


def projected_attention(heads: Heads, e: torch.Tensor, f: torch.Tensor) -> torch.Tensor:
    """Linformer's softmax(S Eᵀ)(F V), S Eᵀ = s·Q (E K)ᵀ + B Eᵀ.

    Parameters
    ----------
    heads : Heads
        Not causal.
    e, f : Tensor, shape (k, n) or (H, k, n)
        The key and value projections (shared by the heads, or one per head).

    Returns
    -------
    Tensor, shape (H, n, d)
    """
    e, f = e.to(heads.q.dtype), f.to(heads.q.dtype)
    bias = None if heads.bias is None else heads.bias @ e.mT  # (H, n, k): E acts on the whole score matrix
    return attention_weights(heads.q, e @ heads.k, heads.scaling, bias) @ (f @ heads.v)  # (H, n, d)


@approximation(
    "linformer-proof",
    label="Linformer, the proof's construction E = δR, F = e^(−δ)R",
    bias=True,
)
def linformer_proof(heads: Heads, *, k: int, state: Any, seed: int) -> torch.Tensor:
    """Theorem 2's E = δR, F = e^(−δ)R, δ = 1/(2n), R Gaussian k × n with entries N(0, 1/k).

    Parameters
    ----------
    heads : Heads
    k : int
        The projection dimension.
    state : Any
        Unused.
    seed : int
        Seed of R.

    Returns
    -------
    Tensor, shape (H, n, d)
    """
    n = heads.n
    r = torch.randn(k, n, generator=_generator(seed), dtype=torch.float64) / math.sqrt(k)  # (k, n)
    delta = 1.0 / (2 * n)
    return projected_attention(heads, delta * r, math.exp(-delta) * r)


def orthogonal_features(m: int, d: int, seed: int) -> torch.Tensor:
    """m random feature directions: blocks of d orthogonal rows, each row scaled to the norm of
    a Gaussian d-vector (FAVOR+'s orthogonal random features).

    Parameters
    ----------
    m : int
        Features.
    d : int
        Head width.
    seed : int

    Returns
    -------
    Tensor, shape (m, d), float64
    """
    g = _generator(seed)
    blocks = []
    for _ in range(math.ceil(m / d)):
        q, r = torch.linalg.qr(torch.randn(d, d, generator=g, dtype=torch.float64))  # (d, d) orthogonal
        blocks.append((q * torch.sign(torch.diagonal(r))).mT)  # signs fixed: Haar-distributed, unbiased directions
    w = torch.cat(blocks)[:m]  # (m, d), orthonormal rows within a block
    norms = torch.randn(m, d, generator=g, dtype=torch.float64).norm(dim=-1, keepdim=True)  # (m, 1) chi(d)
    return w * norms


def _positive_features(x: torch.Tensor, w: torch.Tensor, *, per_row: bool) -> torch.Tensor:
    """exp(wᵀx − ‖x‖²/2 − c) (the 1/√m and the shift c cancel in the normalised output).

    x (H, n, d), w (m, d) → (H, n, m); c the row's maximum for queries, the head's for keys.
    """
    z = x @ w.mT - x.square().sum(-1, keepdim=True) / 2  # (H, n, m)
    c = z.amax(dim=-1, keepdim=True) if per_row else z.amax(dim=(-2, -1), keepdim=True)
    return torch.exp(z - c)


@approximation("performer", label="Performer (FAVOR+), m = k positive orthogonal features", causal=True)
def performer(heads: Heads, *, k: int, state: Any, seed: int) -> torch.Tensor:
    """FAVOR+ with m = k features: D⁻¹ φ(Q)(φ(K)ᵀ V), causal by prefix sums.

    Parameters
    ----------
    heads : Heads
        Its bias, if any, is not seen (content scores only).
    k : int
        m, the number of random features.
    state : Any
        Unused.
    seed : int
        Seed of the features.

    Returns
    -------
    Tensor, shape (H, n, d)
    """
    d = heads.q.shape[-1]
    w = orthogonal_features(k, d, seed).to(heads.q.dtype)  # (m, d)
    root = math.sqrt(heads.scaling)  # s·qᵀk = (√s q)ᵀ(√s k)
    fq = _positive_features(root * heads.q, w, per_row=True)  # (H, n, m)
    fk = _positive_features(root * heads.k, w, per_row=False)  # (H, n, m)
    if not heads.causal:
        num = fq @ (fk.mT @ heads.v)  # (H, n, d)
        den = fq @ fk.sum(dim=-2).unsqueeze(-1)  # (H, n, 1)
        return num / den
    return _causal_linear(fq, fk, heads.v)


def _causal_linear(fq: torch.Tensor, fk: torch.Tensor, v: torch.Tensor, chunk: int = 64) -> torch.Tensor:
    """Row i: Σ_{j<=i} φ(q_i)ᵀφ(k_j) v_j / Σ_{j<=i} φ(q_i)ᵀφ(k_j), by prefix sums over chunks.

    fq, fk (H, n, m), v (H, n, d) → (H, n, d); the state φ(K)ᵀV of the earlier chunks is carried.
    """
    H, n, m = fq.shape
    state = fq.new_zeros(H, m, v.shape[-1])  # (H, m, d): Σ_{j < chunk start} φ(k_j) v_jᵀ
    norm = fq.new_zeros(H, m)  # (H, m): Σ_{j < chunk start} φ(k_j)
    out = []
    for a in range(0, n, chunk):
        qc, kc, vc = fq[:, a : a + chunk], fk[:, a : a + chunk], v[:, a : a + chunk]
        inner = (qc @ kc.mT).tril()  # (H, c, c): within the chunk, visible columns only
        num = qc @ state + inner @ vc  # (H, c, d)
        den = qc @ norm.unsqueeze(-1) + inner.sum(-1, keepdim=True)  # (H, c, 1)
        out.append(num / den)
        state = state + kc.mT @ vc
        norm = norm + kc.sum(dim=-2)
    return torch.cat(out, dim=-2)


def segment_means(x: torch.Tensor, k: int) -> torch.Tensor:
    """Means of k contiguous segments of near-equal length along the sequence.

    Parameters
    ----------
    x : Tensor, shape (H, n, d)
    k : int
        Segments, 1..n.

    Returns
    -------
    Tensor, shape (H, k, d)
    """
    return torch.stack([s.mean(dim=-2) for s in torch.tensor_split(x, k, dim=-2)], dim=-2)


def iterative_pinv(a: torch.Tensor, iterations: int = 6) -> torch.Tensor:
    """Nyströmformer's iterative Moore–Penrose pseudo-inverse (Xiong et al. 2021, eq. 16).

    Z₀ = Aᵀ / (‖A‖₁ ‖A‖_∞), Z ← ¼ Z (13 I − A Z (15 I − A Z (7 I − A Z))).

    Parameters
    ----------
    a : Tensor, shape (H, k, k)
    iterations : int
        The paper uses 6.

    Returns
    -------
    Tensor, shape (H, k, k)
    """
    eye = torch.eye(a.shape[-1], dtype=a.dtype, device=a.device)
    norm1 = a.abs().sum(dim=-2).amax(dim=-1)  # (H,) max column sum
    norm_inf = a.abs().sum(dim=-1).amax(dim=-1)  # (H,) max row sum
    z = a.mT / (norm1 * norm_inf)[:, None, None]
    for _ in range(iterations):
        az = a @ z
        z = 0.25 * z @ (13 * eye - az @ (15 * eye - az @ (7 * eye - az)))
    return z


def nystrom_output(heads: Heads, k: int, iterations: int | None = 6) -> torch.Tensor:
    """softmax(s·Q K̃ᵀ) Z softmax(s·Q̃ Kᵀ) V with Z ≈ pinv(softmax(s·Q̃ K̃ᵀ)), landmarks Q̃, K̃ segment means.

    Parameters
    ----------
    heads : Heads
    k : int
        Landmarks (k >= n: every position its own landmark).
    iterations : int or None
        Iterations of :func:`iterative_pinv`; None: the exact pseudo-inverse (with it, k = n is exact).

    Returns
    -------
    Tensor, shape (H, n, d)
    """
    k = min(k, heads.n)
    ql, kl = segment_means(heads.q, k), segment_means(heads.k, k)  # (H, k, d) each
    s = heads.scaling
    left = attention_weights(heads.q, kl, s)  # (H, n, k)
    middle = attention_weights(ql, kl, s)  # (H, k, k)
    right = attention_weights(ql, heads.k, s)  # (H, k, n)
    z = torch.linalg.pinv(middle) if iterations is None else iterative_pinv(middle, iterations)
    return left @ (z @ (right @ heads.v))


@approximation("nystrom", label="Nyströmformer, k segment-mean landmarks, 6-step iterative pseudo-inverse")
def nystrom(heads: Heads, *, k: int, state: Any, seed: int) -> torch.Tensor:
    """Nyströmformer as published: :func:`nystrom_output` with the 6-step iterative pseudo-inverse.

    Parameters
    ----------
    heads : Heads
        Not causal; its bias, if any, is not seen (content scores only).
    k : int
        Landmarks.
    state : Any
        Unused.
    seed : int
        Unused.

    Returns
    -------
    Tensor, shape (H, n, d)
    """
    return nystrom_output(heads, k, iterations=6)
