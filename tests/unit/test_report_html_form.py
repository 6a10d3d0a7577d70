"""The HTML edition raises exponents (n^0.99 → n<sup>0.99</sup>) outside code, and a figure's alt
text says what it shows."""

from __future__ import annotations

from pathlib import Path

import pytest

from attnspec.report.html import render_pages, superscripts


@pytest.mark.parametrize(
    ("text", "html"),
    [
        ("k90 scales as n^0.99 [0.989, 0.994].", "k90 scales as n<sup>0.99</sup> [0.989, 0.994]."),
        ("k ∝ n^β per layer", "k ∝ n<sup>β</sup> per layer"),
        ("(n/n₀)^(β − 1), its", "(n/n₀)<sup>β − 1</sup>, its"),
        ("2n·e^(−(ε²−ε³)k/4) where", "2n·e<sup>−(ε²−ε³)k/4</sup> where"),
        ("R^ort = Q & more", "R<sup>ort</sup> = Q &amp; more"),
    ],
)
def test_exponents_are_raised(text: str, html: str) -> None:
    assert superscripts(text) == html


def test_text_without_an_exponent_is_left_alone() -> None:
    assert superscripts("no caret here") is None and superscripts("a lone ^ caret") is None


def test_the_rendered_page_has_no_caret_outside_code(tmp_path: Path) -> None:
    body, _ = render_pages([("REPORT", "# t\n\nk90 ∝ n^1.05 and `n^keep` in code.\n")], tmp_path)
    assert "n<sup>1.05</sup>" in body and "<code>n^keep</code>" in body


def test_alt_text_is_what_the_caption_says_the_figure_shows() -> None:
    from attnspec.report.captions import alt_text, caption

    text = caption("scaling_grid", Path("no-such-run"))
    alt = alt_text(text)
    assert alt.startswith("k90/n against n for each model and corpus") and "[" not in alt and len(alt) <= 162
    assert alt_text("Short. Second sentence.") == "Short"


def test_a_repeated_verdict_table_is_shown_once_and_its_figures_once() -> None:
    from attnspec.report.papers import _without_repeats

    table = ["| verdict | claims | ids |", "|---|---|---|", "| **holds** | 1 | `a.b` |", ""]
    first = [
        "### Construction",
        "",
        *table,
        "![x](figures/sa-check/sa_success_vs_d.png)",
        "![y](figures/sa-check/row.png)",
    ]
    later = ["### Grid", "", *table, "![x](figures/sa-sweep/sa_success_vs_d.png)"]
    a, b = _without_repeats([first, later])
    assert "| verdict | claims | ids |" in a and "| verdict | claims | ids |" not in b
    assert any(line.startswith("Claims by verdict: the same as [Construction](#construction)") for line in b)
    assert not any("sa-check/sa_success_vs_d" in line for line in a) and any("row.png" in line for line in a)


def test_an_alt_text_spells_an_exponent_out() -> None:
    from attnspec.report.captions import alt_text

    assert alt_text("Fitted β of k90 ∝ n^β per layer.") == "Fitted β of k90 ∝ n to the power β per layer"
