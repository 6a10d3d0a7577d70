"""Every help text prints whole: bracketed text such as "[m, M]" is not eaten as markup."""

from __future__ import annotations

import re

import pytest
import typer.main
from typer.testing import CliRunner

from attnspec.cli.main import app

runner = CliRunner()


def _commands() -> list[tuple[list[str], object]]:
    """(path, click command) for every command and group of the app."""
    root = typer.main.get_command(app)
    found: list[tuple[list[str], object]] = [([], root)]

    def walk(group, prefix: list[str]) -> None:  # noqa: ANN001 - click Group
        for name, cmd in group.commands.items():
            found.append(([*prefix, name], cmd))
            if hasattr(cmd, "commands"):
                walk(cmd, [*prefix, name])

    walk(root, [])
    return found


def _squash(text: str) -> str:
    # the help formatter re-wraps lines (also after hyphens): compare without whitespace
    return re.sub(r"\s+", "", text)


COMMANDS = _commands()


@pytest.mark.parametrize("path, cmd", COMMANDS, ids=[" ".join(p) or "attnspec" for p, _ in COMMANDS])
def test_help_contains_every_bracketed_text(path: list[str], cmd) -> None:  # noqa: ANN001
    res = runner.invoke(app, [*path, "--help"])
    assert res.exit_code == 0, res.output
    shown = _squash(res.output)
    texts = [cmd.help or ""] + [getattr(p, "help", None) or "" for p in cmd.params]
    brackets = [b for t in texts for b in re.findall(r"\[[^\[\]\n]*\]", t.split("\f")[0])]
    for b in brackets:
        assert _squash(b) in shown, f"{' '.join(path)} --help lost {b!r}"


def test_sa_check_help_keeps_its_interval() -> None:
    res = runner.invoke(app, ["sa-check", "--help"])
    assert "k nonzeros per row in [m, M]" in " ".join(res.output.split())


def test_svd_method_help_says_what_auto_is() -> None:
    from attnspec.spectra.engine import resolve_method

    res = runner.invoke(app, ["spectrum", "--help"])
    text = " ".join(res.output.split())
    auto_on_cpu, auto_on_cuda = resolve_method("auto", "cpu"), resolve_method("auto", "cuda")
    assert f"auto ({auto_on_cpu} on the CPU, {auto_on_cuda} on CUDA)" in text or auto_on_cpu == "svd"
    for method in ("lapack", "svd", "gram", "gram32", "longn"):
        assert method in text
