"""`attnspec report --quick` over the project's own experiments: every experiment runs, every section is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from attnspec.cli.main import app
from attnspec.report.experiments import PAPERS, load_experiments

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_quick_report_regenerates_everything(
    tmp_path: Path, data_dir: Path, minilm_path: Path, smollm2_installed: None
) -> None:
    out = tmp_path / "report"
    r = CliRunner().invoke(
        app,
        [
            "report",
            "--quick",
            "--experiments",
            str(REPO / "experiments"),
            "--out",
            str(out),
            "--data-dir",
            str(data_dir),
        ],
    )
    assert r.exit_code == 0, r.output
    report = (out / "REPORT.md").read_text()
    experiments = load_experiments(REPO / "experiments")
    for name in {exp.effective_args(True).get("model") for exp in experiments} - {None}:
        # one load per model and report; the other experiments on it reuse it
        assert r.stderr.count(f"model {name}: loaded") == 1, name
    for exp in experiments:
        rec = json.loads((out / "results" / exp.name / "report_run.json").read_text())
        assert rec["returncode"] == 0 and rec["quick"] is True, exp.name
        assert rec["how"] == "in-process", exp.name  # library calls, no subprocess, no parsed stdout
        assert f"(appendix/{exp.name}.md)" in report and (out / "appendix" / f"{exp.name}.md").is_file()
        if exp.verdicts:
            rows = json.loads((out / "results" / exp.name / "verdicts.json").read_text())
            assert rows and {"claim", "verdict", "evidence"} <= set(rows[0])
    for cite in PAPERS.values():
        assert cite in report
    assert "Spearman" in report and "figures/figure1-nulls/spectrum_nulls.png" in report
    beyond = report.split("## Beyond Figure 1")[1]
    for part in ("Scaling with n", "β of k ∝ n^β", "The metrics beyond the curve"):
        assert part in beyond, part
    moved = (out / "appendix" / "beyond-figure-1.md").read_text()  # the corpus comparisons, read in full
    for part in ("Comparison:", "Reading:"):
        assert part in moved, part
    for link in [l.split("](")[1].rstrip(")") for l in report.split("![")[1:]]:
        assert (out / link.split(")")[0]).is_file(), link
    assert "failed" not in report.split("## Appendix")[1].split("\n## ")[0]
    assert (out / "REPORT.html").is_file() and "data:image/png;base64," in (out / "REPORT.html").read_text()
    from attnspec.verdicts.classify import VERDICT_MEANINGS

    how = report.split("## How to read a verdict")[1].split("\n## ")[0]
    assert all(f"**{v}**" in how for v in VERDICT_MEANINGS)
