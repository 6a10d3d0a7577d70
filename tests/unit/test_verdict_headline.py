"""A claim's verdict says exactly what its rows say: one function decides it for every summary.

Each test pins one way a headline could say more than its rows: a verdict taken from rows
at other parameters than the header's, an arrow along an unnamed parameter, a reading left
out, a misprint counted as a failure, notes charged to the paper, numbers without labels,
a why cut without a mark, and summaries that disagree with each other.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attnspec.numerics.stats import clopper_pearson
from attnspec.verdicts.classify import VerdictRow, rows_from_json
from attnspec.verdicts.headline import claim_verdicts
from attnspec.verdicts.numbers import numbers
from attnspec.verdicts.table import summary_frame, table_lines
from attnspec.verdicts.vocabulary import CLAIM_VERDICT_MEANINGS, MISPRINT, defined, is_failure

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "reports" / "results"


def _p(claim: str, verdict: str, failures: int, trials: int, bound: float, **kw) -> VerdictRow:
    ci = clopper_pearson(failures, trials)
    return VerdictRow(
        claim, verdict, bound=bound, estimate=ci.estimate, ci_low=ci.low, ci_high=ci.high, trials=trials, **kw
    )


def _committed(name: str) -> list:
    path = RESULTS / name / "verdicts.json"
    if not path.is_file():
        pytest.skip(f"no committed {name} run")
    return rows_from_json(json.loads(path.read_text()))


def _by_claim(rows) -> dict:
    return {cv.claim: cv for cv in claim_verdicts(rows)}


# ------------------------------------------------------------- the header's parameters (1, 2, 10)


def test_the_headline_comes_from_rows_at_the_headers_eps() -> None:
    """Theorem 2 says nothing at ε = 0.1 (the header's); a trivial output at ε = 2/3 is no headline."""
    rows = [
        VerdictRow(
            "linformer.thm2.eq8", "vacuous", {"n": 4096, "k": 4159, "eps": 0.1}, bound=45.2, at_paper_params=True
        ),
        VerdictRow("linformer.thm2.eq8", "vacuous", {"n": 4096, "k": 1024, "eps": 0.1}, bound=80.0),
        *[
            VerdictRow("linformer.thm2.eq8", "cannot-fail", {"n": 4096, "k": k, "eps": 2 / 3}, bound=0.5)
            for k in (16, 4095)
        ],
    ]
    (cv,) = claim_verdicts(rows)
    assert cv.verdict == "vacuous"
    assert "at other ε: 2 cannot-fail" in cv.why


def test_the_committed_jl_check_headline_of_theorem2_is_not_from_another_eps() -> None:
    cv = _by_claim(_committed("jl-check"))["linformer.thm2.eq8"]
    assert cv.verdict != "cannot-fail" and "at other ε" in cv.why


def test_own_rows_that_decide_give_the_verdict_and_the_rest_is_counted_apart() -> None:
    """eq. (18) at ε = 0.3: 8 of 12 rows at the theorem's own k violated; loose at k = ln n is not
    an arrow 'violated → loose' along an unnamed parameter."""
    own = [
        _p(
            "linformer.thm1.eq18",
            "violated" if i < 8 else "loose",
            500 if i < 8 else 0,
            500,
            0.25,
            params={"n": 4096, "k": 400, "eps": 0.3, "w": f"w{i}"},
            reading="theorem-k",
            at_paper_params=True,
        )
        for i in range(12)
    ]
    low = [
        VerdictRow(
            "linformer.thm1.eq18",
            "loose",
            {"n": 4096, "k": 9, "eps": 0.3, "w": f"w{i}"},
            bound=0.9,
            exact=1e-3,
            reading="log-n",
        )
        for i in range(12)
    ]
    (cv,) = claim_verdicts(own + low)
    assert cv.verdict == "violated"
    assert cv.why_parts[0].startswith("theorem-k at its k = 400: 500/500 fail, claimed P ≤ 0.25 (8/12 rows)")


def test_a_stated_probability_failing_at_the_own_k_beyond_n_is_violated_not_vacuous_to_violated() -> None:
    """Real P at n = 128: every row below n is vacuous (bound >= 1); at the theorem's own k >= n the
    rank statement says nothing but its stated probability fails. The headline says violated, where."""
    rows = [
        VerdictRow("linformer.thm1.eq3", "vacuous", {"n": 128, "k": k}, bound=3.0, estimate=1.0, reading="relative")
        for k in (16, 64, 127)
    ] + [
        _p(
            "linformer.thm1.eq3",
            "violated",
            40,
            40,
            0.25,
            params={"n": 128, "k": 1386},
            reading="relative",
            at_paper_params=True,
        )
    ]
    (cv,) = claim_verdicts(rows)
    assert cv.verdict == "violated" and "at its k = 1386: 40/40 fail, claimed P ≤ 0.25" in cv.why


# ------------------------------------------------------------- readings named (4)


def test_the_quantifier_headline_names_its_reading_and_the_one_that_cannot_fail() -> None:
    cv = _by_claim(_committed("jl-check"))["linformer.thm1.quantifier"]
    assert cv.verdict == "violated"
    assert cv.why_parts[0].startswith("uniform at k = ")
    assert "as-written: cannot-fail" in cv.why


def test_lemma1_eq12_says_which_reading_fails() -> None:
    cv = _by_claim(_committed("jl-check"))["linformer.lemma1.eq12"]
    assert cv.verdict == "violated" and cv.why.startswith("absolute at k = ") and "product: loose" in cv.why


def test_sa_checks_orthogonal_r_is_violated_only_unscaled() -> None:
    cv = _by_claim(_committed("sa-check"))["expressivity.jl.orthogonal"]
    assert cv.why.startswith("unscaled at d = ") and "scaled: loose" in cv.why


# ------------------------------------------------------------- misprints (6) and sources (7)


def test_a_misprint_is_its_own_outcome_and_never_a_failure() -> None:
    cvs = _by_claim(_committed("osa-check"))
    for claim in ("osa.eq26", "osa.eq49", "osa.eq89"):
        assert cvs[claim].verdict == MISPRINT
        assert cvs[claim].why_parts[0].startswith("as-printed at ") and "corrected" in cvs[claim].why_parts[1]
    assert not is_failure(MISPRINT) and is_failure("vacuous → violated") and is_failure("violated")


def test_every_verdict_of_every_committed_result_is_in_the_vocabulary() -> None:
    assert {"A → B", MISPRINT} == set(CLAIM_VERDICT_MEANINGS)
    seen = set()
    for path in sorted(RESULTS.glob("*/verdicts.json")):
        seen |= {cv.verdict for cv in claim_verdicts(rows_from_json(json.loads(path.read_text())))}
    assert seen and all(defined(v) for v in seen), sorted(v for v in seen if not defined(v))
    assert not defined("violated → violated") and not defined("holds → nonsense")


def test_the_notes_failures_are_not_charged_to_the_paper() -> None:
    from attnspec.report.ledger import findings

    frame = summary_frame(_committed("sa-check"))
    rows = [
        {"id": r.claim_id, "verdict": r.verdict, "source": r.source, "paper": "expressivity"}
        for r in frame.itertuples()
    ]
    notes = [r for r in rows if r["source"].startswith("notes")]
    assert sum(is_failure(r["verdict"]) for r in notes) == 4
    assert sum(is_failure(r["verdict"]) for r in rows if r["source"] == "paper") == 0
    text = findings(rows)
    assert (
        "claims of the paper itself" in text and "0 fail" in text and "claims of the notes (p. 2, p. 3, p. 4)" in text
    )


def test_the_summary_lists_misprints_apart_from_failures() -> None:
    from attnspec.report.ledger import failures

    rows = [{"id": "osa.eq26", "verdict": MISPRINT}, {"id": "osa.thm31", "verdict": "holds"}]
    assert failures(rows) == "0 fail; misprints (hold as corrected): `osa.eq26`"


# ------------------------------------------------------------- one function for every summary


def test_screen_summary_ledger_and_report_agree_for_every_committed_result() -> None:
    from attnspec.report.experiments import load_experiments
    from attnspec.report.ledger import ledger_rows

    exps = {e.name: e for e in load_experiments(REPO / "experiments")}
    checked = 0
    for path in sorted(RESULTS.glob("*/verdicts.json")):
        rows = rows_from_json(json.loads(path.read_text()))
        frame = summary_frame(rows)
        screen = table_lines(rows, width=100)
        ledger = {r["id"]: r["verdict"] for r in ledger_rows([exps[path.parent.name]], RESULTS, "verdicts.json")}
        for r in frame.itertuples():
            assert ledger[r.claim_id] == r.verdict, (path.parent.name, r.claim_id)
            first = next(x for x in screen if x.startswith(r.claim + " "))
            assert r.verdict.split(":")[0].split(" → ")[0] in first, (path.parent.name, r.claim_id)
            checked += 1
    assert checked > 50


# ------------------------------------------------------------- the why from fields (no regex), labelled (9, 11)


def test_table_builds_the_why_without_parsing_evidence() -> None:
    text = (REPO / "attnspec" / "verdicts" / "table.py").read_text()
    assert "import re" not in text and "re.search" not in text and "evidence" not in text.split('"""', 2)[2]
    row = VerdictRow("x.y", "violated", {"k": 16}, bound=0.1, estimate=1.0, evidence="observed 7 > bound 9")
    assert numbers(row) == "observed 1 > bound 0.1"  # the fields, not the prose


def test_every_number_is_labelled() -> None:
    quant = VerdictRow(
        "x.q", "violated", {"k": 16}, bound=0.1, estimate=1.0, value_name="relative error", bound_name="ε"
    )
    assert numbers(quant) == "relative error 1 > ε 0.1"
    prob = _p("x.p", "violated", 500, 500, 0.8164)
    assert numbers(prob) == "500/500 fail, claimed P ≤ 0.8164"
    ident = VerdictRow("x.i", "violated", {}, bound=1e-12, estimate=0.00909)
    assert numbers(ident) == "residual 0.00909 > tolerance 1e-12"
    loose = VerdictRow(
        "x.l",
        "loose",
        {},
        bound=0.1,
        exact=2.7e-21,
        trials=40,
        estimate=0.0,
        ci_low=0.0,
        ci_high=0.088,
        value_name="Chernoff bound on P(fail)",
    )
    assert numbers(loose) == "Chernoff bound on P(fail) 2.7e-21 vs claimed ≤ 0.1 (3.7e+19× loose)"


def test_theorem1_at_80_columns_says_what_was_violated_and_marks_any_cut() -> None:
    lines = table_lines(_committed("jl-check"), width=80)
    assert all(len(x) <= 80 for x in lines)
    i = next(i for i, x in enumerate(lines) if x.startswith("Theorem 1 (eq. 3) "))
    shown = " ".join(x[32:] for x in lines[i : i + 2])
    assert "fail, claimed P ≤" in shown and "k = " in shown
    cut = [x for x in lines if "…" in x]
    assert all(x.endswith(" …") for x in cut)


def test_the_cli_footer_says_where_the_cut_rest_is() -> None:
    from attnspec.cli._output import screen_lines

    rows = _committed("jl-check")
    narrow = screen_lines(rows, width=80, header="h", budget=30)
    assert (
        any(x.endswith("…") for x in narrow)
        and "cut to fit" in " ".join(narrow)
        and "--verbose" in narrow[-2] + narrow[-1]
    )
    wide = screen_lines(rows, width=400, header="h")
    assert not any("…" in x for x in wide) and "cut to fit" not in " ".join(wide)


def test_the_footer_counts_rows_whose_interval_straddles_the_claim_from_above() -> None:
    from attnspec.cli._output import screen_lines
    from attnspec.verdicts.classify import classify_probability

    d = classify_probability(claimed=6.35e-6, failures=1, trials=10_000)
    rows = [_p("x.p", d.verdict, 1, 10_000, 6.35e-6), _p("x.p", "holds", 10, 10_000, 1.5e-3)]
    text = " ".join(screen_lines(rows, width=100, header="h"))
    assert "1 row measured, not holds: the estimate is above the claim" in text


def test_the_conventions_define_every_claim_verdict_word() -> None:
    from attnspec.verdicts.vocabulary import claim_verdict_lines

    text = (REPO / "docs" / "conventions.md").read_text()
    assert all(line in text for line in claim_verdict_lines("- "))
