"""Corpora from the Hugging Face hub (``datasets``), with a clear way out when offline."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from attnspec.errors import DataError
from attnspec.spectra.data.corpus import _WAY_OUT, _Corpus
from attnspec.spectra.data.readers import _BR_NOTE, _clean, _wikitext_documents

# Canonical name -> (hub repository, config).
HUB_DATASETS = {"wiki103": ("Salesforce/wikitext", "wikitext-103-raw-v1"), "imdb": ("stanfordnlp/imdb", None)}


_HUB_DEFAULT_SPLIT = {"wiki103": "train", "imdb": "test"}


@contextlib.contextmanager
def _quiet(datasets: Any) -> Iterator[None]:
    """Silence ``datasets``' logging ("Using the latest cached version ...") and progress bars."""
    log = getattr(getattr(datasets, "utils", None), "logging", None)
    if log is None or not hasattr(datasets, "disable_progress_bars"):
        yield
        return
    verbosity = log.get_verbosity()
    bars = log.is_progress_bar_enabled()
    log.set_verbosity_error()
    datasets.disable_progress_bars()
    try:
        yield
    finally:
        log.set_verbosity(verbosity)
        if bars:
            datasets.enable_progress_bars()


def _hub_prepare_hint(repo: str, config: str | None, split: str) -> str:
    call = f"datasets.load_dataset({repo!r}" + (f", {config!r}" if config else "") + f", split={split!r})"
    return f'where the hub is reachable, run `python -c "import datasets; {call}"` once with the same HF_HOME'


def _from_hub(corpus: str, split: str, looked: str) -> _Corpus:
    """The named corpus from the Hugging Face hub (``datasets``, imported lazily).

    Offline (``HF_HUB_OFFLINE=1`` / ``HF_DATASETS_OFFLINE=1``, or no network), ``datasets``
    resolves a name through its processed cache ``<org>___<name>/<config>/<version>/<commit>/``
    (filled by one earlier ``load_dataset`` with hub access); that commit is recorded as
    ``hub_revision`` and the split's ``datasets`` fingerprint as ``hub_fingerprint``.
    """
    repo, config = HUB_DATASETS[corpus]
    hub_id = repo + (f" ({config})" if config else "")
    prefix = f"corpus {corpus!r} split {split!r}: {looked}"
    try:
        import datasets
    except ImportError:
        raise DataError(
            f"{prefix}, and the hub dataset {hub_id} cannot be loaded because the 'datasets' library "
            f"is not installed (pip install 'attnspec[hub]'); {_WAY_OUT}"
        ) from None
    try:
        with _quiet(datasets):
            ds = (
                datasets.load_dataset(repo, config, split=split) if config else datasets.load_dataset(repo, split=split)
            )
    except Exception as exc:  # noqa: BLE001 - offline/missing hub access surfaces as many exception types
        msg = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
        unknown_split = re.match(r"Unknown split \"?([^\".]+)\"?\. Should be one of (\[.*\])", msg)
        if unknown_split:
            raise DataError(
                f"{prefix}, and the cached hub dataset {hub_id} has no split {split!r} (cached: "
                f"{unknown_split.group(2)}); use --split with one of those, or {_hub_prepare_hint(repo, config, split)}"
            ) from None
        raise DataError(
            f"{prefix}, and the hub dataset {hub_id} is neither cached nor reachable "
            f"({type(exc).__name__}{': ' + msg if msg else ''}); {_hub_prepare_hint(repo, config, split)}, or {_WAY_OUT}"
        ) from None
    texts = [t if isinstance(t, str) else "" for t in ds["text"]]
    if corpus == "wiki103":
        docs = _wikitext_documents(texts)
        fmt, mode, cleaning = "hub-wikitext", "pack", None
    else:
        docs = [[_clean(t)] for t in texts]
        fmt, mode, cleaning = "hub-imdb", "truncate", _BR_NOTE
    files = getattr(ds, "cache_files", None) or []
    # <cache>/<org>___<name>/<config>/<version>/<commit>/<name>-<split>.arrow: the commit of the
    # hub repository the cache was filled from.
    revision = (
        Path(files[0]["filename"]).parent.name
        if files and isinstance(files[0], dict) and "filename" in files[0]
        else None
    )
    extra = {
        "hub_id": repo,
        "hub_config": getattr(getattr(ds, "info", None), "config_name", None) or config,
        "hub_revision": revision,
        "hub_fingerprint": getattr(ds, "_fingerprint", None),
        "hub_rows": len(texts),
    }
    return _Corpus(
        name=corpus,
        split=split,
        source=f"hub:{repo}" + (f"/{config}" if config else ""),
        format=fmt,
        documents=docs,
        default_mode=mode,
        text_cleaning=cleaning,
        extra=extra,
    )
