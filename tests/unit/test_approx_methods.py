"""Each approximation against a direct dense computation on small random matrices."""

from __future__ import annotations

import math

import pytest
import torch

from attnspec.errors import InputError
from attnspec.spectra.approx.dense import exact_output, probabilities, relative_error
from attnspec.spectra.approx.linformer_fit import fit_projections, segment_matrix
from attnspec.spectra.approx.methods import projected_attention
from attnspec.spectra.approx.protocol import Heads, approximation
from attnspec.spectra.approx.registry import get, parse_approx, registered


def _heads(h=3, n=24, d=8, seed=0, causal=False, bias=False, spread=1.0):
    g = torch.Generator().manual_seed(seed)
    q, k, v = (spread * torch.randn(h, n, d, generator=g, dtype=torch.float64) for _ in range(3))
    b = torch.randn(h, n, n, generator=g, dtype=torch.float64) if bias else None
    return Heads(q, k, v, 1 / math.sqrt(d), b, causal)


def _masked_dense(x: Heads) -> torch.Tensor:
    """softmax of QKᵀ·s + B with a −inf upper triangle, written out directly."""
    s = x.scaling * torch.einsum("hid,hjd->hij", x.q, x.k) + (0 if x.bias is None else x.bias)
    if x.causal:
        s = s + torch.full_like(s, float("-inf")).triu(1)
    return torch.softmax(s, -1) @ x.v


@pytest.mark.parametrize("causal", [False, True])
def test_exact_output_is_masked_softmax(causal):
    x = _heads(causal=causal, bias=True)
    torch.testing.assert_close(exact_output(x), _masked_dense(x))


@pytest.mark.parametrize("causal", [False, True])
def test_uniform_is_the_mean_of_the_visible_values(causal):
    x = _heads(causal=causal)
    out = get("uniform").apply(x, k=4, state=None, seed=0)
    row = 5
    torch.testing.assert_close(out[:, row], x.v[:, : row + 1].mean(1) if causal else x.v.mean(1))


def test_best_rank_k_is_svd_truncation():
    x = _heads()
    p = probabilities(x)
    u, s, vh = torch.linalg.svd(p)
    k = 6
    pk = u[..., :k] @ torch.diag_embed(s[..., :k]) @ vh[..., :k, :]
    torch.testing.assert_close(get("best-rank-k").apply(x, k=k, state=None, seed=0), pk @ x.v)
    torch.testing.assert_close(get("best-rank-k").apply(x, k=x.n, state=None, seed=0), p @ x.v)


def test_linformer_identity_projection_is_exact_and_takes_the_bias_on_the_whole_scores():
    x = _heads(bias=True)
    eye = torch.eye(x.n, dtype=torch.float64)
    torch.testing.assert_close(projected_attention(x, eye, eye), exact_output(x))
    torch.testing.assert_close(segment_matrix(x.n, x.n), eye)


def test_linformer_proof_uses_delta_r_and_exp_minus_delta_r():
    x = _heads()
    k, seed = 5, 3
    out = get("linformer-proof").apply(x, k=k, state=None, seed=seed)
    from attnspec.numerics.stats import torch_generator

    r = torch.randn(k, x.n, generator=torch_generator(seed), dtype=torch.float64) / math.sqrt(k)
    delta = 1 / (2 * x.n)
    s = x.scaling * x.q @ (delta * r @ x.k).mT
    torch.testing.assert_close(out, torch.softmax(s, -1) @ (math.exp(-delta) * r @ x.v))


@pytest.mark.parametrize("causal", [False, True])
def test_performer_converges_to_softmax_as_features_grow(causal):
    x = _heads(n=32, d=4, causal=causal, spread=0.7)
    exact = _masked_dense(x)
    errs = [float(relative_error(get("performer").apply(x, k=m, state=None, seed=1), exact).mean()) for m in (8, 32768)]
    assert errs[1] < 0.08 < errs[0]
    assert errs[1] < errs[0] / 3


def test_performer_causal_prefix_sums_equal_masked_linear_attention():
    from attnspec.spectra.approx.methods import _causal_linear

    g = torch.Generator().manual_seed(0)
    fq, fk = (
        torch.rand(2, 150, 7, generator=g, dtype=torch.float64),
        torch.rand(2, 150, 7, generator=g, dtype=torch.float64),
    )
    v = torch.randn(2, 150, 3, generator=g, dtype=torch.float64)
    a = (fq @ fk.mT).tril()
    torch.testing.assert_close(_causal_linear(fq, fk, v, chunk=64), (a @ v) / a.sum(-1, keepdim=True))


def test_nystrom_with_every_position_a_landmark_is_exact():
    from attnspec.spectra.approx.methods import nystrom_output

    x = _heads(n=16)
    torch.testing.assert_close(nystrom_output(x, 16, iterations=None), exact_output(x), atol=1e-8, rtol=1e-6)
    assert float(relative_error(nystrom_output(x, 4, iterations=None), exact_output(x)).mean()) > 1e-3


def test_nystrom_iterative_pseudo_inverse_converges_to_the_exact_one():
    from attnspec.spectra.approx.methods import iterative_pinv

    g = torch.Generator().manual_seed(0)
    a = torch.softmax(torch.randn(2, 6, 6, generator=g, dtype=torch.float64), -1)
    torch.testing.assert_close(iterative_pinv(a, 30), torch.linalg.pinv(a), atol=1e-8, rtol=1e-6)
    x = _heads(n=16)
    published = get("nystrom").apply(x, k=16, state=None, seed=0)
    assert float(relative_error(published, exact_output(x)).mean()) < 0.05  # 6 steps: close, not exact


def test_methods_without_a_causal_form_refuse_causal_layers():
    causal = _heads(causal=True)
    for name in ("nystrom", "linformer-proof", "linformer-fit"):
        assert "no causal form" in get(name).refusal(causal)
    for name in ("performer", "uniform", "best-rank-k"):
        assert get(name).refusal(causal) is None


def test_fit_beats_its_segment_mean_start_and_records_its_budget():
    train = [_heads(seed=s, n=16, d=4, spread=2.0) for s in range(3)]
    state = fit_projections(train, k=4, seed=7, budget={"steps": 60, "lr": 0.05})
    start = segment_matrix(4, 16)
    before = float(
        torch.stack([relative_error(projected_attention(h, start, start), exact_output(h)) for h in train]).mean()
    )
    assert state["train_error"] < 0.9 * before
    assert (state["optimizer"], state["steps"], state["lr"], state["seed"]) == ("Adam", 60, 0.05, 7)
    per_head = fit_projections(train, k=4, seed=7, budget={"steps": 2}, per_head=True)
    assert per_head["e"].shape == (3, 4, 16)


def test_a_method_is_one_registered_function_and_bad_names_are_named():
    @approximation("test-zero", label="zero output")
    def zero(heads, *, k, state, seed):
        return torch.zeros_like(heads.v)

    assert "test-zero" in registered()
    assert parse_approx("performer, test-zero") == ["performer", "test-zero"]
    assert parse_approx("none") == []
    with pytest.raises(InputError, match="'nope' is not a registered approximation"):
        parse_approx("performer,nope")
    with pytest.raises(InputError, match="twice"):
        parse_approx("performer,performer")


def test_the_documented_example_method_registers_and_runs():
    import re
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "approximations.md").read_text()
    block = re.search(r"```python\n(from attnspec.spectra.approx.dense.*?)```", doc, re.S).group(1)
    exec(block, {})
    x = _heads(n=16)
    out = get("mean-pool").apply(x, k=16, state=None, seed=0)
    torch.testing.assert_close(out, exact_output(x))  # k = n segments: every key its own
