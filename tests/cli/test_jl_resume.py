"""`attnspec jl-check` interrupted (Ctrl-C, SIGTERM): the finished claim groups are kept as a
partial result, and `--resume` computes only the missing ones, ending with the tables of an
uninterrupted run."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from attnspec.cli.main import app
from attnspec.theory.linformer import battery as B

TINY = [
    "jl-check",
    "--n",
    "64",
    "--eps",
    "0.5",
    "--trials",
    "50",
    "--trials-other",
    "20",
    "--d",
    "4",
    "--k",
    "4,12,40",
    "--seed",
    "5",
]
TABLES = ("jl", "jl_errors", "jl_curves", "verdicts")


@pytest.fixture(autouse=True)
def _in_one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests count and interrupt group calls in this process, so nothing is forked here
    (the module's uninterrupted run may fork: the tables are the same to the last bit)."""
    monkeypatch.setenv("ATTNSPEC_NO_FORK", "1")


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("jl") / "whole"
    res = CliRunner().invoke(app, [*TINY, "--out", str(out)])
    assert res.exit_code == 0, res.output
    return out


def _count_and_interrupt(monkeypatch: pytest.MonkeyPatch, stop_at: str | None) -> list[str]:
    """Record which groups are computed; raise KeyboardInterrupt when ``stop_at`` starts."""
    called: list[str] = []
    for group, func in dict(B._GROUP_FUNCS).items():

        def wrapped(*args, _group=group, _func=func, **kwargs):  # noqa: ANN002, ANN003
            called.append(_group)
            if _group == stop_at:
                raise KeyboardInterrupt
            return _func(*args, **kwargs)

        monkeypatch.setitem(B._GROUP_FUNCS, group, wrapped)
    return called


@pytest.mark.parametrize("stop_at", ["thm1", "eq4"])
def test_an_interrupt_keeps_the_finished_groups_and_resume_gives_the_uninterrupted_tables(
    uninterrupted: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stop_at: str
) -> None:
    runner = CliRunner()
    out = tmp_path / "run"
    with monkeypatch.context() as m:
        _count_and_interrupt(m, stop_at)
        res = runner.invoke(app, [*TINY, "--out", str(out)])
    assert res.exit_code == 130, res.output
    line = res.stderr.strip().splitlines()[-1]
    finished = B.RUN_GROUPS[: B.RUN_GROUPS.index(stop_at)]
    assert line.startswith(f"interrupted; {len(finished)} of {len(B.RUN_GROUPS)} claim groups kept in {out}"), line
    assert "--resume" in line
    meta = json.loads((out / "meta.json").read_text())
    assert meta["status"] == "partial"
    assert meta["runs_done"] == list(finished) and meta["runs_missing"] == list(B.RUN_GROUPS[len(finished) :])
    assert not (out / "jl.parquet").exists() and not list(out.glob("*.png"))  # never taken for complete

    # without --resume, the partial result is refused, not overwritten
    res = runner.invoke(app, [*TINY, "--out", str(out)])
    assert res.exit_code == 1 and "--resume" in res.stderr and len(res.stderr.strip().splitlines()) == 1

    with monkeypatch.context() as m:
        called = _count_and_interrupt(m, None)
        res = runner.invoke(app, [*TINY, "--out", str(out), "--resume"])
    assert res.exit_code == 0, res.output
    assert called == list(B.RUN_GROUPS[len(finished) :])  # only the missing groups were computed
    meta = json.loads((out / "meta.json").read_text())
    assert meta["status"] == "complete" and meta["groups_kept_from_before"] == sorted(finished)
    assert not list(out.glob("jl_partial_*"))  # the partial tables are gone
    for name in TABLES:
        pd.testing.assert_frame_equal(
            pd.read_parquet(out / f"{name}.parquet"),
            pd.read_parquet(uninterrupted / f"{name}.parquet"),
            check_exact=True,
        )


def test_resume_with_other_options_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    out = tmp_path / "run"
    with monkeypatch.context() as m:
        _count_and_interrupt(m, "thm2")
        assert runner.invoke(app, [*TINY, "--out", str(out)]).exit_code == 130
    res = runner.invoke(app, [*TINY[:-1], "6", "--out", str(out), "--resume"])  # another seed
    assert res.exit_code == 1
    assert res.stderr.startswith("error: ") and "seed" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert json.loads((out / "meta.json").read_text())["status"] == "partial"  # kept


def test_an_interrupt_without_out_exits_130_with_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    _count_and_interrupt(monkeypatch, "lemma1")
    res = CliRunner().invoke(app, [*TINY, "--claims", "lemma1,eq4"])
    assert res.exit_code == 130
    assert res.stderr.strip() == "interrupted after 0 of 2 claim groups; nothing saved (no --out)"


def test_resume_needs_out() -> None:
    res = CliRunner().invoke(app, [*TINY, "--resume"])
    assert (
        res.exit_code == 1 and res.stderr.strip() == "error: --resume needs --out: the directory of the interrupted run"
    )


def test_an_interrupt_never_marks_a_complete_result_partial(
    uninterrupted: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    out = tmp_path / "whole"
    shutil.copytree(uninterrupted, out)
    before = (out / "meta.json").read_text()
    _count_and_interrupt(monkeypatch, "thm2")
    res = CliRunner().invoke(app, [*TINY, "--out", str(out)])  # the same run again, interrupted
    assert res.exit_code == 130
    assert (
        res.stderr.strip().splitlines()[-1]
        == f"interrupted after 2 of {len(B.RUN_GROUPS)} claim groups; {out} holds a complete result"
    )
    assert (out / "meta.json").read_text() == before and not list(out.glob("jl_partial_*"))


def test_an_interrupt_while_finishing_keeps_every_group(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    out, whole = tmp_path / "run", tmp_path / "whole"
    options = [*TINY, "--claims", "lemma1.eq11,eq4"]
    assert runner.invoke(app, [*options, "--out", str(whole)]).exit_code == 0

    def interrupted(*args, **kwargs):  # noqa: ANN002, ANN003
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(B, "_finish", interrupted)
        assert runner.invoke(app, [*options, "--out", str(out)]).exit_code == 130
    meta = json.loads((out / "meta.json").read_text())
    assert meta["status"] == "partial" and meta["runs_done"] == ["lemma1", "eq4"] and meta["runs_missing"] == []
    called = _count_and_interrupt(monkeypatch, None)
    assert runner.invoke(app, [*options, "--out", str(out), "--resume"]).exit_code == 0
    assert called == []
    for name in TABLES:
        pd.testing.assert_frame_equal(
            pd.read_parquet(out / f"{name}.parquet"), pd.read_parquet(whole / f"{name}.parquet"), check_exact=True
        )
