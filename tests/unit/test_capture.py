"""Capture: P equals the model's own attentions, padding is removed, hooks never leak."""

from __future__ import annotations

import pytest
import torch
from models_tiny import tiny_bert, tiny_mpnet, tiny_roberta

from attnspec.capture import LayerAttention, capture_attention, collect_attention, find_attention_modules
from attnspec.errors import ModelLoadError

BUILDERS = {"bert": tiny_bert, "roberta": tiny_roberta, "mpnet": tiny_mpnet}


def _ids(batch: int, n: int, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(5, 900, (batch, n), generator=g)


def _hook_count(model: torch.nn.Module) -> int:
    return sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in model.modules())


@pytest.mark.parametrize("arch", sorted(BUILDERS))
def test_capture_equals_output_attentions(arch: str) -> None:
    model = BUILDERS[arch]()
    ids = _ids(3, 17)
    captured = collect_attention(model, ids)
    with torch.no_grad():
        reference = model(ids, output_attentions=True).attentions
    assert len(captured) == len(reference) == model.config.num_hidden_layers
    for p, r in zip(captured, reference):
        assert p.shape == r.shape == (3, model.config.num_attention_heads, 17, 17)
        torch.testing.assert_close(p, r, rtol=0, atol=1e-6)
        torch.testing.assert_close(p.sum(-1), torch.ones(p.shape[:-1]), rtol=0, atol=1e-5)


@pytest.mark.parametrize("arch", ["bert", "roberta"])
def test_padding_is_removed_and_real_block_matches_unpadded_run(arch: str) -> None:
    model = BUILDERS[arch]()
    pad = model.config.pad_token_id or 0
    lengths = [12, 7, 3]
    ids = _ids(3, 12, seed=1)
    mask = torch.zeros(3, 12, dtype=torch.long)
    for b, l in enumerate(lengths):
        mask[b, :l] = 1
        ids[b, l:] = pad
    layers: dict[int, LayerAttention] = {}
    with capture_attention(model, lambda la: layers.__setitem__(la.layer, la)) as cap:
        cap.forward(ids, mask)
    for layer, la in layers.items():
        for b, l in enumerate(lengths):
            real = la.real(b)  # (H, l, l)
            assert real.shape == (model.config.num_attention_heads, l, l)
            torch.testing.assert_close(real.sum(-1), torch.ones(real.shape[:-1]), rtol=0, atol=1e-5)
            # rows and columns of padding are zero in the batched tensor
            assert not la.probs[b, :, l:, :].any() and not la.probs[b, :, :, l:].any()
            # the real block is the P of the same input run alone, without padding
            alone = collect_attention(model, ids[b : b + 1, :l])[layer][0]
            torch.testing.assert_close(real, alone, rtol=0, atol=1e-5)


def test_outputs_unchanged_with_capture_on() -> None:
    model = tiny_bert()
    ids = _ids(2, 20)
    with torch.inference_mode():
        before = model(ids).last_hidden_state
    with capture_attention(model, lambda la: None) as cap:
        during = cap.forward(ids).last_hidden_state
    torch.testing.assert_close(before, during, rtol=0, atol=0)


def test_only_one_layer_alive_per_callback_and_in_depth_order() -> None:
    model = tiny_bert(num_layers=3)
    order: list[int] = []
    with capture_attention(model, lambda la: order.append(la.layer)) as cap:
        cap.forward(_ids(1, 9))
    assert order == [0, 1, 2]


def test_layer_subset() -> None:
    model = tiny_bert(num_layers=3)
    seen: list[int] = []
    with capture_attention(model, lambda la: seen.append(la.layer), layers=[2]) as cap:
        cap.forward(_ids(1, 9))
    assert seen == [2]
    with pytest.raises(ModelLoadError, match="layers \\[5\\] do not exist"):
        with capture_attention(model, lambda la: None, layers=[5]):
            pass


def test_no_hook_survives_an_exception_in_the_sink() -> None:
    model = tiny_roberta()
    assert _hook_count(model) == 0

    def boom(la: LayerAttention) -> None:
        raise RuntimeError("sink failed")

    with pytest.raises(RuntimeError, match="sink failed"):
        with capture_attention(model, boom) as cap:
            assert _hook_count(model) == model.config.num_hidden_layers
            cap.forward(_ids(1, 8))
    assert _hook_count(model) == 0


def test_no_hook_survives_an_exception_in_the_body() -> None:
    model = tiny_bert()
    with pytest.raises(KeyError):
        with capture_attention(model, lambda la: None):
            raise KeyError("body failed")
    assert _hook_count(model) == 0


def test_model_without_attention_is_rejected() -> None:
    model = torch.nn.Sequential(torch.nn.Linear(4, 4))
    assert find_attention_modules(model) == []
    with pytest.raises(ModelLoadError, match="no self-attention layers"):
        with capture_attention(model, lambda la: None):
            pass


def test_sdpa_model_is_rejected_with_a_clear_message() -> None:
    from transformers import BertConfig, BertModel

    cfg = BertConfig(vocab_size=100, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
                     attn_implementation="sdpa")
    model = BertModel(cfg).eval()
    with pytest.raises(ModelLoadError, match="eager"):
        with capture_attention(model, lambda la: None):
            pass
    assert _hook_count(model) == 0
