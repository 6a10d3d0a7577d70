"""`attnspec osa-check`: verdict table, --json, --out (tables, meta.json, figures), bad input."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from attnspec.cli.main import app

runner = CliRunner()
SMALL = ["--steps", "3", "--trials", "1", "--no-timing", "--schedule", "cubic", "--schedule", "muon", "--alpha", "0.5"]


@pytest.fixture(scope="module")
def out_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("osa") / "run"
    res = runner.invoke(app, ["osa-check", "--seed", "3", "--out", str(out), "--json", "--csv", *SMALL])
    return out, res


def test_json_stdout_is_only_json(out_run):
    _, res = out_run
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    claims = {r["claim"] for r in rows}
    assert claims >= {
        "osa.thm21",
        "osa.thm21.so_n",
        "osa.thm31.eq10",
        "osa.thm31.eq11",
        "osa.thm42",
        "osa.thm22",
        "osa.thm41",
        "osa.thm43",
        "osa.thm44",
        "osa.thm44.multihead",
        "osa.lemc2",
        "osa.lemc3",
        "osa.lemc7",
        "osa.lemc7.eq79",
        "osa.alg1",
        "osa.eq26",
        "osa.eq49",
        "osa.eq89",
        "osa.thm44.constant",
        "osa.lemc1",
        "osa.eq9.range",
    }
    from attnspec.verdicts import registry

    registry.check_rows(type("R", (), r)() for r in rows)  # every (claim, reading) is registered
    from attnspec.verdicts.classify import VERDICTS

    assert {r["verdict"] for r in rows} <= set(VERDICTS)
    assert all(r["seed"] == 3 for r in rows)
    # the Muon schedule's σ(B) > 1 exceeds bound (11), and the toolkit says so — as a
    # measurement of a variant (the theorem's B is eq. (9)'s cubic), not a violation
    muon11 = [
        r for r in rows if r["claim"] == "osa.thm31.eq11" and r["schedule"] == "muon" and r["reading"] == "variant"
    ]
    assert muon11 and muon11[0]["verdict"] == "measured" and "violated" in muon11[0]["evidence"]
    assert not [
        r
        for r in rows
        if r["claim"].startswith("osa.thm31")
        and r["schedule"] == "muon"
        and r["reading"] in ("as-stated", "sigma-le-1")
    ]


def test_out_directory(out_run):
    out, _ = out_run
    meta = json.loads((out / "meta.json").read_text())
    assert meta["kind"] == "osa-check" and meta["seed"] == 3 and meta["identity"]["steps"] == 3
    assert "osa.thm31.eq10" in meta["claims"]
    assert "torch" in meta and "wall_seconds" in meta
    for name in (
        "verdicts",
        "thm21",
        "thm31",
        "thm31_violations",
        "thm42",
        "thm22",
        "jacobian",
        "jacobian_full_span",
        "layer_orthogonality",
        "lemma_c2",
        "lemma_c3",
        "lemma_c7",
        "algorithm1",
        "printed",
    ):
        assert (out / f"{name}.parquet").is_file() and (out / f"{name}.csv").is_file(), name
    viol = pd.read_parquet(out / "thm31_violations.parquet")
    assert len(viol) > 0 and (viol.sigma_max > 1).all()  # every Thm 3.1 violation comes with σ_max(B) > 1
    thm31 = pd.read_parquet(out / "thm31.parquet")
    assert list(thm31.columns[:3]) == ["schedule", "steps", "n"]
    assert set(thm31.steps) == {0, 1, 2, 3}
    for stem in ("orthogonality_vs_K", "kappa_vs_alpha"):
        assert (out / f"{stem}.png").stat().st_size > 0 and (out / f"{stem}.svg").is_file()


def test_figures_redraw_from_saved_tables(out_run, tmp_path):
    import shutil

    from attnspec.plots.osa import plot_osa_check

    out, _ = out_run
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    for f in copy.glob("*.png"):
        f.unlink()
    paths = plot_osa_check(copy)
    assert {p.name for p in paths} >= {"orthogonality_vs_K.png", "kappa_vs_alpha.png"}


def test_same_seed_same_numbers(out_run, tmp_path):
    out, _ = out_run
    res = runner.invoke(app, ["osa-check", "--seed", "3", "--json", *SMALL])
    assert res.exit_code == 0
    a = pd.read_parquet(out / "verdicts.parquet")
    b = pd.DataFrame(json.loads(res.stdout))
    assert list(a.verdict) == list(b.verdict)
    # rows that could not evaluate anything (a printed product that is not conformable) have no
    # estimate: NaN on both sides, which assert_array_equal treats as equal
    np.testing.assert_array_equal(
        a.estimate.astype(float).round(12).to_numpy(), b.estimate.astype(float).round(12).to_numpy()
    )


def test_refuses_a_different_run_in_out(out_run):
    out, _ = out_run
    res = runner.invoke(app, ["osa-check", "--seed", "4", "--out", str(out), *SMALL])
    assert res.exit_code == 1
    assert "different run" in res.stderr


def test_table_output():
    res = runner.invoke(app, ["osa-check", "--seed", "1", *SMALL], env={"COLUMNS": "250"})
    assert res.exit_code == 0
    # the printed equations that fail hold once corrected: misprints, not violations
    assert res.stdout.startswith("osa-check: ") and "misprint:" in res.stdout and "holds as corrected" in res.stdout
    assert "\nclaim " in res.stdout and "Theorem 2.1 (eqs. 6–7)" in res.stdout  # the table, one row per claim


@pytest.mark.parametrize(
    "args,match",
    [
        (["--alpha", "nan"], "alpha must be a finite number"),
        (["--alpha", "inf"], "alpha must be a finite number"),
        (["--steps", "-1"], "--steps must be an integer in \\[0, 100\\]"),
        (["--alpha", "1e308"], "--alpha must be a finite number in \\[-1000, 1000\\], got 1e\\+308"),
        (["--d-v", "0"], "--d-v must be an integer >= 1"),
        (["--schedule", "1e308,1e308"], "--schedule .* must keep the singular values of M_0"),
        (["--schedule", "quartic"], "schedule must be one of"),
        (["--schedule", "1.5,abc"], "--schedule must be one of"),
        (["--d-model", "8", "--d-v", "5"], "2\\*d_v <= d_model"),
        (["--trials", "0"], "--trials must be an integer in \\[1, 1000\\]"),
    ],
)
def test_bad_input_one_line_error(args, match):
    import re

    res = runner.invoke(app, ["osa-check", "--no-timing", *args])
    assert res.exit_code == 1
    err = res.stderr.strip()
    assert err.startswith("error:") and len(err.splitlines()) == 1, err
    assert re.search(match, err), err
    assert res.stdout == ""


def test_custom_schedule_accepted():
    res = runner.invoke(
        app,
        [
            "osa-check",
            "--json",
            "--steps",
            "2",
            "--trials",
            "1",
            "--no-timing",
            "--alpha",
            "0.5",
            "--schedule",
            "1.5,-0.5;1.875,-1.25,0.375",
        ],
    )
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    assert any(str(r.get("schedule", "")).startswith("custom") for r in rows)
