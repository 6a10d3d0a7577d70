"""attnspec.theorem.tightest: a measured claim over a table of instances, per kind, at the tightest."""

from __future__ import annotations

import pandas as pd
import pytest

from attnspec.theorem.tightest import tightest_rows


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
