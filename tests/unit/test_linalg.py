"""Newton–Schulz schedules, the low-rank exponential and Stiefel sampling (attnspec.numerics.linalg)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import torch

from attnspec.errors import InputError
from attnspec.numerics.linalg import (
    POLAR_EXPRESS,
    lowrank_expm_apply,
    lowrank_expm_dense,
    newton_schulz,
    ns_schedule,
    qr_basis,
    sample_stiefel,
    skew_small,
)


def _gauss(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64)


def test_schedules_named_and_custom():
    assert ns_schedule("cubic", 3) == [(1.5, -0.5)] * 3
    assert ns_schedule("muon", 2) == [(3.4445, -4.7750, 2.0315)] * 2
    pe = ns_schedule("polar-express", 10)
    assert pe[:7] == list(POLAR_EXPRESS[:7])
    assert pe[7:] == [(1.875, -1.25, 0.375)] * 3  # last polynomial repeated
    # safety factor 1.01 on the published first step (Amsel et al. 2025, Algorithm 1)
    assert pe[0][0] == pytest.approx(8.28721201814563 / 1.01)
    assert ns_schedule((2.0, -1.0), 2) == [(2.0, -1.0)] * 2
    assert ns_schedule([(1.5, -0.5), (1.875, -1.25, 0.375)], 3) == [
        (1.5, -0.5),
        (1.875, -1.25, 0.375),
        (1.875, -1.25, 0.375),
    ]
    assert ns_schedule("cubic", 0) == []


@pytest.mark.parametrize("bad", ["quartic", [], [(1.0, float("nan"))], [(1, 2, 3, 4)]])
def test_bad_schedule(bad):
    with pytest.raises(InputError):
        ns_schedule(bad, 3)


@pytest.mark.parametrize("steps", [-1, 1.5, True])
def test_bad_steps(steps):
    with pytest.raises(InputError, match="steps"):
        ns_schedule("cubic", steps)


def test_ns_acts_on_singular_values():
    """Each step applies the scalar polynomial to every singular value (SVD identity)."""
    m = _gauss(40, 6)
    for sched in ("cubic", "muon", "polar-express"):
        xs = newton_schulz(m, 5, sched, return_all=True)
        s = torch.linalg.svdvals(xs[0])
        for k, coeffs in enumerate(ns_schedule(sched, 5)):
            s = sum(c * s ** (2 * i + 1) for i, c in enumerate(coeffs))
            np.testing.assert_allclose(
                np.sort(torch.linalg.svdvals(xs[k + 1]).numpy()), np.sort(np.abs(s.numpy())), rtol=1e-10, atol=1e-13
            )


def test_ns_converges_to_polar_factor():
    m = _gauss(50, 8, seed=1)
    u, _, vh = torch.linalg.svd(m, full_matrices=False)
    for sched, k in (("cubic", 40), ("polar-express", 12)):
        b = newton_schulz(m, k, sched)
        assert (b - u @ vh).abs().max() < 1e-10, sched
    # Muon's quintic does not converge: singular values stay spread around 1.
    s = torch.linalg.svdvals(newton_schulz(m, 30, "muon"))
    assert s.max() > 1.05 or s.min() < 0.95


def test_qr_basis_sign_fix_and_span():
    m = _gauss(30, 6, seed=2)
    b = qr_basis(m)
    assert torch.allclose(b.mT @ b, torch.eye(6, dtype=b.dtype), atol=1e-13)
    # same span as M: projecting M onto span(B) changes nothing
    assert torch.allclose(b @ (b.mT @ m), m, atol=1e-12)
    # sign fix: BᵀM (= R up to signs) has a positive diagonal
    assert (torch.diagonal(b.mT @ m) > 0).all()


@pytest.mark.parametrize("n,dv,alpha", [(12, 2, 0.5), (25, 4, 2.0), (6, 4, 1.0)])
def test_lowrank_expm_equals_dense(n, dv, alpha):
    """Theorem 2.1 against torch.linalg.matrix_exp and scipy.linalg.expm (float64), incl. N < 2 d_v."""
    q, k = _gauss(n, dv, seed=3), _gauss(n, dv, seed=4)
    s = alpha / np.sqrt(dv) * (q @ k.T - k @ q.T)
    b = qr_basis(torch.cat([q, k], dim=1))
    ss = skew_small(b, q, k, alpha / np.sqrt(dv))
    y = lowrank_expm_dense(b, ss)
    assert (y - torch.linalg.matrix_exp(s)).abs().max() < 1e-12
    assert np.abs(y.numpy() - scipy.linalg.expm(s.numpy())).max() < 1e-12
    v = _gauss(n, 3, seed=5)
    assert (lowrank_expm_apply(b, ss, v) - y @ v).abs().max() < 1e-12


def test_stiefel_orthonormal_seeded_and_uniform():
    w = sample_stiefel(10, 4, 7, dtype=torch.float64)
    assert torch.allclose(w.mT @ w, torch.eye(4, dtype=torch.float64), atol=1e-14)
    assert torch.equal(w, sample_stiefel(10, 4, 7, dtype=torch.float64))
    assert not torch.equal(w, sample_stiefel(10, 4, 8, dtype=torch.float64))
    # Haar: E[W_11] = 0 and E[W_11²] = 1/n. Without the sign fix the first column's
    # first entry would be biased (QR makes R_11 > 0 i.e. sign tied to Z_11).
    ws = sample_stiefel(5, 2, 11, dtype=torch.float64, batch=(20000,))
    x = ws[:, 0, 0].numpy()
    assert abs(x.mean()) < 4 * np.sqrt(0.2 / 20000)
    assert abs((x**2).mean() - 0.2) < 0.01
    # the first column is uniform on the sphere: |W_11| has the Beta-law mean
    # E|x_1| = Γ(n/2) / (sqrt(pi) Γ((n+1)/2)) for n = 5
    from math import gamma, pi, sqrt

    expected = gamma(2.5) / (sqrt(pi) * gamma(3.0))
    assert abs(np.abs(x).mean() - expected) < 0.01


def test_stiefel_bad_shape():
    with pytest.raises(InputError, match="n >= m"):
        sample_stiefel(3, 4, 0)
