"""Checking commands print a short summary by default and the full table with --verbose."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from attnspec.cli.main import app

runner = CliRunner()
SA = ["sa-check", "--L", "24", "--k", "2", "--eps", "0.05", "--delta", "0.3", "--m", "0.2", "--M", "1",
      "--beta", "0.2", "--trials", "20", "--sweep-L", "12,24", "--sweep-k", "1,2", "--sweep-trials", "20",
      "--seed", "3"]


def test_sa_check_summary_by_default_full_table_with_verbose() -> None:
    rows = json.loads(runner.invoke(app, [*SA, "--json"]).stdout)
    groups = list(dict.fromkeys((r["claim"], r["reading"]) for r in rows))
    short = runner.invoke(app, SA, env={"COLUMNS": "140"})
    assert short.exit_code == 0, short.output
    lines = [l for l in short.stdout.splitlines() if l.strip()]
    # a title, one line per (claim, reading), the hint
    assert len(lines) == len(groups) + 2, short.stdout
    assert max(len(l) for l in lines) <= 140
    for claim, reading in groups:
        assert any(l.strip().startswith(f"{claim} [{reading}]:") for l in lines), (claim, reading)
    assert "--verbose" in lines[-1]
    assert short.stderr.count("\n") <= 2  # no pile of progress lines when stderr is not a terminal
    full = runner.invoke(app, [*SA, "--verbose"], env={"COLUMNS": "140"})
    assert full.exit_code == 0, full.output
    assert len(full.stdout.splitlines()) > len(lines) and "evidence" in full.stdout
    assert full.stderr.count("\n") > short.stderr.count("\n")  # every progress line
