"""The README's set-up is what CI runs: the pip installs of set-up command 1 are exactly the
pip installs of `.ci/run` (same packages, same flags, same order; `pip` and `python -m pip`
alike, `--quiet` ignored), and `.ci/run` runs the README's test command as written."""

from __future__ import annotations

import shlex
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: Flags that change what pip prints, not what it installs.
OUTPUT_ONLY = {"--quiet", "-q"}


def _setup_block() -> list[str]:
    """The lines of the README's "Set-up" fenced bash block, comments dropped."""
    block = (REPO / "README.md").read_text().split("## Set-up")[1].split("```bash")[1].split("```")[0]
    return [line.strip() for line in block.splitlines() if line.strip() and not line.strip().startswith("#")]


def _pip_install(argv: list[str]) -> tuple[str, ...] | None:
    """The install arguments of one pip command (``pip install ...`` or ``python -m pip
    install ...``), output-only flags dropped; None for any other command."""
    if argv[:2] == ["pip", "install"]:
        args = argv[2:]
    elif len(argv) >= 4 and argv[0] in ("python", "python3") and argv[1:4] == ["-m", "pip", "install"]:
        args = argv[4:]
    else:
        return None
    return tuple(a for a in args if a not in OUTPUT_ONLY)


def _readme_installs() -> list[tuple[str, ...]]:
    first = _setup_block()[0]  # command 1: installs joined by && with the first spectrum run
    parts = [shlex.split(part) for part in first.split("&&")]
    return [p for p in map(_pip_install, parts) if p is not None]


def _ci_lines() -> list[str]:
    lines = (REPO / ".ci" / "run").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]


def _ci_installs() -> list[tuple[str, ...]]:
    return [p for p in (_pip_install(shlex.split(line)) for line in _ci_lines()) if p is not None]


def test_the_parser_reads_both_spellings_of_pip() -> None:
    assert _pip_install(["pip", "install", "-e", ".[dev]"]) == ("-e", ".[dev]")
    assert _pip_install(["python", "-m", "pip", "install", "--quiet", "--no-deps", "x"]) == ("--no-deps", "x")
    assert _pip_install(["attnspec", "spectrum"]) is None


def test_readme_setup_installs_exactly_what_ci_installs() -> None:
    readme, ci = _readme_installs(), _ci_installs()
    assert readme, "the README's set-up command 1 has no pip install"
    assert ("torch==2.13.0",) in readme, "the CPU wheel of torch comes first, pinned"
    assert readme == ci, f"README set-up installs {readme}, .ci/run installs {ci}"


def test_ci_runs_the_readme_test_command() -> None:
    test_commands = [line for line in _setup_block()[1:] if "pytest" in line]
    assert test_commands == ["python -m pytest -q"]
    assert test_commands[0] in _ci_lines(), ".ci/run does not run the README's test command as written"


def test_ci_runs_the_slow_tests_the_default_run_leaves_out() -> None:
    import tomllib

    addopts = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["addopts"]
    assert "-m 'not slow'" in addopts  # the README's command deselects them ...
    assert "python -m pytest -q -m slow" in _ci_lines()  # ... and CI runs them as a second step


def test_the_readme_setup_makes_and_enters_a_virtual_environment_before_installing() -> None:
    # a literal reader must not install about 70 packages into whatever Python is active
    steps = [shlex.split(part) for part in _setup_block()[0].split("&&")]
    first_pip = next(i for i, argv in enumerate(steps) if _pip_install(argv) is not None)
    made = [i for i, argv in enumerate(steps) if argv[:3] == ["python", "-m", "venv"]]
    entered = [
        i for i, argv in enumerate(steps) if argv[:1] in (["."], ["source"]) and argv[1].endswith("/bin/activate")
    ]
    assert made and entered, "set-up command 1 makes no virtual environment"
    assert made[0] < entered[0] < first_pip, "the virtual environment is made and entered before the first pip install"
