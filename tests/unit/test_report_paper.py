"""The report read as a paper: its budgets (REPORT.md, its summary, its tables), a caption under
every figure, a ledger row per claim, the appendix it links to, and the HTML edition (every
image embedded and decodable, every internal link resolving; in a real browser when Chromium
is installed)."""

from __future__ import annotations

import base64
import json
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
REPORTS = REPO / "reports"
CHROMIUM = Path("/usr/bin/chromium")


def _report() -> str:
    path = REPORTS / "REPORT.md"
    if not path.is_file():
        pytest.skip("no committed REPORT.md")
    return path.read_text()


def _section(text: str, heading: str) -> str:
    return text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def _tables(text: str) -> list[list[str]]:
    """Every Markdown table of ``text`` as its lines."""
    tables, current = [], []
    for line in text.splitlines():
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    return tables + ([current] if current else [])


# ---- budgets ---------------------------------------------------------------------------------


def test_the_report_and_its_summary_keep_their_budgets() -> None:
    from attnspec.report.summary import MAX_LINES, MAX_WORDS

    text = _report()
    assert len(text.splitlines()) <= 400
    summary = [line for line in _section(text, "Summary").splitlines() if line.strip()]
    assert 5 <= len(summary) <= MAX_LINES
    assert sum(len(line.split()) for line in summary) <= MAX_WORDS
    for i, line in enumerate(summary, 1):  # numbered, one finding a line, each linked to its section
        assert line.startswith(f"{i}. **"), line
        assert re.search(r"\]\(#[\w-]+\)$", line), f"summary line {i} links no section: {line[-80:]}"
    assert "n^" in "\n".join(summary) and "%" in "\n".join(summary)


def test_the_body_has_small_tables_and_the_ledger_one_row_per_claim() -> None:
    from attnspec.report.appendix import MAX_BODY_ROWS
    from attnspec.report.ledger import HEADING

    text = _report()
    ledger = _section(text, HEADING)
    body = text.replace(ledger, "")
    for table in _tables(body):
        assert len(table) - 2 <= MAX_BODY_ROWS, table[0]
    claims = set()
    for path in (REPORTS / "results").glob("*/verdicts.json"):
        claims |= {r["claim"] for r in json.loads(path.read_text())}
    (table,) = _tables(ledger)
    ids = [re.match(r"\| `([^`]+)`", row).group(1) for row in table[2:]]
    assert sorted(ids) == sorted(claims) and len(ids) == len(set(ids))


def test_every_figure_has_a_numbered_caption_and_no_figure_is_shown_twice() -> None:
    import hashlib

    from attnspec.report.captions import CAPTION

    lines = _report().splitlines()
    images = [i for i, line in enumerate(lines) if line.startswith("![")]
    assert len(images) >= 15
    digests = set()
    for number, i in enumerate(images, 1):
        assert line_has_one_image(lines[i]), lines[i]
        assert CAPTION.match(lines[i + 1]) and lines[i + 1].startswith(f"*Figure {number}.*"), lines[i + 1]
        path = REPORTS / re.search(r"\]\(([^)]+)\)", lines[i]).group(1)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert digest not in digests, f"{path} repeats a figure shown before"
        digests.add(digest)
    assert not any(re.search(r"!\[", line) for j, line in enumerate(lines) if j not in images)


def line_has_one_image(line: str) -> bool:
    return len(re.findall(r"!\[", line)) == 1 and line.endswith(")")


def test_every_appendix_link_leads_to_a_page_and_heading() -> None:
    from attnspec.report.anchors import anchor

    text = _report()
    links = re.findall(r"\]\((appendix/[\w.-]+\.md)(?:#([\w-]+))?\)", text)
    assert links
    for page, frag in links:
        path = REPORTS / page
        assert path.is_file(), page
        if frag:
            headings = {anchor(h) for h in re.findall(r"^#+ (.+)$", path.read_text(), flags=re.M)}
            assert frag in headings, (page, frag)


# ---- the machinery, on small inputs ----------------------------------------------------------


def test_long_tables_move_to_the_appendix_and_short_ones_stay() -> None:
    from attnspec.report.anchors import anchor
    from attnspec.report.appendix import MAX_BODY_ROWS, move_tables

    short = ["| a |", "|---|", *["| 1 |"] * MAX_BODY_ROWS]
    long = ["| b |", "|---|", *["| 2 |"] * (MAX_BODY_ROWS + 1)]
    pages: dict[str, list[str]] = {}
    out = move_tables(["## Q", "", *short, "", "### Part", "", *long, ""], "q", pages, keep=2)
    assert short[0] in out and long[0] not in out
    assert long[0] in pages["q"] and "## Part" in pages["q"]
    link = next(line for line in out if "appendix/q.md" in line)
    assert f"#{anchor('Part')})" in link and f"({MAX_BODY_ROWS + 1} rows)" in link
    pages = {}
    out = move_tables(["## Q", "", *short, "", *short, ""], "q", pages, keep=1)  # one table per question
    assert out.count(short[0]) == 1 and pages["q"].count(short[0]) == 1


def test_placing_figures_numbers_them_captions_them_and_drops_byte_identical_twins(tmp_path: Path) -> None:
    from attnspec.report.captions import place_figures

    for folder in ("a", "b"):
        (tmp_path / "figures" / folder).mkdir(parents=True)
        (tmp_path / "results" / folder).mkdir(parents=True)
        (tmp_path / "figures" / folder / "time_vs_n.png").write_bytes(b"same bytes")
        (tmp_path / "figures" / folder / "time_vs_n.svg").write_text("<svg/>")
    (tmp_path / "figures" / "a" / "scaling_beta.png").write_bytes(b"other bytes")
    md = ["text ![x](figures/a/time_vs_n.png) ![y](figures/a/scaling_beta.png)", "", "![z](figures/b/time_vs_n.png)"]
    out = place_figures(md, tmp_path)
    assert out[0] == "text"
    assert [line for line in out if line.startswith("*Figure")][0].startswith("*Figure 1.* Forward time")
    assert sum(line.startswith("![") for line in out) == 2  # the twin in b/ is left out ...
    assert not (tmp_path / "figures" / "b" / "time_vs_n.png").exists()  # ... and deleted
    assert not (tmp_path / "figures" / "b" / "time_vs_n.svg").exists()
    with pytest.raises(KeyError, match="no caption"):
        place_figures(["![q](figures/a/unknown.png)"], tmp_path)


# ---- the HTML edition ------------------------------------------------------------------------


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.hrefs: list[str] = []
        self.images: list[str] = []
        self.toc = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(str(a["id"]))
        if tag == "a" and a.get("href"):
            self.hrefs.append(str(a["href"]))
        if tag == "img":
            self.images.append(str(a.get("src")))
        if tag == "nav" and a.get("class") == "toc":
            self.toc = True


def _check_html(path: Path) -> _Links:
    parser = _Links()
    parser.feed(path.read_text())
    assert parser.toc, "no table of contents"
    assert parser.images
    for src in parser.images:
        assert src.startswith("data:image/png;base64,"), src[:60]
        assert base64.b64decode(src.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
    internal = [h for h in parser.hrefs if h.startswith("#")]
    assert internal
    missing = sorted({h[1:] for h in internal} - parser.ids)
    assert not missing, f"links to no heading: {missing[:5]}"
    assert not [h for h in parser.hrefs if h.endswith(".md") or ".md#" in h], "a link leaves the file"
    return parser


def test_the_committed_html_edition_is_self_contained_and_its_links_resolve() -> None:
    path = REPORTS / "REPORT.html"
    if not path.is_file():
        pytest.skip("no committed REPORT.html")
    parser = _check_html(path)
    assert len(parser.images) == _report().count("\n![") + sum(
        p.read_text().count("\n![") for p in (REPORTS / "appendix").glob("*.md")
    )


def test_html_rendering_of_a_small_report(tmp_path: Path) -> None:
    from attnspec.report.html import write_html

    png = base64.b64decode(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
    )
    (tmp_path / "figures" / "a").mkdir(parents=True)
    (tmp_path / "figures" / "a" / "f.png").write_bytes(png)
    (tmp_path / "appendix").mkdir()
    (tmp_path / "REPORT.md").write_text(
        "# R\n\n## Summary\n\n1. **One.** See [the part](#a-part-d--x) and [page](appendix/p.md).\n\n"
        "## A part: d* | x\n\n![F](figures/a/f.png)\n*Figure 1.* A caption.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
        "## Summary\n\nA repeated heading.\n"
    )
    (tmp_path / "appendix" / "p.md").write_text(
        "# p: the page\n\n[Back](../REPORT.md) · [table](p.md#rows)\n\n## Rows\n\n![G](../figures/a/f.png)\n"
    )
    parser = _check_html(write_html(tmp_path))
    assert {"summary", "summary-1", "p-the-page", "rows", "top"} <= parser.ids
    assert "#p-the-page" in parser.hrefs and "#top" in parser.hrefs and "#rows" in parser.hrefs
    assert len(parser.images) == 2


@pytest.mark.skipif(not CHROMIUM.is_file(), reason="headless Chromium (/usr/bin/chromium) is not installed")
def test_the_html_edition_in_a_real_browser(tmp_path: Path) -> None:
    """Chromium loads the committed REPORT.html offline: every image decodes (naturalWidth > 0),
    every internal link finds its target, and a screenshot of the top is drawn."""
    page = REPORTS / "REPORT.html"
    if not page.is_file():
        pytest.skip("no committed REPORT.html")
    probe = tmp_path / "probe.html"
    script = (
        "<script>window.addEventListener('load', () => {"
        "const bad = [...document.images].filter(i => !i.complete || i.naturalWidth === 0).length;"
        "const dead = [...document.querySelectorAll('a[href^=\"#\"]')]"
        ".filter(a => a.getAttribute('href').length > 1 && !document.getElementById(a.getAttribute('href').slice(1))).length;"
        "document.title = `images ${document.images.length} unloaded ${bad} deadlinks ${dead}`;});</script>"
    )
    probe.write_text(page.read_text().replace("</body>", script + "</body>"))
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--virtual-time-budget=20000"]
    dom = subprocess.run(
        [str(CHROMIUM), *flags, "--dump-dom", probe.as_uri()], capture_output=True, text=True, timeout=240, check=False
    ).stdout
    found = re.search(r"<title>images (\d+) unloaded (\d+) deadlinks (\d+)</title>", dom)
    assert found, dom[:300]
    images, unloaded, dead = map(int, found.groups())
    assert images > 0 and unloaded == 0 and dead == 0
    shot = tmp_path / "top.png"
    subprocess.run(
        [str(CHROMIUM), *flags, "--window-size=1100,1400", f"--screenshot={shot}", page.as_uri()],
        capture_output=True,
        timeout=240,
        check=False,
    )
    assert shot.is_file() and shot.stat().st_size > 20_000  # a page drawn, not a blank one
