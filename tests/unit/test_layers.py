"""The package's layering, read from the source.

Every import of an attnspec module counts, at any depth: a lazy import inside a function is
an arrow all the same (it runs as soon as the function does). Imports under
``if TYPE_CHECKING:`` never run, but they tie two modules as closely for a reader: they count
for cycles, and are left out of the layering rules below. On that graph:

* no import cycle anywhere in the package, ``TYPE_CHECKING`` imports included (a cycle
  through an annotation is closed with a :class:`typing.Protocol` in the lower module);
* theory never loads models or data (no spectra models, capture, data, job or real attention);
* the spectrum wing (``attnspec.spectra``) never imports the CLI, the report or the plots;
* the plots import neither theory, the CLI, the report, nor the spectrum job or engine: they
  read saved tables.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "attnspec"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_only(tree: ast.AST) -> set[int]:
    """ids of the nodes under ``if TYPE_CHECKING:`` (imports for annotations only; never run)."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for stmt in node.body:
                skip.update(id(n) for n in ast.walk(stmt))
    return skip


def imports_of(source: str, this: str, is_package: bool = False, *, type_checking: bool = False) -> set[str]:
    """attnspec modules (and ``module.name`` candidates) that ``source`` imports, at any depth;
    those under ``if TYPE_CHECKING:`` only with ``type_checking``."""
    tree = ast.parse(source)
    skip = set() if type_checking else _type_checking_only(tree)
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("attnspec"))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative import: from the module's package, one level up per extra dot
                pkg = this.split(".") if is_package else this.split(".")[:-1]
                pkg = pkg[: len(pkg) - (node.level - 1)]
                base = ".".join(pkg + ([base] if base else []))
            if base.startswith("attnspec"):
                found.add(base)
                found.update(f"{base}.{a.name}" for a in node.names)  # `from pkg import module`
    return found


def _graph(*, type_checking: bool = False) -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {
        name: {
            m
            for m in imports_of(p.read_text(), name, p.name == "__init__.py", type_checking=type_checking)
            if m in modules and m != name
        }
        for name, p in modules.items()
    }


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Cycles of a module graph, leaving out a package importing its own submodules (re-exports)."""
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def dfs(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt) :] + [nxt])
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


def test_lazy_imports_count_and_type_checking_imports_do_not():
    source = """
from typing import TYPE_CHECKING
import attnspec.errors
if TYPE_CHECKING:
    from attnspec.battery import BatteryResult
def f():
    from attnspec.spectra.job import run_spectrum
    class C:
        def g(self):
            import attnspec.plots.spectrum
"""
    found = imports_of(source, "attnspec.x")
    assert {"attnspec.errors", "attnspec.spectra.job", "attnspec.plots.spectrum"} <= found
    assert "attnspec.battery" not in found
    assert "attnspec.battery" in imports_of(source, "attnspec.x", type_checking=True)  # for cycles
    # relative imports resolve against the module's package
    assert "attnspec.spectra.engine" in imports_of("from .engine import singular_values", "attnspec.spectra.job")
    assert "attnspec.spectra.data.inputs" in imports_of("from .data import inputs", "attnspec.spectra", is_package=True)


def test_the_graph_covers_the_spectrum_wing_and_sees_lazy_arrows():
    graph = _graph()
    assert {
        "attnspec.spectra.job",
        "attnspec.spectra.engine",
        "attnspec.spectra.data.inputs",
        "attnspec.report.papers",
    } <= set(graph)
    # api.spectrum imports the study inside the function only: a lazy arrow the graph must hold
    assert "attnspec.spectra.study" in graph["attnspec.api"]


def test_no_import_cycles():
    cycles = find_cycles(_graph(type_checking=True))
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def _under(name: str, *prefixes: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def test_theory_loads_no_models_or_data():
    loading = (
        "attnspec.spectra.models",
        "attnspec.spectra.capture",
        "attnspec.spectra.data",
        "attnspec.spectra.job",
        "attnspec.spectra.real_attention",
        "attnspec.spectra.gguf",
    )
    for name, deps in _graph().items():
        if _under(name, "attnspec.theory"):
            bad = sorted(d for d in deps if _under(d, *loading))
            assert not bad, f"{name} imports {bad}"


def test_spectra_never_imports_cli_report_or_plots():
    for name, deps in _graph().items():
        if _under(name, "attnspec.spectra"):
            bad = sorted(
                d for d in deps if _under(d, "attnspec.cli", "attnspec.report", "attnspec.plots", "attnspec.api")
            )
            assert not bad, f"{name} imports {bad}"


def test_plots_read_saved_tables_only():
    computing = (
        "attnspec.spectra.job",
        "attnspec.spectra.engine",
        "attnspec.spectra.config",
        "attnspec.spectra.merge",
        "attnspec.spectra.models",
        "attnspec.spectra.capture",
        "attnspec.spectra.data",
        "attnspec.spectra.scaling",
        "attnspec.spectra.compare",
    )
    for name, deps in _graph().items():
        if _under(name, "attnspec.plots"):
            bad = sorted(d for d in deps if _under(d, "attnspec.theory", "attnspec.cli", "attnspec.report", *computing))
            assert not bad, f"{name} imports {bad}"


def test_one_interrupt_class_carries_a_run_s_finished_part():
    """Every resumable battery raises attnspec.runtime.signals.InterruptedRun: one class to catch."""
    found = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and any("KeyboardInterrupt" in ast.unparse(b) for b in node.bases):
                found.append(f"{_module_name(path)}.{node.name}")
    assert found == ["attnspec.runtime.signals.InterruptedRun"]
