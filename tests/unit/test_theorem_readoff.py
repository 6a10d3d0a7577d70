"""Claims read off a measurement the check made itself (attnspec.theorem.readoff): one point,
its numbers, the declared readings, the rows the runner makes of them."""

from __future__ import annotations

import pytest

from attnspec.theorem.declare import Claim
from attnspec.theorem.readings import Probability
from attnspec.theorem.readoff import Noted, Unmet, indicators, read_off
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


def test_the_documented_example_runs_as_written() -> None:
    import re
    from pathlib import Path

    doc = Path(__file__).resolve().parents[2] / "docs" / "theorem-api.md"
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", doc.read_text(), flags=re.S) if "read_off(" in b]
    namespace: dict = {}
    exec(compile(block, str(doc), "exec"), namespace)  # noqa: S102 - the doc's own example
    assert namespace["dense"].verdict == "hypothesis-unmet"


def test_a_bound_is_read_at_the_worst_trial() -> None:
    from attnspec.theorem.cases import Cases
    from attnspec.theorem.readoff import Bound

    worst = Bound("worst", observed="err", bound="b", exact="e", shown=("typical",), value_name="exact worst case")
    ratio = Bound(
        "ratio", observed="err", bound="b", decide=("r", 1.0), unmet=lambda p: None if p.value("met") else "none met"
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


def test_a_number_is_measured_with_its_interval() -> None:
    from attnspec.theorem.readoff import Number

    fit = Number("slope", value="p", low="lo", high="hi", bound=1.0, what=lambda p: f"slope {p.value('p'):.2f}")
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
    from attnspec.theorem.readoff import Bound

    mean = Bound("mean", observed="mc", bound=1.0, decide=("residual", 1e-12), exact="law", identity=True)
    claim = Claim("toy.mean", where="eq. 5", statement="E x = 1", reading=mean)
    (ok,) = read_off(claim, {}, {"mc": 1.01, "residual": 0.0, "law": 1.0}, paper=PAPER, seed=0)
    (bad,) = read_off(claim, {}, {"mc": 0.13, "residual": 0.875, "law": 0.125}, paper=PAPER, seed=0)
    assert (ok.verdict, ok.estimate, ok.exact, bad.verdict) == ("holds", 1.01, 1.0, "violated")
    assert "tolerance" in bad.evidence
