"""The null baselines as one protocol: what each is, how tables and figures label it, whether
it needs the model, and how it draws its matrices; how ``--baseline`` is parsed, and how a
run's null tables are read back.

A null is one :class:`Null`: its name, description, labels, whether it needs the model (a
forward pass of the re-initialised model, :mod:`attnspec.spectra.random_init`) or only the
run's saved tables, whether it is deterministic (one matrix per layer), the role a summary
gives it, and its *sampler*: a function, named ``"module:function"``, that draws the (1, H,
n, n) matrices of one layer for a length n, a causal mask and a sliding window
(:class:`attnspec.spectra.baselines.NullRequest`). :func:`register_null` adds one; the
built-ins are registered below like any other. An installed package names a module that
registers its nulls under the entry-point group :data:`ENTRY_POINT_GROUP`; it is imported
the first time the nulls are read, so ``--baseline NAME`` sees them.

Light on purpose (no torch): the CLI, the plots and the scaling fits use it without the
computation; the sampler is imported only when matrices are drawn
(:func:`attnspec.spectra.baselines.null_accumulator`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from attnspec.errors import InputError, ResultsError

#: Roles a summary gives a null: ``chance`` (the null real P is set beside), ``architecture``
#: (the same model untrained), or none.
ROLES: tuple[str, ...] = ("", "chance", "architecture")


@dataclass(frozen=True)
class Null:
    """One null baseline.

    Attributes
    ----------
    name : str
        Its ``--baseline`` name and its ``baseline`` column value.
    description : str
        One line for meta.json and the docs.
    label : str
        For sentences and figures (``"uniform null"``).
    short : str
        For table headers.
    needs_model : bool
        It needs a forward pass of the model, not only the run's saved tables; such a null
        is computed with the run and has no sampler.
    deterministic : bool
        One matrix per layer (its draws would all be equal), not ``draws`` of them.
    sampler : str or None
        ``"module:function"``: the function that draws one layer's matrices
        (:class:`attnspec.spectra.baselines.NullRequest` → (1, H, n, n) and the per-head
        logit scale or None); None for a null that needs the model.
    role : str
        One of :data:`ROLES`: what a summary uses it for.
    """

    name: str
    description: str
    label: str
    short: str
    needs_model: bool = False
    deterministic: bool = False
    sampler: str | None = None
    role: str = ""


#: Every null, by name, in the order registered.
NULLS: dict[str, Null] = {}
#: Installed packages name modules that register nulls under this entry-point group.
ENTRY_POINT_GROUP = "attnspec.nulls"


def load_plugins() -> None:
    """Import, once, every module named under :data:`ENTRY_POINT_GROUP` (each registers its nulls)."""
    from attnspec.runtime.plugins import load_group

    load_group(ENTRY_POINT_GROUP)


def register_null(null: Null) -> None:
    """Add a null baseline (``--baseline NAME``, ``baselines=[NAME]``).

    Parameters
    ----------
    null : Null
        The null; a name already registered is refused.

    Raises
    ------
    InputError
        A repeated name, an unknown role, or a null without sampler that does not need the
        model (it could draw nothing).
    """
    if null.name in NULLS:
        raise InputError(f"a null named {null.name!r} is already registered")
    if null.role not in ROLES:
        raise InputError(f"a null's role must be one of {ROLES}, got {null.role!r}")
    if null.sampler is None and not null.needs_model:
        raise InputError(f"the null {null.name!r} needs a sampler ('module:function') or needs_model=True")
    NULLS[null.name] = null


def needs_model(name: str) -> bool:
    """Whether the null ``name`` needs the model (a forward pass), not only the saved tables.

    Parameters
    ----------
    name : str
        A null's name (an unknown one: False).

    Returns
    -------
    bool
    """
    load_plugins()
    return name in NULLS and NULLS[name].needs_model


def with_role(role: str) -> str | None:
    """The first registered null of ``role`` (``"chance"``, ``"architecture"``), or None.

    Parameters
    ----------
    role : str
        One of :data:`ROLES`.

    Returns
    -------
    str or None
    """
    load_plugins()
    return next((n.name for n in NULLS.values() if role and n.role == role), None)


class _Field(Mapping[str, str]):
    """A read-only view name → one field of every registered null (follows registration)."""

    def __init__(self, field: str) -> None:
        self._field = field

    def __getitem__(self, name: str) -> str:
        load_plugins()
        return getattr(NULLS[name], self._field)

    def __iter__(self) -> Iterator[str]:
        load_plugins()
        return iter(NULLS)

    def __len__(self) -> int:
        load_plugins()
        return len(NULLS)


#: name → the one-line description meta.json and the docs use.
BASELINES: Mapping[str, str] = _Field("description")
#: name → short label for sentences and figures.
LABELS: Mapping[str, str] = _Field("label")
#: name → shorter label, for table headers.
SHORT: Mapping[str, str] = _Field("short")

register_null(
    Null(
        "entropy-matched",
        "softmax of Gaussian logits per (layer, head), the logit scale fitted to the head's mean row "
        "entropy, the head's causal mask and window",
        "entropy-matched null",
        "entropy null",
        sampler="attnspec.spectra.baselines:entropy_matched_matrices",
        role="chance",
    )
)
register_null(
    Null(
        "uniform",
        "every row uniform over its allowed positions (closed form; lower-triangular for causal layers)",
        "uniform null",
        "uniform null",
        deterministic=True,
        sampler="attnspec.spectra.baselines:uniform_matrices",
    )
)
register_null(
    Null(
        "random-init",
        "the same architecture, tokenizer and inputs with re-initialised weights (seeded; attnspec.spectra.random_init)",
        "random-init model",
        "random init",
        needs_model=True,
        role="architecture",
    )
)


def parse_baselines(value: str | Sequence[str] | None) -> list[str]:
    """``"entropy-matched,uniform"``, a list of names (each may hold commas), or None → the names.

    Unknown or repeated names are refused in one line naming the value and the allowed names.

    Parameters
    ----------
    value : str, sequence of str or None
        ``--baseline`` / ``baselines=``; None: no null.

    Returns
    -------
    list of str
        The names, in the order given.

    Raises
    ------
    InputError
        An unknown or repeated name.
    """
    if value is None:
        return []
    items = [value] if isinstance(value, str) else list(value)
    if not all(isinstance(v, str) for v in items):
        raise InputError(f"--baseline must be names ({', '.join(BASELINES)}), got {value!r}")
    names = [p.strip() for v in items for p in v.split(",")]
    bad = [p for p in names if p not in BASELINES]
    if bad:
        raise InputError(
            f"--baseline must be one of {', '.join(BASELINES)} (repeat it or separate by commas), got {bad[0]!r}"
        )
    if len(set(names)) != len(names):
        raise InputError(f"--baseline names a baseline twice: {value!r}")
    return names


def baselines_of(run: Path) -> list[str]:
    """The nulls a run holds (meta.json ``baselines``), in the order computed.

    Parameters
    ----------
    run : Path
        A spectrum results directory.

    Returns
    -------
    list of str
    """
    from attnspec.storage.results import read_meta

    return list((read_meta(Path(run)).get("baselines") or {}).get("names") or [])


def read_baseline(run: Path, name: str, table: str) -> pd.DataFrame:
    """One null's ``spectrum``, ``metrics`` or ``inputs`` table of a run, without the ``baseline`` column.

    Parameters
    ----------
    run : Path
        A spectrum results directory.
    name : str
        The null's name.
    table : {"spectrum", "metrics", "inputs"}
        Which table.

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    ResultsError
        The run holds no such null.
    """
    from attnspec.storage.results import read_table

    if name not in baselines_of(run):
        raise ResultsError(
            f"{run} holds no {name!r} baseline (it holds: {', '.join(baselines_of(run)) or 'none'}); "
            f"compute it with attnspec spectrum ... --baseline {name}"
        )
    frame = read_table(run, f"baseline_{table}")
    return frame[frame["baseline"] == name].drop(columns="baseline").reset_index(drop=True)
