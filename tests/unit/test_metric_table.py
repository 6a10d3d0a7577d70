"""The metrics table: the accumulator computes, saves and merges exactly its metrics; a state
saved without one is read, resumed and merged without it."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnspec.errors import InputError
from attnspec.spectra.aggregate import SpectrumAccumulator, merge_accumulators
from attnspec.spectra.metric_table import METRIC_TABLE, STATE_VERSION, metric, metric_frame, metric_names

L, H, N = 2, 3, 8


def _batch(seed: int, b: int = 4) -> list[tuple[int, torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(seed)
    out = []
    for layer in range(L):
        sv = torch.rand(b, H, N, generator=g, dtype=torch.float64).sort(dim=-1, descending=True).values + 1e-3
        out.append((layer, sv, torch.rand(b, H, generator=g, dtype=torch.float64)))
    return out


def _filled(seed: int, start: int, **kw) -> SpectrumAccumulator:
    acc = SpectrumAccumulator(L, H, N, **kw)
    acc.add_batch(_batch(seed), range(start, start + 4))
    return acc


def _older(state: dict[str, np.ndarray], dropped: str) -> dict[str, np.ndarray]:
    """A version-1 state (no metric_names) saved before ``dropped`` existed."""
    return {
        k: v for k, v in state.items() if not k.startswith(f"{dropped}.") and k not in ("metric_names", "state_version")
    }


def test_the_table_is_what_the_accumulator_holds() -> None:
    acc = _filled(0, 0)
    assert tuple(acc.metrics) == metric_names() == SpectrumAccumulator.METRICS
    assert set(SpectrumAccumulator.PER_INPUT) == {m.name for m in METRIC_TABLE if m.per_input}
    frame = metric_frame()
    assert list(frame.columns) == ["name", "of", "range", "per_input"] and len(frame) == len(METRIC_TABLE)
    assert metric("row_entropy").range == "[0, 1]" and metric("stable_rank").range == "[1, n]"
    with pytest.raises(InputError, match="unknown metric 'rank'"):
        metric("rank")
    state = acc.state()
    assert int(state["state_version"]) == STATE_VERSION and list(state["metric_names"]) == list(metric_names())
    acc.verify(4)


def test_a_state_without_a_metric_is_read_resumed_and_reported_in_one_line() -> None:
    full = _filled(0, 0)
    older = SpectrumAccumulator.from_state(_older(full.state(), "stable_rank"))
    assert older.absent == ("stable_rank",)
    assert older.absent_note.count("\n") == 0 and "stable_rank" in older.absent_note
    assert full.absent == () and full.absent_note is None
    older.add_batch(_batch(1), range(4, 8))  # resumed: the later inputs add to the metrics it holds
    full.add_batch(_batch(1), range(4, 8))
    older.verify(8)
    a, b = full.tables().metrics, older.tables().metrics
    assert b["stable_rank_mean"].isna().all() and a["stable_rank_mean"].notna().all()
    np.testing.assert_allclose(a["effective_rank_mean"], b["effective_rank_mean"], rtol=0, atol=0)
    again = SpectrumAccumulator.from_state(older.state())  # saved again: it still says what it lacks
    assert again.absent == ("stable_rank",) and list(again.state()["metric_names"]) == list(older.metrics)


def test_shards_with_and_without_a_metric_merge_without_it() -> None:
    with_it, without = _filled(0, 0), SpectrumAccumulator.from_state(_older(_filled(1, 4).state(), "reach_index"))
    merged = merge_accumulators([with_it, without])
    assert merged.absent == ("reach_index",) and "reach_index" not in merged.per_input
    whole = merge_accumulators([_filled(0, 0), _filled(1, 4)])
    np.testing.assert_allclose(
        merged.metrics["stable_rank"].mean, whole.metrics["stable_rank"].mean, rtol=0, atol=1e-15
    )
    merged.verify(8)
    inputs = merged.inputs_table()
    assert inputs["reach_index"].isna().all() and inputs["effective_rank"].notna().all()


def test_an_unknown_metric_is_refused() -> None:
    with pytest.raises(InputError, match=r"unknown metrics \['rank'\]"):
        SpectrumAccumulator(L, H, N, metrics=["rank"])
