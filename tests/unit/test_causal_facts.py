"""The facts docs/spectrum.md states about causal (lower-triangular, row-stochastic) P."""

from __future__ import annotations

import torch

from attnspec.spectra.engine import singular_values


def _causal_p(n: int, seed: int, sink: float = 0.0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(n, n, generator=g, dtype=torch.float64) * 2
    logits[:, 0] += sink  # an attention sink on the first token
    logits = logits.masked_fill(torch.triu(torch.ones(n, n, dtype=torch.bool), 1), float("-inf"))
    return logits.softmax(-1)  # (n, n)


def test_causal_p_is_full_rank_with_its_diagonal_as_eigenvalues() -> None:
    for seed in range(5):
        p = _causal_p(48, seed)
        sv = singular_values(p[None], "svd")[0]  # float64, descending
        diag = p.diagonal()
        assert bool((diag > 0).all()) and p[0, 0] == 1
        torch.testing.assert_close(torch.linalg.det(p), diag.prod(), rtol=1e-9, atol=0)
        assert float(sv[-1]) > 0  # no zero singular value: c_i < 1 for i < n
        assert float(sv[0]) >= 1 - 1e-12  # P·1 = 1
        assert float(sv.sum()) >= float(diag.sum()) - 1e-12  # Weyl: Σσ >= Σ|λ|
        harmonic = sum(1 / i for i in range(1, 49))
        assert float((p**2).sum()) >= harmonic - 1e-12  # ‖P‖_F² >= Σ 1/i


def test_a_sink_makes_the_first_singular_value_dominate() -> None:
    plain, sunk = _causal_p(64, 0), _causal_p(64, 0, sink=8.0)
    c1 = [float(s[0] / s.sum()) for s in singular_values(torch.stack([plain, sunk]), "svd")]
    assert c1[1] > 2 * c1[0]
