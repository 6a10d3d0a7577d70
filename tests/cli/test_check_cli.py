"""`attnspec check NAME`: a built-in check by name gives exactly its own command's rows; bad names are one line."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from attnspec.cli.main import app

SMALL = ["--n", "64", "--trials", "100", "--trials-other", "20", "--claims", "lemma1", "--json"]


def test_check_by_name_runs_the_built_in_command(monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("ATTNSPEC_NO_FORK", "1")
    runner = CliRunner()
    by_name = runner.invoke(app, ["check", "jl-check", *SMALL])
    own = runner.invoke(app, ["jl-check", *SMALL])
    assert by_name.exit_code == 0 and own.exit_code == 0, by_name.output + own.output
    assert json.loads(by_name.stdout) == json.loads(own.stdout)


def test_check_names_what_is_wrong_in_one_line() -> None:
    runner = CliRunner()
    unknown = runner.invoke(app, ["check", "nosuch"])
    assert unknown.exit_code == 1
    assert unknown.stderr.strip().startswith("error: no checking command or module 'nosuch'; known commands: ")
    assert "jl-check" in unknown.stderr and len(unknown.stderr.strip().splitlines()) == 1
    bad = runner.invoke(app, ["check", "jl-check", "--n", "1"])
    assert bad.exit_code == 1 and bad.stderr.startswith("error: n must be in [2, inf), got 1")
    shown = runner.invoke(app, ["check", "jl-check", "--help"])
    assert shown.exit_code == 0 and "--trials-other" in shown.stdout
    bare = runner.invoke(app, ["check"])
    assert bare.exit_code == 2 and "NAME" in bare.stdout
