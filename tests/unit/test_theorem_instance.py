"""attnspec.theorem.instance: a claim measured on one instance is decided by the one
classifier, its fields and sentence named by its declaration, one row per reading and instance."""

from __future__ import annotations

import pytest

from attnspec.theorem.declare import Claim
from attnspec.theorem.instance import (
    AsPrinted,
    Instance,
    InstanceBound,
    InstanceNumber,
    InstanceResidual,
    InstanceShare,
    instance_rows,
)


def test_a_bound_on_one_instance_has_no_trials_and_its_labels() -> None:
    r = InstanceBound("b", observed="x", limit="eps", bound="eps", value_name="error", bound_name="ε")
    row = r.row("toy.b", Instance({"n": 4}, {"x": 0.5, "eps": 0.1}, seed=3))
    assert (row.verdict, row.estimate, row.bound, row.trials, row.seed) == ("violated", 0.5, 0.1, None, 3)
    assert (row.value_name, row.bound_name, row.params) == ("error", "ε", {"n": 4})


def test_the_hooks_decide_before_the_numbers() -> None:
    vac = InstanceBound(observed="x", limit=1.0, vacuous=lambda v: "k >= n" if v["k"] >= v["n"] else None)
    assert vac.decide({"x": 5.0, "k": 8, "n": 8}).verdict == "vacuous"
    assert vac.decide({"x": 5.0, "k": 2, "n": 8}).verdict == "violated"
    unmet = InstanceResidual(residual="r", tol=1e-12, hypothesis_unmet=lambda v: "not square")
    assert unmet.decide({"r": 0.0}).verdict == "hypothesis-unmet"
    trivial = InstanceBound(observed="x", limit=0.1, trivial="a rank-1 witness meets it")
    assert trivial.decide({"x": 9.0}).verdict == "cannot-fail"


def test_a_share_has_its_clopper_pearson_interval() -> None:
    r = InstanceShare(hits="h", total="t", what="{h}/{t} = {share:.2f}")
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
    r = InstanceNumber(what="k = {k}", text={"vacuous": "{reason}; formula {k}"}, vacuous=lambda v: "no reduction")
    assert r.row("toy.k", Instance({}, {"k": 7})).evidence == "no reduction; formula 7"
    p = AsPrinted(what="{n}×{k} as printed", fails=lambda v: v["n"] != v["k"])
    assert [p.decide({"n": n, "k": 2}).verdict for n in (3, 2)] == ["violated", "measured"]


def test_rows_come_reading_by_reading_each_from_its_own_instances() -> None:
    claim = Claim("toy.two", "eq. 1", "two readings", (InstanceNumber("a", what="a"), InstanceNumber("b", what="b")))
    rows = instance_rows(claim, [Instance({"i": 1}, reading="b"), Instance({"i": 2}), Instance({"i": 3}, reading="a")])
    assert [(r.reading, r.params["i"]) for r in rows] == [("a", 2), ("a", 3), ("b", 1), ("b", 2)]
    with pytest.raises(KeyError, match="no value 'x' measured"):
        InstanceBound(observed="x", limit=1.0).decide({})


def test_the_documented_example_runs_as_written() -> None:
    import re
    from pathlib import Path

    doc = Path(__file__).resolve().parents[2] / "docs" / "theorem-api.md"
    blocks = [b for b in re.findall(r"```python\n(.*?)```", doc.read_text(), flags=re.S) if "instance_rows(" in b]
    assert blocks
    exec(compile(blocks[0], str(doc), "exec"), {})  # noqa: S102 - the doc's own example


def test_a_number_cannot_fail_where_a_trivial_output_meets_the_claim() -> None:
    r = InstanceNumber(
        what="error {e}",
        vacuous=lambda v: "k >= n" if v["k"] >= v["n"] else None,
        trivial=lambda v: "zero meets it" if v["e"] <= v["tol"] else None,
    )
    verdicts = [r.decide({"e": e, "tol": 1.0, "k": k, "n": 8}).verdict for e, k in ((0.5, 8), (0.5, 2), (2.0, 2))]
    assert verdicts == ["vacuous", "cannot-fail", "measured"]


def test_an_instance_may_say_whether_its_row_is_at_the_paper_parameters() -> None:
    r = InstanceNumber(what="x", at_paper_params=True)
    assert r.row("toy.x", Instance({})).at_paper_params is True
    assert r.row("toy.x", Instance({}, at_paper_params=False)).at_paper_params is False
