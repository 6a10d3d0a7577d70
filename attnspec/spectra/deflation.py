"""Which matrices σ₁ dominates (attention sinks), and taking the dominant singular pair out of them.

Why: methods that square P (``gram``, ``gram32``) lose the small values' digits to σ₁²; with the
dominant pair taken out first the rest is resolved relative to σ₂ (attnspec.spectra.engine,
attnspec.spectra.gram32).
"""

from __future__ import annotations

import torch

#: Power iterations of the dominant-direction deflation of ``gram``: they reach float64 accuracy
#: where σ₂/σ₁ < 0.45 (the error falls by (σ₂/σ₁)² per iteration); other matrices are not deflated.
DEFLATE_ITERATIONS = 20
#: A dominant pair counts as converged when ‖Pᵀu − σ₁v‖ <= DEFLATE_TOL · σ₁.
DEFLATE_TOL = 1e-13


def _deflate_dominant(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Take σ₁ u vᵀ out of each float64 matrix (m, r, c) whose dominant pair converges.

    Why: ``gram`` squares P, so each eigenvalue of P Pᵀ is off by about ε₆₄·σ₁², and a small
    σ_i = √λ_i by ε₆₄·σ₁²/(2σ_i). On attention-sink heads σ₁ dwarfs the rest (σ₁² of thousands
    at n = 2048) and the small values, which fill the σ₁-less curve, lose most of their digits.
    With the dominant pair (u, v) converged to float64 accuracy, P − σ₁ u vᵀ has the singular
    values σ₂..σ_n and 0, and its Gram matrix is accurate to ε₆₄·σ₂² instead.

    Returns the deflated stack (the input where nothing converged) and σ₁ per matrix (0 where
    the matrix was left whole: σ₂/σ₁ too close to 1 for the iterations, or a zero matrix).
    """
    m = x.shape[0]
    v = torch.linalg.vector_norm(x, dim=-2)  # (m, c) column norms: a sink's column dominates them
    v = v / v.norm(dim=-1, keepdim=True).clamp_min(1e-300)
    sigma = torch.zeros(m, dtype=x.dtype, device=x.device)
    u = torch.zeros(x.shape[:2], dtype=x.dtype, device=x.device)  # (m, r)
    resid = torch.full((m,), float("inf"), dtype=x.dtype, device=x.device)
    for i in range(DEFLATE_ITERATIONS):
        u = (x @ v[..., None])[..., 0]  # (m, r)
        u = u / u.norm(dim=-1, keepdim=True).clamp_min(1e-300)
        w = (u[:, None, :] @ x)[:, 0]  # (m, c): Pᵀ u
        sigma = w.norm(dim=-1)
        before, resid = resid, (w - sigma[:, None] * v).norm(dim=-1)
        v = w / sigma[:, None].clamp_min(1e-300)
        done = resid <= DEFLATE_TOL * sigma
        # the residual falls by about (σ₂/σ₁)² per iteration: above 0.2 it cannot converge in time
        hopeless = (resid > 0.2 * before) if i >= 3 else torch.zeros_like(done)
        if bool((done | hopeless).all()):
            break
    ok = (resid <= DEFLATE_TOL * sigma) & (sigma > 0)
    if not bool(ok.any()):
        return x, torch.zeros(m, dtype=x.dtype, device=x.device)
    u = (x @ v[..., None])[..., 0]
    sigma = u.norm(dim=-1)  # σ₁ = ‖P v‖ for the final v
    u = u / sigma[:, None].clamp_min(1e-300)
    scale = torch.where(ok, sigma, torch.zeros_like(sigma))
    return x - scale[:, None, None] * u[:, :, None] * v[:, None, :], scale


def _dominated(p: torch.Tensor, iterations: int = 3) -> torch.Tensor:
    """(m,) bool: matrices whose σ₁² holds at least half of ‖P‖_F² (the dominant direction is at
    least as large as all the rest together), from a lower bound on σ₁ by a few power iterations
    started at the column norms (which point at an attention sink's column).

    Why: float32 products carry rounding of about ε₃₂·σ₁ per entry, which swamps the small
    values where σ₁ dominates; ``gram32`` and ``longn`` send those matrices down a float64 path.
    Float64 sums and one matrix's norms at a time: no float64 copy of the stack.
    """
    frob = torch.stack([torch.linalg.vector_norm(p[i], dtype=torch.float64) ** 2 for i in range(p.shape[0])])
    v = torch.stack([torch.linalg.vector_norm(p[i], dim=0) for i in range(p.shape[0])])  # (m, c)
    sigma = torch.zeros(p.shape[0], dtype=torch.float64)
    for _ in range(iterations):
        v = v / v.norm(dim=-1, keepdim=True).clamp_min(1e-30)
        u = (p @ v[..., None])[..., 0]  # (m, r)
        sigma = u.double().norm(dim=-1)  # ‖P v‖ <= σ₁
        v = (u[:, None, :] @ p)[:, 0]  # (m, c): Pᵀ u
    return sigma**2 >= 0.5 * frob
