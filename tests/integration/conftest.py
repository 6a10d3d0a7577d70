"""Fixtures of the spectrum-run integration tests: a tiny local RoBERTa and a text corpus."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import make_roberta_tokenizer
from models_tiny import tiny_roberta


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A saved tiny random RoBERTa (2 layers, 4 heads, 62 positions) with its tokenizer."""
    d = tmp_path_factory.mktemp("tiny-roberta")
    tok = make_roberta_tokenizer(d / "tok")
    model = tiny_roberta(vocab=len(tok), n=62)
    model.save_pretrained(d / "model")
    tok.save_pretrained(d / "model")
    return d / "model"


@pytest.fixture(scope="session")
def text_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Plain text, one document per line, each long enough to fill a window."""
    rng = np.random.default_rng(0)
    words = ("attention matrix rank lobster movie actors story music numbers quotes brackets the of and "
             "a was to in it is that singular value curve encoder").split()
    path = tmp_path_factory.mktemp("text") / "docs.txt"
    path.write_text("\n".join(" ".join(rng.choice(words, size=60)) for _ in range(40)) + "\n")
    return path
