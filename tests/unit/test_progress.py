"""One progress sink: `progress=` decides where every line of a run goes, stage messages and
counted progress alike; `progress=False` writes nothing."""

from __future__ import annotations

import io

import pytest

import attnspec
from attnspec.errors import InputError
from attnspec.runtime import progress as P

SMALL_JL = dict(n=64, trials=200, trials_other=50, claims="thm1", seed=0)


@pytest.fixture
def immediate(monkeypatch: pytest.MonkeyPatch) -> None:
    """Counted progress from the first unit on, in this process (no forked worker)."""
    monkeypatch.setattr(P, "DELAY_SECONDS", 0.0)
    monkeypatch.setenv("ATTNSPEC_NO_FORK", "1")
    monkeypatch.delenv("ATTNSPEC_QUIET", raising=False)
    P.set_quiet(False)


def test_jl_check_with_progress_false_writes_nothing_to_stderr(immediate: None, capfd: pytest.CaptureFixture) -> None:
    attnspec.jl_check(**SMALL_JL, progress=False)
    out, err = capfd.readouterr()
    assert err == "" and out == ""


def test_jl_check_progress_goes_to_the_one_sink(immediate: None, capfd: pytest.CaptureFixture) -> None:
    said: list[str] = []
    attnspec.jl_check(**SMALL_JL, progress=said.append)
    assert capfd.readouterr().err == ""  # a callable takes everything: nothing of its own on stderr
    assert any(m.startswith("Theorem 1: ") and "trials" in m for m in said)  # the counted lines
    assert any(isinstance(m, P.ProgressLine) for m in said)
    attnspec.jl_check(**SMALL_JL, progress=True)
    assert "Theorem 1" in capfd.readouterr().err  # True: stderr


def test_the_sink_of_each_progress_value() -> None:
    assert P.progress_sink(False) is None and P.progress_sink(None) is None
    assert isinstance(P.progress_sink(True), P.StreamSink)
    assert P.progress_sink(print) is print
    with pytest.raises(InputError, match="progress must be True, False or a callable"):
        P.progress_sink("yes")


def test_a_stream_sink_rewrites_counted_lines_only_on_a_terminal() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty, log = Tty(), io.StringIO()
    for stream in (tty, log):
        sink = P.StreamSink(stream)
        sink(P.ProgressLine("a: 1/2"))
        sink(P.ProgressLine("a: 2/2"))
        sink("stage done")
    assert tty.getvalue() == "\ra: 1/2\x1b[K\ra: 2/2\x1b[K\nstage done\n"
    assert log.getvalue() == "a: 1/2\na: 2/2\nstage done\n"


def test_quiet_and_no_sink_say_nothing() -> None:
    said: list[str] = []
    for p in (P.Progress("w", 10, say=said.append, quiet=True, delay=0), P.Progress("w", 10, say=None, delay=0)):
        p.advance(5)
        p.close()
    assert said == []
