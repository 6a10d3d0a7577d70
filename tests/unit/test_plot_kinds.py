"""Figures of an encoder–decoder name each layer's kind of attention."""

from __future__ import annotations

import numpy as np
import pandas as pd

from attnspec.plots.spectrum import layer_names, run_figures


def _spectrum(layers: int, heads: int, n: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = []
    for layer in range(layers):
        for head in range(heads):
            sv = np.sort(rng.random(n))[::-1]
            c = np.cumsum(sv) / sv.sum()
            rows += [
                {"layer": layer, "head": head, "index": i + 1, "mean": c[i], "std": 0.01, "count": 2} for i in range(n)
            ]
    return pd.DataFrame(rows)


BART_LAYERS = [
    {"layer": 0, "kind": "encoder_self"},
    {"layer": 1, "kind": "encoder_self"},
    {"layer": 2, "kind": "decoder_self_causal"},
    {"layer": 3, "kind": "cross"},
]


def test_layer_names_add_the_kind_only_when_kinds_are_mixed() -> None:
    assert layer_names({"layers": BART_LAYERS}, [0, 2, 3]) == {0: "1 enc", 2: "3 dec", 3: "4 cross"}
    one_kind = [{"layer": i, "kind": "decoder_self_causal"} for i in range(3)]
    assert layer_names({"layers": one_kind}, [0, 1, 2]) == {0: "1", 1: "2", 2: "3"}
    assert layer_names({}, [0, 5]) == {0: "1", 5: "6"}  # results from before kinds were recorded


def test_encoder_decoder_figures_label_the_kinds() -> None:
    import matplotlib.pyplot as plt

    meta = {"layers": BART_LAYERS, "identity": {"model": "tiny-bart", "data": "texts", "seq_len": 8}, "inputs_done": 2}
    figs = run_figures(_spectrum(4, 2, 8), meta, at=2)
    legend = [t.get_text() for t in figs["spectrum_layers"].legends[0].get_texts()]
    assert legend == ["layer 1 enc", "layer 2 enc", "layer 3 dec", "layer 4 cross", "index 2 (heatmap)"]
    rows = [t.get_text() for t in figs["spectrum_heatmap"].axes[0].get_yticklabels()]
    assert rows == ["1 enc", "2 enc", "3 dec", "4 cross"]
    for fig in figs.values():
        plt.close(fig)
