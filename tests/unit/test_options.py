"""Each option is declared once (attnspec.options.checks) and everything else is read off it:
the typer options, the API's signature and docstring, the type table and the checks."""

from __future__ import annotations

import inspect
import sys
import types
import typing

import pytest
import typer
import typer.main
from typer.testing import CliRunner

from attnspec import battery, checks
from attnspec.cli.main import app
from attnspec.errors import InputError
from attnspec.options.checks import OPTIONS, run_arguments_of
from attnspec.options.declaration import (
    Option,
    check_bounds,
    check_names,
    check_types,
    numpydoc_parameters,
    typer_command,
)

CLI_ONLY = {"json_out", "verbose", "quiet"}
FUNCTIONS = {
    "jl-check": checks.jl_check,
    "sa-check": checks.sa_check,
    "osa-check": checks.osa_check,
    "osa-train": checks.osa_train,
}


def _typer_params(command: str) -> dict[str, object]:
    cmd = typer.main.get_command(app).commands[command]
    return {p.name: p for p in cmd.params if p.name not in CLI_ONLY}


@pytest.mark.parametrize("command", sorted(OPTIONS))
def test_the_cli_options_are_the_declarations(command: str) -> None:
    params = _typer_params(command)
    declared = (*OPTIONS[command], *run_arguments_of(command))
    assert list(params) == [o.name for o in declared]  # no option declared anywhere else, in their order
    for o in declared:
        p = params[o.name]
        assert p.help == o.help and p.default == o.default, o.name
        assert "/".join(p.opts + p.secondary_opts) == o.flags[0] or p.opts == [o.flags[0]], o.name


@pytest.mark.parametrize("command", sorted(OPTIONS))
def test_the_api_signature_and_docstring_are_the_declarations(command: str) -> None:
    function = FUNCTIONS[command]
    params = inspect.signature(function).parameters
    declared = OPTIONS[command]
    assert list(params)[: len(declared)] == [o.name for o in declared]
    run = [o.name for o in run_arguments_of(command)]
    assert list(params)[len(declared) :] == [*run, *checks.API_ONLY]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params.values())
    assert not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    for o in declared:
        assert params[o.name].default == o.default
    assert numpydoc_parameters(declared) in function.__doc__
    assert battery.OPTION_TYPES[command] == {o.name: o.kinds for o in declared}


def test_an_unknown_name_is_refused_listing_the_allowed_ones() -> None:
    with pytest.raises(
        InputError,
        match=r"^osa_check\(\) has no option 'trails'; its options: seed, alpha, .*, "
        r"progress$",
    ):
        checks.osa_check(trails=3)
    with pytest.raises(InputError, match="^osa-check has no option 'trails'; its options: seed, alpha"):
        battery.run_battery("osa-check", {"trails": 3})
    with pytest.raises(TypeError, match=r"osa_check\(\) takes 0 positional arguments"):
        checks.osa_check(3)


def test_types_follow_the_one_api_rule() -> None:
    opts = (
        Option("n", "int", 1, "n."),
        Option("on", "bool", False, "on."),
        Option("xs", "floats", None, "xs.", nullable=True),
        Option("seed", "seed", 0, "seed."),
    )
    assert check_types(opts, {"n": "7", "on": "yes"}) == {"n": 7, "on": True}  # as typed on a command line
    for bad in (
        {"n": "7"},
        {"n": 2.0},
        {"n": True},
        {"on": "no"},
        {"on": 1},
        {"xs": {1.0}},
        {"seed": 2**63},
        {"seed": -1},
    ):
        with pytest.raises(InputError):
            check_types(opts, bad, text=False)
    assert check_types(opts, {"xs": (1, 2.5), "seed": 2**63 - 1}, text=False) == {"xs": [1.0, 2.5], "seed": 2**63 - 1}


def test_bounds_choices_and_aliases_are_checked_as_declared() -> None:
    opts = (
        Option("num_inputs", "int", 4, "Inputs.", low=1, aliases=("num-sentences",)),
        Option("kind", "str", "a", "Kind.", choices=("a", "b")),
    )
    assert check_names(opts, {"num-sentences": 3}, owner="f()") == {"num_inputs": 3}
    with pytest.raises(InputError, match="given twice"):
        check_names(opts, {"num_sentences": 3, "num_inputs": 3}, owner="f()")
    with pytest.raises(InputError, match=r"num_inputs must be in \[1, inf\), got 0"):
        check_bounds(opts, {"num_inputs": 0})
    with pytest.raises(InputError, match="kind must be one of a, b, got 'c'"):
        check_bounds(opts, {"kind": "c"})
    check_bounds(opts, {"num_inputs": 1, "kind": "b"})


# ------------------------------------------------------------- adding an option is one declaration
def declare_toy(monkeypatch: pytest.MonkeyPatch, options: tuple[Option, ...]) -> None:
    """Register ``toy-check`` (battery ``toy_battery``) with ``options`` for this test only."""
    from attnspec.theorem import registry

    registry.load()
    toy = registry.Command("toy-check", paper="linformer", battery="toy_battery", options=options, run_arguments=())
    monkeypatch.setitem(registry._COMMANDS, "toy-check", toy)


@pytest.fixture
def toy_command(monkeypatch: pytest.MonkeyPatch):
    """A checking command ``toy-check`` whose battery returns the options it receives."""
    module = types.ModuleType("toy_battery")

    def run(config, *, progress=None):  # noqa: ANN001, ANN202
        return battery.BatteryResult(command="toy-check", verdicts=[], meta={"parameters": dict(config)})

    module.config_from_options = dict
    module.run = run
    monkeypatch.setitem(sys.modules, "toy_battery", module)
    declare_toy(monkeypatch, (Option("n", "int", 8, "Size n, >= 1.", low=1),))

    def interfaces() -> tuple[typing.Callable, typer.Typer]:
        api = checks.check_function("toy-check", "toy_check", "A toy check.")
        toy = typer.Typer()

        @toy.command()
        @typer_command(OPTIONS["toy-check"])
        def main(options: dict, verbose: bool = False) -> None:
            typer.echo(repr(battery.run_battery("toy-check", options).meta["parameters"]))

        return api, toy

    return interfaces


def test_adding_an_option_is_one_declaration(toy_command, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    api, cli = toy_command()
    assert "width" not in inspect.signature(api).parameters
    # the one edit: a declaration appended to the command's options
    declare_toy(
        monkeypatch,
        (
            *OPTIONS["toy-check"],
            Option("width", "float", 0.5, "Width of the band, in (0, 1].", low=0.0, high=1.0, low_open=True),
        ),
    )
    api, cli = toy_command()
    param = inspect.signature(api).parameters["width"]
    assert param.default == 0.5 and param.kind is inspect.Parameter.KEYWORD_ONLY and param.annotation is float
    assert "    width : float\n        Width of the band, in (0, 1]." in api.__doc__
    assert api(width=0.25).meta["parameters"] == {"n": 8, "width": 0.25}
    assert api().meta["parameters"] == {"n": 8, "width": 0.5}  # its default reaches the battery
    with pytest.raises(InputError, match="Invalid value for '--width': 'wide' is not a valid float."):
        api(width="wide")
    with pytest.raises(InputError, match=r"width must be in \(0, 1\], got 2.0"):
        api(width=2.0)
    runner = CliRunner()
    shown = runner.invoke(cli, ["--help"])
    assert "--width" in shown.output and "Width of the band" in shown.output
    res = runner.invoke(cli, ["--width", "0.75", "--n", "3"])
    assert res.exit_code == 0, res.output
    assert res.output.strip() == repr({"n": 3, "width": 0.75})
    res = runner.invoke(cli, ["--width", "wide"])
    assert res.exit_code == 2  # not a float: a usage error, as before any declared option


def test_a_hidden_alias_reaches_the_option_and_stays_out_of_help() -> None:
    app_ = typer.Typer()

    @app_.command()
    @typer_command((Option("num_inputs", "int", 4, "Inputs to average over.", aliases=("num-sentences",)),))
    def main(options: dict) -> None:
        typer.echo(options["num_inputs"])

    runner = CliRunner()
    assert "--num-sentences" not in runner.invoke(app_, ["--help"]).output
    assert runner.invoke(app_, ["--num-sentences", "7"]).output.strip() == "7"
    assert runner.invoke(app_, ["--num-inputs", "5"]).output.strip() == "5"
    both = runner.invoke(app_, ["--num-inputs", "5", "--num-sentences", "7"])
    assert both.exit_code == 2


def test_the_api_takes_as_lists_what_the_batteries_read_as_lists() -> None:
    assert battery.check_option_types("sa-check", {"sweep_L": (12, 24)}, text=False) == {"sweep_L": [12, 24]}
    assert battery.check_option_types("osa-train", {"models": ["vit", "osa-qr"]}, text=False)["models"] == [
        "vit",
        "osa-qr",
    ]
    assert battery.check_option_types("jl-check", {"claims": "thm1"}, text=False) == {"claims": "thm1"}
    cfg = battery.battery_module("sa-check").config_from_options({"sweep_L": [12, 24], "sweep_k": [1, 2]})
    assert cfg.sweep_L == (12, 24) and cfg.sweep_k == (1, 2)
    with pytest.raises(InputError, match="'--sweep-L'"):
        battery.check_option_types("sa-check", {"sweep_L": [12, "x"]}, text=False)


@pytest.mark.parametrize("command", sorted(OPTIONS))
def test_the_declared_defaults_are_the_batteries_own(command: str) -> None:
    # run_battery fills in the declared defaults; a battery's config used directly has its own:
    # the same run either way (the report's saved results stay those of the same parameters)
    from attnspec.options.declaration import with_defaults

    module = battery.battery_module(command)
    own = battery.config_identity(module.config_from_options({}))
    declared = battery.config_identity(module.config_from_options(with_defaults(OPTIONS[command], {})))
    assert declared == own


# ------------------------------------------------------------------ the spectrum study's options
def test_the_spectrum_cli_options_are_the_declarations() -> None:
    from attnspec.options.spectrum import SPECTRUM

    cmd = typer.main.get_command(app).commands["spectrum"]
    shown = [p for p in cmd.params if not p.hidden]
    declared = [o for o in SPECTRUM if o.on("cli")]
    assert [p.name for p in shown] == [o.name for o in declared]  # every flag, in --help's order
    for p, o in zip(shown, declared):
        assert p.help == o.help and p.opts[0] == o.flags[0].split("/")[0], o.name
        assert p.default == o.default or str(p.default) == str(o.default), o.name
    hidden = [p for p in cmd.params if p.hidden]
    assert [p.opts for p in hidden] == [["--num-sentences"]]


def test_the_spectrum_api_signature_and_docstring_are_the_declarations() -> None:
    import attnspec
    from attnspec.options.spectrum import POSITIONAL, SPECTRUM

    params = inspect.signature(attnspec.spectrum).parameters
    declared = [o for o in SPECTRUM if o.on("api")]
    assert list(params) == [o.name for o in declared]
    assert [n for n, p in params.items() if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD] == list(POSITIONAL)
    assert not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    for o in declared:
        assert params[o.name].default == o.default_of("api"), o.name
    assert numpydoc_parameters(SPECTRUM) in attnspec.spectrum.__doc__
    assert {"csv", "max_time", "shard", "quiet", "plots"}.isdisjoint(params)  # the command line's own
    assert {"texts", "tokenizer", "progress"}.isdisjoint(o.name for o in SPECTRUM if o.on("cli"))


def test_the_spectrum_declarations_are_the_run_config_defaults() -> None:
    # a run's identity (resume, merge, the report's freshness) compares SpectrumConfig's values
    import dataclasses

    from attnspec.options.spectrum import SPECTRUM
    from attnspec.spectra.config import SpectrumConfig

    config = {f.name: f.default for f in dataclasses.fields(SpectrumConfig) if f.default is not dataclasses.MISSING}
    config["num_inputs"] = config.pop("num_sentences")
    for o in SPECTRUM:
        if o.name in config:
            assert o.default == config[o.name], o.name


def test_the_spectrum_api_refuses_an_unknown_name_before_any_work() -> None:
    import attnspec

    with pytest.raises(InputError, match=r"^spectrum\(\) has no option 'max_time'; its options: model, data, texts"):
        attnspec.spectrum("minilm", data="wiki103", max_time=3)
    with pytest.raises(TypeError, match="positional"):
        attnspec.spectrum("minilm", "wiki103", 128)


def test_a_spectrum_experiment_reads_the_command_line_names() -> None:
    from attnspec.report.runner import _spectrum_options

    assert _spectrum_options({"num-inputs": 8, "seq-len": "16,32"}) == {"seq_len": "16,32", "num_sentences": 8}
    assert _spectrum_options({"num-sentences": 8, "seed": "default"}) == {"num_sentences": 8}
    with pytest.raises(InputError, match="^spectrum has no option 'warmup'; its options: model, data, split"):
        _spectrum_options({"warmup": 2})


def test_a_separate_parameter_is_read_off_its_declaration() -> None:
    out = Option("out", "path", None, "Where to write.", nullable=True)
    toy = typer.Typer()

    @toy.command()
    @typer_command((Option("n", "int", 8, "Size n.", low=1),), separate=(out,))
    def main(options: dict, out: str) -> None:
        typer.echo(f"{options} {out}")

    from typer.testing import CliRunner

    runner = CliRunner()
    assert runner.invoke(toy, ["--n", "3", "--out", "x"]).output.strip() == "{'n': 3} x"
    assert runner.invoke(toy, []).output.strip() == "{'n': 8} None"
    assert "Where to write." in runner.invoke(toy, ["--help"]).output
    with pytest.raises(TypeError, match="no parameter for out"):
        typer_command((), separate=(out,))(lambda options: None)
