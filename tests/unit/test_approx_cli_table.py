"""The spectrum command's table of approximations fits 80 columns with every cell whole, a
"≥ uniform" row and an interval printed with extra digits included."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest


def _row(k: int, method: str, verdict: str, cosine: float, *, reference: bool = False) -> dict:
    return {
        "k": k,
        "method": method,
        "reference": reference,
        "n_first": 128,
        "error_first": 0.04,
        "n_last": 512,
        "error_last": 0.10,
        "error_last_low": 0.1004,  # printed with extra digits: 0.10 [0.100, 0.103]
        "error_last_high": 0.1032,
        "slope_low": -0.046,
        "slope_high": -0.003,
        "verdict": verdict,
        "cosine_last": cosine,
        "loss_change_last": float("nan"),
        "scores": "whole",
        "inputs": 8,
        "note": "",
    }


@pytest.mark.parametrize("width", [80, 100])
def test_the_approximation_table_fits_its_width_and_cuts_no_cell(
    width: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from attnspec.cli.spectrum import _print_approx
    from attnspec.spectra.approx import reading
    from attnspec.spectra.approx.rule import NO_BETTER, VERDICTS

    rows = [
        _row(128, "linformer-proof", NO_BETTER, 0.512),
        _row(128, "best-rank-k", "grows", 0.987, reference=True),
    ]
    monkeypatch.setattr(reading, "read_verdicts", lambda out: pd.DataFrame(rows))
    monkeypatch.setenv("COLUMNS", str(width))
    _print_approx(Path("unused"))
    lines = capsys.readouterr().out.splitlines()
    assert all(len(line) <= width for line in lines)
    body = [line for line in lines if "linformer-proof" in line or "best-rank-k*" in line]
    assert len(body) == 2 and "…" not in "".join(body)
    assert body[0].endswith(f"{VERDICTS[NO_BETTER]} 0.512") and body[1].endswith("0.987")
    assert "0.10 [0.100, 0.103]" in body[0]
