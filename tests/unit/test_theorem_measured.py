"""attnspec.theorem.measured: claims decided on numbers a module measured itself, by the one
classifier: one instance's values, a point a search found, a table of instances, one number."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd
import pytest

from attnspec.theorem.cases import Cases
from attnspec.theorem.declare import Claim
from attnspec.theorem.measured import (
    AsPrinted,
    Bound,
    Instance,
    InstanceResidual,
    InstanceShare,
    Measure,
    Noted,
    Unmet,
    as_variant,
    indicators,
    instance_rows,
    margin_rows,
    read_off,
    unmet_row,
)
from attnspec.theorem.readings import Probability
from attnspec.theorem.registry import Paper

PAPER = Paper("toy", "A. Author", "A toy search", year=2024)
RATE = Probability("as-stated", "failure rate at the d found, against beta", event="fails", claimed="beta")
CLAIM = Claim(
    "toy.rate",
    where="eq. 2",
    statement="P(failure) <= beta at the width d the search found.",
    reading=(
        Noted(reading=RATE, note=lambda p: f"at d = {p.params['d']}, {int(p.stats['fails'].total)} failures"),
        Unmet(
            reading=Probability("dense", event="fails", claimed="beta"),
            unmet=lambda p: "A has a dense column" if p.value("dense") else None,
        ),
    ),
)


def test_a_bound_on_one_instance_has_no_trials_and_its_labels() -> None:
    r = Bound("b", observed="x", limit="eps", bound="eps", value_name="error", bound_name="ε")
    row = r.row("toy.b", Instance({"n": 4}, {"x": 0.5, "eps": 0.1}, seed=3))
    assert (row.verdict, row.estimate, row.bound, row.trials, row.seed) == ("violated", 0.5, 0.1, None, 3)
    assert (row.value_name, row.bound_name, row.params) == ("error", "ε", {"n": 4})


def test_the_hooks_decide_before_the_numbers() -> None:
    vac = Bound(observed="x", limit=1.0, vacuous=lambda v: "k >= n" if v["k"] >= v["n"] else None)
    assert vac.decision({"x": 5.0, "k": 8, "n": 8}).verdict == "vacuous"
    assert vac.decision({"x": 5.0, "k": 2, "n": 8}).verdict == "violated"
    unmet = InstanceResidual(residual="r", tol=1e-12, hypothesis_unmet=lambda v: "not square")
    assert unmet.decision({"r": 0.0}).verdict == "hypothesis-unmet"
    trivial = Bound(observed="x", limit=0.1, trivial="a rank-1 witness meets it")
    assert trivial.decision({"x": 9.0}).verdict == "cannot-fail"


def test_a_share_has_its_clopper_pearson_interval() -> None:
    r = InstanceShare(hits="h", total="t", sentence="{h}/{t} = {share:.2f}")
    row = r.row("toy.s", Instance({}, {"h": 0, "t": 10}))
    assert (row.verdict, row.estimate, row.ci_low, row.trials, row.evidence) == (
        "measured",
        0.0,
        0.0,
        10,
        "0/10 = 0.00",
    )
    assert row.ci_high == pytest.approx(1 - 0.025 ** (1 / 10))


def test_a_sentence_per_verdict_and_a_printed_statement() -> None:
    r = Measure(sentence="k = {k}", text={"vacuous": "{reason}; formula {k}"}, vacuous=lambda v: "no reduction")
    assert r.row("toy.k", Instance({}, {"k": 7})).evidence == "no reduction; formula 7"
    p = AsPrinted(sentence="{n}×{k} as printed", fails=lambda v: v["n"] != v["k"])
    assert [p.decision({"n": n, "k": 2}).verdict for n in (3, 2)] == ["violated", "measured"]


def test_rows_come_reading_by_reading_each_from_its_own_instances() -> None:
    claim = Claim("toy.two", "eq. 1", "two readings", (Measure("a", sentence="a"), Measure("b", sentence="b")))
    rows = instance_rows(claim, [Instance({"i": 1}, reading="b"), Instance({"i": 2}), Instance({"i": 3}, reading="a")])
    assert [(r.reading, r.params["i"]) for r in rows] == [("a", 2), ("a", 3), ("b", 1), ("b", 2)]
    with pytest.raises(KeyError, match="no value 'x' measured"):
        Bound(observed="x", limit=1.0).decision({})


def test_a_number_cannot_fail_where_a_trivial_output_meets_the_claim() -> None:
    r = Measure(
        sentence="error {e}",
        vacuous=lambda v: "k >= n" if v["k"] >= v["n"] else None,
        trivial=lambda v: "zero meets it" if v["e"] <= v["tol"] else None,
    )
    verdicts = [r.decision({"e": e, "tol": 1.0, "k": k, "n": 8}).verdict for e, k in ((0.5, 8), (0.5, 2), (2.0, 2))]
    assert verdicts == ["vacuous", "cannot-fail", "measured"]


def test_an_instance_may_say_whether_its_row_is_at_the_paper_parameters() -> None:
    r = Measure(sentence="x", at_paper_params=True)
    assert r.row("toy.x", Instance({})).at_paper_params is True
    assert r.row("toy.x", Instance({}, at_paper_params=False)).at_paper_params is False


def test_a_measured_point_is_decided_by_the_declared_readings() -> None:
    numbers = {"fails": indicators(30, 100), "beta": 0.1, "dense": 1.0}
    rows = read_off(CLAIM, {"L": 64, "d": 40}, numbers, paper=PAPER, seed=7)
    assert [(r.reading, r.verdict, r.trials, r.seed, r.bound) for r in rows] == [
        ("as-stated", "violated", 100, 7, 0.1),
        ("dense", "hypothesis-unmet", 100, 7, 0.1),
    ]
    assert rows[0].params == {"L": 64, "d": 40} and rows[0].estimate == 0.3 and rows[0].ci_low > 0.1
    assert rows[0].evidence.startswith("at d = 40, 30 failures: observed 30/100")
    assert rows[1].evidence == "hypothesis not met: A has a dense column"


def test_the_readings_made_at_a_point_can_be_chosen() -> None:
    numbers = {"fails": indicators(0, 50), "beta": 0.1, "dense": 0.0}
    (row,) = read_off(CLAIM, {"d": 8}, numbers, paper=PAPER, seed=1, readings=("dense",))
    assert (row.reading, row.trials, row.estimate) == ("dense", 50, 0.0) and row.verdict != "hypothesis-unmet"
    with pytest.raises(ValueError, match="no reading"):
        read_off(CLAIM, {"d": 8}, numbers, paper=PAPER, seed=1, readings=("typo",))


def test_indicators_are_the_count() -> None:
    cases = indicators(2, 5)
    assert cases.values == (1.0, 1.0, 0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="failures"):
        indicators(6, 5)


def test_a_bound_is_read_at_the_worst_trial() -> None:

    worst = Bound("worst", observed="err", bound="b", exact="e", shown=("typical",), value_name="exact worst case")
    ratio = Bound(
        "ratio", observed="err", bound="b", decide=("r", 1.0), unmet=lambda v: None if v["met"] else "none met"
    )
    claim = Claim("toy.err", where="eq. 3", statement="err <= b", reading=(worst, ratio))
    numbers = {"err": Cases([0.1, 0.4, 0.2]), "b": 0.5, "e": 0.45, "typical": 2.5, "r": Cases([0.2, 1.2]), "met": 1.0}
    a, b = read_off(claim, {"d": 3}, numbers, paper=PAPER, seed=2)
    assert (a.verdict, a.estimate, a.bound, a.exact, a.trials, a.params) == (
        "holds",
        0.4,
        0.5,
        0.45,
        3,
        {"d": 3, "typical": 2.5},
    )
    assert a.value_name == "exact worst case"
    assert (b.verdict, b.estimate, b.bound) == ("violated", 0.4, 0.5)  # decided on the ratio 1.2 > 1
    (unmet,) = read_off(claim, {"d": 3}, numbers | {"met": 0.0}, paper=PAPER, seed=2, readings=("ratio",))
    assert (unmet.verdict, unmet.estimate, unmet.bound, unmet.evidence) == (
        "hypothesis-unmet",
        None,
        0.5,
        "hypothesis not met: none met",
    )


def test_a_number_is_measured_with_its_named_interval() -> None:

    fit = Measure("slope", value="p", ci=("lo", "hi"), bound=1.0, sentence=lambda p: f"slope {p.value('p'):.2f}")
    claim = Claim("toy.fit", where="eq. 4", statement="d grows like k", reading=fit)
    (row,) = read_off(claim, {"k": "1..8"}, {"p": 0.9, "lo": 0.8, "hi": 1.0}, paper=PAPER, seed=3)
    assert (row.verdict, row.estimate, row.ci_low, row.ci_high, row.bound, row.evidence) == (
        "measured",
        0.9,
        0.8,
        1.0,
        1.0,
        "slope 0.90",
    )


def test_a_bound_read_as_an_identity_holds_or_is_violated() -> None:

    mean = Bound("mean", observed="mc", bound=1.0, decide=("residual", 1e-12), exact="law", identity=True)
    claim = Claim("toy.mean", where="eq. 5", statement="E x = 1", reading=mean)
    (ok,) = read_off(claim, {}, {"mc": 1.01, "residual": 0.0, "law": 1.0}, paper=PAPER, seed=0)
    (bad,) = read_off(claim, {}, {"mc": 0.13, "residual": 0.875, "law": 0.125}, paper=PAPER, seed=0)
    assert (ok.verdict, ok.estimate, ok.exact, bad.verdict) == ("holds", 1.01, 1.0, "violated")
    assert "tolerance" in bad.evidence


def test_the_round_off_instance_is_not_the_tightest():
    table = pd.DataFrame({"error": [1e-15, 2e-4, 1e-3], "bound": [1e-14, 5e-3, 2e-3]})
    (row,) = margin_rows("osa.thm31.eq10", table, observed="error", bound="bound", atol=1e-12, label="error")
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


def test_a_number_measured_on_an_instance_carries_its_sentence_and_no_verdict():

    fitted = Measure("fit", sentence="{sentence}", value="C", trials="draws")
    row = fitted.row("osa.thm44", Instance({"basis": "qr"}, {"C": 2.1, "draws": 20, "sentence": "fitted C = 2.1"}, 3))
    assert (row.verdict, row.estimate, row.trials, row.seed, row.bound) == ("measured", 2.1, 20, 3, None)
    assert row.params == {"basis": "qr"} and "fitted C = 2.1" in row.evidence


def test_a_claim_no_instance_could_test_is_hypothesis_unmet_with_no_number():

    row = unmet_row("osa.eq26", "not conformable at N = 12", reading="as-printed", params={"N": 12}, trials=1)
    assert (row.verdict, row.estimate, row.trials) == ("hypothesis-unmet", None, 1)
    assert "not conformable at N = 12" in row.evidence


@pytest.mark.parametrize("call", ["instance_rows(", "read_off(", "margin_rows("])
def test_the_documented_example_runs_as_written(call: str) -> None:
    doc = Path(__file__).resolve().parents[2] / "docs" / "theorem-api.md"
    blocks = [b for b in re.findall(r"```python\n(.*?)```", doc.read_text(), flags=re.S) if call in b]
    assert blocks
    exec(compile(blocks[0], str(doc), "exec"), {})  # noqa: S102 - the doc's own example (it asserts its rows)


def test_exact_context_reaches_the_readings_hooks_unrounded() -> None:

    seed = 2**62 + 1  # a float would round it to 2**62
    noted = Noted(reading=Bound("worst", observed="err", bound=1.0), note=lambda p: f"seed {p.context['seed']}")
    claim = Claim("toy.ctx", where="eq. 6", statement="err <= 1", reading=noted)
    (row,) = read_off(claim, {}, {"err": Cases([0.5, 2.0])}, paper=PAPER, seed=1, context={"seed": seed})
    assert row.verdict == "violated" and row.evidence.startswith(f"seed {seed}:")
