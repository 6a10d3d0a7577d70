"""docs/python-api.md runs as written: every ```python block, in order, in one namespace.

Blocks whose first line is ``# needs the hub`` are only shown (this machine has no hub).
The spectrum part needs the installed MiniLM weights and ../shared/data (skips otherwise);
the theorem-checks part (from "## The theorem checks from Python") needs neither, and its
printed output is compared with the ``prints`` block that follows a block. The README's
Python example runs too.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import matplotlib.pyplot as plt
import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "python-api.md"
README = DOC.parents[1] / "README.md"
CHECKS_HEADING = "## The theorem checks from Python"


def _blocks(text: str | None = None) -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text() if text is None else text, flags=re.S)


def _parts() -> tuple[str, str]:
    text = DOC.read_text()
    assert CHECKS_HEADING in text
    head, _, tail = text.partition(CHECKS_HEADING)
    return head, tail


def test_the_document_has_runnable_examples() -> None:
    blocks = _blocks()
    runnable = [b for b in blocks if not b.startswith("# needs the hub")]
    assert len(blocks) >= 6 and len(runnable) >= 5
    assert len(_blocks(_parts()[1])) >= 5


@pytest.mark.slow  # the real MiniLM on the real corpus, every example of the page
def test_python_api_doc_examples_run(minilm_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = DOC.parents[1]
    if not (repo.parent / "shared" / "data").is_dir():
        pytest.skip("the doc's data_dir ../shared/data is absent")
    monkeypatch.chdir(repo)  # the doc's relative paths start at the repository root
    namespace: dict = {}
    try:
        for block in _blocks(_parts()[0]):
            if block.startswith("# needs the hub"):
                continue
            exec(compile(block, str(DOC), "exec"), namespace)  # noqa: S102 - the doc's own examples
    finally:
        plt.close("all")
    assert namespace["res"].meta["inputs_done"] == 8
    assert namespace["shapes"] and namespace["shapes"][0][1][1] == 4


@pytest.mark.slow
def test_python_api_doc_checks_run_and_print_what_the_doc_says() -> None:
    tail = _parts()[1]
    expected = {
        m.group(1): m.group(2)
        for m in re.finditer(r"```python\n(.*?)```\s*\n\s*prints\s*\n\s*```\n(.*?)```", tail, flags=re.S)
    }
    assert expected, "the checks section shows the output of its error example"
    namespace: dict = {}
    try:
        for block in _blocks(tail):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(block, str(DOC), "exec"), namespace)  # noqa: S102 - the doc's own examples
            if block in expected:
                assert out.getvalue() == expected[block]
    finally:
        plt.close("all")
    chk = namespace["chk"]
    assert chk.command == "jl-check" and len(chk.summary()) == chk.verdicts["claim"].nunique()
    assert (namespace["run_dir"] / "meta.json").is_file() and namespace["figures"]


@pytest.mark.slow
def test_readme_python_example_runs(
    minilm_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The README's Python example, as written, from a working directory laid out as it assumes
    (the shared data at ../shared/data): a spectrum run saved, and a check's verdicts."""
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) == 1 and "attnspec.spectrum(" in blocks[0] and "osa_check(" in blocks[0]
    cwd = tmp_path / "repo"
    cwd.mkdir()
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "data").symlink_to(data_dir.resolve(), target_is_directory=True)
    monkeypatch.chdir(cwd)  # res.save("results/...") writes relative to the working directory
    namespace: dict = {}
    try:
        with contextlib.redirect_stdout(io.StringIO()) as out:
            exec(compile(blocks[0], str(README), "exec"), namespace)  # noqa: S102 - the README's own example
    finally:
        plt.close("all")
    assert (cwd / "results" / "minilm-py" / "meta.json").is_file()
    assert namespace["res"].meta["inputs_done"] == 8
    chk = namespace["chk"]
    assert chk.command == "osa-check" and len(out.getvalue().splitlines()) >= chk.verdicts["claim"].nunique()
