"""The fixed-k measurement on tiny models: real captured Q, K, V, causal refusals, end to end."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from models_tiny import tiny_bert, tiny_llama

from attnspec.spectra.approx.dense import exact_output
from attnspec.spectra.approx.end_to_end import replaced_attention, sentence_embedding
from attnspec.spectra.approx.measure import ApproxPlan, capture_heads, refusals
from attnspec.spectra.approx.study import measure_approximations


def _enc(model, causal: bool):
    layers = model.config.num_hidden_layers
    return SimpleNamespace(
        model=model, layer_causal=[causal] * layers, causal=causal, num_layers=layers, device=torch.device("cpu")
    )


def _ids(count: int, n: int) -> list[list[int]]:
    return torch.randint(5, 500, (count, n), generator=torch.Generator().manual_seed(0)).tolist()


@pytest.mark.parametrize("build, causal", [(tiny_bert, False), (tiny_llama, True)])
def test_exact_attention_on_captured_heads_replaces_the_model_unchanged(build, causal):
    model = build()
    enc = _enc(model, causal)
    ids = _ids(1, 20)[0]
    heads = capture_heads(enc, [ids])[0]
    assert len(heads) == model.config.num_hidden_layers and heads[0].causal is causal
    ref = sentence_embedding(model, ids, enc.device)
    # every layer replaced by the dense computation on the heads it receives: the model's own output
    with replaced_attention(model, lambda layer, h: exact_output(h), enc.layer_causal):
        same = sentence_embedding(model, ids, enc.device)
    torch.testing.assert_close(same, ref, atol=1e-5, rtol=1e-4)
    assert model.config._attn_implementation in ("eager", "sdpa")  # restored


def test_a_decoder_gets_the_causal_methods_only_and_the_refusals_say_why():
    model = tiny_llama()
    enc = _enc(model, True)
    plan = ApproxPlan(["linformer-fit", "performer", "nystrom"], [4], train=1, held_out=2, seed=0, budget={"steps": 2})
    ids = _ids(3, 16)
    out = measure_approximations(enc, {8: [x[:8] for x in ids], 16: ids}, plan)
    assert set(out["approx"]["method"]) == {"performer", "uniform", "best-rank-k"}
    assert set(out["approx_end_to_end"]["method"]) == {"performer", "uniform", "best-rank-k"}
    assert out["approx_fits"].empty
    why = refusals(plan, enc.layer_causal)
    assert set(why) == {"linformer-fit", "nystrom"} and "no causal form" in why["nystrom"]


def test_a_model_outside_the_registry_is_not_measured_end_to_end_rather_than_read_as_unchanged():
    from models_tiny import tiny_mpnet

    from attnspec.spectra.approx.end_to_end import embedding_cosines

    def uniform_output(h):  # (H, n, d): every row the mean of V, scaled away from the model's own
        return 5 * h.v.mean(dim=1, keepdim=True).expand_as(h.v)

    model = tiny_mpnet(num_layers=2, heads=4, hidden=32)
    enc = _enc(model, False)
    docs = _ids(2, 16)
    # uniform attention changes the output of a model it reaches; MPNet's attention does not look
    # up the registry, so nothing is replaced, and no cosine (which would be 1) may be reported
    got = embedding_cosines(enc, docs, [0, 1], 16, [("uniform", 4, lambda layer, h: uniform_output(h))])
    assert got.empty
    bert = tiny_bert()
    reached = embedding_cosines(
        _enc(bert, False), docs, [0, 1], 16, [("uniform", 4, lambda layer, h: uniform_output(h))]
    )
    assert len(reached) == 2 and (reached["cosine"] < 0.9999).all()
