"""The figures' style is seaborn's paper whitegrid theme, written out so that drawing imports
neither seaborn nor SciPy: the written-out values must stay what seaborn itself sets."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from attnspec.plots import SEABORN_PAPER_WHITEGRID  # noqa: E402
from attnspec.plots.spectrum import viridis_colors  # noqa: E402

sns = pytest.importorskip("seaborn")


def test_the_written_out_theme_is_seaborns() -> None:
    with plt.rc_context():
        matplotlib.rcdefaults()  # from matplotlib's own defaults, whatever a figure drawn before set
        before = dict(plt.rcParams)
        sns.set_theme(context="paper", style="whitegrid", font_scale=1.1)
        changed = {k: v for k, v in plt.rcParams.items() if v != before[k]}
    # seaborn's palette and colour map are replaced (Okabe–Ito) or unused (every map is named)
    changed.pop("axes.prop_cycle", None)
    changed.pop("image.cmap", None)
    assert set(changed) == set(SEABORN_PAPER_WHITEGRID)
    for key, value in changed.items():
        ours = SEABORN_PAPER_WHITEGRID[key]
        if isinstance(value, float):
            assert ours == pytest.approx(value, rel=1e-9), key
        else:
            assert str(ours).lower() == str(value).lower() or ours == value, key


@pytest.mark.parametrize("count", [1, 2, 6, 12, 24])
def test_layer_colours_are_seaborns_viridis_palette(count: int) -> None:
    assert np.allclose(viridis_colors(count), sns.color_palette("viridis", n_colors=count))
