"""The Orthogonal Self-Attention layer (Zhang & Martens, eqs. (3)–(5)) and its initialisation.

For one head, with X (N, d), Q = X W_Q, K = X W_K (N, d_v),

    OSA(X) = exp(S) X W_V W_O,    S = (alpha / sqrt(d_v)) (Q Kᵀ − K Qᵀ)   (skew, rank <= 2 d_v),

and the multihead layer is the sum over heads. ``exp(S)`` is applied through Theorem 2.1,
``exp(S) = I_N + B (exp(BᵀSB) − I_r) Bᵀ`` with B an orthonormal basis of span(Q, K),
obtained by a reduced QR of M = [Q, K] with the sign fix of Algorithm 1, or by K
Newton–Schulz steps from M / (||M||_F + eps) (eq. (9)). The fast path costs
O(N d_v² + d_v³) per head and never forms an N×N matrix.

Initialisation (Section 4): [W_Q, W_K] uniform on the Stiefel manifold V_{2 d_v}(R^d)
(needs 2 d_v <= d), W_V = U, W_O = Vᵀ with U, V uniform on V_{d_v}(R^d), alpha small.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from attnspec.errors import InputError, check_range
from attnspec.numerics.linalg import Coefficients, newton_schulz, ns_schedule, qr_basis, sample_stiefel, skew_small
from attnspec.numerics.stats import Seed, torch_generator

BASES: tuple[str, ...] = ("qr", "newton-schulz")


def _check_basis(basis: str) -> str:
    b = str(basis).lower().replace("_", "-")
    if b in ("ns", "newtonschulz"):
        b = "newton-schulz"
    if b not in BASES:
        raise InputError(f"basis must be one of {', '.join(BASES)}, got {basis!r}")
    return b


def _check_alpha(alpha: float) -> None:
    if isinstance(alpha, torch.Tensor):
        if not bool(torch.isfinite(alpha).all()):
            raise InputError(f"alpha must be finite, got {alpha.tolist()!r}")
        return
    if not math.isfinite(float(alpha)):
        raise InputError(f"alpha must be a finite number, got {alpha!r}")


def osa_basis(
    m: torch.Tensor,
    basis: str = "qr",
    ns_steps: int = 6,
    ns_coefficients: Coefficients = "cubic",
    eps: float = 0.0,
) -> torch.Tensor:
    """The basis B of span(M) used by OSA: reduced QR (sign-fixed) or Newton–Schulz.

    Parameters
    ----------
    m : Tensor (..., N, r)
        M = [Q, K] (r = 2 d_v).
    basis : {"qr", "newton-schulz"}
    ns_steps : int
        Newton–Schulz iterations K >= 0.
    ns_coefficients : str or tuple or list
        Schedule (see :func:`attnspec.numerics.linalg.ns_schedule`).
    eps : float
        The eps of the pre-normalisation M / (||M||_F + eps).

    Returns
    -------
    Tensor (..., N, r)
        QR: (..., N, min(N, r)).
    """
    basis = _check_basis(basis)
    if basis == "qr":
        return qr_basis(m)
    return newton_schulz(m, ns_steps, ns_coefficients, eps)


def osa_heads(
    x: torch.Tensor,
    w_q: torch.Tensor,
    w_k: torch.Tensor,
    w_v: torch.Tensor,
    alpha: torch.Tensor | float,
    *,
    basis: str = "qr",
    ns_steps: int = 6,
    ns_coefficients: Coefficients = "cubic",
    eps: float = 0.0,
) -> torch.Tensor:
    """Per-head ``exp(S_h) X W_V,h`` by the low-rank route (no N×N matrix).

    Parameters
    ----------
    x : Tensor (batch, N, d)
    w_q, w_k, w_v : Tensor (heads, d, d_v)
    alpha : float or Tensor (heads,)
        The per-head scale of S_h (S_h is scaled by alpha / sqrt(d_v)).
    basis : {"qr", "newton-schulz"}
        How the basis B of span(Q, K) is computed (:func:`osa_basis`).
    ns_steps : int
        Newton–Schulz iterations K >= 0 (``basis="newton-schulz"``).
    ns_coefficients : str or tuple or list
        Newton–Schulz schedule (see :func:`attnspec.numerics.linalg.ns_schedule`).
    eps : float
        The eps of the Newton–Schulz pre-normalisation M / (||M||_F + eps).

    Returns
    -------
    Tensor (batch, heads, N, d_v)
    """
    d_v = w_q.shape[-1]
    q = torch.einsum("bnd,hdv->bhnv", x, w_q)  # (B, H, N, d_v)
    k = torch.einsum("bnd,hdv->bhnv", x, w_k)  # (B, H, N, d_v)
    v = torch.einsum("bnd,hdv->bhnv", x, w_v)  # (B, H, N, d_v)
    m = torch.cat([q, k], dim=-1)  # (B, H, N, 2 d_v)
    b = osa_basis(m, basis, ns_steps, ns_coefficients, eps)  # (B, H, N, r)
    if isinstance(alpha, torch.Tensor):
        scale = (alpha / math.sqrt(d_v)).reshape(1, -1, 1, 1)  # (1, H, 1, 1)
    else:
        scale = alpha / math.sqrt(d_v)
    bq = b.mT @ q  # (B, H, r, d_v)
    bk = b.mT @ k  # (B, H, r, d_v)
    prod = bq @ bk.mT  # (B, H, r, r)
    s_small = scale * (prod - prod.mT)  # [S] = Bᵀ S B, (B, H, r, r)
    r = s_small.shape[-1]
    eye = torch.eye(r, dtype=s_small.dtype, device=s_small.device)
    c = torch.linalg.matrix_exp(s_small) - eye  # (B, H, r, r)
    return v + b @ (c @ (b.mT @ v))  # (B, H, N, d_v)


def osa_dense_heads(
    x: torch.Tensor,
    w_q: torch.Tensor,
    w_k: torch.Tensor,
    w_v: torch.Tensor,
    alpha: torch.Tensor | float,
) -> torch.Tensor:
    """Reference: ``exp(S_h) X W_V,h`` with the dense N×N ``torch.linalg.matrix_exp(S)``.

    O(N³): tests, benchmarks and small-N checks only.

    Parameters
    ----------
    x : Tensor (batch, N, d)
    w_q, w_k, w_v : Tensor (heads, d, d_v)
    alpha : float or Tensor (heads,)

    Returns
    -------
    Tensor (batch, heads, N, d_v)
    """
    s = dense_skew(x, w_q, w_k, alpha)  # (B, H, N, N)
    v = torch.einsum("bnd,hdv->bhnv", x, w_v)
    return torch.linalg.matrix_exp(s) @ v


def dense_skew(x: torch.Tensor, w_q: torch.Tensor, w_k: torch.Tensor, alpha: torch.Tensor | float) -> torch.Tensor:
    """The N×N matrices ``S_h = (alpha_h / sqrt(d_v)) (Q Kᵀ − K Qᵀ)``.

    Parameters
    ----------
    x : Tensor (batch, N, d)
    w_q, w_k : Tensor (heads, d, d_v)
    alpha : float or Tensor (heads,)

    Returns
    -------
    Tensor (batch, heads, N, N)
        Skew-symmetric.
    """
    d_v = w_q.shape[-1]
    q = torch.einsum("bnd,hdv->bhnv", x, w_q)
    k = torch.einsum("bnd,hdv->bhnv", x, w_k)
    if isinstance(alpha, torch.Tensor):
        scale = (alpha / math.sqrt(d_v)).reshape(1, -1, 1, 1)
    else:
        scale = alpha / math.sqrt(d_v)
    qk = q @ k.mT
    return scale * (qk - qk.mT)


def init_qk(
    d_model: int, d_v: int, heads: int, seed: Seed, dtype: torch.dtype = torch.float32
) -> tuple[torch.Tensor, torch.Tensor]:
    """Section 4.2: per head, U ~ Uniform(V_{2 d_v}(R^d)), W_Q = U[:, :d_v], W_K = U[:, d_v:].

    Parameters
    ----------
    d_model, d_v, heads : int
        Needs 2 d_v <= d_model.
    seed : int or torch.Generator
    dtype : torch.dtype

    Returns
    -------
    w_q, w_k : Tensor (heads, d_model, d_v)
        [W_Q, W_K] has orthonormal columns.
    """
    if 2 * d_v > d_model:
        raise InputError(
            f"the query-key initialisation needs 2*d_v <= d_model, got d_v={d_v}, d_model={d_model} "
            f"(use more heads or a smaller d_v)"
        )
    u = sample_stiefel(d_model, 2 * d_v, seed, dtype=dtype, batch=(heads,))  # (H, d, 2 d_v)
    return u[..., :d_v].contiguous(), u[..., d_v:].contiguous()


def init_vo(
    d_model: int, d_v: int, heads: int, seed: Seed, dtype: torch.dtype = torch.float32
) -> tuple[torch.Tensor, torch.Tensor]:
    """Section 4.1: W_V = U, W_O = Vᵀ with U, V iid Uniform(V_{d_v}(R^d)).

    Parameters
    ----------
    d_model, d_v, heads : int
    seed : int or torch.Generator
    dtype : torch.dtype

    Returns
    -------
    w_v : Tensor (heads, d_model, d_v)
    w_o : Tensor (heads, d_v, d_model)
    """
    g = torch_generator(seed)
    u = sample_stiefel(d_model, d_v, g, dtype=dtype, batch=(heads,))
    v = sample_stiefel(d_model, d_v, g, dtype=dtype, batch=(heads,))
    return u, v.mT.contiguous()


class OrthogonalSelfAttention(nn.Module):
    """Multihead Orthogonal Self-Attention, ``sum_h exp(S_h) X W_V,h W_O,h`` (eq. (3)–(5)).

    Parameters
    ----------
    d_model : int
        Token width d.
    heads : int
        Number of heads h (>= 1).
    basis : {"qr", "newton-schulz"}
        How B (an orthonormal basis of span(Q, K)) is computed.
    ns_steps : int
        Newton–Schulz iterations K (>= 0), used when ``basis="newton-schulz"``.
    ns_coefficients : str or tuple or list
        Newton–Schulz schedule: "cubic", "muon", "polar-express" or custom coefficients
        (see :func:`attnspec.numerics.linalg.ns_schedule`).
    alpha_init : float
        Initial value of the learnable per-head scale alpha (finite).
    d_v : int, optional
        Head width; default ``d_model // heads``. The paper's initialisation needs
        ``2 d_v <= d_model``.
    ns_eps : float
        The eps of the Newton–Schulz pre-normalisation M / (||M||_F + eps).
    seed : int or torch.Generator, optional
        Seed of the Stiefel initialisation; None draws from torch's default generator
        (as ``nn.Linear`` does).
    dtype : torch.dtype
        Parameter dtype.

    Shapes
    ------
    ``forward(x)``: (batch, N, d_model) → (batch, N, d_model).
    """

    def __init__(
        self,
        d_model: int,
        heads: int,
        basis: str = "qr",
        ns_steps: int = 6,
        ns_coefficients: Coefficients = "cubic",
        alpha_init: float = 0.1,
        d_v: int | None = None,
        *,
        ns_eps: float = 1e-7,
        seed: Seed = None,
        dtype: torch.dtype = torch.float32,
    ) -> None:
        super().__init__()
        for name, val in (("d_model", d_model), ("heads", heads)):
            if isinstance(val, bool) or not isinstance(val, int) or val < 1:
                raise InputError(f"{name} must be an integer >= 1, got {val!r}")
        if d_v is None:
            if d_model % heads:
                raise InputError(
                    f"d_model must be divisible by heads when d_v is not given, got d_model={d_model}, heads={heads}"
                )
            d_v = d_model // heads
        if isinstance(d_v, bool) or not isinstance(d_v, int) or d_v < 1:
            raise InputError(f"d_v must be an integer >= 1, got {d_v!r}")
        _check_alpha(alpha_init)
        check_range("ns_eps", float(ns_eps), low=0.0)
        self.basis = _check_basis(basis)
        ns_schedule(ns_coefficients, ns_steps)  # validates steps and the schedule
        self.ns_steps = int(ns_steps)
        self.ns_coefficients = ns_coefficients
        self.ns_eps = float(ns_eps)
        self.d_model, self.heads, self.d_v = d_model, heads, d_v
        g = torch.default_generator if seed is None else torch_generator(seed)
        w_q, w_k = init_qk(d_model, d_v, heads, g, dtype)
        w_v, w_o = init_vo(d_model, d_v, heads, g, dtype)
        self.w_q = nn.Parameter(w_q)  # (H, d, d_v)
        self.w_k = nn.Parameter(w_k)  # (H, d, d_v)
        self.w_v = nn.Parameter(w_v)  # (H, d, d_v)
        self.w_o = nn.Parameter(w_o)  # (H, d_v, d)
        self.alpha = nn.Parameter(torch.full((heads,), float(alpha_init), dtype=dtype))

    def extra_repr(self) -> str:
        """The sizes and the basis, shown by ``print(layer)``.

        Returns
        -------
        str
        """
        s = f"d_model={self.d_model}, heads={self.heads}, d_v={self.d_v}, basis={self.basis!r}"
        if self.basis == "newton-schulz":
            s += f", ns_steps={self.ns_steps}, ns_coefficients={self.ns_coefficients!r}"
        return s

    def _check_input(self, x: torch.Tensor) -> None:
        if x.dim() != 3 or x.shape[-1] != self.d_model:
            raise InputError(f"input must have shape (batch, N, {self.d_model}), got {tuple(x.shape)}")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``sum_h exp(S_h) X W_V,h W_O,h`` by the low-rank route (no N×N matrix).

        Parameters
        ----------
        x : torch.Tensor, shape (batch, N, d_model)
            The tokens.

        Returns
        -------
        torch.Tensor, shape (batch, N, d_model)

        Raises
        ------
        InputError
            ``x`` not of shape (batch, N, d_model).
        """
        self._check_input(x)
        y = osa_heads(
            x,
            self.w_q,
            self.w_k,
            self.w_v,
            self.alpha,
            basis=self.basis,
            ns_steps=self.ns_steps,
            ns_coefficients=self.ns_coefficients,
            eps=self.ns_eps,
        )  # (B, H, N, d_v)
        return torch.einsum("bhnv,hvd->bnd", y, self.w_o)  # (B, N, d)

    def forward_dense(self, x: torch.Tensor) -> torch.Tensor:
        """The same layer with the dense N×N ``matrix_exp(S)`` (exact A; small N only).

        Parameters
        ----------
        x : torch.Tensor, shape (batch, N, d_model)
            The tokens.

        Returns
        -------
        torch.Tensor, shape (batch, N, d_model)
        """
        self._check_input(x)
        y = osa_dense_heads(x, self.w_q, self.w_k, self.w_v, self.alpha)
        return torch.einsum("bhnv,hvd->bnd", y, self.w_o)

    def attention_matrices(self, x: torch.Tensor) -> torch.Tensor:
        """The N×N matrices A_h the fast path applies (small N only).

        Parameters
        ----------
        x : torch.Tensor, shape (batch, N, d_model)
            The tokens.

        Returns
        -------
        torch.Tensor, shape (batch, heads, N, N)
            ``I_N + B (exp([S]) − I_r) Bᵀ`` per input and head.
        """
        self._check_input(x)
        n = x.shape[1]
        eye = torch.eye(n, dtype=x.dtype, device=x.device).expand(self.heads, n, n)
        # exp(S) I_N through the low-rank path with V = I: apply per head to the identity.
        q = torch.einsum("bnd,hdv->bhnv", x, self.w_q)
        k = torch.einsum("bnd,hdv->bhnv", x, self.w_k)
        m = torch.cat([q, k], dim=-1)
        b = osa_basis(m, self.basis, self.ns_steps, self.ns_coefficients, self.ns_eps)
        s_small = skew_small(b, q, k, (self.alpha / math.sqrt(self.d_v)).reshape(1, -1))
        r = s_small.shape[-1]
        c = torch.linalg.matrix_exp(s_small) - torch.eye(r, dtype=x.dtype, device=x.device)
        return eye + b @ c @ b.mT
