"""Bad inputs get one clear line: special files among experiments, ``texts`` that are not a
list of strings, and user strings printed as written (no rich markup or emoji codes)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import attnspec
from attnspec.errors import InputError


@pytest.mark.parametrize("only", [(), ("--only", "x")], ids=["all", "only"])
def test_a_fifo_among_experiments_is_refused_not_waited_on(tmp_path: Path, only: tuple[str, ...]) -> None:
    exps = tmp_path / "experiments"
    exps.mkdir()
    os.mkfifo(exps / "x.toml")
    cmd = [
        sys.executable,
        "-m",
        "attnspec.cli.main",
        "report",
        "--experiments",
        str(exps),
        "--out",
        str(tmp_path / "o"),
    ]
    proc = subprocess.run([*cmd, *only], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "x.toml: is a FIFO, not a regular file" in lines[0], proc.stderr


@pytest.mark.parametrize(
    ("texts", "words"),
    [
        (["a movie", None], r"texts\[1\] must be a string .* got NoneType: None"),
        (("a movie", "another", 3), r"texts\[2\] must be a string .* got int: 3"),
        ({"a": 1}, r"got a dict, whose items are its keys"),
    ],
)
def test_texts_that_are_not_strings_are_named_by_position(texts: object, words: str) -> None:
    with pytest.raises(InputError, match=words) as e:
        attnspec.spectrum("no-such-model", texts=texts)  # refused before any model loads
    assert "\n" not in str(e.value)


def test_a_dataframe_as_texts_names_the_expected_type() -> None:
    import pandas as pd

    frame = pd.DataFrame({"text": ["a movie", "another movie"]})
    with pytest.raises(InputError, match=r"got a DataFrame, whose items are its column names.*tolist") as e:
        attnspec.spectrum("no-such-model", texts=frame)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("text", ["a:b: ran (0.1 s)", "[bold]x[/] :smile: :b:", "model a:thumbs_up: loaded"])
def test_user_strings_print_as_written(text: str) -> None:
    from attnspec.cli._common import err_console, out_console

    for console in (out_console, err_console):
        with console.capture() as cap:
            console.print(text, highlight=False)
        assert cap.get().strip() == text


def test_every_console_leaves_emoji_codes_alone() -> None:
    root = Path(attnspec.__file__).parent
    for path in root.rglob("*.py"):
        for line in path.read_text(encoding="utf-8").splitlines():
            if re.search(r"\bConsole\(", line):  # each construction fits one line
                assert "emoji=False" in line, f"{path}: {line.strip()} interprets :codes: as emoji"
