"""The metric c_centred: C = P minus its mean row, its curve at n/4, per head in every spectrum run."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from attnspec.spectra.aggregate import SpectrumAccumulator
from attnspec.spectra.centred import centre_rows, centred_curve, centred_curve_at, centred_stack
from attnspec.spectra.engine import singular_values
from attnspec.spectra.job import _Sink
from attnspec.spectra.reading import default_at


def _stochastic(b: int, h: int, n: int, lengths: list[int], seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Row-stochastic P on each input's real block, zero padding, and its mask (B, n)."""
    g = torch.Generator().manual_seed(seed)
    p = torch.zeros(b, h, n, n, dtype=torch.float64)
    mask = torch.zeros(b, n, dtype=torch.bool)
    for i, length in enumerate(lengths):
        logits = 3 * torch.randn(h, length, length, generator=g, dtype=torch.float64)
        p[i, :, :length, :length] = torch.softmax(logits, dim=-1)
        mask[i, :length] = True
    return p, mask


def test_the_stack_is_each_inputs_real_block_centred_and_zero_extended():
    p, mask = _stochastic(2, 3, 8, [8, 5])
    c = centred_stack(p, mask)  # (2, 3, 8, 8)
    np.testing.assert_allclose(c[0].numpy(), centre_rows(p[0].numpy()), atol=1e-15)
    np.testing.assert_allclose(c[1, :, :5, :5].numpy(), centre_rows(p[1, :, :5, :5].numpy()), atol=1e-15)
    assert not c[1, :, 5:].any() and not c[1, :, :, 5:].any()  # padding stays zero
    sv = singular_values(c, "lapack")  # (2, 3, 8): C's values, then zeros
    direct = np.linalg.svd(centre_rows(p[1, :, :5, :5].numpy()), compute_uv=False)  # (3, 5)
    np.testing.assert_allclose(sv[1, :, :5].numpy(), direct, atol=1e-12)
    assert float(sv[1, :, 5:].abs().max()) < 1e-12


def test_c_centred_is_the_centred_curve_at_the_reading_index():
    p, mask = _stochastic(3, 2, 16, [16, 16, 16], seed=1)
    at = default_at(16)
    sv = singular_values(centred_stack(p, mask), "lapack")
    np.testing.assert_allclose(
        centred_curve_at(sv, at).numpy(), centred_curve(p.numpy())[..., at - 1], rtol=1e-12, atol=1e-12
    )
    uniform = torch.full((1, 1, 16, 16), 1 / 16, dtype=torch.float64)
    assert float(centred_curve_at(singular_values(centred_stack(uniform), "lapack"), at)) == 1.0  # C = 0
    with pytest.raises(ValueError, match="at must be in 1..16, got 0"):
        centred_curve_at(sv, 0)

    acc = SpectrumAccumulator(1, 2, 16)
    acc.add_batch([(0, singular_values(p, "lapack"), None, sv)], [0, 1, 2])
    got = acc.tables().metrics["c_centred_mean"].to_numpy()  # (heads,)
    np.testing.assert_allclose(got, centred_curve(p.numpy())[..., at - 1].mean(axis=0), rtol=1e-12)
    acc.verify(3)


def test_a_caller_without_p_leaves_c_centred_empty_and_the_state_valid():
    p, _ = _stochastic(2, 2, 8, [8, 8])
    acc = SpectrumAccumulator(1, 2, 8)
    acc.add_batch([(0, singular_values(p, "lapack"), None)], [0, 1])  # a null's draw: no P, no C
    acc.verify(2)
    metrics = acc.tables().metrics
    assert metrics["c_centred_mean"].isna().all() and metrics["stable_rank_mean"].notna().all()


def test_the_spectrum_sink_records_c_centred_beside_bit_identical_metrics():
    p, mask = _stochastic(2, 3, 12, [12, 9], seed=2)
    sink = _Sink("tiny", "lapack", [None], [False])
    sink(SimpleNamespace(layer=0, probs=p, mask=mask))
    (layer, sv, entropy, centred), *_ = sink.pending
    assert layer == 0 and torch.equal(sv, singular_values(p, "lapack"))  # P's own spectrum untouched
    with_c, without = SpectrumAccumulator(1, 3, 12), SpectrumAccumulator(1, 3, 12)
    with_c.add_batch(sink.pending, [0, 1])
    without.add_batch([(layer, sv, entropy)], [0, 1])
    a, b = with_c.tables().metrics, without.tables().metrics
    for name in SpectrumAccumulator.METRICS:
        if name != "c_centred":
            assert a[f"{name}_mean"].equals(b[f"{name}_mean"])  # every other metric, bit for bit
    real = centred_curve(p[1, :, :9, :9].numpy())[..., default_at(12) - 1]  # input 1's real 9 × 9 block
    want = (centred_curve(p[0].numpy())[..., default_at(12) - 1] + real) / 2
    np.testing.assert_allclose(a["c_centred_mean"].to_numpy(), want, rtol=1e-12)


def test_a_run_saved_without_c_centred_says_so_in_one_line_and_resumes():
    p, mask = _stochastic(2, 2, 8, [8, 8], seed=3)
    sv, centred = singular_values(p, "lapack"), singular_values(centred_stack(p, mask), "lapack")
    full = SpectrumAccumulator(1, 2, 8)
    full.add_batch([(0, sv, None, centred)], [0, 1])
    state = {
        k: v
        for k, v in full.state().items()
        if not k.startswith("c_centred.") and k not in ("metric_names", "state_version")
    }
    older = SpectrumAccumulator.from_state(state)  # saved by an attnspec without the metric
    assert older.absent == ("c_centred",) and older.absent_note.count("\n") == 0 and "c_centred" in older.absent_note
    older.add_batch([(0, sv, None, centred)], [2, 3])  # resumed: the metric stays absent, the rest goes on
    older.verify(4)
    assert older.tables().metrics["c_centred_mean"].isna().all()
