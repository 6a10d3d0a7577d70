"""The verdict table and the labels it rests on: true to the rows they summarise.

* "vacuous" never hides a measured failure (a stated probability exceeded at the claim's own
  setting is "violated"; "vacuous → violated" where the own setting says nothing and rows
  elsewhere fail);
* the row quoted is the worst, not the first, and the count of rows that agree is given;
* "at the paper's parameters" only where the paper fixes them;
* violation-search rows say what was shown (no failure in N trials, the power);
* the report's summary takes each theorem from the paper's main experiment.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from attnspec.verdicts.classify import VerdictRow, classify_probability, detectable_rate
from attnspec.verdicts.sentences import (
    agreeing,
    hidden_failure,
    summary_lines,
    telling_row,
)
from attnspec.verdicts.table import claim_verdicts, markdown, summary_frame, table_lines

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "reports" / "results"


def _vac(
    w: str,
    failures: int,
    *,
    k: int = 4621,
    n: int = 4096,
    bound: float = 0.25,
    trials: int = 500,
    paper: bool = True,
    reading: str = "relative",
) -> VerdictRow:
    from attnspec.numerics.stats import clopper_pearson

    ci = clopper_pearson(failures, trials)
    return VerdictRow(
        "linformer.thm1.eq3",
        "vacuous",
        {"n": n, "k": k, "w": w},
        bound=bound,
        estimate=ci.estimate,
        ci_low=ci.low,
        ci_high=ci.high,
        trials=trials,
        seed=1,
        reading=reading,
        evidence=f"k = {k} >= n = {n}: vacuous; measured {failures}/{trials}",
        at_paper_params=paper,
    )


def test_a_vacuous_row_whose_stated_bound_fails_is_a_hidden_failure() -> None:
    assert hidden_failure(_vac("random", 500))
    assert not hidden_failure(_vac("value", 0))
    assert not hidden_failure(_vac("random", 500, bound=8028.0))  # a bound >= 1 states nothing to fail


def test_vacuous_never_hides_a_measured_failure() -> None:
    rows = [_vac("value", 0), _vac("random", 500), _vac("adv", 480)]
    (cv,) = claim_verdicts(rows)
    assert cv.verdict == "violated"  # the stated probability fails at the claim's own k
    assert "at its k = 4621: 500/500 fail, claimed P ≤ 0.25" in cv.why
    assert "(2/3 rows)" in cv.why  # two of the three rows exceed the stated bound


def test_vacuous_at_its_own_k_and_violated_below_reads_both() -> None:
    rows = [
        _vac("value", 0),
        VerdictRow(
            "linformer.thm1.eq3",
            "violated",
            {"n": 4096, "k": 4095, "w": "random"},
            bound=0.82,
            estimate=1.0,
            ci_low=0.99,
            ci_high=1.0,
            trials=500,
            reading="relative",
            evidence="observed 500/500 = 1, 95% CI [0.9926, 1] above claimed 0.8164",
        ),
    ]
    (cv,) = claim_verdicts(rows)
    assert cv.verdict == "vacuous → violated"
    assert cv.why_parts[0] == "vacuous: k = 4621 ≥ n = 4096"
    assert cv.why_parts[1] == "violated at k = 4095: 500/500 fail, claimed P ≤ 0.82"


def test_a_claim_that_says_nothing_anywhere_stays_vacuous() -> None:
    (cv,) = claim_verdicts([_vac("value", 0), _vac("w2", 3)])
    assert cv.verdict == "vacuous" and cv.why == "all 2 rows vacuous, e.g. k = 4621 ≥ n = 4096"


def test_the_row_shown_is_the_worst_of_rows_tied_on_the_bound() -> None:
    rows = [_vac("value", 0), _vac("random", 500), _vac("adv", 480)]
    assert telling_row(rows).params["w"] == "random"  # not the first (w = value, 0/500)
    assert agreeing(telling_row(rows), rows) == 2
    (line,) = summary_lines(rows)
    assert "w = random" in line and "measured 500/500" in line and "(2 of 3 rows there agree)" in line


def test_at_the_papers_parameters_only_where_the_paper_fixes_them() -> None:
    from attnspec.verdicts import registry as claims
    from attnspec.verdicts.sentences import own_setting

    assert own_setting("linformer.thm1.eq3") == "at attnspec's default"
    assert own_setting("linformer.lemma1.eq11") == "at attnspec's default"
    assert "N = 50, d = 64, h = 4" in claims.get("osa.thm43").paper_params
    assert "N = 50, d = 64, h = 4" in claims.get("osa.thm44").paper_params
    assert own_setting("osa.thm31.eq10") == "at the paper's parameters"
    (line,) = summary_lines([_vac("value", 0)])
    assert "at attnspec's default" in line and "paper's parameters" not in line


def test_lemma1_has_no_parameters_of_its_own() -> None:
    from attnspec.theory.linformer.rows import at_paper_params

    row = {"claim": "linformer.lemma1.eq11", "n": 4096, "k": 4621, "eps": 0.1}
    assert not at_paper_params(row)  # Theorem 1's k is not Lemma 1's
    assert at_paper_params({**row, "claim": "linformer.thm1.eq3"})


def test_osa_theorems_43_44_are_not_at_the_papers_sizes() -> None:
    from attnspec.theory.osa.jacobian import PAPER_SIZES, _paper_params

    small = pd.DataFrame({"n": [6], "heads": [1]})
    assert not _paper_params("qr", small) and not _paper_params("NS cubic K=6", small)
    paper = pd.DataFrame({"n": [PAPER_SIZES["N"]], "heads": [PAPER_SIZES["heads"]]})
    assert _paper_params("NS cubic K=6", paper) and not _paper_params("NS muon K=6", paper)


def test_violation_search_evidence_says_what_was_shown() -> None:
    d = classify_probability(claimed=6.351e-06, failures=0, trials=2000)
    assert d.verdict == "measured"
    assert "no failure in 2000 trials" in d.reason and "power 0.99 against failure rates >= 0.23 %" in d.reason
    assert "<= claimed" not in d.reason  # the interval reaches far above the claim
    # the power: 2000 failure-free trials meet a rate of 0.23 % at least once with probability 0.99
    p = detectable_rate(2000)
    assert 1 - (1 - p) ** 2000 == pytest.approx(0.99) and round(p, 4) == 0.0023


def test_a_violation_search_misses_a_rare_violation_at_a_stated_rate() -> None:
    from attnspec.theorem import sequential as SQ

    assert SQ.miss_rate(0.001, 2000) == pytest.approx(math.exp(2000 * math.log(0.999)))
    assert round(SQ.miss_rate(0.001, 2000), 3) == 0.135
    assert SQ.miss_rate(0.001, 10_000) < 1e-4


def test_a_straddling_interval_is_not_called_below_the_claim() -> None:
    d = classify_probability(claimed=0.1, failures=16, trials=200)
    assert d.verdict == "holds"
    assert "straddles" in d.reason and "lower end <= claimed 0.1" in d.reason
    assert "CI [0.04642, 0.1267] <= claimed" not in d.reason


def test_secondary_readings_do_not_decide_but_are_named() -> None:
    rows = [
        VerdictRow(
            "linformer.thm2.eq8",
            "cannot-fail",
            {"k": 100},
            bound=1e-3,
            estimate=0.5,
            value_name="error of 0 / tolerance",
            bound_name="",
            reading="spectral",
            evidence="the zero output E = F = 0 has error ‖softmax(w)V‖ = 0.2 <= the tolerance ε‖softmax(w)‖‖V‖ = 0.4",
        ),
        VerdictRow(
            "linformer.thm2.eq8",
            "violated",
            {"k": 100},
            bound=1e-3,
            estimate=0.5,
            ci_low=0.4,
            ci_high=0.6,
            trials=100,
            reading="proof-spectral",
            evidence="observed 50/100 = 0.5, 95% CI [0.4, 0.6] above claimed 0.001",
        ),
    ]
    (cv,) = claim_verdicts(rows)
    assert cv.verdict == "cannot-fail"
    assert "error of 0 / tolerance 0.5" in cv.why and "proof-spectral: violated in 1 rows" in cv.why


def test_an_arrow_only_joins_the_own_setting_and_the_rows_elsewhere() -> None:
    rows = [
        VerdictRow("x.l", v, {"k": k}, bound=1.0, exact=e, reading="r", evidence=v)
        for v, k, e in (("holds", 8, 0.5), ("holds", 16, 0.3), ("loose", 64, 0.01), ("loose", 128, 0.001))
    ]
    (cv,) = claim_verdicts(rows)
    assert cv.verdict == "loose"  # no own setting: the most telling deciding verdict, where it is said
    assert cv.why_parts[0].startswith("at k = 64: ") and cv.why_parts[1] == "2 holds"


def test_table_fits_its_width_and_marks_what_it_cuts() -> None:
    rows = [_vac("value", 0), _vac("random", 500)]
    for width in (48, 60, 80, 100, 140):
        lines = table_lines(rows, width=width)
        assert all(len(x) <= width for x in lines)
        assert all(x.endswith("…") for x in lines if "…" in x)  # a cut is marked at the end of its line
        assert len(lines) <= 1 + 2 * len(claim_verdicts(rows))
    assert not any("…" in x for x in table_lines(rows, width=140))
    assert any(x.endswith("…") for x in table_lines(rows, width=48))
    md = markdown(rows)
    assert md.splitlines()[0] == "| claim | verdict | why |" and "violated" in md


def test_the_frame_and_the_rows_give_the_same_table() -> None:
    from attnspec.verdicts.classify import verdicts_frame

    rows = [_vac("value", 0), _vac("random", 500), _vac("adv", 3, k=4095, paper=False)]
    assert summary_frame(rows).equals(summary_frame(verdicts_frame(rows)))


# --------------------------------------------------------------------------- committed runs


def _committed(name: str) -> list:
    from attnspec.verdicts.classify import rows_from_json

    path = RESULTS / name / "verdicts.json"
    if not path.is_file():
        pytest.skip(f"no committed {name} run")
    return rows_from_json(json.loads(path.read_text()))


def test_the_committed_real_attention_run_is_never_headlined_bare_vacuous() -> None:
    rows = _committed("jl-check-real")
    (thm1,) = [cv for cv in claim_verdicts(rows) if cv.claim == "linformer.thm1.eq3"]
    # "vacuous → violated" where no k < n decides the theorem (eps = 0.1), "violated" where one does (eps = 2/3)
    assert thm1.verdict in ("vacuous → violated", "violated")
    if thm1.verdict == "vacuous → violated":
        assert [r for r in rows if hidden_failure(r)], "the failure a vacuous row hides is what the headline shows"


def test_the_reports_claim_verdicts_are_the_tables_whichever_experiment_comes_first() -> None:
    """The report's summary and ledger pool every experiment that checks a claim: Theorem 1
    reads as the commands print it, with the real-attention run first in file order or last."""
    from attnspec.report.experiments import load_experiments
    from attnspec.report.ledger import ledger_rows

    exps = [e for e in load_experiments(REPO / "experiments") if e.paper == "linformer"]
    names = [e.name for e in exps]
    assert names.index("jl-check-real") < names.index("jl-check")  # in file order the real-attention run comes first
    if not (RESULTS / "jl-check" / "verdicts.json").is_file():
        pytest.skip("no committed jl-check run")
    stated = set()
    for order in (exps, exps[::-1]):
        (thm1,) = [r for r in ledger_rows(order, RESULTS, "verdicts.json") if r["id"] == "linformer.thm1.eq3"]
        stated.add(thm1["stated"])
        assert thm1["verdict"] == thm1["stated"]  # one verdict: the one the commands print
    # the real-attention run (eps = 2/3) fails at the theorem's own k < n, where the n = 4096
    # run alone reads "vacuous → violated": pooled, in either order, the claim is violated
    assert stated == {"violated"}


def test_where_no_k_below_n_can_decide_theorem1_the_note_says_so_with_the_rate_at_n_minus_1() -> None:
    from attnspec.cli.jl import undecidable

    rows = [
        VerdictRow(
            "linformer.thm1.eq3",
            "vacuous",
            {"n": 512, "k": 511, "w": w},
            bound=2.5,
            estimate=e,
            trials=500,
            reading="relative",
        )
        for w, e in (("value", 0.2), ("random", 1.0))
    ]
    text = undecidable(rows, 512)
    assert text.startswith("no k below n can decide Theorem 1")
    assert "at k = 511 the relative error exceeds ε in 500/500 trials (worst row)" in text
    assert undecidable([], 512) == "no k below n can decide Theorem 1"
