"""Experiment TOMLs are foreign files: every error names the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from attnspec.errors import InputError
from attnspec.report.experiments import load_experiments
from attnspec.report.runner import run_experiment


def _write(folder: Path, text: str) -> Path:
    folder.mkdir(exist_ok=True)
    path = folder / "a.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('command = "jl-check"\nargs = 5\n', "[args] must be a table"),
        ('command = "jl-check"\nargs = "n = 5"\n', "[args] must be a table"),
        ('command = "jl-check"\nquick = [1, 2]\n', "[quick] must be a table"),
        ('command = "jl-check"\n[args]\nn = { a = 1 }\n', "[args] n must be a string, a number"),
        ('command = "jl-check"\ntitle = 3\n', "title must be a string"),
        ('command = "jl-check"\nverdicts = "yes"\n', "verdicts must be true or false"),
        ('command = "jl-check"\n[args\n', "not valid TOML"),
        ('command = "nosuch"\n', "command must be one of"),
        ('command = "jl-check"\nx = ' + "[" * 100_000 + "]" * 100_000 + "\n", "nested deeper"),
    ],
)
def test_a_malformed_experiment_is_one_error_naming_the_file(tmp_path: Path, text: str, says: str) -> None:
    path = _write(tmp_path / "exp", text)
    with pytest.raises(InputError) as e:
        load_experiments(tmp_path / "exp")
    assert str(e.value).startswith(f"{path}: ") and says in str(e.value) and "\n" not in str(e.value)


def test_an_error_inside_an_experiment_names_the_file(tmp_path: Path) -> None:
    path = _write(tmp_path / "exp", 'command = "jl-check"\n[args]\neps = 2\n')
    (exp,) = load_experiments(tmp_path / "exp")
    rec = run_experiment(exp, tmp_path / "results", quick=True, force=True, data_dir=None, log=lambda _: None)
    assert rec.status == "failed"
    assert rec.detail.startswith(f"{path}: error: ") and "eps" in rec.detail
