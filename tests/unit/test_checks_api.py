"""The Python API of the checking commands: the CLI's names and defaults, one InputError
per bad argument, the result's tables, summary, figures and the CLI's --out layout."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import traceback
import typing
from pathlib import Path

import pandas as pd
import pytest
import typer.main
from typer.testing import CliRunner

import attnspec
from attnspec import battery, checks
from attnspec.cli.main import app
from attnspec.errors import InputError
from attnspec.verdicts.classify import ROW_COLUMNS
from attnspec.verdicts.sentences import summary_lines
from attnspec.verdicts.table import summary_frame

REPO = Path(__file__).resolve().parents[2]
FUNCTIONS = {
    "jl-check": checks.jl_check,
    "sa-check": checks.sa_check,
    "osa-check": checks.osa_check,
    "osa-train": checks.osa_train,
}
CLI_ONLY = {"json_out", "verbose", "quiet"}  # what the terminal needs; Python has the result object (and progress=)
SA = {
    "L": 24,
    "k": 2,
    "eps": 0.05,
    "delta": 0.3,
    "m": 0.2,
    "M": 1.0,
    "beta": 0.2,
    "trials": 20,
    "sweep_L": "12,24",
    "sweep_k": "1,2",
    "sweep_trials": 20,
    "seed": 3,
}


def _cli(command: str) -> dict[str, tuple[object, inspect.Parameter]]:
    callback = typer.main.get_command(app).commands[command].callback
    hints = typing.get_type_hints(callback)
    return {n: (hints[n], p) for n, p in inspect.signature(callback).parameters.items() if n not in CLI_ONLY}


@pytest.mark.parametrize("command", sorted(FUNCTIONS))
def test_api_names_and_defaults_are_the_clis(command: str) -> None:
    cli = _cli(command)
    api = {n: p for n, p in inspect.signature(FUNCTIONS[command]).parameters.items() if n != "unknown"}
    assert [n for n in cli if n not in api] == [], "CLI options missing from the Python function"
    assert set(api) - set(cli) <= set(checks.API_ONLY)
    for name, (_, p) in cli.items():
        assert api[name].default == p.default, (command, name)
        assert api[name].kind is inspect.Parameter.KEYWORD_ONLY
    assert FUNCTIONS[command].__doc__ and "Parameters\n    ----------" in FUNCTIONS[command].__doc__


_KIND = {int: "int", float: "float", str: "str", bool: "bool", Path: "path", list[float]: "floats", list[str]: "strs"}


@pytest.mark.parametrize("command", sorted(FUNCTIONS))
def test_option_types_table_matches_the_cli(command: str) -> None:
    table = battery.OPTION_TYPES[command]
    options = {n: t for n, (t, _) in _cli(command).items() if n not in ("out", "resume", "csv", "plots")}
    assert set(table) == set(options)
    for name, hint in options.items():
        args = typing.get_args(hint)
        nullable = type(None) in args
        base = next(a for a in args if a is not type(None)) if args and hint.__class__.__name__ == "UnionType" else hint
        assert _KIND[base] in table[name], (command, name)
        assert (None in table[name]) == nullable, (command, name)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: attnspec.jl_check(n="abc"), "Invalid value for '--n': 'abc' is not a valid integer."),
        (lambda: attnspec.jl_check(n=2.5), "Invalid value for '--n': 2.5 is not a valid integer."),
        (lambda: attnspec.jl_check(n=1), "n must be in [2, inf), got 1"),
        (lambda: attnspec.jl_check(nn=3), "jl_check() has no option 'nn'; its options: n, eps, k,"),
        (lambda: attnspec.sa_check(sweep="maybe"), "Invalid value for '--sweep': 'maybe' is not a valid boolean."),
        (lambda: attnspec.osa_check(trials=0), "--trials must be an integer in [1, 1000], got 0"),
        (lambda: attnspec.osa_train(lr="fast"), "Invalid value for '--lr': 'fast' is not a valid float or None."),
        (lambda: attnspec.osa_check(progress=3), "progress must be True, False or a callable"),
        (lambda: attnspec.osa_check(out=3), "out must be a directory path"),
        (lambda: attnspec.jl_check(resume=True), "resume=True needs out="),
        (lambda: battery.run_battery("nosuch", {}), "no checking command 'nosuch'; known: "),
        (
            lambda: battery.run_battery("jl-check", {"n": "abc"}),
            "Invalid value for '--n': 'abc' is not a valid integer.",
        ),
        (lambda: attnspec.claims("bert"), "--paper must be one of linformer, expressivity, osa"),
    ],
)
def test_bad_arguments_are_one_input_error_before_any_work(call, message: str, monkeypatch) -> None:  # noqa: ANN001
    def no_work(*a, **k):  # noqa: ANN002, ANN003
        raise AssertionError("computed despite a bad argument")

    for module in (
        "attnspec.theory.linformer.battery",
        "attnspec.theory.osa.battery",
        "attnspec.theory.osa.train_battery",
        "attnspec.theory.expressivity.battery",
    ):
        monkeypatch.setattr(f"{module}.run", no_work)
    with pytest.raises(InputError) as e:
        call()
    assert str(e.value).startswith(message) and "\n" not in str(e.value)


@pytest.fixture(scope="module")
def sa_result() -> checks.CheckResult:
    return attnspec.sa_check(**SA, progress=False)


def test_result_holds_verdicts_tables_and_the_summary(sa_result: checks.CheckResult) -> None:
    v = sa_result.verdicts
    assert list(v.columns[:3]) == ["claim", "reading", "verdict"] and "parameters" not in v
    params = {k for r in sa_result.rows for k in r.params}
    assert params <= set(v.columns) and {"L", "k", "eps"} <= params  # real columns, not a dict column
    assert list(v.columns[-len(ROW_COLUMNS) :]) == list(ROW_COLUMNS)
    assert len(v) == len(sa_result.rows)
    first = sa_result.rows[0]
    assert all(v.iloc[0][k] == val for k, val in first.params.items())
    assert len(v[v.L == first.params["L"]]) >= 1  # select by a parameter without .apply
    assert set(sa_result.tables) >= {"sa"} and isinstance(sa_result.tables["sa"], pd.DataFrame)
    s = sa_result.summary()
    assert (
        list(s.columns) == ["claim_id", "claim", "verdict", "why", "rows", "source"] and len(s) == v["claim"].nunique()
    )
    assert s.equals(summary_frame(v))  # the same table from the rows or from the flattened frame
    assert sa_result.sentences() == summary_lines(sa_result.rows)
    text = repr(sa_result)
    assert text.startswith("CheckResult('sa-check', ") and f"{len(v)} verdict rows" in text and ".summary()" in text


@pytest.mark.slow
def test_save_writes_the_clis_out_layout(sa_result: checks.CheckResult, tmp_path: Path) -> None:
    cli_dir, api_dir = tmp_path / "cli", tmp_path / "api"
    argv = ["sa-check"]
    for name, value in SA.items():
        argv += [battery.option_flag(name), str(value)]
    res = CliRunner().invoke(app, [*argv, "--out", str(cli_dir)])
    assert res.exit_code == 0, res.output
    assert sa_result.save(api_dir) == api_dir and sa_result.path == api_dir
    assert sorted(p.name for p in api_dir.iterdir()) == sorted(p.name for p in cli_dir.iterdir())
    meta_api, meta_cli = (json.loads((d / "meta.json").read_text()) for d in (api_dir, cli_dir))
    assert meta_api["identity"] == meta_cli["identity"] and meta_api["kind"] == "sa-check"
    assert pd.read_parquet(api_dir / "verdicts.parquet").equals(pd.read_parquet(cli_dir / "verdicts.parquet"))
    figures = sa_result.plot()
    assert figures and all(p.suffix in (".png", ".svg") and p.parent == api_dir and p.is_file() for p in figures)


def test_ctrl_c_raises_and_keeps_nothing_half_written(tmp_path: Path) -> None:
    def interrupt(message: str) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        attnspec.sa_check(**SA, progress=interrupt)
    out = tmp_path / "sa"
    with pytest.raises(KeyboardInterrupt):
        attnspec.sa_check(**SA, progress=interrupt, out=out)
    assert not (out / "meta.json").exists()  # sa-check cannot resume: nothing kept


def test_claims_catalogue_as_a_dataframe() -> None:
    from attnspec.verdicts.registry import catalogue

    frame = attnspec.claims()
    assert list(frame["id"]) == [c.id for c in catalogue()]
    lin = attnspec.claims(paper="linformer")
    eq3 = lin.set_index("id").loc["linformer.thm1.eq3"]
    assert eq3["name"] == "Theorem 1 (eq. 3)" and eq3["readings"] == ["relative", "relative-clipped", "additive"]
    assert eq3["command"] == "jl-check" and set(lin["paper"]) == {"linformer"}
    import types

    assert isinstance(attnspec.claims, types.FunctionType) and attnspec.claims is checks.claims
    with pytest.raises(TypeError, match=r"claims\(\) got an unexpected keyword argument 'nosuch'") as e:
        attnspec.claims(nosuch=1)
    assert "__call__" not in "".join(traceback.format_exception(e.value))  # a plain function, no module trick


def test_import_is_light_and_dir_lists_the_api() -> None:
    code = (
        "import sys, attnspec; names = dir(attnspec); "
        "print(sorted(m for m in ('torch', 'scipy', 'pandas', 'matplotlib') if m in sys.modules)); print(names); "
        "assert callable(attnspec.battery.run_battery)"
    )  # the old README line raised AttributeError
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stderr
    heavy, names = proc.stdout.strip().splitlines()
    assert heavy == "[]"
    for name in ("spectrum", "load", "jl_check", "sa_check", "osa_check", "osa_train", "claims", "CheckResult"):
        assert repr(name) in names
    assert "Any" not in names  # helpers of __init__ are not API
