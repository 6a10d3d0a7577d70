"""Null baselines: the uniform closed form, the entropy match, masks, seeds, names, and the
real-against-null reading of a scaling study."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from attnspec.errors import InputError
from attnspec.spectra.baselines import (
    allowed_positions,
    calibration_curve,
    null_accumulator,
    softmax_null,
    uniform_matrix,
)
from attnspec.spectra.nulls import parse_baselines


def test_names_parse_from_commas_and_repeats_and_bad_names_are_refused() -> None:
    assert parse_baselines(None) == []
    assert parse_baselines("entropy-matched,uniform") == ["entropy-matched", "uniform"]
    assert parse_baselines(["uniform", "entropy-matched"]) == ["uniform", "entropy-matched"]
    with pytest.raises(InputError, match="one of entropy-matched, uniform, random-init .*'random'"):
        parse_baselines("uniform,random")
    with pytest.raises(InputError, match="twice"):
        parse_baselines(["uniform", "uniform"])


def test_uniform_null_is_rank_one_bidirectional_and_the_triangular_matrix_causal() -> None:
    acc, _ = null_accumulator("uniform", np.full((2, 3), np.nan), 16, [False, True], [None, None], seed=0)
    m = acc.tables().metrics
    assert (m.loc[m["layer"] == 0, "reach_index_mean"] == 1).all()  # (1/n)·11ᵀ: one singular value
    assert np.allclose(m["row_entropy_mean"], 1.0)  # every row uniform over its allowed positions
    tri = np.tril(np.ones((16, 16))) / np.arange(1, 17)[:, None]
    sv = np.linalg.svd(tri, compute_uv=False)
    c = np.cumsum(sv) / sv.sum()
    k90 = int(np.argmax(c >= 0.9) + 1)
    assert (m.loc[m["layer"] == 1, "reach_index_mean"] == k90).all() and k90 > 1
    assert acc.input_index.tolist() == [0]  # deterministic: one matrix per layer


def test_window_and_causal_mask_are_respected() -> None:
    allowed = allowed_positions(6, True, 2)
    assert allowed.sum(dim=1).tolist() == [1, 2, 2, 2, 2, 2]
    p = uniform_matrix(6, True, 2)
    assert torch.allclose(p.sum(dim=1), torch.ones(6, dtype=torch.float64)) and (p[~allowed] == 0).all()
    g = torch.randn(1, 2, 6, 6, generator=torch.Generator().manual_seed(0))
    q = softmax_null(g, torch.tensor([0.5, 3.0]), allowed)
    assert (q[..., ~allowed] == 0).all() and torch.allclose(q.sum(-1), torch.ones(1, 2, 6))


@pytest.mark.parametrize("causal", [False, True])
def test_entropy_matched_null_reaches_each_heads_entropy(causal: bool) -> None:
    _, ent = calibration_curve(64, causal, None, seed=0)
    assert ent[0] == pytest.approx(1.0, abs=1e-6) and np.all(np.diff(ent) <= 0) and ent[-1] < 0.05
    targets = np.array([[0.95, 0.8, 0.6], [0.4, 0.25, 0.1]])  # (L, H)
    acc, how = null_accumulator("entropy-matched", targets, 64, [causal] * 2, [None] * 2, seed=3, draws=4)
    m = acc.tables().metrics.merge(how, on=["layer", "head"])
    # the entropy the nulls reach, measured on their own draws, is the target (calibrated on other draws)
    assert np.abs(m["row_entropy_mean"] - m["target_row_entropy"]).max() < 0.03
    assert np.all(np.diff(m.sort_values("target_row_entropy")["logit_scale"].to_numpy()) < 0)  # lower entropy, larger σ
    # more concentrated rows give a more concentrated spectrum
    k = m.sort_values("target_row_entropy")["reach_index_mean"].to_numpy()
    assert k[0] < k[-1]


def test_entropy_matched_null_is_seeded() -> None:
    targets = np.array([[0.7, 0.5]])
    a = null_accumulator("entropy-matched", targets, 24, [False], [None], seed=1, draws=2)[0].tables().metrics
    b = null_accumulator("entropy-matched", targets, 24, [False], [None], seed=1, draws=2)[0].tables().metrics
    c = null_accumulator("entropy-matched", targets, 24, [False], [None], seed=2, draws=2)[0].tables().metrics
    assert a.equals(b) and not np.allclose(a["effective_rank_mean"], c["effective_rank_mean"])


def _comparison(real_beta: tuple[float, float, float], null_beta: tuple[float, float, float]) -> pd.DataFrame:
    from attnspec.spectra.scaling_fit import verdict

    rows = [
        {
            "source": "real",
            "metric": "reach_index",
            "beta": real_beta[0],
            "low": real_beta[1],
            "high": real_beta[2],
            "resampled": "inputs (documents, jointly across lengths)",
            "share_n64": 0.35,
            "share_n128": 0.32,
            "verdict": verdict(real_beta[1], real_beta[2]),
        },
        {
            "source": "entropy-matched",
            "metric": "reach_index",
            "beta": null_beta[0],
            "low": null_beta[1],
            "high": null_beta[2],
            "resampled": "draws of the null (jointly across lengths)",
            "share_n64": 0.64,
            "share_n128": 0.63,
            "verdict": verdict(null_beta[1], null_beta[2]),
        },
    ]
    t = pd.DataFrame(rows)
    t["share_ratio"] = 0.32 / t["share_n128"]
    return t


def test_a_null_with_the_same_exponent_is_said_in_the_same_sentence() -> None:
    from attnspec.spectra.scaling_fit import null_sentence

    same = null_sentence(_comparison((0.99, 0.985, 0.994), (1.0, 0.99, 1.01)))
    assert "this model on this corpus" in same and "resampling inputs" in same
    assert "the same exponent" in same and "0.32 against 0.63 for the entropy-matched null (real/null = 0.51)" in same
    apart = null_sentence(_comparison((0.5, 0.4, 0.6), (1.0, 0.99, 1.01)))
    assert "the same exponent" not in apart and "does not tell" not in apart
    # intervals apart but both read "grows about linearly": still said in the same sentence
    near = null_sentence(_comparison((0.98, 0.97, 0.99), (1.01, 1.006, 1.010)))
    assert "the same exponent" not in near and "read alike (grows about linearly" in near


def test_intervals_never_print_alike() -> None:
    from attnspec.numerics.stats import format_interval

    assert format_interval(0.9912, 0.9938) == "[0.991, 0.994]"
    assert format_interval(0.42, 0.74) == "[0.42, 0.74]"
    assert format_interval(0.5, 0.5, exact=True) == "exact"
    assert "zero width" in format_interval(0.5, 0.5)
    assert format_interval(-0.02, 0.87, signed=True) == "[-0.02, +0.87]"
