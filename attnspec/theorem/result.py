"""What a check returns, and what it asks for: the types every battery and the runner share.

:class:`BatteryResult` (verdict rows, tidy tables, meta), :class:`AttentionRequest` (the real
attention matrices a battery needs, loaded above theory by :func:`attnspec.battery.run_battery`)
and :func:`config_identity` (the parameters that define a run). They sit below both the
batteries (``attnspec.theory.*``, a plug-in's check) and :mod:`attnspec.battery`, which loads
the batteries: a battery imports its result type from here, never from the module that runs it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from attnspec.verdicts.classify import VerdictRow, verdicts_frame


@dataclass(frozen=True)
class AttentionRequest:
    """Real attention matrices a battery needs, loaded by :func:`run_battery` (not by theory).

    Parameters
    ----------
    model : str
        A model name or alias (``"minilm"``).
    data : str
        A corpus name (``"wiki103"``, ``"imdb"``).
    seq_len : int
        n: the matrices are (n, n).
    count : int
        How many (input, layer, head) matrices to draw.
    seed : int
        Seed of the inputs drawn and of the matrices picked.
    data_dir : str, optional
        Local corpus folder.
    seq_len_option : str
        The option that set ``seq_len``, named when it exceeds the model's positions.
    """

    model: str
    data: str
    seq_len: int
    count: int
    seed: int
    data_dir: str | None = None
    seq_len_option: str = "--n"


@dataclass
class BatteryResult:
    """What a battery returns.

    Parameters
    ----------
    command : str
        The command that made it (a key of :data:`BATTERIES`).
    verdicts : list of VerdictRow
        One row per (claim id, reading, instance), the evidence in each.
    tables : dict of str to DataFrame
        Tidy tables by file stem (``"jl"`` → ``jl.parquet``), identifier columns first.
    meta : dict
        How the result was made: ``parameters`` (the config), ``seed``, notes, wall time.
    """

    command: str
    verdicts: list[VerdictRow]
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    def verdict_frame(self) -> pd.DataFrame:
        """The verdict rows as one tidy table (claim, reading, parameters, numbers, verdict, evidence).

        Returns
        -------
        pandas.DataFrame
            :func:`attnspec.verdicts.classify.verdicts_frame` of :attr:`verdicts`.
        """
        return verdicts_frame(self.verdicts)


def config_identity(config: Any) -> dict[str, Any]:
    """The parameters that define a run, JSON-ready (tuples as lists): the config's own
    ``identity()`` when it defines one (so that e.g. a thread count does not make another
    run), else every field of a dataclass config (array-valued fields excluded).

    Parameters
    ----------
    config : object
        A battery's config: an object with ``identity()``, a dataclass or a mapping.

    Returns
    -------
    dict
        Parameter name → value; tuples become lists and NumPy arrays are left out.
    """
    import dataclasses

    if callable(getattr(config, "identity", None)):
        fields = dict(config.identity())
    else:
        fields = dataclasses.asdict(config) if dataclasses.is_dataclass(config) else dict(config)
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in fields.items() if not isinstance(v, np.ndarray)}
