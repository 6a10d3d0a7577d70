"""Tiny randomly initialised encoders (BERT, RoBERTa, MPNet) for fast tests."""

from __future__ import annotations

import torch


def tiny_bert(num_layers: int = 2, heads: int = 4, hidden: int = 32, positions: int = 64, vocab: int = 30522, seed: int = 0):
    from transformers import BertConfig, BertModel

    torch.manual_seed(seed)  # test-only: a fixed initialisation
    cfg = BertConfig(vocab_size=vocab, hidden_size=hidden, num_hidden_layers=num_layers, num_attention_heads=heads,
                     intermediate_size=2 * hidden, max_position_embeddings=positions, attn_implementation="eager")
    return BertModel(cfg, add_pooling_layer=False).eval()


def tiny_roberta(num_layers: int = 2, heads: int = 4, hidden: int = 32, n: int = 62, vocab: int = 1000, seed: int = 0):
    from transformers import RobertaConfig, RobertaModel

    torch.manual_seed(seed)
    # RoBERTa numbers positions from padding_idx + 1: max_position_embeddings = n + 2.
    cfg = RobertaConfig(vocab_size=vocab, hidden_size=hidden, num_hidden_layers=num_layers, num_attention_heads=heads,
                        intermediate_size=2 * hidden, max_position_embeddings=n + 2, pad_token_id=1,
                        attn_implementation="eager")
    return RobertaModel(cfg, add_pooling_layer=False).eval()


def tiny_mpnet(num_layers: int = 2, heads: int = 4, hidden: int = 32, vocab: int = 1000, seed: int = 0):
    from transformers import MPNetConfig, MPNetModel

    torch.manual_seed(seed)
    cfg = MPNetConfig(vocab_size=vocab, hidden_size=hidden, num_hidden_layers=num_layers, num_attention_heads=heads,
                      intermediate_size=2 * hidden, max_position_embeddings=66, attn_implementation="eager")
    return MPNetModel(cfg, add_pooling_layer=False).eval()
