"""Spectrum engine and accumulator: accuracy against float64 SVD, exact statistics, merges."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from attnspec.errors import InputError, ResultsError
from attnspec.spectra import aggregate, checkpoint, engine, metrics


def _softmax_stack(m: int, n: int, temperature: float, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.softmax(torch.randn(m, n, n, generator=g) * temperature, dim=-1)


def _hard_cases(n: int) -> torch.Tensor:
    """Matrices whose spectra stress the Gram route: near rank one, identity, uniform, peaked."""
    g = torch.Generator().manual_seed(7)
    rank_one = torch.softmax(torch.randn(1, n, generator=g).repeat(n, 1) + 1e-4 * torch.randn(n, n, generator=g), -1)
    eye = torch.softmax(torch.eye(n) * 30, -1)
    uniform = torch.full((n, n), 1.0 / n)
    peaked = torch.softmax(torch.randn(n, n, generator=g) * 25, -1)
    return torch.stack([rank_one, eye, uniform, peaked])


def _reference_curves(p: torch.Tensor) -> np.ndarray:
    x = p.double().numpy()
    sv = np.linalg.svd(x, compute_uv=False)  # float64 SVD, descending
    return np.cumsum(sv, axis=-1) / sv.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("method", ["svd", "gram", "gram32", "lapack", "auto"])
@pytest.mark.parametrize("n", [16, 96, 200])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_curves_within_1e4_of_float64_svd(method: str, n: int, dtype: torch.dtype) -> None:
    p = torch.cat([_softmax_stack(6, n, t, seed=n) for t in (0.5, 3.0, 10.0)] + [_hard_cases(n)]).to(dtype)
    curves = metrics.cumulative_curve(engine.singular_values(p, method)).numpy()
    err = np.abs(curves - _reference_curves(p)).max()
    assert err < 1e-4
    if method == "gram" or dtype == torch.float64:
        assert err < 1e-6  # float64 throughout: error ~ sqrt(eps64)·σ1 for gram, ~eps64 otherwise


def _without(monkeypatch: pytest.MonkeyPatch, *routines: str) -> None:
    real = engine._lapack
    monkeypatch.setattr(engine, "_lapack", lambda r: None if r in routines else real(r))


def test_fallbacks_without_scipys_openblas(monkeypatch: pytest.MonkeyPatch) -> None:
    p = torch.cat([_softmax_stack(4, 64, 4.0, seed=3), _hard_cases(64)])
    _without(monkeypatch, "sgesdd", "dgesdd", "dsyevd_2stage")
    assert engine.resolve_method("auto", "cpu") == "svd"
    for method in ("auto", "gram"):
        curves = metrics.cumulative_curve(engine.singular_values(p, method)).numpy()
        assert np.abs(curves - _reference_curves(p)).max() < 1e-4
    with pytest.raises(InputError, match="lapack needs SciPy"):
        engine.singular_values(p, "lapack")


def test_auto_is_gram_on_cuda() -> None:
    # Chosen by measurement on an H200 (benchmarks/device_check.json): faster and exact to 1e-10.
    assert engine.resolve_method("auto", "cuda") == "gram"


def test_lapack_routines_are_found_on_this_machine() -> None:
    # Documents which path the CPU default takes here; the fallbacks are tested above.
    if engine._lapack("sgesdd") is None:
        pytest.skip("SciPy without a bundled OpenBLAS on this machine")
    assert engine.resolve_method("auto", "cpu") == "lapack"
    g = np.array([[2.0, 1.0], [1.0, 2.0]])
    assert np.allclose(engine._eigvalsh_2stage(g[None].copy(), workers=2), [[1.0, 3.0]])
    assert np.allclose(engine._svdvals_gesdd(g[None].astype(np.float32), workers=1), [[3.0, 1.0]])


def test_singular_values_shape_order_and_batch_dims() -> None:
    p = _softmax_stack(6, 20, 2.0, seed=0).reshape(2, 3, 20, 20)
    sv = engine.singular_values(p)
    assert sv.shape == (2, 3, 20) and sv.dtype == torch.float64
    assert bool((sv[..., :-1] >= sv[..., 1:] - 1e-12).all())
    # rectangular (cross-attention) stacks have min(r, c) values; a vector is no matrix
    assert engine.singular_values(torch.ones(3, 4)).shape == (3,)
    with pytest.raises(InputError, match="stack of matrices"):
        engine.singular_values(torch.ones(4))
    with pytest.raises(InputError, match="svd-method"):
        engine.singular_values(p, "randomized")


def test_metrics_on_known_spectra() -> None:
    n = 32
    eye = torch.eye(n, dtype=torch.float64)[None]
    sv = engine.singular_values(eye)
    assert torch.allclose(metrics.cumulative_curve(sv), torch.arange(1, n + 1, dtype=torch.float64) / n)
    assert metrics.effective_rank(sv).item() == pytest.approx(n)
    assert metrics.stable_rank(sv).item() == pytest.approx(n)
    assert metrics.reach_index(metrics.cumulative_curve(sv)).item() == int(np.ceil(0.9 * n))
    uniform = torch.full((1, n, n), 1.0 / n, dtype=torch.float64)  # rank one
    sv = engine.singular_values(uniform)
    assert metrics.effective_rank(sv).item() == pytest.approx(1.0, abs=1e-6)
    assert metrics.stable_rank(sv).item() == pytest.approx(1.0, abs=1e-9)
    assert metrics.reach_index(metrics.cumulative_curve(sv)).item() == 1


def _random_sv(batches: int, b: int, h: int, n: int, seed: int) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(batches):
        x = torch.rand(b, h, n, generator=g, dtype=torch.float64) ** 4
        out.append(x.sort(dim=-1, descending=True).values)
    return out


def test_accumulator_matches_direct_statistics() -> None:
    L, H, n = 2, 3, 10
    acc = aggregate.SpectrumAccumulator(L, H, n)
    batches = {layer: _random_sv(4, 5, H, n, seed=layer) for layer in range(L)}
    for layer in range(L):
        for sv in batches[layer]:
            acc.add(layer, sv)
    tables = acc.tables()
    df = tables.spectrum
    assert list(df.columns[:6]) == ["layer", "head", "index", "mean", "std", "count"]
    assert len(df) == L * H * n and (df["count"] == 20).all() and df["index"].min() == 1
    for layer in range(L):
        curves = metrics.cumulative_curve(torch.cat(batches[layer])).numpy()  # (20, H, n)
        got = df[df["layer"] == layer].sort_values(["head", "index"])
        np.testing.assert_allclose(got["mean"].to_numpy(), curves.mean(0).ravel(), rtol=0, atol=1e-14)
        np.testing.assert_allclose(got["std"].to_numpy(), curves.std(0, ddof=1).ravel(), rtol=1e-12, atol=1e-15)
        er = metrics.effective_rank(torch.cat(batches[layer])).numpy()
        m = tables.metrics[tables.metrics["layer"] == layer]
        np.testing.assert_allclose(m["effective_rank_mean"].to_numpy(), er.mean(0), rtol=1e-13)
        np.testing.assert_allclose(m["effective_rank_std"].to_numpy(), er.std(0, ddof=1), rtol=1e-11)


def test_shards_merge_to_the_single_run() -> None:
    L, H, n = 2, 2, 8
    sv = {layer: _random_sv(6, 3, H, n, seed=10 + layer) for layer in range(L)}
    whole = aggregate.SpectrumAccumulator(L, H, n)
    shards = [aggregate.SpectrumAccumulator(L, H, n) for _ in range(3)]
    for layer in range(L):
        for i, x in enumerate(sv[layer]):
            whole.add(layer, x)
            shards[i % 3].add(layer, x)
    merged = aggregate.merge_accumulators(shards)
    a, b = whole.tables(), merged.tables()
    np.testing.assert_array_equal(a.spectrum["count"], b.spectrum["count"])
    np.testing.assert_allclose(a.spectrum["mean"], b.spectrum["mean"], rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(a.spectrum["std"], b.spectrum["std"], rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(a.metrics.filter(like="_mean"), b.metrics.filter(like="_mean"), rtol=1e-13)
    with pytest.raises(ResultsError, match="cannot merge"):
        whole.merge(aggregate.SpectrumAccumulator(L, H, n + 1))


def test_state_round_trip(tmp_path) -> None:
    acc = aggregate.SpectrumAccumulator(1, 2, 5)
    for x in _random_sv(2, 3, 2, 5, seed=1):
        acc.add(0, x)
    checkpoint.save_state(tmp_path / "state.npz", acc, {"inputs_done": np.asarray(6)})
    back, extra = checkpoint.load_state(tmp_path / "state.npz")
    assert int(extra["inputs_done"]) == 6
    assert back.tables().spectrum.equals(acc.tables().spectrum)


def test_short_matrices_count_as_zero_extended() -> None:
    acc = aggregate.SpectrumAccumulator(1, 1, 6)
    acc.add(0, torch.tensor([[[3.0, 1.0]]], dtype=torch.float64))
    mean = acc.tables().spectrum["mean"].to_numpy()
    np.testing.assert_allclose(mean, [0.75, 1, 1, 1, 1, 1])
    with pytest.raises(InputError, match="shape"):
        acc.add(0, torch.ones(1, 1, 7, dtype=torch.float64))
    with pytest.raises(InputError, match="layer"):
        acc.add(3, torch.ones(1, 1, 6, dtype=torch.float64))


# --- metrics beyond the cumulative curve -------------------------------------------------
def _logit_softmax(b: int, h: int, n: int, seed: int, causal: bool = False) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    logits = 3 * torch.randn(b, h, n, n, generator=g, dtype=torch.float64)
    if causal:
        logits = logits.masked_fill(~torch.ones(n, n, dtype=torch.bool).tril(), float("-inf"))
    return logits.softmax(dim=-1)


@pytest.mark.parametrize("causal", [False, True])
def test_new_metrics_match_direct_numpy(causal: bool) -> None:
    p = _logit_softmax(2, 3, 7, seed=5, causal=causal)  # (B, H, n, n)
    sv = engine.singular_values(p, "svd")
    for b in range(2):
        for h in range(3):
            P = p[b, h].numpy()
            s = np.linalg.svd(P, compute_uv=False)
            e = np.cumsum(s**2) / np.sum(s**2)
            np.testing.assert_allclose(metrics.energy_curve(sv)[b, h].numpy(), e, rtol=1e-12)
            tail = np.concatenate([[0.0], np.cumsum(s[1:]) / s[1:].sum()])
            np.testing.assert_allclose(metrics.tail_curve(sv)[b, h].numpy(), tail, rtol=1e-12)
            assert metrics.sigma_ratio(sv)[b, h] == pytest.approx(s[1] / s[0], rel=1e-12)
            assert int(metrics.numerical_rank(sv, 0.05)[b, h]) == int((s > 0.05 * s[0]).sum())
            for k in range(8):  # Eckart–Young against an explicit truncated SVD
                u, ss, vt = np.linalg.svd(P)
                pk = (u[:, :k] * ss[:k]) @ vt[:k]
                direct = np.linalg.norm(P - pk) / np.linalg.norm(P)
                assert float(metrics.eckart_young_error(sv[b, h], k)) == pytest.approx(direct, abs=1e-12)
            for eps in (0.1, 0.2, 0.5):
                errs = np.sqrt(np.maximum(1 - e, 0))
                assert int(metrics.rank_for_error(sv, eps)[b, h]) == int(np.argmax(errs <= eps)) + 1
            # row entropy normalised by log of each row's length; causal rows have i + 1 entries
            ents = []
            for i in range(7):
                row = P[i, : i + 1] if causal else P[i]
                if row.size < 2:
                    continue
                ents.append(-(row * np.log(row)).sum() / np.log(row.size))
            assert float(metrics.row_entropy(p, causal=causal)[b, h]) == pytest.approx(np.mean(ents), rel=1e-5)


def test_row_entropy_padding_and_degenerate_rows() -> None:
    p = torch.zeros(2, 1, 4, 4)
    p[0, 0, :3, :3] = 1 / 3  # uniform over 3 real tokens, one padding position
    p[1, 0, 0, 0] = 1.0  # a one-token input
    mask = torch.tensor([[1, 1, 1, 0], [1, 0, 0, 0]], dtype=torch.bool)
    got = metrics.row_entropy(p, mask)
    np.testing.assert_allclose(got.numpy(), [[1.0], [1.0]], rtol=1e-6)
    onehot = torch.eye(4).expand(1, 1, 4, 4)
    assert float(metrics.row_entropy(onehot)) == 0.0


def test_row_entropy_workspace_gives_the_same_bits() -> None:
    # The job reuses one buffer for every layer; a larger buffer from an earlier, longer
    # input is used in part. Padding, causality and stale contents must not leak in.
    workspace = torch.full((3 * 2 * 9 * 9 + 17,), float("nan"))
    for causal in (False, True):
        p = _logit_softmax(3, 2, 9, seed=5, causal=causal)
        mask = torch.ones(3, 9, dtype=torch.bool)
        mask[1, 6:] = False
        p = p * (mask[:, None, :, None] & mask[:, None, None, :])
        plain = metrics.row_entropy(p, mask, causal=causal)
        reused = metrics.row_entropy(p, mask, causal=causal, workspace=workspace)
        assert torch.equal(plain, reused)
    for size in (9, 9 * 4 + 5, 9 * 9 * 3):  # one row, a few rows (the last piece shorter), a whole head
        assert torch.equal(
            metrics.row_entropy(p, mask, workspace=torch.full((size,), float("nan"))), metrics.row_entropy(p, mask)
        )
    small = torch.empty(8)  # shorter than a row, or of another dtype: ignored rather than overrun
    assert torch.equal(metrics.row_entropy(p, mask, workspace=small), metrics.row_entropy(p, mask))
    assert torch.equal(metrics.row_entropy(p, mask, workspace=workspace.double()), metrics.row_entropy(p, mask))


def test_new_statistics_merge_exactly_and_survive_state(tmp_path) -> None:
    L, H, n = 2, 2, 6
    whole = aggregate.SpectrumAccumulator(L, H, n, rank_tol=0.01)
    shards = [aggregate.SpectrumAccumulator(L, H, n, rank_tol=0.01) for _ in range(2)]
    for i in range(4):
        items = []
        for layer in range(L):
            p = _logit_softmax(3, H, n, seed=100 * i + layer)
            items.append((layer, engine.singular_values(p, "svd"), metrics.row_entropy(p)))
        idx = np.arange(3 * i, 3 * i + 3)
        whole.add_batch(items, idx)
        shards[i % 2].add_batch(items, idx)
    merged = aggregate.merge_accumulators(shards[::-1])
    a, b = whole.tables(), merged.tables()
    for col in ("energy_mean", "energy_std", "tail_mean", "tail_std"):
        np.testing.assert_allclose(a.spectrum[col], b.spectrum[col], rtol=1e-12, atol=1e-14)
    for name in aggregate.SpectrumAccumulator.METRICS:
        np.testing.assert_allclose(a.metrics[f"{name}_mean"], b.metrics[f"{name}_mean"], rtol=1e-12)
        np.testing.assert_allclose(a.metrics[f"{name}_std"], b.metrics[f"{name}_std"], rtol=1e-9)
    pd.testing.assert_frame_equal(a.inputs, b.inputs)
    assert len(a.inputs) == 12 * L and a.inputs["input"].is_monotonic_increasing
    checkpoint.save_state(tmp_path / "s.npz", merged)
    back, _ = checkpoint.load_state(tmp_path / "s.npz")
    assert back.rank_tol == 0.01
    pd.testing.assert_frame_equal(back.tables().metrics, b.metrics)
    pd.testing.assert_frame_equal(back.tables().inputs, b.inputs)
    with pytest.raises(ResultsError, match="rank_tol"):
        whole.merge(aggregate.SpectrumAccumulator(L, H, n))
    with pytest.raises(ResultsError, match="share inputs"):
        whole.merge(shards[0])


@pytest.mark.parametrize("method", ["svd", "lapack", "gram", "gram32"])
def test_singular_values_of_rectangular_cross_attention(method: str) -> None:
    """Cross-attention P is n_dec × n_enc: min(n_dec, n_enc) singular values, both orientations."""
    g = torch.Generator().manual_seed(4)
    for shape in ((2, 3, 5, 9), (2, 3, 9, 5)):
        p = torch.softmax(torch.randn(*shape, generator=g), dim=-1)
        got = engine.singular_values(p, method)
        assert got.shape == (2, 3, 5)
        want = np.linalg.svd(p.double().numpy(), compute_uv=False)
        np.testing.assert_allclose(got.numpy(), want, rtol=0, atol=1e-6)


def test_row_entropy_of_float64_p_is_computed_in_float64() -> None:
    g = torch.Generator().manual_seed(0)
    p = torch.softmax(torch.randn(1, 2, 64, 64, generator=g, dtype=torch.float64) * 3, dim=-1)
    ent = -(p * p.log()).sum(-1) / torch.log(torch.tensor(64.0, dtype=torch.float64))  # (1, 2, 64)
    exact = ent.mean(-1)
    got = metrics.row_entropy(p)
    assert float((got - exact).abs().max()) < 1e-13  # float32 summation is off by about 1e-7
    assert float((metrics.row_entropy(p.float()) - exact).abs().max()) > 1e-12  # the float32 path, for contrast
    workspace = torch.empty(1 << 12, dtype=torch.float64)
    assert torch.equal(metrics.row_entropy(p, workspace=workspace), got)
