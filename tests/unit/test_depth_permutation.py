"""Every depth statement rests on one test: the permutation test of Spearman's ρ over a model's
layer means (exact up to 8 layers, seeded draws above), worded by one rule."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from attnspec.numerics.depth import DepthTrend, depth_permutation_test, depth_phrase, depth_sentence


def test_six_layer_means_with_rho_083_give_p_0058_over_720_orderings() -> None:
    # ranks (1, 0, 3, 2, 5, 4): Σd² = 6, ρ = 1 − 6·6/210 = 0.829; 42 of 720 orderings reach |ρ| ≥ 0.829
    trend = depth_permutation_test(np.array([0.80, 0.74, 0.86, 0.83, 0.98, 0.91]))
    assert trend.exact and trend.orderings == 720 and trend.layers == 6
    assert trend.rho == pytest.approx(0.8286, abs=1e-4)
    assert trend.p == pytest.approx(42 / 720)


def test_exact_p_equals_brute_force_enumeration_with_ties() -> None:
    y = np.array([0.3, 0.1, 0.3, 0.2, 0.5])
    trend = depth_permutation_test(y)
    rho = stats.spearmanr(np.arange(5), y).statistic
    null = [stats.spearmanr(np.arange(5), y[list(p)]).statistic for p in itertools.permutations(range(5))]
    assert trend.rho == pytest.approx(rho)
    assert trend.p == pytest.approx(np.mean(np.abs(null) >= abs(rho) - 1e-12))


def test_many_layers_draw_seeded_orderings() -> None:
    y = np.sin(np.arange(30) / 3.0)
    a, b = depth_permutation_test(y, seed=3), depth_permutation_test(y, seed=3)
    assert a == b and not a.exact and a.orderings == 10_000
    assert depth_permutation_test(np.arange(30.0)).p == pytest.approx(1 / 10_001)


@pytest.mark.parametrize("bad", [np.array([0.1, 0.2, 0.3]), np.array([0.1, np.nan, 0.2, 0.3]), np.ones(5)])
def test_too_few_non_finite_or_constant_means_are_refused(bad: np.ndarray) -> None:
    with pytest.raises(ValueError, match="layer_means"):
        depth_permutation_test(bad)


@pytest.mark.parametrize(
    ("rho", "p", "phrase"),
    [
        (0.9, 0.01, "rises with depth"),
        (-0.9, 0.049, "falls with depth"),
        (0.83, 0.058, "suggestive rise with depth"),
        (-0.8, 0.09, "suggestive fall with depth"),
        (0.09, 0.65, "no trend shown"),
        (0.7, 0.1, "no trend shown"),
    ],
)
def test_one_wording_per_p(rho: float, p: float, phrase: str) -> None:
    trend = DepthTrend(rho=rho, p=p, layers=6, orderings=720, exact=True)
    assert depth_phrase(trend) == phrase
    sentence = depth_sentence("c at n/4", trend)
    assert "this model on this corpus" in sentence and "720 orderings of 6 layer means" in sentence
    if phrase == "no trend shown":
        assert "no trend shown" in sentence and "rise" not in sentence and "fall" not in sentence
    else:
        assert phrase in sentence
