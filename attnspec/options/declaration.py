"""One declaration per option, and everything read off it.

An :class:`Option` states an option once: its name, its kind of value, its default, its
help text, and (optionally) its flag, hidden aliases and the bounds or choices it allows.
From a command's tuple of options this module derives

* the typer options of its CLI command (:func:`typer_command`), flags and help included;
* the type validation shared by the command line, the Python API and experiment TOMLs
  (:func:`check_types`, :func:`check_names`, :func:`check_bounds`), under the one API
  type rule: an integer is a ``numbers.Integral`` (never a bool), a boolean only a
  ``bool``, a list any sequence or array, a seed ``0 <= seed < 2**63``;
* the Python API's keyword-only signature and the numpydoc ``Parameters`` section of its
  docstring (:func:`signature`, :func:`numpydoc_parameters`).

An option may belong to one surface only (``only="cli"``: a flag the Python API has no use
for, such as ``--quiet``; ``only="api"``: an argument the command line cannot take, such as
a model object), and may be read differently on each: the command line reads text
(``cli_kind``), the API may default, document and type it otherwise (``api_default``,
``api_help``, ``api_type``) where it takes more than text.

The declarations of the checking commands are in :mod:`attnspec.options.checks`, those of
the spectrum study in :mod:`attnspec.options.spectrum`. This
module imports neither numpy nor typer at import time: ``attnspec --help`` stays light.
"""

from __future__ import annotations

import inspect
import numbers
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The kinds of value an option may take, in words for the messages.
KIND_WORDS: dict[str, str] = {
    "int": "integer",
    "float": "float",
    "str": "string",
    "bool": "boolean",
    "path": "path",
    "seed": "integer",
    "floats": "list of floats",
    "strs": "list of strings",
    "ints": "list of integers",
    "object": "object",
}
#: kind → (the type the command line parses it as, the type the Python API documents).
_TYPES: dict[str, tuple[Any, Any]] = {
    "int": (int, int),
    "float": (float, float),
    "str": (str, str),
    "bool": (bool, bool),
    "path": (Path, str | Path),
    "seed": (int, int),
    "floats": (list[float], float | Sequence[float]),
    "strs": (list[str], str | Sequence[str]),
    "ints": (list[int], Sequence[int]),
    "object": (Any, Any),
}
#: kind → its numpydoc type.
_DOC_TYPES: dict[str, str] = {
    "int": "int",
    "float": "float",
    "str": "str",
    "bool": "bool",
    "path": "str or Path",
    "seed": "int",
    "floats": "float or sequence of float",
    "strs": "str or sequence of str",
    "ints": "sequence of int",
    "object": "object",
}
_LISTS = ("floats", "strs", "ints")
_TRUE, _FALSE = ("1", "true", "t", "yes", "y", "on"), ("0", "false", "f", "no", "n", "off")
#: Seeds are what NumPy's and torch's generators take as one 64-bit word.
SEED_MAX = 2**63 - 1
#: The surfaces an option may be limited to (:attr:`Option.only`).
SURFACES = ("cli", "api")
#: ``api_default`` of an option whose API default is its command line's.
SAME: Any = type("Same", (), {"__repr__": lambda self: "SAME"})()


@dataclass(frozen=True)
class Option:
    """One option of a command, declared once.

    Parameters
    ----------
    name : str
        The Python name (``trials_other``): the API's keyword, the options mapping's key and,
        dashes for underscores, the TOML key and the flag (``--trials-other``).
    kind : str
        A key of :data:`KIND_WORDS`; ``seed`` is an integer in ``[0, 2**63)``.
    default : object
        The default of the command line, the API and an experiment TOML alike.
    help : str
        The ``--help`` text; the API's docstring reads it with flags as names.
    also : tuple of str
        Further kinds the value may take (jl-check's ``k``: text or a list of integers).
    nullable : bool
        ``None`` is allowed (the option left unset).
    flag : str, optional
        The flag(s) when they are not ``option_flag(name)``: ``"--L"``, ``"--timing/--no-timing"``.
    aliases : tuple of str
        Other names taken in an options mapping or TOML and as hidden flags.
    low, high : float, optional
        Bounds checked before the computation (:func:`check_bounds`); ``low_open`` and
        ``high_open`` exclude them.
    choices : tuple of str, optional
        The values allowed.
    only : {"cli", "api"}, optional
        The one surface that has the option; default both.
    metavar : str, optional
        The value's name in ``--help`` (``N|all``).
    short : str, optional
        A one-letter flag beside the long one (``-q``).
    cli_kind : str, optional
        The kind the command line reads, when it reads text that the API takes as ``kind``
        (``--seq-len 64,128`` against ``seq_len=[64, 128]``).
    api_default : object
        The API's default when it is not the command line's (:data:`SAME`);
        ``inspect.Parameter.empty`` makes the argument required.
    api_help : str, optional
        The docstring's text when the API reads the option otherwise than ``--help`` says.
    api_type : str, optional
        The numpydoc type when the API takes more than ``kind`` (a model object); its
        annotation is then ``Any``.
    """

    name: str
    kind: str
    default: Any
    help: str
    also: tuple[str, ...] = ()
    nullable: bool = False
    flag: str | None = None
    aliases: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple[str, ...] | None = None
    only: str | None = None
    metavar: str | None = None
    short: str | None = None
    cli_kind: str | None = None
    api_default: Any = SAME
    api_help: str | None = None
    api_type: str | None = None

    def __post_init__(self) -> None:
        for kind in (self.kind, *self.also, *((self.cli_kind,) if self.cli_kind else ())):
            if kind not in KIND_WORDS:
                raise ValueError(f"option {self.name}: kind must be one of {', '.join(KIND_WORDS)}, got {kind!r}")
        if self.only is not None and self.only not in SURFACES:
            raise ValueError(
                f"option {self.name}: only must be one of {', '.join(SURFACES)} or None, got {self.only!r}"
            )
        if self.default is None and not self.nullable:
            raise ValueError(f"option {self.name}: a default of None needs nullable=True")

    @property
    def kinds(self) -> tuple[str | None, ...]:
        """The types of value accepted (a seed is an integer), ``None`` last when the option may
        be left unset."""
        return (*(("int" if k == "seed" else k) for k in (self.kind, *self.also)), *((None,) if self.nullable else ()))

    @property
    def flags(self) -> tuple[str, ...]:
        """The flags the command line declares (``"--timing/--no-timing"`` as one)."""
        return (self.flag or option_flag(self.name), *((self.short,) if self.short else ()))

    @property
    def label(self) -> str:
        """The flag a message names: ``--timing`` for ``--timing/--no-timing``."""
        return self.flags[0].split("/")[0]

    def annotation(self, *, api: bool) -> Any:
        """The parameter's type: what the command line parses (``api=False``) or what the
        Python API takes (every kind, ``None`` when nullable).

        Parameters
        ----------
        api : bool
            The Python API's type rather than the command line's.

        Returns
        -------
        type
            A type or a union of types (``Any`` where ``api_type`` is declared).
        """
        import functools
        import operator

        if api and self.api_type is not None:
            return Any
        kinds = (self.kind, *self.also) if api else (self.cli_kind or self.kind,)
        unset = self.nullable or (api and self.default_of("api") is None)
        types = [_TYPES[k][1 if api else 0] for k in kinds] + ([type(None)] if unset else [])
        return functools.reduce(operator.or_, types) if len(types) > 1 else types[0]

    def doc_type(self) -> str:
        """The numpydoc type of the API's parameter.

        Returns
        -------
        str
            ``api_type`` when declared, else the kinds in words: ``"str or sequence of int, optional"``.
        """
        if self.api_type is not None:
            return self.api_type
        words = " or ".join(dict.fromkeys(w for k in (self.kind, *self.also) for w in _DOC_TYPES[k].split(" or ")))
        return words + (", optional" if self.nullable or self.default_of("api") is None else "")

    def on(self, surface: str) -> bool:
        """Whether a surface has this option.

        Parameters
        ----------
        surface : {"cli", "api"}
            The command line or the Python API.

        Returns
        -------
        bool
            True unless the option belongs to the other surface only.
        """
        return self.only in (None, surface)

    def default_of(self, surface: str) -> Any:
        """The option's default on a surface.

        Parameters
        ----------
        surface : {"cli", "api"}
            The command line or the Python API.

        Returns
        -------
        object
            ``api_default`` on the API when declared, else ``default``.
        """
        return self.api_default if surface == "api" and self.api_default is not SAME else self.default


def option_flag(name: str) -> str:
    """The command-line flag of an option.

    Parameters
    ----------
    name : str
        The option's name (``trials_other``) or a TOML key.

    Returns
    -------
    str
        ``--trials-other``.
    """
    return "--" + name.replace("_", "-")


# ------------------------------------------------------------------------------ validation
def convert(kind: str, v: Any, text: bool = True) -> Any:
    """``v`` as ``kind``, or raise ValueError. With ``text``, a string is read as on the command
    line (``"64"`` for an integer, ``"yes"`` for a boolean); without it (the Python API), an
    integer is a ``numbers.Integral``, a float a ``numbers.Real`` and a boolean a ``bool``
    only: ``timing='no'`` is refused, not taken for true.

    Parameters
    ----------
    kind : str
        A key of :data:`KIND_WORDS`.
    v : object
        The value given.
    text : bool
        Read a string as the command line does.

    Returns
    -------
    object
        The value as ``kind`` (a list for the list kinds).

    Raises
    ------
    ValueError
        ``v`` is not of ``kind``.
    """
    import numpy as np  # here, not at import: `attnspec --help` loads no numpy

    is_bool = isinstance(v, (bool, np.bool_))
    if kind in ("int", "seed"):
        if isinstance(v, numbers.Integral) and not is_bool:
            return int(v)
        if isinstance(v, str) and text:
            return int(v.strip())
    elif kind == "float":
        if isinstance(v, numbers.Real) and not is_bool:
            return float(v)
        if isinstance(v, str) and text:
            return float(v.strip())
    elif kind == "bool":
        if is_bool:
            return bool(v)
        if isinstance(v, str) and text and v.strip().lower() in _TRUE + _FALSE:
            return v.strip().lower() in _TRUE
    elif kind == "str":
        if isinstance(v, str):
            return v
    elif kind == "path":
        if isinstance(v, (str, os.PathLike)):
            return v
    elif kind in _LISTS:
        from attnspec.errors import InputError, as_list

        if isinstance(v, (str, bytes, numbers.Number)):
            items = [v]
        else:
            try:
                items = as_list("", v)  # any sequence or array
            except InputError:
                raise ValueError(kind) from None
        return [convert(kind[:-1], x, text) for x in items]
    raise ValueError(kind)


def by_name(options: Iterable[Option]) -> dict[str, Option]:
    """The options keyed by name.

    Parameters
    ----------
    options : iterable of Option
        The declarations.

    Returns
    -------
    dict of str to Option
        Name → declaration, in the given order.
    """
    return {o.name: o for o in options}


def check_names(
    options: Sequence[Option], values: Mapping[str, Any], *, owner: str, also: Sequence[str] = ()
) -> dict[str, Any]:
    """``values`` keyed by option name: a TOML key's dashes become underscores, an alias its
    option's name; an unknown name is one :class:`~attnspec.errors.InputError` naming it and
    listing the names allowed (an :class:`~attnspec.errors.OptionError`: exit code 2, as an
    unknown flag on the command line), e.g. ``jl_check() has no option 'nn'; its options: n, eps, ...``.
    ``also``: further names allowed that are no option (the API's ``progress``).

    Parameters
    ----------
    options : sequence of Option
        The declarations.
    values : mapping
        The values given, by name, TOML key or alias.
    owner : str
        What the message names (``jl_check()``, ``osa-check``).
    also : sequence of str
        Further names allowed.

    Returns
    -------
    dict
        The values keyed by option name.
    """
    from attnspec.errors import OptionError

    known = [*by_name(options), *also]
    alias = {a.replace("-", "_"): o.name for o in options for a in o.aliases}
    out: dict[str, Any] = {}
    for key, value in values.items():
        name = str(key).replace("-", "_")
        name = alias.get(name, name)
        if name not in known:
            raise OptionError(f"{owner} has no option {key!r}; its options: {', '.join(known)}")
        if name in out:
            raise OptionError(f"{owner}: option {name!r} given twice (as {key!r} and under another name)")
        out[name] = value
    return out


def check_types(
    options: Sequence[Option], values: Mapping[str, Any], *, lists: bool = True, text: bool = True
) -> dict[str, Any]:
    """``values`` with each checked (and text converted) against its option's kinds.

    Names no option declares are passed through. ``lists=False`` leaves list-valued options
    to their command (osa-check takes schedules as coefficient tuples too). ``text=False``
    (the Python API) takes numbers and booleans only as such, never as strings (:func:`convert`).

    Parameters
    ----------
    options : sequence of Option
        The declarations.
    values : mapping
        The values by option name.
    lists : bool
        Check the list-valued options too.
    text : bool
        Read strings as the command line does.

    Returns
    -------
    dict
        The values, each as its option's kind.

    Raises
    ------
    OptionError
        ``Invalid value for '--n': 'abc' is not a valid integer.``: a value that cannot be read
        as its option's kind (exit code 2, as the command line's parse errors).
    InputError
        A seed outside ``0 <= seed < 2**63`` (a value that cannot be done, exit code 1).
    """
    from attnspec.errors import OptionError, check_seed

    declared = by_name(options)
    out = dict(values)
    for name, value in values.items():
        opt = declared.get(name)
        if opt is None or (value is None and opt.nullable):
            continue
        if not lists and any(k in _LISTS for k in (opt.kind, *opt.also)):
            continue
        for kind in (opt.kind, *opt.also):
            try:
                out[name] = convert(kind, value, text)
                break
            except (TypeError, ValueError, OverflowError):
                continue
        else:
            word = " or ".join(KIND_WORDS[k] for k in (opt.kind, *opt.also))
            unset = " or None" if opt.nullable else ""
            raise OptionError(f"Invalid value for '{opt.label}': {value!r} is not a valid {word}{unset}.")
        if opt.kind == "seed":
            check_seed(opt.label, out[name])
    return out


def check_bounds(options: Sequence[Option], values: Mapping[str, Any], *, flags: bool = False) -> None:
    """Refuse a value outside its option's declared bounds or choices (one
    :class:`~attnspec.errors.InputError` naming the option, the range and the value).

    Parameters
    ----------
    options : sequence of Option
        The declarations.
    values : mapping
        The values by option name (each item of a list is checked).
    flags : bool
        Name the option by its flag (``--batch-size``) rather than its name (``batch_size``):
        the messages of a command whose every surface names its flags.
    """
    from attnspec.errors import check_choice, check_range

    for opt in options:
        value = values.get(opt.name)
        if value is None:
            continue
        name = opt.label if flags else opt.name
        items = value if isinstance(value, (list, tuple)) else [value]
        for item in items:
            if opt.choices is not None and isinstance(item, str):
                check_choice(name, item, opt.choices)
            if (opt.low is not None or opt.high is not None) and isinstance(item, numbers.Real):
                check_range(name, item, low=opt.low, high=opt.high, low_open=opt.low_open, high_open=opt.high_open)


def with_defaults(options: Sequence[Option], values: Mapping[str, Any]) -> dict[str, Any]:
    """Every option's value: the given ones, the declared default for the rest.

    Parameters
    ----------
    options : sequence of Option
        The declarations.
    values : mapping
        The values given, by option name.

    Returns
    -------
    dict
        Every option's value.
    """
    return {**{o.name: o.default for o in options}, **values}


# -------------------------------------------------------------------------------- the CLI
def _typer_parameter(opt: Option, name: str | None = None, *, hidden_flag: str | None = None) -> inspect.Parameter:
    import typer

    # a seed's range is checked by the library (check_types), with the message and exit code
    # the Python API and an experiment TOML give for the same value
    extra: dict[str, Any] = {}
    if opt.metavar is not None:
        extra["metavar"] = opt.metavar
    if hidden_flag is not None:
        info = typer.Option(hidden_flag, hidden=True, help=f"The same as {opt.label}.", **extra)
        return inspect.Parameter(
            name or opt.name,
            inspect.Parameter.KEYWORD_ONLY,
            default=None,
            annotation=_annotated(opt.annotation(api=False) | None, info),
        )
    info = typer.Option(*opt.flags, help=opt.help, **extra)
    return inspect.Parameter(
        name or opt.name,
        inspect.Parameter.KEYWORD_ONLY,
        default=opt.default,
        annotation=_annotated(opt.annotation(api=False), info),
    )


def _annotated(tp: Any, info: Any) -> Any:
    from typing import Annotated

    return Annotated[tp, info]


def _alias_key(opt: Option, i: int) -> str:
    return f"{opt.name}__alias{i}"


def typer_command(
    options: Sequence[Option], separate: Sequence[Option] = ()
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a command function whose parameter ``options`` receives the declared options'
    values as a dict: typer sees one option per declaration the command line has (flag, type,
    default, help; not those with ``only="api"``), put where ``options`` stands among the
    function's own (CLI-only) parameters, and each alias as a hidden flag. A value given
    under an alias counts as the option's; an alias given beside the option's own flag set
    to another value than its default is a usage error (exit code 2). A parameter ``flags``
    of the function, when it has one, receives the flag typed for each option given under
    an alias, so that a message names what the user typed. A parameter named like one of
    ``separate`` receives that option's value itself, its flag, type, default and help read
    off the declaration rather than off the function's annotation.

    Parameters
    ----------
    options : sequence of Option
        The command's declarations (those with ``only="api"`` are left out).
    separate : sequence of Option
        Declarations the function takes as parameters of their own (where its results go,
        not what it computes); each must name one of its parameters.

    Returns
    -------
    callable
        The decorator: it returns the command function typer registers.
    """
    options = [o for o in options if o.on("cli")]

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        import functools
        import typing

        own = {n: p for n, p in inspect.signature(func).parameters.items() if n != "flags"}
        own_declared = {o.name: o for o in separate if o.on("cli")}
        if set(own_declared) - set(own):
            raise TypeError(f"{func.__name__} has no parameter for {', '.join(sorted(set(own_declared) - set(own)))}")
        wants_flags = "flags" in inspect.signature(func).parameters
        hints = typing.get_type_hints(func, include_extras=True)
        declared = [_typer_parameter(o) for o in options]
        hidden = [
            _typer_parameter(o, _alias_key(o, i), hidden_flag=option_flag(a))
            for o in options
            for i, a in enumerate(o.aliases)
        ]
        params: list[inspect.Parameter] = []
        for p in own.values():
            if p.name == "options":
                params += declared + hidden
            elif p.name in own_declared:
                params.append(_typer_parameter(own_declared[p.name]))
            else:
                params.append(
                    p.replace(kind=inspect.Parameter.KEYWORD_ONLY, annotation=hints.get(p.name, p.annotation))
                )

        @functools.wraps(func)
        def command(**kwargs: Any) -> Any:
            values = {o.name: kwargs.pop(o.name) for o in options}
            typed: dict[str, str] = {}
            for o in options:
                for i, a in enumerate(o.aliases):
                    given = kwargs.pop(_alias_key(o, i))
                    if given is not None:
                        if values[o.name] != o.default:
                            import typer

                            raise typer.BadParameter(
                                f"{o.label} and {option_flag(a)} are the same option; give it once"
                            )
                        values[o.name], typed[o.name] = given, option_flag(a)
            return func(options=values, **kwargs, **({"flags": typed} if wants_flags else {}))

        command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        command.__annotations__ = {p.name: p.annotation for p in params}
        del command.__wrapped__  # typer reads the signature above, not the function's own
        return command

    return decorate


# ------------------------------------------------------------------------- the Python API
def signature(options: Sequence[Option], extra: Sequence[Option] = (), positional: int = 0) -> inspect.Signature:
    """The signature of an API function taking ``options`` then ``extra`` (those the API has),
    keyword-only but for the first ``positional`` ones.

    Parameters
    ----------
    options : sequence of Option
        The command's declarations.
    extra : sequence of Option
        Further arguments of the API function, after the options.
    positional : int
        How many leading parameters may also be given by position.

    Returns
    -------
    inspect.Signature
        Each parameter with its API default and type.
    """
    api = [o for o in (*options, *extra) if o.on("api")]
    kinds = [inspect.Parameter.POSITIONAL_OR_KEYWORD] * positional + [inspect.Parameter.KEYWORD_ONLY] * len(api)
    return inspect.Signature(
        [
            inspect.Parameter(o.name, kind, default=o.default_of("api"), annotation=o.annotation(api=True))
            for o, kind in zip(api, kinds)
        ]
    )


def numpydoc_parameters(options: Sequence[Option], indent: str = "    ") -> str:
    """The numpydoc ``Parameters`` section of ``options`` (those the API has): each help text
    (``api_help`` where declared) with the flags of these options written as their names
    (``--trials-other`` → ``trials_other``).

    Parameters
    ----------
    options : sequence of Option
        The declarations, in the signature's order.
    indent : str
        Prefix of every line (a function docstring's indentation).

    Returns
    -------
    str
        The section, wrapped at 88 characters, without a trailing newline.
    """
    import textwrap

    names = {flag.split("/")[0]: o.name for o in options if o.on("api") for flag in o.flags if flag.startswith("--")}
    pattern = re.compile("|".join(re.escape(f) for f in sorted(names, key=len, reverse=True)) + r"(?![\w-])")
    lines = ["Parameters", "----------"]
    for o in (o for o in options if o.on("api")):
        lines.append(f"{o.name} : {o.doc_type()}")
        text = o.help if o.api_help is None else o.api_help
        text = pattern.sub(lambda m: names[m.group(0)], text) if names else text
        lines += textwrap.wrap(text, width=88, initial_indent="    ", subsequent_indent="    ")
    return "\n".join(indent + line for line in lines)
