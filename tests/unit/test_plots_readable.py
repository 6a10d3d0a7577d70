"""Figure details a reader relies on: Monte Carlo zeros drawn as upper bounds, readable log ticks."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from attnspec.plots.jl import FLOOR, _log_axes, _mc  # noqa: E402


def test_zero_failures_are_upper_bounds_not_a_plunge_to_the_floor() -> None:
    frame = pd.DataFrame({"k": [10, 100, 1000], "estimate": [0.5, 0.01, 0.0],
                          "ci_low": [0.45, 0.005, 0.0], "ci_high": [0.55, 0.02, 0.0037]})
    fig, ax = plt.subplots()
    values = _mc(ax, frame, "Monte Carlo", "C0")
    line, bound = ax.lines
    assert list(line.get_xdata()) == [10, 100] and list(line.get_ydata()) == [0.5, 0.01]  # no zero, no floor
    assert list(bound.get_xdata()) == [1000] and list(bound.get_ydata()) == [0.0037] and bound.get_marker() == "v"
    _log_axes(ax, values)
    low, high = ax.get_ylim()
    assert low >= FLOOR * 100 and low <= 0.0037 / 2 and high >= 1  # the axis follows the data
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert "100" in labels and "1000" in labels  # plain numbers on k, not 10^2
    plt.close(fig)
    assert np.all(np.asarray(values) > 0)
