"""Checking commands print one table row per claim by default and the full table with --verbose."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from attnspec.cli.main import app

runner = CliRunner()
SA = [
    "sa-check",
    "--L",
    "24",
    "--k",
    "2",
    "--eps",
    "0.05",
    "--delta",
    "0.3",
    "--m",
    "0.2",
    "--M",
    "1",
    "--beta",
    "0.2",
    "--trials",
    "20",
    "--sweep-L",
    "12,24",
    "--sweep-k",
    "1,2",
    "--sweep-trials",
    "20",
    "--seed",
    "3",
]


def test_sa_check_summary_by_default_full_table_with_verbose() -> None:
    rows = json.loads(runner.invoke(app, [*SA, "--json"]).stdout)
    claims = list(dict.fromkeys(r["claim"] for r in rows))
    short = runner.invoke(app, SA, env={"COLUMNS": "140"})
    assert short.exit_code == 0, short.output
    lines = [l for l in short.stdout.splitlines() if l.strip()]
    # a header, the table (a heading line, then one row of at most two lines per claim:
    # continuation lines start with spaces), the footer
    head = next(i for i, l in enumerate(lines) if l.startswith("claim "))
    assert lines[0].startswith("sa-check: ") and f"{len(claims)} claims, {len(rows)} verdict rows" in " ".join(
        lines[:head]
    )
    from attnspec.verdicts import registry

    foot = next(i for i, l in enumerate(lines) if l.startswith("(k/N rows)"))  # the footer's first line
    table = [l for l in lines[head + 1 : foot] if not l.startswith(" ")]
    labels = [registry.get(c).label for c in claims]
    assert len(table) == len(claims), short.stdout
    for row, label in zip(table, labels, strict=True):
        assert row.startswith(label), (row, label)
    assert max(len(l) for l in lines) <= 140
    assert "…" not in short.stdout or "cut to fit this width" in short.stdout  # a cut why is said to be cut
    assert "--verbose" in " ".join(lines[foot:])
    assert short.stderr.count("\n") <= 2  # no pile of progress lines when stderr is not a terminal
    full = runner.invoke(app, [*SA, "--verbose"], env={"COLUMNS": "140"})
    assert full.exit_code == 0, full.output
    assert len(full.stdout.splitlines()) > len(lines) and "evidence" in full.stdout
    assert full.stderr.count("\n") > short.stderr.count("\n")  # every progress line
