"""OSA checks, each against a known answer: Lemmas C.2, C.3, C.7, Algorithm 1's
sign fix, and the printed formulas (26), (48), (89) and Theorem 4.4's condition."""

from __future__ import annotations

import math

import pandas as pd
import pytest
import torch

from attnspec.theory.osa import algorithm1, lemmas, printed

F64 = torch.float64


def test_lemma_c2_tight_on_adversarial_x_and_unmet_for_gaussian_weights():
    frame = lemmas.lemma_c2_table(0, alphas=(0.5, 3.0), trials=1, ns=(6,), d=8, d_vs=(2,))
    adv = frame[frame.instances == "adversarial"]
    assert adv.ratio.to_numpy() == pytest.approx(1.0, abs=1e-12)  # equality, as constructed
    assert (frame[frame.instances == "random"].ratio <= 1 + 1e-12).all()
    rows = {r.params["instances"]: r for r in lemmas.lemma_c2_rows(frame, 0)}
    assert rows["adversarial"].verdict == "holds" and rows["random"].verdict in ("holds", "loose")
    assert rows["gaussian-weights"].verdict == "hypothesis-unmet"


def test_lemma_c2_fails_without_its_hypothesis():
    """Known failure: with ||W̃||₂ > 1 and X along W̃'s top singular pair, ||S||₂ exceeds
    (alpha/√d_v)||X||₂² by exactly ||W̃||₂."""
    w_t = torch.tensor([[0.0, 3.0], [-3.0, 0.0]], dtype=F64)  # skew, ||W̃||₂ = 3
    x = torch.eye(2, dtype=F64)
    s = 1.0 / math.sqrt(1) * x @ w_t @ x.mT
    assert float(torch.linalg.matrix_norm(s, ord=2)) == pytest.approx(
        3.0 * float(torch.linalg.matrix_norm(x, ord=2)) ** 2
    )


def test_lemma_c3_rotation_ratio_and_rows():
    frame = lemmas.lemma_c3_table(0, alphas=(0.1, 2.0), trials=1)
    rot = frame[frame.basis == "rotation"]
    assert rot.ratio.to_numpy() == pytest.approx([2 * math.sin(t / 2) / t for t in rot.alpha], rel=1e-10)
    rows = {(r.reading, r.params["instances"]): r.verdict for r in lemmas.lemma_c3_rows(frame, 0)}
    assert rows == {("eq62", "random"): "holds", ("eq62", "adversarial"): "holds", ("eq63", "random"): "holds"}


def test_lemma_c3_fails_for_a_non_skew_matrix():
    a = torch.diag(torch.tensor([1.0, 0.5], dtype=F64))  # symmetric: not an OSA [S]
    lhs = float(torch.linalg.matrix_norm(torch.linalg.matrix_exp(a) - torch.eye(2, dtype=F64), ord=2))
    assert lhs == pytest.approx(math.e - 1) and lhs > 1.0


def test_lemma_c7_norm_is_one_at_skew_and_e_at_identity():
    j = torch.tensor([[0.0, 1.3, -0.2], [-1.3, 0.0, 0.7], [0.2, -0.7, 0.0]], dtype=F64)
    assert float(torch.linalg.matrix_norm(lemmas.expm_jacobian(j), ord=2)) == pytest.approx(1.0, abs=1e-12)
    # must fail off the hypothesis: at A = I the derivative is e·Id
    eye = torch.eye(2, dtype=F64)
    assert float(torch.linalg.matrix_norm(lemmas.expm_jacobian(eye), ord=2)) == pytest.approx(math.e, rel=1e-10)
    # eq. (79) is right for any A, skew or not, with column-major vec
    a = torch.tensor([[0.3, -1.0], [0.4, 0.1]], dtype=F64)
    assert torch.allclose(lemmas.expm_jacobian(a), lemmas.expm_jacobian_eq79(a), atol=1e-12)
    # ... and without the transpose on the first factor it is wrong for non-symmetric A
    import numpy as np

    x, w = np.polynomial.legendre.leggauss(48)
    no_t = sum(
        float(wi) / 2 * torch.kron(torch.linalg.matrix_exp(float(xi) * a), torch.linalg.matrix_exp((1 - float(xi)) * a))
        for xi, wi in zip((x + 1) / 2, w)
    )
    assert not torch.allclose(lemmas.expm_jacobian(a), no_t, atol=1e-3)


def test_algorithm1_sign_fix_known_means():
    frame = algorithm1.algorithm1_table(3, shapes=((2, 1), (5, 2)), draws=4000)
    fixed, raw = frame[frame.sign_fix], frame[~frame.sign_fix]
    assert (fixed.z.abs() < 4).all() and (fixed.exact_mean == 0).all()
    # without the fix every Q₁₁ is negative, mean −E|u₁| (= −2/π for n = 2): the Haar test must fail
    assert (raw.frac_q11_negative_raw == 1.0).all()
    assert raw[raw.n == 2].exact_mean.iloc[0] == pytest.approx(-2 / math.pi)
    assert (raw.z.abs() < 4).all() and (raw.haar_z.abs() > 30).all()
    rows = {r.reading: r for r in algorithm1.algorithm1_rows(frame, 3)}
    assert rows["with-sign-fix"].verdict == "holds" and rows["without-sign-fix"].verdict == "measured"
    assert algorithm1.abs_coordinate_mean(3) == pytest.approx(0.5)  # E|u₁| = 1/2 on the 2-sphere


def test_printed_formulas_as_printed_fail_and_corrected_hold():
    """As printed: not conformable at the general shape (hypothesis-unmet: no counterexample
    there), wrong at the square shape where it is defined (violated). Corrected: holds.
    The (48) term is on the line numbered (49), so its id is osa.eq49; there is no osa.eq48."""
    assert printed.conformable((4, 3), (3, 2)) and not printed.conformable((12, 4), (4, 4), (12, 4))
    rows, frame = printed.printed_rows(1)
    got = {(r.claim, r.reading, r.params["N"]): r for r in rows}
    assert not any(r.claim == "osa.eq48" for r in rows)
    for claim, general, square in (("osa.eq26", 12, 4), ("osa.eq49", 5, 4), ("osa.eq89", 9, 4)):
        unmet = got[(claim, "as-printed", general)]
        assert unmet.verdict == "hypothesis-unmet" and "not conformable" in unmet.evidence and unmet.estimate is None
        assert got[(claim, "as-printed", square)].verdict == "violated"
        assert got[(claim, "corrected", general)].verdict == "holds"
    eq49 = got[("osa.eq49", "as-printed", 4)]
    assert eq49.params == {"N": 4, "d_v": 4, "d": 4} and "N = d_v = d" in got[("osa.eq49", "as-printed", 5)].evidence
    assert (frame.corrected_residual < 1e-12).all() and (frame.printed_residual_square > 1e-3).all()


def test_thm44_constant_row_is_a_measurement():
    jac = pd.DataFrame(
        {
            "reading": "single",
            "role": "fit",
            "basis": "NS cubic K=6",
            "alpha": [0.01, 0.1, 1.0],
            "j1_over_alpha": [1.9, 1.95, 2.0],
            "delta": [0.0, 0.01, 0.1],
            "seed": 5,
        }
    )
    row = printed.thm44_constant_row(jac, 0)
    assert row.verdict == "measured" and row.estimate == 2.0
    assert "α < 0.5" in row.evidence and "2 of the 3 alphas" in row.evidence
