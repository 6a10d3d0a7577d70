"""sa-check holds no machinery of its own: its second process is the framework's
(attnspec.theorem.fork) and so is its stopping rule (attnspec.theorem.sequential)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "attnspec" / "theory" / "expressivity"

#: Calls that fork or pipe a process: only attnspec.theorem.fork may make them.
FORKING = {"fork", "pipe", "Pool", "Process", "get_context", "wait4"}


def _calls(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            f = node.func
            names.add(f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", ""))
    return names


def test_no_module_of_the_paper_forks_a_process() -> None:
    found = {p.name: sorted(_calls(p) & FORKING) for p in PACKAGE.glob("*.py")}
    assert {k: v for k, v in found.items() if v} == {}
    assert "multiprocessing" not in "".join(p.read_text(encoding="utf-8") for p in PACKAGE.glob("*.py"))


def test_the_d_star_search_stops_by_the_framework_rule() -> None:
    """dstar takes its curtailment from attnspec.theorem.sequential (read from its imports: importing
    it would load torch)."""
    tree = ast.parse((PACKAGE / "dstar.py").read_text(encoding="utf-8"))
    imported = {
        (node.module, alias.name) for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names
    }
    assert {
        ("attnspec.theorem.sequential", "curtailed"),
        ("attnspec.theorem.sequential", "threshold_passed"),
    } <= imported
