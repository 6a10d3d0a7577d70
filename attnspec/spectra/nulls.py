"""The null baselines by name: what each is, how tables and figures label it, how ``--baseline``
is parsed, and how a run's null tables are read back.

Light on purpose (no torch): the CLI, the plots and the scaling fits use it without the
computation, which lives in :mod:`attnspec.spectra.baselines` (random and closed-form nulls
from a run's saved tables) and :mod:`attnspec.spectra.random_init` (the model re-initialised).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from attnspec.errors import InputError, ResultsError

#: The null baselines, with the one-line description meta.json and the docs use.
BASELINES: dict[str, str] = {
    "entropy-matched": "softmax of Gaussian logits per (layer, head), the logit scale fitted to the head's mean row "
    "entropy, the head's causal mask and window",
    "uniform": "every row uniform over its allowed positions (closed form; lower-triangular for causal layers)",
    "random-init": "the same architecture, tokenizer and inputs with re-initialised weights (seeded; "
    "attnspec.spectra.random_init)",
}
#: Nulls that need the model (a forward pass), not only the run's saved tables.
MODEL_NULLS: tuple[str, ...] = ("random-init",)
#: Short labels for sentences and figures.
LABELS: dict[str, str] = {
    "entropy-matched": "entropy-matched null",
    "uniform": "uniform null",
    "random-init": "random-init model",
}
#: Shorter still, for table headers.
SHORT: dict[str, str] = {"entropy-matched": "entropy null", "uniform": "uniform null", "random-init": "random init"}


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
