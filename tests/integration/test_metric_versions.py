"""A run saved before a metric existed still resumes, merges and plots, and says so in one line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from attnspec.spectra.checkpoint import DIGEST_KEY, read_state_arrays, state_digest
from attnspec.spectra.config import SpectrumConfig
from attnspec.spectra.job import run_spectrum
from attnspec.spectra.merge import merge_runs

DROPPED = "stable_rank"


def _cfg(model_dir: Path, text_file: Path, out: Path, **kw) -> SpectrumConfig:
    base = dict(
        model=str(model_dir),
        data=str(text_file),
        seq_len=32,
        num_sentences=8,
        batch_size=4,
        seed=3,
        device="cpu",
        out=out,
    )
    base.update(kw)
    return SpectrumConfig(**base)


def _as_older_state(run: Path) -> None:
    """Rewrite run/state.npz as a version-1 state saved before DROPPED existed (digest renewed)."""
    state = read_state_arrays(run / "state.npz")
    state = {
        k: v
        for k, v in state.items()
        if not k.startswith(f"{DROPPED}.") and k not in ("metric_names", "state_version", DIGEST_KEY)
    }
    state[DIGEST_KEY] = np.asarray(state_digest(state))
    with open(run / "state.npz", "wb") as f:
        np.savez(f, **state)


def test_an_older_state_resumes_without_its_missing_metric(
    model_dir: Path, text_file: Path, tmp_path: Path, capsys
) -> None:
    reference = tmp_path / "ref"
    run_spectrum(_cfg(model_dir, text_file, reference), progress=False)

    def interrupt(done: int) -> None:
        raise KeyboardInterrupt

    run = tmp_path / "run"
    run_spectrum(_cfg(model_dir, text_file, run, checkpoint_every=1), progress=False, on_checkpoint=interrupt)
    _as_older_state(run)
    capsys.readouterr()
    outcome = run_spectrum(_cfg(model_dir, text_file, run, resume=True), progress=False)
    assert outcome.status == "complete" and outcome.inputs_done == 8
    notes = [line for line in capsys.readouterr().err.splitlines() if DROPPED in line]
    assert len(notes) == 1 and "saved without stable_rank" in notes[0]
    assert json.loads((run / "meta.json").read_text())["metrics_absent"] == [DROPPED]
    a, b = pd.read_parquet(reference / "metrics.parquet"), pd.read_parquet(run / "metrics.parquet")
    assert b[f"{DROPPED}_mean"].isna().all() and a[f"{DROPPED}_mean"].notna().all()
    np.testing.assert_allclose(a["effective_rank_mean"], b["effective_rank_mean"], rtol=0, atol=1e-12)
    # the older run still plots
    from attnspec.plots.spectrum import plot_run

    plot_run(run)
    assert list((run / "figures").glob("*.png"))


def test_an_older_shard_merges_and_the_merge_names_what_it_lacks(
    model_dir: Path, text_file: Path, tmp_path: Path
) -> None:
    shards = [tmp_path / f"shard{i}" for i in range(2)]
    for i, d in enumerate(shards):
        run_spectrum(_cfg(model_dir, text_file, d, shard=(i, 2)), progress=False)
    whole = tmp_path / "whole"
    run_spectrum(_cfg(model_dir, text_file, whole), progress=False)
    _as_older_state(shards[0])
    meta = merge_runs(shards, tmp_path / "merged")
    assert meta["metrics_absent"] == [DROPPED] and meta["status"] == "complete"
    merged, single = (
        pd.read_parquet(tmp_path / "merged" / "metrics.parquet"),
        pd.read_parquet(whole / "metrics.parquet"),
    )
    assert merged[f"{DROPPED}_mean"].isna().all()
    np.testing.assert_allclose(merged["reach_index_mean"], single["reach_index_mean"], rtol=0, atol=1e-12)
