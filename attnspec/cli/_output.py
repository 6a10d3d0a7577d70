"""How much the checking commands print: a short summary by default, everything with --verbose.

By default the verdicts are one table, one row per claim (claim, verdict, why; see
:mod:`attnspec.verdicts.table`) under a header line with the parameters and a few short
notes, with one footer pointing to ``--verbose``, ``--json`` and ``--out``; progress
messages replace each other on one transient status line; ``--verbose`` prints the full verdict table and every progress
message on its own line. ``--json`` and ``--out`` are unaffected (they hold every row).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Annotated

import typer

VerboseOpt = Annotated[
    bool,
    typer.Option(
        "--verbose",
        "-v",
        help="Print the full verdict table and every progress line (default: one row per "
        "claim: its verdict and why; every row is also in --out DIR and --json).",
    ),
]


@contextmanager
def progress_printer(
    console, verbose: bool, fmt: Callable[[str], str] = lambda m: m
) -> Iterator[Callable[[str], None]]:  # noqa: ANN001 - rich Console
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

        def update(m: str) -> None:
            status.update(line(m))

        update.live = True  # type: ignore[attr-defined]  # one line, replaced: counted progress may come often
        yield update


#: The footer every checking command's table ends with (said once, not on every row).
FOOTER = "(k/N rows): k of N rows agree. Every row with its seed and evidence: --verbose, --json, --out DIR."
#: The footer where a why was cut to fit the terminal (its line ends with the table's cut mark).
CUT_FOOTER = (
    "(k/N rows): k of N rows agree. … : cut to fit this width; every why in full, and every row with its "
    "seed and evidence: --verbose, --json, --out DIR."
)


def straddle_line(rows) -> list[str]:  # noqa: ANN001 - VerdictRows or their frame
    """The footer line counting the rows ``measured`` because their interval straddles the
    claim with the estimate above it (:func:`attnspec.verdicts.numbers.straddles_above`); none
    when there are none."""
    from attnspec.verdicts.numbers import straddles_above
    from attnspec.verdicts.sentences import as_rows

    count = sum(straddles_above(r) for r in as_rows(rows))
    if not count:
        return []
    return [
        f"{count} row{'s' if count > 1 else ''} measured, not holds: the estimate is above the claim while the "
        "interval reaches below it."
    ]


def screen_lines(
    rows,
    *,
    width: int,
    header: str,
    notes: Sequence[str] = (),
    footer: Sequence[str] = (),  # noqa: ANN001
    budget: int | None = None,
) -> list[str]:
    """The default output of a checking command as lines of at most ``width`` characters:
    ``header``, its ``notes``, the verdict table (:mod:`attnspec.verdicts.table`, one row per
    claim) and the footer lines, wrapped; where a why had to be cut to fit (its line ends with
    "…"), the footer says so and where the rest is. With ``budget`` (lines), the table is
    fitted into what the header, notes and footer leave."""
    from attnspec.verdicts.sentences import wrap
    from attnspec.verdicts.table import cut_any, table_lines

    def say(text: str, indent: str = "") -> list[str]:
        return wrap(text, width, indent="", subsequent=indent)

    head = say(header, "  ") + [x for note in notes for x in say(f"note: {note}", "      ")]
    footer = (*footer, *straddle_line(rows))
    cut_foot = [x for line in (*footer, CUT_FOOTER) for x in say(line, "  ")]
    room = None if budget is None else budget - len(head) - len(cut_foot)
    table = table_lines(rows, width=width, max_lines=room)
    foot = cut_foot if cut_any(table) else [x for line in (*footer, FOOTER) for x in say(line, "  ")]
    return head + table + foot


def print_verdict_screen(
    rows,
    *,
    console,
    header: str,
    notes: Sequence[str] = (),  # noqa: ANN001 - rich Console
    footer: Sequence[str] = (),
    budget: int | None = None,
) -> None:
    """Print :func:`screen_lines` at the console's width."""
    width = max(console.width or 100, 60)
    for line in screen_lines(rows, width=width, header=header, notes=notes, footer=footer, budget=budget):
        console.print(line, highlight=False, markup=False, soft_wrap=True)
