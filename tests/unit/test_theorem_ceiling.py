"""A probability claim read with a computable ceiling on its true probability."""

from __future__ import annotations

import math

import pytest

from attnspec.theorem.ceiling import Ceiling
from attnspec.theorem.declare import Claim
from attnspec.theorem.measured import indicators, read_off
from attnspec.theorem.registry import Paper

PAPER = Paper("toy", "A. Author", "A toy union bound", year=2024)
CLAIM = Claim(
    "toy.union",
    where="eq. 4",
    statement="P(some pair deviates) <= claimed.",
    reading=Ceiling(
        "union-bound", event="fails", claimed="claimed", log_ceiling="log_c", how="Chernoff per pair, union",
        ceiling_name="Chernoff upper bound", value_name="Chernoff bound", after=lambda p: "context after",
    ),
)  # fmt: skip


def _row(failures: int, trials: int, claimed: float, log_c: float):  # noqa: ANN202
    numbers = {"fails": indicators(failures, trials), "claimed": claimed, "log_c": log_c}
    (row,) = read_off(CLAIM, {"d": 5}, numbers, paper=PAPER, seed=3)
    return row


def test_a_ceiling_below_the_claim_decides_and_is_never_called_exact() -> None:
    row = _row(0, 40, 0.1, math.log(2.696e-21))
    assert (row.verdict, row.value_name) == ("loose", "Chernoff bound") and row.exact == pytest.approx(2.696e-21)
    assert "exact" not in row.evidence.replace("exact inner", "")
    assert row.evidence.endswith("; context after")


def test_a_ceiling_far_below_the_smallest_float_still_decides() -> None:
    row = _row(0, 40, 0.1, -2000.0)
    assert row.verdict == "loose" and row.exact == 5e-324 and "10^-868.6" in row.evidence


def test_a_ceiling_above_the_claim_leaves_the_trials_to_decide() -> None:
    quiet, failing = _row(0, 50, 0.5, 0.2), _row(45, 50, 0.5, 0.2)
    assert (quiet.exact, quiet.value_name) == (None, None) and quiet.verdict != "violated"
    assert "not below the claim: the trials decide" in quiet.evidence
    assert failing.verdict == "violated" and (failing.estimate, failing.trials) == (0.9, 50)


def test_the_documented_example_runs_as_written() -> None:
    import re
    from pathlib import Path

    doc = Path(__file__).resolve().parents[2] / "docs" / "theorem-api.md"
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", doc.read_text(), flags=re.S) if "Ceiling(" in b]
    namespace: dict = {}
    exec(compile(block, str(doc), "exec"), namespace)  # noqa: S102 - the doc's own example
    assert namespace["tiny"].verdict == "loose"
