"""Clean failure: an unusable --out is found before any work in every command; SIGTERM
takes Ctrl-C's path; a bad input (a truncated table, an option out of its range) is one line,
not a traceback."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from attnspec.cli.main import app

# Each command with the cheapest arguments that would otherwise start computing.
COMMANDS = {
    "jl-check": ["jl-check", "--n", "64", "--claims", "lemma1", "--trials", "10", "--trials-other", "10"],
    "osa-check": ["osa-check", "--no-timing", "--trials", "1", "--steps", "1"],
    "osa-train": ["osa-train", "--quick", "--models", "vit", "--seeds", "1", "--epochs", "1"],
    "sa-check": [
        "sa-check",
        "--L",
        "16",
        "--k",
        "2",
        "--trials",
        "10",
        "--sweep-L",
        "16",
        "--sweep-k",
        "1",
        "--sweep-trials",
        "10",
    ],
    "report": ["report", "--quick", "--only", "nothing"],
}


def _error_line(r) -> str:  # noqa: ANN001
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.exit_code == 1, (r.exit_code, r.stderr)
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    return lines[0]


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("where", ["under_a_file", "proc"])
def test_unusable_out_is_refused_before_any_work(tmp_path: Path, command: str, where: str) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    out = blocker / "results" if where == "under_a_file" else Path("/proc/attnspec-results")
    r = CliRunner().invoke(app, [*COMMANDS[command], "--out", str(out)])
    line = _error_line(r)
    assert str(out) in line
    assert r.stdout == ""  # no table printed: nothing was computed


def test_merge_and_plot_refuse_an_unusable_out(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    r = CliRunner().invoke(app, ["merge", str(tmp_path / "s0"), "--out", str(blocker / "m")])
    assert "is under" in _error_line(r) and str(blocker) in r.stderr
    run = tmp_path / "run"
    run.mkdir()
    pd.DataFrame({"layer": [0], "head": [0], "index": [1], "mean": [1.0], "std": [0.0], "count": [1]}).to_parquet(
        run / "spectrum.parquet"
    )
    r = CliRunner().invoke(app, ["plot", "spectrum", str(run), "--out", str(blocker / "figs")])
    assert "is under" in _error_line(r)


def test_truncated_parquet_given_to_plot_is_one_line(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    frame = pd.DataFrame(
        {"layer": [0] * 8, "head": [0] * 8, "index": range(1, 9), "mean": [0.5] * 8, "std": [0.0] * 8, "count": [1] * 8}
    )
    frame.to_parquet(run / "spectrum.parquet")
    (run / "meta.json").write_text(
        '{"kind": "spectrum", "identity": {"model": "m", "data": "d", "seq_len": 8}, "inputs_done": 1}'
    )
    data = (run / "spectrum.parquet").read_bytes()
    (run / "spectrum.parquet").write_bytes(data[: len(data) // 2])
    r = CliRunner().invoke(app, ["plot", "spectrum", str(run)])
    line = _error_line(r)
    assert "spectrum.parquet" in line and "truncated" in line


def test_sa_check_sweep_k_above_every_L_names_the_option() -> None:
    r = CliRunner().invoke(app, ["sa-check", "--sweep-L", "32", "--sweep-k", "64"])
    line = _error_line(r)
    assert "sweep-k" in line and "32" in line and "64" in line


@pytest.mark.parametrize("fraction", ["0.999", "0.001", "nan"])
def test_osa_train_test_fraction_names_the_allowed_range(fraction: str) -> None:
    r = CliRunner().invoke(app, ["osa-train", "--quick", "--test-fraction", fraction])
    line = _error_line(r)
    assert "test_fraction must be" in line and fraction in line


def test_jl_check_n_beyond_the_models_positions(tmp_path: Path) -> None:
    from transformers import RobertaConfig

    # the check reads the config alone, before any weights or tokenizer are loaded
    RobertaConfig(max_position_embeddings=64, pad_token_id=1).save_pretrained(tmp_path / "model")
    text = tmp_path / "docs.txt"
    text.write_text("attention is low rank " * 40 + "\n")
    r = CliRunner().invoke(
        app,
        [
            "jl-check",
            "--claims",
            "thm1",
            "--model",
            str(tmp_path / "model"),
            "--data",
            str(text),
            "--n",
            "100",
            "--trials",
            "10",
        ],
    )
    line = _error_line(r)
    assert "--n 100" in line and "[2, 62]" in line


def test_sigterm_is_handled_like_ctrl_c() -> None:
    from attnspec.runtime.signals import sigterm_as_interrupt

    with pytest.raises(KeyboardInterrupt):
        with sigterm_as_interrupt():
            os.kill(os.getpid(), signal.SIGTERM)
            signal.pause()  # pragma: no cover - the handler raises first
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL or callable(signal.getsignal(signal.SIGTERM))


def test_an_interrupt_while_writing_results_lets_the_writing_finish(tmp_path: Path) -> None:
    """Tables, meta.json and figures are one unit: SIGTERM in the middle is held until the end."""
    from attnspec.cli._common import whole_output

    written = []
    with pytest.raises(KeyboardInterrupt):
        with whole_output():
            written.append("tables")
            os.kill(os.getpid(), signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGINT)
            written.append("figures")
    assert written == ["tables", "figures"]


def test_sigterm_during_a_command_exits_130(monkeypatch: pytest.MonkeyPatch) -> None:
    """The root command installs the SIGTERM handler: a terminated command exits 130."""
    import attnspec.battery as battery

    def terminated(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        os.kill(os.getpid(), signal.SIGTERM)
        signal.pause()  # pragma: no cover

    monkeypatch.setattr(battery, "run_battery", terminated)
    r = CliRunner().invoke(app, ["osa-check", "--no-timing"])
    assert r.exit_code == 130
