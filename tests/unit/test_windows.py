"""Sliding windows: the row entropy is normalised by the positions each row may attend to,
min(i + 1, w) under a causal window w, and the window of each layer is read from the config."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from models_tiny import tiny_gemma2, tiny_llama, tiny_mistral, tiny_qwen2_windowed

from attnspec.errors import InputError
from attnspec.spectra import metrics
from attnspec.spectra.capture import collect_attention
from attnspec.spectra.layer_windows import check_windows, layer_windows, window_violation


def _uniform_window(n: int, w: int, pad_left: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """P whose row i is uniform over the real positions in (i − w, i]; (1, 1, n, n) and mask (1, n)."""
    mask = torch.ones(1, n, dtype=torch.bool)
    mask[0, :pad_left] = False
    p = torch.zeros(1, 1, n, n)
    for i in range(pad_left, n):
        lo = max(pad_left, i - w + 1)
        p[0, 0, i, lo : i + 1] = 1.0 / (i + 1 - lo)
    return p, mask


def test_rows_uniform_over_their_window_give_one() -> None:
    p, mask = _uniform_window(256, 64)
    assert float(metrics.row_entropy(p, causal=True, window=64)) == pytest.approx(1.0, abs=1e-6)
    # the figure: normalising by log(i + 1) instead gives 0.876, so the test can fail
    assert float(metrics.row_entropy(p, causal=True)) == pytest.approx(0.876, abs=1e-3)
    p, mask = _uniform_window(40, 7, pad_left=9)  # left padding: the window counts real positions
    assert float(metrics.row_entropy(p, mask, causal=True, window=7)) == pytest.approx(1.0, abs=1e-6)
    # a window at least n long changes nothing
    p, _ = _uniform_window(30, 30)
    assert torch.equal(metrics.row_entropy(p, causal=True, window=30), metrics.row_entropy(p, causal=True))


def test_window_needs_causal_and_a_positive_int() -> None:
    p, _ = _uniform_window(8, 3)
    for bad in (0, -2, 2.5, True):
        with pytest.raises(InputError, match="window must be a positive int"):
            metrics.row_entropy(p, causal=True, window=bad)
    with pytest.raises(InputError, match="window must be a positive int"):
        metrics.row_entropy(p, causal=False, window=3)


def test_layer_windows_from_configs() -> None:
    assert layer_windows(tiny_mistral().config.to_dict(), 2) == [5, 5]  # Mistral: every layer
    assert layer_windows(tiny_gemma2().config.to_dict(), 2) == [4, None]  # layer_types
    assert layer_windows(tiny_qwen2_windowed().config.to_dict(), 2) == [None, 6]  # max_window_layers=1
    assert layer_windows(tiny_llama().config.to_dict(), 2) == [None, None]
    assert layer_windows({"sliding_window": 8, "use_sliding_window": False}, 3) == [None] * 3
    with pytest.raises(InputError, match="chunked_attention"):
        layer_windows({"model_type": "llama4", "layer_types": ["chunked_attention", "full_attention"]}, 2)
    with pytest.raises(InputError, match="3 layer_types for 2"):
        layer_windows({"layer_types": ["full_attention"] * 3}, 2)
    with pytest.raises(InputError, match="bidirectional sliding-window"):
        check_windows([None, 64], causal=False, model="modernbert")


def _independent_entropy(P: np.ndarray, real: np.ndarray) -> float:
    """Mean over rows of H_i / log ℓ_i with ℓ_i counted from P itself (its nonzero entries)."""
    vals = []
    for i in np.flatnonzero(real):
        row = P[i][P[i] > 0]
        if row.size < 2:
            continue
        vals.append(-(row * np.log(row)).sum() / math.log(row.size))
    return float(np.mean(vals))


@pytest.mark.parametrize("build", [tiny_mistral, tiny_gemma2, tiny_qwen2_windowed])
def test_real_sliding_window_layers_give_the_window_aware_entropy(build) -> None:
    model = build()
    n = 17  # longer than every window (4, 5, 6)
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(5, 900, (2, n), generator=g)
    mask = torch.ones(2, n, dtype=torch.long)
    mask[1, :5] = 0  # input 1 left-padded: 12 real tokens, still longer than the windows
    probs = collect_attention(model, ids, mask)
    windows = layer_windows(model.config.to_dict(), len(probs))
    assert any(w is not None for w in windows)
    for layer, (p, w) in enumerate(zip(probs, windows)):
        got = metrics.row_entropy(p, mask.bool(), causal=True, window=w)
        if w is not None:
            assert window_violation(p, mask.bool(), w) == 0.0
            # the window really cuts: the last row sees w positions, not all of them
            assert int((p[0, 0, -1] > 0).sum()) == w
            assert not torch.allclose(got, metrics.row_entropy(p, mask.bool(), causal=True), atol=1e-3)
        for b in range(2):
            real = mask[b].bool().numpy()
            for h in range(p.shape[1]):
                P = p[b, h].double().numpy()
                assert float(got[b, h]) == pytest.approx(_independent_entropy(P, real), rel=1e-5), (layer, b, h)


def test_window_violation_sees_a_window_the_model_ignores() -> None:
    model = tiny_llama()  # full attention: a declared window of 4 is not applied
    ids = torch.randint(5, 900, (1, 12), generator=torch.Generator().manual_seed(0))
    p = collect_attention(model, ids)[0]
    assert window_violation(p, torch.ones(1, 12, dtype=torch.bool), 4) > 0
    assert window_violation(p, torch.ones(1, 12, dtype=torch.bool), 12) is None  # too short to tell


def test_spectrum_run_records_the_window_per_layer(tmp_path) -> None:
    from helpers import make_decoder_tokenizer

    import attnspec

    tok = make_decoder_tokenizer(tmp_path / "tok", bos=True)
    texts = ["attention matrix rank of the movie and the story was a decoder " * 3] * 2
    res = attnspec.spectrum(model=tiny_gemma2(), tokenizer=tok, texts=texts, seq_len=16, batch_size=2, progress=False)
    assert [(d["layer"], d["kind"], d["sliding_window"]) for d in res.meta["layers"]] == [
        (0, "decoder_self_causal", 4),
        (1, "decoder_self_causal", None),
    ]


def test_a_run_stops_when_the_model_ignores_its_declared_window(tmp_path) -> None:
    from helpers import make_decoder_tokenizer

    import attnspec
    from attnspec.errors import ModelLoadError

    tok = make_decoder_tokenizer(tmp_path / "tok", bos=True)
    model = tiny_llama()  # full attention; its config claims a window of 3 that Llama never applies
    model.config.sliding_window = 3
    texts = ["attention matrix rank of the movie and the story was a decoder " * 3] * 2
    with pytest.raises(ModelLoadError, match="sliding window of 3 but P is .* outside it"):
        attnspec.spectrum(model=model, tokenizer=tok, texts=texts, seq_len=16, batch_size=2, progress=False)
