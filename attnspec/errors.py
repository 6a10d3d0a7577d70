"""Exceptions that mean "the user asked for something that cannot be done".

The CLI turns these into a one-line message and exit code 1, with no traceback; any other
exception is a bug and keeps its traceback. Both subclass the builtin a library user would
expect (``ValueError``, ``FileNotFoundError``), so ``except ValueError`` keeps working.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: errors.py stays import-light
    import pathlib


class AttnspecError(Exception):
    """Base class of every user-facing attnspec error."""


class InputError(AttnspecError, ValueError):
    """A parameter or input value outside what is allowed; the message names both."""


class OptionError(InputError):
    """A value the command line can read but not accept as its option's kind (``--num-sentences
    abc``, ``--data imbd``): a usage error, exit code 2 like click's own, found before anything
    loads."""


class DataError(AttnspecError, ValueError):
    """Input data that is missing, unreadable, empty or in an unknown format."""


class ModelLoadError(AttnspecError, OSError):
    """A model that cannot be loaded (not cached, not reachable, not an encoder, ...)."""


class ResultsError(AttnspecError, ValueError):
    """A results directory that is missing, incomplete, or holds a different run."""


class NoSpaceError(ResultsError):
    """A full disk (or quota) while a result was written; the message says what is left."""


def check_range(
    name: str,
    value: float,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> None:
    """Raise :class:`InputError` unless ``low (<|<=) value (<|<=) high``.

    The message names the parameter, the value, and the allowed range, e.g.
    ``eps must be in (0, 1), got 1.5``. A float NaN or infinity is refused too.

    Parameters
    ----------
    name : str
        The parameter's name as the user wrote it (``"trials"``, ``"--seq-len"``), quoted by
        the message.
    value : float
        The value.
    low, high : float, optional
        The ends of the range (None: unbounded on that side).
    low_open, high_open : bool
        Whether the range excludes that end.

    Raises
    ------
    InputError
        The value is refused; the message names it.
    """
    import math

    bad = not math.isfinite(value) if isinstance(value, float) else False
    if low is not None:
        bad |= value <= low if low_open else value < low
    if high is not None:
        bad |= value >= high if high_open else value > high
    if bad:
        lo = "-inf" if low is None else f"{low:g}"
        hi = "inf" if high is None else f"{high:g}"
        lb = "(" if (low_open or low is None) else "["
        hb = ")" if (high_open or high is None) else "]"
        raise InputError(f"{name} must be in {lb}{lo}, {hi}{hb}, got {value!r}")


def check_int(name: str, value: object, low: int | None = None, high: int | None = None) -> int:
    """An integer (not a bool, not a float) in ``[low, high]``, else :class:`InputError`.

    e.g. ``trials must be an integer, got 2.5`` or ``trials must be in [1, inf), got 0``.

    Parameters
    ----------
    name : str
        The parameter's name as the user wrote it (``"trials"``, ``"--seq-len"``), quoted by
        the message.
    value : object
        The value; any ``numbers.Integral`` but a bool (NumPy integers included).
    low, high : int, optional
        The inclusive ends of the range (None: unbounded on that side).

    Returns
    -------
    int
        ``value`` as a Python int.

    Raises
    ------
    InputError
        The value is refused; the message names it.
    """
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InputError(f"{name} must be an integer, got {value!r}")
    check_range(name, int(value), low=low, high=high)
    return int(value)  # (numpy integers are numbers.Integral too)


#: Seeds are 0 <= seed < SEED_LIMIT: what NumPy's and torch's generators take as one 64-bit
#: word (a larger int would be folded or refused deep inside a library).
SEED_LIMIT = 2**63


def check_seed(name: str, value: object) -> int:
    """A seed: an integer (any ``numbers.Integral``, not a bool) with ``0 <= seed < 2**63``,
    else :class:`InputError`, e.g. ``seed must be an integer with 0 <= seed < 2**63, got -1``.

    Parameters
    ----------
    name : str
        The parameter's name as the user wrote it (``"trials"``, ``"--seq-len"``), quoted by
        the message.
    value : object
        The seed.

    Returns
    -------
    int
        ``value`` as a Python int.

    Raises
    ------
    InputError
        The value is refused; the message names it.
    """
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not 0 <= int(value) < SEED_LIMIT:
        raise InputError(f"{name} must be an integer with 0 <= {name.lstrip('-')} < 2**63, got {value!r}")
    return int(value)


def check_bool(name: str, value: object) -> bool:
    """A boolean: ``True``/``False`` (or a NumPy bool), never a string such as ``'no'`` (which
    Python would take for true) nor a number; else :class:`InputError`.

    Parameters
    ----------
    name : str
        The parameter's name as the user wrote it (``"trials"``, ``"--seq-len"``), quoted by
        the message.
    value : object
        The value.

    Returns
    -------
    bool

    Raises
    ------
    InputError
        The value is refused; the message names it.
    """
    import numpy as np

    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise InputError(f"{name} must be True or False, got {value!r}")


def as_list(name: str, value: object) -> list:
    """A list from any sequence or array (list, tuple, range, NumPy array, pandas Series),
    element order kept. A string, a mapping, a set (no order), an iterator or a generator
    (consumed once, nothing left to check or record) is refused with :class:`InputError`.

    Parameters
    ----------
    name : str
        The parameter's name as the user wrote it (``"trials"``, ``"--seq-len"``), quoted by
        the message.
    value : object
        The sequence or array.

    Returns
    -------
    list
        Its elements, in order (an array's as Python scalars, by ``tolist``).

    Raises
    ------
    InputError
        The value is refused; the message names it.
    """
    from collections.abc import Iterator, Mapping, Sequence, Set

    if isinstance(value, (str, bytes, Mapping, Set, Iterator)):
        kind = (
            "a string"
            if isinstance(value, (str, bytes))
            else "a dict"
            if isinstance(value, Mapping)
            else "a set (it has no order)"
            if isinstance(value, Set)
            else "an iterator or generator"
        )
        raise InputError(f"{name} must be a list (any sequence or array), got {kind}: pass list(...) of it")
    if isinstance(value, Sequence) or hasattr(value, "__array__") or hasattr(value, "tolist"):
        items = value.tolist() if hasattr(value, "tolist") else list(value)
        if isinstance(items, list):
            return items
    raise InputError(f"{name} must be a list (any sequence or array), got {type(value).__name__}")


def check_texts(name: str, value: object) -> list[str]:
    """A non-empty sequence of ``str`` (see :func:`as_list`), else :class:`InputError`.

    Parameters
    ----------
    name : str
        The parameter's name as the user wrote it (``"trials"``, ``"--seq-len"``), quoted by
        the message.
    value : object
        The texts.

    Returns
    -------
    list of str

    Raises
    ------
    InputError
        The value is refused; the message names it.
    """
    from collections.abc import Mapping

    kind = type(value).__name__
    if isinstance(value, Mapping) or kind == "DataFrame":  # iterating either gives its keys, not its texts
        raise InputError(
            f"{name} must be a list of strings (any sequence of str), got a {kind}, whose items are its "
            f"{'column names' if kind == 'DataFrame' else 'keys'}; pass one column's values, e.g. "
            f"{name}=frame['text'].tolist()"
        )
    try:
        items = as_list(name, value)
    except InputError as e:
        raise InputError(
            str(e).replace(
                " must be a list (any sequence or array)", " must be a list of strings (any sequence of str)"
            )
        ) from None
    where = next((i for i, x in enumerate(items) if not isinstance(x, str)), None)
    if where is not None:
        bad = items[where]
        raise InputError(
            f"{name}[{where}] must be a string ({name} is a list of strings), got {type(bad).__name__}: "
            f"{printable(repr(bad))[:60]}"
        )
    if not items:
        raise InputError(f"{name} is empty")
    return items


def check_choice(name: str, value: object, allowed: tuple[str, ...] | list[str]) -> str:
    """``value`` if it is one of ``allowed``, else :class:`InputError` listing them,
    e.g. ``family must be one of gaussian, orthogonal, got 'cauchy'``.

    Parameters
    ----------
    name : str
        The parameter's name as the user wrote it (``"trials"``, ``"--seq-len"``), quoted by
        the message.
    value : object
        The value.
    allowed : tuple or list of str
        The allowed values, in the order the message lists them.

    Returns
    -------
    str
        ``value``.

    Raises
    ------
    InputError
        The value is refused; the message names it.
    """
    if value not in allowed:
        raise InputError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    return str(value)


def check_index(name: str, value: object, n: int) -> int:
    """A 1-based index into a curve of length ``n``: an integer (not a bool, a float or a
    string such as ``'5'``) in ``[1, n]``, else :class:`InputError`,
    e.g. ``at must be an integer in 1..512, got '5'``.

    Parameters
    ----------
    name : str
        The parameter's name as the user wrote it (``"trials"``, ``"--seq-len"``), quoted by
        the message.
    value : object
        The index.
    n : int
        The curve's length (the run's seq_len).

    Returns
    -------
    int
        ``value`` as a Python int.

    Raises
    ------
    InputError
        The value is refused; the message names it.
    """
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not 1 <= int(value) <= n:
        raise InputError(f"{name} must be an integer in 1..{n} (the run's seq_len), got {value!r}")
    return int(value)


def check_path(name: str, value: object) -> pathlib.Path:
    """A path given as ``str`` or ``os.PathLike`` (not ``None``, a number, ...), non-empty,
    else :class:`InputError`, e.g. ``path must be a path (str or os.PathLike), got 123``.

    Parameters
    ----------
    name : str
        The parameter's name as the user wrote it (``"trials"``, ``"--seq-len"``), quoted by
        the message.
    value : object
        The path; bytes and blank strings are refused.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    InputError
        The value is refused; the message names it.
    """
    import os
    from pathlib import Path

    if isinstance(value, (str, os.PathLike)) and not isinstance(value, bytes) and str(value).strip():
        return Path(value)
    raise InputError(f"{name} must be a path (str or os.PathLike), got {value!r}")


def check_name(name: str, value: object) -> str:
    """A name that becomes ONE folder or file name under a folder attnspec owns (an experiment's
    TOML file stem): non-empty, printable, no path separator, not made of dots only (``.``,
    ``..``, ``...`` would name the folder itself or the ones above it) and not starting with a
    dot (attnspec's temporary and lock files do); else :class:`InputError`, e.g.
    ``experiment name '..' must be a plain name (letters, digits, - _ .; no separators), got '..'``.

    Parameters
    ----------
    name : str
        The parameter's name as the user wrote it (``"trials"``, ``"--seq-len"``), quoted by
        the message.
    value : object
        The name.

    Returns
    -------
    str
        ``value``.

    Raises
    ------
    InputError
        The value is refused; the message names it.
    """
    text = value if isinstance(value, str) else None
    bad = (
        text is None
        or not text
        or text.startswith(".")
        or set(text) <= {"."}
        or any(sep in text for sep in ("/", "\\", "\0"))
        or not text.isprintable()
    )
    if bad:
        raise InputError(
            f"{name} must be a plain name (letters, digits, - _ .; not starting with a dot, no "
            f"separators), got {printable(repr(value))}"
        )
    return text


def printable(text: object) -> str:
    """``text`` with every non-printable character escaped (``\\x1b``, ``\\n``, ``\\u202e``), so a
    name or a path printed to a terminal cannot move the cursor, set the window title, write
    the clipboard or clear the screen (ESC sequences); printable text is unchanged.

    Parameters
    ----------
    text : object
        Anything; its ``str`` is escaped.

    Returns
    -------
    str
    """
    s = str(text)
    if s.isprintable():
        return s
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in s)


# ---------------------------------------------------------------------------------------
# Resources: a request that cannot fit the machine is refused before it starts
# ---------------------------------------------------------------------------------------
def available_memory_bytes() -> int | None:
    """Memory the machine can give now: ``MemAvailable`` of /proc/meminfo (Linux), else the
    physical memory from ``os.sysconf``; None when neither is known.

    Returns
    -------
    int or None
        Bytes.
    """
    import os

    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (OSError, ValueError, AttributeError):  # pragma: no cover - not POSIX
        return None


def format_bytes(n: float) -> str:
    """``3.35 PiB``, ``21.5 GiB``: a byte count in binary units, up to EiB.

    Parameters
    ----------
    n : float
        Bytes.

    Returns
    -------
    str
        Three significant digits and the unit (whole bytes below 1 KiB).
    """
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if abs(n) < 1024 or unit == "EiB":
            return f"{n:.3g} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return f"{n:.3g} EiB"  # pragma: no cover


_bytes = format_bytes


def check_memory(what: str, estimate_bytes: float, *, limit_bytes: int | None = None) -> None:
    """Refuse (:class:`InputError`) a request whose memory estimate exceeds what the machine
    has available, naming both, e.g. ``--resamples 1000000000000 needs about 50.9 TiB of
    memory, more than the 5.2 GiB available``. ``limit_bytes`` defaults to
    :func:`available_memory_bytes` (no check when it is unknown).

    Parameters
    ----------
    what : str
        The request, as the message names it (``"--resamples 1000"``).
    estimate_bytes : float
        Its memory estimate, in bytes.
    limit_bytes : int, optional
        The memory available, in bytes (default: :func:`available_memory_bytes`).

    Raises
    ------
    InputError
        The estimate exceeds the limit.
    """
    limit = available_memory_bytes() if limit_bytes is None else limit_bytes
    if limit is not None and estimate_bytes > limit:
        raise InputError(
            f"{what} needs about {_bytes(estimate_bytes)} of memory, more than the {_bytes(limit)} "
            "available on this machine; ask for less"
        )
