"""The docs say what the tool does: the seven verdicts with their one-line meanings (README,
docs, every checking command's --help), documented option defaults equal the options'
defaults, and documented output columns equal the columns a run writes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import typer.main
from typer.testing import CliRunner

from attnspec.cli.main import app
from attnspec.verdicts.vocabulary import VERDICT_MEANINGS, VERDICTS

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text)


# --- one vocabulary -----------------------------------------------------------------------


def test_the_vocabulary_is_the_classifiers() -> None:
    from attnspec.verdicts import classify as verdicts

    assert verdicts.VERDICT_MEANINGS is VERDICT_MEANINGS and verdicts.VERDICTS is VERDICTS
    assert set(VERDICTS) == set(verdicts.VerdictKind.__args__) and len(VERDICTS) == 7


@pytest.mark.parametrize("doc", ["README.md", "docs/jl-check.md", "docs/sa-check.md", "docs/osa-check.md"])
def test_docs_define_every_verdict_with_the_classifiers_words(doc: str) -> None:
    text = _squash((REPO / doc).read_text())
    for v in VERDICTS:
        assert f"`{v}` — {VERDICT_MEANINGS[v]}" in text, f"{doc} lacks the definition of {v!r}"


def test_readme_intro_names_all_seven_verdicts() -> None:
    intro = (REPO / "README.md").read_text().split("## Set-up")[0]
    for v in VERDICTS:
        assert f"`{v}`" in intro


@pytest.mark.parametrize("command", ["jl-check", "sa-check", "osa-check", "claims"])
def test_help_ends_with_the_seven_verdicts(command: str) -> None:
    res = runner.invoke(app, [command, "--help"], terminal_width=200)
    assert res.exit_code == 0, res.output
    shown = _squash(res.output)
    for v in VERDICTS:
        assert f"{v}: {VERDICT_MEANINGS[v]}" in shown, f"{command} --help lacks {v!r}"


def test_jl_check_help_says_what_it_prints() -> None:
    shown = _squash(runner.invoke(app, ["jl-check", "--help"], terminal_width=200).output)
    assert "Prints a verdict table" not in shown and "one summary line per claim id and reading" in shown


# --- documented option defaults ------------------------------------------------------------


def _option_tables(doc: Path) -> list[list[list[str]]]:
    """The rows (cells) of every `| option | default | meaning |` table of a Markdown file."""
    tables, rows, inside = [], [], False
    for line in doc.read_text().splitlines():
        if line.startswith("| option | default |"):
            inside, rows = True, []
            continue
        if inside and line.startswith("|"):
            if not line.startswith("|---"):
                cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
                rows.append(cells)
            continue
        if inside:
            tables.append(rows)
            inside = False
    if inside:
        tables.append(rows)
    return tables


def _params(command: str) -> dict[str, object]:
    cmd = typer.main.get_command(app).commands[command]
    out = {}
    for p in cmd.params:
        for name in [*p.opts, *getattr(p, "secondary_opts", [])]:
            out[name] = p
    return out


NUMBER = re.compile(r"^-?\d[\d,]*(\.\d+)?(e-?\d+)?$")


def _matches(cell: str, default: object) -> bool:
    """Whether a documented default cell states ``default``."""
    plain = cell.replace("`", "").strip()
    if default is None:
        # no default value: the doc says so, or says what happens instead (never a bare literal)
        return plain in ("—", "none", "off") or not (NUMBER.match(plain) or re.fullmatch(r"[\w.-]+", plain))
    if isinstance(default, bool):
        return plain.split()[0] in (("on",) if default else ("off", "—"))
    if isinstance(default, (list, tuple)):
        parts = [x.strip() for x in plain.split(",")]
        return len(parts) == len(default) and all(_matches(p, d) for p, d in zip(parts, default))
    if isinstance(default, (int, float)):
        first = plain.split()[0].rstrip(",;")
        return bool(NUMBER.match(first)) and float(first.replace(",", "")) == float(default)
    return f"`{default}`" in cell or plain.split()[0].rstrip(",;") == str(default)


@pytest.mark.parametrize(
    "doc, command",
    [("docs/spectrum.md", "spectrum"), ("docs/jl-check.md", "jl-check"), ("docs/osa-check.md", "osa-check")],
)
def test_documented_defaults_are_the_options_defaults(doc: str, command: str) -> None:
    tables = _option_tables(REPO / doc)
    assert tables, f"{doc} has no option table"
    params = _params(command)
    checked = 0
    for cells in tables[0]:
        names = [n for tok in re.findall(r"`(-[^`]*)`", cells[0]) for n in tok.split()[0].split("/")]
        names = [n for n in names if n in params]
        assert names, f"{doc}: {cells[0]} names no option of `attnspec {command}`"
        defaults = [params[n].default for n in names]
        unique = list(dict.fromkeys(names, None))
        if len({id(params[n]) for n in unique}) > 1:  # several options, one default each: "8, 4"
            parts = [x.strip() for x in cells[1].split(",")]
            pairs = list(zip(parts, [params[n].default for n in unique]))
            if len(parts) != len(unique):  # a row of options with no default ("—")
                pairs = [(cells[1], params[n].default) for n in unique]
        else:
            pairs = [(cells[1], defaults[0])]
        for cell, default in pairs:
            assert _matches(cell, default), f"{doc}: {cells[0]} documents default {cell!r}, the tool's is {default!r}"
            checked += 1
    assert checked >= 10
    documented = {
        n for cells in tables[0] for tok in re.findall(r"`(-[^`]*)`", cells[0]) for n in tok.split()[0].split("/")
    }
    cmd = typer.main.get_command(app).commands[command]
    missing = [p.opts[0] for p in cmd.params if p.opts and p.opts[0] != "--help" and not set(p.opts) & documented]
    assert not missing, f"{doc}: options of `attnspec {command}` not in its table: {missing}"


# --- documented output columns -------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from helpers import save_tiny_roberta

    root = tmp_path_factory.mktemp("docs-columns")
    model = save_tiny_roberta(root / "model")
    (root / "model_path").write_text(str(model))
    rng = np.random.default_rng(0)
    words = "the attention of a movie was low rank and the music was good".split()
    data = root / "t.jsonl"
    data.write_text("\n".join(json.dumps({"text": " ".join(rng.choice(words, 40))}) for _ in range(3)) + "\n")
    out = root / "run"
    r = runner.invoke(
        app,
        [
            "spectrum",
            "--model",
            str(model),
            "--data",
            str(data),
            "--seq-len",
            "16",
            "--device",
            "cpu",
            "-q",
            "--no-plots",
            "--out",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    return out


def _row(doc: str, first_cell: str) -> str:
    for line in (REPO / doc).read_text().splitlines():
        if line.startswith(f"| {first_cell} |"):
            return line
    raise AssertionError(f"{doc} has no row {first_cell}")


def test_python_api_doc_lists_the_columns_a_run_writes(tiny_run: Path) -> None:
    from attnspec.storage.results import read_table

    spectrum = list(read_table(tiny_run, "spectrum").columns)
    metrics = list(read_table(tiny_run, "metrics").columns)
    curves_row = _row("docs/python-api.md", "`res.curves`")
    listed = [t for t in re.findall(r"`([^`]+)`", curves_row) if ", " in t][0].split(", ")
    assert listed == spectrum
    metrics_row = _row("docs/python-api.md", "`res.metrics`")
    lists = [t.split(", ") for t in re.findall(r"`([^`]+)`", metrics_row) if ", " in t]
    documented = lists[0] + [f"{m}_{s}" for m in lists[1] for s in ("mean", "std")]
    assert sorted(documented) == sorted(metrics)
    assert f"the {len(metrics)} columns" in metrics_row


def test_spectrum_doc_names_only_columns_that_exist(tiny_run: Path) -> None:
    from attnspec.storage.results import read_table

    columns = {t: set(read_table(tiny_run, t).columns) for t in ("spectrum", "metrics")}
    text = (REPO / "docs/spectrum.md").read_text()
    seen = 0
    for line in text.splitlines():
        for table in ("spectrum", "metrics"):
            if f"`{table}.parquet`" not in line:
                continue
            for name in re.findall(r"`([a-z0-9_.]+(?:_mean|_std|/std))`", line):
                for col in [name.replace("/std", ""), name.replace("_mean/std", "_std")] if "/std" in name else [name]:
                    assert col in columns[table], (
                        f"docs/spectrum.md names {col} in {table}.parquet: {sorted(columns[table])}"
                    )
                    seen += 1
    assert seen >= 4


# --- the README's set-up runs twice ---------------------------------------------------------


def _setup_spectrum_command() -> list[str]:
    """The `attnspec spectrum ...` part of the README's set-up command 1."""
    import shlex

    block = (REPO / "README.md").read_text().split("## Set-up")[1].split("```bash")[1].split("```")[0]
    line = next(line for line in block.splitlines() if "attnspec spectrum" in line)
    argv = shlex.split(line[line.index("attnspec spectrum") :])
    assert argv[:2] == ["attnspec", "spectrum"]
    return argv[1:]


def test_readme_setup_command_runs_twice_in_a_row(tiny_run: Path, tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """Set-up command 1 as written (its model and corpus swapped for a tiny encoder and text,
    its size cut): the second run finds the first complete and exits 0, 'up to date'."""
    argv = _setup_spectrum_command()
    assert "--out" in argv and "--model" in argv and "--data" in argv
    root = tiny_run.parent
    swap = {
        "--model": (root / "model_path").read_text(),
        "--data": str(root / "t.jsonl"),
        "--seq-len": "16",
        "--num-inputs": "2",
    }
    args = [swap.get(argv[i - 1], a) if i else a for i, a in enumerate(argv)]
    args = [a for i, a in enumerate(args) if not (a == "--data-dir" or (i and args[i - 1] == "--data-dir"))]
    monkeypatch.chdir(tmp_path)
    first = runner.invoke(app, [*args, "--device", "cpu", "-q"])
    assert first.exit_code == 0, first.output
    second = runner.invoke(app, [*args, "--device", "cpu", "-q"])
    assert second.exit_code == 0, second.output
    assert "up to date" in second.stdout and "spectrum per layer" in second.stdout
