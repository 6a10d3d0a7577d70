"""Fixtures of the spectrum-run integration tests: a tiny local RoBERTa and a text corpus."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import save_tiny_roberta


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A saved tiny random RoBERTa (2 layers, 4 heads, 62 positions) with its tokenizer."""
    return save_tiny_roberta(tmp_path_factory.mktemp("tiny-roberta"))


@pytest.fixture(scope="session")
def text_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Plain text, one document per line, each long enough to fill a window."""
    rng = np.random.default_rng(0)
    words = (
        "attention matrix rank lobster movie actors story music numbers quotes brackets the of and "
        "a was to in it is that singular value curve encoder"
    ).split()
    path = tmp_path_factory.mktemp("text") / "docs.txt"
    path.write_text("\n".join(" ".join(rng.choice(words, size=60)) for _ in range(40)) + "\n")
    return path
