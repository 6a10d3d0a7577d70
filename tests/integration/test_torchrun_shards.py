"""Scale-out with an existing launcher: torchrun starts one shard per rank, `attnspec merge` joins them.

The merged result must equal the single-process run (to float64 rounding).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import make_roberta_tokenizer
from models_tiny import tiny_roberta


@pytest.mark.slow
def test_torchrun_ranks_merge_to_the_single_run(tmp_path: Path) -> None:
    attnspec = shutil.which("attnspec")
    if attnspec is None:
        pytest.skip("the attnspec console script is not installed (pip install -e .)")
    tok = make_roberta_tokenizer(tmp_path / "tok")
    tiny_roberta(vocab=len(tok), n=62).save_pretrained(tmp_path / "model")
    tok.save_pretrained(tmp_path / "model")
    rng = np.random.default_rng(5)
    words = "attention low rank matrix encoder movie review music curve".split()
    data = tmp_path / "docs.txt"
    data.write_text("\n".join(" ".join(rng.choice(words, 40)) for _ in range(20)) + "\n")
    common = [
        "spectrum",
        "--model",
        str(tmp_path / "model"),
        "--data",
        str(data),
        "--seq-len",
        "24",
        "--num-sentences",
        "10",
        "--device",
        "cpu",
        "--no-plots",
        "-q",
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    subprocess.run([attnspec, *common, "--out", str(tmp_path / "single")], check=True, env=env, capture_output=True)
    # torchrun sets RANK and WORLD_SIZE for each process; --shard auto reads them.
    launch = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc-per-node",
        "2",
        "--master-port",
        "29517",
        "--no-python",
        attnspec,
        *common,
        "--shard",
        "auto",
        "--out",
        str(tmp_path / "shard{shard}"),
    ]
    res = subprocess.run(launch, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    shards = [tmp_path / "shard0of2", tmp_path / "shard1of2"]
    assert [json.loads((s / "meta.json").read_text())["identity"]["shard"] for s in shards] == ["0/2", "1/2"]
    subprocess.run(
        [attnspec, "merge", *map(str, shards), "--out", str(tmp_path / "merged"), "--no-plots"],
        check=True,
        env=env,
        capture_output=True,
    )
    a = pd.read_parquet(tmp_path / "single" / "spectrum.parquet")
    b = pd.read_parquet(tmp_path / "merged" / "spectrum.parquet")
    np.testing.assert_array_equal(a["count"], b["count"])
    np.testing.assert_allclose(a["mean"], b["mean"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(a["std"], b["std"], rtol=1e-9, atol=1e-12)
