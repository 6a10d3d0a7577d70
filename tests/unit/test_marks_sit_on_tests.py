"""A pytest mark on a function that is not a test does nothing: a ``slow`` mark that slides onto a
helper (a function inserted between the mark and its test) silently puts the test into the
default run."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def _marked_non_tests(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name.startswith("test"):
            continue
        for dec in node.decorator_list:
            target = dec.func if isinstance(dec, ast.Call) else dec
            text = ast.unparse(target)
            if text.startswith("pytest.mark.") and not text.startswith("pytest.mark.usefixtures"):
                found.append(f"{node.name} ({text}, line {node.lineno})")
    return found


def test_every_mark_sits_on_a_test():
    wrong = {
        p.relative_to(TESTS).as_posix(): bad
        for p in sorted(TESTS.rglob("*.py"))
        if (bad := _marked_non_tests(p.read_text(encoding="utf-8")))
    }
    assert not wrong, f"marks on functions that are not tests: {wrong}"


def test_the_check_sees_a_mark_on_a_helper():
    assert _marked_non_tests("import pytest\n@pytest.mark.slow\ndef helper():\n    pass\n") == [
        "helper (pytest.mark.slow, line 3)"
    ]
    assert _marked_non_tests("import pytest\n@pytest.mark.slow\ndef test_x():\n    pass\n") == []
