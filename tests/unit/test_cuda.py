"""The engine and the spectrum job on a CUDA device agree with the CPU (skipped without CUDA).

benchmarks/device_check.sh runs these on the GPU machine (``pytest -m cuda``).
"""

from __future__ import annotations

import pytest
import torch

pytestmark = [pytest.mark.cuda, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]


@pytest.mark.parametrize("method", ["svd", "gram"])
def test_engine_on_cuda_matches_lapack_on_cpu(method):
    from attnspec.spectra.engine import singular_values
    from attnspec.spectra.metrics import cumulative_curve

    g = torch.Generator().manual_seed(0)
    probs = (torch.randn(12, 96, 96, generator=g) * 3).softmax(-1)  # (m, n, n), rows sum to 1
    cpu = cumulative_curve(singular_values(probs, "lapack"))
    gpu = cumulative_curve(singular_values(probs.cuda(), method))
    assert gpu.device.type == "cpu" and gpu.dtype == torch.float64  # the engine's contract on any device
    assert float((gpu - cpu).abs().max()) < 1e-5


def test_spectrum_of_a_model_on_cuda_matches_the_cpu(tmp_path):
    from helpers import make_roberta_tokenizer
    from models_tiny import tiny_roberta

    import attnspec

    tok = make_roberta_tokenizer(tmp_path)
    texts = [
        "The attention probability matrix of a pretrained encoder is approximately low rank. " * 4,
        "I went and saw this movie last night after being coaxed to by a few friends of mine. " * 4,
    ]
    curves = {}
    for device in ("cpu", "cuda"):
        model = tiny_roberta(vocab=len(tok), n=62).to(device)
        res = attnspec.spectrum(model, texts=texts, tokenizer=tok, seq_len=32, progress=False)
        assert next(model.parameters()).device.type == device  # the caller's model stays where it was
        curves[device] = res.curves.sort_values(["layer", "head", "index"]).reset_index(drop=True)
    # The normalised cumulative and energy curves; the tail curve (the rest after σ₁) of these
    # near-uniform random heads is round-off in float32 on either device, so it is not compared.
    diff = (curves["cpu"][["mean", "energy_mean"]] - curves["cuda"][["mean", "energy_mean"]]).abs().max().max()
    assert diff < 1e-4, diff
