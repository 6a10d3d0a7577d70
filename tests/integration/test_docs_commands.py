"""Every `attnspec ...` command written in README.md and docs/*.md runs as written.

The commands are extracted from the fenced code blocks of each file (a leading ``$ `` and a
trailing ``# comment`` are dropped, ``\\`` continuations joined, ``... && attnspec ...``
reduced to the attnspec part). Each file runs in a fresh working directory laid out as
the docs assume: the shared data at ``../shared/data``, a tiny encoder at
``PATH/TO/ENCODER`` and a text file at ``PATH/TO/TEXT``, and the result directories that
the docs take as given (``results/run2``, shards to merge) made beforehand with the tiny
encoder. Then, in the order of the file:

* a command followed in its block by an ``error: ...`` line must fail with exactly that
  one-line error (exit code 1) — these are cheap, run as written;
* a synopsis (``[--opt ...]``, ``...``) is checked against ``--help``: every option it
  names must exist;
* a command that needs the model hub (``--model roberta-*``) runs as ``--help`` (this
  machine has no hub) and its options are checked the same way;
* ``attnspec report`` runs as ``--help`` (the full report takes hours; ``--quick`` is run
  by tests/integration/test_report_quick.py);
* every other command runs as written, the long ones with the overrides of
  :data:`OVERRIDES` appended or substituted (smaller n, fewer inputs and trials); a
  command that after the overrides differs from one already run only in its ``--out``
  folder or in ``--verbose``/``--json`` is not run again. About 70 s of CPU in all, most of it drawing the figures of
  the ``--out`` runs. ``torchrun`` lines are left to
  tests/integration/test_torchrun_shards.py.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from helpers import HAVE_SMOLLM2, save_tiny_roberta
from typer.testing import CliRunner

from attnspec.cli.main import app

REPO = Path(__file__).resolve().parents[2]
DOC_FILES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

#: Per subcommand: options whose values are replaced (or added) to keep the run short.
#: Later options win in click, so replacing keeps the command otherwise as written.
OVERRIDES: dict[str, dict[str, str | None]] = {
    # real MiniLM on the real corpora: n = 64 and 2 inputs instead of 512 and up to 1,000
    "spectrum": {"--seq-len": "64", "--num-inputs": "2"},
    "jl-check": {"--n": "64", "--trials": "100", "--trials-other": "20", "--count": "2"},
    "sa-check": {
        "--L": "32",
        "--k": "2",
        "--trials": "20",
        "--sweep-L": "32",
        "--sweep-k": "1,2",
        "--sweep-trials": "10",
    },
    "osa-check": {"--trials": "1", "--timing": None, "--steps": "2"},
    # `attnspec check NAME`: a plug-in's check (docs/theorem-api.md), fewer draws per grid point
    "check": {"--trials": "300"},
    "osa-train": {"--quick": None, "--epochs": "1", "--seeds": "1", "--models": "vit,osa-qr"},
}
#: Flags that name the same option as another (a hidden alias → the option's own flag).
SAME_OPTION = {"--num-sentences": "--num-inputs"}
#: jl-check's --k grids are replaced only when the command gives one (keeps k < the small n).
JL_K = "8,16,32"
HUB_MODEL = re.compile(r"--model\s+(roberta|bert-base|gpt)")
SYNOPSIS = re.compile(r"\[--|\.\.\.|…|\bINT\b|\bFLOAT\b|\bDIR\b")


@dataclass
class DocCommand:
    file: str
    line: int
    text: str
    expect_error: str | None = None

    @property
    def id(self) -> str:
        return f"{self.file}:{self.line}"


def extract(path: Path) -> list[DocCommand]:
    """The attnspec commands of the fenced code blocks of one Markdown file, in order."""
    out: list[DocCommand] = []
    lines = path.read_text().splitlines()
    in_block = False
    i = 0
    while i < len(lines):
        raw = lines[i]
        if raw.lstrip().startswith("```"):
            in_block = not in_block
            i += 1
            continue
        if not in_block:
            i += 1
            continue
        start = i
        text = raw.strip()
        while text.endswith("\\") and i + 1 < len(lines):
            i += 1
            text = text[:-1].rstrip() + " " + lines[i].strip()
        # a synopsis continues on indented lines that start with '['
        while i + 1 < len(lines) and lines[i + 1].strip().startswith("[--"):
            i += 1
            text += " " + lines[i].strip()
        i += 1
        text = text.removeprefix("$ ")
        if text.startswith("torchrun"):
            continue
        if "&& attnspec " in text:
            text = text[text.index("&& attnspec ") + 3 :]
        if not text.startswith("attnspec "):
            continue
        text = re.sub(r"\s+#\s.*$", "", text).strip()
        nxt = next((l.strip() for l in lines[i:] if l.strip()), "")
        out.append(
            DocCommand(
                path.relative_to(REPO).as_posix(),
                start + 1,
                text,
                expect_error=nxt if nxt.startswith("error:") else None,
            )
        )
    return out


ALL = [c for f in DOC_FILES for c in extract(f)]
#: Overridden commands already run, with --out's folder blanked and --verbose/--json
#: dropped: a command that differs from one of them only in its output folder or in how
#: much it prints is not run twice (the docs repeat some).
_RAN: set[tuple[str, ...]] = set()


def _subcommand(argv: list[str]) -> list[str]:
    return argv[:2] if argv[0] == "plot" else argv[:1]


def _override(argv: list[str]) -> list[str]:
    sub = argv[0]
    rules = OVERRIDES.get(sub, {})
    if sub == "spectrum" and "--approx" in argv:  # approximations: 6 documents, 2 fitted on, small k, few steps
        rules = {**rules, "--num-inputs": "6", "--approx-split": "2,4", "--approx-k": "16", "--approx-steps": "2"}
    argv = list(argv)
    if sub == "jl-check" and "--k" in argv:
        argv[argv.index("--k") + 1] = JL_K
    if sub == "sa-check" and "--sweep" in argv:
        argv.remove("--sweep")  # the full grid is minutes; the small --sweep-L/-k grid runs instead
    argv = [SAME_OPTION.get(a, a) for a in argv]  # one flag per option, so an override replaces it
    for opt, value in rules.items():
        if (
            sub == "spectrum"
            and opt == "--seq-len"
            and "--seq-len" in argv
            and "," in argv[argv.index("--seq-len") + 1]
        ):
            continue  # a scaling study: its lengths are the point (the docs' lists are small)
        if (
            sub == "spectrum"
            and opt == "--num-inputs"
            and "--num-inputs" in argv
            and argv[argv.index("--num-inputs") + 1] != "all"
            and int(argv[argv.index("--num-inputs") + 1]) <= 2
        ):
            continue
        if value is None:  # a flag
            flag = "--no-timing" if opt == "--timing" else opt
            if flag not in argv:
                argv.append(flag)
            continue
        if opt in argv:
            argv[argv.index(opt) + 1] = value
        elif not (sub == "jl-check" and opt == "--count" and "--model" not in argv):
            argv += [opt, value]
    return argv


def _options_in(text: str) -> list[str]:
    return sorted({m.split("/")[0].split("=")[0] for m in re.findall(r"--[A-Za-z][\w-]*(?:/--[\w-]+)?", text)})


def _check_options(runner: CliRunner, argv: list[str], doc: DocCommand) -> None:
    sub = _subcommand([a for a in argv if not a.startswith("[")])
    res = runner.invoke(app, [*sub, "--help"])
    assert res.exit_code == 0, f"{doc.id}: `attnspec {' '.join(sub)} --help` failed: {res.output}"
    for opt in _options_in(doc.text):
        assert opt in res.output, f"{doc.id}: {opt} is not an option of attnspec {' '.join(sub)}"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("docs-tiny")
    model = save_tiny_roberta(d, n=130)
    rng = np.random.default_rng(0)
    words = "the attention of a movie was low rank and the music was good".split()
    text = d / "text.txt"
    text.write_text("\n".join(" ".join(rng.choice(words, 60)) for _ in range(12)) + "\n")
    return model, text


def _workdir(root: Path, tiny: tuple[Path, Path], data_dir: Path, runner: CliRunner) -> Path:
    """A working directory laid out as the docs assume (see the module docstring)."""
    cwd = root / "repo"
    (cwd / "PATH" / "TO").mkdir(parents=True)
    (root / "shared").mkdir()
    (root / "shared" / "data").symlink_to(data_dir.resolve(), target_is_directory=True)
    (cwd / "PATH" / "TO" / "ENCODER").symlink_to(tiny[0], target_is_directory=True)
    (cwd / "PATH" / "TO" / "TEXT").symlink_to(tiny[1])
    base = [
        "spectrum",
        "--model",
        str(tiny[0]),
        "--data",
        str(tiny[1]),
        "--seq-len",
        "24",
        "--num-sentences",
        "6",
        "--device",
        "cpu",
        "-q",
        "--no-plots",
    ]
    given = {
        "results/run2": ["--seed", "1"],
        "results/shard0": ["--shard", "0/2"],
        "results/shard1": ["--shard", "1/2"],
        "results/wiki-shard0of2": ["--shard", "0/2"],
        "results/wiki-shard1of2": ["--shard", "1/2"],
        **{f"results/s{i}": ["--shard", f"{i}/3"] for i in range(3)},
    }
    for out, extra in given.items():
        res = runner.invoke(app, [*base, *extra, "--out", str(cwd / out)])
        assert res.exit_code == 0, res.output
    return cwd


def _names_absent_plugin(argv: list[str]) -> bool:
    """Whether a spectrum command's --approx or --baseline names something no installed package registers."""
    from attnspec.errors import InputError
    from attnspec.spectra.approx.registry import parse_approx
    from attnspec.spectra.nulls import parse_baselines

    for flag, parse in (("--approx", parse_approx), ("--baseline", parse_baselines)):
        if flag in argv[:-1]:
            try:
                parse(argv[argv.index(flag) + 1])
            except InputError:
                return True
    return False


@pytest.mark.slow
@pytest.mark.realdata
@pytest.mark.minilm
@pytest.mark.parametrize("doc_file", [f.relative_to(REPO).as_posix() for f in DOC_FILES])
def test_every_documented_command_runs(
    doc_file: str, tiny, data_dir: Path, minilm_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    monkeypatch.delenv("ATTNSPEC_DATA_DIR", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    torch.set_num_threads(1)
    runner = CliRunner()
    cwd = _workdir(tmp_path, tiny, data_dir, runner)
    monkeypatch.chdir(cwd)
    commands = [c for c in ALL if c.file == doc_file]
    for doc in commands:
        argv = shlex.split(doc.text)[1:]
        if argv[:1] == ["check"] and len(argv) > 1 and not _installed(argv[1]):
            continue  # a plug-in not installed here: tests/integration/test_favor_plugin.py installs and runs it
        if argv[:1] == ["claims"] and "--paper" in argv and not _paper_installed(argv[argv.index("--paper") + 1]):
            continue  # a plug-in's paper: the same
        if doc.expect_error is not None:
            res = runner.invoke(app, argv)
            assert res.exit_code == 1, f"{doc.id}: `{doc.text}` should fail: {res.output}"
            got = [l for l in res.stderr.splitlines() if l.strip()]
            assert got == [doc.expect_error], f"{doc.id}: the docs show {doc.expect_error!r}, the command says {got}"
            continue
        if argv[:1] == ["spectrum"] and _names_absent_plugin(argv):
            continue  # a plug-in's method or null: tests/integration/test_local_plugin.py installs and runs it
        # a GGUF alias whose package is absent is checked like a hub model: its options only
        needs_absent_gguf = "smollm2" in argv and not HAVE_SMOLLM2
        if SYNOPSIS.search(doc.text) or HUB_MODEL.search(doc.text) or needs_absent_gguf or argv[0] == "report":
            _check_options(runner, argv, doc)
            continue
        run = _override(argv)
        # what is computed: the --out folder and the output-only flags do not count
        signature = tuple(
            "DIR" if i > 0 and run[i - 1] == "--out" else a
            for i, a in enumerate(run)
            if a not in ("--verbose", "--json")
        )
        if signature in _RAN:
            continue  # the same computation into another folder already ran (e.g. README and docs/)
        _RAN.add(signature)
        res = runner.invoke(app, run)
        assert res.exit_code == 0, f"{doc.id}: `{doc.text}` (run as `attnspec {' '.join(run)}`) failed:\n{res.output}"
        if "--json" in run:
            json.loads(res.stdout)  # stdout holds only JSON


def _installed(check: str) -> bool:
    from attnspec.theorem.registry import commands

    return check in commands()


def _paper_installed(paper: str) -> bool:
    from attnspec.theorem.registry import papers

    return paper in papers()


def test_extraction_finds_the_documented_commands() -> None:
    texts = {c.text for c in ALL}
    assert "attnspec osa-check --alpha nan" in texts
    assert any(t.startswith("attnspec spectrum --model minilm --data wiki103 --data-dir ../shared/data") for t in texts)
    assert any(c.expect_error for c in ALL) and len(ALL) >= 30
    readme_first = next(c for c in ALL if c.file == "README.md")
    assert readme_first.text.startswith("attnspec spectrum --model minilm")  # from the `pip ... && attnspec` line
