"""The report's code digest follows what the code does, not its layout."""

from __future__ import annotations

import ast

from attnspec.report.code_digest import _canonical, source_digest

PACKED = '''"""Module doc."""
def f(a, b,
      c=1):  # a comment
    """Doc."""
    return g(a, b, c)
'''
FORMATTED = '''"""Module doc, reworded."""


def f(
    a,
    b,
    c=1,
):
    """Doc,
    reworded."""
    # another comment
    return g(
        a,
        b,
        c,
    )
'''


def _digest(tmp_path, text: str) -> str:
    path = tmp_path / "m.py"
    path.write_text(text)
    return source_digest(tmp_path, [path])


def test_layout_comments_and_docstrings_leave_the_digest(tmp_path):
    assert _digest(tmp_path, PACKED) == _digest(tmp_path, FORMATTED)


def test_a_changed_constant_name_or_path_changes_the_digest(tmp_path):
    base = _digest(tmp_path, PACKED)
    assert _digest(tmp_path, PACKED.replace("c=1", "c=2")) != base
    assert _digest(tmp_path, PACKED.replace("g(a", "h(a")) != base
    assert _digest(tmp_path, PACKED.replace("return g(a, b, c)", "return 'label'")) != base
    other = tmp_path / "sub"
    other.mkdir()
    (other / "m.py").write_text(PACKED)
    assert source_digest(tmp_path, [other / "m.py"]) != base


def test_the_canonical_form_skips_empty_fields_on_every_python():
    # ast.dump writes empty lists and None on 3.10-3.12 and leaves them out on 3.13; this form
    # never writes them, so the same source gives the same digest on every supported version
    form = _canonical(ast.parse("def f(x):\n    return x + 1\n"))
    assert form == (
        "Module(body=[FunctionDef(name='f',args=arguments(args=[arg(arg='x')]),"
        "body=[Return(value=BinOp(left=Name(id='x',ctx=Load()),op=Add(),right=Constant(value=1)))])])"
    )
