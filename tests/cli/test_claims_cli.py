"""`attnspec claims`: the catalogue, filtered by paper, as a table and as JSON."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from attnspec.cli.main import app
from attnspec.verdicts.registry import catalogue


def test_claims_json_lists_the_catalogue() -> None:
    res = CliRunner().invoke(app, ["claims", "--paper", "linformer", "--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    assert [r["id"] for r in rows] == [c.id for c in catalogue("linformer")]
    eq3 = next(r for r in rows if r["id"] == "linformer.thm1.eq3")
    assert eq3["command"] == "jl-check" and "Theorem 1" in eq3["where"]
    assert [r["name"] for r in eq3["readings"]] == ["relative", "relative-clipped", "additive"]


def test_claims_table_and_bad_paper() -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["claims"])
    assert res.exit_code == 0, res.output
    assert "linformer.thm2.eq8" in res.stdout and "attnspec jl-check" in res.stdout
    bad = runner.invoke(app, ["claims", "--paper", "bert"])
    assert bad.exit_code == 1 and bad.stderr.startswith("error: --paper must be one of") and bad.stdout == ""


def test_claims_show_each_claims_source() -> None:
    """A claim of the notes on a paper is listed with the notes' page, one of the paper as such."""
    res = CliRunner().invoke(app, ["claims", "--paper", "expressivity", "--json"])
    assert res.exit_code == 0, res.output
    sources = {r["id"]: r["source"] for r in json.loads(res.stdout)}
    assert sources == {c.id: c.source for c in catalogue("expressivity")}
    assert sources["expressivity.notes.dstated"].startswith("notes p. ")
    assert "paper" in sources.values()
    table = CliRunner().invoke(app, ["claims", "--paper", "expressivity"])
    assert table.exit_code == 0, table.output
    assert "source" in table.stdout and sources["expressivity.notes.dstated"] in table.stdout
