"""`attnspec osa-train` through typer's CliRunner: outputs, JSON, meta.json, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from attnspec.cli.main import app
from attnspec.storage.results import read_meta, read_table
from attnspec.theory.osa.train import MODELS

runner = CliRunner()

# --quick with one epoch and depth 1: every model, two seeds, in a few seconds.
QUICK = ["osa-train", "--quick", "--epochs", "1", "--depth", "1", "--seed", "3"]


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    out = tmp_path_factory.mktemp("osa_train") / "run"
    result = runner.invoke(app, [*QUICK, "--json", "--out", str(out)])
    return out, result


def test_quick_json_prints_only_the_summary_rows(quick_run: tuple[Path, object]) -> None:
    _, result = quick_run
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [r["model"] for r in rows] == list(MODELS)
    for r in rows:
        assert r["n_seeds"] == 2 and len(r["test_accuracies"]) == 2
        assert 0.0 <= r["test_accuracy_mean"] <= 1.0
        assert r["steps"] == 10  # --quick: batch 128 on the 1,221 fit images, one epoch
    assert rows[0]["diff_vs_vit_mean"] is None  # the baseline has no difference to itself
    assert "osa-qr" in result.stderr  # progress goes to stderr


def test_quick_run_writes_tidy_tables_meta_and_figures(quick_run: tuple[Path, object]) -> None:
    out, result = quick_run
    assert result.exit_code == 0, result.output
    curves = read_table(out, "osa_train")
    assert list(curves.columns[:5]) == ["model", "replicate", "seed", "split", "step"]
    assert set(curves["split"]) == {"train", "val", "test"}
    # per (model, replicate): 10 train steps + validation and test at step 0 and after the epoch
    assert (curves.groupby(["model", "replicate"]).size() == 14).all()
    runs = read_table(out, "osa_train_runs")
    assert len(runs) == 2 * len(MODELS)
    summary = read_table(out, "osa_train_summary")
    rows = json.loads(result.stdout)
    assert summary["test_accuracy_mean"].tolist() == pytest.approx([r["test_accuracy_mean"] for r in rows])
    # summary agrees with the runs it summarises
    means = runs.groupby("model")["test_accuracy"].mean()
    assert summary.set_index("model")["test_accuracy_mean"].to_dict() == pytest.approx(means.to_dict())
    meta = read_meta(out)
    assert meta["kind"] == "osa-train" and meta["seed"] == 3 and meta["quick"] is True
    assert meta["config"]["epochs"] == 1 and meta["config"]["depth"] == 1 and meta["config"]["lr"] == 3e-3
    assert meta["budget"]["max_steps"] == 10 and meta["budget"]["patience"] == 10
    assert "at most 1 epochs = 10 steps per run" in meta["budget"]["rule"]
    assert meta["paper_setup"]["table2"]["test_accuracy"]["osa-ns"] == 0.969
    paper = read_table(out, "osa_train_paper")
    assert paper["model"].tolist() == ["osa-qr", "osa-ns", "vit", "vit-noskip", "vit-noskip-noln"]
    assert paper.set_index("model")["accuracy_mean"].to_dict() == pytest.approx(means.to_dict())
    orders = read_table(out, "osa_train_orderings")
    assert len(orders) == 10 and set(orders["outcome"]) <= {
        "reproduced",
        "reversed",
        "not resolved",
        "consistent",
        "not reproduced",
    }
    assert len(meta["replicate_seeds"]) == 2 and meta["wall_seconds"] > 0
    assert meta["departures"] and meta["paper_setup"]["epochs"] == 10
    assert "torch" in meta and "numpy" in meta
    signal = read_table(out, "osa_train_signal")
    assert list(signal.columns) == ["model", "replicate", "seed", "stage", "block", "rms"]
    assert len(signal) == 2 * len(MODELS) * (2 + 2 * 1)  # embed, attn, mlp, logits at depth 1
    for stem in ("osa_train_curves", "osa_train_accuracy", "osa_train_signal"):
        assert (out / f"{stem}.png").stat().st_size > 0 and (out / f"{stem}.svg").is_file()


def test_same_seed_same_numbers_and_table_output(quick_run: tuple[Path, object], tmp_path: Path) -> None:
    out, _ = quick_run
    again = runner.invoke(app, [*QUICK, "--models", "vit,osa-ns", "--out", str(tmp_path / "b")])
    assert again.exit_code == 0, again.output
    assert "osa-ns" in again.stdout and "Δ vs ViT" in again.stdout
    assert "Table 2" in again.stdout and "paper's orderings" in again.stdout
    assert "at most 1 epochs = 10 steps per run" in again.stdout
    first = read_table(out, "osa_train_runs").set_index(["model", "replicate"])
    second = read_table(tmp_path / "b", "osa_train_runs").set_index(["model", "replicate"])
    pd.testing.assert_series_equal(first.loc[second.index, "test_accuracy"], second["test_accuracy"])


def test_out_holding_another_run_is_refused(quick_run: tuple[Path, object]) -> None:
    out, _ = quick_run
    result = runner.invoke(app, [*QUICK, "--epochs", "2", "--out", str(out)])
    assert result.exit_code == 1
    assert "holds a different run" in result.stderr and "epochs" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--models", "vit,resnet"], "unknown model 'resnet'"),
        (["--models", ","], "--models must name at least one"),
        (["--epochs", "0"], "epochs must be in [1, inf), got 0"),
        (["--seeds", "0"], "seeds must be in [1, inf), got 0"),
        (["--alpha-init", "nan"], "alpha_init must be finite, got nan"),
        (["--alpha-init", "inf"], "alpha_init must be finite, got inf"),
        (["--lr", "-1"], "lr must be in (0, inf), got -1.0"),
        (["--heads", "3"], "dim must be a multiple of heads"),
        (["--heads", "1"], "2*d_v <= dim"),
        (["--patch-size", "3"], "patch_size must divide the 8x8 image"),
        (["--test-fraction", "1.5"], "test_fraction must be in (0, 1), got 1.5"),
        # a split with fewer images than classes would reach sklearn and end in a traceback
        (["--test-fraction", "0.999"], "test_fraction must be in (0.005008, 0.9944] so that both stratified splits"),
        (["--test-fraction", "0.001"], "test_fraction must be in (0.005008, 0.9944]"),
        (["--ns-coefficients", "bogus"], "schedule must be one of cubic, muon, polar-express"),
        (["--ns-steps", "-1"], "ns_steps must be in [0, inf), got -1"),
        (["--threads", "0"], "--threads must be in [1, "),
        (["--threads", "1000000"], "got 1000000"),  # libgomp failed allocating its pool before the cap
    ],
)
def test_bad_input_is_a_one_line_error(args: list[str], message: str) -> None:
    result = runner.invoke(app, ["osa-train", "--quick", *args])
    assert result.exit_code == 1, result.output
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ") and message in lines[0]


# ----------------------------------------------------------------------------- interrupt and --resume


def _train_counting(monkeypatch: pytest.MonkeyPatch, interrupt_at: int | None = None) -> list[tuple[str, int]]:
    """Count the (model, replicate) runs trained; raise KeyboardInterrupt (what Ctrl-C and,
    through attnspec.runtime.signals, SIGTERM raise) when run number ``interrupt_at`` (1-based) starts."""
    from attnspec.theory.osa import train as lib

    real, trained = getattr(lib.train_model, "real", lib.train_model), []

    def counting(name: str, *args: object, **kwargs: object) -> object:
        if interrupt_at is not None and len(trained) + 1 == interrupt_at:
            raise KeyboardInterrupt
        trained.append((name, kwargs["replicate"]))
        return real(name, *args, **kwargs)

    counting.real = real  # type: ignore[attr-defined]
    monkeypatch.setattr(lib, "train_model", counting)
    return trained


def _same_tables(a: Path, b: Path) -> None:
    for name in (
        "osa_train",
        "osa_train_runs",
        "osa_train_summary",
        "osa_train_signal",
        "osa_train_paper",
        "osa_train_orderings",
        "verdicts",
    ):
        x, y = read_table(a, name), read_table(b, name)
        wall = [
            c for c in x.columns if c.startswith(("wall_seconds", "cpu_seconds"))
        ]  # timings differ between any two runs
        pd.testing.assert_frame_equal(x.drop(columns=wall), y.drop(columns=wall), check_exact=True)


def test_an_interrupt_keeps_the_finished_runs_and_resume_gives_the_uninterrupted_tables(
    quick_run: tuple[Path, object], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole, first = quick_run
    assert first.exit_code == 0 and read_meta(whole)["status"] == "complete"
    out = tmp_path / "run"
    _train_counting(monkeypatch, interrupt_at=4)
    r = runner.invoke(app, [*QUICK, "--json", "--out", str(out)])
    assert r.exit_code == 130, r.output
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("interrupted")]
    assert len(lines) == 1 and "3 of 10 runs kept" in lines[0] and "--resume" in lines[0], r.stderr
    meta = read_meta(out)
    assert meta["status"] == "partial" and meta["runs_total"] == 10
    assert meta["runs_done"] == [{"model": m, "replicate": 0} for m in MODELS[:3]]
    assert len(read_table(out, "osa_train_runs")) == 3
    assert not (out / "osa_train_summary.parquet").exists() and not list(out.glob("*.png"))

    # Without --resume the partial result is not thrown away; another config is refused.
    r = runner.invoke(app, [*QUICK, "--out", str(out)])
    assert r.exit_code == 1 and r.stderr.startswith("error: ") and "--resume" in r.stderr, r.output
    r = runner.invoke(app, [*QUICK, "--seeds", "3", "--out", str(out), "--resume"])
    assert r.exit_code == 1 and "different run" in r.stderr and len(r.stderr.splitlines()) == 1, r.output

    trained = _train_counting(monkeypatch)
    r = runner.invoke(app, [*QUICK, "--json", "--out", str(out), "--resume"])
    assert r.exit_code == 0, r.output
    assert trained == [(m, 0) for m in MODELS[3:]] + [(m, 1) for m in MODELS]  # only the missing runs
    assert read_meta(out)["status"] == "complete" and "runs_missing" not in read_meta(out)
    strip = lambda rows: [{k: v for k, v in row.items() if k != "wall_seconds_mean"} for row in rows]  # noqa: E731
    assert strip(json.loads(r.stdout)) == strip(json.loads(first.stdout))
    _same_tables(whole, out)
    assert list(out.glob("*.png"))


def test_an_interrupt_never_marks_a_complete_result_partial(
    quick_run: tuple[Path, object], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    whole, _ = quick_run
    out = tmp_path / "copy"
    shutil.copytree(whole, out)
    _train_counting(monkeypatch, interrupt_at=2)
    r = runner.invoke(app, [*QUICK, "--out", str(out)])  # recomputing the same run, interrupted
    assert r.exit_code == 130 and "holds a complete result" in r.stderr, r.output
    assert read_meta(out)["status"] == "complete"
    _same_tables(whole, out)


def test_an_interrupt_without_out_exits_130_with_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    _train_counting(monkeypatch, interrupt_at=2)
    r = runner.invoke(app, [*QUICK, "--models", "vit", "--seeds", "2"])
    assert r.exit_code == 130
    assert [ln for ln in r.stderr.splitlines() if ln.startswith("interrupted")] == [
        "interrupted after 1 of 2 runs; nothing saved (no --out)"
    ]
    r = runner.invoke(app, [*QUICK, "--resume"])
    assert r.exit_code == 1 and r.stderr.startswith("error: --resume needs --out"), r.output


@pytest.mark.slow
def test_a_real_sigterm_keeps_the_finished_runs(tmp_path: Path) -> None:
    """What timeout, Slurm and docker stop do: SIGTERM to the process, mid-training."""
    import os
    import signal
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(repo), os.environ.get("PYTHONPATH")]))}
    out = tmp_path / "run"
    driver = "import sys; from attnspec.cli.main import app; sys.argv[0] = 'attnspec'; app()"
    args = [*QUICK, "--models", "vit,vit-noskip", "--epochs", "4", "--out", str(out)]
    proc = subprocess.Popen(
        [sys.executable, "-c", driver, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    lines = []
    for line in proc.stderr:  # the first finished run, then SIGTERM
        lines.append(line)
        if line.startswith("vit "):
            proc.send_signal(signal.SIGTERM)
            break
    rest = proc.stderr.read()
    assert proc.wait(timeout=120) == 130, "".join(lines) + rest
    assert "continue with the same command and --resume" in rest, rest
    meta = read_meta(out)
    assert meta["status"] == "partial" and {"model": "vit", "replicate": 0} in meta["runs_done"]
    assert len(meta["runs_done"]) < 4 and len(read_table(out, "osa_train_runs")) == len(meta["runs_done"])
