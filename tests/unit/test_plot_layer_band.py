"""Figure 1's curves and the scaling small multiples draw the real layers and the nulls with one
helper (attnspec.plots.layer_band): a null looks the same in both figures."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest


def _captured(monkeypatch, module):  # noqa: ANN001, ANN202
    figures = []
    monkeypatch.setattr(module, "save_figure", lambda fig, stem, formats=(): figures.append(fig) or [])
    return figures


def _null_lines(fig):  # noqa: ANN001, ANN202
    from attnspec.spectra.nulls import LABELS

    wanted = {LABELS[n]: n for n in ("entropy-matched", "random-init")}
    return {
        wanted[line.get_label()]: (line.get_color(), tuple(line.get_dashes() if hasattr(line, "get_dashes") else ()))
        for ax in fig.axes
        for line in ax.get_lines()
        if line.get_label() in wanted
    }


@pytest.mark.slow  # draws two whole figures (about 0.5 s idle)
def test_a_null_is_drawn_alike_in_figure_1_and_the_scaling_grid(monkeypatch, tmp_path) -> None:  # noqa: ANN001
    from attnspec.plots import null_curves, scaling

    index = np.arange(1, 9)
    spectrum = pd.DataFrame(
        [(layer, 0, i, min(1.0, 0.3 + 0.1 * i + 0.05 * layer)) for layer in range(2) for i in index],
        columns=["layer", "head", "index", "mean"],
    )
    nulls = {name: spectrum.assign(mean=spectrum["mean"] ** 2) for name in ("entropy-matched", "random-init")}
    first = _captured(monkeypatch, null_curves)
    null_curves.plot_null_panels([("M · n = 8", {"imdb": spectrum}, nulls, 4)], tmp_path / "a")
    lengths = pd.DataFrame(
        [(layer, n, 0.3 * n + layer) for layer in range(2) for n in (32, 64, 128)],
        columns=["layer", "n", scaling.K90],
    )
    second = _captured(monkeypatch, scaling)
    (tmp_path / "b").mkdir()
    scaling.plot_scaling_grid([("M · imdb", lengths, {k: lengths for k in nulls})], tmp_path / "b")
    a, b = _null_lines(first[0]), _null_lines(second[0])
    assert set(a) == set(b) == set(nulls)
    assert a == b  # colour and dash per null, whichever figure


def test_the_layers_are_a_band_under_their_mean(tmp_path) -> None:  # noqa: ANN001
    import matplotlib.pyplot as plt

    from attnspec.plots.layer_band import REAL_COLOUR, draw_layers

    fig, ax = plt.subplots()
    draw_layers(ax, [1, 2], [0.5, 0.6], [0.4, 0.5], [0.6, 0.7], label="mean", band_label="band")
    (line,) = ax.get_lines()
    assert line.get_label() == "mean" and line.get_color() == REAL_COLOUR
    assert [c.get_label() for c in ax.collections] == ["band"]
    plt.close(fig)


def test_figure_1_is_one_figure_with_a_panel_per_model(monkeypatch, tmp_path) -> None:  # noqa: ANN001
    from attnspec.plots import COLUMN_IN, null_curves

    spectrum = pd.DataFrame(
        [(layer, 0, i, min(1.0, 0.3 + 0.1 * i)) for layer in range(2) for i in range(1, 9)],
        columns=["layer", "head", "index", "mean"],
    )
    drawn = _captured(monkeypatch, null_curves)
    panels = [("A · n = 8", {"imdb": spectrum}, {"uniform": spectrum}, 2), ("B · n = 8", {"imdb": spectrum}, {}, 2)]
    null_curves.plot_null_panels(panels, tmp_path)
    (fig,) = drawn
    assert abs(fig.get_figwidth() - COLUMN_IN) < 1e-9
    assert [ax.get_title() for ax in fig.axes] == ["A · n = 8", "B · n = 8"]
    (legend,) = fig.legends
    labels = [t.get_text() for t in legend.get_texts()]
    assert len(labels) == len(set(labels)) and "uniform null" in labels  # one entry per label over the panels
