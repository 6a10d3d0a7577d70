"""The package's layering, read from the source: no import cycle among module-level imports,
theory never loads models or data, plots import neither theory nor the CLI."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "attnspec"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _top_level_imports(path: Path) -> set[str]:
    """attnspec modules imported when ``path`` is imported (not inside functions or TYPE_CHECKING)."""
    tree = ast.parse(path.read_text())
    this = _module_name(path)
    found: set[str] = set()

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                continue
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name.startswith("attnspec"))
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative import
                    pkg = this.split(".")[: -node.level] if not path.name == "__init__.py" else this.split(".")[: len(this.split(".")) - node.level + 1]
                    base = ".".join(pkg + ([base] if base else []))
                if base.startswith("attnspec"):
                    found.add(base)
                    found.update(f"{base}.{a.name}" for a in node.names)
            elif isinstance(node, (ast.If, ast.Try, ast.With)):
                visit(node.body)
                visit(getattr(node, "orelse", []))
                for h in getattr(node, "handlers", []):
                    visit(h.body)

    visit(tree.body)
    return found


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {name: {m for m in _top_level_imports(p) if m in modules and m != name} for name, p in modules.items()}


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Cycles of a module graph, leaving out a package importing its own submodules (re-exports)."""
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def dfs(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                dfs(nxt, stack + [nxt])
        state[node] = 2

    for n in sorted(graph):
        if n not in state:
            dfs(n, [n])
    return [c for c in cycles if not any(a.startswith(b + ".") or b.startswith(a + ".") for a, b in zip(c, c[1:]))]


def test_cycle_finder_finds_a_cycle_and_ignores_reexports():
    assert find_cycles({"a.x": {"a.y"}, "a.y": {"a.z"}, "a.z": {"a.x"}}) == [["a.x", "a.y", "a.z", "a.x"]]
    assert find_cycles({"a": {"a.x"}, "a.x": {"a"}}) == []


def test_no_import_cycles():
    cycles = find_cycles(_graph())
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_theory_loads_no_models_or_data_and_plots_stay_below_theory_and_cli():
    graph = _graph()
    for name, deps in graph.items():
        if name.startswith("attnspec.theory"):
            assert not deps & {"attnspec.models", "attnspec.corpora", "attnspec.capture", "attnspec.real_attention"}, name
        if name.startswith("attnspec.plots"):
            assert not any(d.startswith(("attnspec.theory", "attnspec.cli")) for d in deps), name
