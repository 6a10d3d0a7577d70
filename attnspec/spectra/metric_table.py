"""The per-matrix metrics of a spectrum run, as one table.

Each metric is one :class:`Metric`: its name (the state keys ``<name>.count/mean/m2`` and
the columns ``<name>_mean``, ``<name>_std``), what it is a function of (the singular values
σ of one P, the curves made from them, or P itself), its range, and whether it is also kept
per input (the head mean per layer, for bootstrap intervals). The accumulator
(:mod:`attnspec.spectra.aggregate`) computes, saves, merges and checks exactly the metrics
of this table; :func:`register_metric` adds one from outside attnspec (the built-ins are its
first entries). An installed package names a module that registers its metrics under the
entry-point group :data:`ENTRY_POINT_GROUP`; it is imported the first time the table's names
are read (:func:`load_plugins`).

A saved aggregate names the metrics it holds (``metric_names``, state version 2; an older
state is read off its keys). A run saved before a metric existed still resumes and merges:
it goes on without that metric, its tables carry the metric's columns empty, and
:func:`absent_note` says so in one line.

No torch at import: the command line and the comparison of saved runs read the names.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

#: Relative Frobenius errors ε at which the rank for error ε is recorded.
ERROR_LEVELS: tuple[float, ...] = (0.1, 0.2)
#: Version of the saved aggregate's layout: 2 names its metrics (``metric_names``).
STATE_VERSION = 2
#: Installed packages name modules that register metrics under this entry-point group.
ENTRY_POINT_GROUP = "attnspec.metrics"


@dataclass(frozen=True)
class MetricInputs:
    """What a metric is computed from, for one layer's batch of matrices.

    Attributes
    ----------
    sv : torch.Tensor, shape (B, H, n)
        Singular values, descending, zero-extended to the window's n.
    curves : dict of str to torch.Tensor, each (B, H, n)
        ``curve`` (cumulative), ``energy`` and ``tail``, from ``sv``.
    rank_tol : float
        The numerical rank's relative tolerance.
    row_entropy : torch.Tensor, shape (B, H), or None
        The mean normalised row entropy of the same P (computed from P by the capture's
        sink); None when the caller had no P.
    centred_sv : torch.Tensor, shape (B, H, n), or None
        Singular values of P minus its mean row (:func:`attnspec.spectra.centred.centred_stack`),
        descending, zero-extended like ``sv``; None when the caller had no P.
    """

    sv: Any
    curves: dict[str, Any]
    rank_tol: float
    row_entropy: Any = None
    centred_sv: Any = None


@dataclass(frozen=True)
class Metric:
    """One per-matrix metric.

    Attributes
    ----------
    name : str
        Its key in states and tables.
    of : str
        What it is a function of, in words.
    compute : callable
        :class:`MetricInputs` → tensor (B, H) of float64; None when it cannot be computed
        from these inputs (the row entropy without P).
    unit : bool
        Its range is [0, 1]; otherwise [1, n] (a rank or an index).
    per_input : bool
        Also kept per input (the head mean of each layer).
    needs_p : bool
        Computed from P itself, which some callers do not pass (a null baseline's draws, the
        approximate long-n engine): such a metric may hold no sample at all.
    """

    name: str
    of: str
    compute: Callable[[MetricInputs], Any]
    unit: bool = False
    per_input: bool = False
    needs_p: bool = False

    @property
    def range(self) -> str:
        return "[0, 1]" if self.unit else "[1, n]"


def _effective_rank(x: MetricInputs) -> Any:
    from attnspec.spectra.metrics import effective_rank

    return effective_rank(x.sv)


def _stable_rank(x: MetricInputs) -> Any:
    from attnspec.spectra.metrics import stable_rank

    return stable_rank(x.sv)


def _reach_index(x: MetricInputs) -> Any:
    import torch

    from attnspec.spectra.metrics import reach_index

    return reach_index(x.curves["curve"]).to(torch.float64)


def _sigma_ratio(x: MetricInputs) -> Any:
    from attnspec.spectra.metrics import sigma_ratio

    return sigma_ratio(x.sv)


def _numerical_rank(x: MetricInputs) -> Any:
    import torch

    from attnspec.spectra.metrics import numerical_rank

    return numerical_rank(x.sv, x.rank_tol).to(torch.float64)


def _rank_for_error(eps: float) -> Callable[[MetricInputs], Any]:
    def compute(x: MetricInputs) -> Any:
        import torch

        from attnspec.spectra.metrics import reach_index

        # the first k with energy e_k >= 1 − ε²: the Eckart–Young error ‖P − P_k‖_F/‖P‖_F <= ε
        return reach_index(x.curves["energy"], 1.0 - eps**2).to(torch.float64)

    return compute


def _row_entropy(x: MetricInputs) -> Any:
    import torch

    return None if x.row_entropy is None else x.row_entropy.to(torch.float64).cpu()


def _c_centred(x: MetricInputs) -> Any:
    import torch

    from attnspec.spectra.centred import centred_curve_at
    from attnspec.spectra.reading import default_at

    if x.centred_sv is None:
        return None
    return centred_curve_at(x.centred_sv, default_at(x.sv.shape[-1])).to(torch.float64).cpu()


#: The metrics, in the order of the tables' columns (:func:`register_metric` appends).
METRIC_TABLE: list[Metric] = [
    Metric("effective_rank", "σ: exp of the entropy of σ/Σσ (Roy & Vetterli)", _effective_rank, per_input=True),
    Metric("stable_rank", "σ: Σσ²/σ₁²", _stable_rank),
    Metric("reach_index", "σ: first i with c_i >= 0.9 (cumulative curve)", _reach_index, per_input=True),
    Metric("sigma2_over_sigma1", "σ: σ₂/σ₁", _sigma_ratio, unit=True),
    Metric("numerical_rank", "σ: count of σ_i > rank_tol·σ₁", _numerical_rank),
    *(
        Metric(
            f"rank_for_error_{e:g}", f"σ: least k with ‖P − P_k‖_F/‖P‖_F <= {e:g}", _rank_for_error(e), per_input=True
        )
        for e in ERROR_LEVELS
    ),
    Metric(
        "row_entropy",
        "P: mean row entropy / log of the positions a row may attend to",
        _row_entropy,
        unit=True,
        needs_p=True,
    ),
    Metric(
        "c_centred",
        "P: c at index n/4 (128 of 512) of P minus its mean row; 1 when every row is the mean row",
        _c_centred,
        unit=True,
        needs_p=True,
    ),
]


def register_metric(entry: Metric) -> None:
    """Add a metric to the table: every run made afterwards computes, saves, merges and checks it.

    A run saved before it was registered (or by a process that did not register it) resumes
    and merges without it, its columns empty, as for a metric of a later attnspec.

    Parameters
    ----------
    entry : Metric
        The metric; its ``compute`` returns a (B, H) float64 tensor, within [0, 1] when
        ``unit`` else within [1, n] (the run's range check), or None when it cannot be
        computed from the inputs given.

    Raises
    ------
    InputError
        A name already in the table, a name that is not a key (letters, digits, ``_`` and
        ``-``), or a ``compute`` that is not callable.
    """
    import re

    from attnspec.errors import InputError

    if not re.fullmatch(r"[A-Za-z0-9_-]+", entry.name):
        raise InputError(
            f"a metric's name is a key of states and tables: letters, digits, '_' and '-', got {entry.name!r}"
        )
    if entry.name in metric_names():
        raise InputError(f"a metric named {entry.name!r} is already in the table")
    if not callable(entry.compute):
        raise InputError(
            f"the metric {entry.name!r} needs a callable compute (MetricInputs -> (B, H)), got {entry.compute!r}"
        )
    METRIC_TABLE.append(entry)


def load_plugins() -> None:
    """Import, once, every module named under :data:`ENTRY_POINT_GROUP` (each registers its metrics)."""
    from attnspec.runtime.plugins import load_group

    load_group(ENTRY_POINT_GROUP)


def metric_names() -> tuple[str, ...]:
    """Every metric of the table, in order (installed packages' included).

    Returns
    -------
    tuple of str
    """
    load_plugins()
    return tuple(m.name for m in METRIC_TABLE)


def metric(name: str) -> Metric:
    """The table's entry named ``name``.

    Parameters
    ----------
    name : str
        A metric's name.

    Returns
    -------
    Metric

    Raises
    ------
    InputError
        No metric of that name (the message lists them).
    """
    from attnspec.errors import InputError

    load_plugins()
    for m in METRIC_TABLE:
        if m.name == name:
            return m
    raise InputError(f"unknown metric {name!r}; the metrics are {', '.join(metric_names())}")


def metric_frame() -> Any:
    """The table as a DataFrame: ``name``, ``of``, ``range``, ``per_input``.

    Returns
    -------
    pandas.DataFrame
    """
    import pandas as pd

    load_plugins()
    return pd.DataFrame(
        [{"name": m.name, "of": m.of, "range": m.range, "per_input": m.per_input} for m in METRIC_TABLE]
    )


def absent_note(absent: Sequence[str]) -> str | None:
    """One line naming the metrics a saved run does not hold; None when it holds them all.

    Parameters
    ----------
    absent : sequence of str
        The metrics missing from the run.

    Returns
    -------
    str or None
    """
    if not absent:
        return None
    names = ", ".join(absent)
    return f"this run was saved without {names} (measured only by a later attnspec); its columns are empty"
