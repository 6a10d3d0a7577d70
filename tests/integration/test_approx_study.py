"""The approximations as part of a scaling study on a tiny RoBERTa: saved, resumed, merged."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import attnspec
from attnspec.errors import InputError
from attnspec.spectra.approx.rule import VERDICTS

METHODS = "linformer-fit,linformer-proof,performer,nystrom"


def _opts(text_file: Path) -> dict:
    return dict(data=str(text_file), num_inputs=6, device="cpu", progress=False, projection_k=None)


def _approx(**extra) -> dict:
    return {"approx": METHODS, "approx_k": [4], "approx_split": "2,4", "approx_steps": 3, **extra}


def test_a_study_holds_the_approximations_and_resumes_them_by_length(
    model_dir: Path, text_file: Path, tmp_path: Path
) -> None:
    out = tmp_path / "study"
    res = attnspec.spectrum(str(model_dir), seq_len=[12, 24], out=out, **_opts(text_file), **_approx())
    record = res.meta["approx"]
    assert record["status"] == "complete" and record["lengths_done"] == [12, 24] and record["refused"] == {}
    assert record["methods"] == METHODS.split(",") + ["uniform", "best-rank-k"]
    errors = res.approx["approx"]
    held = sorted(errors["input"].unique())
    fits = res.approx["approx_fits"]
    assert len(held) == 4 and set(fits["train_inputs"]) == {2} and set(fits["steps"]) == {3}
    rule = res.approx["approx_rule"]
    assert set(rule["method"]) == set(record["methods"]) and set(rule["verdict"]) <= set(VERDICTS)
    assert rule.loc[rule["method"] == "uniform", "verdict"].eq("the null").all()
    e2e = res.approx["approx_end_to_end_summary"]
    assert set(e2e["method"]) == set(record["methods"]) and (e2e["cosine"] <= 1 + 1e-9).all()
    assert (res.approx["approx_summary"]["resampled"] == "held-out documents").all()

    # interrupted after the first length: the second is measured on resume, with the same numbers
    meta = json.loads((out / "meta.json").read_text())
    meta["approx"].update(lengths_done=[12], status="partial")
    (out / "meta.json").write_text(json.dumps(meta))
    errors[errors["n"] == 12].to_parquet(out / "approx.parquet")
    again = attnspec.spectrum(str(model_dir), seq_len=[12, 24], out=out, resume=True, **_opts(text_file), **_approx())
    assert again.meta["approx"]["status"] == "complete"
    pd.testing.assert_frame_equal(again.approx["approx"], errors)
    stamp = (out / "approx.parquet").stat().st_mtime_ns
    attnspec.spectrum(str(model_dir), seq_len=[12, 24], out=out, resume=True, **_opts(text_file), **_approx())
    assert (out / "approx.parquet").stat().st_mtime_ns == stamp  # complete with this plan: not measured again

    saved = attnspec.load(res.save(tmp_path / "copy"))
    pd.testing.assert_frame_equal(saved.approx["approx_rule"], rule)


def test_a_length_below_every_k_measures_nothing_and_the_study_goes_on(
    model_dir: Path, text_file: Path, tmp_path: Path
) -> None:
    res = attnspec.spectrum(
        str(model_dir), seq_len=[8, 12, 24], out=tmp_path / "s", **_opts(text_file), **_approx(approx_k=[8])
    )
    assert res.meta["approx"]["status"] == "complete" and res.meta["approx"]["lengths_done"] == [8, 12, 24]
    assert sorted(res.approx["approx"]["n"].unique()) == [12, 24]  # k = 8 is measured where n > 8 only


def test_a_merged_study_measures_them_as_the_unsharded_one(model_dir: Path, text_file: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from attnspec.cli.main import app

    base = ["spectrum", "--model", str(model_dir), "--data", str(text_file), "--seq-len", "12,24"]
    base += ["--num-inputs", "6", "--device", "cpu", "-q", "--no-plots", "--projection-k", "none"]
    approx = ["--approx", METHODS, "--approx-k", "4", "--approx-split", "2,4", "--approx-steps", "3"]
    runner = CliRunner()
    for i in range(2):
        r = runner.invoke(app, [*base, *approx, "--shard", f"{i}/2", "--out", str(tmp_path / f"s{i}")])
        assert r.exit_code == 0, r.output
        assert not (tmp_path / f"s{i}" / "approx.parquet").exists()  # a shard does not split documents
    r = runner.invoke(app, ["merge", str(tmp_path / "s0"), str(tmp_path / "s1"), "--out", str(tmp_path / "merged")])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, [*base, *approx, "--resume", "--out", str(tmp_path / "merged")])
    assert r.exit_code == 0, r.output
    assert "Approximations of attention on held-out documents" in r.stdout  # measured now, and printed
    r = runner.invoke(app, [*base, *approx, "--out", str(tmp_path / "whole")])
    assert r.exit_code == 0, r.output
    merged, whole = attnspec.load(tmp_path / "merged"), attnspec.load(tmp_path / "whole")
    pd.testing.assert_frame_equal(merged.approx["approx"], whole.approx["approx"])
    pd.testing.assert_frame_equal(merged.approx["approx_end_to_end"], whole.approx["approx_end_to_end"])


def test_bad_requests_are_named(model_dir: Path, text_file: Path) -> None:
    with pytest.raises(InputError, match="'nope' is not a registered approximation"):
        attnspec.spectrum(str(model_dir), seq_len=[12, 24], approx="nope", **_opts(text_file))
    with pytest.raises(InputError, match="approx-split must be TRAIN,HELD_OUT"):
        attnspec.spectrum(str(model_dir), seq_len=[12, 24], approx="performer", approx_split="3", **_opts(text_file))
    with pytest.raises(InputError, match="needs several --seq-len"):
        attnspec.spectrum(str(model_dir), seq_len=24, approx="performer", **_opts(text_file))
