"""Reduced samplers against the direct (materialise-R) samplers, on small cases.

Each comparison is a two-sample Kolmogorov–Smirnov test with fixed seeds: the reduced
sampler must be indistinguishable in law from the direct one (p > 1e-3). A wrong
reduction (a missing factor, a wrong scale) fails these by orders of magnitude.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from attnspec.errors import InputError
from attnspec.theory.linformer import samplers as S
from attnspec.theory.linformer import theorem1 as T1
from attnspec.theory.linformer import theorem1_samplers as S1
from attnspec.theory.linformer import theorem2_samplers as S2

P_MIN = 1e-3


def _ks(a: np.ndarray, b: np.ndarray) -> float:
    # rounding: discrete laws give the same atom through different float paths
    return float(stats.ks_2samp(np.round(a, 9), np.round(b, 9), method="asymp").pvalue)


@pytest.mark.parametrize("family", S.FAMILIES)
def test_projection_matrix_shapes_and_isotropy(family: str) -> None:
    n, k = 12, 5
    Rs = np.stack([S.projection_matrix(family, k, n, seed=s) for s in range(400)])  # (400, k, n)
    assert Rs.shape == (400, k, n)
    gram = np.einsum("tki,tkj->ij", Rs, Rs) / 400  # mean of RᵀR, should be I
    assert np.abs(gram - np.eye(n)).max() < 0.25
    if family == "orthogonal":
        # rows orthonormal up to sqrt(n/k)
        np.testing.assert_allclose(Rs[0] @ Rs[0].T, (n / k) * np.eye(k), atol=1e-10)


def test_projection_matrix_is_seeded() -> None:
    a = S.projection_matrix("sparse", 4, 50, seed=3)
    b = S.projection_matrix("sparse", 4, 50, seed=3)
    c = S.projection_matrix("sparse", 4, 50, seed=4)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_orthogonal_needs_k_at_most_n() -> None:
    with pytest.raises(InputError, match="k must be <= n = 4"):
        S.projection_matrix("orthogonal", 5, 4, seed=0)
    with pytest.raises(InputError, match="family must be one of"):
        S.projection_matrix("bogus", 2, 4, seed=0)


@pytest.mark.parametrize(
    "family,vectors",
    [
        ("gaussian", "spiky"),
        ("orthogonal", "spiky"),
        ("achlioptas", "spiky"),
        ("achlioptas", "flat"),
        ("sparse", "spiky"),
        ("sparse", "flat"),
    ],
)
def test_reduced_pair_units_match_direct(family: str, vectors: str) -> None:
    n, k_max, k, trials = 15, 7, 4, 3000
    direct = S.direct_pair_images(family, n, k, trials, vectors=vectors, seed=11)  # (T, k, 2)
    units, scales = S.reduced_pair_units(family, n, k_max, trials, vectors=vectors, seed=12)
    st = S.prefix_pair_stats(units, np.array([k, k_max]), scales=scales)
    d_aa = (direct[:, :, 0] ** 2).sum(1)
    d_ab = (direct[:, :, 0] * direct[:, :, 1]).sum(1)
    d_bb = (direct[:, :, 1] ** 2).sum(1)
    assert _ks(d_aa, st["aa"][0]) > P_MIN
    assert _ks(d_ab, st["ab"][0]) > P_MIN
    assert _ks(d_bb, st["bb"][0]) > P_MIN
    # and the k_max prefix against a direct draw with k_max rows
    direct_max = S.direct_pair_images(family, n, k_max, trials, vectors=vectors, seed=13)
    assert _ks((direct_max[:, :, 0] ** 2).sum(1), st["aa"][1]) > P_MIN


def test_reduced_pair_detects_a_wrong_scale() -> None:
    """The KS comparison has power: a 10% scale error is caught."""
    direct = S.direct_pair_images("gaussian", 15, 6, 3000, seed=1)
    units, _ = S.reduced_pair_units("gaussian", 15, 6, 3000, seed=2)  # Gaussian scales are (1, 1)
    st = S.prefix_pair_stats(units * 1.1, np.array([6]))
    assert _ks((direct[:, :, 0] ** 2).sum(1), st["aa"][0]) < P_MIN


def test_theorem1_reduced_matches_direct() -> None:
    n, k, trials = 10, 4, 3000
    P = T1.attention_matrix("softmax", n, seed=5, d=4)
    rng = np.random.default_rng(0)
    W = np.stack([rng.standard_normal(n), np.ones(n) + 0.1 * rng.standard_normal(n)], axis=1)  # (n, 2)
    parts = S1.theorem1_reduced_parts(P, W, trials, seed=7, chunk=700, dtype=np.float64)
    for j in range(2):
        red = S1.theorem1_errors_chunk(parts, j, k, np.random.default_rng(8 + j))
        direct = S.theorem1_direct_errors(P, W[:, j], k, trials, seed=20 + j)
        assert _ks(red, direct) > P_MIN


def test_theorem2_reduced_matches_direct() -> None:
    n, d, trials = 9, 3, 2500
    rng = np.random.default_rng(1)
    w = rng.standard_normal(n) * 2
    V = rng.standard_normal((n, d))
    ks = np.array([3, 6])
    delta = 1 / (2 * n)
    red = S2.theorem2_reduced_all(w, V, ks, trials, delta=delta, seed=3)
    for i, k in enumerate(ks):
        dp = S2.theorem2_direct_outputs(w, V, int(k), trials, delta=delta, seed=30 + i)
        dq = S2.theorem2_direct_outputs(w, V, int(k), trials, delta=None, seed=40 + i)
        for c in range(d):  # every output coordinate
            assert _ks(red["paper"][i, :, c], dp[:, c]) > P_MIN
            assert _ks(red["plain"][i, :, c], dq[:, c]) > P_MIN
        d21 = S2.theorem2_eq21_direct(w, V[:, 0], int(k), trials, delta=delta, seed=50 + i)
        assert _ks(red["eq21"][i], d21) > P_MIN


def test_pair_vectors_are_orthonormal() -> None:
    for n in (2, 7, 8):
        for v in S.VECTOR_PAIRS:
            x = S.pair_vectors(n, v)
            np.testing.assert_allclose(x.T @ x, np.eye(2), atol=1e-12)
    assert math.isclose(S.sparse_density(64), 1 / 8)


@pytest.mark.parametrize("kind", ["uniform", "near_identity", "softmax"])
def test_structured_product_is_exact(kind: str) -> None:
    P = T1.attention_matrix(kind, 9, seed=0, d=3)
    apply = S1.structured_apply(P)
    if kind == "softmax":
        assert apply is None
        return
    G = np.random.default_rng(3).standard_normal((9, 5))
    np.testing.assert_allclose(apply(G), P @ G, rtol=1e-12, atol=1e-15)
    W = np.random.default_rng(0).standard_normal((9, 2))
    fast = S1.theorem1_reduced_parts(P, W, 300, seed=1, dtype=np.float64)
    slow = S1.theorem1_reduced_parts(P, W, 300, seed=1, dtype=np.float64, fast=False)
    for key in ("alpha", "beta"):
        np.testing.assert_allclose(fast[key], slow[key], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("h,p", [(2048, 1 / 64), (2048, 1 / 3), (10, 0.3), (1, 1 / 3)])
def test_inverse_cdf_index_equals_searchsorted(h: int, p: float) -> None:
    """The bucket table gives exactly the binary search's index, edges included."""
    _values, cdf = S.signed_count_law(h, p)
    u = np.random.default_rng(0).random(200_000)
    u[:6] = [0.0, cdf[0], cdf[len(cdf) // 2], np.nextafter(cdf[0], 0), np.nextafter(cdf[-2], 1), 1 - 2**-53]
    np.testing.assert_array_equal(S.inverse_cdf_index(cdf, u), np.searchsorted(cdf, u, side="right"))
