"""sa-check in two processes: the same numbers as in one, errors
of the second process reach the caller, and nothing is left running."""

from __future__ import annotations

import os

import pandas as pd
import pytest

from attnspec.errors import InputError
from attnspec.theorem.fork import Forked, cores
from attnspec.theory.expressivity.battery import config_from_options, run
from attnspec.theory.expressivity.config import Config

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the second process is forked (POSIX)")

TINY = dict(
    L=32,
    k=2,
    eps=0.05,
    delta=0.3,
    m=0.2,
    M=1.0,
    beta=0.2,
    trials=20,
    scaling_L=16,
    sweep_L=(16, 32),
    sweep_k=(1, 2),
    sweep_trials=10,
)


def test_two_processes_give_the_same_tables_as_one() -> None:
    one = run(Config(**TINY, jobs=1))
    two = run(Config(**TINY, jobs=2))
    assert one.meta["processes"] == 1
    assert two.meta["processes"] == (2 if cores() >= 2 else 1)
    assert set(one.tables) == set(two.tables) == {"sa", "error_map"}
    for name in one.tables:
        pd.testing.assert_frame_equal(one.tables[name], two.tables[name])
    assert [r.__dict__ for r in one.verdicts] == [r.__dict__ for r in two.verdicts]
    # the child's CPU time is counted: two processes do not hide work
    assert two.meta["cpu_seconds"] > 0


def test_results_come_back_in_order() -> None:
    child = Forked([lambda: 1, lambda: {"a": [2, 3]}, lambda: "x" * 200_000])  # the last one exceeds a pipe buffer
    assert child.next() == 1
    assert child.next() == {"a": [2, 3]}
    assert child.next() == "x" * 200_000
    assert child.pid is None  # reaped after the last result
    with pytest.raises(RuntimeError, match="no result left"):
        child.next()


def test_an_error_in_the_second_process_is_raised_in_the_first() -> None:
    def bad() -> None:
        raise InputError("delta must be > 0, got -1")

    child = Forked([lambda: 1, bad, lambda: 3])
    assert child.next() == 1
    with pytest.raises(InputError, match="delta must be > 0, got -1"):
        child.next()
    assert child.pid is None


def test_stopping_early_ends_the_second_process(monkeypatch: pytest.MonkeyPatch) -> None:
    import signal
    import time

    child = Forked([lambda: 1, lambda: time.sleep(60)])
    pid = child.pid
    assert child.next() == 1
    sent: list[tuple[int, int]] = []
    kill = os.kill

    def recorded_kill(target: int, sig: int) -> None:
        sent.append((target, sig))
        kill(target, sig)

    monkeypatch.setattr(os, "kill", recorded_kill)
    child.close()  # the parent failed: the child is ended, not waited for
    assert sent == [(pid, signal.SIGTERM)]  # ended while it still slept, however fast the machine
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # already reaped: no zombie left


@pytest.mark.parametrize("jobs", [0, 3, 2.5])
def test_jobs_is_one_or_two(jobs) -> None:
    with pytest.raises(InputError, match="jobs"):
        config_from_options({"jobs": jobs})


def test_jobs_does_not_change_the_run_identity() -> None:
    assert Config(jobs=1).identity() == Config(jobs=2).identity()


def test_group_shares_cover_the_run() -> None:
    """The ETA reads the groups' shares of the run (attnspec.theorem.groups): they sum to 1, and
    every group says what it computes; the same groups in one process and in two."""
    from attnspec.theory.expressivity.battery import groups

    for beside in (False, True):
        found = groups(Config(), beside)
        assert abs(sum(g.weight for g in found) - 1.0) < 0.02
        assert all(g.weight >= 0 and g.line(Config()) for g in found)
    assert [g.beside for g in groups(Config(), False)] == [False] * 9
    assert sum(g.beside for g in groups(Config(), True)) == 4
