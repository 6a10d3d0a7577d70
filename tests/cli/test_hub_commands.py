"""The design card's commands as users type them, against a warm Hugging Face cache, offline.

``attnspec spectrum --model roberta-base --data imdb`` and
``attnspec spectrum --model roberta-large --data wiki103 --num-sentences 10000 --seq-len 512``
run in a fresh Python process whose ``HF_HOME`` is the cache built by ``tests/hub_cache.py``
(tiny random RoBERTa weights under the real ids, the real WikiText-103 and IMDB text in the
``datasets`` cache) with ``HF_HUB_OFFLINE=1``: ``transformers`` and ``datasets`` then resolve
the names exactly as on a cluster node after one download. A fresh process is needed because
both libraries read ``HF_HOME`` when imported. All commands run in one process (one import
of torch and transformers); each is the argument list a user types, given to the same Typer
app the ``attnspec`` console script calls.

Bounds (the full sizes take hours): ``--num-sentences 4`` for IMDB; for roberta-large at
n = 512, ``--max-time 0.001`` stops the job before its first batch (after the model is loaded
and the inputs are chosen: 24 x 16 heads x 512 x 512 SVDs cost ~25 s per input here), with
``--num-sentences 1000`` because the cache's stand-in for WikiText's train split (the text
of wiki.test.raw) holds only ~1,700 windows of this tokenizer; the curves are compared at
n = 64. The comparison runs pass the same snapshot directory and the same text as local
paths (``--model PATH``, ``--data PATH``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hub_cache import DATASET_REVISIONS, MODEL_REVISIONS

from attnspec.storage.results import read_meta, read_table

pytestmark = [pytest.mark.realdata, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]

_DRIVER = r"""
import json, sys
from typer.testing import CliRunner
from attnspec.cli.main import app
runner = CliRunner()
out = {}
for name, argv in json.loads(sys.argv[1]).items():
    r = runner.invoke(app, argv)
    out[name] = {"code": r.exit_code, "stdout": r.stdout, "stderr": r.stderr,
                 "exception": None if r.exception is None or isinstance(r.exception, SystemExit) else repr(r.exception)}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def runs(warm_hf_home: dict[str, Path], data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    d = tmp_path_factory.mktemp("hub-runs")
    quiet = ["--no-plots", "-q"]
    wiki_test = str(data_dir / "wikitext103" / "wiki.test.raw")  # the text of the cached train stand-in
    exact_large = ["--num-sentences", "1000", "--seq-len", "512", "--max-time", "0.001"]
    small_large = ["--num-sentences", "2", "--seq-len", "64"]
    commands = {
        "imdb_hub": [
            "spectrum",
            "--model",
            "roberta-base",
            "--data",
            "imdb",
            "--num-sentences",
            "4",
            *quiet,
            "--out",
            str(d / "imdb_hub"),
        ],
        "imdb_local": [
            "spectrum",
            "--model",
            str(warm_hf_home["roberta-base"]),
            "--data",
            str(data_dir / "imdb"),
            "--split",
            "test",
            "--num-sentences",
            "4",
            *quiet,
            "--out",
            str(d / "imdb_local"),
        ],
        "large_hub": [
            "spectrum",
            "--model",
            "roberta-large",
            "--data",
            "wiki103",
            *exact_large,
            *quiet,
            "--out",
            str(d / "large_hub"),
        ],
        "large_local": [
            "spectrum",
            "--model",
            str(warm_hf_home["roberta-large"]),
            "--data",
            wiki_test,
            *exact_large,
            *quiet,
            "--out",
            str(d / "large_local"),
        ],
        "large_hub_64": [
            "spectrum",
            "--model",
            "roberta-large",
            "--data",
            "wiki103",
            *small_large,
            *quiet,
            "--out",
            str(d / "large_hub_64"),
        ],
        "large_local_64": [
            "spectrum",
            "--model",
            str(warm_hf_home["roberta-large"]),
            "--data",
            wiki_test,
            *small_large,
            *quiet,
            "--out",
            str(d / "large_local_64"),
        ],
        "partial_model": [
            "spectrum",
            "--model",
            "distilroberta-base",
            "--data",
            "imdb",
            *quiet,
            "--out",
            str(d / "x1"),
        ],
        "missing_split": [
            "spectrum",
            "--model",
            "roberta-base",
            "--data",
            "imdb",
            "--split",
            "train",
            *quiet,
            "--out",
            str(d / "x2"),
        ],
        "uncached_model": [
            "spectrum",
            "--model",
            "FacebookAI/roberta-base",
            "--data",
            "imdb",
            *quiet,
            "--out",
            str(d / "x3"),
        ],
    }
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("ATTNSPEC_DATA_DIR", "HF_DATASETS_CACHE", "HF_HUB_CACHE", "TRANSFORMERS_CACHE", "HF_HOME")
    }
    env.update(
        HF_HOME=str(warm_hf_home["hf_home"]),
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        OMP_NUM_THREADS="1",
        PYTHONPATH=os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]),
    )
    proc = subprocess.run(
        [sys.executable, "-c", _DRIVER, json.dumps(commands)],
        cwd=d,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    results["dirs"] = {k: d / k for k in commands}
    return results


def _ok(result: dict) -> None:
    assert result["code"] == 0 and result["exception"] is None, result


def _one_line_error(result: dict, *fragments: str) -> str:
    assert result["code"] == 1, result
    lines = [line for line in result["stderr"].splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), result["stderr"]
    for f in fragments:
        assert f in lines[0], (f, lines[0])
    return lines[0]


def _same_curves(a: Path, b: Path) -> None:
    sa, sb = read_table(a, "spectrum"), read_table(b, "spectrum")
    assert len(sa) == len(sb) > 0
    np.testing.assert_allclose(sa["mean"].to_numpy(), sb["mean"].to_numpy(), rtol=1e-12, atol=0)


def test_roberta_base_on_imdb_from_the_warm_cache(runs: dict) -> None:
    _ok(runs["imdb_hub"])
    _ok(runs["imdb_local"])
    hub, local = read_meta(runs["dirs"]["imdb_hub"]), read_meta(runs["dirs"]["imdb_local"])
    assert hub["model"] == "roberta-base" and hub["model_source"] == "hub-cache"
    assert hub["revision"] == MODEL_REVISIONS["roberta-base"]
    assert (hub["num_layers"], hub["num_heads"], hub["max_seq_len"]) == (2, 4, 512)
    c = hub["corpus"]
    assert (
        c["source"] == "hub:stanfordnlp/imdb" and c["hub_id"] == "stanfordnlp/imdb" and c["hub_config"] == "plain_text"
    )
    assert c["hub_revision"] == DATASET_REVISIONS["stanfordnlp/imdb"] and c["hub_fingerprint"]
    # IMDB reviews, one per input, truncated to n = 512 (short ones skipped): the test split.
    assert (c["split"], c["mode"], c["short_policy"], c["seq_len"]) == ("test", "truncate", "skip", 512)
    assert c["input_lengths"] == {"min": 512, "median": 512, "max": 512, "full": 4} and c["documents"] == 25_000
    # The same reviews as the local copy of the same text, and the same curves.
    assert c["inputs_sha256"] == local["corpus"]["inputs_sha256"]
    assert hub["status"] == "complete" and hub["inputs_done"] == 4
    _same_curves(runs["dirs"]["imdb_hub"], runs["dirs"]["imdb_local"])
    # The summary names what was run.
    ran = [line for line in runs["imdb_hub"]["stdout"].splitlines() if line.startswith("ran:")]
    assert len(ran) == 1
    for needle in (
        "roberta-base",
        "hub-cache",
        MODEL_REVISIONS["roberta-base"][:10],
        "imdb split test",
        "stanfordnlp/imdb",
        DATASET_REVISIONS["stanfordnlp/imdb"][:10],
        "4 of 4 inputs of 512 tokens",
    ):
        assert needle in ran[0], (needle, ran[0])


def test_roberta_large_on_wikitext_from_the_warm_cache(runs: dict) -> None:
    for name in ("large_hub", "large_local", "large_hub_64", "large_local_64"):
        _ok(runs[name])
    hub, local = read_meta(runs["dirs"]["large_hub"]), read_meta(runs["dirs"]["large_local"])
    assert hub["model"] == "roberta-large" and hub["model_source"] == "hub-cache"
    assert hub["revision"] == MODEL_REVISIONS["roberta-large"]
    assert (hub["num_layers"], hub["num_heads"], hub["max_seq_len"]) == (24, 16, 512)
    c = hub["corpus"]
    assert c["hub_id"] == "Salesforce/wikitext" and c["hub_config"] == "wikitext-103-raw-v1"
    assert c["hub_revision"] == DATASET_REVISIONS["Salesforce/wikitext"] and c["hub_fingerprint"]
    # From the hub, wiki103 defaults to the train split; WikiText is packed into windows.
    assert (c["split"], c["mode"], c["seq_len"], c["num_inputs"]) == ("train", "pack", 512, 1000)
    assert c["num_available_exact"] and c["input_lengths"] == {"min": 512, "median": 512, "max": 512, "full": 1000}
    assert c["inputs_sha256"] == local["corpus"]["inputs_sha256"]
    assert (
        hub["status"] == "partial" and hub["inputs_done"] == 0 and "--max-time reached" in runs["large_hub"]["stderr"]
    )
    _same_curves(runs["dirs"]["large_hub_64"], runs["dirs"]["large_local_64"])
    m64 = read_meta(runs["dirs"]["large_hub_64"])
    assert (
        m64["status"] == "complete"
        and m64["corpus"]["inputs_sha256"] == read_meta(runs["dirs"]["large_local_64"])["corpus"]["inputs_sha256"]
    )


def test_hub_error_paths_name_what_is_missing_and_how_to_get_it(runs: dict) -> None:
    _one_line_error(
        runs["partial_model"],
        "'distilroberta-base'",
        "config.json but not its weights",
        "hf download distilroberta-base",
    )
    _one_line_error(
        runs["missing_split"],
        "'imdb'",
        "'train'",
        "no split 'train'",
        "['test']",
        "--split",
        "load_dataset('stanfordnlp/imdb', split='train')",
    )
    _one_line_error(
        runs["uncached_model"],
        "'FacebookAI/roberta-base'",
        "not in the local Hugging Face cache",
        "hub is unreachable",
        "--model PATH",
        "hf download FacebookAI/roberta-base",
    )


def test_uncached_dataset_offline_names_how_to_fill_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    datasets = pytest.importorskip("datasets")
    from helpers import make_roberta_tokenizer

    from attnspec.errors import DataError
    from attnspec.spectra.data import sources
    from attnspec.spectra.data.inputs import load_inputs

    monkeypatch.delenv("ATTNSPEC_DATA_DIR", raising=False)
    monkeypatch.setattr(sources, "shared_data_candidates", lambda: [])  # no ../shared/data default either
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "empty-cache")
    tok = make_roberta_tokenizer(tmp_path)
    with pytest.raises(DataError) as e:
        load_inputs("wiki103", tok, seq_len=64, num_inputs=1, seed=0)
    msg = str(e.value)
    assert "\n" not in msg
    for needle in (
        "'wiki103'",
        "'train'",
        "Salesforce/wikitext",
        "neither cached nor reachable",
        "load_dataset('Salesforce/wikitext', 'wikitext-103-raw-v1', split='train')",
        "--data PATH",
    ):
        assert needle in msg, (needle, msg)
