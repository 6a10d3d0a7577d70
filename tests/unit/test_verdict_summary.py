"""The short verdict summary: one line per (claim, reading), counts, and the most telling row."""

from __future__ import annotations

import io

from rich.console import Console

from attnspec.verdict_summary import print_verdict_summary, summarize, summary_lines
from attnspec.verdicts import VerdictRow


def _rows() -> list[VerdictRow]:
    return [
        VerdictRow("lemma1", "holds", {"k": 10}, bound=0.9, estimate=0.3, evidence="ok at 10", reading="squared"),
        VerdictRow("lemma1", "violated", {"k": 20}, bound=0.01, estimate=0.05, evidence="5x over", reading="squared"),
        VerdictRow("lemma1", "violated", {"k": 30}, bound=0.01, estimate=0.5, evidence="50x over", reading="squared"),
        VerdictRow("lemma1", "vacuous", {"k": 40}, bound=2.0, evidence="bound >= 1", reading="squared"),
        VerdictRow("lemma1", "loose", {"k": 10}, bound=0.5, estimate=0.001, evidence="500x", reading="product"),
        VerdictRow("lemma1", "loose", {"k": 20}, bound=0.5, estimate=0.1, evidence="5x", reading="product"),
        VerdictRow("thm2", "vacuous", {"n": 64}, bound=3.0, evidence="k >= n", reading=""),
    ]


def test_one_line_per_claim_and_reading_with_the_most_telling_row() -> None:
    lines = summarize(_rows())
    assert [(s.claim, s.reading) for s in lines] == [("lemma1", "squared"), ("lemma1", "product"), ("thm2", None)]
    squared, product, thm2 = lines
    assert squared.counts == {"violated": 2, "holds": 1, "vacuous": 1} and squared.total == 4
    assert squared.telling.evidence == "50x over"  # the violation furthest above its bound
    assert product.telling.evidence == "500x"  # the loosest bound
    assert thm2.counts == {"vacuous": 1} and thm2.telling.verdict == "vacuous"


def test_text_lines_fit_the_width_and_keep_the_counts() -> None:
    rows = _rows()
    rows[2].evidence = "x" * 500
    text = summary_lines(rows, width=80)
    assert all(len(line) <= 80 for line in text)
    assert text[0].startswith("lemma1 [squared]: 2 violated, 1 holds, 1 vacuous of 4 — violated at k=30: xxx")
    assert text[2] == "thm2: 1 vacuous — k >= n"  # one row: the counts name its verdict


def test_printed_summary_keeps_brackets_and_names_the_full_table() -> None:
    buf = io.StringIO()
    print_verdict_summary(_rows(), title="jl-check", console=Console(file=buf, width=120, color_system=None))
    out = buf.getvalue()
    assert "lemma1 [squared]: 2 violated" in out and "[product]" in out
    assert out.splitlines()[0] == "jl-check: 7 verdict rows" and "--verbose" in out.splitlines()[-1]
    assert len(out.splitlines()) == 5
