"""A fast first touch: the command line does not import the heavy libraries until a command runs.

This is a correctness test, not a timing one (the timing lives in
benchmarks/bench_cli_startup.py): in a fresh interpreter, importing the console script's
module and rendering every command's ``--help`` must leave torch, SciPy, pandas,
matplotlib and transformers out of ``sys.modules``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

HEAVY = ("torch", "scipy", "pandas", "matplotlib", "transformers")

_PROBE = r"""
import json, sys
from typer.testing import CliRunner
import attnspec.cli.main as m
after_import = sorted(h for h in HEAVY if h in sys.modules)
runner = CliRunner()
codes = {}
for cmd in COMMANDS:
    res = runner.invoke(m.app, [*cmd, "--help"])
    codes[" ".join(cmd) or "(root)"] = res.exit_code
res = runner.invoke(m.app, ["--version"])
codes["--version"] = res.exit_code
after_help = sorted(h for h in HEAVY if h in sys.modules)
print(json.dumps({"after_import": after_import, "after_help": after_help, "codes": codes}))
"""


def _commands() -> list[list[str]]:
    """Every command and subcommand of the app, found by walking the click tree."""
    import typer.main

    from attnspec.cli.main import app

    root = typer.main.get_command(app)
    found: list[list[str]] = [[]]

    def walk(group, prefix: list[str]) -> None:  # noqa: ANN001 - click Group
        for name, cmd in group.commands.items():
            found.append([*prefix, name])
            if hasattr(cmd, "commands"):
                walk(cmd, [*prefix, name])

    walk(root, [])
    return found


def test_cli_import_and_help_do_not_load_heavy_modules() -> None:
    commands = _commands()
    assert ["spectrum"] in commands and ["plot", "spectrum"] in commands
    code = f"HEAVY = {HEAVY!r}\nCOMMANDS = {commands!r}\n" + _PROBE
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["after_import"] == [], f"importing attnspec.cli.main loads {got['after_import']}"
    assert got["after_help"] == [], f"--help loads {got['after_help']}"
    assert all(c == 0 for c in got["codes"].values()), got["codes"]
