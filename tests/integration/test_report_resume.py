"""The report resumes an unfinished spectrum experiment of the same key instead of starting over,
and starts over when the key changed."""

from __future__ import annotations

import json
from pathlib import Path

from attnspec.report.experiments import RUN_FILE, Experiment
from attnspec.report.runner import run_experiment


def _experiment(tmp_path: Path, model_dir: Path, text_file: Path, seed: int = 0) -> Experiment:
    args = {
        "model": str(model_dir),
        "data": str(text_file),
        "seq-len": "16,32",
        "num-sentences": 3,
        "seed": seed,
        "projection-k": "none",
    }
    return Experiment(name="s", path=tmp_path / "s.toml", title="s", paper="linformer", command="spectrum", args=args)


def _run(exp: Experiment, results: Path, log: list[str]) -> str:
    return run_experiment(exp, results, quick=False, force=False, data_dir=str(results.parent), log=log.append).status


def test_an_unfinished_run_is_resumed_and_a_changed_one_starts_over(
    model_dir: Path, text_file: Path, tmp_path: Path
) -> None:
    results, log = tmp_path / "results", []
    exp = _experiment(tmp_path, model_dir, text_file)
    assert _run(exp, results, log) == "ran"
    out = results / "s"
    spectrum = (out / "n32" / "spectrum.parquet").read_bytes()

    # as a failure or an interrupt leaves it: the record says the run did not end well
    rec = json.loads((out / RUN_FILE).read_text())
    (out / RUN_FILE).write_text(json.dumps({**rec, "returncode": None}))
    (out / "kept.txt").write_text("left by the first run")
    assert _run(exp, results, log) == "ran"
    assert log[-1].startswith("resuming s:") and (out / "kept.txt").is_file()
    assert (out / "n32" / "spectrum.parquet").read_bytes() == spectrum  # complete lengths are kept
    assert json.loads((out / RUN_FILE).read_text())["returncode"] == 0

    (out / RUN_FILE).write_text(json.dumps({**rec, "returncode": 1}))
    changed = _experiment(tmp_path, model_dir, text_file, seed=1)
    assert _run(changed, results, log) == "ran"
    assert log[-1].startswith("running s:") and not (out / "kept.txt").exists()
