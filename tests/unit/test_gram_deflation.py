"""``gram`` on attention-sink spectra (σ₁ ≫ σ₂): the dominant pair is taken out before P Pᵀ is
formed (attnspec.spectra.deflation._deflate_dominant), so the small values keep their digits.

Planted float64 matrices U diag(s) Vᵀ (Haar U, V) with a known spectrum: a sink σ₁ = 60 over a
rest decaying from 1 to 1e-4. Without the deflation the σ₁-less curve is off by about 4e-8 here
(each λ off by ε₆₄·σ₁²); with it, by about 2e-11 (seeds fixed). Matrices whose σ₂/σ₁ is near 1 are left whole,
bit for bit.
"""

from __future__ import annotations

import torch

from attnspec.spectra import engine
from attnspec.spectra.metrics import cumulative_curve, tail_curve

N = 384


def _planted(s: torch.Tensor, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    u = torch.linalg.qr(torch.randn(N, N, generator=g, dtype=torch.float64)).Q
    v = torch.linalg.qr(torch.randn(N, N, generator=g, dtype=torch.float64)).Q
    return (u * s) @ v.T


SINK = torch.cat([torch.tensor([60.0], dtype=torch.float64), torch.logspace(0, -7, N - 1, dtype=torch.float64)])


def test_sink_spectrum_is_resolved_below_sigma_1() -> None:
    p = torch.stack([_planted(SINK, seed) for seed in range(3)])
    sv = engine.singular_values(p, "gram")
    exact = SINK.expand(3, N)
    assert float((tail_curve(sv) - tail_curve(exact)).abs().max()) < 1e-9
    assert float((cumulative_curve(sv) - cumulative_curve(exact)).abs().max()) < 1e-10
    assert float(((sv - exact).abs() / exact[:, 1:2]).max()) < 1e-8  # relative to σ₂, not σ₁


def test_without_deflation_the_same_matrices_lose_digits(monkeypatch) -> None:
    """The comparison the deflation is for: the plain Gram route on the same matrices."""
    p = torch.stack([_planted(SINK, seed) for seed in range(3)])
    monkeypatch.setattr(engine, "_deflate_dominant", lambda x: (x, torch.zeros(x.shape[0], dtype=x.dtype)))
    sv = engine.singular_values(p, "gram")
    assert float((tail_curve(sv) - tail_curve(SINK.expand(3, N))).abs().max()) > 1e-9


def test_matrices_without_a_dominant_value_are_left_whole(monkeypatch) -> None:
    flat = torch.linspace(1.0, 0.5, N, dtype=torch.float64)
    p = _planted(flat, 4)[None]
    got = engine.singular_values(p, "gram")
    monkeypatch.setattr(engine, "_deflate_dominant", lambda x: (x, torch.zeros(x.shape[0], dtype=x.dtype)))
    assert torch.equal(engine.singular_values(p, "gram"), got)
