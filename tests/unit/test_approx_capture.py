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


def _tied_llama(sharp: bool = False):
    """A tiny Llama base model whose head is its input embedding (as SmolLM2's). ``sharp``: weights
    of unit scale and larger Q, K, so that attention is far from uniform and matters to the output
    (at the initial scale, 0.02, every row of P is nearly uniform already)."""
    from models_tiny import _LLAMA_LIKE, _build

    model = _build("LlamaConfig", "LlamaModel", 0, **dict(_LLAMA_LIKE, tie_word_embeddings=True))
    if sharp:
        g = torch.Generator().manual_seed(2)
        with torch.no_grad():
            for name, m in model.named_modules():
                if isinstance(m, torch.nn.Linear):
                    gain = 3.0 if name.endswith(("q_proj", "k_proj")) else 1.0
                    m.weight.normal_(std=gain * m.in_features**-0.5, generator=g)
            model.embed_tokens.weight.normal_(generator=g)
    return model


def test_a_decoder_gets_the_causal_methods_only_and_the_refusals_say_why():
    model = _tied_llama()
    enc = _enc(model, True)
    plan = ApproxPlan(["linformer-fit", "performer", "nystrom"], [4], train=1, held_out=2, seed=0, budget={"steps": 2})
    ids = _ids(3, 16)
    out = measure_approximations(enc, {8: [x[:8] for x in ids], 16: ids}, plan)
    assert set(out["approx"]["method"]) == {"performer", "uniform", "best-rank-k"}
    # a decoder's end-to-end effect is its next-token loss, not a sentence embedding
    assert (
        set(out["approx_loss"]["method"]) == {"performer", "uniform", "best-rank-k"} and out["approx_end_to_end"].empty
    )
    assert len(out["approx_loss"]) == 2 * 3 * 2  # lengths × methods × held-out documents
    assert out["approx_fits"].empty
    why = refusals(plan, enc.layer_causal)
    assert set(why) == {"linformer-fit", "nystrom"} and "no causal form" in why["nystrom"]


def _uniform_output(h):  # (H, n, d): every row the mean of V, scaled away from the model's own
    return 5 * h.v.mean(dim=1, keepdim=True).expand_as(h.v)


def test_mpnet_is_replaced_through_hooks_with_its_position_bias():
    from models_tiny import tiny_mpnet

    from attnspec.spectra.approx.end_to_end import embedding_cosines, hooked_attention, replaced
    from attnspec.spectra.approx.methods import best_rank_k

    model = tiny_mpnet(num_layers=2, heads=4, hidden=32)
    with torch.no_grad():  # a bias of the size of the content scores (its initial entries are ~0.02)
        model.encoder.relative_attention_bias.weight.normal_(generator=torch.Generator().manual_seed(1))
    enc = _enc(model, False)
    ids = _ids(1, 16)[0]
    ref = sentence_embedding(model, ids, enc.device)
    assert len(hooked_attention(model)) == 2
    seen = []

    def exact(layer, h):
        seen.append((layer, h.bias is not None))
        return exact_output(h)

    # the dense P V with the relative position bias B, and the best rank-k P V at k = n: the model's own output
    with replaced(model, exact, enc.layer_causal) as calls:
        torch.testing.assert_close(sentence_embedding(model, ids, enc.device), ref, atol=1e-5, rtol=1e-4)
    assert calls[0] == 2 and seen == [(0, True), (1, True)]
    full_rank = lambda layer, h: best_rank_k(h, k=h.n, state=None, seed=0)  # noqa: E731
    with replaced(model, full_rank, enc.layer_causal):
        torch.testing.assert_close(sentence_embedding(model, ids, enc.device), ref, atol=1e-5, rtol=1e-4)
    # without B the output differs: the bias is what the hook hands on, not an accident of the model
    with replaced(model, lambda layer, h: exact_output(h.content_only()), enc.layer_causal):
        assert not torch.allclose(sentence_embedding(model, ids, enc.device), ref, atol=1e-4)
    assert not any(m._forward_hooks for m in model.modules())  # every hook removed
    got = embedding_cosines(enc, _ids(2, 16), [0, 1], 16, [("uniform", 4, lambda layer, h: _uniform_output(h))])
    assert len(got) == 2 and (got["cosine"] < 0.9999).all()


def test_the_hooks_leave_the_model_when_a_method_fails():
    from models_tiny import tiny_mpnet

    from attnspec.spectra.approx.end_to_end import replaced_by_hooks

    model = tiny_mpnet(num_layers=2, heads=4, hidden=32)

    def broken(layer, h):
        raise RuntimeError("method failed")

    with pytest.raises(RuntimeError, match="method failed"), replaced_by_hooks(model, broken, [False, False]):
        sentence_embedding(model, _ids(1, 8)[0], torch.device("cpu"))
    assert not any(m._forward_hooks for m in model.modules())


def test_a_model_neither_path_reaches_is_not_measured_end_to_end_rather_than_read_as_unchanged(monkeypatch):
    from models_tiny import tiny_mpnet

    import attnspec.spectra.approx.end_to_end as module

    model = tiny_mpnet(num_layers=2, heads=4, hidden=32)
    monkeypatch.setattr(module, "hooked_attention", lambda model: [])  # a layout attnspec does not read
    docs = _ids(2, 16)
    # MPNet's attention does not look up the registry, so nothing is replaced, and no cosine
    # (which would be 1) may be reported
    got = module.embedding_cosines(
        _enc(model, False), docs, [0, 1], 16, [("uniform", 4, lambda layer, h: _uniform_output(h))]
    )
    assert got.empty
    reached = module.embedding_cosines(
        _enc(tiny_bert(), False), docs, [0, 1], 16, [("uniform", 4, lambda layer, h: _uniform_output(h))]
    )
    assert len(reached) == 2 and (reached["cosine"] < 0.9999).all()


def test_the_measurement_on_mpnet_records_the_end_to_end_cosine_of_every_method():
    from models_tiny import tiny_mpnet

    model = tiny_mpnet(num_layers=2, heads=4, hidden=32)
    plan = ApproxPlan(["linformer-fit", "performer"], [4], train=1, held_out=2, seed=0, budget={"steps": 2})
    ids = _ids(3, 12)
    out = measure_approximations(_enc(model, False), {12: ids}, plan)
    e2e = out["approx_end_to_end"]
    assert set(e2e["method"]) == {"linformer-fit", "performer", "uniform", "best-rank-k"} and len(e2e) == 8
    assert (e2e["cosine"] <= 1 + 1e-9).all() and (e2e.loc[e2e["method"] == "performer", "cosine"] < 1 - 1e-7).all()
    assert set(out["approx"]["scores"]) == {"with bias", "content only"}  # performer sees content scores only


def _greedy(model, head, starts: list[list[int]], n: int) -> list[list[int]]:
    """Documents the model itself continues greedily: the exact model predicts them best."""
    docs = []
    for ids in starts:
        ids = list(ids)
        with torch.no_grad():
            while len(ids) < n:
                hidden = model(input_ids=torch.tensor([ids])).last_hidden_state[0, -1]  # (h,)
                ids.append(int(head(hidden).argmax()))
        docs.append(ids)
    return docs


def test_the_decoder_end_to_end_is_the_change_in_its_own_next_token_loss():
    from attnspec.spectra.approx.methods import best_rank_k, uniform
    from attnspec.spectra.approx.next_token import loss_changes, next_token_loss, output_head

    model = _tied_llama(sharp=True)
    enc = _enc(model, True)
    head = output_head(model)
    docs = _greedy(model, head, [x[:4] for x in _ids(3, 4)], 16)
    # the loss, computed directly: mean over tokens 2..n of -log softmax(h_t W_embᵀ)[token t+1]
    with torch.no_grad():
        hidden = model(input_ids=torch.tensor([docs[0]])).last_hidden_state[0]  # (n, h)
        logp = torch.log_softmax(hidden.double() @ model.embed_tokens.weight.double().T, dim=-1)  # (n, vocab)
    direct = -logp[torch.arange(15), torch.tensor(docs[0][1:])].mean()
    assert next_token_loss(model, docs[0], enc.device, head) == pytest.approx(direct.item(), rel=1e-5)
    methods = [
        ("exact", 16, lambda layer, h: exact_output(h)),
        ("best-rank-k", 16, lambda layer, h: best_rank_k(h, k=16, state=None, seed=0)),
        ("uniform", 4, lambda layer, h: uniform(h, k=4, state=None, seed=0)),
    ]
    got = loss_changes(enc, docs, [0, 1, 2], 16, methods)
    assert list(got.columns) == ["n", "k", "method", "input", "loss_exact", "loss", "loss_change"]
    exact = got[got["method"] != "uniform"]
    assert exact["loss_change"].abs().max() < 1e-5  # the exact replacement is the model
    assert (got.loc[got["method"] == "uniform", "loss_change"] > 0).all()  # uniform attention costs the model
    # a base model without a head of its own and with untied embeddings has no loss to read
    assert loss_changes(_enc(tiny_llama(), True), docs, [0, 1, 2], 16, methods).empty
