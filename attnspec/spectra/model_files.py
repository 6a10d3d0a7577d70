"""Check a local model folder before transformers reads it.

A missing tokenizer, a config.json whose sizes are not positive integers, or weights that
are empty, truncated, garbage, a zero or damaged safetensors header, or a pickle that is
not torch's zip format, are one line naming the file (:class:`~attnspec.errors.ModelLoadError`),
never a traceback from safetensors or transformers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from attnspec.errors import ModelLoadError

#: Tokenizer files a model folder (local, or a hub snapshot) holds one of for attnspec to load it.
TOKENIZER_FILES = (
    "tokenizer.json",
    "vocab.json",
    "vocab.txt",
    "sentencepiece.bpe.model",
    "spiece.model",
    "tokenizer.model",
)


#: Bytes per element of each safetensors dtype.
_ST_DTYPE_BYTES = {
    "F64": 8,
    "F32": 4,
    "F16": 2,
    "BF16": 2,
    "I64": 8,
    "I32": 4,
    "I16": 2,
    "I8": 1,
    "U64": 8,
    "U32": 4,
    "U16": 2,
    "U8": 1,
    "BOOL": 1,
    "F8_E4M3": 1,
    "F8_E5M2": 1,
    "C64": 8,
}


def _check_safetensors(path: Path) -> None:
    """Read the header of ``path`` and check it describes the file: 8-byte little-endian
    header length N (0 < N <= size - 8), a JSON object of tensors whose byte ranges tile
    the data section exactly and match dtype × shape. :class:`ModelLoadError` otherwise."""
    import json
    import math

    size = path.stat().st_size
    bad = f"weights file {path} is not a readable safetensors file"
    if size == 0:
        raise ModelLoadError(f"{bad}: it is empty")
    if size < 8:
        raise ModelLoadError(f"{bad}: {size} bytes, shorter than the 8-byte header length (truncated)")
    try:
        with open(path, "rb") as f:
            n = int.from_bytes(f.read(8), "little")
            raw = f.read(n) if 0 < n <= size - 8 else b""
    except OSError as e:  # unreadable for this user (PermissionError), or an I/O error
        raise ModelLoadError(f"weights file {path} cannot be read: {e.strerror or type(e).__name__}") from None
    if n == 0 or n > size - 8:
        raise ModelLoadError(
            f"{bad}: its header length {n} does not fit in the file's {size} bytes "
            "(truncated, zeroed or not safetensors)"
        )
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise ModelLoadError(
            f"{bad}: its header is not JSON of the depth a header has (damaged or not safetensors)"
        ) from None
    if not isinstance(header, dict):
        raise ModelLoadError(f"{bad}: its header is not a JSON object")
    data = size - 8 - n
    spans = []
    for name, t in header.items():
        if name == "__metadata__":
            continue
        try:
            begin, end = (int(v) for v in t["data_offsets"])
            count = math.prod(int(d) for d in t["shape"])
            width = _ST_DTYPE_BYTES[t["dtype"]]
        except (TypeError, KeyError, ValueError):
            raise ModelLoadError(f"{bad}: the header entry of tensor {name!r} is damaged") from None
        if not 0 <= begin <= end <= data or end - begin != count * width:
            raise ModelLoadError(
                f"{bad}: tensor {name!r} claims bytes {begin}..{end} of a {data}-byte data section "
                f"({count} x {t['dtype']}; truncated or damaged)"
            )
        spans.append((begin, end))
    spans.sort()
    covered = 0
    for begin, end in spans:
        if begin != covered:
            raise ModelLoadError(f"{bad}: its tensors overlap or leave gaps in the data section (damaged)")
        covered = end
    if covered != data:
        raise ModelLoadError(f"{bad}: its tensors cover {covered} of the {data} data bytes (truncated or damaged)")


def _check_torch_bin(path: Path) -> None:
    """``pytorch_model.bin`` must be torch's zip format (read with ``weights_only``); a bare
    or foreign pickle is refused by name rather than unpickled."""
    import zipfile

    if path.stat().st_size == 0:
        raise ModelLoadError(f"weights file {path} is empty")
    try:
        with open(path, "rb"):
            pass
    except OSError as e:
        raise ModelLoadError(f"weights file {path} cannot be read: {e.strerror or type(e).__name__}") from None
    if not zipfile.is_zipfile(path):
        raise ModelLoadError(
            f"weights file {path} is not a torch zip archive (a legacy or foreign pickle, truncated "
            "or damaged); attnspec never unpickles it: convert the model to safetensors"
        )


#: Sizes a config.json states as integers (the names of encoder and decoder families alike):
#: transformers builds the model from them, and a string ("32") or a list there fails inside it.
_CONFIG_SIZES = (
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "intermediate_size",
    "vocab_size",
    "max_position_embeddings",
    "head_dim",
    "n_embd",
    "n_layer",
    "n_head",
    "n_positions",
    "d_model",
)


def _check_config_sizes(parsed: dict[str, Any], config: Path, name: str) -> None:
    """Refuse a config.json whose sizes are not positive integers, naming the field."""
    for key in _CONFIG_SIZES:
        v = parsed.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            raise ModelLoadError(
                f"--model {name}: {config} field {key!r} is {v!r} ({type(v).__name__}), not a positive integer"
            )


def check_model_dir(folder: Path, name: str) -> Path:
    """Check a local model folder before loading it; return the weights file to name in errors.

    Checked: ``config.json`` is a JSON object; a tokenizer file is present; the weights
    (``model.safetensors``, a sharded ``model.safetensors.index.json``, or
    ``pytorch_model.bin``) exist and are readable as their format says.

    Parameters
    ----------
    folder : Path
        The model folder.
    name : str
        ``--model`` as given, named in the messages.

    Returns
    -------
    Path
        The weights file: ``model.safetensors``, the index of the shards, or
        ``pytorch_model.bin``.

    Raises
    ------
    ModelLoadError
        One line naming the file and what is wrong with it.
    """
    import json

    folder = Path(folder)
    config = folder / "config.json"
    try:
        parsed = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        why = "nested deeper than a config is" if isinstance(e, RecursionError) else type(e).__name__
        raise ModelLoadError(f"--model {name}: {config} is not readable JSON ({why})") from None
    if not isinstance(parsed, dict):
        raise ModelLoadError(f"--model {name}: {config} is not a JSON object")
    _check_config_sizes(parsed, config, name)
    if not any((folder / f).is_file() for f in TOKENIZER_FILES):
        raise ModelLoadError(
            f"--model {name}: {folder} has no tokenizer (none of {', '.join(TOKENIZER_FILES)}); "
            "save the tokenizer next to the model (tokenizer.save_pretrained(folder))"
        )
    single = folder / "model.safetensors"
    index = folder / "model.safetensors.index.json"
    binary = folder / "pytorch_model.bin"
    if single.is_file():
        _check_safetensors(single)
        return single
    if index.is_file():
        try:
            weight_map = json.loads(index.read_text(encoding="utf-8"))["weight_map"]
            shards = sorted(set(weight_map.values()))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, AttributeError):
            raise ModelLoadError(f"--model {name}: {index} is not a safetensors index (no weight_map)") from None
        for shard in shards:
            if not (folder / shard).is_file():
                raise ModelLoadError(f"--model {name}: {index} lists {shard}, which is missing")
            _check_safetensors(folder / shard)
        return index
    if binary.is_file():
        _check_torch_bin(binary)
        return binary
    raise ModelLoadError(
        f"--model {name}: {folder} has no weights (model.safetensors, model.safetensors.index.json "
        "or pytorch_model.bin)"
    )
