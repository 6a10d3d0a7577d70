"""`attnspec sa-check` through typer's CliRunner: --json, --out (tables, meta, figures),
the verdict table, and one-line errors for bad input."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from attnspec.cli.main import app
from attnspec.storage.results import read_meta

SMALL = [
    "sa-check",
    "--L",
    "24",
    "--k",
    "2",
    "--eps",
    "0.05",
    "--delta",
    "0.3",
    "--m",
    "0.2",
    "--M",
    "1",
    "--beta",
    "0.2",
    "--trials",
    "20",
    "--sweep-L",
    "12,24",
    "--sweep-k",
    "1,2",
    "--sweep-trials",
    "20",
]


@pytest.fixture(scope="module")
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture(scope="module")
def run_dir(runner: CliRunner, tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("sa")
    res = runner.invoke(app, [*SMALL, "--seed", "3", "--d", "10", "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    return out, res


def test_json_only_on_stdout(run_dir) -> None:
    _, res = run_dir
    rows = json.loads(res.stdout)  # stdout holds only the JSON
    need = {"claim", "verdict", "bound", "estimate", "ci_low", "ci_high", "trials", "seed", "evidence"}
    assert rows and all(need <= set(r) for r in rows)
    from attnspec.verdicts.classify import VERDICTS

    assert {r["verdict"] for r in rows} <= set(VERDICTS)
    claims = {(r["claim"], r["reading"]): r for r in rows}
    assert claims["expressivity.thm1.offsupport", "literal"]["verdict"] == "violated"
    assert claims["expressivity.thm1.klogl", "ls-fit"]["verdict"] == "measured"


def test_out_dir_contents(run_dir) -> None:
    out, _ = run_dir
    for name in (
        "sa.parquet",
        "verdicts.parquet",
        "error_map.parquet",
        "meta.json",
        "sa_success_vs_d.png",
        "sa_success_vs_d.svg",
        "sa_dstar_vs_klogL.png",
        "sa_row_error.png",
    ):
        assert (out / name).is_file(), name
    sa = pd.read_parquet(out / "sa.parquet")
    assert list(sa.columns[:2]) == ["kind", "L"]  # identifier columns first
    assert {"curve", "d_star", "at_d", "scaling_delta", "scaling_eps", "sweep", "sweep_curve", "fit"} <= set(sa["kind"])
    user = sa.query("kind == 'at_d' and at == 'user'")
    assert set(user["d"]) == {10}
    meta = read_meta(out)
    assert meta["kind"] == "sa-check" and meta["seed"] == 3 and meta["identity"]["L"] == 24
    assert "torch" in meta and "wall_seconds" in meta


def test_table_output_and_same_seed(runner: CliRunner, run_dir) -> None:
    res = runner.invoke(app, [*SMALL, "--seed", "3", "--d", "10"])
    assert res.exit_code == 0, res.output
    assert "sa-check" in res.stdout and "violated" in res.stdout and "holds" in res.stdout
    # same seed, same numbers: the JSON of a second run equals the first
    res2 = runner.invoke(app, [*SMALL, "--seed", "3", "--d", "10", "--json", "--no-plots"])
    assert json.loads(res2.stdout) == json.loads(run_dir[1].stdout)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--L", "8", "--k", "9"], "k must be in [1, L=8], got k=9"),
        (["--m", "2", "--M", "1"], "m must be <= M, got m=2.0 > M=1.0"),
        (["--m", "0"], "m must be in (0, inf), got 0.0"),
        (["--m", "-1"], "m must be in (0, inf), got -1.0"),
        (["--eps", "0"], "eps must be in (0, inf), got 0.0"),
        (["--eps", "-0.5"], "eps must be in (0, inf), got -0.5"),
        (["--d", "0"], "d must be in [1, inf), got 0"),
        (["--delta", "0"], "delta must be in (0, inf), got 0.0"),
        (["--beta", "1"], "beta must be in (0, 1), got 1.0"),
        (["--trials", "3"], "trials must be in [10, inf), got 3"),
        (["--support", "diag"], "support must be one of random, banded, both, dense-column, got 'diag'"),
        (["--sweep-L", "64,x"], "sweep-L must be a comma list of integers"),
        (["--sweep-L", "1,64"], "sweep-L values must be in [2, inf), got 1"),
        # checked before any computation, not a KeyError after minutes of it
        (["--sweep-L", "32", "--sweep-k", "64"], "sweep-k values must be <= the largest sweep-L (32)"),
        # sized before allocating: refused with the memory needed, not a MemoryError from numpy
        (["--L", "1000000000000"], "--L 1000000000000 needs about"),
        (["--trials", "1000000000000"], "--trials 1000000000000 needs about"),
        (["--sweep-trials", "1000000000000"], "--sweep-trials 1000000000000 needs about"),
        (["--delta", "1e-300"], "beyond the limit 2^53"),
    ],
)
def test_bad_input_one_line_error(runner: CliRunner, args: list[str], message: str) -> None:
    res = runner.invoke(app, ["sa-check", *args])
    assert res.exit_code == 1
    err = res.stderr.strip()
    assert err.startswith("error:") and message in err
    assert len(err.splitlines()) == 1, err
    assert res.stdout == ""
