"""attnspec.theorem.groups: claim groups in order, one share beside the others, with progress;
an interrupt keeps the finished groups and --resume reads them back equal; the split by cost."""

from __future__ import annotations

import math
import os

import pandas as pd
import pytest

from attnspec.runtime.signals import InterruptedRun
from attnspec.theorem import fork as FK
from attnspec.theorem.fork import can_fork
from attnspec.theorem.groups import Group, Keep, run_groups
from attnspec.theorem.result import BatteryResult
from attnspec.verdicts.classify import VerdictRow


def _group(name: str, **kw: object) -> Group:
    def measure(config: dict, tables: dict) -> tuple[list, dict]:
        # the row says which process made it and which tables it could read
        return [(name, os.getpid(), sorted(tables))], {name: config["k"]}

    return Group(measure, **kw)  # type: ignore[arg-type]


GROUPS = (
    _group("a", message="group a", weight=1.0),
    _group("b", message=lambda c: f"group b at k = {c['k']}", weight=2.0, beside=True),
    _group("c"),
    _group("d", beside=True),
)


@pytest.mark.parametrize("fork", ["1", "0"])
def test_rows_and_tables_come_in_the_declared_order_forked_or_not(monkeypatch: pytest.MonkeyPatch, fork: str) -> None:
    monkeypatch.setenv("ATTNSPEC_NO_FORK", "1" if fork == "1" else "0")
    seen: list[str] = []
    rows, tables = run_groups(GROUPS, {"k": 7}, progress=seen.append, beside_note="in a second process")
    assert [r[0] for r in rows] == ["a", "b", "c", "d"] and list(tables) == ["a", "b", "c", "d"]
    forked = fork == "0" and can_fork()
    pids = {name: pid for name, pid, _ in rows}
    assert (pids["b"] == pids["d"] != os.getpid()) if forked else set(pids.values()) == {os.getpid()}
    # a group reads the tables of the groups before it in its own process
    assert dict((name, seen_tables) for name, _, seen_tables in rows)["d"] == (["b"] if forked else ["a", "b", "c"])
    if forked:
        assert [s.split(" — ")[0] for s in seen] == ["in a second process", "group a"]
    else:
        assert [s.split(" — ")[0] for s in seen] == ["group a", "group b at k = 7"]
        assert seen[0].endswith("step 1/2, estimating the time left") and seen[1].startswith("group b")


KEEP = Keep(command="toy", prefix="toy", parts=("t",), note="resume it", meta={"seed": 1})


def _done(name: str) -> tuple[list, dict]:
    row = VerdictRow(claim=f"toy.{name}", verdict="holds", params={"k": 3}, estimate=math.inf, evidence="e")
    return [row], {"t": pd.DataFrame({"x": [1.5, 2.5], "name": [name, name]})}


def test_a_kept_group_reads_back_equal() -> None:
    tables = KEEP.tables("a", _done("a"))
    assert sorted(tables) == ["toy_partial_a_rows", "toy_partial_a_t"]
    back = Keep("toy", "toy", ("t",), previous=tables).kept(["a", "b"])
    assert list(back) == ["a"]  # b has no verdict-row table: not finished
    pd.testing.assert_frame_equal(back["a"][1]["t"], _done("a")[1]["t"])
    assert back["a"][0] == _done("a")[0]


def test_an_interrupt_keeps_the_finished_groups_and_resume_computes_the_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FK.NO_FORK_VARIABLE, "1")
    computed: list[str] = []
    interrupt = ["c"]  # the first run is interrupted when it starts c

    def group(name: str) -> Group:
        def measure(config: object, tables: dict) -> tuple[list, dict]:
            computed.append(name)
            if name in interrupt:
                raise KeyboardInterrupt
            return _done(name)

        return Group(measure, name=name)

    groups = [group(n) for n in "abc"]

    def finish(rows: list, tables: dict) -> BatteryResult:
        return BatteryResult("toy", rows, tables, {})

    with pytest.raises(InterruptedRun) as caught:
        run_groups(groups, None, keep=KEEP, finish=finish)
    partial = caught.value.partial
    assert partial.meta["runs_done"] == ["a", "b"] and partial.meta["runs_missing"] == ["c"]
    assert partial.meta["seed"] == 1 and partial.meta["note"] == "resume it"
    computed.clear()
    interrupt.clear()
    keep = Keep("toy", "toy", ("t",), previous=partial.tables)
    result = run_groups(groups, None, keep=keep, finish=finish)
    assert computed == ["c"] and [r.claim for r in result.verdicts] == ["toy.a", "toy.b", "toy.c"]
    # a table several groups make is theirs one under the other
    assert list(result.tables["t"]["name"]) == ["a", "a", "b", "b", "c", "c"]


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


def test_the_docs_example_runs() -> None:
    import re
    from pathlib import Path

    doc = Path(__file__).resolve().parents[2] / "docs" / "theorem-api.md"
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", doc.read_text(), flags=re.S) if "run_groups(" in b]
    exec(compile(block, str(doc), "exec"), {})  # noqa: S102 - the doc's own example, with its assert
