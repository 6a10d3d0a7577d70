"""Exceptions that mean "the user asked for something that cannot be done".

The CLI turns these into a one-line message and exit code 1, with no traceback; any other
exception is a bug and keeps its traceback. Both subclass the builtin a library user would
expect (``ValueError``, ``FileNotFoundError``), so ``except ValueError`` keeps working.
"""

from __future__ import annotations


class AttnspecError(Exception):
    """Base class of every user-facing attnspec error."""


class InputError(AttnspecError, ValueError):
    """A parameter or input value outside what is allowed; the message names both."""


class DataError(AttnspecError, ValueError):
    """Input data that is missing, unreadable, empty or in an unknown format."""


class ModelLoadError(AttnspecError, OSError):
    """A model that cannot be loaded (not cached, not reachable, not an encoder, ...)."""


class ResultsError(AttnspecError, ValueError):
    """A results directory that is missing, incomplete, or holds a different run."""


def check_range(name: str, value: float, *, low: float | None = None, high: float | None = None,
                low_open: bool = False, high_open: bool = False) -> None:
    """Raise :class:`InputError` unless ``low (<|<=) value (<|<=) high``.

    The message names the parameter, the value, and the allowed range, e.g.
    ``eps must be in (0, 1), got 1.5``.
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
    """
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InputError(f"{name} must be an integer, got {value!r}")
    check_range(name, int(value), low=low, high=high)
    return int(value)  # (numpy integers are numbers.Integral too)


def check_choice(name: str, value: object, allowed: "tuple[str, ...] | list[str]") -> str:
    """``value`` if it is one of ``allowed``, else :class:`InputError` listing them,
    e.g. ``family must be one of gaussian, orthogonal, got 'cauchy'``."""
    if value not in allowed:
        raise InputError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    return str(value)
