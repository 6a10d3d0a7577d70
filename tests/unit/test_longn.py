"""The approximate long-n spectrum method (attnspec.spectra.longn): what it promises, on matrices
whose spectrum is known.

Promises (module docstring of attnspec.spectra.longn):
* a matrix of rank <= k + oversample is found exactly (the Krylov space holds its range; the rest is 0);
* the Frobenius mass Σσ̂² equals ‖P‖_F² (the rest's energy is exact, and the fitted shape keeps it);
* the nuclear mass Σσ̂ is within the returned bound (ERROR_SIGMAS standard errors of the probes'
  control-variate estimate: per matrix ≈ 99.5% for 8 probes under Student's t with 7 df), and so
  is the curve on the top k indices (there |ĉ_i − c_i| <= |Σσ̂ − Σσ| / Σσ̂ when the top values are
  converged);
* the whole curve is within the error stated in meta.json (SVD_METHOD_ERROR["longn"], measured on
  real SmolLM2 attention by benchmarks/bench_long_context.py): checked here on synthetic spectra
  shaped like attention's and on a tiny random Llama's causal P.
Seeds are fixed (matrices and the method's own seed).
"""

from __future__ import annotations

import pytest
import torch

from attnspec.errors import InputError
from attnspec.spectra.longn import LongnParams, longn_singular_values
from attnspec.spectra.engine import singular_values
from attnspec.spectra.metrics import cumulative_curve, energy_curve
from attnspec.spectra.config import SVD_METHOD_ERROR

N = 512
_I = torch.arange(N, dtype=torch.float64)
SPECTRA = {
    "two-exponentials": 5 * torch.exp(-_I / 40) + 0.02 * torch.exp(-_I / 300),
    "power-law": (_I + 1) ** -0.8,
    "attention-like": torch.cat([torch.tensor([8.0], dtype=torch.float64), 1.5 * torch.exp(-_I[1:] / 60)]),
}


def _with_spectrum(s: torch.Tensor, seed: int) -> torch.Tensor:
    """U diag(s) Vᵀ with Haar-random orthogonal U, V (float32), so its singular values are s."""
    g = torch.Generator().manual_seed(seed)
    n = s.numel()
    u = torch.linalg.qr(torch.randn(n, n, generator=g, dtype=torch.float64)).Q
    v = torch.linalg.qr(torch.randn(n, n, generator=g, dtype=torch.float64)).Q
    return ((u * s) @ v.T).float()


@pytest.fixture(scope="module", params=list(SPECTRA))
def case(request: pytest.FixtureRequest) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    s = SPECTRA[request.param]
    p = torch.stack([_with_spectrum(s, seed) for seed in range(4)])  # (4, N, N)
    sv, bound = longn_singular_values(p, return_error=True)
    return p, s.expand(4, N), sv, bound


def test_output_is_a_full_descending_nonnegative_vector(case) -> None:
    _, s, sv, bound = case
    assert sv.shape == s.shape and sv.dtype == torch.float64
    assert bool((sv[:, :-1] >= sv[:, 1:]).all()) and bool((sv >= 0).all())
    assert bound.shape == (4,) and bool((bound > 0).all())


def test_frobenius_mass_is_exact(case) -> None:
    _, s, sv, _ = case
    rel = ((sv**2).sum(-1) / (s**2).sum(-1) - 1).abs()
    assert float(rel.max()) < 1e-5  # float32 products; the energy of the rest is exact, not estimated


def test_nuclear_mass_and_top_curve_within_the_returned_bound(case) -> None:
    _, s, sv, bound = case
    nuclear = (sv.sum(-1) - s.sum(-1)).abs() / s.sum(-1)
    assert bool((nuclear <= bound).all()), (nuclear, bound)
    k = LongnParams().k
    top = (cumulative_curve(sv) - cumulative_curve(s))[:, :k].abs().amax(-1)
    assert bool((top <= bound + 1e-5).all()), (top, bound)


def test_whole_curves_within_the_stated_error(case) -> None:
    _, s, sv, _ = case
    stated = SVD_METHOD_ERROR["longn"]
    assert float((cumulative_curve(sv) - cumulative_curve(s)).abs().max()) <= stated["curve_max_abs"]
    assert float((energy_curve(sv) - energy_curve(s)).abs().max()) <= stated["energy_curve_max_abs"]


def test_low_rank_is_found_exactly() -> None:
    rank = 40  # < k + oversample: the block Krylov space holds the whole range
    s = torch.cat([torch.linspace(3.0, 0.1, rank, dtype=torch.float64), torch.zeros(256 - rank, dtype=torch.float64)])
    sv = longn_singular_values(_with_spectrum(s, 7)[None])[0]
    assert float((sv[:rank] - s[:rank]).abs().max()) < 1e-5 * 3.0
    assert float(sv[rank:].max()) < 1e-4  # float32 rounding of an exact zero rest
    assert float((cumulative_curve(sv) - cumulative_curve(s)).abs().max()) < 1e-4


def test_tiny_random_llama_causal_attention() -> None:
    from attnspec.spectra.capture import collect_attention
    from tests.models_tiny import tiny_llama

    model = tiny_llama(seed=0, positions=256)
    ids = torch.randint(0, 1000, (1, 256), generator=torch.Generator().manual_seed(0))
    probs = collect_attention(model, ids)[0][0]  # (H, 256, 256), lower-triangular, row-stochastic
    exact = torch.linalg.svdvals(probs.double())
    approx = singular_values(probs, "longn")
    assert approx.shape == exact.shape
    err = float((cumulative_curve(approx) - cumulative_curve(exact)).abs().max())
    assert err <= SVD_METHOD_ERROR["longn"]["curve_max_abs"]


@pytest.mark.parametrize("field, value", [("k", 0), ("probes", 1), ("steps", 0), ("power", -1)])
def test_bad_parameters_are_refused(field: str, value: int) -> None:
    with pytest.raises(InputError, match=f"longn {field} must be"):
        LongnParams(**{field: value}).check()


def test_unknown_method_names_longn() -> None:
    with pytest.raises(InputError, match="longn"):
        singular_values(torch.eye(3)[None], "nope")
