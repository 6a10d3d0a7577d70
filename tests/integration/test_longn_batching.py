"""longn in the spectrum job: a result does not depend on the batch size or the shard, because
each matrix's random draws are seeded from its own input (attnspec.spectra.longn.input_seeds);
and the run records its per-matrix error bounds in meta.json (attnspec.spectra.run_error).

A tiny random Llama at n = 200 (> k + oversample = 144, so the estimated rest is exercised).
Between batch sizes P itself may differ by float32 rounding, so results are compared to 1e-6;
draws that depended on the batch moved the curves by about 1e-3 on these matrices.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from attnspec.spectra.config import SpectrumConfig
from attnspec.spectra.job import run_spectrum
from attnspec.spectra.merge import merge_runs

SEQ = 200


@pytest.fixture(scope="module")
def llama_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    from helpers import make_decoder_tokenizer
    from models_tiny import tiny_llama

    root = tmp_path_factory.mktemp("longn")
    tok = make_decoder_tokenizer(root / "tok", bos=True)
    model_dir = root / "llama"
    tiny_llama(seed=0, positions=256).save_pretrained(model_dir)
    tok.save_pretrained(model_dir)
    rng = np.random.default_rng(0)
    words = "attention matrix rank lobster movie story music numbers the of and a singular value curve".split()
    text = root / "docs.txt"
    text.write_text("\n".join(" ".join(rng.choice(words, size=400)) for _ in range(8)) + "\n")
    return model_dir, text


def _run(llama_run: tuple[Path, Path], out: Path, **kw) -> dict:
    model_dir, text = llama_run
    cfg = SpectrumConfig(
        model=str(model_dir),
        data=str(text),
        seq_len=SEQ,
        seed=1,
        device="cpu",
        svd_method="longn",
        out=out,
        **{"batch_size": 4, "num_sentences": 4, **kw},
    )
    run_spectrum(cfg, progress=False)
    return json.loads((out / "meta.json").read_text())


def _curves(out: Path) -> pd.DataFrame:
    return pd.read_parquet(out / "spectrum.parquet")


def test_batch_size_does_not_change_longn_results(llama_run, tmp_path: Path) -> None:
    m4 = _run(llama_run, tmp_path / "b4", batch_size=4)
    m1 = _run(llama_run, tmp_path / "b1", batch_size=1)
    a, b = _curves(tmp_path / "b4"), _curves(tmp_path / "b1")
    np.testing.assert_array_equal(a["count"], b["count"])
    np.testing.assert_allclose(a["mean"], b["mean"], rtol=0, atol=1e-6)
    r4, r1 = m4["svd_error_run"], m1["svd_error_run"]
    assert r4["matrices"] == r1["matrices"] == 4 * m4["num_layers"] * m4["num_heads"]
    np.testing.assert_allclose(r4["per_layer_head"]["curve"], r1["per_layer_head"]["curve"], rtol=1e-4, atol=1e-7)
    assert 0 < r4["curve_max_abs_bound"] < 1


def test_shards_merge_to_the_whole_longn_run(llama_run, tmp_path: Path) -> None:
    whole = _run(llama_run, tmp_path / "whole", batch_size=2)
    for i in range(2):
        _run(llama_run, tmp_path / f"s{i}", batch_size=2, shard=(i, 2))
    merged = merge_runs([tmp_path / "s0", tmp_path / "s1"], tmp_path / "merged")
    a, b = _curves(tmp_path / "whole"), _curves(tmp_path / "merged")
    np.testing.assert_allclose(a["mean"], b["mean"], rtol=0, atol=1e-6)
    assert merged["svd_error_run"]["matrices"] == whole["svd_error_run"]["matrices"]
    np.testing.assert_allclose(
        merged["svd_error_run"]["per_layer_head"]["curve"],
        whole["svd_error_run"]["per_layer_head"]["curve"],
        rtol=1e-4,
        atol=1e-7,
    )


def test_meta_states_longn_as_approximate(llama_run, tmp_path: Path) -> None:
    from attnspec.spectra.run_error import is_approximate

    meta = _run(llama_run, tmp_path / "one", num_sentences=1, batch_size=1)
    assert meta["svd_method_error"]["approximate"] is True
    line = is_approximate(meta)
    assert line is not None and line.startswith("approximate: longn spectra (curve error <=")
