"""attnspec.theorem.tightest: an exact law against a claimed probability bound along a grid,
decided where the bound is tightest (violated at the worst point, vacuous where it says nothing);
a measured claim over a table of instances, per kind, at the tightest."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from attnspec.theorem.declare import Check, Claim
from attnspec.theorem.registry import Paper
from attnspec.theorem.runner import run_check
from attnspec.theorem.tightest import ExactBound, tightest_rows

PAPER = Paper("toy", "A. Author", "A toy tail bound", year=2024)


def _check(scale: float) -> Check:
    """exact P(d) = exp(−d/4) against the bound min(1, scale·exp(−d/8)), d = 1..40."""
    reading = ExactBound(
        "as-stated", exact="p", bound="b", label="c exp(−d/8)", over="d",
        minimum=(("gap", "smallest bound − exact"),), count=(("below", "exact <= bound"),),
    )  # fmt: skip

    def setup(point: dict, rng: object) -> dict[str, float]:
        p, b = math.exp(-point["d"] / 4), min(1.0, scale * math.exp(-point["d"] / 8))
        return {"p": p, "b": b, "gap": b - p, "below": float(p <= b)}

    return Check(
        command="toy-tail", paper=PAPER, claims=(Claim("toy.tail", where="eq. 1", statement="P <= c e^(−d/8)", reading=reading),),
        grid=lambda o: [{"d": d} for d in range(1, 41)], setup=setup,
    )  # fmt: skip


def _row(scale: float):  # noqa: ANN202 - VerdictRow
    (row,) = run_check(_check(scale), {"seed": 0, "trials": 2, "jobs": 1}).verdicts
    return row


def test_holds_at_the_tightest_point_where_the_bound_says_something() -> None:
    row = _row(1.5)  # the bound first drops below 1 at d = 4, where bound / exact is smallest
    assert row.verdict == "holds" and row.params["d"] == 4
    assert row.exact == pytest.approx(math.exp(-1)) and row.bound == pytest.approx(1.5 * math.exp(-0.5))
    assert row.params["tightest"] == pytest.approx(1.5 * math.exp(0.5))
    assert "exact <= bound at 40/40 d" in row.evidence and "smallest bound − exact" in row.evidence


def test_loose_when_the_bound_is_far_above_the_law_everywhere() -> None:
    row = _row(40.0)
    assert row.verdict == "loose" and row.params["tightest"] > 10


def test_violated_at_the_worst_point() -> None:
    row = _row(0.5)  # 0.5 e^(−d/8) < e^(−d/4) for d < 8 log 2 ≈ 5.5: worst at d = 1
    assert row.verdict == "violated" and row.params["d"] == 1 and row.exact > row.bound
    assert "label rests" not in row.evidence


def test_vacuous_where_the_bound_is_never_below_one() -> None:
    row = _row(1e6)  # 1e6 e^(−40/8) > 1 at every d
    assert row.verdict == "vacuous" and math.isnan(row.params["tightest"])
    assert "c exp(−d/8) >= 1 at every d" in row.evidence


def _table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "kind": ["random", "random", "adversarial", "adversarial"],
            "lhs": [0.5, 0.09, 2.0, 2.5],
            "rhs": [1.0, 0.1, 2.0, 2.0],
        }
    )


def test_one_row_per_kind_decided_at_the_largest_ratio() -> None:
    rows = tightest_rows("toy.bound", _table(), observed="lhs", bound="rhs", by="kind", seed=3)
    assert [r.params for r in rows] == [{"kind": "random"}, {"kind": "adversarial"}]
    random, adversarial = rows
    # the tightest random instance is 0.09 / 0.1, not the larger 0.5 / 1
    assert (random.verdict, random.estimate, random.bound, random.trials, random.seed) == ("holds", 0.09, 0.1, 2, 3)
    assert (adversarial.verdict, adversarial.estimate, adversarial.bound) == ("violated", 2.5, 2.0)


def test_identities_hypotheses_notes_and_one_group() -> None:
    t = _table()
    (row,) = tightest_rows(
        "toy.identity", t, observed="lhs", tol=1.0, reading="as-printed", note=lambda g, w: f"{len(g)} instances"
    )
    assert (row.verdict, row.estimate, row.bound, row.params, row.reading) == ("violated", 2.5, 1.0, {}, "as-printed")
    assert row.evidence.endswith("; 4 instances")
    rows = tightest_rows(
        "toy.identity", t, observed="lhs", tol=1.0, by="kind", unmet=lambda g: "no" if len(g) else None,
        note=lambda g, w: "first", note_first=True,
    )  # fmt: skip
    assert {r.verdict for r in rows} == {"hypothesis-unmet"} and all(r.evidence.startswith("first; ") for r in rows)
    with pytest.raises(ValueError, match="exactly one of bound"):
        tightest_rows("toy.identity", t, observed="lhs")


def test_a_folded_residual_decides_while_another_column_is_reported() -> None:
    t = _table().assign(other=[0.1, 0.3, 0.2, 0.05])
    (row,) = tightest_rows("toy.identity", t, observed="lhs", tol=3.0, estimate="other")
    assert (row.verdict, row.estimate) == ("holds", 0.3)  # the largest of `other` over the group
