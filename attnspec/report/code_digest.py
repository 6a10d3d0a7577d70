"""A digest of what Python source does, not of how it is laid out.

The report keys checking results and figures to the code that made them. A text digest would
make every saved result stale after ``ruff format``, a reworded comment or a docstring fix,
though no number can change; rerunning the training check alone takes ten minutes. So the digest
is taken over the syntax tree, less comments (absent from the tree), docstrings and layout.

The tree is written out by :func:`_canonical` rather than :func:`ast.dump`, whose output differs
between Python versions (3.13 leaves out empty fields); empty lists and ``None`` are skipped here
on every version, so that 3.10 and 3.13 agree on the same file. String and number constants, names
and operators are all kept: a changed label, threshold or formula changes the digest.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterable
from pathlib import Path

_WITH_DOCSTRING = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _canonical(node: object) -> str:
    """One line per tree: node type, then its non-empty fields in declaration order."""
    if isinstance(node, ast.AST):
        fields = []
        for name in node._fields:
            value = getattr(node, name, None)
            if name == "body" and isinstance(node, _WITH_DOCSTRING) and value and _is_docstring(value[0]):
                value = value[1:]
            if value is None or (isinstance(value, list) and not value):
                continue
            fields.append(f"{name}={_canonical(value)}")
        return f"{type(node).__name__}({','.join(fields)})"
    if isinstance(node, list):
        return "[" + ",".join(_canonical(v) for v in node) + "]"
    return repr(node)


def source_digest(root: Path, paths: Iterable[Path]) -> str:
    """SHA-256 over the syntax trees of ``paths`` (docstrings out), each tagged by its path under ``root``.

    Parameters
    ----------
    root : Path
        The folder the recorded paths are relative to (the attnspec package).
    paths : iterable of Path
        Python files, hashed in the order given.

    Returns
    -------
    str
        64 hex digits.
    """
    h = hashlib.sha256()
    for path in paths:
        tree = _canonical(ast.parse(path.read_text(encoding="utf-8")))
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + tree.encode() + b"\0")
    return h.hexdigest()


def _module_file(root: Path, dotted: str) -> Path | None:
    """The file of module ``dotted`` (``attnspec.numerics.laws``) under ``root``, the package folder; None if none."""
    parts = dotted.split(".")[1:]
    base = root.joinpath(*parts)
    for candidate in (base / "__init__.py", base.with_suffix(".py")):
        if parts and candidate.is_file():
            return candidate
    return None


def imports_of(root: Path, path: Path) -> set[Path]:
    """The files of the attnspec package that ``path`` imports anywhere in it, lazy in-function
    imports included; ``path`` may lie outside the package (a plug-in's module), whose relative
    imports then stay in its own package and are not followed.

    Parameters
    ----------
    root : Path
        The attnspec package folder.
    path : Path
        A Python file.

    Returns
    -------
    set of Path
        Modules under ``root``.
    """
    inside = root in path.parents
    package = ["attnspec", *path.relative_to(root).with_suffix("").parts[:-1]] if inside else []
    found: set[Path] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level and not inside:
                continue
            if node.level:  # relative: from the package ``level - 1`` above this file's
                up = package[: len(package) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            names = [base, *(f"{base}.{a.name}" for a in node.names)]  # a name may be a submodule
        else:
            continue
        found.update(f for n in names if n.split(".")[0] == "attnspec" and (f := _module_file(root, n)) is not None)
    return found


def imported_closure(root: Path, paths: Iterable[Path], leave_out: tuple[str, ...] = ()) -> list[Path]:
    """``paths`` and every module of the package they import, directly or not, sorted.

    Parameters
    ----------
    root : Path
        The attnspec package folder.
    paths : iterable of Path
        The modules to start from.
    leave_out : tuple of str
        Paths under ``root`` (``"errors.py"``) or folders (``"storage/"``) neither followed nor
        returned: code that cannot change a number.

    Returns
    -------
    list of Path
        The modules, in path order.
    """

    def left_out(p: Path) -> bool:
        rel = p.relative_to(root).as_posix()
        return any(rel == x or (x.endswith("/") and rel.startswith(x)) for x in leave_out)

    todo, seen = [Path(p) for p in paths], set()
    while todo:
        p = todo.pop()
        if p in seen or left_out(p):
            continue
        seen.add(p)
        todo.extend(imports_of(root, p))
    return sorted(seen)
