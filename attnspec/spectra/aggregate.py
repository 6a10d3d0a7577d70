"""The mergeable accumulator: streaming statistics of curves and metrics per (layer, head).

Per (layer, head, index) the count, mean and sum of squared deviations (Chan et al.'s
pairwise update), so shards computed anywhere merge into the statistics of the union
(equal to a single run up to float64 rounding).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch

from attnspec.errors import InputError, ResultsError
from attnspec.spectra.metric_table import METRIC_TABLE, STATE_VERSION, MetricInputs, absent_note, load_plugins
from attnspec.spectra.metrics import RANK_TOL, cumulative_curve, energy_curve, reach_index, tail_curve
from attnspec.spectra.reading import REACH_LEVEL


class _Moments:
    """count, mean and M2 (sum of squared deviations) over a leading sample axis.

    ``count`` has shape ``shape[:-1]`` when values carry a trailing index axis, so one
    count serves every index of a (layer, head) curve.
    """

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.count = np.zeros(shape[:2], dtype=np.int64)  # (L, H)
        self.mean = np.zeros(shape, dtype=np.float64)
        self.m2 = np.zeros(shape, dtype=np.float64)

    def _bcast(self, c: np.ndarray) -> np.ndarray:
        return c.reshape(c.shape + (1,) * (self.mean.ndim - 2)).astype(np.float64)

    def merge_stats(self, count: np.ndarray, mean: np.ndarray, m2: np.ndarray, where: tuple[Any, ...] = ()) -> None:
        """Chan et al. (1979) pairwise merge of (count, mean, m2) into the slice ``where``."""
        na = self._bcast(self.count[where])
        nb = self._bcast(np.asarray(count))
        n = na + nb
        with np.errstate(invalid="ignore", divide="ignore"):
            delta = mean - self.mean[where]
            frac = np.where(n > 0, nb / np.where(n > 0, n, 1), 0.0)
            self.mean[where] = self.mean[where] + delta * frac
            self.m2[where] = self.m2[where] + m2 + delta**2 * na * frac
        self.count[where] = self.count[where] + count

    def add_samples(self, values: np.ndarray, where: tuple[Any, ...]) -> None:
        """Add samples ``values`` of shape (m, *slice_shape) to the slice ``where``."""
        m = values.shape[0]
        mean = values.mean(axis=0)
        m2 = ((values - mean) ** 2).sum(axis=0)
        count = np.full(self.count[where].shape, m, dtype=np.int64)
        self.merge_stats(count, mean, m2, where)

    def std(self) -> np.ndarray:
        c = self._bcast(self.count)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(c > 1, np.sqrt(np.maximum(self.m2, 0) / np.maximum(c - 1, 1)), np.nan)


@dataclass(frozen=True)
class SpectrumTables:
    """The finished aggregates as tidy tables."""

    spectrum: pd.DataFrame  # one row per (layer, head, index)
    metrics: pd.DataFrame  # one row per (layer, head)
    inputs: pd.DataFrame | None = None  # one row per (input, layer), head means


class _FromTable:
    """A class attribute read from the metrics table at each access, so that a metric registered
    after this module was imported (:func:`attnspec.spectra.metric_table.register_metric`) is held."""

    def __init__(self, keep: Callable[[Any], bool]) -> None:
        self._keep = keep

    def __get__(self, obj: object, owner: type | None = None) -> tuple[str, ...]:
        load_plugins()
        return tuple(m.name for m in METRIC_TABLE if self._keep(m))


class SpectrumAccumulator:
    """Streaming statistics of spectral curves and rank metrics per (layer, head).

    Every statistic is a :class:`_Moments` (count, mean, M2) in one of two dictionaries,
    ``curve_stats`` (per index) and ``metrics`` (per matrix, one per entry of
    :data:`attnspec.spectra.metric_table.METRIC_TABLE` it holds), so persistence, merging
    and verification treat them all alike. Per-input summaries (layer means over heads of
    :attr:`PER_INPUT`), recorded by :meth:`add_batch`, serve bootstrap intervals.

    Parameters
    ----------
    num_layers, num_heads, seq_len : int
        Shape of the aggregate: curves have ``seq_len`` indices.
    rank_tol : float
        Relative tolerance of the numerical rank (default :data:`RANK_TOL`).
    metrics : sequence of str, optional
        The table's metrics this aggregate holds (default: all); a state saved before a
        metric existed is rebuilt without it (:attr:`absent` names it).
    """

    #: Curves per (layer, head, index): ``curve`` is c_i (state keys count/mean/m2, as
    #: before), ``energy`` e_k, ``tail`` the curve without σ_1.
    CURVES: tuple[str, ...] = ("curve", "energy", "tail")
    #: Every metric of the table (an aggregate holds these, or fewer when saved before some existed).
    METRICS: tuple[str, ...] = _FromTable(lambda m: True)  # type: ignore[assignment]
    #: Metrics that lie in [0, 1] (the others are ranks or indices in [1, seq_len]).
    UNIT_METRICS: tuple[str, ...] = _FromTable(lambda m: m.unit)  # type: ignore[assignment]
    #: Metrics kept per input (mean over heads, per layer) for bootstrap intervals.
    PER_INPUT: tuple[str, ...] = _FromTable(lambda m: m.per_input)  # type: ignore[assignment]

    def __init__(
        self,
        num_layers: int,
        num_heads: int,
        seq_len: int,
        rank_tol: float = RANK_TOL,
        metrics: Sequence[str] | None = None,
    ) -> None:
        for name, v in (("num_layers", num_layers), ("num_heads", num_heads), ("seq_len", seq_len)):
            if v < 1:
                raise InputError(f"{name} must be >= 1, got {v}")
        if not 0 < rank_tol < 1:
            raise InputError(f"--rank-tol must be in (0, 1), got {rank_tol}")
        self.shape = (num_layers, num_heads, seq_len)
        self.rank_tol = float(rank_tol)
        self.curve_stats = {name: _Moments(self.shape) for name in self.CURVES}
        held = self.METRICS if metrics is None else tuple(metrics)
        unknown = sorted(set(held) - set(self.METRICS))
        if unknown:
            raise InputError(f"unknown metrics {unknown}; the metrics are {', '.join(self.METRICS)}")
        self.metrics = {name: _Moments((num_layers, num_heads)) for name in self.METRICS if name in held}
        self.input_index = np.zeros(0, dtype=np.int64)  # (m,) position of each input in the run's selection
        self.per_input = {name: np.zeros((0, num_layers)) for name in self.PER_INPUT if name in held}  # each (m, L)

    @property
    def absent(self) -> tuple[str, ...]:
        """The table's metrics this aggregate does not hold (it was saved before they existed)."""
        return tuple(name for name in self.METRICS if name not in self.metrics)

    @property
    def absent_note(self) -> str | None:
        """One line naming :attr:`absent`, or None when every metric is held."""
        return absent_note(self.absent)

    @property
    def curves(self) -> _Moments:
        return self.curve_stats["curve"]

    @property
    def count(self) -> np.ndarray:
        return self.curves.count

    def _per_matrix(
        self, sv: torch.Tensor, entropy: torch.Tensor | None, centred: torch.Tensor | None = None
    ) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
        """Curves (each (B, H, n)) and metrics (each (B, H)) of zero-extended singular values (B, H, n)."""
        curves = {"curve": cumulative_curve(sv), "energy": energy_curve(sv), "tail": tail_curve(sv)}
        inputs = MetricInputs(sv=sv, curves=curves, rank_tol=self.rank_tol, row_entropy=entropy, centred_sv=centred)
        metrics = {}
        for m in METRIC_TABLE:  # every metric from the one factorisation (and P's row entropy)
            if m.name in self.metrics:
                value = m.compute(inputs)
                if value is not None:
                    metrics[m.name] = value
        return curves, metrics

    def _check(self, layer: int, sv: torch.Tensor, entropy: torch.Tensor | None) -> torch.Tensor:
        L, H, n = self.shape
        if not 0 <= layer < L:
            raise InputError(f"layer must be in 0..{L - 1}, got {layer}")
        if sv.dim() != 3 or sv.shape[1] != H or sv.shape[2] > n:
            raise InputError(f"singular values must have shape (B, {H}, <= {n}), got {tuple(sv.shape)}")
        if entropy is not None and tuple(entropy.shape) != tuple(sv.shape[:2]):
            raise InputError(f"row entropy must have shape {tuple(sv.shape[:2])}, got {tuple(entropy.shape)}")
        if sv.shape[2] < n:
            sv = torch.nn.functional.pad(sv, (0, n - sv.shape[2]))
        return sv

    def add(
        self,
        layer: int,
        sv: torch.Tensor,
        row_entropy: torch.Tensor | None = None,
        centred_sv: torch.Tensor | None = None,
    ) -> dict[str, torch.Tensor]:
        """Add one layer's singular values, shape (B, H, l) with l <= seq_len.

        Curves of matrices shorter than ``seq_len`` (inputs shorter than the window) are
        those of the zero-extended matrix: c_i = 1 for i beyond their length.
        ``row_entropy`` (B, H) comes from :func:`row_entropy` on the same P; without it
        the row-entropy statistic receives no samples.

        Parameters
        ----------
        layer : int
            The layer, 0-based.
        sv : torch.Tensor, shape (B, H, l)
            Singular values of each input's and head's P, descending, l <= seq_len.
        row_entropy : torch.Tensor, shape (B, H), optional
            The mean normalised row entropy of the same matrices.
        centred_sv : torch.Tensor, shape (B, H, l), optional
            Singular values of the same matrices minus their mean row, descending; without
            them the ``c_centred`` statistic receives no samples.

        Returns
        -------
        dict of str to torch.Tensor, shape (B, H)
            The per-matrix metrics, by name (:attr:`METRICS`).

        Raises
        ------
        InputError
            A layer out of range or arrays of the wrong shape.
        """
        sv = self._check(layer, sv, row_entropy)
        if centred_sv is not None:
            centred_sv = self._check(layer, centred_sv, None)
        curves, metrics = self._per_matrix(sv, row_entropy, centred_sv)
        for name, values in curves.items():  # each (B, H, n)
            self.curve_stats[name].add_samples(values.numpy(), (layer,))
        for name, values in metrics.items():  # each (B, H)
            self.metrics[name].add_samples(values.numpy(), (layer,))
        return metrics

    def add_batch(self, items: Sequence[tuple[Any, ...]], input_index: Sequence[int]) -> None:
        """Add one batch for every layer and record its per-input summaries.

        Parameters
        ----------
        items : sequence of tuples
            (layer, singular values (B, H, l), row entropy (B, H) or None), optionally followed
            by the centred singular values (B, H, l) or None (:meth:`add`), exactly one per layer.
        input_index : sequence of int, length B
            Which inputs of the run's selection the batch holds (so shards merge into one
            table of inputs).

        Raises
        ------
        InputError
            Not exactly one item per layer, or an ``input_index`` of the wrong length.
        """
        L = self.shape[0]
        if sorted(item[0] for item in items) != list(range(L)):
            raise InputError(f"add_batch needs exactly one entry per layer 0..{L - 1}")
        idx = np.asarray(input_index, dtype=np.int64)
        for _layer, sv, *_rest in items:
            if sv.shape[0] != idx.size:
                raise InputError(f"input_index has {idx.size} entries but the batch holds {sv.shape[0]} inputs")
        rows = {name: np.empty((idx.size, L)) for name in self.per_input}
        for layer, sv, *rest in items:
            metrics = self.add(layer, sv, *rest)
            for name in self.per_input:
                rows[name][:, layer] = metrics[name].numpy().mean(axis=1)  # mean over heads
        self.input_index = np.concatenate([self.input_index, idx])
        for name in self.per_input:
            self.per_input[name] = np.concatenate([self.per_input[name], rows[name]])

    def merge(self, other: SpectrumAccumulator) -> None:
        """Fold ``other`` (a shard of the same shape) into this accumulator.

        A metric one of the two does not hold (saved before it existed) is dropped from
        the merge: its statistics would cover only part of the inputs.

        Parameters
        ----------
        other : SpectrumAccumulator
            A shard of the same shape and rank tolerance, holding other inputs.

        Raises
        ------
        ResultsError
            Another shape or rank tolerance, or inputs held by both.
        """
        if other.shape != self.shape:
            raise ResultsError(f"cannot merge aggregates of shape {other.shape} into {self.shape}")
        if other.rank_tol != self.rank_tol:
            raise ResultsError(f"cannot merge aggregates with rank_tol {other.rank_tol} into rank_tol {self.rank_tol}")
        for name in [n for n in self.metrics if n not in other.metrics]:
            del self.metrics[name]
            self.per_input.pop(name, None)
        for group, theirs in ((self.curve_stats, other.curve_stats), (self.metrics, other.metrics)):
            for name, mom in group.items():
                o = theirs[name]  # every metric held here is held there (dropped above otherwise)
                mom.merge_stats(o.count, o.mean, o.m2)
        overlap = np.intersect1d(self.input_index, other.input_index)
        if overlap.size:
            raise ResultsError(f"the aggregates share inputs {overlap[:5].tolist()}; shards must be disjoint")
        order = np.argsort(np.concatenate([self.input_index, other.input_index]), kind="stable")
        self.input_index = np.concatenate([self.input_index, other.input_index])[order]
        for name in self.per_input:
            self.per_input[name] = np.concatenate([self.per_input[name], other.per_input[name]])[order]

    # -- persistence -------------------------------------------------------------------
    def _state_keys(self) -> dict[str, _Moments]:
        """Every moment container under its state-file prefix (``curve`` keeps the bare names)."""
        out = {"": self.curves}
        out.update({f"{name}.": mom for name, mom in self.curve_stats.items() if name != "curve"})
        out.update({f"{name}.": mom for name, mom in self.metrics.items()})
        return out

    def state(self) -> dict[str, np.ndarray]:
        """The arrays that ``state.npz`` stores, from which :meth:`from_state` rebuilds the aggregate.

        Returns
        -------
        dict of str to numpy.ndarray
            ``state_version``, ``metric_names`` (the metrics held), ``shape``,
            ``rank_tol``, each statistic's ``count``, ``mean`` and ``m2`` (the curve's under
            bare names, the others prefixed by their name), and the ``per_input.*`` arrays.
        """
        out = {
            "state_version": np.asarray(STATE_VERSION),
            "metric_names": np.asarray(list(self.metrics), dtype=np.str_),
            "shape": np.asarray(self.shape),
            "rank_tol": np.asarray(self.rank_tol),
        }
        for prefix, mom in self._state_keys().items():
            out[f"{prefix}count"] = mom.count
            out[f"{prefix}mean"] = mom.mean
            out[f"{prefix}m2"] = mom.m2
        out["per_input.input_index"] = self.input_index
        for name, values in self.per_input.items():
            out[f"per_input.{name}"] = values
        return out

    @classmethod
    def from_state(cls, state: dict[str, np.ndarray]) -> SpectrumAccumulator:
        """Rebuild an aggregate from :meth:`state`'s arrays.

        The metrics held are those the state names (``metric_names``); a state without
        that list (version 1) holds those whose ``<name>.count`` it stores. Metrics of the
        table the state lacks are :attr:`absent`; metrics it holds that the table no longer
        lists are left out.

        Parameters
        ----------
        state : dict of str to numpy.ndarray
            The arrays, e.g. read from ``state.npz``.

        Returns
        -------
        SpectrumAccumulator

        Raises
        ------
        ResultsError
            An array missing or of the wrong shape.
        """
        try:
            acc = cls(
                *(int(v) for v in state["shape"]), rank_tol=float(state["rank_tol"]), metrics=_held_metrics(state)
            )
            for prefix, mom in acc._state_keys().items():
                mom.count[...] = state[f"{prefix}count"]
                mom.mean[...] = state[f"{prefix}mean"]
                mom.m2[...] = state[f"{prefix}m2"]
            acc.input_index = np.asarray(state["per_input.input_index"], dtype=np.int64)
            for name in acc.per_input:
                values = np.asarray(state[f"per_input.{name}"], dtype=np.float64)
                if values.shape != (acc.input_index.size, acc.shape[0]):
                    raise ValueError(f"per_input.{name} has shape {values.shape}")
                acc.per_input[name] = values
        except (KeyError, ValueError, TypeError, InputError) as e:
            raise ResultsError(
                f"aggregate state is incomplete or has the wrong shape (made by an older attnspec?): {e}"
            ) from None
        return acc

    def copy(self) -> SpectrumAccumulator:
        """An independent copy (the run updates a copy, then swaps it in: see attnspec.spectra.job).

        Returns
        -------
        SpectrumAccumulator
        """
        return SpectrumAccumulator.from_state({k: np.array(v, copy=True) for k, v in self.state().items()})

    def verify(self, inputs_done: int | None = None, *, tol: float = 1e-9) -> None:
        """Check the invariants every honest aggregate satisfies; raise :class:`ResultsError` if not.

        The message starts with the name of the failed check ("finite check: ...").
        Generic over the state's arrays (every float array finite, every count equal to
        ``inputs_done``), then specific to the statistics: a mean cumulative curve lies
        in [0, 1], does not decrease, and ends at 1; squared deviations are >= 0; mean
        effective and stable rank and reach index lie in [1, seq_len].

        Parameters
        ----------
        inputs_done : int, optional
            The number of inputs the run records; every count must equal it.
        tol : float
            Slack for round-off in the range checks.

        Raises
        ------
        ResultsError
            A check fails.
        """
        state = self.state()
        for name, a in state.items():
            if np.issubdtype(a.dtype, np.floating) and not np.all(np.isfinite(a)):
                raise ResultsError(f"finite check: '{name}' holds NaN or infinite values")
        # every input adds one matrix per (layer, head): every count equals inputs_done
        counts = {name: a for name, a in state.items() if name == "count" or name.endswith(".count")}
        for m in METRIC_TABLE:  # a metric of P itself: add() may omit it (no P), then it holds no sample
            if m.needs_p and not counts.get(f"{m.name}.count", np.ones(1)).any():
                counts.pop(f"{m.name}.count")
        values = np.unique(np.concatenate([a.ravel() for a in counts.values()])) if counts else np.array([])
        if np.any(values < 0):
            raise ResultsError("count check: negative counts")
        if len(values) > 1:
            raise ResultsError(
                f"count check: the statistics disagree on how many matrices they hold ({values[:4].tolist()})"
            )
        if inputs_done is not None and len(values) and values[0] != inputs_done:
            raise ResultsError(
                f"count check: the statistics hold {values[0]} matrices per head, but the state "
                f"records {inputs_done} inputs done"
            )
        seen = self.curves.count > 0  # (L, H)
        if not seen.any():
            return
        mean = self.curves.mean[seen]  # (m, n)
        if mean.min() < -tol or mean.max() > 1 + tol:
            raise ResultsError(
                f"range check: a mean cumulative value lies outside [0, 1] (min {mean.min():.6g}, max {mean.max():.6g})"
            )
        if np.any(np.diff(mean, axis=-1) < -tol):
            raise ResultsError("range check: a mean cumulative curve decreases")
        if np.any(np.abs(mean[:, -1] - 1) > 1e-6):
            raise ResultsError("range check: a mean cumulative curve does not end at 1")
        scale = np.maximum(1.0, self.curves.count[seen].max())
        if np.any(self.curves.m2[seen] < -tol * scale):
            raise ResultsError("range check: negative squared deviations in 'm2'")
        for name, mom in self.curve_stats.items():  # energy and tail curves: the same invariants
            if name == "curve":
                continue
            m = mom.mean[seen]
            if (
                m.min() < -tol
                or m.max() > 1 + tol
                or np.any(np.diff(m, axis=-1) < -tol)
                or np.any(np.abs(m[:, -1] - 1) > 1e-6)
            ):
                raise ResultsError(f"range check: a mean {name} curve leaves [0, 1], decreases or does not end at 1")
            if np.any(mom.m2[seen] < -tol * scale):
                raise ResultsError(f"range check: negative squared deviations in '{name}.m2'")
        n = self.shape[2]
        for name, mom in self.metrics.items():
            m = mom.mean[mom.count > 0]
            low, high = (0.0, 1.0) if name in self.UNIT_METRICS else (1.0, float(n))
            if m.size and (m.min() < low - 1e-6 or m.max() > high + 1e-6):
                raise ResultsError(
                    f"range check: mean {name} outside [{low:g}, {high:g}] (min {m.min():.6g}, max {m.max():.6g})"
                )
            if np.any(mom.m2 < -tol * scale):
                raise ResultsError(f"range check: negative squared deviations in '{name}.m2'")

    # -- output ------------------------------------------------------------------------
    def tables(self) -> SpectrumTables:
        """The run's tables: ``spectrum`` (one row per layer, head, index), ``metrics`` (one
        row per layer, head) and ``inputs`` (:meth:`inputs_table`).

        Returns
        -------
        SpectrumTables
        """
        L, H, n = self.shape
        layer, head, index = np.meshgrid(np.arange(L), np.arange(H), np.arange(1, n + 1), indexing="ij")
        count = np.broadcast_to(self.curves.count[:, :, None], self.shape)
        columns = {
            "layer": layer.ravel(),
            "head": head.ravel(),
            "index": index.ravel(),
            "mean": self.curves.mean.ravel(),
            "std": self.curves.std().ravel(),
            "count": count.ravel(),
        }
        for name, mom in self.curve_stats.items():
            if name != "curve":
                columns[f"{name}_mean"] = mom.mean.ravel()
                columns[f"{name}_std"] = mom.std().ravel()
        spectrum = pd.DataFrame(columns)
        lh_layer, lh_head = np.meshgrid(np.arange(L), np.arange(H), indexing="ij")
        metrics = pd.DataFrame({"layer": lh_layer.ravel(), "head": lh_head.ravel(), "count": self.curves.count.ravel()})
        mean_curve = torch.from_numpy(self.curves.mean)
        metrics[f"index_at_{REACH_LEVEL:g}_of_mean_curve"] = reach_index(mean_curve).numpy().ravel()
        for name in self.METRICS:  # a metric not held keeps its columns, empty, so that readers find them
            mom = self.metrics.get(name)
            metrics[f"{name}_mean"] = np.where(mom.count > 0, mom.mean, np.nan).ravel() if mom else np.nan
            metrics[f"{name}_std"] = mom.std().ravel() if mom else np.nan
        metrics.loc[metrics["count"] == 0, f"index_at_{REACH_LEVEL:g}_of_mean_curve"] = -1
        return SpectrumTables(spectrum=spectrum, metrics=metrics, inputs=self.inputs_table())

    def inputs_table(self) -> pd.DataFrame:
        """One row per (input, layer): the :attr:`PER_INPUT` metrics averaged over heads.

        Returns
        -------
        pandas.DataFrame
            ``input`` (the position in the run's selection), ``layer``, then one column per
            :attr:`PER_INPUT` metric.
        """
        m, L = self.input_index.size, self.shape[0]
        frame = pd.DataFrame({"input": np.repeat(self.input_index, L), "layer": np.tile(np.arange(L), m)})
        for name in self.PER_INPUT:
            frame[name] = self.per_input[name].ravel() if name in self.per_input else np.nan
        return frame


def _held_metrics(state: dict[str, np.ndarray]) -> tuple[str, ...]:
    """The table's metrics a saved state holds: its ``metric_names``, else (version 1) those
    whose count it stores."""
    if "metric_names" in state:
        named = {str(v) for v in np.atleast_1d(state["metric_names"])}
    else:
        named = {name for name in SpectrumAccumulator.METRICS if f"{name}.count" in state}
    return tuple(name for name in SpectrumAccumulator.METRICS if name in named)


def merge_accumulators(accs: Sequence[SpectrumAccumulator]) -> SpectrumAccumulator:
    """Merge the shards of one run into a new aggregate (:meth:`SpectrumAccumulator.merge`).

    Parameters
    ----------
    accs : sequence of SpectrumAccumulator
        The shards, at least one, of the same shape and rank tolerance.

    Returns
    -------
    SpectrumAccumulator

    Raises
    ------
    ResultsError
        No shard, or shards that cannot be merged.
    """
    if not accs:
        raise ResultsError("nothing to merge")
    held = [name for name in SpectrumAccumulator.METRICS if all(name in a.metrics for a in accs)]
    out = SpectrumAccumulator(*accs[0].shape, rank_tol=accs[0].rank_tol, metrics=held)
    for a in accs:
        out.merge(a)
    return out
