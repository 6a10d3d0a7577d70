"""The report reads the centred measure under the name the metrics table saves it."""

from __future__ import annotations

import numpy as np
import pandas as pd


def test_the_centred_measure_is_read_from_c_centred() -> None:
    from attnspec.report.summary import centred_value

    held = pd.DataFrame({"c_at_mean": [0.8, 0.9], "c_centred_mean": [0.5, 0.7]})
    assert centred_value(held) == ("c_centred", 0.6)
    older = pd.DataFrame({"c_at_mean": [0.8, 0.9], "c_centred_mean": [np.nan, np.nan]})
    assert centred_value(older) is None and centred_value(older.drop(columns="c_centred_mean")) is None
