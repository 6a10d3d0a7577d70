"""The Linformer-projection measurement: both errors against a direct computation, the best
rank-k error's exact cases, grouped-query heads, and Q, K, V captured with P on tiny models."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from models_tiny import tiny_bert, tiny_llama

from attnspec.errors import InputError
from attnspec.spectra.projection import (
    input_errors,
    parse_ks,
    projection_sentence,
    summarise,
)


def _layer(h: int, h_kv: int, l: int, d: int, seed: int) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(h, l, d, generator=g)
    k = torch.randn(h_kv, l, d, generator=g)
    v = torch.randn(h_kv, l, d, generator=g)
    p = torch.softmax(0.5 * q @ k.repeat_interleave(h // h_kv, 0).mT, dim=-1)  # (h, l, l)
    return q, k, v, p


def test_both_errors_match_a_direct_computation() -> None:
    q, k, v, p = _layer(4, 2, 20, 8, seed=0)
    lin, best = input_errors(q, k, v, p, 0.5, [3, 10], [torch.Generator().manual_seed(s) for s in (1, 2)])
    for i, (kk, s) in enumerate(((3, 1), (10, 2))):
        r = torch.randn(kk, 20, generator=torch.Generator().manual_seed(s), dtype=torch.float64).numpy() / kk**0.5
        for h in range(4):
            Q, K, V, P = (t.double().numpy() for t in (q[h], k[h // 2], v[h // 2], p[h]))
            pv = P @ V
            z = 0.5 * Q @ (r @ K).T
            a = np.exp(z - z.max(1, keepdims=True))
            a /= a.sum(1, keepdims=True)
            assert lin[i, h] == pytest.approx(np.linalg.norm(a @ (r @ V) - pv) / np.linalg.norm(pv), rel=1e-9)
            U, S, Vt = np.linalg.svd(P)
            pk = (U[:, :kk] * S[:kk]) @ Vt[:kk]
            assert best[i, h] == pytest.approx(np.linalg.norm((P - pk) @ V) / np.linalg.norm(pv), rel=1e-6, abs=1e-7)
    assert np.all(best[1] <= best[0] + 1e-12)  # a larger k approximates P at least as well


def test_best_rank_error_is_zero_for_a_p_of_rank_k_and_k_must_fit() -> None:
    q, k, v, _ = _layer(2, 2, 12, 4, seed=3)
    p = torch.full((2, 12, 12), 1 / 12)  # uniform rows: rank 1
    _, best = input_errors(q, k, v, p, 0.5, [1], [torch.Generator().manual_seed(0)])
    # eigh(PᵀP) resolves the discarded mass to about √(float64 eps)·σ_1, far below the 3 digits reported
    assert np.all(best < 1e-6)
    with pytest.raises(InputError, match="k = 12 must be in 1..11"):
        input_errors(q, k, v, p, 0.5, [12], [torch.Generator().manual_seed(0)])
    assert parse_ks("128,64") == [64, 128] and parse_ks("none") == []
    for bad in ("64,x", "0", "64,64"):
        with pytest.raises(InputError, match="--projection-k"):
            parse_ks(bad)


def test_captured_q_k_and_scaling_reproduce_the_captured_p() -> None:
    from attnspec.spectra.capture import capture_attention

    seen = []

    def sink(la) -> None:
        rep = la.query.shape[1] // la.key.shape[1]
        scores = la.scaling * la.query @ la.key.repeat_interleave(rep, 1).mT  # (B, H, n, n)
        if la.probs[0, 0, 0, 1] == 0:  # causal
            scores = scores.masked_fill(torch.ones_like(scores, dtype=torch.bool).triu(1), float("-inf"))
        seen.append(float((torch.softmax(scores, -1) - la.probs).abs().max()))

    for model in (tiny_bert(), tiny_llama()):
        with capture_attention(model, sink) as cap:
            cap.forward(torch.randint(5, 100, (2, 10)))
    assert seen and max(seen) < 1e-5


def test_measurement_on_a_tiny_encoder_and_its_summary() -> None:
    from types import SimpleNamespace

    from attnspec.spectra.projection import measure_projection

    model = tiny_bert()
    enc = SimpleNamespace(
        model=model, layer_causal=[False, False], causal=False, num_layers=2, pad_token_id=0, device=torch.device("cpu")
    )
    ids = torch.randint(5, 1000, (3, 24), generator=torch.Generator().manual_seed(0)).tolist()
    errors = measure_projection(enc, {12: [x[:12] for x in ids], 24: ids}, [4, 16], seed=0)
    assert set(map(tuple, errors[["n", "k"]].drop_duplicates().to_numpy())) == {(12, 4), (24, 4), (24, 16)}
    assert len(errors) == 3 * 2 * 4 * 3  # (n, k) pairs × layers × heads × inputs
    assert np.all(errors["best_rank_error"] <= 1 + 1e-9) and np.all(np.isfinite(errors["linformer_error"]))
    again = measure_projection(enc, {24: ids}, [4, 16], seed=0)
    assert np.allclose(again["linformer_error"], errors[errors["n"] == 24]["linformer_error"])  # seeded
    s = summarise(errors, resamples=200)
    assert (s["resampled"] == "inputs (documents)").all() and (s["linformer_error_low"] <= s["linformer_error"]).all()
    text = projection_sentence(s, k=4)
    assert "this model on this corpus" in text and "at n = 12" in text and "at n = 24" in text and "trains" in text


def test_symmetric_eigh_agrees_with_torch() -> None:
    from attnspec.spectra.engine import symmetric_eigh

    p = torch.softmax(torch.randn(3, 20, 20, generator=torch.Generator().manual_seed(0), dtype=torch.float64), -1)
    g = p.mT @ p
    lam, w = symmetric_eigh(g)
    assert torch.allclose(lam, torch.linalg.eigvalsh(g), atol=1e-12)
    assert torch.allclose(g @ w, w * lam[:, None, :], atol=1e-12)  # columns are the eigenvectors


def test_a_score_bias_is_projected_with_the_keys() -> None:
    """S Rᵀ = s·Q (R K)ᵀ + B Rᵀ for a layer that adds B (MPNet's relative position bias)."""
    q, k, v, _ = _layer(2, 2, 16, 4, seed=5)
    bias = torch.randn(2, 16, 16, generator=torch.Generator().manual_seed(9))
    p = torch.softmax(0.5 * q @ k.mT + bias, dim=-1)
    lin, _ = input_errors(q, k, v, p, 0.5, [6], [torch.Generator().manual_seed(4)], bias=bias)
    r = torch.randn(6, 16, generator=torch.Generator().manual_seed(4), dtype=torch.float64) / 6**0.5
    q64, k64, v64, b64, p64 = (t.double() for t in (q, k, v, bias, p))
    approx = torch.softmax(0.5 * q64 @ (r @ k64).mT + b64 @ r.mT, dim=-1) @ (r @ v64)
    want = torch.linalg.matrix_norm(approx - p64 @ v64) / torch.linalg.matrix_norm(p64 @ v64)
    np.testing.assert_allclose(lin[0], want.numpy(), rtol=1e-9)
    without, _ = input_errors(q, k, v, p, 0.5, [6], [torch.Generator().manual_seed(4)])
    assert np.abs(without[0] - lin[0]).max() > 1e-3  # the bias is really in the projected scores


def test_measurement_on_a_tiny_mpnet_uses_its_bias() -> None:
    from types import SimpleNamespace

    from models_tiny import tiny_mpnet

    from attnspec.spectra.projection import measure_projection, unmeasurable

    model = tiny_mpnet()
    enc = SimpleNamespace(
        model=model,
        layer_causal=[False, False],
        causal=False,
        num_layers=2,
        pad_token_id=1,
        device=torch.device("cpu"),
        capture_path="hooks",
    )
    assert unmeasurable(enc) is None
    ids = torch.randint(5, 1000, (2, 24), generator=torch.Generator().manual_seed(0)).tolist()
    errors = measure_projection(enc, {24: ids}, [4, 16], seed=0)
    assert len(errors) == 2 * 2 * 4 * 2 and np.all(np.isfinite(errors["linformer_error"]))
