"""The default draw ("pool") and the on-disk token counts that make it cheap.

The rule is computed here independently (tokenise everything, pool the acceptable
documents in corpus order, draw ``default_rng(seed).permutation(M)[:k]``) and compared
with ``load_inputs`` on a cold cache, a warm cache and every kind of bad cache; the real
corpora's digests from the implementation before these changes are checked in
tests/integration/test_corpora_real.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from attnspec.errors import InputError
from attnspec.spectra.data import inputs as inputs_mod
from attnspec.spectra.data import selection
from attnspec.spectra.data import token_counts as token_lengths
from attnspec.spectra.data.inputs import load_inputs

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_corpora import ids, sentence, special, split_window, write_jsonl  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers import make_roberta_tokenizer  # noqa: E402


@pytest.fixture(scope="module")
def tok(tmp_path_factory):
    return make_roberta_tokenizer(tmp_path_factory.mktemp("tok"))


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    d = tmp_path / "cache"
    monkeypatch.setenv(token_lengths.CACHE_ENV, str(d))
    return d


@pytest.fixture
def corpus(tmp_path) -> tuple[Path, list[str]]:
    rng = np.random.default_rng(8)
    texts = [sentence(i, int(n)) for i, n in enumerate(rng.integers(1, 40, size=240))] + [""] * 10
    texts = [texts[i] for i in rng.permutation(len(texts))]
    f = tmp_path / "docs.jsonl"
    write_jsonl(f, [{"text": t} for t in texts])
    return f, texts


def pool_rule(tok, texts, width, k, seed, keep=False):
    enc = [ids(tok, t) for t in texts]
    pool = [d for d in range(len(texts)) if len(enc[d]) >= width or (keep and len(enc[d]) > 0)]
    chosen = np.random.default_rng(seed).permutation(len(pool))[:k]
    return [enc[pool[i]][:width] for i in chosen.tolist()], len(pool)


class Counting:
    """Wraps the tokenising of attnspec.spectra.data (bound in inputs and selection) to count the
    segments it is asked to tokenise."""

    def __init__(self, monkeypatch) -> None:
        self.segments = 0
        real = selection._tokenize

        def wrapped(tokenizer, segments):
            self.segments += len(segments)
            return real(tokenizer, segments)

        for module in (inputs_mod, selection):  # every module that binds the name
            monkeypatch.setattr(module, "_tokenize", wrapped)


def windows(inp, tok):
    prefix, suffix = special(tok)
    return [split_window(w, prefix, suffix) for w in inp.input_ids]


@pytest.mark.parametrize("keep", [False, True])
def test_pool_draw_cold_and_warm_equals_the_rule(tok, corpus, cache, monkeypatch, keep):
    f, texts = corpus
    seq_len, k, seed = 40, 9, 3
    policy = "keep" if keep else "skip"
    expected, total = pool_rule(tok, texts, seq_len - 2, k, seed, keep)
    assert k < total < len(texts)
    counting = Counting(monkeypatch)
    cold = load_inputs(f, tok, seq_len=seq_len, num_inputs=k, seed=seed, short_policy=policy)
    assert windows(cold, tok) == expected
    assert counting.segments == len(texts)  # everything once, nothing twice
    assert cold.meta["token_counts"] == "computed" and cold.meta["documents_tokenised"] == len(texts)
    assert cold.meta["num_available"] == total and cold.meta["num_available_exact"]
    assert cold.meta["selection_name"] == "pool"
    counting.segments = 0
    warm = load_inputs(f, tok, seq_len=seq_len, num_inputs=k, seed=seed, short_policy=policy)
    assert warm.input_ids == cold.input_ids and warm.meta["inputs_sha256"] == cold.meta["inputs_sha256"]
    assert counting.segments == k  # only the documents drawn
    assert warm.meta["token_counts"] == "cache" and warm.meta["documents_tokenised"] == k
    assert warm.meta["num_available"] == total and warm.meta["tokens"] == cold.meta["tokens"]
    # The counts do not depend on seq_len: another length uses the same file.
    other, _ = pool_rule(tok, texts, 20 - 2, 4, seed, keep)
    assert windows(load_inputs(f, tok, seq_len=20, num_inputs=4, seed=seed, short_policy=policy), tok) == other
    assert len(list((cache / "token-lengths").glob("*.npz"))) == 1
    # More inputs with the same seed keep the earlier ones first; "all" is every window.
    more = load_inputs(f, tok, seq_len=seq_len, num_inputs=k + 4, seed=seed, short_policy=policy)
    assert more.input_ids[:k] == cold.input_ids
    everything = load_inputs(f, tok, seq_len=seq_len, num_inputs=None, seed=seed, short_policy=policy)
    assert windows(everything, tok) == pool_rule(tok, texts, seq_len - 2, total, seed, keep)[0]


def _cache_file(cache: Path) -> Path:
    (path,) = (cache / "token-lengths").glob("*.npz")
    return path


@pytest.mark.parametrize("damage", ["truncated", "garbage", "digest", "key", "length"])
def test_a_damaged_cache_file_is_ignored_and_rewritten(tok, corpus, cache, damage):
    f, texts = corpus
    first = load_inputs(f, tok, seq_len=30, num_inputs=6, seed=1)
    path = _cache_file(cache)
    good = np.load(path)
    lengths, key = good["lengths"], str(good["key"])
    if damage == "truncated":
        path.write_bytes(path.read_bytes()[:100])
    elif damage == "garbage":
        path.write_bytes(b"not an npz at all")
    elif damage == "digest":  # a bit flipped in the counts: the stored digest does not match them
        bad = lengths.copy()
        bad[0] ^= 1
        np.savez(path, key=np.asarray(key), lengths=bad, sha256=good["sha256"])
    elif damage == "key":
        np.savez(path, key=np.asarray("0" * 64), lengths=lengths, sha256=good["sha256"])
    else:
        np.savez(
            path, key=np.asarray(key), lengths=lengths[:-1], sha256=np.asarray(token_lengths._digest(lengths[:-1]))
        )
    again = load_inputs(f, tok, seq_len=30, num_inputs=6, seed=1)
    assert again.input_ids == first.input_ids and again.meta["token_counts"] == "computed"
    assert load_inputs(f, tok, seq_len=30, num_inputs=6, seed=1).meta["token_counts"] == "cache"  # rewritten


def test_wrong_counts_with_a_valid_digest_are_caught_on_the_drawn_documents(tok, corpus, cache):
    f, texts = corpus
    truth = load_inputs(f, tok, seq_len=30, num_inputs=6, seed=2)
    path = _cache_file(cache)
    z = np.load(path)
    wrong = z["lengths"] + 100  # every document now looks long enough, and none has its count
    np.savez(path, key=z["key"], lengths=wrong, sha256=np.asarray(token_lengths._digest(wrong)))
    got = load_inputs(f, tok, seq_len=30, num_inputs=6, seed=2)
    assert got.input_ids == truth.input_ids and got.meta["num_available"] == truth.meta["num_available"]
    assert got.meta["token_counts"].startswith("computed (the cached counts disagreed")
    np.testing.assert_array_equal(np.load(path)["lengths"], z["lengths"])  # the true counts are back


def test_a_changed_corpus_or_tokenizer_is_another_cache_entry(tok, corpus, cache, tmp_path, bert_or_none):
    f, texts = corpus
    load_inputs(f, tok, seq_len=30, num_inputs=3, seed=0)
    texts[5] = texts[5] + " and one more sentence"
    g = tmp_path / "edited.jsonl"
    write_jsonl(g, [{"text": t} for t in texts])
    edited = load_inputs(g, tok, seq_len=30, num_inputs=3, seed=0)
    assert edited.meta["token_counts"] == "computed"
    assert len(list((cache / "token-lengths").glob("*.npz"))) == 2
    if bert_or_none is not None:
        assert token_lengths.tokenizer_fingerprint(bert_or_none) != token_lengths.tokenizer_fingerprint(tok)
        assert load_inputs(f, bert_or_none, seq_len=30, num_inputs=3, seed=0).meta["token_counts"] == "computed"


@pytest.fixture
def bert_or_none(request):
    try:
        return request.getfixturevalue("bert_tok")
    except pytest.skip.Exception:
        return None


@pytest.fixture(scope="session")
def bert_tok(minilm_path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(minilm_path))


def test_no_cache_when_off_unwritable_or_without_a_serialisation(tok, corpus, tmp_path, monkeypatch):
    f, texts = corpus
    expected, _ = pool_rule(tok, texts, 28, 5, 4)
    monkeypatch.setenv(token_lengths.CACHE_ENV, "off")
    off = load_inputs(f, tok, seq_len=30, num_inputs=5, seed=4)
    assert windows(off, tok) == expected and off.meta["token_counts"].startswith("computed (not cached: ")
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    monkeypatch.setenv(token_lengths.CACHE_ENV, str(blocker / "cache"))  # a folder under a file
    unwritable = load_inputs(f, tok, seq_len=30, num_inputs=5, seed=4)
    assert windows(unwritable, tok) == expected
    assert unwritable.meta["token_counts"].startswith(f"computed (not cached: {blocker / 'cache' / 'token-lengths'}")
    assert token_lengths.tokenizer_fingerprint(object()) is None


def test_cache_folder_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv(token_lengths.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert token_lengths.cache_dir() == tmp_path / "xdg" / "attnspec"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert token_lengths.cache_dir() == Path.home() / ".cache" / "attnspec"
    monkeypatch.setenv(token_lengths.CACHE_ENV, str(tmp_path / "mine"))
    assert token_lengths.cache_dir() == tmp_path / "mine"
    monkeypatch.setenv(token_lengths.CACHE_ENV, "off")
    assert token_lengths.cache_dir() is None
    monkeypatch.setenv(token_lengths.CACHE_ENV, "")  # empty means unset
    assert token_lengths.cache_dir() == Path.home() / ".cache" / "attnspec"


def test_selection_names_are_checked_before_any_work(tok, corpus, tmp_path):
    f, _ = corpus
    with pytest.raises(InputError, match=r"^selection must be one of pool, documents, got 'random'$"):
        load_inputs(f, tok, seq_len=30, num_inputs=3, seed=0, selection="random")
    with pytest.raises(InputError, match=r"selection 'documents' needs one window per document .* mode pack"):
        load_inputs(f, tok, seq_len=30, num_inputs=3, seed=0, selection="documents", mode="pack")
    with pytest.raises(InputError, match=r"short_policy pack; use selection 'pool'"):
        load_inputs(f, tok, seq_len=30, num_inputs=3, seed=0, selection="documents", short_policy="pack")
    # the spectrum job refuses the cases it can tell from its options before loading a model
    from attnspec.spectra.config import SpectrumConfig

    for kw in ({"data": "wiki103"}, {"data": "imdb", "short_policy": "pack"}):
        with pytest.raises(InputError, match=r"^--selection documents needs one window per document"):
            SpectrumConfig(selection="documents", **kw).validate()
    SpectrumConfig(data="imdb", selection="documents").validate()


def test_pool_and_documents_draw_differently_and_say_so(tok, corpus):
    f, _ = corpus
    pool = load_inputs(f, tok, seq_len=30, num_inputs=8, seed=0)
    docs = load_inputs(f, tok, seq_len=30, num_inputs=8, seed=0, selection="documents")
    assert pool.meta["selection_name"] == "pool" and docs.meta["selection_name"] == "documents"
    assert pool.meta["selection"] != docs.meta["selection"]
    assert pool.input_ids != docs.input_ids  # the two rules are not the same draw


def test_the_rule_of_a_record_is_read_from_old_and_new_records() -> None:
    from attnspec.spectra.data.selection import POOL_RULE, selection_of

    assert selection_of({"selection_name": "documents", "selection": POOL_RULE}) == "documents"
    assert selection_of({"selection": POOL_RULE}) == "pool"
    assert (
        selection_of({"selection": POOL_RULE + ", drawn at seq_len 512 and cut to the first 30 text tokens"}) == "pool"
    )
    assert (
        selection_of({"selection": "documents in the order numpy.random.default_rng(seed).permutation(documents)"})
        == "documents"
    )
    assert selection_of({}) is None and selection_of({"selection": "something else"}) is None
