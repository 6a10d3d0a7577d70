"""The report's staleness covers what a result depends on: every module its computation imports
(numerics/laws.py included) and the resolved value of every option, defaults included."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

TINY_SA = {"L": 16, "k": 1, "trials": 10, "sweep": False}


@pytest.mark.parametrize("command", ["jl-check", "sa-check", "osa-check", "osa-train"])
def test_the_code_digest_covers_laws_and_what_the_theory_imports(monkeypatch, command: str) -> None:  # noqa: ANN001
    from attnspec.report import experiments

    seen: list[str] = []

    def spy(root: Path, paths) -> str:  # noqa: ANN001
        seen.extend(Path(p).relative_to(root).as_posix() for p in paths)
        return "0" * 64

    monkeypatch.setattr(experiments, "source_digest", spy)
    experiments.checking_code_digest(command)
    assert "numerics/laws.py" in seen, seen
    assert "errors.py" not in seen  # messages cannot change a number
    if command == "osa-train":  # a training study: no verdicts, its option values compared resolved
        assert "theory/osa/train_models.py" in seen and "theory/osa/layer.py" in seen, seen
        assert "numerics/stats.py" in seen and "numerics/linalg.py" in seen, seen
        assert not [p for p in seen if p.startswith(("verdicts/", "theorem/", "options/")) or p == "battery.py"], seen
        assert "theory/osa/thm31.py" not in seen  # osa-check's claims do not train anything
    else:
        assert "options/checks.py" in seen and "verdicts/classify.py" in seen, seen


def test_a_default_changed_in_the_code_makes_the_result_stale(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    from attnspec import battery
    from attnspec.options import checks
    from attnspec.report.experiments import Experiment
    from attnspec.report.runner import run_experiment
    from attnspec.theorem import registry

    exp = Experiment(
        name="t", path=tmp_path / "t.toml", title="t", paper="expressivity", command="sa-check", args=TINY_SA
    )
    results = tmp_path / "results"
    results.mkdir()
    # staleness reads the recorded options and code digest, never the figures: drawing them
    # (most of a run's CPU at these sizes) is left to the tests of the figures
    monkeypatch.setattr(battery, "plot_results", lambda command, out_dir: None)

    def run() -> str:
        return run_experiment(exp, results, quick=False, force=False, data_dir=None, log=lambda m: None).status

    assert run() == "ran"
    assert run() == "reused"
    recorded = json.loads((results / "t" / "report_run.json").read_text())["resolved"]
    assert recorded["eps"] == 0.01 and recorded["L"] == 16  # defaults and given values alike
    changed = tuple(dataclasses.replace(o, default=0.011) if o.name == "eps" else o for o in checks.OPTIONS["sa-check"])
    monkeypatch.setitem(
        registry._COMMANDS, "sa-check", dataclasses.replace(registry.command("sa-check"), options=changed)
    )
    assert run() == "ran"


def test_a_command_without_verdicts_gets_the_training_rule_by_its_registration(monkeypatch) -> None:  # noqa: ANN001
    """The rule follows the registered command's ``verdicts`` flag, not its name: a plug-in's study
    that gives no verdicts leaves the verdict framework out of its digest like osa-train."""
    import dataclasses

    from attnspec.report import experiments
    from attnspec.theorem import registry

    real = registry.commands()
    study = dataclasses.replace(real["osa-check"], name="my-training-study", verdicts=False)
    monkeypatch.setattr(registry, "commands", lambda: {**real, "my-training-study": study})
    assert not experiments.gives_verdicts("my-training-study") and experiments.gives_verdicts("osa-check")
    root = Path(experiments.__file__).resolve().parents[1]
    seen = [p.relative_to(root).as_posix() for p in experiments.checking_code_files("my-training-study")]
    assert "theory/osa/thm31.py" in seen, seen  # its own package, every module of it (code_files)
    assert not [p for p in seen if p.startswith(("verdicts/", "theorem/", "options/")) or p == "battery.py"], seen


def test_the_committed_training_study_stays_fresh() -> None:
    """osa-train's key is the one its committed results were saved under (4,500 CPU s to redo)."""
    from attnspec.report.experiments import load_experiments

    root = Path(__file__).resolve().parents[2]
    saved = root / "reports" / "results" / "osa-train" / "report_run.json"
    if not saved.is_file():
        pytest.skip("no committed osa-train results")
    (exp,) = [e for e in load_experiments(root / "experiments") if e.name == "osa-train"]
    assert exp.key(False) == json.loads(saved.read_text())["key"]
