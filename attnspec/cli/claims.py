"""`attnspec claims`: the catalogue of every statement attnspec checks (claim ids, readings, commands)."""

from __future__ import annotations

from typing import Annotated

import typer

from attnspec.cli._common import JsonOpt, out_console, user_errors

_HELP = """List every claim attnspec checks: its id, the paper and equation, its source (the
paper itself, or notes on it with the page), the statement, the readings it is checked under,
and the command whose verdict rows carry it.

Verdict rows (tables, --json, the report) are keyed on (claim id, reading).
"""


def claims_command(
    paper: Annotated[
        str | None,
        typer.Option(
            "--paper", help="Only this paper's claims: linformer, expressivity, osa, or an installed plug-in's."
        ),
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    with user_errors():
        from attnspec.verdicts import registry

        found = registry.catalogue(registry.check_paper(paper))
        if json_out:
            import json

            typer.echo(json.dumps([_as_dict(c) for c in found], indent=2, ensure_ascii=False))
            return
        _print(found, paper)


def _as_dict(c) -> dict:  # noqa: ANN001 - attnspec.verdicts.registry.Claim
    return {
        "id": c.id,
        "paper": c.paper,
        "where": c.where,
        "source": c.source,
        "statement": c.statement,
        "readings": [{"name": r.name, "description": r.description} for r in c.readings],
        "command": c.command,
        "notes": c.notes,
    }


def _print(found: list, paper: str | None) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from attnspec.verdicts.registry import PAPERS

    console = Console(width=max(out_console.width, 160), highlight=False, soft_wrap=False, emoji=False)
    if not found:
        console.print(f"no claims registered{' for ' + paper if paper else ''}")
        return
    for key in PAPERS:
        mine = [c for c in found if c.paper == key]
        if not mine:
            continue
        table = Table(title=escape(PAPERS[key]), show_lines=True)
        for col in ("id", "where", "source", "statement", "readings", "checked by"):
            table.add_column(col, overflow="fold")
        for c in mine:
            readings = "\n".join(f"{r.name}: {r.description}" for r in c.readings)
            table.add_row(
                escape(c.id),
                escape(c.where),
                escape(c.source),
                escape(c.statement + (f" ({c.notes})" if c.notes else "")),
                escape(readings),
                f"attnspec {c.command}",
            )
        console.print(table)
    console.print(f"{len(found)} claims. Rows of every checking command carry these ids (--json: field 'claim').")


def fast_path(argv: list[str]) -> int | None:
    """Run ``claims`` directly when ``argv`` is ``claims`` with only ``--paper P`` and
    ``--json`` (the exit code); None for anything else, which typer then parses (help,
    errors, other commands). Saves typer's per-invocation set-up (pydantic) on the one
    command that only prints static text."""
    if not argv or argv[0] != "claims":
        return None
    paper, json_out, rest = None, False, list(argv[1:])
    while rest:
        arg = rest.pop(0)
        if arg == "--json" and not json_out:
            json_out = True
        elif arg == "--paper" and paper is None and rest and not rest[0].startswith("-"):
            paper = rest.pop(0)
        elif arg.startswith("--paper=") and paper is None and len(arg) > len("--paper="):
            paper = arg.split("=", 1)[1]
        else:
            return None
    try:
        claims_command(paper=paper, json_out=json_out)
    except typer.Exit as e:
        return e.exit_code
    return 0


def register(app: typer.Typer) -> None:
    """Register ``claims`` on ``app``."""
    from attnspec.verdicts.vocabulary import verdict_epilog

    app.command("claims", help=_HELP, epilog=verdict_epilog())(claims_command)
