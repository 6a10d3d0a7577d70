"""An empty string where a path is taken is refused in one line (a path reads '' as the current
folder: a result would land wherever the command was started), and a folder holding another
command's result is named by its kind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from attnspec.cli.main import app


def _one_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    return lines[0]


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["compare", "a", "b", "--out", ""], "--out"),
        (["compare", "a", "b", "--out="], "--out"),
        (["compare", "", "b"], "RUNS"),
        (["merge", "a", "b", "--out", ""], "--out"),
        (["plot", "spectrum", "a", "--out", ""], "--out"),
        (["plot", "spectrum", ""], "RUNS"),
        (["plot", "scaling", ""], "RUN"),
        (["plot", "scaling", "a", "--out", ""], "--out"),
        (["spectrum", "--model", "m", "--data", "imdb", "--out", ""], "--out"),
        (["report", "--experiments", "", "--out", "o"], "--experiments"),
        (["jl-check", "--n", "8", "--out", ""], "--out"),
    ],
)
def test_an_empty_path_is_refused_before_anything_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], named: str
) -> None:
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 2, r.output
    assert _one_line(r.stderr) == f"error: {named} is an empty string; give a path (. for the current folder)"
    assert list(tmp_path.iterdir()) == []  # nothing written where the command was started


def test_an_empty_label_is_not_a_path(tmp_path: Path) -> None:
    r = CliRunner().invoke(app, ["plot", "spectrum", str(tmp_path / "none"), "--label", ""])
    assert "empty string" not in r.stderr


def test_plot_scaling_names_the_kind_of_result_it_was_given(tmp_path: Path) -> None:
    (tmp_path / "cmp").mkdir()
    (tmp_path / "cmp" / "meta.json").write_text(json.dumps({"kind": "compare", "runs": []}))
    r = CliRunner().invoke(app, ["plot", "scaling", str(tmp_path / "cmp"), "--out", str(tmp_path / "f")])
    assert r.exit_code == 1
    assert "holds a 'compare' result, not a scaling run" in _one_line(r.stderr)


@pytest.mark.parametrize("function", ["jl_check", "sa_check", "osa_check", "osa_train"])
def test_the_api_refuses_an_empty_out_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, function: str) -> None:
    import attnspec
    from attnspec.errors import InputError

    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match="out"):
        getattr(attnspec, function)(out="", progress=False)
    assert list(tmp_path.iterdir()) == []
