"""What every command shares: one-line user errors, the stderr console, common options.

The error contract of the whole CLI (docs/conventions.md, "Errors and exit codes"): every failure is ONE line
``error: ...`` on stderr, and the exit code says which kind it was:

* 0 — success;
* 1 — a well-formed request that cannot be done: a value outside what is allowed, missing
  data, an unusable or busy ``--out``, a checkpoint that fails verification;
* 2 — usage error: the command line cannot be parsed (unknown option, missing argument, a
  value that is not of the option's type or outside its declared range);
* 130 — interrupted (Ctrl-C or SIGTERM); whatever was saved is kept and resumable.
"""

from __future__ import annotations

import errno
import os
import re
import sys
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

try:  # typer >= 0.24 vendors click as typer._click; older releases use click itself
    from typer._click import exceptions as _cx
except ImportError:  # pragma: no cover - depends on the installed typer
    from click import exceptions as _cx
from rich.console import Console

from attnspec.errors import AttnspecError


# Results and tables go to stdout; progress, warnings and errors to stderr, so that
# `--json` output can be piped. Markup is off: messages carry paths, install commands
# ("pip install 'attnspec[decoders]'") and intervals whose brackets must print as written;
# styled text is built with rich.text.Text.
class _EscapingConsole(Console):
    """A rich Console whose plain-text arguments have their non-printable characters escaped
    (:func:`attnspec.errors.printable`): run folders, paths and names printed by a command
    are shown, never obeyed as terminal control sequences. Tables escape their own cells
    (:func:`attnspec.errors.printable` at the call)."""

    def print(self, *objects: Any, **kwargs: Any) -> None:  # noqa: A003 - rich's name
        from attnspec.errors import printable

        super().print(*(printable(o) if isinstance(o, str) else o for o in objects), **kwargs)


out_console = _EscapingConsole(markup=False, emoji=False)
err_console = _EscapingConsole(stderr=True, markup=False, emoji=False)
# rich fixes a console's width from COLUMNS when the console is made; these two live as long
# as the process (a notebook, a test session running many commands), so their width follows
# COLUMNS and the terminal at each print instead.
out_console.width = err_console.width = None  # type: ignore[assignment]


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn attnspec's user errors into ``error: <message>`` and exit code 1 (no traceback); an
    :class:`~attnspec.errors.OptionError` (a value not of its option's kind) exits 2, a usage error."""
    from attnspec.errors import OptionError

    try:
        yield
    except AttnspecError as e:
        print_error(str(e))
        raise typer.Exit(code=EXIT_USAGE if isinstance(e, OptionError) else EXIT_USER_ERROR) from None


EXIT_OK, EXIT_USER_ERROR, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def interrupted_line(e: KeyboardInterrupt, out: Path | None) -> str:
    """The one line printed on Ctrl-C or SIGTERM by a command that keeps a partial result
    (osa-train, jl-check): what was kept in ``out`` and how to continue.

    ``e`` may carry ``done``, ``total`` and ``unit`` (finished and all units of work, and
    what they are: runs by default); the partial
    ``meta.json`` names its unit (``unit``, default runs) and lists ``runs_done``.
    """
    done, total = getattr(e, "done", None), getattr(e, "total", None)
    counted = f" after {done} of {total} {getattr(e, 'unit', 'runs')}" if done is not None else ""
    if out is None:
        return f"interrupted{counted}; nothing saved (no --out)"
    from attnspec.storage.results import META_FILE, read_meta

    meta = read_meta(out) if (Path(out) / META_FILE).is_file() else {}
    if meta.get("status") == "partial":
        return (
            f"interrupted; {len(meta.get('runs_done', []))} of {meta.get('runs_total')} "
            f"{meta.get('unit', 'runs')} kept in {out} (meta.json status: partial); continue with the same "
            f"command and --resume"
        )
    if meta:
        return f"interrupted{counted}; {out} holds a complete result"
    return f"interrupted{counted}; nothing saved in {out}"


def print_error(message: str) -> None:
    """Print ``error: <message>`` on stderr as exactly one line (newlines folded into spaces)."""
    from attnspec.errors import printable

    one_line = re.sub(r"\s*\n\s*", " ", str(message).strip())
    # names and paths in a message are the user's: a control sequence in one is shown, not obeyed
    print(f"error: {printable(one_line)}", file=sys.stderr, flush=True)


def too_long_a_name(path: object) -> str:
    """The one-line refusal of a path that the file system cannot hold (``ENAMETOOLONG``).

    Parameters
    ----------
    path : object
        The path as the failed call saw it.

    Returns
    -------
    str
        The message: the path cut to its start, and the limits.
    """
    text = os.fsdecode(path) if isinstance(path, (str, bytes, os.PathLike)) else str(path)
    shown = text if len(text) <= 60 else text[:60] + "…"
    return (
        f"the path {shown!r} ({len(os.fsencode(text))} bytes) is too long for the file system: "
        "at most 255 bytes a name and 4096 in all"
    )


def _takes_a_path(param: Any) -> bool:
    """Whether a typer parameter is declared as a path (or a list of paths)."""
    annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    return "Path" in repr(annotation)


def empty_path_argument(group: Any, args: Sequence[str]) -> str | None:
    """The one-line refusal of an empty string given where a path is taken (``--out ''``, a
    run ``''``), else None: a path reads ``''`` as the current folder, so a result would be
    written into, or read from, wherever the command was started.

    Parameters
    ----------
    group : click group
        The root command group.
    args : sequence of str
        The command line after the program name.

    Returns
    -------
    str or None
        The message.
    """
    cmd, rest = group, list(args)
    while rest and rest[0] in getattr(cmd, "commands", {}):
        cmd = cmd.commands[rest.pop(0)]
    params = getattr(cmd, "params", [])
    options = {o: p for p in params for o in (*p.opts, *getattr(p, "secondary_opts", ())) if o.startswith("-")}
    positional = [p for p in params if not any(o.startswith("-") for o in p.opts)]
    takes_value = None  # the option whose value the next word is
    for word in rest:
        flag, _, inline = word.partition("=")
        if takes_value is None and word.startswith("--") and "=" in word and not inline and flag in options:
            name, param = flag, options[flag]  # --out=
        elif word != "":
            param = options.get(word)
            takes_value = word if param is not None and not getattr(param, "is_flag", False) else None
            continue
        elif takes_value is not None:
            name, param = takes_value, options[takes_value]
        else:
            param = next(iter(positional), None)
            name = param.name.upper() if param is not None else ""
        takes_value = None
        if param is not None and _takes_a_path(param):
            return f"{name} is an empty string; give a path (. for the current folder)"
    return None


class OneLineErrorsGroup(TyperGroup):
    """The root command group: click's usage errors become one ``error:`` line (exit 2).

    Typer draws parse errors as a boxed, multi-line panel; running click in
    non-standalone mode hands us the exception instead, so the whole CLI (and
    ``typer.testing.CliRunner``, which calls this ``main``) follows one contract.
    """

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        from attnspec.runtime.signals import sigterm_as_interrupt

        empty = empty_path_argument(self, sys.argv[1:] if args is None else list(args))
        if empty is not None:
            print_error(empty)
            if standalone_mode:
                sys.exit(EXIT_USAGE)
            return EXIT_USAGE
        try:
            # SIGTERM (timeout, Slurm, docker stop) takes Ctrl-C's path: exit 130, partial
            # results kept; output directories claimed by the command are released after it.
            with sigterm_as_interrupt(), _claimed_dirs:
                rv = super().main(
                    args=args, prog_name=prog_name, complete_var=complete_var, standalone_mode=False, **extra
                )
        except _cx.NoArgsIsHelpError:
            rv = EXIT_USAGE  # the help text has been printed already
        except _cx.UsageError as e:
            hint = f" (see '{e.ctx.command_path} --help')" if e.ctx is not None else ""
            print_error(e.format_message() + hint)
            rv = EXIT_USAGE
        except _cx.ClickException as e:  # e.g. FileError
            print_error(e.format_message())
            rv = e.exit_code
        except typer.Abort:  # EOF at a prompt
            print_error("aborted")
            rv = EXIT_USER_ERROR
        except (
            AttnspecError
        ) as e:  # raised while a claimed --out is released (a full disk met by a library's own write)
            print_error(str(e))
            rv = EXIT_USER_ERROR
        except OSError as e:
            # any name the user gives may be asked whether it is a file (--model, --data, a run);
            # one too long for the file system is that user's value, not a fault of attnspec
            if e.errno != errno.ENAMETOOLONG:
                raise
            print_error(too_long_a_name(e.filename))
            rv = EXIT_USER_ERROR
        code = rv if isinstance(rv, int) and not isinstance(rv, bool) else EXIT_OK
        if standalone_mode:
            sys.exit(code)
        return code


#: Output directories claimed (checked and locked) by the running command; released when
#: the command ends (OneLineErrorsGroup.main closes it).
_claimed_dirs = ExitStack()


def claim_out_dir(
    out: Path | None, command: str, *, option: str = "--out", kind: str | None = None, nests_in: tuple[str, ...] = ()
) -> Path | None:
    """Check that ``out`` can hold results and lock it for the rest of the command.

    Call before any computation (inside :func:`user_errors`): an unusable directory (under
    a file, in /proc, read-only, full) or one another attnspec process writes to is a
    one-line error now, not a traceback after the work; with ``kind``, so is one that
    holds or lies inside another kind of result (:func:`attnspec.storage.results.check_out_kind`).
    A directory this creates and leaves empty is removed again.
    """
    if out is None:
        return None
    from attnspec.storage.results import writing_to

    return _claimed_dirs.enter_context(writing_to(Path(out), command, option=option, kind=kind, nests_in=nests_in))


@contextmanager
def whole_output() -> Iterator[None]:
    """Write a result's tables, meta.json and figures as one unit: Ctrl-C or SIGTERM during
    the block is held until it ends (then the command exits 130 with the result complete)."""
    from attnspec.runtime.signals import deferred_interrupts

    with deferred_interrupts():
        yield


SeedOpt = Annotated[
    int, typer.Option("--seed", min=0, max=2**63 - 1, help="Seed of every random draw; recorded with the results.")
]
JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print the verdict rows as JSON on stdout (and nothing else there).")
]
