"""Q, K, V and MPNet's relative position bias B captured with P: softmax(s·QKᵀ + B + mask) is P."""

from __future__ import annotations

import pytest
import torch

from attnspec.errors import ModelLoadError
from attnspec.spectra.capture import capture_attention, collect_attention, collect_score_parts


def _rebuilt(la, b: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(P rebuilt from the captured parts, captured P) on input b's real tokens, float64."""
    keep = la.mask[b]
    q, k = la.query[b][:, keep].double(), la.key[b][:, keep].double()  # (H, l, d)
    scores = la.scaling * q @ k.mT  # (H, l, l)
    if la.bias is not None:
        scores = scores + la.bias[b][:, keep][:, :, keep].double()
    return torch.softmax(scores, dim=-1), la.real(b).double()


def _ids(vocab: int, lengths: list[int], n: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, vocab, (len(lengths), n), generator=g)
    mask = torch.zeros(len(lengths), n, dtype=torch.long)
    for i, length in enumerate(lengths):
        mask[i, :length] = 1
    return ids.masked_fill(mask == 0, 1), mask  # MPNet pads with id 1


def test_tiny_mpnet_parts_rebuild_p_with_padding() -> None:
    from models_tiny import tiny_mpnet

    model = tiny_mpnet(num_layers=3, heads=4, hidden=32)
    ids, mask = _ids(1000, [20, 13], 20)
    parts = collect_score_parts(model, ids, mask)
    assert [la.layer for la in parts] == [0, 1, 2]
    for la in parts:
        assert la.query.shape == (2, 4, 20, 8) and la.bias.shape == (2, 4, 20, 20)
        assert la.scaling == pytest.approx(8**-0.5)
        for b in range(2):
            rebuilt, p = _rebuilt(la, b)
            torch.testing.assert_close(rebuilt, p, atol=1e-6, rtol=0)
            # without B the rebuilt P is not the captured one: the bias is really in the scores
            keep = la.mask[b]
            content = torch.softmax(la.scaling * la.query[b][:, keep] @ la.key[b][:, keep].mT, dim=-1)
            assert (content.double() - p).abs().max() > 1e-3


def test_parts_leave_p_and_the_model_output_unchanged() -> None:
    from models_tiny import tiny_mpnet

    model = tiny_mpnet()
    ids, mask = _ids(1000, [12], 12)
    plain = collect_attention(model, ids, mask)
    parts = collect_score_parts(model, ids, mask, layers=[1])
    assert len(parts) == 1 and parts[0].layer == 1
    torch.testing.assert_close(parts[0].probs, plain[1], atol=0, rtol=0)
    # a capture without scores=True reads no parts through hooks
    seen = []
    with capture_attention(model, seen.append) as cap:
        cap.forward(ids, mask)
    assert cap.path == "hooks" and all(la.query is None and la.bias is None for la in seen)


def test_registry_models_give_parts_without_bias() -> None:
    from models_tiny import tiny_bert

    model = tiny_bert()
    ids, mask = _ids(model.config.vocab_size, [10, 7], 10)
    for la in collect_score_parts(model, ids, mask):
        assert la.bias is None
        for b in range(2):
            rebuilt, p = _rebuilt(la, b)
            torch.testing.assert_close(rebuilt, p, atol=1e-6, rtol=0)


def test_an_unknown_hooked_module_is_refused_in_one_line() -> None:
    from models_tiny import tiny_mpnet

    model = tiny_mpnet()
    for m in model.modules():  # a layout score_parts does not know: no q projection
        if hasattr(m, "q") and hasattr(m, "attention_head_size"):
            m.query_projection = m.q
            del m.q
            m.forward = _renamed_forward(m)
    ids, mask = _ids(1000, [8], 8)
    with pytest.raises(ModelLoadError, match=r"cannot be read: .* through hooks on MPNetSelfAttention"):
        collect_score_parts(model, ids, mask)


def _renamed_forward(module):
    original = type(module).forward

    def forward(*args, **kwargs):
        module.q = module.query_projection
        try:
            return original(module, *args, **kwargs)
        finally:
            del module.q

    return forward


@pytest.mark.mpnet
def test_real_mpnet_parts_rebuild_p(mpnet_path) -> None:
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(mpnet_path)
    model = AutoModel.from_pretrained(mpnet_path, attn_implementation="eager").eval()
    batch = tokenizer(
        ["The lobster is a clawed crustacean of the eastern Atlantic.", "A short one."],
        padding=True,
        return_tensors="pt",
    )
    parts = collect_score_parts(model, batch["input_ids"], batch["attention_mask"], layers=[0, 11])
    assert [la.layer for la in parts] == [0, 11]
    for la in parts:
        assert la.query.shape[1] == 12 and la.query.shape[-1] == 64 and la.bias is not None
        for b in range(2):
            rebuilt, p = _rebuilt(la, b)
            torch.testing.assert_close(rebuilt, p, atol=1e-5, rtol=0)
