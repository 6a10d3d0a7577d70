"""Entry point of the ``attnspec`` console script.

Each command group lives in its own module and registers itself on ``app``.
"""

from __future__ import annotations

import sys

import typer

from attnspec.cli._common import OneLineErrorsGroup

app = typer.Typer(
    name="attnspec",
    cls=OneLineErrorsGroup,  # one-line `error:` for parse errors too (exit codes: _common.py, docs/conventions.md)
    help="Spectral analysis of self-attention, and numerical checks of the theorems about it.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain click help: rich markup would eat bracketed text such as "[m, M]" or "[1, L]"
    # in help strings (and loading rich's formatter costs start-up time).
    rich_markup_mode=None,
    context_settings={"max_content_width": 120},
)


def _version(value: bool) -> None:
    if value:
        from attnspec import __version__

        typer.echo(f"attnspec {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """attnspec: how low-rank is attention, and do the theorems about it hold?"""


# Command groups. Each module exposes `register(app)`.
from attnspec.cli import check as _check  # noqa: E402
from attnspec.cli import claims as _claims  # noqa: E402
from attnspec.cli import compare as _compare  # noqa: E402
from attnspec.cli import expressivity as _expressivity  # noqa: E402
from attnspec.cli import jl as _jl  # noqa: E402
from attnspec.cli import osa as _osa  # noqa: E402
from attnspec.cli import osa_train as _osa_train  # noqa: E402
from attnspec.cli import report as _report  # noqa: E402
from attnspec.cli import spectrum as _spectrum  # noqa: E402

_spectrum.register(app)
_expressivity.register(app)
_jl.register(app)
_osa.register(app)
_osa_train.register_train(app)
_report.register(app)
_compare.register(app)
_claims.register(app)
_check.register(app)


def _robust_streams() -> None:
    """Surroundings that cannot kill the command: a character the terminal's encoding lacks
    (``PYTHONIOENCODING=ascii``; attnspec prints ≥, ·, σ) is written escaped; a write past a
    file-size limit (``ulimit -f``) fails with EFBIG, reported in one line, instead of SIGXFSZ
    ending the process without a word; and MPLBACKEND is dropped, since the figures are files
    drawn with Agg whatever it says, while an unknown name there makes importing matplotlib fail."""
    import os
    import signal

    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    if hasattr(signal, "SIGXFSZ"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    os.environ.pop("MPLBACKEND", None)


def main() -> None:
    _robust_streams()
    # `attnspec claims [--paper P] [--json]` prints static text: answered without typer's
    # runtime parameter layer (which imports pydantic); anything else (--help, a typo) goes
    # through typer as usual.
    try:
        code = _claims.fast_path(sys.argv[1:])
        if code is not None:
            sys.exit(code)
        app()
    except OSError as e:
        _stdout_failed(e)
    finally:
        # The command is done: spare the interpreter's last garbage collection over every
        # object the run left (torch's alone are ~0.35 s of a checking command's wall time).
        # Objects are still freed by reference counting; only the cycle search is skipped.
        import gc
        import signal

        gc.freeze()
        # Its exit code is decided too: a terminal's Ctrl-C reaches a forked worker first and
        # this process a moment later, and CPython restores the default handlers while it shuts
        # down, so a late SIGINT or SIGTERM would turn exit 130 (or 0) into a death by signal.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)


def _stdout_failed(e: OSError) -> None:
    """A write to stdout that failed (``> /dev/full``, a quota, a file-size limit): one line
    on stderr and exit 1, as for every other error. attnspec's own files are written through
    attnspec.storage.writer, which turns these errors into ResultsError, so an OSError of these kinds
    that reaches here came from printing. Anything else is a bug and keeps its traceback."""
    import errno
    import os

    if e.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO):
        raise e
    from attnspec.cli._common import print_error

    # stdout is pointed at /dev/null: the interpreter's last flush at exit would fail again
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    print_error(f"cannot write the output to stdout: {e.strerror or e}")
    sys.exit(1)


if __name__ == "__main__":
    main()
