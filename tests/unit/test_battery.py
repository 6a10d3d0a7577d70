"""The battery plumbing: the result writer, the table coercion, real attention passed in from above."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from attnspec import battery
from attnspec.battery import AttentionRequest, BatteryResult, run_battery, write_result
from attnspec.storage.results import arrow_safe, read_table
from attnspec.verdicts.classify import VerdictRow


def test_arrow_safe_coerces_mixed_object_columns() -> None:
    obj = lambda values: pd.Series(values, dtype=object)  # noqa: E731
    f = pd.DataFrame(
        {
            "flag": obj([True, None, False]),
            "num": obj([1, None, 2.5]),
            "txt": obj(["a", np.nan, 3]),
            "x": [1.0, 2.0, 3.0],
        }
    )
    g = arrow_safe(f)
    assert str(g["flag"].dtype) == "boolean" and g["flag"].isna().sum() == 1
    assert g["num"].dtype == np.float64 and np.isnan(g["num"][1])
    assert str(g["txt"].dtype) == "string" and g["txt"].isna().sum() == 1 and g["x"].dtype == np.float64
    assert f["flag"].dtype == object  # the input is not modified


def _result() -> BatteryResult:
    rows = [
        VerdictRow(
            claim="linformer.lemma1.eq11",
            reading="squared-two-sided",
            verdict="holds",
            params={"n": 8, "k": 2},
            bound=0.5,
            estimate=0.1,
            trials=10,
            seed=1,
            evidence="e",
        )
    ]
    table = pd.DataFrame({"k": [1, 2], "flag": pd.Series([True, None], dtype=object)})
    return BatteryResult(
        command="jl-check", verdicts=rows, tables={"jl": table}, meta={"parameters": {"n": 8, "ks": (1, 2)}, "seed": 0}
    )


def test_write_result_writes_tables_verdicts_and_meta_with_claim_ids(tmp_path: Path) -> None:
    out = write_result(_result(), tmp_path / "r", csv=True)
    assert read_table(out, "jl")["flag"].tolist()[0] is True
    v = read_table(out, "verdicts")
    assert v["claim"].tolist() == ["linformer.lemma1.eq11"] and v["verdict"].tolist() == ["holds"]
    meta = json.loads((out / "meta.json").read_text())
    assert meta["kind"] == "jl-check" and meta["claims"] == ["linformer.lemma1.eq11"]
    assert meta["identity"] == {"n": 8, "ks": [1, 2]} and "attnspec_version" in meta
    assert (out / "verdicts.csv").is_file() and (out / "jl.csv").is_file()


def test_verdicts_parquet_is_the_api_verdict_table(tmp_path: Path) -> None:
    """One shape: the table a battery writes is the API's ``result.verdicts``, parameters as
    real columns (missing where a row lacks one), a parameter named like a field prefixed."""
    from attnspec.checks import CheckResult
    from attnspec.verdicts.classify import ROW_COLUMNS

    rows = [
        *_result().verdicts,
        VerdictRow(
            claim="linformer.lemma1.eq11",
            reading="squared-two-sided",
            verdict="violated",
            params={"n": 16, "eps": 0.1, "seed": 7},
            trials=20,
            seed=2,
            evidence="f",
        ),
    ]
    result = BatteryResult(command="jl-check", verdicts=rows, tables={}, meta={"parameters": {}, "seed": 0})
    saved = read_table(write_result(result, tmp_path / "r"), "verdicts")
    api = CheckResult(result).verdicts
    assert (
        list(saved.columns)
        == list(api.columns)
        == ["claim", "reading", "verdict", "n", "k", "eps", "param_seed", *ROW_COLUMNS]
    )
    pd.testing.assert_frame_equal(saved, api, check_dtype=False)
    assert api["param_seed"].tolist()[1] == 7 and api["seed"].tolist() == [1, 2] and np.isnan(api["k"][1])
    from attnspec.verdicts.classify import verdicts_json

    assert json.loads(verdicts_json(rows))[1]["param_seed"] == 7  # --json: the same names


@pytest.fixture
def fake_battery(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """A battery that asks for real attention; records what run() received."""
    mod = types.ModuleType("attnspec_test_fake_battery")
    mod.seen = {}

    def config_from_options(options: dict) -> dict:
        return dict(options)

    def attention_request(config: dict) -> AttentionRequest | None:
        return AttentionRequest("tiny", "corpus", seq_len=4, count=2, seed=0) if config.get("model") else None

    def run(config: dict, *, progress=None, attention=None) -> BatteryResult:  # noqa: ANN001
        mod.seen["attention"] = attention
        return BatteryResult(command="jl-check", verdicts=[], meta={"parameters": config})

    mod.config_from_options, mod.attention_request, mod.run = config_from_options, attention_request, run
    monkeypatch.setitem(sys.modules, mod.__name__, mod)
    from dataclasses import replace

    from attnspec.theorem import registry

    registry.load()
    monkeypatch.setitem(registry._COMMANDS, "jl-check", replace(registry.command("jl-check"), battery=mod.__name__))
    return mod


def test_run_battery_loads_requested_attention_above_theory(fake_battery, monkeypatch) -> None:  # noqa: ANN001
    P = np.full((2, 4, 4), 0.25)
    calls = []
    monkeypatch.setattr(battery, "load_attention", lambda req: calls.append(req) or P)
    run_battery("jl-check", {"model": "tiny"})
    assert calls and calls[0].seq_len == 4 and fake_battery.seen["attention"].shape == (2, 4, 4)
    # matrices given by the caller are used as they are, nothing is loaded
    calls.clear()
    run_battery("jl-check", {"model": "tiny"}, attention=P[:1])
    assert not calls and fake_battery.seen["attention"].shape == (1, 4, 4)
    run_battery("jl-check", {})
    assert fake_battery.seen["attention"] is None


def test_resume_is_refused_for_a_battery_that_cannot_resume(tmp_path: Path) -> None:
    """Only osa-train keeps earlier work (``run(..., previous=...)``); the others say so in one line."""
    from attnspec.errors import InputError

    opts = {"timing": False, "trials": 1, "steps": 1}
    battery.run_and_write("osa-check", opts, tmp_path / "o", plots=False)
    with pytest.raises(InputError, match="osa-check cannot resume a result"):
        battery.run_and_write("osa-check", opts, tmp_path / "o", plots=False, resume=True)
