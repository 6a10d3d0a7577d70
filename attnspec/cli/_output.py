"""How much the checking commands print: a short summary by default, everything with --verbose.

By default the verdicts are summarised verdict first (one sentence per claim: the verdict
at the paper's parameters, then per reading what was decided and where it changes, see
:mod:`attnspec.verdict_summary`) and progress messages replace each other on one
transient status line; ``--verbose`` prints the full verdict table and every progress
message on its own line. ``--json`` and ``--out`` are unaffected (they hold every row).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated

import typer

VerboseOpt = Annotated[bool, typer.Option(
    "--verbose", "-v", help="Print the full verdict table and every progress line (default: one sentence per "
                            "claim, verdict first; the full table is also in --out DIR and --json).")]


@contextmanager
def progress_printer(console, verbose: bool, fmt: Callable[[str], str] = lambda m: m) -> Iterator[Callable[[str], None]]:  # noqa: ANN001 - rich Console
    """Yield a ``progress(message)`` callable: one line per message with ``verbose``, else a
    single transient status line on a terminal (nothing when stderr is not a terminal).

    ``fmt`` returns plain text, drawn dim; brackets in it (paths, "[gaussian]") print as
    they are, never as rich markup."""
    from rich.text import Text

    def line(m: str) -> Text:
        return Text(fmt(m), style="dim")

    if verbose:
        yield lambda m: console.print(line(m), highlight=False)
        return
    if not console.is_terminal:
        yield lambda m: None
        return
    with console.status("") as status:
        yield lambda m: status.update(line(m))
