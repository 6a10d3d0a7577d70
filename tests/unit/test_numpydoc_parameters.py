"""Every public callable of the API reference documents its parameters and its return value.

The API reference (``python docs/build_api.py``, pdoc with numpydoc docstrings) documents
every public module: ``attnspec`` and each module below it with no ``_`` at the start of a
component of its dotted name, except ``attnspec.cli`` (commands are documented by their
``--help``). A module's public callables are what pdoc shows of it: the functions and
classes it defines (those of its ``__all__`` when it has one) whose names do not start with
``_``, and of each such class its methods that do not start with ``_`` (properties read as
attributes and are left out) and an ``__init__`` it defines.

A public callable is documented when its docstring has a numpydoc ``Parameters`` section
that names exactly its parameters, in the signature's order (``self``, ``cls`` and private
parameters, named with a leading ``_``, left out; an explicit ``__init__`` may be documented
in the class docstring), and, when it returns a
value, a ``Returns`` (or, for a generator, ``Yields``) section. A callable with neither
parameters nor a value to return needs neither section.

A public callable whose docstring is made at import (the functions read off the option
declarations, :mod:`attnspec.options.declaration`: a name of ``__all__`` bound to what a call returns,
or a function whose ``__doc__`` the module assigns) is checked on the imported object, its
``Parameters`` against ``inspect.signature``, since its source holds no docstring to read.

The modules not yet documented that way are listed with their count of undocumented
callables: a count may only shrink, and a count above what is left fails the test so that
the list only ever gets shorter. The source test reads the source (``ast``) and imports nothing.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "attnspec"
EXCLUDED = ("cli",)

#: module -> callables without complete Parameters / Returns sections (may shrink, not grow)
KNOWN_GAPS: dict[str, int] = {}

_HEADER = re.compile(r"^(\w[\w ]*)\n-{3,}$", re.M)
_NOT_A_VALUE = {"None", "NoReturn", "Never"}


def module_name(path: Path) -> str:
    """Dotted module name of a file of the package, e.g. ``attnspec.spectra.job``."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def public_module_files() -> list[Path]:
    """The files of the modules the API reference documents."""
    files = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[0] in EXCLUDED or any(p.startswith("_") and p != "__init__" for p in parts):
            continue
        files.append(path)
    return files


def _declared_all(tree: ast.Module) -> set[str] | None:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            try:
                return set(ast.literal_eval(node.value))
            except ValueError:  # built at import time (attnspec.__all__): lazily imported names
                return None
    return None


def _is_property(node: ast.FunctionDef) -> bool:
    names = {d.attr if isinstance(d, ast.Attribute) else getattr(d, "id", "") for d in node.decorator_list}
    return bool(names & {"property", "cached_property", "setter"})


def public_callables(path: Path) -> list[tuple[str, ast.FunctionDef, ast.ClassDef | None]]:
    """(qualified name, function node, its class or None) of each public callable of a module."""
    tree = ast.parse(path.read_text())
    mod, exported = module_name(path), _declared_all(tree)
    out = []
    for node in tree.body:
        if node.name.startswith("_") if hasattr(node, "name") else True:
            continue
        if exported is not None and node.name not in exported:
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append((f"{mod}.{node.name}", node, None))
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) or _is_property(item):
                    continue
                if item.name == "__init__" or not item.name.startswith("_"):
                    out.append((f"{mod}.{node.name}.{item.name}", item, node))
    return out


def made_at_import(path: Path) -> list[str]:
    """Qualified names of the public callables of a module whose docstrings are made at import:
    names of its ``__all__`` bound to a call's result, and functions whose ``__doc__`` it assigns."""
    tree = ast.parse(path.read_text())
    exported, names = _declared_all(tree) or set(), []
    for node in tree.body:
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            if isinstance(target, ast.Name) and target.id in exported and isinstance(node.value, ast.Call):
                names.append(target.id)
            elif isinstance(target, ast.Attribute) and target.attr == "__doc__" and isinstance(target.value, ast.Name):
                names.append(target.value.id)
    return [f"{module_name(path)}.{n}" for n in names if not n.startswith("_")]


def sections(doc: str) -> dict[str, str]:
    """numpydoc sections of a (cleaned) docstring: title -> body."""
    heads = list(_HEADER.finditer(doc))
    return {
        m.group(1).strip(): doc[m.end() : heads[i + 1].start() if i + 1 < len(heads) else len(doc)]
        for i, m in enumerate(heads)
    }


def documented_names(body: str) -> list[str]:
    """Names of a Parameters section's entries: unindented lines, ``a, b : type`` or ``a``."""
    names = []
    for line in body.splitlines():
        if line.strip() and not line[0].isspace():
            names += [n.strip().lstrip("\\*") for n in line.split(" : ")[0].split(",")]
    return names


def signature_names(node: ast.FunctionDef, cls: ast.ClassDef | None) -> list[str]:
    a = node.args
    names = [p.arg for p in [*a.posonlyargs, *a.args]]
    static = any(getattr(d, "id", "") == "staticmethod" for d in node.decorator_list)
    if cls is not None and not static and names:
        names = names[1:]
    names += [a.vararg.arg] if a.vararg else []
    names += [p.arg for p in a.kwonlyargs]
    names += [a.kwarg.arg] if a.kwarg else []
    return [n for n in names if not n.startswith("_")]  # a private parameter is not the caller's to pass


def returns_value(node: ast.FunctionDef) -> bool:
    if node.name == "__init__":
        return False
    if node.returns is not None:
        return ast.unparse(node.returns).strip("'\"") not in _NOT_A_VALUE
    return any(not isinstance(n, ast.Return) or n.value is not None for n in _own_exits(node.body))


def _own_exits(nodes: list[ast.AST]):
    # return and yield statements of the function itself, not of the functions it defines
    for n in nodes:
        if isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom)):
            yield n
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            yield from _own_exits(list(ast.iter_child_nodes(n)))


def problems(node: ast.FunctionDef, cls: ast.ClassDef | None) -> list[str]:
    """What the callable's docstring lacks; empty when it is documented."""
    doc = ast.get_docstring(node) or ""
    if node.name == "__init__" and cls is not None and "Parameters" not in sections(doc):
        doc = ast.get_docstring(cls) or ""
    found = sections(doc)
    wrong, params = [], signature_names(node, cls)
    if params:
        listed = documented_names(found.get("Parameters", ""))
        if "Parameters" not in found:
            wrong.append("no Parameters section")
        elif listed != params:
            wrong.append(f"Parameters lists {listed}, the signature has {params}")
    if returns_value(node) and not {"Returns", "Yields"} & found.keys():
        wrong.append("no Returns section")
    return wrong


def gaps() -> dict[str, dict[str, list[str]]]:
    """module -> {callable: what it lacks}, for the callables not documented."""
    out: dict[str, dict[str, list[str]]] = {}
    for path in public_module_files():
        generated = set(made_at_import(path))  # checked on the imported object (test below)
        for name, node, cls in public_callables(path):
            if name in generated:
                continue
            wrong = problems(node, cls)
            if wrong:
                out.setdefault(module_name(path), {})[name] = wrong
    return out


def test_the_parser_reads_numpydoc_parameters_and_returns():
    tree = ast.parse(
        'def f(a, *args, b=1, **kw):\n    """Doc.\n\n    Parameters\n    ----------\n'
        "    a, b : int\n        Two.\n    *args : float\n    **kw\n        More.\n\n"
        '    Returns\n    -------\n    int\n    """\n    return a\n'
    )
    node = tree.body[0]
    assert documented_names(sections(ast.get_docstring(node))["Parameters"]) == ["a", "b", "args", "kw"]
    assert problems(node, None) == [
        "Parameters lists ['a', 'b', 'args', 'kw'], the signature has ['a', 'args', 'b', 'kw']"
    ]
    tree = ast.parse(
        'class C:\n    """C.\n\n    Parameters\n    ----------\n    x : int\n    """\n'
        "    def __init__(self, x):\n        self.x = x\n    def m(self) -> None:\n        pass\n"
        "    def n(self):\n        return 1\n"
    )
    cls = tree.body[0]
    init, m, n = cls.body[1:]
    assert problems(init, cls) == [] and problems(m, cls) == [] and problems(n, cls) == ["no Returns section"]


def test_the_api_of_attnspec_all_is_among_the_public_callables():
    import attnspec

    found = {
        name.rsplit(".", 1)[1]
        for path in public_module_files()
        for name in [n for n, _, _ in public_callables(path)] + made_at_import(path)
    }
    functions = {"spectrum", "load", "jl_check", "sa_check", "osa_check", "osa_train"}
    assert functions <= set(attnspec.__all__) and functions <= found
    assert {"per_layer", "plot", "save", "summary", "sentences"} <= found  # SpectrumResult's, CheckResult's


def test_every_public_callable_documents_its_parameters_and_return_value():
    found = gaps()
    counts = {module: len(names) for module, names in found.items()}
    grown = {m: found[m] for m, n in counts.items() if n > KNOWN_GAPS.get(m, 0)}
    assert not grown, "public callables without numpydoc Parameters / Returns:\n" + "\n".join(
        f"  {name}: {'; '.join(why)}" for names in grown.values() for name, why in names.items()
    )


def test_the_list_of_gaps_only_shrinks():
    counts = {module: len(names) for module, names in gaps().items()}
    stale = {m: (n, counts.get(m, 0)) for m, n in KNOWN_GAPS.items() if counts.get(m, 0) < n}
    assert not stale, f"fewer undocumented callables than listed (listed, left): lower KNOWN_GAPS: {stale}"


def test_docstrings_made_at_import_document_the_signature():
    import importlib
    import inspect

    made = [name for path in public_module_files() for name in made_at_import(path)]
    assert {
        "attnspec.api.spectrum",
        "attnspec.checks.jl_check",
        "attnspec.checks.sa_check",
        "attnspec.checks.osa_check",
        "attnspec.checks.osa_train",
    } <= set(made)
    for name in made:
        module, attr = name.rsplit(".", 1)
        function = getattr(importlib.import_module(module), attr)
        found = sections(inspect.cleandoc(function.__doc__ or ""))
        params = [p for p in inspect.signature(function).parameters if not p.startswith("_")]
        assert documented_names(found.get("Parameters", "")) == params, name
        assert "Returns" in found, name
