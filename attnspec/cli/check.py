"""`attnspec check NAME [options]`: run any registered check, built-in or plug-in.

``NAME`` is a command (``favor``, ``jl-check``) or a module that registers one when imported.
Its options are the check's own declarations (:mod:`attnspec.options.declaration`): the command
line is built for it after ``NAME`` is read, so ``attnspec check favor --help`` lists them.
Output as for every checking command: the one-screen verdict table, ``--verbose`` for every
row, ``--json`` for every row as JSON, ``--out DIR`` for the tables, verdicts and meta.json.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import typer

from attnspec.cli._common import JsonOpt, claim_out_dir, err_console, out_console, user_errors
from attnspec.cli._output import VerboseOpt, progress_printer

_HELP = """Run a registered check by name: a plug-in's (`attnspec claims` lists every paper and
command) or a built-in one (jl-check, sa-check, osa-check, osa-train).

NAME is a command name or a Python module that registers a check when imported.
`attnspec check NAME --help` lists that check's options.
"""

#: The most lines the default output may take.
SCREEN_LINES = 35


def _runner(name: str) -> typer.Typer:
    """A one-command typer app whose options are the check's declarations."""
    from attnspec.options.checks import run_arguments_of
    from attnspec.options.declaration import typer_command
    from attnspec.theorem.registry import command as registered
    from attnspec.verdicts.vocabulary import verdict_epilog

    found = registered(name)
    runs = run_arguments_of(name)

    def run(
        options: dict[str, Any],
        out: Path | None = None,
        resume: bool = False,
        csv: bool = False,
        plots: bool = True,
        json_out: JsonOpt = False,
        verbose: VerboseOpt = False,
    ) -> None:
        with user_errors():
            _run_and_print(name, options, out=out, resume=resume, csv=csv, plots=plots, json_out=json_out,
                           verbose=verbose)  # fmt: skip

    sig = inspect.signature(run)
    keep = ["options", *(o.name for o in runs), "json_out", "verbose"]
    run.__signature__ = sig.replace(parameters=[sig.parameters[k] for k in keep])  # type: ignore[attr-defined]
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
    app.command(name=name, help=found.summary or f"Check {found.paper}'s claims.", epilog=verdict_epilog())(
        typer_command(found.options, separate=runs)(run)
    )
    return app


def _run_and_print(name: str, options: dict[str, Any], *, out: Path | None, resume: bool, csv: bool, plots: bool,
                   json_out: bool, verbose: bool) -> None:  # fmt: skip
    from attnspec import battery
    from attnspec.errors import InputError
    from attnspec.verdicts.classify import print_verdict_table, verdicts_json
    from attnspec.verdicts.table import count_line

    if resume and out is None:
        raise InputError("--resume needs --out: the directory of the interrupted run")
    claim_out_dir(out, f"attnspec check {name}")
    with progress_printer(err_console, verbose, lambda m: f"· {m}") as progress:
        result = battery.run_and_write(name, options, out, csv=csv, plots=plots, progress=progress, resume=resume)
    if out is not None:
        err_console.print(f"wrote {len(result.tables) + 1} tables and meta.json to {out}")
    if json_out:
        out_console.file.write(verdicts_json(result.verdicts) + "\n")
        return
    if verbose:
        print_verdict_table(result.verdicts, title=f"{name} (seed {options.get('seed')})", console=out_console)
        return
    from attnspec.cli._output import print_verdict_screen
    from attnspec.theorem.registry import command as registered
    from attnspec.theorem.registry import papers

    paper = papers()[registered(name).paper]
    shown = ", ".join(f"{k} = {v}" for k, v in options.items())
    header = f"{name}: {paper.citation()}. {shown}. {count_line(result.verdicts)}, {result.meta.get('wall_seconds', 0):.1f} s."
    print_verdict_screen(result.verdicts, console=out_console, header=header, budget=SCREEN_LINES)


def register(app: typer.Typer) -> None:
    """Register ``check`` on ``app``.

    Parameters
    ----------
    app : typer.Typer
        The root application.
    """

    @app.command(
        "check",
        help=_HELP,
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
        add_help_option=False,
    )
    def check(ctx: typer.Context, name: str = typer.Argument("", help="A check's command or module.")) -> None:
        if name in ("", "--help", "-h"):
            typer.echo(ctx.get_help())
            raise typer.Exit(0 if name else 2)
        with user_errors():
            from attnspec.theorem.registry import resolve

            resolved = resolve(name)
        command = typer.main.get_command(_runner(resolved))
        command.main(args=list(ctx.args), prog_name=f"attnspec check {name}", standalone_mode=True)
