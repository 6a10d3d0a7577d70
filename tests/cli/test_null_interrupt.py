"""An interruption while a null baseline is computed ends the command (exit 130, one line):
the complete run is kept, the null is not recorded, and the same command computes it again."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers import save_tiny_roberta
from typer.testing import CliRunner

from attnspec.cli.main import app

runner = CliRunner()
LENGTHS = (12, 24)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_tiny_roberta(tmp_path_factory.mktemp("tiny-roberta-null"))


@pytest.fixture(scope="module")
def jsonl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = np.random.default_rng(1)
    words = "the attention of a movie was low rank and the music was good".split()
    path = tmp_path_factory.mktemp("data") / "reviews.jsonl"
    path.write_text("\n".join(json.dumps({"text": " ".join(rng.choice(words, 50))}) for _ in range(30)) + "\n")
    return path


def _baselines(out: Path) -> list[object]:
    return [json.loads((out / f"n{n}" / "meta.json").read_text()).get("baselines") for n in LENGTHS]


@pytest.mark.parametrize("stop_at", [2, 5])  # the null's second batch at the first length, and at the last
def test_an_interrupted_random_init_null_stops_the_command_and_is_not_recorded(
    model_dir: Path, jsonl: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stop_at: int
) -> None:
    import attnspec.spectra.job as job

    out = tmp_path / "sc"
    common = [
        "spectrum",
        "--model",
        str(model_dir),
        "--data",
        str(jsonl),
        "--num-sentences",
        "3",
        "--device",
        "cpu",
        "-q",
        "--batch-size",
        "1",
        "--projection-k",
        "none",
        "--no-plots",
        "--seq-len",
        "12,24",
        "--out",
        str(out),
    ]
    r = runner.invoke(app, common)
    assert r.exit_code == 0, r.output
    real = {n: (out / f"n{n}" / "spectrum.parquet").read_bytes() for n in LENGTHS}
    commits = []

    def interrupt_the_null() -> None:  # the study is complete: every batch committed now is the null's
        commits.append(1)
        if len(commits) == stop_at:
            raise KeyboardInterrupt

    monkeypatch.setattr(job, "_before_commit", interrupt_the_null)
    r = runner.invoke(app, [*common, "--baseline", "uniform,random-init"])
    assert r.exit_code == 130, r.output
    assert len(commits) == stop_at  # it stopped there: no later batch, no other length
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "random-init null" in lines[0] and "Traceback" not in r.output, r.stderr
    assert _baselines(out) == [None, None]
    assert {n: (out / f"n{n}" / "spectrum.parquet").read_bytes() for n in LENGTHS} == real
    monkeypatch.setattr(job, "_before_commit", lambda: None)
    r = runner.invoke(app, [*common, "--baseline", "uniform,random-init"])
    assert r.exit_code == 0, r.output
    assert [b["names"] for b in _baselines(out)] == [["uniform", "random-init"]] * 2


def test_the_report_does_not_take_an_interrupted_or_partial_study_as_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import attnspec.spectra.study as study
    from attnspec.errors import ResultsError
    from attnspec.report import runner as report_runner
    from attnspec.spectra.config import SpectrumOutcome

    monkeypatch.setattr(report_runner, "_spectrum_plan", lambda options, out: (None, [12], [], []))
    for status, raised in (("interrupted", KeyboardInterrupt), ("partial", ResultsError)):
        stopped = study.StudyOutcome(tmp_path, [12], outcomes=[SpectrumOutcome(tmp_path, status, 1, 3, 0.1)])
        monkeypatch.setattr(study, "run_study", lambda *a, stopped=stopped, **k: stopped)
        with pytest.raises(raised, match="1 of 3 inputs"):
            report_runner._run_spectrum({}, tmp_path)


def test_an_interrupted_report_exits_130_with_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import attnspec.report as report

    def interrupted(**kwargs: object) -> None:
        raise KeyboardInterrupt("in results/x after 1 of 3 inputs")

    monkeypatch.setattr(report, "run_report", interrupted)
    r = runner.invoke(app, ["report", "--out", str(tmp_path / "reports")])
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.exit_code == 130 and len(lines) == 1, r.output
    assert lines[0].startswith("interrupted: in results/x after 1 of 3 inputs;") and "Traceback" not in r.output
