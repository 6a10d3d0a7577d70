"""`attnspec jl-check` through typer's CliRunner: output, --json, --out, bad input, real P."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from attnspec import battery
from attnspec.cli.main import app
from attnspec.theory.linformer import battery as B
from attnspec.theory.linformer import dimensions as D
from attnspec.verdicts.classify import VERDICTS
from attnspec.verdicts.registry import catalogue

SMALL = [
    "jl-check",
    "--n",
    "48",
    "--eps",
    "0.5",
    "--trials",
    "300",
    "--trials-other",
    "150",
    "--d",
    "4",
    "--k",
    "4,12,40",
]


@pytest.fixture(scope="module")
def runner() -> CliRunner:
    return CliRunner()


def test_json_rows(runner: CliRunner) -> None:
    res = runner.invoke(app, [*SMALL, "--json", "--seed", "3"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)  # stdout holds only the JSON
    assert len(rows) > 50
    need = {
        "claim",
        "n",
        "k",
        "eps",
        "bound",
        "exact",
        "estimate",
        "ci_low",
        "ci_high",
        "trials",
        "verdict",
        "seed",
        "evidence",
    }
    monte_carlo = {
        "linformer.lemma1.eq11",
        "linformer.lemma1.eq12",
        "linformer.thm1.eq3",
        "linformer.thm2.eq8",
        "linformer.thm2.eq21",
    }
    for r in rows:
        assert {"claim", "reading", "verdict", "evidence"} <= set(r)
        assert need <= set(r) or r["claim"] not in monte_carlo
        assert r["verdict"] in VERDICTS
    claims = {r["claim"] for r in rows}
    assert claims == {c.id for c in catalogue("linformer")}  # every claim has a row, keyed by its id
    # theorem k (5 ln 48 / (0.25 - 0.125) = 155) >= n: the rank statement says nothing there, so a
    # Theorem 1 row at that k is vacuous unless its counts contradict the stated failure probability,
    # which makes it violated (the whole interval above the claimed bound)
    k1 = int(np.ceil(D.linformer_k(48, 0.5)))
    at_k1 = [r for r in rows if r["claim"] == "linformer.thm1.eq3" and r["k"] == k1]
    assert at_k1 and all(r["verdict"] in ("vacuous", "violated") for r in at_k1)
    assert all(r["ci_low"] > r["bound"] for r in at_k1 if r["verdict"] == "violated")
    # the absolute reading of eq. 12 at rho = 0 is violated (exact probability 1)
    abs0 = [
        r
        for r in rows
        if r["claim"] == "linformer.lemma1.eq12"
        and r["reading"] == "absolute"
        and r["rho"] == 0.0
        and r["family"] == "gaussian"
        and r["k"] == 40
    ]
    assert abs0 and abs0[0]["verdict"] == "violated" and abs0[0]["exact"] == 1.0
    # same seed, same numbers
    again = runner.invoke(app, [*SMALL, "--json", "--seed", "3"])
    assert json.loads(again.stdout) == rows


def test_table_says_vacuous_and_sweeps(runner: CliRunner) -> None:
    res = runner.invoke(
        app,
        [
            "jl-check",
            "--n",
            "40",
            "--eps",
            "0.2",
            "--trials",
            "200",
            "--trials-other",
            "100",
            "--d",
            "4",
            "--claims",
            "lemma1.eq11,thm1",
            "--family",
            "gaussian",
            "--verbose",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "vacuous at these parameters" in res.stdout
    assert "sweeping k below n" in res.stdout
    assert "Theorem 1 (eq. 3" in res.stdout and "Lemma 1" in res.stdout


def test_out_dir(runner: CliRunner, tmp_path) -> None:
    out = tmp_path / "jl"
    res = runner.invoke(app, [*SMALL, "--out", str(out), "--claims", "all", "--family", "gaussian,sparse"])
    assert res.exit_code == 0, res.output
    table = pd.read_parquet(out / "jl.parquet")
    assert list(table.columns[:3]) == ["claim", "reading", "family"]
    assert {"verdict", "estimate", "ci_low", "ci_high", "bound", "exact"} <= set(table.columns)
    meta = json.loads((out / "meta.json").read_text())
    assert meta["parameters"]["n"] == 48 and meta["seed"] == 0 and "numpy" in meta and meta["wall_seconds"] > 0
    for stem in ("jl_failure_vs_k", "jl_relative_errors"):
        assert (out / f"{stem}.png").stat().st_size > 0
        assert (out / f"{stem}.svg").is_file()
    assert (out / "jl_curves.parquet").is_file() and (out / "jl_errors.parquet").is_file()


def test_out_dir_refuses_another_run(runner: CliRunner, tmp_path) -> None:
    out = tmp_path / "jl"
    args = [
        "jl-check",
        "--n",
        "16",
        "--eps",
        "0.5",
        "--trials",
        "50",
        "--trials-other",
        "20",
        "--d",
        "4",
        "--claims",
        "lemma1",
        "--family",
        "gaussian",
        "--k",
        "4,8",
        "--out",
        str(out),
    ]
    assert runner.invoke(app, args).exit_code == 0
    assert runner.invoke(app, args).exit_code == 0  # the same run may be rewritten
    res = runner.invoke(app, [*args, "--seed", "5"])
    assert res.exit_code == 1 and "holds a different run" in res.stderr
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "x.txt").write_text("x")
    res = runner.invoke(app, [*args[:-1], str(tmp_path / "other")])
    assert res.exit_code == 1 and "not empty" in res.stderr


@pytest.mark.parametrize(
    "args,message",
    [
        (["--eps", "0"], "eps must be in (0, 1), got 0.0"),
        (["--eps", "1.5"], "eps must be in (0, 1), got 1.5"),
        (["--n", "1"], "n must be in [2, inf), got 1"),
        (["--k", "0,4"], "k must be in [1, inf), got 0"),
        (["--k", "abc"], "k must be integers or ranges"),
        (["--trials", "0"], "trials must be in [1, inf), got 0"),
        (["--claims", "thm9"], "claim must be one of"),
        (["--family", "cauchy"], "family must be one of"),
        (["--model", "minilm"], "--model and --data go together"),
        (["--temperature", "0"], "temperature must be in (0, inf), got 0.0"),
        (["--trials-other", "0"], "trials_other must be in [1, inf), got 0"),
    ],
)
def test_bad_input(runner: CliRunner, args: list[str], message: str) -> None:
    res = runner.invoke(app, ["jl-check", "--n", "16", "--trials", "10", *args])
    assert res.exit_code == 1
    err = res.stderr
    assert err.startswith("error:") and message in err
    assert len(err.strip().splitlines()) == 1
    assert res.stdout == ""


def test_real_attention_path_with_synthetic_p(runner: CliRunner, monkeypatch, tmp_path) -> None:
    """The --model/--data path, fed synthetic row-stochastic P through the same code."""
    n = 24
    calls = {}
    made = {}

    def fake(req):  # noqa: ANN001 - the loader run_battery calls above the theory
        calls.update(model=req.model, data=req.data, seq_len=req.seq_len, count=req.count, data_dir=req.data_dir)
        rng = np.random.default_rng(req.seed)
        a = rng.random((req.count, req.seq_len, req.seq_len)) * 3
        e = np.exp(a)
        made["P"] = e / e.sum(-1, keepdims=True)
        return made["P"]

    monkeypatch.setattr(battery, "load_attention", fake)
    res = runner.invoke(
        app,
        [
            "jl-check",
            "--n",
            str(n),
            "--eps",
            "0.3",
            "--trials",
            "200",
            "--claims",
            "thm1",
            "--k",
            "4,12",
            "--model",
            "fake",
            "--data",
            "wiki103",
            "--count",
            "2",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    assert calls == {"model": "fake", "data": "wiki103", "seq_len": n, "count": 2, "data_dir": None}
    rows = json.loads(res.stdout)
    names = {r["attention"] for r in rows if r["claim"] == "linformer.thm1.eq3"}
    assert {"fake[0]", "fake[1]", "softmax", "uniform", "near_identity"} == names
    # the same path writing results and figures (a table without Lemma 1 columns)
    out = tmp_path / "real"
    res = runner.invoke(
        app,
        [
            "jl-check",
            "--n",
            str(n),
            "--eps",
            "0.3",
            "--trials",
            "100",
            "--claims",
            "thm1",
            "--k",
            "4,12",
            "--model",
            "fake",
            "--data",
            "wiki103",
            "--count",
            "1",
            "--out",
            str(out),
            "--verbose",
        ],
    )  # the progress lines (stderr) come with --verbose
    assert res.exit_code == 0, res.output
    table = pd.read_parquet(out / "jl.parquet")
    assert "fake[0]" in set(table["attention"]) and (out / "jl_failure_vs_k.png").is_file()
    # beside each k, the Eckart–Young optimum of the same real matrix (synthetic kinds have none)
    P = made["P"][0]
    s = np.linalg.svd(P, compute_uv=False)
    real = table[table["attention"] == "fake[0]"]
    for k in (4, 12):
        want = np.sqrt((s[k:] ** 2).sum() / (s**2).sum())
        np.testing.assert_allclose(real.loc[real["k"] == k, "eckart_young_error"], want, rtol=1e-10)
    assert real["eckart_young_w_error"].between(0, 1).all()
    assert table.loc[table["attention"] == "softmax", "eckart_young_error"].isna().all()
    assert "Eckart–Young optimum" in res.stderr


def test_real_attention_minilm(minilm_path, data_dir) -> None:
    """Real MiniLM attention on WikiText-103 through the library path (attnspec.spectra.real_attention.sample_attention)."""
    cfg = B.JLConfig(
        n=64,
        eps=0.3,
        ks=[8, 32],
        trials=200,
        claims=("thm1",),
        families=("gaussian",),
        attention_kinds=(),
        model="minilm",
        data="wiki103",
        data_dir=str(data_dir),
        count=1,
        seed=0,
    )
    P = battery.load_attention(B.attention_request(cfg))  # the loader above the theory
    res = B.run(cfg, attention=P)
    table = res.tables["jl"]
    assert set(table["attention"]) == {"minilm[0]"}
    assert (table["trials"] == 200).all()


# ----------------------------------------------------------------------------- refused up front


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--n", "64", "--k", "65"], "k = 65 > n = 64"),
        (["--n", "1000000000000"], "n = 1,000,000,000,000 needs about"),
        (["--k", "1:1000000000000"], "has 1,000,000,000,000 values"),
        (["--d", "1000000000000"], "d = 1,000,000,000,000 needs about"),
        (["--trials", "1000000000000"], "trials = 1,000,000,000,000 needs about"),
        (["--n", "1e12"], "--n"),
    ],
)
def test_impossible_sizes_are_refused_in_one_line_before_any_work(args: list[str], needle: str) -> None:
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "attnspec.cli.main", "jl-check", *args], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode != 0
    lines = [x for x in proc.stderr.strip().splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and needle in lines[0], proc.stderr
    if "needs about" in needle:
        assert "at most" in lines[0]  # the estimate and the limit
