"""The approximate long-n spectrum method (attnspec.spectra.longn) on matrices whose spectrum is
known (planted: U diag(s) Vᵀ with Haar-random U, V), including near-rank-one (an attention sink),
flat and power-law spectra.

What is checked against the truth (module docstring of attnspec.spectra.longn, "Error"):
* every returned per-matrix bound holds: the cumulative curve, the curve without σ₁ and Σσ are
  within their bounds on every planted matrix (the bounds are statistical, at ERROR_SIGMAS
  standard errors; the coverage here is 100 % of 28 matrices, fixed seeds);
* the bounds are not vacuous: each is below 0.1 (curve) on these spectra;
* Σσ̂² = ‖P‖_F² (the energy of the rest is exact);
* a matrix of rank <= k + oversample is found exactly;
* a matrix's result depends on its seed only, not on the stack it came in;
* a matrix whose σ₁ dominates is computed in float64 (float32 rounding would break its bound).
"""

from __future__ import annotations

import pytest
import torch

from attnspec.errors import InputError
from attnspec.spectra.engine import singular_values
from attnspec.spectra.longn import LongnParams, input_seeds, longn_singular_values
from attnspec.spectra.metrics import cumulative_curve, tail_curve

N = 512
_I = torch.arange(N, dtype=torch.float64)
SPECTRA = {
    "near-rank-one": torch.cat([torch.tensor([40.0], dtype=torch.float64), 0.05 * torch.exp(-_I[1:] / 300)]),
    "flat": torch.linspace(1.01, 0.99, N, dtype=torch.float64),
    "power-law": (_I + 1) ** -0.8,
    "two-exponentials": 5 * torch.exp(-_I / 40) + 0.02 * torch.exp(-_I / 300),
    "attention-like": torch.cat([torch.tensor([8.0], dtype=torch.float64), 1.5 * torch.exp(-_I[1:] / 60)]),
    # an attention sink as SmolLM2's layer 18 head 8 has it at n = 1024 (σ₁ = 32, σ₂ = 0.03): float32
    # rounding (≈ ε₃₂·σ₁ per product) would swamp the rest, so longn computes it in float64
    "extreme-sink": torch.cat(
        [torch.tensor([32.0], dtype=torch.float64), 0.03 * torch.logspace(0, -4.5, N - 1, dtype=torch.float64)]
    ),
    "sink-and-plateau": torch.cat(
        [
            torch.tensor([20.0], dtype=torch.float64),
            0.3 * torch.exp(-_I[1:] / 20) + 0.02 * torch.ones(N - 1, dtype=torch.float64),
        ]
    ),
}


def _with_spectrum(s: torch.Tensor, seed: int) -> torch.Tensor:
    """U diag(s) Vᵀ with Haar-random orthogonal U, V (float32), so its singular values are s."""
    g = torch.Generator().manual_seed(seed)
    n = s.numel()
    u = torch.linalg.qr(torch.randn(n, n, generator=g, dtype=torch.float64)).Q
    v = torch.linalg.qr(torch.randn(n, n, generator=g, dtype=torch.float64)).Q
    return ((u * s) @ v.T).float()


@pytest.fixture(scope="module", params=list(SPECTRA))
def case(request: pytest.FixtureRequest) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, dict]:
    s = SPECTRA[request.param]
    p = torch.stack([_with_spectrum(s, seed) for seed in range(4)])  # (4, N, N)
    sv, bounds = longn_singular_values(p, return_error=True)
    return p, s.expand(4, N), sv, bounds


def test_output_is_a_full_descending_nonnegative_vector(case) -> None:
    _, s, sv, bounds = case
    assert sv.shape == s.shape and sv.dtype == torch.float64
    assert bool((sv[:, :-1] >= sv[:, 1:]).all()) and bool((sv >= 0).all())
    assert set(bounds) >= {"curve", "tail_curve", "nuclear", "partial_sums"}
    assert all(b.shape == (4,) and bool((b > 0).all()) for b in bounds.values())


def test_frobenius_mass_is_exact(case) -> None:
    _, s, sv, _ = case
    rel = ((sv**2).sum(-1) / (s**2).sum(-1) - 1).abs()
    assert float(rel.max()) < 1e-5  # float32 products; the energy of the rest is exact, not estimated


def test_partial_sums_and_nuclear_mass_within_their_bounds(case) -> None:
    _, s, sv, bounds = case
    partial = (sv.cumsum(-1) - s.cumsum(-1)).abs().amax(-1)
    assert bool((partial <= bounds["partial_sums"]).all()), (partial, bounds["partial_sums"])
    nuclear = (sv.sum(-1) - s.sum(-1)).abs() / sv.sum(-1)
    assert bool((nuclear <= bounds["nuclear"]).all()), (nuclear, bounds["nuclear"])


def test_curves_within_their_bounds(case) -> None:
    _, s, sv, bounds = case
    curve = (cumulative_curve(sv) - cumulative_curve(s)).abs().amax(-1)
    assert bool((curve <= bounds["curve"]).all()), (curve, bounds["curve"])
    tail = (tail_curve(sv) - tail_curve(s)).abs().amax(-1)
    assert bool((tail <= bounds["tail_curve"]).all()), (tail, bounds["tail_curve"])


def test_bounds_are_informative(case) -> None:
    _, _, _, bounds = case
    assert float(bounds["curve"].max()) < 0.1


def test_low_rank_is_found_exactly() -> None:
    rank = 40  # < k + oversample: the block Krylov space holds the whole range
    s = torch.cat([torch.linspace(3.0, 0.1, rank, dtype=torch.float64), torch.zeros(256 - rank, dtype=torch.float64)])
    sv, bounds = longn_singular_values(_with_spectrum(s, 7)[None], return_error=True)
    assert float((sv[0, :rank] - s[:rank]).abs().max()) < 1e-5 * 3.0
    assert float(sv[0, rank:].max()) < 1e-4  # float32 rounding of an exact zero rest
    assert float((cumulative_curve(sv[0]) - cumulative_curve(s)).abs().max()) < 1e-4
    assert float(bounds["curve"][0]) < 1e-3


def test_result_depends_on_the_matrix_seed_not_the_stack() -> None:
    s = SPECTRA["power-law"]
    p = torch.stack([_with_spectrum(s, seed) for seed in range(3)])
    alone = longn_singular_values(p[1:2], seeds=[11])
    stacked = longn_singular_values(p, seeds=[5, 11, 7])
    torch.testing.assert_close(stacked[1:2], alone, rtol=0, atol=1e-6)
    other = longn_singular_values(p[1:2], seeds=[12])
    assert float((other - alone).abs().max()) > 1e-6  # the seed does drive the draws


def test_input_seeds_follow_the_input_not_its_place() -> None:
    a, b = [1, 2, 3, 4], [9, 8, 7]
    together = input_seeds([a, b], layer=2, num_heads=3)
    assert together.shape == (2, 3)
    torch.testing.assert_close(input_seeds([b], layer=2, num_heads=3)[0], together[1])
    assert len(set(together.reshape(-1).tolist())) == 6
    assert not torch.equal(input_seeds([a], layer=3, num_heads=3), together[:1])


def test_tiny_random_llama_causal_attention_within_its_bound() -> None:
    from attnspec.spectra.capture import collect_attention
    from tests.models_tiny import tiny_llama

    model = tiny_llama(seed=0, positions=256)
    ids = torch.randint(0, 1000, (1, 256), generator=torch.Generator().manual_seed(0))
    probs = collect_attention(model, ids)[0][0]  # (H, 256, 256), lower-triangular, row-stochastic
    exact = torch.linalg.svdvals(probs.double())
    approx, bounds = singular_values(probs, "longn", return_error=True)
    assert approx.shape == exact.shape
    err = (cumulative_curve(approx) - cumulative_curve(exact)).abs().amax(-1)
    assert bool((err <= bounds["curve"]).all()), (err, bounds["curve"])


@pytest.mark.parametrize("field, value", [("k", 0), ("probes", 1), ("steps", 0), ("power", -1)])
def test_bad_parameters_are_refused(field: str, value: int) -> None:
    with pytest.raises(InputError, match=f"longn {field} must be"):
        LongnParams(**{field: value}).check()


def test_wrong_number_of_seeds_is_refused() -> None:
    with pytest.raises(InputError, match="one seed per matrix"):
        longn_singular_values(torch.eye(200)[None].repeat(2, 1, 1), seeds=[1])
    with pytest.raises(InputError, match="seeds must have the stack's leading shape"):
        singular_values(torch.eye(200)[None].repeat(2, 1, 1), "longn", seeds=torch.tensor([1, 2, 3]))


def test_unknown_method_names_longn() -> None:
    with pytest.raises(InputError, match="longn"):
        singular_values(torch.eye(3)[None], "nope")


def test_a_dominant_sigma_1_is_computed_in_float64(monkeypatch) -> None:
    """The extreme sink in float32 throughout breaks its bound; longn's float64 path keeps it."""
    import attnspec.spectra.longn as longn

    s = SPECTRA["extreme-sink"]
    p = torch.stack([_with_spectrum(s, seed) for seed in range(2)])
    assert bool(longn._dominated(p).all())
    monkeypatch.setattr(longn, "_dominated", lambda x: torch.zeros(x.shape[0], dtype=torch.bool))
    sv, bounds = longn_singular_values(p, return_error=True)
    err = (cumulative_curve(sv) - cumulative_curve(s.expand(2, N))).abs().amax(-1)
    assert bool((err > bounds["curve"]).any()), (err, bounds["curve"])
