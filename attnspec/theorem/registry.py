"""The open registries: papers and checking commands, built-in or installed, through one API.

A *paper* (:class:`Paper`) is registered once, with its one citation; a *checking command*
(:class:`Command`) names its battery (an object or module with ``config_from_options`` and
``run``, :mod:`attnspec.battery`), its declared options, its run arguments, its plotter, the
module that registers its claims and its one-line summary. Every consumer reads
these registries: ``attnspec claims`` and the claim registry (papers, claim modules),
:func:`attnspec.battery.run_battery` (batteries, plotters), the options of the CLI and of the
Python API, ``attnspec check`` and the report's experiments (commands, citations).

Where entries come from, in order, the first time any registry is read (:func:`load`):

1. the built-in papers and commands, each paper package registering its own
   (:data:`BUILTIN`: the same calls a plug-in makes);
2. every installed distribution's entry point in the group ``attnspec.theorems``
   (:data:`ENTRY_POINT_GROUP`): ``favor = "attnspec_favor"`` in a plug-in's
   ``[project.entry-points."attnspec.theorems"]`` names a module that registers its paper and
   its check when imported (pytest's ``pytest11`` and Hypothesis' entry points work so).

A name registered twice with different content is an error naming both; a plug-in that fails to
import is an error naming its entry point (it is never skipped silently).

This module imports nothing heavy: the registries hold names and small declarations, and a
battery or a plotter given as ``"module"`` or ``"module:function"`` is imported on first use.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

#: The entry-point group an installed plug-in registers its module under.
ENTRY_POINT_GROUP = "attnspec.theorems"

#: The built-in registrations, imported first: each module registers its paper and commands.
BUILTIN: tuple[str, ...] = (
    "attnspec.theory.linformer.registration",
    "attnspec.theory.expressivity.registration",
    "attnspec.theory.osa.registration",
)

_KEY = re.compile(r"^[a-z][a-z0-9_]*$")
_COMMAND = re.compile(r"^[a-z][a-z0-9\-]*$")


@dataclass(frozen=True)
class Paper:
    """A paper whose claims attnspec checks, cited one way everywhere.

    Parameters
    ----------
    key : str
        The short key every claim id of the paper starts with (``"linformer"``, ``"performer"``).
    authors : str
        The authors as cited (``"Wang, Li, Khabsa, Fang & Ma"``).
    title : str
        The title.
    year : int, optional
        The year of the version checked.
    where : str
        Venue or archive (``"arXiv 2006.04768"``, ``"ICLR 2021"``).
    notes : str
        When the claims are read from notes on the paper rather than the paper itself: the notes
        (a path under shared/papers, or a reference), quoted beside the citation.
    """

    key: str
    authors: str
    title: str
    year: int | None = None
    where: str = ""
    notes: str = ""

    def __post_init__(self) -> None:
        if not _KEY.match(self.key):
            raise ValueError(f"paper key {self.key!r} must be one lower-case word (letters, digits, _)")

    def citation(self, *, markdown: bool = False) -> str:
        """The one citation of the paper: ``Authors (year), Title (where; notes)``.

        Parameters
        ----------
        markdown : bool
            Set the title in italics (the report).

        Returns
        -------
        str
        """
        title = f"*{self.title}*" if markdown else self.title
        year = f" ({self.year})" if self.year else ""
        extra = "; ".join(x for x in (self.where, f"read from {self.notes}" if self.notes else "") if x)
        return f"{self.authors}{year}, {title}" + (f" ({extra})" if extra else "")


@dataclass(frozen=True)
class Command:
    """A checking command: ``attnspec <name>``, ``attnspec check <name>`` and ``attnspec.check(name)``.

    Parameters
    ----------
    name : str
        The command (``"jl-check"``, ``"favor"``): lower case, digits and dashes.
    paper : str
        The key of the paper it checks (registered with :func:`register_paper`).
    battery : object or str
        An object with ``config_from_options(options)`` and ``run(config, *, progress=None)``
        (:mod:`attnspec.battery`), or the name of a module that has them.
    options : tuple of Option
        Its declared options (:class:`attnspec.options.declaration.Option`), in ``--help`` order.
    run_arguments : tuple of str
        Which of ``out, resume, csv, plots`` (:data:`attnspec.options.checks.RUN_ARGUMENTS`) it takes.
    plotter : callable or str, optional
        Draws the figures of a saved result folder and returns their paths; ``"module:function"``
        is imported on first use. None: the command draws no figure.
    claims_module : str, optional
        A module that registers the command's claims when imported (None: the battery registers them).
    summary : str
        One line for ``--help`` and the API's docstring.
    code_package : str, optional
        The package whose source decides whether a saved result is stale (default: the battery's).
    code_files : tuple of str
        Glob patterns of the modules of that package the command runs (default: all of them); a
        command that shares its package with another names its own.
    verdicts : bool
        The command gives verdict rows. False for a study that only measures (a training run):
        its saved results are then keyed on the code its numbers come from (its own modules, the
        statistics), not on the verdict classifier, the battery wiring or the option declarations.
    origin : str, optional
        The module that registered the command (set by :func:`register_command` when not given):
        ``attnspec check MODULE`` finds a command by it.
    """

    name: str
    paper: str
    battery: Any
    options: tuple[Any, ...]
    run_arguments: tuple[str, ...] = ("out", "csv", "plots")
    plotter: Callable[..., Any] | str | None = None
    claims_module: str | None = None
    summary: str = ""
    code_package: str | None = None
    code_files: tuple[str, ...] = ("*.py",)
    verdicts: bool = True
    origin: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not _COMMAND.match(self.name):
            raise ValueError(f"command name {self.name!r} must be lower case, digits and dashes, e.g. 'favor'")

    def battery_object(self) -> Any:
        """The battery: the object given, or the module named.

        Returns
        -------
        object
            Has ``config_from_options`` and ``run``.
        """
        return importlib.import_module(self.battery) if isinstance(self.battery, str) else self.battery

    def plot_function(self) -> Callable[..., Any] | None:
        """The plotter, imported if given by name; None when the command draws no figure.

        Returns
        -------
        callable or None
        """
        if self.plotter is None or callable(self.plotter):
            return self.plotter
        module, _, name = str(self.plotter).partition(":")
        return getattr(importlib.import_module(module), name)


_PAPERS: dict[str, Paper] = {}
_COMMANDS: dict[str, Command] = {}
#: The stages loaded and loading (``builtin``, ``plugins``): a registration that reads a
#: registry while its own stage loads does not start that stage again.
_STATE: dict[str, set[str]] = {"loaded": set(), "loading": set()}


def register_paper(paper: Paper) -> Paper:
    """Register a paper; the same paper again is accepted, another under its key is an error.

    Parameters
    ----------
    paper : Paper

    Returns
    -------
    Paper
        ``paper``, for use as ``PAPER = register_paper(Paper(...))``.
    """
    old = _PAPERS.get(paper.key)
    if old is not None and old != paper:
        raise ValueError(f"paper key {paper.key!r} is registered twice: {old.citation()!r} and {paper.citation()!r}")
    _PAPERS[paper.key] = paper
    return paper


def register_command(command: Command) -> Command:
    """Register a checking command; its paper must be registered first.

    Parameters
    ----------
    command : Command

    Returns
    -------
    Command
        ``command``.
    """
    if command.paper not in _PAPERS:
        raise ValueError(
            f"command {command.name!r} checks paper {command.paper!r}, which is not registered: "
            "call register_paper first"
        )
    if command.origin is None:
        import sys
        from dataclasses import replace

        command = replace(command, origin=sys._getframe(1).f_globals.get("__name__"))
    old = _COMMANDS.get(command.name)
    if old is not None and old != command:
        raise ValueError(f"command {command.name!r} is registered twice (papers {old.paper!r} and {command.paper!r})")
    _COMMANDS[command.name] = command
    return command


def load(*, plugins: bool = True) -> None:
    """Import the built-in registrations, then (with ``plugins``) every installed plug-in; each once.

    Parameters
    ----------
    plugins : bool
        Also load the entry points of ``attnspec.theorems``; False: the built-ins alone (a
        built-in command's options are read without importing any plug-in).

    Raises
    ------
    ImportError
        A plug-in's module failed to import (the message names its entry point).
    """
    for stage in ("builtin", "plugins") if plugins else ("builtin",):
        if stage in _STATE["loaded"] or stage in _STATE["loading"]:
            continue
        _STATE["loading"].add(stage)
        try:
            if stage == "builtin":
                for module in BUILTIN:
                    importlib.import_module(module)
            else:
                _load_plugins()
            _STATE["loaded"].add(stage)
        finally:
            _STATE["loading"].discard(stage)


def _load_plugins() -> None:
    for ep in _entry_points():
        try:
            ep.load()
        except Exception as e:  # a broken plug-in is named, never skipped
            raise ImportError(f"attnspec plug-in {ep.name!r} ({ep.value}) failed to load: {e}") from e


def _entry_points() -> list[Any]:
    from importlib.metadata import entry_points

    return sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name)


def papers() -> dict[str, Paper]:
    """Every registered paper by key, in registration order (built-ins first).

    Returns
    -------
    dict of str to Paper
    """
    load()
    return dict(_PAPERS)


def commands() -> dict[str, Command]:
    """Every registered checking command by name, in registration order (built-ins first).

    Returns
    -------
    dict of str to Command
    """
    load()
    return dict(_COMMANDS)


def command(name: str) -> Command:
    """The checking command called ``name``; InputError naming the known ones otherwise.

    Parameters
    ----------
    name : str
        A command name (``"jl-check"``, ``"favor"``).

    Returns
    -------
    Command
    """
    load(plugins=False)
    found = _COMMANDS.get(name) if isinstance(name, str) else None
    if found is None and isinstance(name, str):
        found = commands().get(name)  # a plug-in's: load the installed ones
    if found is None:
        from attnspec.errors import InputError

        raise InputError(f"no checking command {name!r}; known: {', '.join(sorted(_COMMANDS))}")
    return found


def resolve(name_or_module: str) -> str:
    """The command a user names: a registered command's name, or a module that registers one
    when imported (a check not installed as a plug-in: ``attnspec check my_checks``).

    Parameters
    ----------
    name_or_module : str
        ``"favor"``, ``"jl-check"``, or an importable module such as ``"my_checks"``.

    Returns
    -------
    str
        The command's name.

    Raises
    ------
    InputError
        Neither a command nor a module that registers exactly one (the message lists the known ones).
    """
    from attnspec.errors import InputError

    if not isinstance(name_or_module, str) or not name_or_module:
        raise InputError(f"a check is named by a command or a module, got {name_or_module!r}")
    if name_or_module in commands():
        return name_or_module
    before = set(_COMMANDS)
    try:
        module = importlib.import_module(name_or_module)
    except ImportError as e:
        if getattr(e, "name", None) not in (name_or_module, name_or_module.split(".")[0]):
            raise  # the module exists and failed inside: its own error, with its traceback
        known = ", ".join(sorted(_COMMANDS))
        raise InputError(f"no checking command or module {name_or_module!r}; known commands: {known}") from None
    mine = [n for n, c in _COMMANDS.items() if n not in before or _module_of(c) == module.__name__]
    if len(mine) != 1:
        found = ", ".join(mine) or "none"
        raise InputError(f"module {name_or_module!r} must register exactly one checking command, found: {found}")
    return mine[0]


def _module_of(command: Command) -> str | None:
    return command.battery if isinstance(command.battery, str) else command.origin


class RegistryView(Mapping[str, Any]):
    """A read-only mapping over a registry, read afresh at each use (so a plug-in loaded later
    is seen): the module-level names ``PAPERS``, ``BATTERIES``, ``OPTIONS`` ... are such views.

    Parameters
    ----------
    read : callable
        Returns the current ``dict`` the view shows.
    """

    def __init__(self, read: Callable[[], dict[str, Any]]) -> None:
        self._read = read

    def __getitem__(self, key: str) -> Any:
        return self._read()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._read())

    def __len__(self) -> int:
        return len(self._read())

    def __repr__(self) -> str:
        return f"RegistryView({self._read()!r})"
