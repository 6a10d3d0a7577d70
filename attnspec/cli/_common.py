"""What every command shares: one-line user errors, the stderr console, common options."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from attnspec.errors import AttnspecError

# Results and tables go to stdout; progress, warnings and errors to stderr, so that
# `--json` output can be piped.
out_console = Console()
err_console = Console(stderr=True)


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn attnspec's user errors into ``error: <message>`` and exit code 1 (no traceback)."""
    from rich.markup import escape

    try:
        yield
    except AttnspecError as e:
        # escape: messages quote things like "pip install 'attnspec[hub]'" that rich would eat
        err_console.print(f"[bold red]error:[/] {escape(str(e))}", highlight=False, soft_wrap=True)
        raise typer.Exit(code=1) from None


SeedOpt = Annotated[int, typer.Option("--seed", min=0, help="Seed of every random draw; recorded with the results.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the verdict rows as JSON on stdout (and nothing else there).")]
OutOpt = Annotated[Path | None, typer.Option("--out", help="Directory for tidy results, meta.json and figures.")]
