"""A result's identity is everything that shapes P: weights, tokenizer and config, by content.

Resume, merge, the "up to date" check, the scaling fit and the report's model sharing all
compare the same content record (attnspec.spectra.content); the digest cache sees a file
rewritten in place even when its size and modification time are put back.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from attnspec.cli.main import app


def _run(*args: str):
    return CliRunner().invoke(app, list(args))


def _one_error_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    return lines[0]


def _tiny_model_and_data(root: Path) -> tuple[Path, Path]:
    from helpers import save_tiny_roberta

    model = save_tiny_roberta(root / "m")
    data = root / "d.jsonl"
    data.write_text(
        "\n".join(json.dumps({"text": f"the attention of movie {i} was low rank and quick " * 4}) for i in range(8))
    )
    return model, data


def _args(model: Path, data: Path, out: Path, *extra: str) -> tuple[str, ...]:
    return (
        "spectrum",
        *("--model", str(model), "--data", str(data), "--num-sentences", "8", "--seq-len", "16"),
        *("--batch-size", "2", "--device", "cpu", "-q", "--no-plots", "--out", str(out)),
        *extra,
    )


def _set_config(model: Path, **fields: object) -> None:
    """Edit the model's config.json, keeping its size class and restoring its modification time."""
    path = model / "config.json"
    st = path.stat()
    cfg = json.loads(path.read_text())
    cfg.update(fields)
    path.write_text(json.dumps(cfg, indent=2))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_resume_refuses_a_config_changed_between_runs_naming_the_field(tmp_path) -> None:  # noqa: ANN001
    from attnspec.spectra.config import SpectrumConfig
    from attnspec.spectra.job import run_spectrum

    model, data = _tiny_model_and_data(tmp_path)
    cfg = SpectrumConfig(
        model=str(model), data=str(data), seq_len=16, num_sentences=8, batch_size=2, device="cpu",
        out=tmp_path / "run", checkpoint_every=1,
    )  # fmt: skip

    def stop(done: int) -> None:
        raise KeyboardInterrupt

    assert run_spectrum(cfg, progress=False, on_checkpoint=stop).status == "interrupted"
    _set_config(model, hidden_act="relu")
    before = (tmp_path / "run" / "state.npz").read_bytes()
    r = _run(*_args(model, data, tmp_path / "run", "--resume"))
    assert r.exit_code == 1, r.output
    line = _one_error_line(r.stderr)
    assert "model's config changed" in line and "hidden_act" in line and "'relu' now" in line, line
    assert (tmp_path / "run" / "state.npz").read_bytes() == before


def test_up_to_date_merge_and_scaling_fit_see_a_config_change(tmp_path) -> None:  # noqa: ANN001
    model, data = _tiny_model_and_data(tmp_path)
    assert _run(*_args(model, data, tmp_path / "run")).exit_code == 0
    assert _run(*_args(model, data, tmp_path / "s0", "--shard", "0/2")).exit_code == 0
    assert _run(*_args(model, data, tmp_path / "sc", "--seq-len", "12")).exit_code == 0
    _set_config(model, hidden_act="relu")
    r = _run(*_args(model, data, tmp_path / "run"))  # was up to date: now refused
    assert r.exit_code == 1 and "hidden_act" in _one_error_line(r.stderr), r.output
    assert _run(*_args(model, data, tmp_path / "s1", "--shard", "1/2")).exit_code == 0
    r = _run("merge", str(tmp_path / "s0"), str(tmp_path / "s1"), "--out", str(tmp_path / "merged"))
    assert r.exit_code == 1 and "model's config changed" in _one_error_line(r.stderr), r.output
    # a scaling study whose second length ran on the changed config cannot be fitted
    assert _run(*_args(model, data, tmp_path / "sc2", "--seq-len", "16")).exit_code == 0
    study = tmp_path / "study"
    assert _run(*_args(model, data, study, "--seq-len", "12,16")).exit_code == 0
    import shutil

    shutil.rmtree(study / "n12")
    shutil.copytree(tmp_path / "sc", study / "n12")
    r = _run("plot", "scaling", str(study), "--out", str(tmp_path / "figs"))
    assert r.exit_code == 1 and "config changed" in _one_error_line(r.stderr), r.output


def test_the_config_fields_that_cannot_change_p_are_left_out() -> None:
    from attnspec.spectra.content import config_content

    base = {"model_type": "bert", "hidden_act": "gelu", "num_attention_heads": 4}
    noise = {"_name_or_path": "/a/b", "transformers_version": "4.0", "architectures": ["X"], "torch_dtype": "float16"}
    assert config_content(base)["config_sha256"] == config_content({**noise, **base})["config_sha256"]
    assert config_content(base)["config_sha256"] != config_content({**base, "hidden_act": "relu"})["config_sha256"]
    reordered = dict(reversed(list(base.items())))
    assert config_content(base)["config_sha256"] == config_content(reordered)["config_sha256"]


def test_model_sharing_loads_again_after_a_config_change(tmp_path) -> None:  # noqa: ANN001
    from attnspec.spectra.content import content_key, named_content

    model, _ = _tiny_model_and_data(tmp_path)
    before = content_key(named_content(str(model)))
    assert any(k == "config_sha256" for k, _ in before)
    _set_config(model, hidden_act="relu")
    assert content_key(named_content(str(model))) != before  # the sharing key: a fresh load


def test_an_unchanged_model_object_twice_with_the_same_out_is_accepted(tmp_path) -> None:  # noqa: ANN001
    from transformers import AutoModel, AutoTokenizer

    import attnspec
    from attnspec.errors import ResultsError

    folder, _ = _tiny_model_and_data(tmp_path)
    model = AutoModel.from_pretrained(folder, attn_implementation="eager")
    tok = AutoTokenizer.from_pretrained(folder)
    texts = [f"the attention of movie {i} was low rank and quick " * 4 for i in range(4)]
    kw = dict(tokenizer=tok, texts=texts, seq_len=16, num_inputs=4, out=tmp_path / "run", progress=False)
    attnspec.spectrum(model, **kw)
    attnspec.spectrum(model, **kw)  # the same object: up to date, not "weights changed"
    model.config.hidden_act = "relu"
    with pytest.raises(ResultsError, match="hidden_act"):
        attnspec.spectrum(model, **kw)


@pytest.mark.parametrize("small_file_bytes", [1 << 40, 0], ids=["hashed-whole", "cached"])
def test_the_digest_cache_sees_an_overwrite_that_restores_size_and_mtime(
    tmp_path, monkeypatch, small_file_bytes: int
) -> None:  # noqa: ANN001
    from attnspec.spectra import content

    monkeypatch.setenv("ATTNSPEC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(content, "SMALL_FILE_BYTES", small_file_bytes)
    path = tmp_path / "w.bin"
    path.write_bytes(b"a" * 300_000)
    first = content.cached_file_digest(path)
    st = path.stat()
    with open(path, "r+b") as f:  # in place: same inode, same size, one byte in the middle
        f.seek(123_457)
        f.write(b"b")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_mtime_ns == st.st_mtime_ns and path.stat().st_ino == st.st_ino
    content._memo.clear()  # another process: only the on-disk cache
    assert content.cached_file_digest(path) != first


def test_overwrite_records_the_new_weights_digest(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    from models_tiny import tiny_roberta
    from transformers import AutoConfig

    from attnspec.spectra import content

    monkeypatch.setattr(content, "SMALL_FILE_BYTES", 0)  # every file through the cache
    model, data = _tiny_model_and_data(tmp_path)
    assert _run(*_args(model, data, tmp_path / "run")).exit_code == 0
    weights = next(model.glob("*.safetensors"))
    st = weights.stat()
    cfg = AutoConfig.from_pretrained(model)
    tiny_roberta(vocab=cfg.vocab_size, n=cfg.max_position_embeddings - 2, seed=1).save_pretrained(model)
    os.utime(weights, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert _run(*_args(model, data, tmp_path / "run", "--overwrite")).exit_code == 0
    recorded = json.loads((tmp_path / "run" / "meta.json").read_text())["content"]["weights_sha256"]
    assert recorded == content.files_digest([weights], model)
    import hashlib

    assert (
        recorded
        == hashlib.sha256(f"{hashlib.sha256(weights.read_bytes()).hexdigest()}  {weights.name}\n".encode()).hexdigest()
    )
