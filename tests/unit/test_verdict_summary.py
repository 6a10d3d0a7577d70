"""Verdict first: one line per claim, the verdict at the paper's parameters, then per
reading what was decided, where it changes, and what was not counted."""

from __future__ import annotations

import io
import re

import pandas as pd
from rich.console import Console

from attnspec.verdicts.classify import VerdictRow, verdicts_frame
from attnspec.verdicts.sentences import (
    claim_name,
    print_verdict_summary,
    summarize,
    summary_lines,
    telling_row,
)

EQ3 = "linformer.thm1.eq3"


def _thm1() -> list[VerdictRow]:
    """Theorem 1 as the issue describes it: vacuous at the paper's k > n, and below n the
    relative reading fails while the additive one holds, loosely."""
    paper = {"n": 4096, "k": 4621, "eps": 0.1}
    return [
        VerdictRow(
            EQ3,
            "vacuous",
            paper,
            bound=0.25,
            estimate=0.95,
            trials=10000,
            reading="relative",
            evidence="k = 4621 ≥ n = 4096",
            at_paper_params=True,
        ),
        VerdictRow(
            EQ3,
            "vacuous",
            paper,
            bound=0.25,
            estimate=0.0,
            trials=10000,
            reading="additive",
            evidence="k = 4621 ≥ n = 4096",
            at_paper_params=True,
        ),
        VerdictRow(
            EQ3,
            "vacuous",
            {"n": 4096, "k": 8, "eps": 0.1},
            bound=900.0,
            reading="relative",
            evidence="claimed 900 >= 1",
        ),
        VerdictRow(
            EQ3,
            "violated",
            {"n": 4096, "k": 2048, "eps": 0.1},
            bound=0.25,
            estimate=0.9,
            trials=10000,
            reading="relative",
            evidence="9000/10000 above 0.25",
        ),
        VerdictRow(
            EQ3,
            "violated",
            {"n": 4096, "k": 4095, "eps": 0.1},
            bound=0.25,
            estimate=1.0,
            trials=10000,
            reading="relative",
            evidence="10000/10000 at k = 4095, claimed ≤ 0.25",
        ),
        VerdictRow(
            EQ3,
            "loose",
            {"n": 4096, "k": 4095, "eps": 0.1},
            bound=0.25,
            exact=1.1e-4,
            estimate=1e-4,
            trials=10000,
            reading="additive",
            evidence="claimed 0.25 vs exact 1.1e-4",
        ),
    ]


def test_one_line_per_claim_verdict_at_the_papers_parameters_first() -> None:
    (line,) = summary_lines(_thm1())
    assert line.startswith(
        "Theorem 1 (eq. 3) [linformer.thm1.eq3]: vacuous under every reading at "
        "attnspec's default (k = 4621): k = 4621 ≥ n = 4096"
    ), line
    assert "the relative reading fails at k = 4095 (10000/10000 at k = 4095, claimed ≤ 0.25)" in line
    assert "violated in all 2 deciding rows" in line and "not counted: 1 vacuous" in line
    assert "the additive reading holds but is 2,273× loose at k = 4095" in line


def test_counts_only_rows_that_decide_and_say_where_the_verdict_changes() -> None:
    rows = [
        VerdictRow("x.lemma", "holds", {"k": k}, bound=0.5, exact=0.3, reading="r", evidence=f"ok {k}") for k in (4, 8)
    ]
    rows += [
        VerdictRow("x.lemma", "loose", {"k": k}, bound=0.5, exact=0.5 / (20 * k), reading="r", evidence=f"loose {k}")
        for k in (16, 32, 64)
    ]
    rows += [
        VerdictRow("x.lemma", "hypothesis-unmet", {"k": 128}, reading="r", evidence="k > n"),
        VerdictRow("x.lemma", "cannot-fail", {"k": 2}, reading="r", evidence="zero output"),
    ]
    (line,) = summary_lines(rows)
    assert line.startswith(
        "x.lemma: the r reading holds but is 320× (up to 1,280×) loose at k = 16 (loose 16); "
        "3 loose, 2 holds of 5 deciding rows; holds at k = 4–8, loose at k = 16–64; "
        "not counted: 1 hypothesis-unmet, 1 cannot-fail"
    ), line


def test_a_reading_with_only_non_deciding_rows_is_counted_and_an_all_vacuous_claim_shows_its_own_k() -> None:
    rows = [
        VerdictRow("x.thm", "vacuous", {"k": k}, bound=b, evidence=f"k = {k}")
        for k, b in ((6, 488.0), (16, 450.0), (867, 0.4977))
    ]
    (line,) = summary_lines(rows)
    # never k = log n (the first row): the row nearest to saying something
    assert line == "x.thm: vacuous as stated in all 3 rows — at k = 867: k = 867"
    assert telling_row(rows).params["k"] == 867
    measured = [VerdictRow("x.m", "measured", {}, evidence="a ratio", reading="as-stated")]
    assert summary_lines(measured) == ["x.m: measured without a verdict as stated: a ratio"]


def test_violation_furthest_above_its_bound_is_the_telling_row() -> None:
    rows = [
        VerdictRow("x.l", "violated", {"k": 20}, bound=0.01, estimate=0.05, evidence="5x over", reading="s"),
        VerdictRow("x.l", "violated", {"k": 30}, bound=0.01, estimate=0.5, evidence="50x over", reading="s"),
        VerdictRow("x.l", "holds", {"k": 10}, bound=0.9, estimate=0.3, evidence="ok", reading="s"),
    ]
    assert telling_row(rows).evidence == "50x over"
    (cs,) = summarize(rows)
    assert [rs.reading for rs in cs.readings] == ["s"] and cs.readings[0].counts() == {"violated": 2, "holds": 1}


def test_the_frame_of_verdicts_parquet_gives_the_same_lines() -> None:
    rows = _thm1()
    frame = verdicts_frame(rows)
    assert summary_lines(frame) == summary_lines(rows)
    assert summary_lines(pd.read_parquet(_roundtrip(frame))) == summary_lines(rows)


def _roundtrip(frame: pd.DataFrame) -> io.BytesIO:
    buf = io.BytesIO()
    frame.to_parquet(buf)
    buf.seek(0)
    return buf


def test_claim_names_come_from_the_registry() -> None:
    assert claim_name(EQ3) == "Theorem 1 (eq. 3)"
    assert claim_name("osa.lemc2") == "Lemma C.2 (eqs. 56–57)"
    assert claim_name("linformer.thm2.tolerance").startswith("Theorem 2, eqs. (8), (22), (24)")
    assert claim_name("no.such.claim") == "no.such.claim"


def test_printed_summary_wraps_evidence_and_never_cuts_it() -> None:
    rows = _thm1()
    rows[4].evidence = " ".join(f"word{i}" for i in range(200))
    buf = io.StringIO()
    print_verdict_summary(rows, title="jl-check", console=Console(file=buf, width=100, color_system=None))
    out = buf.getvalue().splitlines()
    assert out[0] == "jl-check: 1 claims, 6 verdict rows (2 violated, 1 loose decide something; 3 do not)"
    assert "--verbose" in out[-1]
    assert all(len(line) <= 100 for line in out) and "…" not in "".join(out)
    body = " ".join(line.strip() for line in out[1:-1])
    assert re.findall(r"word\d+", body) == [f"word{i}" for i in range(200)]
    assert out[2].startswith("      ")  # continuation lines are indented under the claim


def test_wrapped_text_lines_keep_every_word() -> None:
    rows = _thm1()
    (wrapped,) = summary_lines(rows, width=60)
    assert all(len(x) <= 60 for x in wrapped.splitlines())
    assert " ".join(wrapped.split()) == " ".join(summary_lines(rows)[0].split())


def test_summary_of_a_real_battery_has_one_line_per_claim() -> None:
    from attnspec.battery import run_battery

    res = run_battery(
        "sa-check",
        {
            "L": 24,
            "k": 2,
            "eps": 0.05,
            "delta": 0.3,
            "m": 0.2,
            "M": 1.0,
            "beta": 0.2,
            "trials": 20,
            "sweep_L": "12,24",
            "sweep_k": "1,2",
            "sweep_trials": 20,
            "seed": 3,
        },
    )
    lines = summary_lines(res.verdicts)
    claims = list(dict.fromkeys(r.claim for r in res.verdicts))
    assert len(lines) == len(claims)
    for line, claim in zip(lines, claims, strict=True):
        assert f"[{claim}]: " in line and "…" not in line


def test_readings_that_differ_at_the_papers_parameters_are_stated_apart() -> None:
    rows = [
        VerdictRow(
            "x.thm",
            "violated",
            {"k": 64},
            bound=0.1,
            estimate=0.9,
            trials=100,
            reading="relative",
            evidence="90/100 > 0.1",
            at_paper_params=True,
        ),
        VerdictRow(
            "x.thm",
            "holds",
            {"k": 64},
            bound=0.1,
            exact=0.05,
            reading="additive",
            evidence="exact 0.05 <= 0.1",
            at_paper_params=True,
        ),
        VerdictRow("x.thm", "holds", {"k": 32}, bound=0.1, exact=0.06, reading="additive", evidence="exact 0.06"),
    ]
    (line,) = summary_lines(rows)
    # x.thm is not registered: nothing says the paper fixes k = 64, so it is attnspec's default
    assert line == (
        "x.thm: at attnspec's default (k = 64): the relative reading fails (90/100 > 0.1); "
        "the additive reading holds (exact 0.05 <= 0.1); the additive reading holds at k = 32 (exact 0.06)"
    )


def test_no_change_point_when_the_verdicts_interleave() -> None:
    rows = [
        VerdictRow("x.l", v, {"k": k}, bound=1.0, exact=e, reading="r", evidence=v)
        for v, k, e in (("holds", 4, 0.5), ("loose", 8, 0.01), ("holds", 16, 0.5))
    ]
    (line,) = summary_lines(rows)
    assert (
        line.endswith("1 loose, 2 holds of 3 deciding rows")
        and " at k = 4–16" not in line
        and "holds at k =" not in line
    )
