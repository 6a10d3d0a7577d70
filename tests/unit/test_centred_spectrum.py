"""The centred spectrum: P with its mean row removed separates structure from averaging."""

from __future__ import annotations

import numpy as np
import pytest

from attnspec.spectra.centred import centre_rows, centred_curve, centred_share, centred_singular_values


def _softmax(logits: np.ndarray) -> np.ndarray:
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_a_uniform_p_has_an_all_zero_centred_spectrum() -> None:
    n = 16
    P = np.full((n, n), 1 / n)
    assert np.allclose(centred_singular_values(P), 0)
    assert np.isnan(centred_curve(P)).all()
    assert centred_share(P) == pytest.approx(0, abs=1e-12)


def test_equal_rows_of_any_distribution_are_averaging_only() -> None:
    p = _softmax(np.random.default_rng(0).standard_normal(12))
    P = np.tile(p, (12, 1))  # rank one: every query attends alike
    assert np.allclose(centre_rows(P), 0) and centred_share(P) == pytest.approx(0, abs=1e-12)


def test_the_identity_keeps_n_minus_one_equal_directions() -> None:
    n = 8
    sv = centred_singular_values(np.eye(n))
    assert np.allclose(sv[:-1], 1) and sv[-1] == pytest.approx(0, abs=1e-12)
    assert np.allclose(centred_curve(np.eye(n))[: n - 1], np.arange(1, n) / (n - 1))
    assert centred_share(np.eye(n)) == pytest.approx((n - 1) / n)


def test_rows_and_columns_of_the_centred_matrix_sum_to_zero() -> None:
    P = _softmax(np.random.default_rng(1).standard_normal((3, 10, 10)))
    C = centre_rows(P)
    assert np.allclose(C.sum(axis=-1), 0) and np.allclose(C.sum(axis=-2), 0)


def test_flatter_rows_leave_less_beyond_averaging() -> None:
    # the same logits at a falling temperature: near-uniform rows read "low rank" on P's own curve,
    # but their centred part shrinks towards zero
    g = np.random.default_rng(2).standard_normal((64, 64))
    shares = [float(centred_share(_softmax(scale * g))) for scale in (4.0, 1.0, 0.1, 0.001)]
    assert shares == sorted(shares, reverse=True) and shares[-1] < 0.01


def test_a_stack_keeps_its_leading_shape() -> None:
    P = _softmax(np.random.default_rng(3).standard_normal((2, 3, 6, 6)))
    assert centred_curve(P).shape == (2, 3, 6) and centred_share(P).shape == (2, 3)


@pytest.mark.parametrize("bad", [np.ones((3, 4)), np.ones(5), np.array([[1.0, np.nan], [0.5, 0.5]])])
def test_bad_matrices_are_refused_in_one_line(bad: np.ndarray) -> None:
    with pytest.raises(ValueError, match="P "):
        centre_rows(bad)
