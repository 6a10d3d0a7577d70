"""``gram32`` (attnspec.spectra.gram32): every singular value from P Pᵀ in float32, checked against
float64 SVD of the same float32 matrices.

* planted spectra (U diag(s) Vᵀ, Haar-random U, V: not triangular, so the full Gram product):
  near-rank-one, an extreme attention sink, flat, power-law; the cumulative and σ₁-less curves
  within 1e-3 of float64 SVD (the long-context goal) and the energy Σσ² within float32 rounding;
* causal softmax P (lower-triangular: the Gram product skips the zero upper triangle) with and
  without a sink column: the same, and the triangular product equals the full one;
* a sink's dominant pair is deflated first: without it the σ₁-less curve of the extreme sink is
  off by more than the goal;
* rectangular stacks (cross-attention) go to the float64 ``gram``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import attnspec.spectra.gram32 as gram32
from attnspec.spectra.engine import singular_values
from attnspec.spectra.metrics import cumulative_curve, tail_curve

N = 384
_I = torch.arange(N, dtype=torch.float64)
SPECTRA = {
    "near-rank-one": torch.cat([torch.tensor([40.0], dtype=torch.float64), 0.05 * torch.exp(-_I[1:] / 300)]),
    "extreme-sink": torch.cat(
        [torch.tensor([32.0], dtype=torch.float64), 0.03 * torch.logspace(0, -4.5, N - 1, dtype=torch.float64)]
    ),
    "flat": torch.linspace(1.01, 0.99, N, dtype=torch.float64),
    "power-law": (_I + 1) ** -0.8,
}
GOAL = 1e-3  # the long-context goal on the curves


def _with_spectrum(s: torch.Tensor, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    u = torch.linalg.qr(torch.randn(N, N, generator=g, dtype=torch.float64)).Q
    v = torch.linalg.qr(torch.randn(N, N, generator=g, dtype=torch.float64)).Q
    return ((u * s) @ v.T).float()


def _causal(seed: int, sink: float) -> torch.Tensor:
    """(3, N, N) causal softmax P; ``sink`` adds that logit to column 0 (an attention sink)."""
    g = torch.Generator().manual_seed(seed)
    logits = 2.0 * torch.randn(3, N, N, generator=g)
    logits[..., 0] += sink
    mask = torch.ones(N, N, dtype=torch.bool).tril()
    return torch.softmax(logits.masked_fill(~mask, float("-inf")), dim=-1)


def _exact(p: torch.Tensor) -> torch.Tensor:
    return torch.from_numpy(np.linalg.svd(p.double().numpy(), compute_uv=False))


def _worst(a: torch.Tensor, b: torch.Tensor) -> tuple[float, float]:
    return (
        float((cumulative_curve(a) - cumulative_curve(b)).abs().max()),
        float((tail_curve(a) - tail_curve(b)).abs().max()),
    )


@pytest.mark.parametrize("name", list(SPECTRA))
def test_planted_spectra_within_the_goal(name: str) -> None:
    p = torch.stack([_with_spectrum(SPECTRA[name], seed) for seed in range(2)])
    sv = singular_values(p, "gram32", workers=1)
    exact = _exact(p)
    curve, tail = _worst(sv, exact)
    assert curve <= GOAL and tail <= GOAL, (name, curve, tail)
    assert torch.allclose((sv**2).sum(-1), (exact**2).sum(-1), rtol=1e-5)
    assert bool((sv[:, :-1] >= sv[:, 1:]).all()) and bool((sv >= 0).all())


@pytest.mark.parametrize("sink", [0.0, 8.0])
def test_causal_p_uses_the_triangle_and_matches_float64_svd(sink: float) -> None:
    p = _causal(3, sink)
    assert gram32.is_lower_triangular(p[0]) and not gram32.is_lower_triangular(p[0].T.contiguous())
    a = np.ascontiguousarray(p[0].numpy())
    tri, full = gram32._gram_lower(a, True), gram32._gram_lower(a, False)
    lower = np.tril(np.ones((N, N), dtype=bool))
    want = (p[0].double() @ p[0].double().T).numpy()
    assert np.allclose(tri[lower], full[lower], rtol=1e-4, atol=1e-7)
    assert np.allclose(tri[lower], want[lower], rtol=1e-4, atol=1e-7)
    sv = singular_values(p, "gram32", workers=2)
    curve, tail = _worst(sv, _exact(p))
    assert curve <= GOAL and tail <= GOAL, (curve, tail)


def test_a_thread_pool_under_inference_mode_gives_the_one_thread_values() -> None:
    # the capture runs under torch.inference_mode, which does not reach the pool's threads
    p = _causal(3, 8.0)
    with torch.inference_mode():
        pooled = singular_values(p.clone(), "gram32", workers=2)
        alone = singular_values(p.clone(), "gram32", workers=1)
    assert torch.equal(pooled, alone)


def test_the_sink_pair_is_deflated_first(monkeypatch: pytest.MonkeyPatch) -> None:
    p = torch.stack([_with_spectrum(SPECTRA["extreme-sink"], seed) for seed in range(2)])
    exact = _exact(p)
    assert bool(gram32._dominated(p).all())
    _, deflated = _worst(singular_values(p, "gram32", workers=1), exact)
    monkeypatch.setattr(gram32, "_dominated", lambda x: torch.zeros(x.shape[0], dtype=torch.bool))
    _, whole = _worst(singular_values(p, "gram32", workers=1), exact)
    assert deflated <= GOAL < whole, (deflated, whole)


def test_a_sink_over_clustered_values_splits_off_its_dominant_pair_only(monkeypatch: pytest.MonkeyPatch) -> None:
    # as on SmolLM2's sink heads: σ₁ far above a cluster of close values, whose 8th to 17th the
    # subspace iteration cannot separate; one pair out leaves an undominated rest, so no float64
    cluster = torch.linspace(1.5, 1.3, 40, dtype=torch.float64)
    rest = 0.5 * torch.exp(-_I[: N - 41] / 60)
    s = torch.cat([torch.tensor([40.0], dtype=torch.float64), cluster, rest])
    p = torch.stack([_with_spectrum(s, seed) for seed in range(2)])
    assert bool(gram32._dominated(p).all())

    def refuse(_p: torch.Tensor) -> torch.Tensor:
        raise AssertionError("fell back to float64")

    monkeypatch.setattr(gram32, "_float64", refuse)
    curve, tail = _worst(singular_values(p, "gram32", workers=1), _exact(p))
    assert curve <= GOAL and tail <= GOAL, (curve, tail)


def test_rectangular_stacks_go_to_float64_gram() -> None:
    p = torch.softmax(torch.randn(2, 40, 24, generator=torch.Generator().manual_seed(0)), dim=-1)
    sv = singular_values(p, "gram32")
    assert sv.shape == (2, 24)
    assert torch.allclose(sv, _exact(p), rtol=0, atol=1e-10)


def test_float64_p_is_factorised_in_float64() -> None:
    from attnspec.spectra.run_error import stated_error

    p = _causal(5, 8.0).double()
    assert torch.equal(singular_values(p, "gram32"), singular_values(p, "gram"))
    assert stated_error("gram32", "float64")["factorised_in"] == "float64"
    assert stated_error("gram32", "float32")["factorised_in"] == "float32"
