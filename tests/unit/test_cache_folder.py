"""A model folder published into the cache: a second process finishing the same folder first
is success when its folder is complete, for every cache that publishes folders."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from attnspec.spectra import cache_folder, gguf, packaged_mpnet
from attnspec.spectra.cache_folder import publish_folder


def _finished(parent: Path, name: str, marker: str = "done.json") -> Path:
    folder = parent / name
    folder.mkdir(parents=True)
    (folder / "weights.bin").write_bytes(b"w")
    (folder / marker).write_text("{}")
    return folder


def _complete(folder: Path) -> bool:
    return (folder / "done.json").is_file()


@pytest.fixture
def lose_the_rename(monkeypatch):
    """os.replace as when another process renames its finished copy into place just before ours:
    the real rename then fails on the non-empty folder (ENOTEMPTY/EEXIST)."""
    real = os.replace
    raced: list[Path] = []

    def racing(src, dst):
        shutil.copytree(src, dst)  # the other process's complete folder, same contents
        raced.append(Path(dst))
        return real(src, dst)

    monkeypatch.setattr(cache_folder.os, "replace", racing)
    return raced


def test_the_finished_folder_is_renamed_into_place(tmp_path: Path) -> None:
    tmp = _finished(tmp_path, ".tmp-1")
    assert publish_folder(tmp, tmp_path / "model", _complete) is False
    assert _complete(tmp_path / "model") and not tmp.exists()


def test_a_lost_rename_to_a_complete_folder_is_success(tmp_path: Path, lose_the_rename) -> None:
    tmp = _finished(tmp_path, ".tmp-1")
    assert publish_folder(tmp, tmp_path / "model", _complete) is True
    assert lose_the_rename == [tmp_path / "model"]  # the race did happen
    assert _complete(tmp_path / "model") and not tmp.exists()


def test_a_complete_folder_found_first_is_kept_and_a_stale_one_replaced(tmp_path: Path) -> None:
    other = _finished(tmp_path, "model")
    (other / "weights.bin").write_bytes(b"theirs")
    assert publish_folder(_finished(tmp_path, ".tmp-1"), other, _complete) is True
    assert (other / "weights.bin").read_bytes() == b"theirs" and [p.name for p in tmp_path.iterdir()] == ["model"]
    (other / "done.json").unlink()  # a folder left half cleared: not complete
    assert publish_folder(_finished(tmp_path, ".tmp-2"), other, _complete) is False
    assert _complete(other) and (other / "weights.bin").read_bytes() == b"w"


def test_a_failed_rename_without_a_complete_folder_is_an_error(tmp_path: Path, monkeypatch) -> None:
    def failing(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cache_folder.os, "replace", failing)
    with pytest.raises(OSError, match="No space left"):
        publish_folder(_finished(tmp_path, ".tmp-1"), tmp_path / "model", _complete)


def test_gguf_losing_the_race_uses_the_other_process_s_folder(tmp_path: Path, monkeypatch, lose_the_rename) -> None:
    monkeypatch.setattr(gguf, "_dequantise", lambda path, out: (out / "model.safetensors").write_bytes(b"w"))
    monkeypatch.setattr(gguf, "describe_gguf", lambda path, digest: {"sha256": digest})
    monkeypatch.setenv("ATTNSPEC_CACHE_DIR", str(tmp_path / "cache"))
    model_file = tmp_path / "m.gguf"
    model_file.write_bytes(b"GGUF fake")
    folder, facts, from_cache = gguf.dequantised_folder(model_file)
    assert lose_the_rename == [folder] and from_cache and facts["sha256"] == gguf.file_digest(model_file)
    assert [p.name for p in folder.parent.iterdir()] == [folder.name]  # no temporary folder left


def test_mpnet_losing_the_race_uses_the_other_process_s_folder(tmp_path: Path, monkeypatch, lose_the_rename) -> None:
    monkeypatch.setattr(packaged_mpnet, "part_files", lambda: [tmp_path / "part.001"])
    monkeypatch.setattr(packaged_mpnet, "_extract", lambda pieces, out: (out / "model.safetensors").write_bytes(b"w"))
    monkeypatch.setenv("ATTNSPEC_CACHE_DIR", str(tmp_path / "cache"))
    folder = packaged_mpnet.packaged_mpnet_path()
    assert lose_the_rename == [folder]
    assert json.loads((folder / "packaged.json").read_text())["sha256"] == packaged_mpnet.WEIGHTS_SHA256
    assert [p.name for p in folder.parent.iterdir()] == [folder.name]  # no temporary folder left
