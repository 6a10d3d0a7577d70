"""The committed reports/REPORT.md: portable, fresh, and every command in it parses.

* no absolute path of the machine that made it (site-packages, worktrees, home folders), in
  it or in its appendix pages;
* every ``attnspec ...`` command it and its appendix show parses against the CLI as written: the
  subcommand exists, every option exists and every value has the option's type and range
  (click's own parser, no run);
* its figures were drawn by today's plotting code: the digest recorded with them in
  ``reports/figures/DRAWN_BY.json`` equals the digest of ``attnspec/plots`` now (file times
  say nothing after a checkout);
* it opens with the summary, before the first paper's section.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
import typer

try:  # typer >= 0.20 vendors its own click; its commands and errors are that click's
    from typer._click import exceptions as _exc  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - older typer on the real click
    from click import exceptions as _exc

from attnspec.cli.main import app
from attnspec.report import DRAWN_BY_FILE, plotting_code_digest

REPO = Path(__file__).resolve().parents[2]
REPORT = REPO / "reports" / "REPORT.md"

#: Absolute paths a report must not carry: anything under the root of a machine's tree.
ABSOLUTE = re.compile(r"(?<![\w.])(/(?:root|home|work|usr|opt|tmp|var|mnt|Users)/[^\s`)|]*)")


def report_text() -> str:
    """REPORT.md and its appendix pages (where the commands and provenance are)."""
    pages = sorted((REPO / "reports" / "appendix").glob("*.md"))
    return "\n".join([REPORT.read_text(), *(p.read_text() for p in pages)])


def attnspec_commands(text: str) -> list[str]:
    """Every ``attnspec ...`` command in inline code spans and fenced blocks."""
    found: list[str] = []
    for block in re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S):
        for line in block.splitlines():
            line = line.split(" #", 1)[0].strip()
            if line.startswith("attnspec "):
                found.append(line)
    for span in re.findall(r"`([^`\n]+)`", text):
        if span.startswith("attnspec "):
            found.append(span.strip())
    return found


def parse(command: str) -> None:
    """Parse ``command`` with the CLI's click objects, as the shell would pass it; raise on error."""
    words = shlex.split(command)[1:]
    cmd = typer.main.get_command(app)
    ctx = cmd.make_context("attnspec", list(words), resilient_parsing=False)
    name = "attnspec"
    while hasattr(cmd, "resolve_command"):  # a group (typer's groups are no click.Group)
        # the group keeps the subcommand and what follows it unparsed (click >= 8.2 names the
        # first part _protected_args)
        pending = [*getattr(ctx, "_protected_args", getattr(ctx, "protected_args", [])), *ctx.args]
        assert pending, f"{command}: no subcommand"
        sub_name, sub, rest = cmd.resolve_command(ctx, pending)
        assert sub is not None, f"{command}: no subcommand {sub_name!r}"
        name = f"{name} {sub_name}"
        cmd = sub
        ctx = cmd.make_context(name, list(rest), parent=ctx, resilient_parsing=False)


def test_parse_rejects_what_the_cli_rejects() -> None:
    parse("attnspec jl-check --n 64 --eps 0.1")
    with pytest.raises(_exc.UsageError):
        parse("attnspec jl-check --no-such-option 1")
    with pytest.raises(_exc.BadParameter):
        parse("attnspec jl-check --n abc")
    with pytest.raises((_exc.UsageError, AssertionError)):
        parse("attnspec no-such-command")


def test_report_has_no_absolute_path_of_the_machine_that_made_it() -> None:
    hits = sorted(set(ABSOLUTE.findall(report_text())))
    assert not hits, f"REPORT.md names machine paths: {hits[:5]}"


def test_every_command_in_the_report_parses() -> None:
    commands = attnspec_commands(report_text())
    assert len(commands) >= 5  # every experiment's appendix page shows its command
    for command in commands:
        try:
            parse(command)
        except _exc.ClickException as e:
            pytest.fail(f"REPORT.md: `{command}` does not parse: {e.format_message()}")


def test_committed_figures_were_drawn_by_todays_plotting_code() -> None:
    record = REPO / "reports" / "figures" / DRAWN_BY_FILE
    assert record.is_file(), "reports/figures has no DRAWN_BY.json: rerun `attnspec report`"
    drawn_by = json.loads(record.read_text())["plotting_code_sha256"]
    assert drawn_by == plotting_code_digest(), (
        "the committed figures are older than the plotting code: rerun `attnspec report`"
    )


def test_report_opens_with_the_summary() -> None:
    text = REPORT.read_text()
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    assert headings and headings[0] == "Summary"
    summary = text.split("## Summary", 1)[1].split("\n## ", 1)[0]
    assert len(summary.strip().splitlines()) <= 20  # a researcher's two minutes
    assert "n^" in summary and "%" in summary  # the growth exponent and the mass share, computed


def test_the_summary_gives_each_models_document_count_in_the_order_it_names_the_models() -> None:
    import tomllib

    first = next(line for line in REPORT.read_text(encoding="utf-8").splitlines() if line.startswith("1. "))
    counts = [
        str(tomllib.loads((REPO / "experiments" / f"spectrum-{m}-imdb.toml").read_text())["args"]["num-sentences"])
        for m in ("minilm", "mpnet")
    ]
    assert first.index("MiniLM-L6") < first.index("MPNet-base")
    assert f"95% CIs over {counts[0]} and {counts[1]} documents" in first
