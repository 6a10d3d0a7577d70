"""Defaults a newcomer meets first: `--num-sentences all`, an upper-bound default that does
not fail on a small corpus, and one data folder default (--data-dir, $ATTNSPEC_DATA_DIR,
../shared/data) shared by every command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import make_roberta_tokenizer

from attnspec.errors import DataError
from attnspec.spectra.data import sources
from attnspec.spectra.data.corpus import DATA_DIR_ENV
from attnspec.spectra.data.inputs import load_inputs
from attnspec.spectra.data.sources import resolve_data_dir


def sentence(i: int, n_words: int) -> str:
    return " ".join(f"movie {i}{j}" for j in range(n_words))  # distinct numbers: distinct windows


def write_jsonl(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


@pytest.fixture(scope="module")
def tok(tmp_path_factory):
    return make_roberta_tokenizer(tmp_path_factory.mktemp("tok"))


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    path = tmp_path / "docs.jsonl"
    write_jsonl(path, [{"text": sentence(i, 40)} for i in range(5)])  # 5 documents, each longer than 20 tokens
    return path


def test_all_draws_every_window_in_a_seeded_order(tok, docs) -> None:
    every = load_inputs(docs, tok, seq_len=20, num_inputs=None, seed=1)
    assert len(every.input_ids) == every.meta["num_available"] == every.meta["num_inputs"] == 5
    assert every.meta["num_requested"] == "all"
    again = load_inputs(docs, tok, seq_len=20, num_inputs=None, seed=1)
    assert again.input_ids == every.input_ids
    # the same windows as asking for exactly all five
    five = load_inputs(docs, tok, seq_len=20, num_inputs=5, seed=1)
    assert five.input_ids == every.input_ids


def test_too_many_fails_with_the_count_unless_at_most(tok, docs) -> None:
    with pytest.raises(
        DataError, match=r"only 5 windows .* but 9 were asked for \(--num-inputs / num_inputs\); .*--num-inputs all"
    ):
        load_inputs(docs, tok, seq_len=20, num_inputs=9, seed=0)
    capped = load_inputs(docs, tok, seq_len=20, num_inputs=9, seed=0, at_most=True)
    assert len(capped.input_ids) == 5 and capped.meta["num_requested"] == 9
    fewer = load_inputs(docs, tok, seq_len=20, num_inputs=3, seed=0, at_most=True)
    assert len(fewer.input_ids) == 3


def test_data_dir_default_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared, env, given = (tmp_path / n for n in ("shared", "env", "given"))
    for d in (shared, env, given):
        d.mkdir()
    monkeypatch.setattr(sources, "shared_data_candidates", lambda: [tmp_path / "absent", shared])
    monkeypatch.delenv(DATA_DIR_ENV, raising=False)
    assert resolve_data_dir(None) == (shared.resolve(), "../shared/data")
    monkeypatch.setenv(DATA_DIR_ENV, str(env))
    assert resolve_data_dir(None) == (env, DATA_DIR_ENV)
    assert resolve_data_dir(str(given)) == (given, "--data-dir")
    with pytest.raises(DataError, match="from --data-dir"):
        resolve_data_dir(str(tmp_path / "nope"))
    monkeypatch.delenv(DATA_DIR_ENV)
    monkeypatch.setattr(sources, "shared_data_candidates", lambda: [tmp_path / "absent"])
    assert resolve_data_dir(None) == (None, "")


def test_named_corpus_found_in_shared_data_without_any_option(tok, tmp_path: Path, monkeypatch) -> None:
    shared = tmp_path / "shared" / "data"
    (shared / "imdb").mkdir(parents=True)
    write_jsonl(shared / "imdb" / "part.jsonl", [{"split": "test", "text": sentence(i, 40)} for i in range(3)])
    monkeypatch.delenv(DATA_DIR_ENV, raising=False)
    monkeypatch.setattr(sources, "shared_data_candidates", lambda: [shared])
    got = load_inputs("imdb", tok, seq_len=20, num_inputs=None, seed=0)
    assert len(got.input_ids) == 3 and got.meta["source"].startswith(str(shared.resolve()))


def test_the_default_folder_is_beside_the_current_directory(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "shared" / "data").mkdir(parents=True)
    (tmp_path / "repo").mkdir()
    monkeypatch.chdir(tmp_path / "repo")
    monkeypatch.delenv(DATA_DIR_ENV, raising=False)
    assert sources.shared_data_candidates() == [tmp_path / "shared" / "data"]
    assert resolve_data_dir(None) == ((tmp_path / "shared" / "data").resolve(), "../shared/data")
    (tmp_path / "repo" / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "repo" / "sub")  # started elsewhere: no default folder, the hub is next
    assert resolve_data_dir(None) == (None, "")
