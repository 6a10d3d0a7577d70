"""The default output of the checking commands: one screen, one row per claim.

At ``COLUMNS=100``: jl-check and sa-check in at most 30 lines, osa-check in at most 35, no line
wider than 100 characters, nothing cut with "…", and the qualifiers (the sequential-stopping
sentence, instance seeds, interval levels) said at most once. The default test run reads each
screen at small parameters (the same layout, in seconds); the slow run (``-m slow``) reads them
at the defaults as well, which the docs show and the budgets are about. A golden file fixes
the shape of jl-check's table at a small n.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden" / "jl_check_n256.txt"
DOC = REPO / "docs" / "jl-check.md"
BUDGET = {"jl-check": 30, "sa-check": 30, "osa-check": 35}
#: phrases a screen says once, if at all
QUALIFIERS = ("sequential", "error rate", "instance seed", "95% CI", "stopped at", "--verbose")


def _run(*args: str) -> str:
    env = {**os.environ, "COLUMNS": "100", "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-m", "attnspec.cli.main", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


#: Small parameters per command: every row and footer of the screen, in seconds of CPU
#: (jl-check's are the golden file's).
SMALL = {
    "jl-check": ("--n", "256", "--trials", "2000", "--trials-other", "200"),
    "sa-check": ("--L", "64", "--trials", "20", "--sweep-L", "16,32", "--sweep-k", "1,2", "--sweep-trials", "10"),
    "osa-check": ("--trials", "1", "--steps", "4", "--no-timing"),
}


@functools.cache
def _screen(command: str, size: str) -> str:
    """The command's default output at ``size`` ("small" or "defaults"), run once per process."""
    return _run(command, *(SMALL[command] if size == "small" else ()))


@pytest.fixture(scope="module", params=["small", pytest.param("defaults", marks=pytest.mark.slow)])
def screens(request: pytest.FixtureRequest) -> dict[str, str]:
    return {cmd: _screen(cmd, request.param) for cmd in BUDGET}


@pytest.mark.parametrize("command", list(BUDGET))
def test_default_output_fits_one_screen(screens: dict[str, str], command: str) -> None:
    lines = screens[command].splitlines()
    # a wall time of 100 s or more (a busy machine) is wider and may wrap the header once more
    slow_machine = bool(re.search(r"\d{3,}\.\d s\.", screens[command].split("\nclaim ")[0]))
    assert len(lines) <= BUDGET[command] + slow_machine, "\n".join(lines)
    assert all(len(x) <= 100 for x in lines)
    assert not any("…" in x for x in lines)


@pytest.mark.parametrize("command", list(BUDGET))
def test_no_qualifier_is_repeated(screens: dict[str, str], command: str) -> None:
    text = screens[command]
    for q in QUALIFIERS:
        assert text.count(q) <= 1, f"{q!r} said {text.count(q)} times"
    assert "--verbose" in text and "--out" in text  # the footer points to the rest


@pytest.mark.parametrize("command", list(BUDGET))
def test_one_row_per_claim(screens: dict[str, str], command: str) -> None:
    from attnspec.verdicts import registry as claims

    labels = {c.label for c in claims.catalogue() if c.command == command}
    rows = [x for x in screens[command].splitlines() if x and not x.startswith(" ")]
    shown = [lab for lab in labels if any(x.startswith(lab) for x in rows)]
    assert shown, "the table names its claims by their short names"
    assert all(sum(x.startswith(lab + " ") for x in rows) <= 1 for lab in shown)


@pytest.mark.slow
def test_jl_check_states_which_parameters_the_paper_fixes() -> None:
    screen = _screen("jl-check", "defaults")
    head = screen.split("\nclaim ")[0]
    assert "attnspec's defaults" in head and "the paper fixes none" in head
    assert "Theorem 1's k = 4621" in head and "Theorem 2's k = 4159" in head
    assert "goes unseen with probability 13.5%" in screen  # what the early stop can miss


def _no_time(text: str) -> list[str]:
    """The screen's lines with the header (every line before the first note or table line)
    joined into one and its wall time blanked: the time's width moves where the header wraps
    (a run of 100 s or more wraps it once more), and nothing else may depend on it."""
    lines = text.splitlines()
    body = next(i for i, x in enumerate(lines) if x.startswith(("note:", "claim ")))
    header = " ".join(x.strip() for x in lines[:body])
    return [re.sub(r"\d+\.\d s\.", "<wall> s.", header), *lines[body:]]


def test_the_header_comparison_ignores_only_the_wall_time() -> None:
    head = "jl-check: n = 256, ε = 0.1 ... 13 claims,\n  1525 verdict rows, {} s.\nclaim verdict why\n"
    rewrapped = "jl-check: n = 256, ε = 0.1 ... 13 claims, 1525\n  verdict rows, {}\n  s.\nclaim verdict why\n"
    assert _no_time(head.format("9.9")) == _no_time(rewrapped.format("123.4"))
    assert _no_time(head.format("9.9")) != _no_time(head.replace("1525", "1526").format("9.9"))


@pytest.mark.slow
def test_the_docs_show_the_default_output() -> None:
    block = DOC.read_text().split("$ attnspec jl-check\n", 1)[1].split("```", 1)[0]
    assert _no_time(block) == _no_time(_screen("jl-check", "defaults"))


def test_golden_jl_check_at_small_n() -> None:
    text = _screen("jl-check", "small")
    if os.environ.get("ATTNSPEC_UPDATE_GOLDEN"):
        GOLDEN.write_text(re.sub(r"\d+\.\d s\.", "<wall> s.", text))
    assert _no_time(text) == _no_time(GOLDEN.read_text())
    lines = text.splitlines()
    assert next(x for x in lines if x.startswith("claim ")).split() == ["claim", "verdict", "why"]
