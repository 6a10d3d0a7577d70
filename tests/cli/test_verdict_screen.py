"""The default output of the checking commands: one screen, one row per claim.

At ``COLUMNS=100``: jl-check and osa-check in at most 30 lines, sa-check in at most 21, no line
wider than 100 characters, a why cut to fit only at the end of its line ("…", and the footer
says where the rest is), and the qualifiers (the sequential-stopping sentence, instance seeds,
interval levels) said at most once. The default test run reads each
screen at small parameters (the same layout, in seconds); the slow run (``-m slow``) reads them
at the defaults as well, which the docs show and the budgets are about. A golden file fixes
the shape of jl-check's table at a small n. The docs' examples are the runs' own output.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden" / "jl_check_n256.txt"
DOC = REPO / "docs" / "jl-check.md"
BUDGET = {"jl-check": 30, "sa-check": 21, "osa-check": 30}
#: phrases a screen says once, if at all
QUALIFIERS = ("sequential", "error rate", "instance seed", "95% CI", "stopped at", "--verbose")


#: Runs each command line of argv[1] (JSON) through the CLI in one interpreter, as a terminal
#: of 100 columns would: one import of torch and the batteries for the three screens, not three.
_DRIVER = """
import json, sys
from typer.testing import CliRunner
from attnspec.cli.main import app
screens = {}
for argv in json.loads(sys.argv[1]):
    r = CliRunner().invoke(app, argv)
    if r.exit_code != 0:
        sys.exit(f"{argv[0]} exited {r.exit_code}: {r.stderr[-2000:]}")
    screens[argv[0]] = r.stdout
json.dump(screens, sys.stdout)
"""


def _run_in_a_fresh_interpreter(command_lines: list[list[str]]) -> dict[str, str]:
    """The standard output of each command line (by command), run in one fresh interpreter."""
    import json

    env = {**os.environ, "COLUMNS": "100", "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-c", _DRIVER, json.dumps(command_lines)],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def _run_here(command_lines: list[list[str]]) -> dict[str, str]:
    """The standard output of each command line (by command), run in this process as a terminal
    of 100 columns would show it (rich reads ``COLUMNS`` when it prints)."""
    from typer.testing import CliRunner

    from attnspec.cli.main import app

    screens = {}
    for argv in command_lines:
        r = CliRunner().invoke(app, argv, env={"COLUMNS": "100"})
        assert r.exit_code == 0, f"{argv[0]} exited {r.exit_code}: {r.stderr[-2000:]}"
        screens[argv[0]] = r.stdout
    return screens


#: Small parameters per command: every row and footer of the screen, in seconds of CPU
#: (jl-check's are the golden file's).
SMALL = {
    "jl-check": ("--n", "256", "--trials", "2000", "--trials-other", "200"),
    "sa-check": ("--L", "64", "--trials", "30", "--sweep-L", "16,32", "--sweep-k", "1,2", "--sweep-trials", "10"),
    "osa-check": ("--trials", "1", "--steps", "4", "--no-timing"),
}


@functools.cache
def _runs(size: str) -> Path:
    """The folder the runs at ``size`` are saved in (their verdict rows feed the docs tests)."""
    return Path(tempfile.mkdtemp(prefix=f"attnspec-screens-{size}-"))


@functools.cache
def _screens(size: str) -> dict[str, str]:
    """Every command's default output at ``size`` ("small" or "defaults"), run once per process.

    At the defaults the runs are saved (their rows feed the docs tests); at small parameters
    nothing reads them, and the screen is the same with and without ``--out``, so nothing is
    written or drawn."""
    if size == "small":
        return _run_here([[cmd, *SMALL[cmd]] for cmd in BUDGET])
    return _run_in_a_fresh_interpreter([[cmd, "--out", str(_runs(size) / cmd)] for cmd in BUDGET])


def _screen(command: str, size: str) -> str:
    """The command's default output at ``size``."""
    return _screens(size)[command]


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
    cut = [x for x in lines if "…" in x and "cut to fit" not in x]  # the footer says what "…" means
    assert all(x.endswith(" …") for x in cut)
    assert not cut or "cut to fit" in screens[command]


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
    if os.environ.get("ATTNSPEC_UPDATE_GOLDEN"):
        DOC.write_text(DOC.read_text().replace(block, _screen("jl-check", "defaults")))
        block = _screen("jl-check", "defaults")
    assert _no_time(block) == _no_time(_screen("jl-check", "defaults"))


def test_golden_jl_check_at_small_n() -> None:
    text = _screen("jl-check", "small")
    if os.environ.get("ATTNSPEC_UPDATE_GOLDEN"):
        GOLDEN.write_text(re.sub(r"\d+\.\d s\.", "<wall> s.", text))
    assert _no_time(text) == _no_time(GOLDEN.read_text())
    lines = text.splitlines()
    assert next(x for x in lines if x.startswith("claim ")).split() == ["claim", "verdict", "why"]


def _rows(folder: Path) -> list[dict]:
    import pandas as pd

    return pd.read_parquet(folder / "verdicts.parquet").to_dict("records")


def sa_doc_block(rows: list[dict]) -> str:
    """The verbose example of docs/sa-check.md from a run's rows: verdict, claim [reading], then its
    evidence indented, and the counts by verdict."""
    from collections import Counter

    lines = []
    for r in rows:
        lines.append(f"{r['verdict']:<17} {r['claim']} [{r['reading']}]")
        if r["evidence"]:
            lines.append(" " * 18 + r["evidence"])
    counts = Counter(r["verdict"] for r in rows)
    lines.append(" · ".join(f"{c} {v}" for v, c in counts.most_common()))
    return "\n".join(lines) + "\n"


@pytest.mark.slow
def test_the_sa_check_docs_example_is_the_runs_rows() -> None:
    _screen("sa-check", "defaults")
    rows = _rows(_runs("defaults") / "sa-check")
    doc = (REPO / "docs" / "sa-check.md").read_text()
    block = doc.split("as saved in `verdicts.parquet`:\n\n```\n", 1)[1].split("```", 1)[0]
    if os.environ.get("ATTNSPEC_UPDATE_GOLDEN"):
        (REPO / "docs" / "sa-check.md").write_text(doc.replace(block, sa_doc_block(rows)))
        block = sa_doc_block(rows)
    assert block == sa_doc_block(rows)


@pytest.mark.slow
def test_the_osa_check_docs_example_counts_the_runs_verdicts() -> None:
    from collections import Counter

    _screen("osa-check", "defaults")
    rows = _rows(_runs("defaults") / "osa-check")
    doc = (REPO / "docs" / "osa-check.md").read_text()
    line = next(x for x in doc.splitlines() if re.match(r"^\d+ verdicts: ", x))
    counts = Counter(r["verdict"] for r in rows)
    assert line.startswith(f"{len(rows)} verdicts: ")
    for part in line.split(": ", 1)[1].rstrip("…").rstrip(", ").split(", "):
        n, verdict = part.split(" ", 1)
        assert counts[verdict] == int(n), part
