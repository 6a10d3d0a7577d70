"""attnspec.theorem.margins: a bound decided at its worst violation, else at the tightest
measurable instance, with its margins; a variant's row is a measurement."""

from __future__ import annotations

import math

import pandas as pd

from attnspec.theorem.margins import as_variant, margin_rows


def test_the_documented_example_runs_as_written():
    import re
    from pathlib import Path

    doc = Path(__file__).resolve().parents[2] / "docs" / "theorem-api.md"
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", doc.read_text(), flags=re.S) if "margin_rows(" in b]
    namespace: dict = {}
    exec(compile(block, str(doc), "exec"), namespace)  # noqa: S102 - the doc's own example
    assert namespace["row"].params["label_on"] == "tightest"


def test_the_round_off_instance_is_not_the_tightest():
    table = pd.DataFrame({"error": [1e-15, 2e-4, 1e-3], "bound": [1e-14, 5e-3, 2e-3]})
    (row,) = margin_rows("osa.thm31.eq10", table, observed="error", bound="bound", atol=1e-12, what="error")
    # the round-off instance (ratio 0.1) is not the tightest: 1e-3 against 2e-3 is
    assert row.verdict == "holds" and row.estimate == 1e-3 and row.bound == 2e-3 and row.trials == 3
    assert row.params == {"tightest": 2.0, "typical": 13.5, "label_on": "tightest"}
    assert "median bound/error 13.5 (loose there" in row.evidence
    variant = as_variant(row, "another schedule's B")
    assert variant.verdict == "measured" and "against the bound of the theorem: holds" in variant.evidence


def test_a_violation_decides_the_row_and_the_kinds_get_a_row_each():
    table = pd.DataFrame({"kind": ["a", "a", "b", "b"], "lhs": [3.0, 1.0, 1.0, 0.5], "rhs": [2.0, 0.5, 4.0, 1.0]})
    rows = margin_rows("osa.thm44", table, observed="lhs", bound="rhs", by="kind", at_paper_params=True)
    a, b = rows
    # 1.0 > 0.5 (factor 2) is worse than 3.0 > 2.0 (factor 1.5)
    assert (a.verdict, a.estimate, a.bound, a.params["label_on"]) == ("violated", 1.0, 0.5, "worst violation")
    assert a.params["kind"] == "a" and a.at_paper_params
    assert (b.verdict, b.estimate, b.params["tightest"]) == ("holds", 0.5, 2.0)


def test_no_finite_bound_and_an_unmet_hypothesis():
    table = pd.DataFrame({"lhs": [1.0, 2.0], "rhs": [math.inf, math.inf]})
    (row,) = margin_rows("osa.thm44", table, observed="lhs", bound="rhs")
    assert row.verdict == "vacuous" and row.estimate == 2.0 and row.bound is None and "label_on" not in row.params
    (row,) = margin_rows("osa.thm44", table.assign(rhs=3.0), observed="lhs", bound="rhs", unmet=lambda g: "QR basis")
    assert row.verdict == "hypothesis-unmet"


def test_a_measured_row_carries_its_number_and_no_verdict():
    from attnspec.theorem.margins import measured_row

    row = measured_row("osa.thm44", "fitted C = 2.1", estimate=2.1, trials=20, params={"basis": "qr"}, seed=3)
    assert (row.verdict, row.estimate, row.trials, row.seed, row.bound) == ("measured", 2.1, 20, 3, None)
    assert row.params == {"basis": "qr"} and "fitted C = 2.1" in row.evidence


def test_a_claim_no_instance_could_test_is_hypothesis_unmet_with_no_number():
    from attnspec.theorem.margins import unmet_row

    row = unmet_row("osa.eq26", "not conformable at N = 12", reading="as-printed", params={"N": 12}, trials=1)
    assert (row.verdict, row.estimate, row.trials) == ("hypothesis-unmet", None, 1)
    assert "not conformable at N = 12" in row.evidence
