"""One way to print a value with its interval in every table row of the report: the fixed-k
section and the decoder section render the same numbers alike."""

from __future__ import annotations

import math

import pytest


def test_the_ends_never_print_alike_and_missing_values_say_so() -> None:
    from attnspec.report.markdown import with_interval

    assert with_interval(0.8262, 0.8251, 0.8268) == "0.826 [0.825, 0.827]"
    assert with_interval(0.8262, 0.82601, 0.82649) == "0.826 [0.8260, 0.8265]"  # widened, not [0.826, 0.826]
    assert with_interval(-0.0231, -0.046, -0.003, "+.3f") == "-0.023 [-0.046, -0.003]"
    assert with_interval(0.3661, 0.3632, 0.3694, ".1%") == "36.6% [36.3%, 36.9%]"
    assert with_interval(float("nan"), 0.1, 0.2) == "—"
    assert with_interval(None, 0.1, 0.2) == "—"
    assert with_interval(0.5, math.nan, 0.6) == "0.500 [—]"


@pytest.mark.parametrize("numbers", [(0.7601, 0.74633, 0.77349), (1.0552, 1.05501, 1.05549)])
def test_the_fixed_k_and_decoder_sections_print_one_row_alike(numbers) -> None:  # noqa: ANN001
    from attnspec.report.approx_part import _error
    from attnspec.report.decoder import _ci

    value, low, high = numbers
    row = {"error_last": value, "error_last_low": low, "error_last_high": high}
    assert _error(row, "last") == _ci(value, low, high)
