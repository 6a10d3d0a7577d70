"""Tiny randomly initialised encoders (BERT, RoBERTa, MPNet) for fast tests."""

from __future__ import annotations

import torch


def tiny_bert(
    num_layers: int = 2, heads: int = 4, hidden: int = 32, positions: int = 64, vocab: int = 30522, seed: int = 0
):
    from transformers import BertConfig, BertModel

    torch.manual_seed(seed)  # test-only: a fixed initialisation
    cfg = BertConfig(
        vocab_size=vocab,
        hidden_size=hidden,
        num_hidden_layers=num_layers,
        num_attention_heads=heads,
        intermediate_size=2 * hidden,
        max_position_embeddings=positions,
        attn_implementation="eager",
    )
    return BertModel(cfg, add_pooling_layer=False).eval()


def tiny_roberta(num_layers: int = 2, heads: int = 4, hidden: int = 32, n: int = 62, vocab: int = 1000, seed: int = 0):
    from transformers import RobertaConfig, RobertaModel

    torch.manual_seed(seed)
    # RoBERTa numbers positions from padding_idx + 1: max_position_embeddings = n + 2.
    cfg = RobertaConfig(
        vocab_size=vocab,
        hidden_size=hidden,
        num_hidden_layers=num_layers,
        num_attention_heads=heads,
        intermediate_size=2 * hidden,
        max_position_embeddings=n + 2,
        pad_token_id=1,
        attn_implementation="eager",
    )
    return RobertaModel(cfg, add_pooling_layer=False).eval()


def tiny_mpnet(num_layers: int = 2, heads: int = 4, hidden: int = 32, vocab: int = 1000, seed: int = 0):
    from transformers import MPNetConfig, MPNetModel

    torch.manual_seed(seed)
    cfg = MPNetConfig(
        vocab_size=vocab,
        hidden_size=hidden,
        num_hidden_layers=num_layers,
        num_attention_heads=heads,
        intermediate_size=2 * hidden,
        max_position_embeddings=66,
        attn_implementation="eager",
    )
    return MPNetModel(cfg, add_pooling_layer=False).eval()


# --------------------------------------------------------------------------------------
# Every family attnspec supports, as tiny random models (vocab 1000, 2 layers, hidden 32).
# Decoders have 4 query heads; the Llama-style ones share 2 key/value heads (GQA), Mistral
# has a sliding window of 5 tokens so that the window really cuts rows at n > 5.
# --------------------------------------------------------------------------------------
def _build(config_cls: str, model_cls: str, seed: int, **kwargs):
    import transformers

    torch.manual_seed(seed)
    cfg = getattr(transformers, config_cls)(attn_implementation="eager", **kwargs)
    return getattr(transformers, model_cls)(cfg).eval()


_SMALL = dict(vocab_size=1000, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64)
_LLAMA_LIKE = dict(_SMALL, num_key_value_heads=2, max_position_embeddings=128)


def tiny_distilbert(seed: int = 0):
    return _build(
        "DistilBertConfig",
        "DistilBertModel",
        seed,
        vocab_size=1000,
        dim=32,
        n_layers=2,
        n_heads=4,
        hidden_dim=64,
        max_position_embeddings=64,
    )


def tiny_electra(seed: int = 0):
    return _build("ElectraConfig", "ElectraModel", seed, **_SMALL, embedding_size=32, max_position_embeddings=64)


def tiny_deberta_v2(seed: int = 0):
    return _build(
        "DebertaV2Config",
        "DebertaV2Model",
        seed,
        **_SMALL,
        max_position_embeddings=64,
        relative_attention=True,
        pos_att_type=["p2c", "c2p"],
    )


def tiny_gpt2(seed: int = 0):
    return _build(
        "GPT2Config",
        "GPT2Model",
        seed,
        vocab_size=1000,
        n_embd=32,
        n_layer=2,
        n_head=4,
        n_positions=64,
        bos_token_id=0,
        eos_token_id=0,
    )


def tiny_gpt_neox(seed: int = 0):
    return _build("GPTNeoXConfig", "GPTNeoXModel", seed, **_SMALL, max_position_embeddings=64)


def tiny_opt(seed: int = 0):
    return _build(
        "OPTConfig",
        "OPTModel",
        seed,
        vocab_size=1000,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        ffn_dim=64,
        word_embed_proj_dim=32,
        max_position_embeddings=64,
        pad_token_id=1,
    )


def tiny_llama(seed: int = 0, positions: int = 128):
    return _build("LlamaConfig", "LlamaModel", seed, **dict(_LLAMA_LIKE, max_position_embeddings=positions))


def tiny_qwen2(seed: int = 0):
    return _build("Qwen2Config", "Qwen2Model", seed, **_LLAMA_LIKE)


def tiny_mistral(seed: int = 0):
    return _build("MistralConfig", "MistralModel", seed, **_LLAMA_LIKE, sliding_window=5)


def tiny_gemma(seed: int = 0):
    return _build("GemmaConfig", "GemmaModel", seed, **_LLAMA_LIKE, head_dim=8)


def tiny_gemma2(seed: int = 0, window: int = 4):
    """Gemma-2 alternates sliding (even layers) and full (odd layers) attention: layer_types."""
    return _build(
        "Gemma2Config",
        "Gemma2Model",
        seed,
        **_LLAMA_LIKE,
        head_dim=8,
        sliding_window=window,
        layer_types=["sliding_attention", "full_attention"],
    )


def tiny_qwen2_windowed(seed: int = 0, window: int = 6):
    """Qwen2 with a sliding window from layer 1 on (max_window_layers=1): layer_types derived."""
    return _build(
        "Qwen2Config",
        "Qwen2Model",
        seed,
        **_LLAMA_LIKE,
        use_sliding_window=True,
        sliding_window=window,
        max_window_layers=1,
    )


#: family name -> (builder, causal P)
FAMILIES = {
    "bert": (tiny_bert, False),
    "roberta": (tiny_roberta, False),
    "mpnet": (tiny_mpnet, False),
    "distilbert": (tiny_distilbert, False),
    "electra": (tiny_electra, False),
    "deberta-v2": (tiny_deberta_v2, False),
    "gpt2": (tiny_gpt2, True),
    "gpt-neox": (tiny_gpt_neox, True),
    "opt": (tiny_opt, True),
    "llama": (tiny_llama, True),
    "qwen2": (tiny_qwen2, True),
    "mistral": (tiny_mistral, True),
    "gemma": (tiny_gemma, True),
}


# Encoder–decoders (refused by the capture; see attnspec.spectra.kinds.refuse_encoder_decoder).
_ENC_DEC = dict(
    vocab_size=1000,
    d_model=32,
    encoder_layers=2,
    decoder_layers=2,
    encoder_attention_heads=4,
    decoder_attention_heads=4,
    encoder_ffn_dim=64,
    decoder_ffn_dim=64,
    max_position_embeddings=64,
)


def tiny_bart(seed: int = 0):
    return _build("BartConfig", "BartModel", seed, **_ENC_DEC)


def tiny_marian(seed: int = 0):
    return _build("MarianConfig", "MarianModel", seed, **_ENC_DEC, decoder_start_token_id=2, pad_token_id=1)


def tiny_t5(seed: int = 0):
    return _build(
        "T5Config",
        "T5Model",
        seed,
        vocab_size=1000,
        d_model=32,
        d_kv=8,
        d_ff=64,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=4,
        decoder_start_token_id=0,
    )


ENCODER_DECODERS = {"bart": tiny_bart, "marian": tiny_marian, "t5": tiny_t5}
