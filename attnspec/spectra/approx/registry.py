"""Every registered approximation: the shipped ones (registered when this module loads them),
those of installed packages (entry points of the group :data:`ENTRY_POINT_GROUP`, each a
module whose import registers its methods) and any a user registered with
:func:`attnspec.spectra.approx.protocol.approximation`.
"""

from __future__ import annotations

from collections.abc import Sequence

from attnspec.errors import InputError
from attnspec.spectra.approx import linformer_fit, methods  # noqa: F401  (their decorators register them)
from attnspec.spectra.approx.protocol import _REGISTRY, Approximation

#: Installed packages name modules that register approximations under this entry-point group.
ENTRY_POINT_GROUP = "attnspec.approximations"


def _load_plugins() -> None:
    from attnspec.runtime.plugins import load_group

    load_group(ENTRY_POINT_GROUP)


def registered() -> dict[str, Approximation]:
    """Every registered method by name (the shipped ones and any a user registered).

    Returns
    -------
    dict of str to Approximation
    """
    _load_plugins()

    return dict(_REGISTRY)


def get(name: str) -> Approximation:
    """The method called ``name``.

    Parameters
    ----------
    name : str

    Returns
    -------
    Approximation

    Raises
    ------
    InputError
        No method has that name (the message lists those that do).
    """
    known = registered()
    if name not in known:
        raise InputError(f"--approx {name!r} is not a registered approximation; choose from {', '.join(sorted(known))}")
    return known[name]


#: The references every table holds beside the methods asked for.
REFERENCES: tuple[str, ...] = ("uniform", "best-rank-k")


def parse_approx(value: str | Sequence[str] | None) -> list[str]:
    """``"linformer-fit,performer"`` or a list → the methods (checked, distinct, in order);
    None, ``""`` or ``"none"`` → [].

    Parameters
    ----------
    value : str, sequence of str or None
        ``--approx``.

    Returns
    -------
    list of str

    Raises
    ------
    InputError
        An unknown or repeated name.
    """
    if value is None:
        return []
    items = value.split(",") if isinstance(value, str) else [t for v in value for t in str(v).split(",")]
    items = [t.strip() for t in items if t.strip()]
    if items == ["none"]:
        return []
    if len(set(items)) != len(items):
        raise InputError(f"--approx lists a method twice: {value!r}")
    for t in items:
        get(t)
    return items
