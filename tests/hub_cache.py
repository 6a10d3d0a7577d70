"""A warm Hugging Face cache built offline: what a user has after downloading once.

``build_warm_hf_home(root, data_dir)`` fills ``root`` (to be used as ``HF_HOME``) with

- ``hub/models--roberta-base`` and ``hub/models--roberta-large``: tiny randomly initialised
  RoBERTa encoders in the hub cache layout (``refs/main`` holding a commit hash,
  ``snapshots/<commit>/<file>`` symlinks to content-addressed ``blobs/<sha256>``), with the
  files the real repositories hold (config.json, model.safetensors, vocab.json, merges.txt,
  tokenizer.json). ``roberta-large`` has RoBERTa-large's shape, 24 layers x 16 heads (with a
  small hidden size); both allow n = 512 (``max_position_embeddings = 514``). The tokenizer
  is the small byte-level BPE of ``helpers.make_roberta_tokenizer`` (RoBERTa's special tokens
  and post-processor), because no real RoBERTa vocabulary can be had offline.
- ``hub/models--distilroberta-base``: a partial download, config.json only.
- ``datasets/Salesforce___wikitext/wikitext-103-raw-v1/0.0.0/<commit>/`` and
  ``datasets/stanfordnlp___imdb/plain_text/0.0.0/<commit>/``: the processed ``datasets``
  cache that one ``load_dataset`` with hub access leaves behind, written by a
  ``datasets`` builder named like the hub one (same repository id, config name, version
  and the Arrow files ``<name>-<split>.arrow`` with ``dataset_info.json``), so that
  ``load_dataset`` resolves it with ``HF_HUB_OFFLINE=1`` exactly as after a real download.

  Rows are the real text of ``data_dir`` in the hub's row format: WikiText rows are the raw
  file's lines with their ``"\\n"`` (blank lines ``""``); IMDB rows are ``{"text", "label"}``
  in the order of the local JSONL files. WikiText's ``validation`` and ``test`` splits are
  the real files. Its ``train`` split (540 MB on the hub, not available offline) is stood in
  for by the text of ``wiki.test.raw``; tests that use it say so. IMDB holds only ``test``
  (the local copy has no other split), so asking for ``train`` exercises the missing-split
  error.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

# Commit hashes of the cached repositories (any 40-hex string; recorded as the revision).
MODEL_REVISIONS = {
    "roberta-base": "e2da8e2f811d1448a5b465c236feacd80ffbac7b",
    "roberta-large": "722cf37b1afa9454edce342e7895e588b6ff1d59",
    "distilroberta-base": "fb53ab8802853c8e4fbdbcd0529f21fc6f459b2b",
}
DATASET_REVISIONS = {
    "Salesforce/wikitext": "b08601e04326c79dfdd32d625aee71d232d685c3",
    "stanfordnlp/imdb": "e6281661ce1c48d982bc483cf8a173c1bbeb5d31",
}
# Shapes: roberta-base stand-in is tiny; roberta-large keeps RoBERTa-large's 24 x 16 heads.
SHAPES = {
    "roberta-base": {"num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 32},
    "roberta-large": {"num_hidden_layers": 24, "num_attention_heads": 16, "hidden_size": 64},
}


def _put_blob(repo_dir: Path, revision: str, filename: str, data: bytes) -> None:
    """Store ``data`` as blobs/<sha256> and link snapshots/<revision>/<filename> to it (hub layout)."""
    digest = hashlib.sha256(data).hexdigest()
    blob = repo_dir / "blobs" / digest
    blob.parent.mkdir(parents=True, exist_ok=True)
    blob.write_bytes(data)
    link = repo_dir / "snapshots" / revision / filename
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(os.path.relpath(blob, link.parent))


def _put_model(hub: Path, repo_id: str, files_dir: Path, only: tuple[str, ...] | None = None) -> Path:
    revision = MODEL_REVISIONS[repo_id]
    repo_dir = hub / ("models--" + repo_id.replace("/", "--"))
    for f in sorted(files_dir.iterdir()):
        if f.is_file() and (only is None or f.name in only):
            _put_blob(repo_dir, revision, f.name, f.read_bytes())
    (repo_dir / "refs").mkdir(parents=True, exist_ok=True)
    (repo_dir / "refs" / "main").write_text(revision)
    return repo_dir / "snapshots" / revision


def _model_files(work: Path, name: str, tokenizer) -> Path:
    """config.json + model.safetensors + the tokenizer files of a tiny random RoBERTa."""
    import torch
    from transformers import RobertaConfig, RobertaModel

    torch.manual_seed(0)  # test-only: a fixed initialisation
    shape = SHAPES[name]
    cfg = RobertaConfig(
        vocab_size=len(tokenizer),
        intermediate_size=2 * shape["hidden_size"],
        max_position_embeddings=514,
        pad_token_id=1,
        type_vocab_size=1,
        **shape,
    )
    out = work / name
    RobertaModel(cfg, add_pooling_layer=False).save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    # The real repositories carry no tokenizer_config.json / special_tokens_map.json; the
    # tokenizer class then comes from config.json's model_type, as for roberta-base itself.
    for extra in ("tokenizer_config.json", "special_tokens_map.json", "chat_template.jinja"):
        (out / extra).unlink(missing_ok=True)
    return out


def _write_dataset(cache: Path, repo_id: str, config_name: str, features, splits: dict[str, dict[str, list]]) -> Path:
    """Write ``splits`` as the processed cache of hub dataset ``repo_id`` / ``config_name``."""
    import datasets
    import pyarrow as pa
    from datasets.builder import Key

    class HubStandIn(datasets.ArrowBasedBuilder):
        # Named like the hub builder (repo id, config, version 0.0.0), so its cache directory
        # and files are those a real download leaves: <org>___<name>/<config>/0.0.0/<commit>/.
        BUILDER_CONFIGS = [datasets.BuilderConfig(name=config_name, version=datasets.Version("0.0.0"))]

        def _info(self):
            return datasets.DatasetInfo(features=features)

        def _split_generators(self, dl_manager):
            return [datasets.SplitGenerator(name=s, gen_kwargs={"split": s}) for s in splits]

        def _generate_tables(self, split):
            yield Key(0, 0), pa.table(splits[split])

    builder = HubStandIn(
        cache_dir=str(cache),
        dataset_name=repo_id.split("/")[-1],
        config_name=config_name,
        hash=DATASET_REVISIONS[repo_id],
        repo_id=repo_id,
    )
    datasets.disable_progress_bars()
    builder.download_and_prepare()
    return Path(builder.cache_dir)


def wikitext_rows(path: Path) -> list[str]:
    """The hub's wikitext rows for a raw file: each line with its "\\n", blank lines as ""."""
    lines = path.read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines = lines[:-1]
    return [line + "\n" if line.strip() else "" for line in lines]


def imdb_rows(imdb_dir: Path, split: str) -> dict[str, list]:
    texts, labels = [], []
    for p in sorted(imdb_dir.glob("*.jsonl")):
        for line in p.read_text(encoding="utf-8").split("\n"):
            if line.strip():
                rec = json.loads(line)
                if rec.get("split") == split:
                    texts.append(rec["text"])
                    labels.append(1 if rec.get("label") == "pos" else 0)
    return {"text": texts, "label": labels}


def build_warm_hf_home(root: Path, data_dir: Path) -> dict[str, Path]:
    """Fill ``root`` as an ``HF_HOME`` holding the two models and the two datasets (see module doc).

    Returns
    -------
    dict
        ``"hf_home"``, ``"roberta-base"`` and ``"roberta-large"`` (the snapshot directories,
        usable as ``--model PATH``), ``"wikitext"`` and ``"imdb"`` (the dataset cache
        directories).
    """
    import datasets
    from helpers import make_roberta_tokenizer

    root = Path(root)
    hub = root / "hub"
    work = root.parent / (root.name + "-work")
    tokenizer = make_roberta_tokenizer(work)
    out: dict[str, Path] = {"hf_home": root}
    for name in ("roberta-base", "roberta-large"):
        out[name] = _put_model(hub, name, _model_files(work, name, tokenizer))
    _put_model(hub, "distilroberta-base", work / "roberta-base", only=("config.json",))

    wiki = data_dir / "wikitext103"
    splits = {
        "validation": {"text": wikitext_rows(wiki / "wiki.valid.raw")},
        "test": {"text": wikitext_rows(wiki / "wiki.test.raw")},
    }
    splits["train"] = {"text": list(splits["test"]["text"])}  # stand-in, see the module docstring
    out["wikitext"] = _write_dataset(
        root / "datasets",
        "Salesforce/wikitext",
        "wikitext-103-raw-v1",
        datasets.Features({"text": datasets.Value("string")}),
        splits,
    )
    imdb_features = datasets.Features(
        {"text": datasets.Value("string"), "label": datasets.ClassLabel(names=["neg", "pos"])}
    )
    out["imdb"] = _write_dataset(
        root / "datasets",
        "stanfordnlp/imdb",
        "plain_text",
        imdb_features,
        {"test": imdb_rows(data_dir / "imdb", "test")},
    )
    return out
