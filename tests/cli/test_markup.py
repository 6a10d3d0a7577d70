"""Messages print as written: brackets in paths, install hints and intervals are not rich markup."""

from __future__ import annotations

from attnspec.cli._common import err_console, out_console
from attnspec.verdicts.classify import VerdictRow, print_verdict_table


def test_console_messages_keep_their_brackets(capsys):
    out_console.print("pip install 'attnspec[decoders]' and results in runs/[bold]/a", highlight=False)
    err_console.print("interval [0.99, 1.00] of [gaussian]", highlight=False)
    captured = capsys.readouterr()
    assert "pip install 'attnspec[decoders]' and results in runs/[bold]/a" in captured.out
    assert "interval [0.99, 1.00] of [gaussian]" in captured.err


def test_verdict_table_keeps_brackets_on_a_console_without_markup(capsys):
    from rich.console import Console

    row = VerdictRow(
        claim="linformer.thm1.eq3",
        reading="[gaussian]",
        verdict="holds",
        evidence="CI [0.1, 0.2] <= 0.5",
        params={"n": 64},
    )
    print_verdict_table([row], console=Console(markup=False, width=200))
    text = capsys.readouterr().out
    assert "[gaussian]" in text and "CI [0.1, 0.2] <= 0.5" in text and "\\[" not in text


def test_console_width_follows_columns_at_each_print(monkeypatch):
    import importlib

    import attnspec.cli._common as common

    monkeypatch.setenv("COLUMNS", "57")  # the consoles are made while COLUMNS says 57 ...
    fresh = importlib.reload(common)
    try:
        assert fresh.out_console.width == 57
        monkeypatch.setenv("COLUMNS", "143")  # ... and a later command runs at 143
        assert fresh.out_console.width == 143 and fresh.err_console.width == 143
    finally:
        monkeypatch.delenv("COLUMNS")
        importlib.reload(common)
