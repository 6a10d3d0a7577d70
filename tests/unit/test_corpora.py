"""Unit tests of attnspec.spectra.data on small files written here (no real corpora needed).

Tokenizers: the real all-MiniLM-L6-v2 WordPiece tokenizer ([CLS] ... [SEP]; skipped when
the weights package is absent) and a tiny byte-level BPE RoBERTa tokenizer built offline
(<s> ... </s>). Expected windows are computed here from the tokenizer itself, never
hard-coded.
"""

from __future__ import annotations

import hashlib
import json
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from attnspec.errors import DataError, InputError
from attnspec.spectra.data.corpus import DATA_DIR_ENV
from attnspec.spectra.data.inputs import Inputs, load_inputs

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers import make_roberta_tokenizer  # noqa: E402

# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def bert_tok(minilm_path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(minilm_path))


@pytest.fixture(scope="session")
def roberta_tok(tmp_path_factory):
    return make_roberta_tokenizer(tmp_path_factory.mktemp("tok"))


@pytest.fixture(params=["bert", "roberta"])
def tok(request):
    return request.getfixturevalue(f"{request.param}_tok")


@pytest.fixture(autouse=True)
def _no_env_data_dir(monkeypatch):
    # The tests choose their data folder explicitly; a developer's ATTNSPEC_DATA_DIR (or a
    # ../shared/data beside the checkout) must not leak in.
    from attnspec.spectra.data import sources

    monkeypatch.delenv(DATA_DIR_ENV, raising=False)
    monkeypatch.setattr(sources, "shared_data_candidates", lambda: [])


def ids(tok, text: str) -> list[int]:
    return list(tok(text, add_special_tokens=False)["input_ids"])


def wrapped(tok, text: str) -> list[int]:
    return list(tok(text)["input_ids"])


def special(tok) -> tuple[list[int], list[int]]:
    """Prefix and suffix ids, from the tokenizer's own encoding of one word."""
    full, plain = wrapped(tok, "movie"), ids(tok, "movie")
    k = next(i for i in range(len(full)) if full[i : i + len(plain)] == plain)
    return full[:k], full[k + len(plain) :]


WORDS = ("lobster", "movie", "attention", "ocean", "friends", "comedy", "story", "music", "world", "rank")


def sentence(i: int, n_words: int) -> str:
    """A varied sentence (distinct numbers keep windows distinguishable)."""
    rng = np.random.default_rng(i)
    return " ".join(f"{WORDS[w]} {i}{j}" for j, w in enumerate(rng.integers(0, len(WORDS), n_words)))


def write_wikitext(path: Path, n_articles: int = 4, paragraphs: int = 3) -> list[str]:
    """A WikiText-style raw file; returns its non-blank lines in order."""
    lines: list[str] = [" "]
    content: list[str] = []
    for a in range(n_articles):
        block = [f" = Article {a} = ", " ", f" {sentence(100 * a, 12)} ", " ", f" = = Section {a} = = ", " "]
        for p in range(paragraphs):
            block += [f" {sentence(100 * a + p + 1, 20)} ", " "]
        # A formula line inside a paragraph (no blank line around it): not an article heading.
        block += [
            f" the value {a} is",
            f" = {a} henry and capacitance C{a} = ",
            f" {sentence(100 * a + 50, 8)} ",
            " ",
            " ",
        ]
        lines += block
        content += [x for x in block if x.strip()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return content


def write_jsonl(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def split_window(window: list[int], prefix: list[int], suffix: list[int]) -> list[int]:
    assert window[: len(prefix)] == prefix
    assert window[len(window) - len(suffix) :] == suffix
    return window[len(prefix) : len(window) - len(suffix)]


# --------------------------------------------------------------------------- special tokens


def test_wrap_matches_tokenizer_own_special_tokens(tok, tmp_path):
    text = "I went and saw this movie last night with a few friends."
    f = tmp_path / "one.txt"
    f.write_text(text + "\n")
    inp = load_inputs(f, tok, seq_len=64, num_inputs=1, seed=0, short_policy="keep")
    assert isinstance(inp, Inputs)
    assert inp.input_ids == [wrapped(tok, text)]
    assert inp.meta["special_tokens"] == tok.num_special_tokens_to_add() == 2


def test_roberta_windows_are_wrapped_in_s_tags(roberta_tok, tmp_path):
    f = tmp_path / "wiki.valid.raw"
    write_wikitext(f)
    inp = load_inputs(f, roberta_tok, seq_len=24, num_inputs=5, seed=1)
    for w in inp.input_ids:
        assert len(w) == 24
        assert roberta_tok.convert_ids_to_tokens([w[0], w[-1]]) == ["<s>", "</s>"]
        assert roberta_tok.bos_token_id not in w[1:-1] and roberta_tok.eos_token_id not in w[1:-1]


def test_bert_windows_are_wrapped_in_cls_sep(bert_tok, tmp_path):
    f = tmp_path / "wiki.valid.raw"
    write_wikitext(f)
    inp = load_inputs(f, bert_tok, seq_len=24, num_inputs=5, seed=1)
    for w in inp.input_ids:
        assert len(w) == 24
        assert bert_tok.convert_ids_to_tokens([w[0], w[-1]]) == ["[CLS]", "[SEP]"]


# --------------------------------------------------------------------------- WikiText packing


@pytest.mark.parametrize("seq_len", [16, 50])
def test_wikitext_pack_windows_are_the_consecutive_pieces_of_the_stream(tok, tmp_path, seq_len):
    f = tmp_path / "wiki.test.raw"
    content = write_wikitext(f)
    prefix, suffix = special(tok)
    width = seq_len - len(prefix) - len(suffix)
    # The stream: every non-blank line (headings included) tokenised and concatenated.
    stream = [t for line in content for t in ids(tok, line)]
    expected = [tuple(stream[k * width : (k + 1) * width]) for k in range(len(stream) // width)]
    assert len(set(expected)) == len(expected)  # the text is varied enough to tell windows apart

    first = load_inputs(f, tok, seq_len=seq_len, num_inputs=1, seed=0)
    assert first.meta["num_available"] == len(expected)
    assert first.meta["tokens"] == len(stream)
    assert first.meta["mode"] == "pack" and first.meta["format"] == "wikitext-raw"
    inp = load_inputs(f, tok, seq_len=seq_len, num_inputs=len(expected), seed=0)
    got = [tuple(split_window(w, prefix, suffix)) for w in inp.input_ids]
    assert all(len(w) == seq_len for w in inp.input_ids)
    assert sorted(got) == sorted(expected)  # every piece exactly once: drawn without replacement


def test_wikitext_pack_keep_adds_the_final_partial_window(tok, tmp_path):
    f = tmp_path / "wiki.valid.raw"
    content = write_wikitext(f, n_articles=2)
    prefix, suffix = special(tok)
    stream = [t for line in content for t in ids(tok, line)]
    seq_len = 40
    width = seq_len - 2
    assert len(stream) % width  # the layout leaves a partial tail
    n_full = len(stream) // width
    inp = load_inputs(f, tok, seq_len=seq_len, num_inputs=n_full + 1, seed=3, short_policy="keep")
    tails = [split_window(w, prefix, suffix) for w in inp.input_ids if len(w) < seq_len]
    assert tails == [stream[n_full * width :]]
    with pytest.raises(DataError, match=f"only {n_full} windows"):
        load_inputs(f, tok, seq_len=seq_len, num_inputs=n_full + 1, seed=3, short_policy="skip")


def test_wikitext_truncate_mode_uses_articles_as_documents(tok, tmp_path):
    f = tmp_path / "wiki.valid.raw"
    content = write_wikitext(f, n_articles=5)
    prefix, suffix = special(tok)
    # Articles start at " = Article a = "; the formula line " = 1 henry ... = " is not a heading.
    articles: list[list[str]] = []
    for line in content:
        if line.startswith(" = Article"):
            articles.append([])
        articles[-1].append(line)
    art_ids = [[t for line in a for t in ids(tok, line)] for a in articles]
    seq_len = 30
    inp = load_inputs(f, tok, seq_len=seq_len, num_inputs=5, seed=0, mode="truncate")
    assert inp.meta["documents"] == 5 and inp.meta["num_available"] == 5
    got = sorted(split_window(w, prefix, suffix) for w in inp.input_ids)
    assert got == sorted(a[: seq_len - 2] for a in art_ids)


def test_wikitext_directory_picks_the_split_file(tok, tmp_path):
    write_wikitext(tmp_path / "wiki.valid.raw", n_articles=2)
    write_wikitext(tmp_path / "wiki.test.raw", n_articles=3)
    valid = load_inputs(tmp_path, tok, seq_len=20, num_inputs=2, seed=0)
    test = load_inputs(tmp_path, tok, seq_len=20, num_inputs=2, seed=0, split="test")
    assert valid.meta["split"] == "validation" and valid.meta["source"].endswith("wiki.valid.raw")
    assert test.meta["split"] == "test" and test.meta["source"].endswith("wiki.test.raw")
    assert valid.meta["num_available"] < test.meta["num_available"]
    with pytest.raises(DataError, match=r"no wiki\.train\.raw .*present: wiki\.test\.raw, wiki\.valid\.raw"):
        load_inputs(tmp_path, tok, seq_len=20, num_inputs=2, seed=0, split="train")


# --------------------------------------------------------------------------- seeds


def test_same_seed_same_windows_and_prefix_property(tok, tmp_path):
    f = tmp_path / "wiki.valid.raw"
    write_wikitext(f, n_articles=6)
    a = load_inputs(f, tok, seq_len=20, num_inputs=8, seed=11)
    b = load_inputs(f, tok, seq_len=20, num_inputs=8, seed=11)
    c = load_inputs(f, tok, seq_len=20, num_inputs=8, seed=12)
    more = load_inputs(f, tok, seq_len=20, num_inputs=12, seed=11)
    assert a.input_ids == b.input_ids and a.meta == b.meta
    assert a.meta["num_available"] >= 30  # so that two seeds agreeing by chance is negligible
    assert c.input_ids != a.input_ids
    assert a.meta["inputs_sha256"] != c.meta["inputs_sha256"]
    assert more.input_ids[:8] == a.input_ids  # more inputs, same seed: the earlier ones are kept
    assert len({tuple(w) for w in more.input_ids}) == 12  # without replacement


def test_draw_is_spread_over_the_whole_source(tok, tmp_path):
    # Not always the first windows: over seeds, every window of a small pool comes first
    # about equally often (6 windows, 300 seeds: each expected 50 times).
    f = tmp_path / "docs.txt"
    texts = [sentence(i, 30) for i in range(6)]
    f.write_text("\n".join(texts) + "\n")
    first = [tuple(load_inputs(f, tok, seq_len=12, num_inputs=1, seed=s).input_ids[0]) for s in range(300)]
    counts = sorted(first.count(w) for w in set(first))
    assert len(counts) == 6
    assert counts[0] >= 25 and counts[-1] <= 80  # binomial(300, 1/6): mean 50, sd 6.5


# --------------------------------------------------------------------------- documents and short policies


def _docs_case(tok, tmp_path, seq_len: int):
    """JSONL documents of assorted lengths around seq_len, their token ids, and the file."""
    texts = [sentence(i, n) for i, n in enumerate([2, 30, 3, 40, 1, 25, 4, 2, 35, 5, 3, 6])]
    texts.append("a")  # a one-token document
    texts.append("")  # an empty document: never a window
    f = tmp_path / "docs.jsonl"
    write_jsonl(f, [{"id": i, "text": t} for i, t in enumerate(texts)])
    return f, [ids(tok, t) for t in texts]


def test_truncate_skip_uses_only_documents_that_fill_seq_len(tok, tmp_path):
    seq_len = 40
    f, doc_ids = _docs_case(tok, tmp_path, seq_len)
    prefix, suffix = special(tok)
    width = seq_len - 2
    long_docs = [d[:width] for d in doc_ids if len(d) >= width]
    assert 0 < len(long_docs) < len(doc_ids)
    inp = load_inputs(f, tok, seq_len=seq_len, num_inputs=len(long_docs), seed=5)
    assert inp.meta["mode"] == "truncate" and inp.meta["short_policy"] == "skip"
    assert inp.meta["num_available"] == len(long_docs)
    assert all(len(w) == seq_len for w in inp.input_ids)
    assert sorted(split_window(w, prefix, suffix) for w in inp.input_ids) == sorted(long_docs)
    with pytest.raises(DataError, match=f"only {len(long_docs)} windows of {seq_len} tokens.*--short-policy"):
        load_inputs(f, tok, seq_len=seq_len, num_inputs=len(long_docs) + 1, seed=5)


def test_truncate_keep_uses_short_documents_at_their_own_length(tok, tmp_path):
    seq_len = 40
    f, doc_ids = _docs_case(tok, tmp_path, seq_len)
    prefix, suffix = special(tok)
    expected = [d[: seq_len - 2] for d in doc_ids if len(d) > 0]
    assert min(len(d) for d in expected) == 1
    inp = load_inputs(f, tok, seq_len=seq_len, num_inputs=len(expected), seed=5, short_policy="keep")
    assert inp.meta["num_available"] == len(expected)
    assert sorted(split_window(w, prefix, suffix) for w in inp.input_ids) == sorted(expected)
    assert inp.meta["input_lengths"]["max"] == seq_len
    assert inp.meta["input_lengths"]["min"] == min(len(d) for d in expected) + 2


def test_truncate_pack_concatenates_short_documents(tok, tmp_path):
    seq_len = 40
    f, doc_ids = _docs_case(tok, tmp_path, seq_len)
    prefix, suffix = special(tok)
    width = seq_len - 2
    long_docs = [d[:width] for d in doc_ids if len(d) >= width]
    short_stream = [t for d in doc_ids if 0 < len(d) < width for t in d]
    packed = [short_stream[k * width : (k + 1) * width] for k in range(len(short_stream) // width)]
    assert len(packed) >= 1
    inp = load_inputs(f, tok, seq_len=seq_len, num_inputs=len(long_docs) + len(packed), seed=2, short_policy="pack")
    assert inp.meta["num_available"] == len(long_docs) + len(packed)
    assert all(len(w) == seq_len for w in inp.input_ids)
    assert sorted(split_window(w, prefix, suffix) for w in inp.input_ids) == sorted(long_docs + packed)


def test_pack_mode_on_documents_cuts_one_stream(tok, tmp_path):
    seq_len = 40
    f, doc_ids = _docs_case(tok, tmp_path, seq_len)
    prefix, suffix = special(tok)
    stream = [t for d in doc_ids for t in d]
    width = seq_len - 2
    expected = [stream[k * width : (k + 1) * width] for k in range(len(stream) // width)]
    inp = load_inputs(f, tok, seq_len=seq_len, num_inputs=len(expected), seed=0, mode="pack")
    assert inp.meta["mode"] == "pack"
    assert sorted(split_window(w, prefix, suffix) for w in inp.input_ids) == sorted(expected)


# --------------------------------------------------------------------------- formats


def test_jsonl_split_filter_and_line_separators_inside_text(tok, tmp_path):
    # U+2028 and U+0085 inside a JSON string must not split the record (str.splitlines would).
    weird = "first part\u2028second part\x85third part " + sentence(1, 20)
    f = tmp_path / "x.jsonl"
    write_jsonl(f, [{"split": "test", "text": weird}, {"split": "train", "text": sentence(2, 20)}])
    f.write_text(f.read_text().replace("\n", "\r\n"))  # CRLF line endings too
    inp = load_inputs(f, tok, seq_len=10, num_inputs=1, seed=0, split="test")
    assert inp.meta["documents"] == 1
    assert inp.input_ids[0] == wrapped(tok, weird)[:9] + wrapped(tok, weird)[-1:]
    both = load_inputs(f, tok, seq_len=10, num_inputs=2, seed=0)
    assert both.meta["documents"] == 2


def test_html_line_breaks_become_spaces(tok, tmp_path):
    text = "A fine movie.<br /><br />The music was beautiful.<BR>The end<br/>here"
    clean = "A fine movie.  The music was beautiful. The end here"
    f = tmp_path / "r.jsonl"
    write_jsonl(f, [{"text": text}])
    inp = load_inputs(f, tok, seq_len=200, num_inputs=1, seed=0, short_policy="keep")
    assert inp.input_ids == [wrapped(tok, clean)]
    assert "<br />" in inp.meta["text_cleaning"]


def test_csv_text_column_and_only_text_column(tok, tmp_path):
    texts = [sentence(i, 15) for i in range(4)]
    a = tmp_path / "a.csv"
    a.write_text("id,label,Text\n" + "".join(f'{i},pos,"{t}"\n' for i, t in enumerate(texts)))
    b = tmp_path / "b.tsv"
    b.write_text("id\treview\n" + "".join(f"{i}\t{t}\n" for i, t in enumerate(texts)))
    for f, fmt in ((a, "csv"), (b, "tsv")):
        inp = load_inputs(f, tok, seq_len=12, num_inputs=4, seed=0)
        assert inp.meta["format"] == fmt and inp.meta["documents"] == 4
        assert sorted(inp.input_ids) == sorted(wrapped(tok, t)[:11] + wrapped(tok, t)[-1:] for t in texts)
    c = tmp_path / "c.csv"
    c.write_text("title,body\n" + "".join(f'x{i},"{t}"\n' for i, t in enumerate(texts)))
    with pytest.raises(DataError, match=r"no column named 'text' and 2 other text columns \(columns: title, body\)"):
        load_inputs(c, tok, seq_len=12, num_inputs=1, seed=0)


def test_plain_text_one_document_per_line(tok, tmp_path):
    texts = [sentence(i, 15) for i in range(5)]
    f = tmp_path / "docs.txt"
    f.write_text("\n\n".join(texts) + "\n   \n")
    inp = load_inputs(f, tok, seq_len=12, num_inputs=5, seed=0)
    assert inp.meta["format"] == "text" and inp.meta["documents"] == 5
    assert sorted(inp.input_ids) == sorted(wrapped(tok, t)[:11] + wrapped(tok, t)[-1:] for t in texts)


def _acl_layout(root: Path, texts: dict[str, list[tuple[int, str]]]) -> None:
    for split in ("train", "test"):
        for label, items in texts.items():
            d = root / split / label
            d.mkdir(parents=True)
            for rid, t in items:
                (d / f"{rid}_{7 if label == 'pos' else 2}.txt").write_text(
                    t + (" " + split if split == "train" else "")
                )


def test_aclimdb_layout_matches_jsonl_of_the_same_reviews(tok, tmp_path):
    # Review ids 0, 2, 10: numeric order (0, 2, 10), not name order (0, 10, 2); pos before neg.
    texts = {
        "pos": [(10, sentence(3, 25)), (0, sentence(1, 25)), (2, sentence(2, 25))],
        "neg": [(1, sentence(4, 25) + "<br /><br />" + sentence(5, 5))],
    }
    root = tmp_path / "aclImdb"
    _acl_layout(root, texts)
    ordered = [t for label in ("pos", "neg") for _, t in sorted(texts[label])]
    j = tmp_path / "same.jsonl"
    write_jsonl(j, [{"text": t} for t in ordered])
    from_root = load_inputs(root, tok, seq_len=16, num_inputs=4, seed=9)
    from_split = load_inputs(root / "test", tok, seq_len=16, num_inputs=4, seed=9)
    from_jsonl = load_inputs(j, tok, seq_len=16, num_inputs=4, seed=9)
    assert from_root.meta["format"] == "aclimdb" and from_root.meta["split"] == "test"
    assert from_root.input_ids == from_split.input_ids == from_jsonl.input_ids
    train = load_inputs(root, tok, seq_len=16, num_inputs=4, seed=9, split="train")
    assert train.meta["split"] == "train" and train.meta["files"] == 4
    with pytest.raises(InputError, match="split 'dev' is not in aclImdb directory"):
        load_inputs(root, tok, seq_len=16, num_inputs=1, seed=0, split="dev")


def test_meta_is_json_and_records_the_source(tok, tmp_path):
    f = tmp_path / "wiki.valid.raw"
    write_wikitext(f)
    inp = load_inputs(f, tok, seq_len=20, num_inputs=3, seed=4)
    meta = json.loads(json.dumps(inp.meta))
    for key in (
        "corpus",
        "split",
        "source",
        "format",
        "mode",
        "short_policy",
        "seq_len",
        "num_inputs",
        "num_available",
        "seed",
        "sha256",
    ):
        assert key in meta
    assert meta["sha256"] == hashlib.sha256(f.read_bytes()).hexdigest()
    assert meta["seq_len"] == 20 and meta["num_inputs"] == 3 and meta["seed"] == 4
    assert meta["split"] == "validation" and meta["source"] == str(f.resolve())


# --------------------------------------------------------------------------- names, data_dir, hub


def _data_folder(root: Path) -> Path:
    (root / "wikitext103").mkdir(parents=True)
    write_wikitext(root / "wikitext103" / "wiki.valid.raw", n_articles=2)
    write_wikitext(root / "wikitext103" / "wiki.test.raw", n_articles=3)
    (root / "imdb").mkdir()
    write_jsonl(root / "imdb" / "part_01.jsonl", [{"split": "test", "text": sentence(i, 30)} for i in range(3)])
    write_jsonl(root / "imdb" / "part_02.jsonl", [{"split": "test", "text": sentence(i + 3, 30)} for i in range(2)])
    return root


def test_names_resolve_to_the_data_dir_or_the_environment(tok, tmp_path, monkeypatch):
    d = _data_folder(tmp_path / "data")
    wiki = load_inputs("wiki103", tok, seq_len=20, num_inputs=2, seed=0, data_dir=d)
    assert wiki.meta["corpus"] == "wiki103" and wiki.meta["split"] == "validation" and wiki.meta["mode"] == "pack"
    assert wiki.meta["source"] == str((d / "wikitext103" / "wiki.valid.raw").resolve())
    test = load_inputs("wikitext-103", tok, seq_len=20, num_inputs=2, seed=0, data_dir=d, split="test")
    assert test.meta["source"].endswith("wiki.test.raw")
    monkeypatch.setenv(DATA_DIR_ENV, str(d))
    imdb = load_inputs("imdb", tok, seq_len=20, num_inputs=5, seed=0)
    assert imdb.meta["corpus"] == "imdb" and imdb.meta["split"] == "test" and imdb.meta["mode"] == "truncate"
    assert imdb.meta["documents"] == 5 and imdb.meta["files"] == 2 and len(imdb.meta["sha256_files"]) == 2


def test_name_without_local_copy_and_without_datasets_names_the_way_out(tok, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "datasets", None)  # import fails as if not installed
    d = _data_folder(tmp_path / "data")
    with pytest.raises(DataError) as e:
        load_inputs("imdb", tok, seq_len=20, num_inputs=1, seed=0, split="train", data_dir=d)
    msg = str(e.value)
    assert "\n" not in msg
    for needle in ("'imdb'", "'train'", "not installed", "--data PATH", "--data-dir", DATA_DIR_ENV):
        assert needle in msg
    with pytest.raises(DataError, match="neither --data-dir nor ATTNSPEC_DATA_DIR is set, and no ../shared/data"):
        load_inputs("wiki103", tok, seq_len=20, num_inputs=1, seed=0)


def _fake_datasets(monkeypatch, rows_or_exc, calls):
    mod = types.ModuleType("datasets")

    def load_dataset(repo, config=None, split=None):
        calls.append((repo, config, split))
        if isinstance(rows_or_exc, BaseException):
            raise rows_or_exc
        return {"text": rows_or_exc}

    mod.load_dataset = load_dataset
    monkeypatch.setitem(sys.modules, "datasets", mod)


def test_hub_unreachable_gives_a_one_line_data_error(tok, monkeypatch):
    calls: list = []
    _fake_datasets(monkeypatch, ConnectionError("Couldn't reach 'Salesforce/wikitext' on the Hub\n(offline)"), calls)
    with pytest.raises(DataError) as e:
        load_inputs("wiki103", tok, seq_len=20, num_inputs=1, seed=0, split="valid")
    assert calls == [("Salesforce/wikitext", "wikitext-103-raw-v1", "validation")]
    msg = str(e.value)
    assert "\n" not in msg and "ConnectionError" in msg and "--data PATH" in msg


def test_hub_rows_are_processed_like_local_files(tok, tmp_path, monkeypatch):
    # The hub's wikitext rows are the raw file's lines (with their "\n"); results must agree.
    f = tmp_path / "wiki.test.raw"
    write_wikitext(f, n_articles=3)
    rows = [line + "\n" if line.strip() else "" for line in f.read_text().split("\n")]
    calls: list = []
    _fake_datasets(monkeypatch, rows, calls)
    hub = load_inputs("wiki103", tok, seq_len=20, num_inputs=4, seed=7, split="test")
    local = load_inputs(f, tok, seq_len=20, num_inputs=4, seed=7)
    assert calls == [("Salesforce/wikitext", "wikitext-103-raw-v1", "test")]
    assert hub.input_ids == local.input_ids
    assert hub.meta["source"] == "hub:Salesforce/wikitext/wikitext-103-raw-v1" and hub.meta["sha256"] is None
    calls.clear()
    _fake_datasets(monkeypatch, ["a<br />b " + sentence(1, 30)], calls)
    imdb = load_inputs("imdb", tok, seq_len=20, num_inputs=1, seed=0)
    assert calls == [("stanfordnlp/imdb", None, "test")]
    assert imdb.input_ids[0] == wrapped(tok, "a b " + sentence(1, 30))[:19] + wrapped(tok, "x")[-1:]


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"seq_len": 1}, r"seq_len must be an integer >= 2, got 1"),
        ({"seq_len": 0}, r"seq_len must be an integer >= 2, got 0"),
        ({"seq_len": 2}, r"seq_len must be >= 3 for this tokenizer \(it adds 2 special tokens\), got 2"),
        ({"seq_len": 12.5}, r"seq_len must be an integer >= 2, got 12.5"),
        ({"num_inputs": 0}, r"num_inputs must be an integer >= 1, got 0"),
        ({"num_inputs": -3}, r"num_inputs must be an integer >= 1, got -3"),
        ({"seed": -1}, r"seed must be an integer >= 0, got -1"),
        ({"short_policy": "pad"}, r"short_policy must be one of skip, keep, pack, got 'pad'"),
        ({"mode": "stride"}, r"mode must be one of pack, truncate .*got 'stride'"),
    ],
)
def test_bad_parameters_raise_input_error(tok, tmp_path, kwargs, match):
    f = tmp_path / "wiki.valid.raw"
    write_wikitext(f)
    args = {"seq_len": 20, "num_inputs": 1, "seed": 0} | kwargs
    with pytest.raises(InputError, match=match):
        load_inputs(f, tok, **args)


def test_bad_split_names(tok, tmp_path):
    with pytest.raises(
        InputError, match="split 'dev' is not a split of wiki103; allowed: valid, validation, test, train"
    ):
        load_inputs("wiki103", tok, seq_len=20, num_inputs=1, seed=0, split="dev")
    f = tmp_path / "docs.txt"
    f.write_text(sentence(0, 30) + "\n")
    with pytest.raises(InputError, match="split 'test' cannot be applied to plain-text file"):
        load_inputs(f, tok, seq_len=20, num_inputs=1, seed=0, split="test")
    w = tmp_path / "wiki.valid.raw"
    write_wikitext(w)
    with pytest.raises(InputError, match="split 'test' does not match WikiText file"):
        load_inputs(w, tok, seq_len=20, num_inputs=1, seed=0, split="test")


def _bad_sources(tmp: Path) -> dict[str, tuple[Path | str, str]]:
    empty = tmp / "empty.txt"
    empty.write_text("")
    blank = tmp / "blank.jsonl"
    blank.write_text("\n  \n\n")
    binary = tmp / "latin1.txt"
    binary.write_bytes("caf\xe9 au lait\n".encode("latin-1"))
    no_text = tmp / "notext.jsonl"
    write_jsonl(no_text, [{"text": "fine"}, {"review": "no text field here"}])
    not_json = tmp / "broken.jsonl"
    not_json.write_text('{"text": "fine"}\n{"text": "unterminated\n')
    nonstring = tmp / "nonstring.jsonl"
    write_jsonl(nonstring, [{"text": 42}])
    nodir = tmp / "emptydir"
    nodir.mkdir()
    folder = tmp / "shared"
    (folder / "imdb").mkdir(parents=True)
    return {
        "unknown name": ("wiki", r"data 'wiki' is neither a known corpus name \(imdb, wiki103\) nor an existing file"),
        "missing path": (str(tmp / "nope.txt"), r"nope\.txt' is neither a known corpus name"),
        "empty file": (empty, r"empty\.txt' is empty"),
        "blank lines only": (blank, r"blank\.jsonl' is empty"),
        "not utf-8": (binary, r"latin1\.txt': not UTF-8 text \(invalid byte at offset 3\)"),
        "jsonl without text": (
            no_text,
            r"notext\.jsonl' line 2 has no 'text' field; JSONL records need a string field 'text'",
        ),
        "invalid json": (not_json, r"broken\.jsonl' line 2 is not valid JSON"),
        "non-string text": (nonstring, r"line 1 has a 'text' field that is not a string"),
        "unrecognised directory": (nodir, r"emptydir' holds no recognised corpus; allowed: wiki\.<split>\.raw"),
        "data folder as path": (
            folder,
            r"is a data folder, not a corpus: use --data wiki103 or --data imdb with --data-dir",
        ),
    }


@pytest.mark.parametrize(
    "case",
    [
        "unknown name",
        "missing path",
        "empty file",
        "blank lines only",
        "not utf-8",
        "jsonl without text",
        "invalid json",
        "non-string text",
        "unrecognised directory",
        "data folder as path",
    ],
)
def test_bad_sources_raise_one_line_data_error(roberta_tok, tmp_path, case):
    data, match = _bad_sources(tmp_path)[case]
    with pytest.raises(DataError, match=match) as e:
        load_inputs(data, roberta_tok, seq_len=20, num_inputs=1, seed=0)
    assert "\n" not in str(e.value)


def test_unreadable_file_and_missing_data_dir(roberta_tok, tmp_path, monkeypatch):
    f = tmp_path / "docs.txt"
    f.write_text(sentence(0, 30) + "\n")

    def deny(self):
        raise PermissionError(13, "Permission denied", str(self))

    with monkeypatch.context() as m:
        m.setattr(Path, "read_bytes", deny)
        with pytest.raises(DataError, match=r"cannot read data file .*docs\.txt': Permission denied"):
            load_inputs(f, roberta_tok, seq_len=20, num_inputs=1, seed=0)
    with pytest.raises(DataError, match=r"data folder .*nowhere' \(from --data-dir\) does not exist"):
        load_inputs("imdb", roberta_tok, seq_len=20, num_inputs=1, seed=0, data_dir=tmp_path / "nowhere")
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "gone"))
    with pytest.raises(DataError, match=r"gone' \(from ATTNSPEC_DATA_DIR\) does not exist"):
        load_inputs("imdb", roberta_tok, seq_len=20, num_inputs=1, seed=0)


def test_errors_reach_the_cli_as_one_line_and_exit_code_1(roberta_tok, tmp_path):
    # The spectrum command calls load_inputs inside user_errors(); this is that path.
    import typer
    from typer.testing import CliRunner

    from attnspec.cli._common import user_errors

    app = typer.Typer()

    @app.command()
    def load(data: str, seq_len: int = 20, num: int = 1) -> None:
        with user_errors():
            load_inputs(data, roberta_tok, seq_len=seq_len, num_inputs=num, seed=0)

    empty = tmp_path / "empty.txt"
    empty.write_text("")
    for args, needle in (
        ([str(empty)], "is empty"),
        ([str(tmp_path / "x.jsonl")], "neither a known corpus name"),
        ([str(empty), "--seq-len", "1"], "seq_len must be an integer >= 2, got 1"),
        ([str(empty), "--num", "0"], "num_inputs must be an integer >= 1, got 0"),
    ):
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 1, res.output
        out = res.output.strip()
        assert out.startswith("error:") and needle in out and "Traceback" not in out


def test_split_filter_that_matches_nothing_is_a_data_error(roberta_tok, tmp_path):
    j = tmp_path / "x.jsonl"
    write_jsonl(j, [{"split": "test", "text": sentence(0, 30)}])
    c = tmp_path / "x.csv"
    c.write_text(f'split,text\ntest,"{sentence(1, 30)}"\ntrain,"{sentence(2, 30)}"\n')
    for f in (j, c):
        with pytest.raises(DataError, match=r"contains no text for split 'dev'"):
            load_inputs(f, roberta_tok, seq_len=20, num_inputs=1, seed=0, split="dev")
    got = load_inputs(c, roberta_tok, seq_len=20, num_inputs=1, seed=0, split="train")
    assert got.meta["documents"] == 1 and got.meta["split"] == "train"
    assert got.input_ids[0][1:-1] == ids(roberta_tok, sentence(2, 30))[:18]


# --------------------------------------------------------------------------- lazy selection (truncate mode)


def _eager_rule(tok, texts, width, num_inputs, seed, keep=False):
    """The documented rule computed the slow way: tokenise everything, visit the documents in
    default_rng(seed).permutation(D) order, take the first num_inputs acceptable ones."""
    enc = [ids(tok, t) for t in texts]
    order = np.random.default_rng(seed).permutation(len(texts))
    ok = [d for d in order.tolist() if len(enc[d]) >= width or (keep and len(enc[d]) > 0)]
    return [enc[d][:width] for d in ok[:num_inputs]], len(ok)


@pytest.mark.parametrize("keep", [False, True])
def test_lazy_selection_follows_the_seeded_document_order(roberta_tok, tmp_path, monkeypatch, keep):
    from attnspec.spectra.data import selection

    tok = roberta_tok
    rng = np.random.default_rng(4)
    texts = [sentence(i, int(n)) for i, n in enumerate(rng.integers(1, 40, size=300))] + [""] * 20
    texts = [texts[i] for i in rng.permutation(len(texts))]  # empty documents: never a window
    f = tmp_path / "docs.jsonl"
    write_jsonl(f, [{"text": t} for t in texts])
    seq_len, k, seed = 40, 7, 11
    prefix, suffix = special(tok)
    policy = "keep" if keep else "skip"
    expected, total = _eager_rule(tok, texts, seq_len - 2, k, seed, keep)
    assert k < total < len(texts)
    lazy = load_inputs(f, tok, seq_len=seq_len, num_inputs=k, seed=seed, short_policy=policy, selection="documents")
    assert [split_window(w, prefix, suffix) for w in lazy.input_ids] == expected
    m = lazy.meta
    assert not m["num_available_exact"] and k <= m["num_available"] <= total and m["documents_tokenised"] < len(texts)
    # The exact count tokenises the rest and changes nothing else.
    counted = load_inputs(
        f,
        tok,
        seq_len=seq_len,
        num_inputs=k,
        seed=seed,
        short_policy=policy,
        count_available=True,
        selection="documents",
    )
    assert counted.input_ids == lazy.input_ids and counted.meta["inputs_sha256"] == m["inputs_sha256"]
    assert counted.meta["num_available"] == total and counted.meta["num_available_exact"]
    # The chunk sizes are an implementation detail: smaller chunks, same windows; more
    # inputs with the same seed keep the earlier ones as a prefix.
    monkeypatch.setattr(selection, "_FIRST_CHUNK", 1)
    assert (
        load_inputs(
            f, tok, seq_len=seq_len, num_inputs=k, seed=seed, short_policy=policy, selection="documents"
        ).input_ids
        == lazy.input_ids
    )
    more = load_inputs(f, tok, seq_len=seq_len, num_inputs=k + 5, seed=seed, short_policy=policy, selection="documents")
    assert more.input_ids[:k] == lazy.input_ids
    with pytest.raises(DataError, match=f"only {total} windows"):
        load_inputs(
            f, tok, seq_len=seq_len, num_inputs=total + 1, seed=seed, short_policy=policy, selection="documents"
        )
