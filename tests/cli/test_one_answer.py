"""One answer per bad value: every declared option of every checking command, and the spectrum
study's checked values, given a bad value on the command line, through the Python API and in an
experiment TOML, get the same exit code (2: it cannot be read as its option's kind; 1: it cannot
be done) and the same message, before anything runs."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

import attnspec
from attnspec.cli.main import app
from attnspec.errors import AttnspecError, InputError, OptionError
from attnspec.options.checks import OPTIONS

API = {"jl-check": "jl_check", "sa-check": "sa_check", "osa-check": "osa_check", "osa-train": "osa_train"}


class Accepted(Exception):
    """The options passed every check: the test stops the run here."""


def _bad_value(opt) -> tuple[object, int] | None:  # noqa: ANN001
    """A value the declaration refuses, and the exit code it must give; None when the
    declaration leaves nothing to refuse (a free string, a flag) or the option is a list."""
    if opt.kind not in ("int", "float", "seed", "str") or opt.also:
        return None
    if opt.kind == "seed":
        return 10**30, 1
    if opt.choices:
        return "no-such-choice", 1
    if opt.kind == "str":
        return None
    if opt.low is not None:
        low = opt.low if opt.low_open else opt.low - 1
        return (int(low) if opt.kind == "int" else float(low)), 1
    if opt.high is not None and not math.isinf(opt.high):
        high = opt.high if opt.high_open else opt.high + 1
        return (int(high) if opt.kind == "int" else float(high)), 1
    return "not-a-number", 2


CASES = [
    pytest.param(command, opt, *bad, id=f"{command}-{opt.name}")
    for command, declared in OPTIONS.items()
    for opt in declared
    if opt.on("cli") and opt.on("api") and (bad := _bad_value(opt)) is not None
]


@pytest.fixture
def nothing_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    from attnspec import battery

    checked = battery._config

    def stop(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        checked(*args, **kwargs)
        raise Accepted

    monkeypatch.setattr(battery, "_config", stop)


def _cli(args: list[str]) -> tuple[int, str]:
    r = CliRunner().invoke(app, args)
    if isinstance(r.exception, Accepted):
        return 0, "accepted"
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    return r.exit_code, lines[0].removeprefix("error: ")


def _raised(call) -> AttnspecError | None:  # noqa: ANN001
    try:
        call()
    except Accepted:
        return None
    except AttnspecError as e:
        return e
    raise AssertionError("neither refused nor accepted")


def _code(e: AttnspecError | None) -> int:
    return 0 if e is None else 2 if isinstance(e, OptionError) else 1


def _toml(tmp_path: Path, command: str, key: str, value: object):  # noqa: ANN202
    from attnspec.report.experiments import Experiment
    from attnspec.report.runner import check_options

    exp = Experiment(
        name="x", path=tmp_path / "x.toml", title="x", paper="linformer", command=command, args={key: value}
    )
    return lambda: check_options(exp, tmp_path / "results", quick=False)


@pytest.mark.parametrize(("command", "opt", "bad", "code"), CASES)
def test_every_checking_option_gets_one_answer_on_every_surface(
    tmp_path: Path, nothing_runs: None, command: str, opt, bad: object, code: int
) -> None:  # noqa: ANN001
    cli_code, cli_line = _cli([command, opt.flags[0].split("/")[0], str(bad)])
    api = _raised(lambda: getattr(attnspec, API[command])(**{opt.name: bad}))
    toml = _raised(_toml(tmp_path, command, opt.name.replace("_", "-"), bad))
    assert (cli_code, _code(api), _code(toml)) == (code, code, code), (cli_line, api, toml)
    assert str(toml) == f"{tmp_path / 'x.toml'}: {api}"
    if code == 1:  # the library's own check on every surface: the same words
        assert cli_line == str(api), (cli_line, str(api))
    else:  # the command line's parser words its own; each names the option
        assert opt.label in cli_line and opt.label in str(api)


SPECTRUM_CASES = [
    ("seed", 10**30, 1),
    ("seq-len", 1, 1),
    ("batch-size", 0, 1),
    ("num-inputs", 0, 1),
    ("selection", "zz", 1),
    ("short-policy", "zz", 1),
    ("svd-method", "zz", 1),
    ("data", "imbd", 2),
]


@pytest.mark.parametrize(("flag", "bad", "code"), SPECTRUM_CASES, ids=[c[0] for c in SPECTRUM_CASES])
def test_the_spectrum_studys_values_get_one_answer_on_every_surface(
    tmp_path: Path, flag: str, bad: object, code: int
) -> None:
    model = str(tmp_path / "no-model")  # refused for its value, before the missing model is seen
    base = {"data": "imdb"}
    cli_code, cli_line = _cli(
        ["spectrum", *(x for k, v in {**base, flag: bad}.items() for x in (f"--{k}", str(v))), "--model", model]
    )
    kw = {k.replace("-", "_"): v for k, v in {**base, flag: bad}.items()}
    api = _raised(lambda: attnspec.spectrum(model, **kw))
    args = {"model": model, **base, flag: bad}
    toml = _raised(_toml_args(tmp_path, args))
    assert (cli_code, _code(api), _code(toml)) == (code, code, code), (cli_line, api, toml)
    assert str(toml) == f"{tmp_path / 'x.toml'}: {cli_line}", (cli_line, str(toml))
    # the API names its argument (seq_len), the command line and a TOML the flag (--seq-len)
    name = flag.replace("-", "_")
    if flag != "num-inputs":  # the command line and a TOML take 'all' too, the API an integer only
        assert cli_line.replace(f"--{flag}", name) == str(api).replace(f"--{flag}", name), (cli_line, str(api))


CLI_ONLY_SPECTRUM_CASES = [
    ("checkpoint-every", 0, 1),
    ("rank-tol", 1.5, 1),
    ("max-time", -1.0, 1),
    ("max-time", "soon", 2),
]


@pytest.mark.parametrize(
    ("flag", "bad", "code"), CLI_ONLY_SPECTRUM_CASES, ids=[f"{c[0]}-{c[1]}" for c in CLI_ONLY_SPECTRUM_CASES]
)
def test_the_spectrum_options_the_api_lacks_get_one_answer_from_the_command_line_and_a_toml(
    tmp_path: Path, flag: str, bad: object, code: int
) -> None:
    model = str(tmp_path / "no-model")
    cli_code, cli_line = _cli(["spectrum", "--data", "imdb", f"--{flag}", str(bad), "--model", model])
    toml = _raised(_toml_args(tmp_path, {"model": model, "data": "imdb", flag: bad}))
    assert (cli_code, _code(toml)) == (code, code), (cli_line, toml)
    if code == 1:
        assert str(toml) == f"{tmp_path / 'x.toml'}: {cli_line}", (cli_line, str(toml))
    else:
        assert f"--{flag}" in cli_line and f"--{flag}" in str(toml)


def _toml_args(tmp_path: Path, args: dict[str, object]):  # noqa: ANN202
    from attnspec.report.experiments import Experiment
    from attnspec.report.runner import check_options

    exp = Experiment(name="x", path=tmp_path / "x.toml", title="x", paper="linformer", command="spectrum", args=args)
    return lambda: check_options(exp, tmp_path / "results", quick=False)


def test_a_value_of_the_right_kind_that_cannot_be_done_is_not_an_option_error() -> None:
    assert issubclass(OptionError, InputError)  # `except InputError` catches both
