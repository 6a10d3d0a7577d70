"""Capture, for every model family: P equals the model's own attentions, outputs are unchanged,
padding is removed (left and right), causal P is lower-triangular, nothing leaks."""

from __future__ import annotations

import pytest
import torch
from models_tiny import FAMILIES, tiny_bert, tiny_llama, tiny_mpnet, tiny_roberta

from attnspec.errors import InputError, ModelLoadError
from attnspec.spectra.capture import LayerAttention, capture_attention, collect_attention, describe_attention

#: The families that return P only under output_attentions (older-style modules): hooks path.
HOOKED = {"mpnet", "deberta-v2"}


def _ids(batch: int, n: int, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(5, 900, (batch, n), generator=g)


def _hook_count(model: torch.nn.Module) -> int:
    """Hooks on the model that are not transformers' own (it installs permanent output-recording
    hooks the first time a model runs with output_attentions=True)."""
    return sum(
        1
        for m in model.modules()
        for h in [*m._forward_hooks.values(), *m._forward_pre_hooks.values()]
        if "output_capturing_hook" not in getattr(h, "__qualname__", "")
    )


def _registered() -> list[str]:
    from transformers.masking_utils import AttentionMaskInterface
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

    return [
        k
        for k in [*ALL_ATTENTION_FUNCTIONS.keys(), *AttentionMaskInterface._global_mapping]
        if k.startswith("attnspec")
    ]


def _assert_clean(model: torch.nn.Module, impl: str = "eager") -> None:
    assert _hook_count(model) == 0
    assert _registered() == []
    assert model.config._attn_implementation == impl


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_capture_equals_output_attentions_and_leaves_outputs_unchanged(family: str) -> None:
    build, causal = FAMILIES[family]
    model = build()
    ids = _ids(2, 11)
    with torch.inference_mode():
        reference = model(ids, output_attentions=True)
    captured: dict[int, torch.Tensor] = {}
    with capture_attention(model, lambda la: captured.__setitem__(la.layer, la.probs.clone())) as cap:
        assert cap.path == ("hooks" if family in HOOKED else "registry")
        assert cap.causal is causal
        out = cap.forward(ids)
    _assert_clean(model)
    torch.testing.assert_close(out.last_hidden_state, reference.last_hidden_state, rtol=0, atol=1e-5)
    assert sorted(captured) == list(range(len(reference.attentions))) == [0, 1]
    for layer, ref in enumerate(reference.attentions):
        p = captured[layer]
        assert p.shape == ref.shape == (2, 4, 11, 11)  # 4 query heads, also under GQA (2 kv heads)
        torch.testing.assert_close(p, ref, rtol=0, atol=1e-6)
        torch.testing.assert_close(p.sum(-1), torch.ones(p.shape[:-1]), rtol=0, atol=1e-5)
        upper = torch.triu(p, diagonal=1)
        if causal:
            assert bool((upper == 0).all())  # exactly zero, not just small
        else:
            assert bool((upper > 0).any())
    # transformers kept no layer's P: the registry function returns none, the hooks drop it
    assert out.attentions is None or all(a is None for a in out.attentions)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_real_block_under_padding_equals_the_input_run_alone(family: str) -> None:
    build, causal = FAMILIES[family]
    model = build()
    pad = model.config.pad_token_id if model.config.pad_token_id is not None else 0
    lengths, n = [12, 7, 3], 12
    for side in ("right", "left") if causal else ("right",):
        ids = _ids(3, n, seed=1)
        mask = torch.zeros(3, n, dtype=torch.long)
        for b, length in enumerate(lengths):
            if side == "right":
                mask[b, :length] = 1
            else:
                mask[b, n - length :] = 1
        ids[mask == 0] = pad
        layers: dict[int, LayerAttention] = {}
        with capture_attention(model, lambda la: layers.__setitem__(la.layer, la)) as cap:  # noqa: B023 - called within this iteration
            cap.forward(ids, mask)
        alone = [collect_attention(model, ids[b][mask[b].bool()][None]) for b in range(3)]
        for layer, la in layers.items():
            for b, length in enumerate(lengths):
                real = la.real(b)  # (H, l, l)
                assert real.shape == (4, length, length)
                pad_pos = ~mask[b].bool()
                assert not la.probs[b][:, pad_pos].any() and not la.probs[b][:, :, pad_pos].any()
                torch.testing.assert_close(real, alone[b][layer][0], rtol=0, atol=1e-5)
                if causal:
                    assert bool((torch.triu(la.probs[b], diagonal=1) == 0).all())
    _assert_clean(model)


def test_encoders_refuse_left_padding() -> None:
    model = tiny_bert()
    mask = torch.tensor([[0, 1, 1, 1]])
    with pytest.raises(InputError, match="pad encoder inputs on the right"):
        with capture_attention(model, lambda la: None) as cap:
            cap.forward(_ids(1, 4), mask)
    _assert_clean(model)


def test_sliding_window_cuts_rows() -> None:
    from models_tiny import tiny_mistral

    model = tiny_mistral()  # sliding_window = 5
    p = collect_attention(model, _ids(1, 12))[0][0]  # (H, 12, 12)
    i, j = torch.tril_indices(12, 12, offset=-5)
    assert bool((p[:, i, j] == 0).all())  # keys 5 or more positions back are outside the window
    assert bool((p[:, 11, 7:] > 0).all())


def test_sdpa_model_is_captured_as_eager_and_restored() -> None:
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    cfg = BertConfig(
        vocab_size=100,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        attn_implementation="sdpa",
    )
    model = BertModel(cfg, add_pooling_layer=False).eval()
    ids = torch.randint(5, 90, (2, 9), generator=torch.Generator().manual_seed(0))
    captured = collect_attention(model, ids)
    _assert_clean(model, impl="sdpa")
    model.config._attn_implementation = "eager"
    with torch.inference_mode():
        reference = model(ids, output_attentions=True).attentions
    for p, r in zip(captured, reference):
        torch.testing.assert_close(p, r, rtol=0, atol=1e-6)


def test_layers_in_depth_order_and_subset() -> None:
    model = tiny_llama()
    order: list[int] = []
    with capture_attention(model, lambda la: order.append(la.layer)) as cap:
        cap.forward(_ids(1, 9))
    assert order == [0, 1]
    seen: list[int] = []
    with capture_attention(model, lambda la: seen.append(la.layer), layers=[1]) as cap:
        cap.forward(_ids(1, 9))
    assert seen == [1]
    with pytest.raises(ModelLoadError, match="layers \\[5\\] do not exist"):
        with capture_attention(model, lambda la: None, layers=[5]):
            pass
    _assert_clean(model)


@pytest.mark.parametrize(
    "build", [tiny_roberta, tiny_llama, tiny_mpnet], ids=["registry-encoder", "registry-decoder", "hooks"]
)
def test_nothing_survives_an_exception_in_the_sink_or_the_body(build) -> None:
    model = build()

    def boom(la: LayerAttention) -> None:
        raise RuntimeError("sink failed")

    with pytest.raises(RuntimeError, match="sink failed"):
        with capture_attention(model, boom) as cap:
            cap.forward(_ids(1, 8))
    _assert_clean(model)
    with pytest.raises(KeyError):
        with capture_attention(model, lambda la: None):
            raise KeyError("body failed")
    _assert_clean(model)
    # and the model still runs as before
    collect_attention(model, _ids(1, 5))


def test_describe_attention() -> None:
    info = describe_attention(tiny_llama())
    assert (info.path, info.causal, info.family, info.num_layers, info.num_heads) == ("registry", True, "decoder", 2, 4)
    info = describe_attention(tiny_mpnet())
    assert (info.path, info.family, info.output_attentions) == ("hooks", "encoder", True)


def test_model_without_attention_gets_one_line_naming_class_and_attempts() -> None:
    from transformers import BertConfig

    class Plain(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.config = BertConfig(vocab_size=50)
            self.emb = torch.nn.Embedding(50, 4)

        def forward(self, input_ids, attention_mask=None, **kwargs):
            return self.emb(input_ids)

    model = Plain()
    with pytest.raises(ModelLoadError) as err:
        with capture_attention(model, lambda la: None):
            pass
    msg = str(err.value)
    assert "\n" not in msg and "Plain" in msg and "registry" in msg and "forward hooks" in msg
    assert _hook_count(model) == 0 and _registered() == []


def test_hooks_forced_on_a_registry_model_give_the_same_p() -> None:
    model = tiny_bert()
    ids = _ids(2, 10)
    by_path = {}
    for path in ("registry", "hooks"):
        got: dict[int, torch.Tensor] = {}
        with capture_attention(model, lambda la: got.__setitem__(la.layer, la.probs.clone()), path=path) as cap:  # noqa: B023 - called within this iteration
            assert cap.path == path
            cap.forward(ids)
        by_path[path] = got
        _assert_clean(model)
    for layer in (0, 1):
        torch.testing.assert_close(by_path["hooks"][layer], by_path["registry"][layer], rtol=0, atol=0)
    with pytest.raises(ModelLoadError, match="MPNetModel.*path='registry' was asked for"):
        with capture_attention(tiny_mpnet(), lambda la: None, path="registry"):
            pass
    with pytest.raises(InputError, match="path must be one of"):
        with capture_attention(model, lambda la: None, path="magic"):
            pass


def _live_probability_storages(n: int) -> int:
    """Distinct storages of live (B, H, n, n) row-stochastic tensors, found by the garbage collector."""
    import gc

    ptrs = set()
    for o in gc.get_objects():
        if (
            type(o) is torch.Tensor
            and o.dim() == 4
            and tuple(o.shape[-2:]) == (n, n)
            and o.is_floating_point()
            and bool((o >= 0).all())
            and bool(torch.allclose(o.sum(-1), torch.ones(()), atol=1e-4))
        ):
            ptrs.add(o.untyped_storage().data_ptr())
    return len(ptrs)


@pytest.mark.parametrize("family", ["mpnet", "llama"])
def test_at_most_one_layer_p_alive_when_the_sink_runs(family: str) -> None:
    """Registry and hooks paths (also the older-style modules that return P under output_attentions)."""
    import gc

    model = FAMILIES[family][0](seed=0)  # every builder takes seed
    n = 13  # a length no other tensor of the test has
    ids = _ids(1, n)

    def run(sink) -> None:
        gc.collect()
        assert _live_probability_storages(n) == 0
        with capture_attention(model, sink) as cap:
            cap.forward(ids)

    alive: list[int] = []
    run(lambda la: alive.append(_live_probability_storages(n)))
    assert alive == [1, 1]  # layer 0's P is gone when layer 1's arrives
    # the count would see retention: a sink that keeps a copy finds two at layer 1
    kept: list[torch.Tensor] = []
    control: list[int] = []
    run(lambda la: (kept.append(la.probs.clone()), control.append(_live_probability_storages(n))))
    assert control == [2, 3]
    if family == "mpnet":
        # without the capture, output_attentions=True keeps layer 0's P while layer 1 runs
        del kept[:]
        gc.collect()
        seen: list[int] = []
        last = describe_attention(model).num_layers - 1
        attention = [m for m in model.modules() if type(m).__name__ == "MPNetSelfAttention"][last]  # test-only lookup
        handle = attention.register_forward_hook(lambda *a: seen.append(_live_probability_storages(n)))
        try:
            with torch.inference_mode():
                model(ids, output_attentions=True)
        finally:
            handle.remove()
        assert seen == [2]


@pytest.mark.parametrize("family", ["bart", "marian", "t5"])
def test_encoder_decoders_are_captured_by_kind_exactly(family: str) -> None:
    """Each kind against transformers' own encoder_attentions, decoder_attentions and
    cross_attentions, with padding on the encoder and the (teacher-forced) decoder side."""
    from models_tiny import ENCODER_DECODERS

    from attnspec.spectra.kinds import CROSS, DECODER_SELF, ENCODER_SELF

    model = ENCODER_DECODERS[family]()
    n = 9
    ids = _ids(2, n, seed=3)
    mask = torch.ones(2, n, dtype=torch.long)
    mask[1, 6:] = 0  # input 1: 6 real tokens, right-padded on both sides
    pad = model.config.pad_token_id
    dec = torch.cat([torch.full((2, 1), model.config.decoder_start_token_id), ids[:, :-1]], dim=1)
    dec = dec.masked_fill(mask == 0, pad if pad is not None else 0)
    with torch.inference_mode():
        ref = model(
            input_ids=ids,
            attention_mask=mask,
            decoder_input_ids=dec,
            decoder_attention_mask=mask,
            output_attentions=True,
        )
    captured: dict[int, tuple[str, torch.Tensor]] = {}
    with capture_attention(model, lambda la: captured.__setitem__(la.layer, (la.kind, la.probs.clone()))) as cap:
        assert cap.path == "registry" and cap.encoder_decoder and cap.causal is False
        assert cap.kinds == [ENCODER_SELF] * 2 + [DECODER_SELF, CROSS] * 2
        assert cap.layer_causal == [False, False, True, False, True, False]
        out = cap.forward(ids, mask)
    _assert_clean(model)
    assert all(c.config._attn_implementation == "eager" for c in (model.encoder, model.decoder))  # T5's own copies
    torch.testing.assert_close(out.last_hidden_state[0], ref.last_hidden_state[0], rtol=0, atol=1e-5)
    torch.testing.assert_close(out.last_hidden_state[1, :6], ref.last_hidden_state[1, :6], rtol=0, atol=1e-5)
    keep = mask.bool()[:, None, :, None] & mask.bool()[:, None, None, :]  # (2, 1, n, n)
    expected = {
        ENCODER_SELF: list(ref.encoder_attentions),
        DECODER_SELF: list(ref.decoder_attentions),
        CROSS: list(ref.cross_attentions),
    }
    for layer in sorted(captured):
        kind, p = captured[layer]
        want = expected[kind].pop(0)
        assert p.shape == want.shape == (2, 4, n, n)
        torch.testing.assert_close(p, want * keep, rtol=0, atol=1e-6)
        if kind == DECODER_SELF:
            assert bool((torch.triu(p, diagonal=1) == 0).all())
        else:  # encoder self and cross attention see every real position
            assert bool((p[0, :, 0, 1:] > 0).all())
        rows = p.sum(-1)  # real rows sum to 1, padding rows are 0
        torch.testing.assert_close(rows, mask[:, None, :].float().expand_as(rows), rtol=0, atol=1e-5)
    assert all(not v for v in expected.values())


def test_encoder_decoder_refused_when_it_cannot_be_captured_by_kind(tmp_path) -> None:
    from models_tiny import tiny_bart

    from attnspec.spectra.models import load_model

    model = tiny_bart()
    with pytest.raises(ModelLoadError, match="encoder-decoder \\(bart\\).*hooks path cannot tell") as e:
        with capture_attention(model, lambda la: None, path="hooks"):
            pass
    assert "\n" not in str(e.value) and "supported: encoder-only" in str(e.value)
    _assert_clean(model)
    model.config.decoder_start_token_id = None
    calls = []
    handle = model.register_forward_pre_hook(lambda *a: calls.append(1))
    with pytest.raises(ModelLoadError, match="no decoder_start_token_id"):
        with capture_attention(model, lambda la: None):
            pass
    handle.remove()
    assert calls == []  # refused before any forward
    model.save_pretrained(tmp_path / "bart")  # --model PATH: refused from its config, before the weights load
    from helpers import make_decoder_tokenizer

    make_decoder_tokenizer(tmp_path / "tok", bos=True).save_pretrained(tmp_path / "bart")  # a whole model folder
    with pytest.raises(ModelLoadError, match="--model .* is an encoder-decoder \\(bart\\).*decoder_start_token_id"):
        load_model(str(tmp_path / "bart"), device="cpu")


@pytest.mark.parametrize("family", ["bart", "t5"])
def test_spectrum_run_on_an_encoder_decoder_records_kinds_and_pads_exactly(family: str, tmp_path) -> None:
    """The job on an encoder-decoder: kinds per layer in meta.json, the decoder input choice,
    and right padding (both sides) giving the spectra of the inputs run alone."""
    import numpy as np
    from helpers import make_decoder_tokenizer
    from models_tiny import ENCODER_DECODERS

    import attnspec

    model = ENCODER_DECODERS[family]()
    tok = make_decoder_tokenizer(tmp_path / "tok", bos=True)
    texts = [
        "attention matrix rank of the movie",
        "the story was a decoder and the music numbers quotes brackets",
        "singular value curve",
    ]
    one = attnspec.spectrum(model=model, tokenizer=tok, texts=texts, seq_len=12, batch_size=1, progress=False)
    three = attnspec.spectrum(model=model, tokenizer=tok, texts=texts, seq_len=12, batch_size=3, progress=False)
    assert one.meta["family"] == "encoder-decoder" and one.meta["causal"] is False
    assert [d["kind"] for d in one.meta["layers"]] == ["encoder_self"] * 2 + ["decoder_self_causal", "cross"] * 2
    assert "teacher-forced" in one.meta["decoder_input"]
    kinds = one.metrics.groupby("layer")["kind"].first().tolist()  # the metrics table names each layer's kind
    assert kinds == ["encoder_self"] * 2 + ["decoder_self_causal", "cross"] * 2
    assert one.meta["corpus"]["input_lengths"]["min"] < 12  # really padded in the batch of 3
    np.testing.assert_allclose(three.curves["mean"], one.curves["mean"], rtol=0, atol=1e-6)
    np.testing.assert_allclose(three.metrics["row_entropy_mean"], one.metrics["row_entropy_mean"], rtol=0, atol=1e-6)
