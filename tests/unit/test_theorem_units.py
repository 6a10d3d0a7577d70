"""A check computed in named units (attnspec.theorem.units) and the side-process split
(attnspec.theorem.fork): a kept unit reads back equal, an interrupt keeps the finished units,
and the split is the one whose larger share is smallest."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from attnspec.runtime.signals import InterruptedRun
from attnspec.theorem import fork as FK
from attnspec.theorem import units as U
from attnspec.theorem.result import BatteryResult
from attnspec.verdicts.classify import VerdictRow

PLAN = U.UnitPlan(command="toy", prefix="toy", parts=("t",), needs_torch=lambda _u: False, note="resume it")


def _unit(name: str) -> U.Unit:
    row = VerdictRow(claim=f"toy.{name}", verdict="holds", params={"k": 3}, estimate=math.inf, evidence="e")
    return U.Unit({"t": pd.DataFrame({"x": [1.5, 2.5], "name": [name, name]})}, [row])


def test_a_kept_unit_reads_back_equal() -> None:
    tables = U.unit_tables("toy", "a", _unit("a"), ("t",))
    assert sorted(tables) == ["toy_partial_a_rows", "toy_partial_a_t"]
    back = U.units_from_tables(tables, "toy", ["a", "b"], ("t",))
    assert list(back) == ["a"]  # b has no verdict-row table: not finished
    pd.testing.assert_frame_equal(back["a"].table("t"), _unit("a").table("t"))
    assert back["a"].rows == _unit("a").rows
    assert back["a"].table("missing").empty


def test_an_interrupt_keeps_the_finished_units_and_resume_computes_the_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FK.NO_FORK_VARIABLE, "1")
    computed: list[str] = []
    interrupt = ["c"]  # the first run is interrupted when it starts c

    def compute(name: str) -> U.Unit:
        computed.append(name)
        if name in interrupt:
            raise KeyboardInterrupt
        return _unit(name)

    def finish(done: dict[str, U.Unit], kept: dict[str, U.Unit]) -> BatteryResult:
        return BatteryResult("toy", [r for u in done.values() for r in u.rows], {}, {"kept": sorted(kept)})

    with pytest.raises(InterruptedRun) as caught:
        U.run_units(PLAN, ["a", "b", "c"], compute, finish, meta={"seed": 1})
    partial = caught.value.partial
    assert partial.meta["runs_done"] == ["a", "b"] and partial.meta["runs_missing"] == ["c"]
    assert partial.meta["seed"] == 1 and partial.meta["note"] == "resume it"
    computed.clear()
    interrupt.clear()
    result = U.run_units(PLAN, ["a", "b", "c"], compute, finish, previous=partial.tables)
    assert computed == ["c"] and result.meta["kept"] == ["a", "b"]
    assert [r.claim for r in result.verdicts] == ["toy.a", "toy.b", "toy.c"]


def test_split_by_cost_takes_the_split_whose_larger_share_is_smallest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(FK, "can_fork", lambda: True)
    cost = {"a": 2.0, "b": 6.0, "c": 4.0, "d": 1.0}

    def share(units: list[str]) -> float:
        return sum(cost[u] for u in units)

    assert FK.split_by_cost(["a"], share) == []  # one unit: nothing to fork
    assert FK.split_by_cost(["b", "c"], share) == ["c"]  # 6 against 4 either way: the child takes the later
    assert FK.split_by_cost(["a", "b", "c", "d"], share) == ["b", "d"]  # 7 against 6
    monkeypatch.setattr(FK, "can_fork", lambda: False)
    assert FK.split_by_cost(["a", "b", "c", "d"], share) == []


def test_a_probability_claim_is_decided_from_counts_with_its_numbers_in_the_sentence() -> None:
    from attnspec.theorem import counts as C

    numbers = {"failures": 40, "trials": 500, "estimate": 0.08, "ci_low": 0.058, "ci_high": 0.107}
    violated = C.decide_counts(claimed=0.01, seed=7, **numbers)
    assert violated.verdict == "violated" and violated.reason.endswith("(instance seed 7)")
    vacuous = C.decide_counts(claimed=5.0, vacuous="k >= n", **numbers)
    assert vacuous.verdict == "vacuous" and vacuous.reason.endswith(
        "measured 40/500 = 0.08 [0.058, 0.107] vs claimed 5"
    )
    # a stated probability below 1 that the counts contradict is violated, however vacuous the rest
    assert C.decide_counts(claimed=0.01, vacuous="k >= n", **numbers).verdict == "violated"
    unmet = C.decide_counts(claimed=0.01, hypothesis_unmet="not Gaussian", seed=3, **numbers)
    assert unmet.verdict == "hypothesis-unmet" and "the same bound there: violated" in unmet.reason
    assert C.stop_note(0, 500, 0.5, 500) == "" and C.stop_note(0, 500, 0.5, None) == ""
    assert C.stop_note(0, 500, 0.5, 10_000).startswith(" (sequential: stopped at 500 of up to 10000 trials")


def test_the_ported_paper_holds_no_fork_and_no_stopping_rule() -> None:
    """Linformer's package forks and stops through attnspec.theorem only: it imports no process
    machinery and defines none of the sequential rule's functions."""
    import ast
    from pathlib import Path

    package = Path(__file__).resolve().parents[2] / "attnspec"
    sequential = ast.parse((package / "theorem" / "sequential.py").read_text())
    rule = {node.name for node in sequential.body if isinstance(node, ast.FunctionDef)}
    found = []
    for path in sorted((package / "theory" / "linformer").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            found += [f"{path.name} imports {m}" for m in names if m.split(".")[0] in ("multiprocessing", "concurrent")]
            if isinstance(node, ast.FunctionDef) and node.name in rule:
                found.append(f"{path.name} defines {node.name}")
    assert rule and not found, found
