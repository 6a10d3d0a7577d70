"""docs/python-api.md runs as written: every ```python block, in order, in one namespace.

Blocks whose first line is ``# needs the hub`` are only shown (this machine has no hub).
Needs the installed MiniLM weights and ../shared/data; skips otherwise.
"""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib.pyplot as plt
import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "python-api.md"


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


def test_the_document_has_runnable_examples() -> None:
    blocks = _blocks()
    runnable = [b for b in blocks if not b.startswith("# needs the hub")]
    assert len(blocks) >= 6 and len(runnable) >= 5


def test_python_api_doc_examples_run(minilm_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = DOC.parents[1]
    if not (repo.parent / "shared" / "data").is_dir():
        pytest.skip("the doc's data_dir ../shared/data is absent")
    monkeypatch.chdir(repo)  # the doc's relative paths start at the repository root
    namespace: dict = {}
    try:
        for block in _blocks():
            if block.startswith("# needs the hub"):
                continue
            exec(compile(block, str(DOC), "exec"), namespace)  # noqa: S102 - the doc's own examples
    finally:
        plt.close("all")
    assert namespace["res"].meta["inputs_done"] == 8
    assert namespace["shapes"] and namespace["shapes"][0][1][1] == 4
