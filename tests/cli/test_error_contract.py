"""One error contract for the whole CLI: one `error:` line on stderr, documented exit codes."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from attnspec.cli.main import app
from attnspec.report import failure_line


def _run(*args: str):
    return CliRunner().invoke(app, list(args))


def _one_error_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: "), stderr
    assert not any(ch in stderr for ch in "╭╰│─"), stderr  # no boxed rich panel
    return lines[0]


@pytest.mark.parametrize(("args", "names"), [
    (("jl-check", "--n", "abc"), "--n"),
    (("jl-check", "--bogus"), "--bogus"),
    (("osa-check", "--seed", "-1"), "--seed"),
    (("merge",), "dirs"),
    (("sa-check", "--L", "x"), "--L"),
])
def test_parse_errors_are_one_line_with_exit_2(args: tuple[str, ...], names: str) -> None:
    r = _run(*args)
    assert r.exit_code == 2
    assert names in _one_error_line(r.stderr)


def test_user_errors_are_one_line_with_exit_1() -> None:
    r = _run("jl-check", "--eps", "2")
    assert r.exit_code == 1
    assert "eps" in _one_error_line(r.stderr)


def test_osa_check_names_d_v_before_computing() -> None:
    r = _run("osa-check", "--d-v", "0", "--no-timing")
    assert r.exit_code == 1
    line = _one_error_line(r.stderr)
    assert "--d-v" in line
    assert "Theorem" not in r.stderr  # refused before the first check started


@pytest.mark.parametrize(("args", "names"), [
    (("--alpha", "1e308"), "--alpha"),
    (("--alpha", "nan"), "--alpha"),
    (("--schedule", "1e308,-1e308"), "--schedule"),
    (("--schedule", "3,0"), "--schedule"),
])
def test_osa_check_refuses_values_that_would_overflow(args: tuple[str, ...], names: str) -> None:
    r = _run("osa-check", *args, "--no-timing", "--trials", "1")
    assert r.exit_code == 1
    assert names in _one_error_line(r.stderr)


def test_model_that_is_a_file_is_named_a_file(tmp_path) -> None:
    f = tmp_path / "weights.bin"
    f.write_bytes(b"\0")
    r = _run("spectrum", "--model", str(f), "--out", str(tmp_path / "out"), "--quiet")
    assert r.exit_code == 1
    line = _one_error_line(r.stderr)
    assert "is a file" in line and "directory" not in line.split("is a file")[0]


def test_report_shows_the_error_line_not_a_box_border() -> None:
    stderr = "progress 1\nerror: --n must be >= 2, got 1\n"
    assert failure_line(stderr) == "error: --n must be >= 2, got 1"
    assert failure_line("Traceback ...\n  File x\nValueError: boom\n") == "ValueError: boom"
    assert failure_line("") == "(no output)"
