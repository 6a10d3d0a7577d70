"""The OrthogonalSelfAttention layer: dense cross-checks, gradients, initialisation, seeds."""

from __future__ import annotations

import pytest
import torch

from attnspec.errors import InputError
from attnspec.theory.osa import OrthogonalSelfAttention

F64 = torch.float64


def _x(b, n, d, seed=0):
    return torch.randn(b, n, d, generator=torch.Generator().manual_seed(seed), dtype=F64)


@pytest.mark.parametrize(
    "basis,kw",
    [
        ("qr", {}),
        ("newton-schulz", {"ns_steps": 40, "ns_coefficients": "cubic"}),
        ("newton-schulz", {"ns_steps": 14, "ns_coefficients": "polar-express"}),
    ],
)
def test_fast_path_matches_dense_matrix_exp(basis, kw):
    layer = OrthogonalSelfAttention(16, 4, basis=basis, alpha_init=0.8, seed=1, dtype=F64, ns_eps=0.0, **kw)
    x = _x(2, 24, 16)
    out = layer(x)
    assert out.shape == (2, 24, 16)
    assert (out - layer.forward_dense(x)).abs().max() < 1e-10


def test_ns_unconverged_differs_from_dense():
    """With few Newton–Schulz steps the basis is not orthonormal and A is not exp(S): the
    cross-check must be able to fail."""
    layer = OrthogonalSelfAttention(16, 4, basis="newton-schulz", ns_steps=1, alpha_init=2.0, seed=1, dtype=F64)
    x = _x(1, 24, 16)
    assert (layer(x) - layer.forward_dense(x)).abs().max() > 1e-3


def test_attention_matrix_orthogonal_det_one_qr():
    layer = OrthogonalSelfAttention(12, 2, alpha_init=1.5, seed=2, dtype=F64)
    a = layer.attention_matrices(_x(2, 10, 12))  # (2, 2, 10, 10)
    eye = torch.eye(10, dtype=F64)
    assert (a.mT @ a - eye).abs().max() < 1e-12
    assert (torch.linalg.det(a) - 1).abs().max() < 1e-12


def test_initialisation_follows_section_4():
    layer = OrthogonalSelfAttention(16, 4, seed=3, dtype=F64)  # d_v = 4
    for h in range(4):
        u = torch.cat([layer.w_q[h], layer.w_k[h]], dim=1)  # (16, 8)
        assert torch.allclose(u.mT @ u, torch.eye(8, dtype=F64), atol=1e-13)
        assert torch.allclose(layer.w_v[h].mT @ layer.w_v[h], torch.eye(4, dtype=F64), atol=1e-13)
        assert torch.allclose(layer.w_o[h] @ layer.w_o[h].mT, torch.eye(4, dtype=F64), atol=1e-13)
    assert torch.equal(layer.alpha.detach(), torch.full((4,), 0.1, dtype=F64))


def test_seed_reproducible():
    a = OrthogonalSelfAttention(8, 2, seed=5)
    b = OrthogonalSelfAttention(8, 2, seed=5)
    c = OrthogonalSelfAttention(8, 2, seed=6)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    assert not torch.equal(a.w_q, c.w_q)


@pytest.mark.parametrize(
    "kw",
    [
        {"basis": "qr"},
        {"basis": "newton-schulz", "ns_steps": 3, "ns_coefficients": "cubic"},
        {"basis": "newton-schulz", "ns_steps": 2, "ns_coefficients": "muon"},
        {"basis": "newton-schulz", "ns_steps": 3, "ns_coefficients": "polar-express"},
    ],
)
def test_gradcheck_every_path(kw):
    layer = OrthogonalSelfAttention(8, 2, alpha_init=0.7, seed=4, dtype=F64, **kw)
    x = _x(1, 5, 8).requires_grad_(True)
    assert torch.autograd.gradcheck(layer, (x,))
    # gradients reach every parameter, alpha included
    layer(x).square().sum().backward()
    for name, p in layer.named_parameters():
        assert p.grad is not None and torch.isfinite(p.grad).all() and p.grad.abs().sum() > 0, name


def test_gradcheck_weights_qr():
    from attnspec.theory.osa import osa_heads

    layer = OrthogonalSelfAttention(6, 2, alpha_init=0.5, seed=9, dtype=F64)
    x = _x(1, 4, 6)
    wq = layer.w_q.detach().clone().requires_grad_(True)
    wk = layer.w_k.detach().clone().requires_grad_(True)
    alpha = layer.alpha.detach().clone().requires_grad_(True)
    assert torch.autograd.gradcheck(lambda a, b, c: osa_heads(x, a, b, layer.w_v, c), (wq, wk, alpha))


def test_float32_forward_close_to_float64():
    l64 = OrthogonalSelfAttention(32, 4, alpha_init=0.3, seed=0, dtype=F64)
    l32 = OrthogonalSelfAttention(32, 4, alpha_init=0.3, seed=0)
    x = _x(2, 64, 32)
    assert (l32(x.float()).double() - l64(x)).abs().max() < 1e-4


@pytest.mark.parametrize(
    "kw,match",
    [
        ({"d_model": 8, "heads": 1}, "2\\*d_v <= d_model"),
        ({"d_model": 8, "heads": 2, "alpha_init": float("nan")}, "alpha"),
        ({"d_model": 8, "heads": 2, "alpha_init": float("inf")}, "alpha"),
        ({"d_model": 8, "heads": 2, "basis": "svd"}, "basis"),
        ({"d_model": 8, "heads": 2, "ns_steps": -1}, "steps"),
        ({"d_model": 8, "heads": 2, "ns_coefficients": "quartic"}, "schedule"),
        ({"d_model": 8, "heads": 3}, "divisible"),
        ({"d_model": 0, "heads": 1}, "d_model"),
    ],
)
def test_bad_arguments(kw, match):
    with pytest.raises(InputError, match=match):
        OrthogonalSelfAttention(**kw)


def test_bad_input_shape():
    layer = OrthogonalSelfAttention(8, 2, seed=0)
    with pytest.raises(InputError, match="shape"):
        layer(torch.zeros(3, 8))


@pytest.mark.parametrize("basis", ["qr", "newton-schulz"])
def test_long_sequence_never_forms_n_by_n(basis):
    """N = 100,000: an N×N float32 attention matrix would need 40 GB; the fast path needs O(N d)."""
    layer = OrthogonalSelfAttention(8, 2, basis=basis, seed=0, dtype=F64)
    x = torch.randn(1, 100_000, 8, generator=torch.Generator().manual_seed(0), dtype=F64)
    with torch.no_grad():
        y = layer(x)
    assert y.shape == x.shape and torch.isfinite(y).all()
    # exp(S) is orthogonal (QR) / nearly so (NS): per-head outputs keep the norm of X W_V
    if basis == "qr":
        v = torch.einsum("bnd,hdv->bhnv", x, layer.w_v)
        from attnspec.theory.osa import osa_heads

        a_v = osa_heads(x, layer.w_q, layer.w_k, layer.w_v, layer.alpha.detach())
        assert torch.allclose(a_v.norm(dim=2), v.norm(dim=2), rtol=1e-9)
