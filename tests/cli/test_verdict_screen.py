"""The default output of the checking commands: one screen, one row per claim.

At the defaults and ``COLUMNS=100``: jl-check and osa-check in at most 30 lines, sa-check in
at most 21, no line wider than 100 characters, a why cut to fit only at the end of its line
("…", and the footer says where the rest is), and the qualifiers (the sequential-stopping
sentence, instance seeds, interval levels) said at most once. A golden file fixes the shape
of jl-check's table at a small n. The docs' examples are the runs' own output.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden" / "jl_check_n256.txt"
DOC = REPO / "docs" / "jl-check.md"
BUDGET = {"jl-check": 30, "sa-check": 21, "osa-check": 30}
#: phrases a screen says once, if at all
QUALIFIERS = ("sequential", "error rate", "instance seed", "95% CI", "stopped at", "--verbose")


def _run(*args: str, out: Path | None = None) -> str:
    env = {**os.environ, "COLUMNS": "100", "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-m", "attnspec.cli.main", *args, *(["--out", str(out)] if out else [])],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("runs")


@pytest.fixture(scope="module")
def screens(runs: Path) -> dict[str, str]:
    return {cmd: _run(cmd, out=runs / cmd) for cmd in BUDGET}


@pytest.mark.parametrize("command", list(BUDGET))
def test_default_output_fits_one_screen(screens: dict[str, str], command: str) -> None:
    lines = screens[command].splitlines()
    assert len(lines) <= BUDGET[command], "\n".join(lines)
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


def test_jl_check_states_which_parameters_the_paper_fixes(screens: dict[str, str]) -> None:
    head = screens["jl-check"].split("\nclaim ")[0]
    assert "attnspec's defaults" in head and "the paper fixes none" in head
    assert "Theorem 1's k = 4621" in head and "Theorem 2's k = 4159" in head
    assert "goes unseen with probability 13.5%" in screens["jl-check"]  # what the early stop can miss


def test_the_docs_show_the_default_output(screens: dict[str, str]) -> None:
    block = DOC.read_text().split("$ attnspec jl-check\n", 1)[1].split("```", 1)[0]
    if os.environ.get("ATTNSPEC_UPDATE_GOLDEN"):
        DOC.write_text(DOC.read_text().replace(block, screens["jl-check"]))
        block = screens["jl-check"]
    doc = block.splitlines()[2:]  # the header's first lines carry the wall time
    assert doc == screens["jl-check"].splitlines()[2:]


def _no_time(text: str) -> str:
    return re.sub(r"\d+\.\d s\.", "<wall> s.", text)


def test_golden_jl_check_at_small_n() -> None:
    out = _no_time(_run("jl-check", "--n", "256", "--trials", "2000", "--trials-other", "200"))
    if os.environ.get("ATTNSPEC_UPDATE_GOLDEN"):
        GOLDEN.write_text(out)
    assert out == GOLDEN.read_text()
    lines = out.splitlines()
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


def test_the_sa_check_docs_example_is_the_runs_rows(screens: dict[str, str], runs: Path) -> None:
    rows = _rows(runs / "sa-check")
    doc = (REPO / "docs" / "sa-check.md").read_text()
    block = doc.split("as saved in `verdicts.parquet`:\n\n```\n", 1)[1].split("```", 1)[0]
    if os.environ.get("ATTNSPEC_UPDATE_GOLDEN"):
        (REPO / "docs" / "sa-check.md").write_text(doc.replace(block, sa_doc_block(rows)))
        block = sa_doc_block(rows)
    assert block == sa_doc_block(rows)


def test_the_osa_check_docs_example_counts_the_runs_verdicts(screens: dict[str, str], runs: Path) -> None:
    from collections import Counter

    rows = _rows(runs / "osa-check")
    doc = (REPO / "docs" / "osa-check.md").read_text()
    line = next(x for x in doc.splitlines() if re.match(r"^\d+ verdicts: ", x))
    counts = Counter(r["verdict"] for r in rows)
    assert line.startswith(f"{len(rows)} verdicts: ")
    for part in line.split(": ", 1)[1].rstrip("…").rstrip(", ").split(", "):
        n, verdict = part.split(" ", 1)
        assert counts[verdict] == int(n), part
