"""What the fuzz pass over every command's options (tests/fuzz_cli.py) found, each case run
again here: one ``error:`` line, before anything is loaded or computed."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from attnspec.cli.main import app


def _one_line(args: list[str]) -> tuple[int, str]:
    r = CliRunner().invoke(app, args)
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    return r.exit_code, lines[0]


@pytest.mark.parametrize("flag", ["--model", "--data"])
def test_a_name_too_long_for_the_file_system_is_refused_in_one_line(tmp_path: Path, flag: str) -> None:
    args = {"--model": str(tmp_path / "no-model"), "--data": "imdb", flag: "ü" * 300}
    code, line = _one_line(["spectrum", *(x for kv in args.items() for x in kv)])
    assert code == 1
    assert "(600 bytes) is too long for the file system" in line and line.count("ü") == 60


def test_a_name_too_long_is_named_in_its_message_only_when_it_is_that() -> None:
    import errno

    from attnspec.cli._common import too_long_a_name

    assert too_long_a_name(b"abc").startswith("the path 'abc' (3 bytes)")
    assert errno.ENAMETOOLONG == 36  # the errno the CLI turns into this line (Linux)


def test_osa_train_refuses_more_newton_schulz_steps_than_its_ceiling_at_once() -> None:
    # the config lists one coefficient tuple per step: 10**30 steps never finished building it
    code, line = _one_line(["osa-train", "--ns-steps", "9" * 30])
    assert (code, line) == (1, "error: ns_steps must be in [0, 100], got " + "9" * 30)


def test_osa_train_ns_steps_ceiling_holds_in_the_api_too() -> None:
    import attnspec
    from attnspec.errors import InputError

    with pytest.raises(InputError, match=r"^ns_steps must be in \[0, 100\], got 101$"):
        attnspec.osa_train(ns_steps=101)


@pytest.mark.parametrize(("flag", "value"), [("--approx-steps", "0"), ("--approx-steps", "-1")])
def test_a_bad_value_of_an_option_the_run_does_not_use_is_still_refused(tmp_path: Path, flag: str, value: str) -> None:
    # --approx-steps without --approx was dropped unread; its declaration allows >= 1
    code, line = _one_line(["spectrum", "--model", str(tmp_path / "no-model"), "--data", "imdb", flag, value])
    assert (code, line) == (1, f"error: {flag} must be in [1, inf), got {value}")


def test_an_unused_options_bad_value_is_refused_by_the_api_and_a_toml_alike(tmp_path: Path) -> None:
    import attnspec
    from attnspec.errors import InputError
    from attnspec.report.experiments import Experiment
    from attnspec.report.runner import check_options

    with pytest.raises(InputError, match=r"^--approx-steps must be in \[1, inf\), got 0$"):
        attnspec.spectrum(str(tmp_path / "no-model"), "imdb", approx_steps=0)
    exp = Experiment(
        name="x",
        path=tmp_path / "x.toml",
        title="x",
        paper="linformer",
        command="spectrum",
        args={"model": str(tmp_path / "no-model"), "data": "imdb", "approx-steps": 0},
    )
    with pytest.raises(InputError, match=r"x\.toml: --approx-steps must be in \[1, inf\), got 0$"):
        check_options(exp, tmp_path / "results", quick=False)


def test_more_real_attention_matrices_than_memory_holds_are_refused_before_the_model_loads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # jl-check --model minilm --data imdb --count 10**30 tokenised the whole corpus, then asked
    # for 1.4e28 inputs under the spectrum's option names
    from attnspec import battery
    from attnspec.errors import InputError
    from attnspec.spectra import real_attention
    from attnspec.theorem.result import AttentionRequest

    def never(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(real_attention, "sample_attention", never)
    request = AttentionRequest(model="minilm", data="imdb", seq_len=64, count=10**30, seed=0)
    with pytest.raises(InputError, match=r"^1000000000000000000000000000000 real attention matrices of 64×64 needs"):
        battery.load_attention(request)
