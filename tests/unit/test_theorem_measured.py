"""attnspec.theorem.measured: claim groups in order, one share beside the others, with progress."""

from __future__ import annotations

import os

import pytest

from attnspec.theorem.fork import can_fork
from attnspec.theorem.measured import Group, run_groups


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
