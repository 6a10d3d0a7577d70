"""The spectrum job end to end on a tiny local RoBERTa: results, resume, shards, bad output dirs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from attnspec.errors import InputError, ResultsError
from attnspec.spectra.config import SpectrumConfig
from attnspec.spectra.job import run_spectrum
from attnspec.spectra.merge import merge_runs

SEQ = 32


def _cfg(model_dir: Path, text_file: Path, out: Path, **kw) -> SpectrumConfig:
    base = dict(
        model=str(model_dir),
        data=str(text_file),
        seq_len=SEQ,
        num_sentences=12,
        batch_size=4,
        seed=3,
        device="cpu",
        out=out,
    )
    base.update(kw)
    return SpectrumConfig(**base)


def _tables(out: Path) -> pd.DataFrame:
    return pd.read_parquet(out / "spectrum.parquet")


def test_full_run_writes_tidy_results_and_meta(model_dir: Path, text_file: Path, tmp_path: Path) -> None:
    outcome = run_spectrum(_cfg(model_dir, text_file, tmp_path / "run", csv=True), progress=False)
    assert outcome.status == "complete" and outcome.inputs_done == 12
    df = _tables(tmp_path / "run")
    assert list(df.columns[:6]) == ["layer", "head", "index", "mean", "std", "count"]
    assert len(df) == 2 * 4 * SEQ and (df["count"] == 12).all()
    assert df.groupby(["layer", "head"])["mean"].apply(lambda s: s.is_monotonic_increasing).all()
    assert np.allclose(df[df["index"] == SEQ]["mean"], 1.0)
    assert (tmp_path / "run" / "spectrum.csv").is_file() and (tmp_path / "run" / "metrics.csv").is_file()
    meta = json.loads((tmp_path / "run" / "meta.json").read_text())
    for key in (
        "model",
        "revision",
        "corpus",
        "seed",
        "dtype",
        "device",
        "padding_policy",
        "inputs_done",
        "wall_time_s",
    ):
        assert key in meta
    assert meta["corpus"]["seq_len"] == SEQ and meta["identity"]["split"] is None
    assert meta["environment"]["attnspec_version"] and meta["status"] == "complete"
    metrics = pd.read_parquet(tmp_path / "run" / "metrics.parquet")
    assert {"effective_rank_mean", "stable_rank_mean", "index_at_0.9_of_mean_curve"} <= set(metrics.columns)


def test_default_batch_size_is_the_devices_and_is_recorded(model_dir: Path, text_file: Path, tmp_path: Path) -> None:
    from attnspec.spectra.config import DEFAULT_BATCH_SIZE

    run_spectrum(_cfg(model_dir, text_file, tmp_path / "default", batch_size=None, num_sentences=3), progress=False)
    meta = json.loads((tmp_path / "default" / "meta.json").read_text())
    assert meta["batch_size"] == DEFAULT_BATCH_SIZE["cpu"] and meta["batch_size_source"] == "default for cpu"
    run_spectrum(_cfg(model_dir, text_file, tmp_path / "b3", batch_size=3, num_sentences=3), progress=False)
    meta3 = json.loads((tmp_path / "b3" / "meta.json").read_text())
    assert meta3["batch_size"] == 3 and meta3["batch_size_source"] == "--batch-size"
    # Full-length inputs: the batch size changes how P is computed, not the curves.
    np.testing.assert_allclose(
        _tables(tmp_path / "default")["mean"], _tables(tmp_path / "b3")["mean"], rtol=0, atol=1e-6
    )


def test_interrupted_run_resumes_to_the_uninterrupted_result(model_dir: Path, text_file: Path, tmp_path: Path) -> None:
    reference = run_spectrum(_cfg(model_dir, text_file, tmp_path / "ref"), progress=False)

    def interrupt(done: int) -> None:
        raise KeyboardInterrupt

    cfg = _cfg(model_dir, text_file, tmp_path / "run", checkpoint_every=1)
    first = run_spectrum(cfg, progress=False, on_checkpoint=interrupt)
    assert first.status == "interrupted" and first.inputs_done == 4
    meta = json.loads((tmp_path / "run" / "meta.json").read_text())
    assert meta["status"] == "interrupted" and meta["inputs_done"] == 4
    assert (_tables(tmp_path / "run")["count"] == 4).all()  # partial results are kept

    with pytest.raises(ResultsError, match="--resume"):
        run_spectrum(_cfg(model_dir, text_file, tmp_path / "run"), progress=False)
    second = run_spectrum(_cfg(model_dir, text_file, tmp_path / "run", resume=True), progress=False)
    assert second.status == "complete" and second.inputs_done == reference.inputs_done
    a, b = _tables(tmp_path / "ref"), _tables(tmp_path / "run")
    np.testing.assert_array_equal(a["count"], b["count"])
    np.testing.assert_allclose(a["mean"], b["mean"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(a["std"], b["std"], rtol=1e-9, atol=1e-12)


def test_max_time_stops_cleanly_and_resume_finishes(model_dir: Path, text_file: Path, tmp_path: Path) -> None:
    outcome = run_spectrum(_cfg(model_dir, text_file, tmp_path / "run", max_time=1e-9), progress=False)
    assert outcome.status == "partial" and outcome.inputs_done < outcome.inputs_total
    outcome = run_spectrum(_cfg(model_dir, text_file, tmp_path / "run", resume=True), progress=False)
    assert outcome.status == "complete"


def test_shards_merge_to_the_single_process_result(model_dir: Path, text_file: Path, tmp_path: Path) -> None:
    run_spectrum(_cfg(model_dir, text_file, tmp_path / "single"), progress=False)
    for i in range(3):
        run_spectrum(_cfg(model_dir, text_file, tmp_path / f"shard{i}", shard=(i, 3)), progress=False)
    meta = merge_runs([tmp_path / f"shard{i}" for i in range(3)], tmp_path / "merged")
    assert meta["inputs_done"] == 12 and meta["identity"]["shard"] is None
    single = json.loads((tmp_path / "single" / "meta.json").read_text())["identity"]
    assert meta["identity"] == single
    a, b = _tables(tmp_path / "single"), _tables(tmp_path / "merged")
    np.testing.assert_array_equal(a["count"], b["count"])
    np.testing.assert_allclose(a["mean"], b["mean"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(a["std"], b["std"], rtol=1e-9, atol=1e-12)
    with pytest.raises(ResultsError, match="same shard"):
        merge_runs([tmp_path / "shard0", tmp_path / "shard0"], tmp_path / "twice")
    with pytest.raises(ResultsError, match="whole run, not a shard"):
        merge_runs([tmp_path / "shard0", tmp_path / "single"], tmp_path / "mixed")


def test_out_dir_with_a_different_run_is_refused(model_dir: Path, text_file: Path, tmp_path: Path) -> None:
    run_spectrum(_cfg(model_dir, text_file, tmp_path / "run"), progress=False)
    before = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "run").iterdir()}
    with pytest.raises(ResultsError, match="different run.*seed"):
        run_spectrum(_cfg(model_dir, text_file, tmp_path / "run", seed=4), progress=False)
    with pytest.raises(ResultsError, match="complete"):
        run_spectrum(_cfg(model_dir, text_file, tmp_path / "run"), progress=False)
    assert before == {p.name: p.stat().st_mtime_ns for p in (tmp_path / "run").iterdir()}
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(ResultsError, match="not empty"):
        run_spectrum(_cfg(model_dir, text_file, tmp_path / "other"), progress=False)
    assert (
        run_spectrum(_cfg(model_dir, text_file, tmp_path / "run", overwrite=True), progress=False).status == "complete"
    )


def test_seq_len_beyond_positions_is_refused_before_writing(model_dir: Path, text_file: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="--seq-len 100 exceeds.*62"):
        run_spectrum(_cfg(model_dir, text_file, tmp_path / "run", seq_len=100), progress=False)
    assert not (tmp_path / "run").exists()


def test_bfloat16_and_short_policy_keep(model_dir: Path, tmp_path: Path) -> None:
    docs = tmp_path / "short.txt"
    docs.write_text("\n".join(["a short line about attention"] * 5 + ["the curve of a matrix " * 12] * 5) + "\n")
    out = run_spectrum(
        _cfg(model_dir, docs, tmp_path / "run", dtype="bfloat16", short_policy="keep", num_sentences=10), progress=False
    )
    assert out.status == "complete"
    df = _tables(tmp_path / "run")
    assert np.isfinite(df["mean"]).all()
    # short documents are zero-extended: at index 8 every short input has already reached 1
    assert (df[df["index"] == SEQ]["mean"] > 1 - 1e-9).all()


def test_scaling_run_uses_the_same_documents_at_every_length(model_dir: Path, text_file: Path, tmp_path: Path) -> None:
    from attnspec.spectra.scaling import run_scaling
    from attnspec.spectra.scaling_fit import fit_scaling, scaling_table

    out = tmp_path / "scaling"
    outcomes = run_scaling(_cfg(model_dir, text_file, out, num_sentences=6), [16, 32], progress=False)
    assert [o.status for o in outcomes] == ["complete", "complete"]
    m16, m32 = (json.loads((out / f"n{n}" / "meta.json").read_text()) for n in (16, 32))
    assert m16["corpus"]["cut_from_seq_len"] == 32 and m32["identity"]["seq_len"] == 32
    # the same inputs, cut: one run per length, each a complete ordinary spectrum run
    single = tmp_path / "single32"
    run_spectrum(_cfg(model_dir, text_file, single, num_sentences=6), progress=False)
    pd.testing.assert_frame_equal(_tables(single), _tables(out / "n32"))
    # every document is longer than 32 tokens, so a run drawn at 16 picks the same documents' first tokens
    run_spectrum(_cfg(model_dir, text_file, tmp_path / "single16", num_sentences=6, seq_len=16), progress=False)
    pd.testing.assert_frame_equal(_tables(tmp_path / "single16"), _tables(out / "n16"))
    table = scaling_table(out)
    assert set(table["n"]) == {16, 32} and (table["inputs"] == 6).all()
    fits = fit_scaling(out, resamples=200)
    assert set(fits["layer"]) == {0, 1, -1} and fits["beta"].notna().all()
    with pytest.raises(ResultsError, match="complete"):
        run_scaling(_cfg(model_dir, text_file, out, num_sentences=6), [16, 32], progress=False)


def test_the_report_runs_the_study_the_command_line_runs(model_dir: Path, text_file: Path, tmp_path: Path) -> None:
    """The report's spectrum experiments go through the same study function: the same tables,
    and the nulls asked for beside every length."""
    from attnspec.report.runner import _run_spectrum
    from attnspec.spectra.study import run_study

    options = {
        "model": str(model_dir),
        "data": str(text_file),
        "seq_len": "16,32",
        "num_sentences": 3,
        "device": "cpu",
        "seed": 3,
        "batch_size": 4,
        "baseline": "uniform",
        "projection_k": "none",
    }
    _run_spectrum(options, tmp_path / "report")
    study = run_study(
        _cfg(model_dir, text_file, tmp_path / "study", num_sentences=3), [16, 32], progress=False, baselines=["uniform"]
    )
    assert study.status == "complete" and study.added == ["uniform"] and not study.up_to_date
    for n in (16, 32):
        pd.testing.assert_frame_equal(_tables(tmp_path / "report" / f"n{n}"), _tables(tmp_path / "study" / f"n{n}"))
        meta = json.loads((tmp_path / "report" / f"n{n}" / "meta.json").read_text())
        assert meta["baselines"]["names"] == ["uniform"]
    again = run_study(
        _cfg(model_dir, text_file, tmp_path / "study", num_sentences=3), [16, 32], progress=False, baselines=["uniform"]
    )
    assert again.up_to_date and again.added == [] and again.outcomes == []
