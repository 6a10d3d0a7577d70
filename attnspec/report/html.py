"""The HTML edition of the report: ``REPORT.html``, one self-contained file rendered from the same
Markdown as ``REPORT.md`` and its appendix pages by markdown-it-py (CommonMark with tables),
with the figures embedded as data URIs and a table of contents; readable offline and fit to
attach to a paper's supplement.

The appendix pages follow the report in the same file, so every link stays inside it: a link
to ``appendix/<page>.md`` points at that page's first heading, one to
``appendix/<page>.md#<anchor>`` at that heading. Heading ids are the anchors GitHub gives
(:func:`attnspec.report.anchors.anchor`), so the Markdown's own ``#...`` links resolve in both
editions; a repeated heading gets ``-1``, ``-2``, ... as on GitHub.
"""

from __future__ import annotations

import base64
import html
import re
from pathlib import Path

from attnspec.report.anchors import anchor

#: Local links a Markdown page may carry: to an appendix page (with an optional anchor), or
#: from an appendix page back to the report.
_PAGE_LINK = re.compile(r"^(?:\.\./)?(?:(appendix)/)?([\w.-]+)\.md(?:#(.*))?$")

_STYLE = """
body { font: 15px/1.5 system-ui, sans-serif; margin: 0 auto; max-width: 60em; padding: 1em 2em; color: #222; }
nav.toc { border: 1px solid #ccc; padding: 0.5em 1em; margin: 1em 0; background: #fafafa; }
nav.toc ul { margin: 0.2em 0; padding-left: 1.2em; }
table { border-collapse: collapse; font-size: 13px; margin: 0.8em 0; display: block; overflow-x: auto; }
th, td { border: 1px solid #ccc; padding: 2px 6px; vertical-align: top; }
th { background: #f0f0f0; }
img { max-width: 100%; height: auto; display: block; margin: 1em auto 0.3em; }
code { font-size: 90%; background: #f4f4f4; padding: 0 2px; }
pre code { display: block; padding: 0.5em; overflow-x: auto; }
section.appendix-page { border-top: 2px solid #888; margin-top: 2em; }
"""


def _renderer():  # noqa: ANN202 - a MarkdownIt instance
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).enable("table")


def _retarget(href: str, page_ids: dict[str, str]) -> str:
    """A link of a Markdown page as a link inside the single HTML file."""
    m = _PAGE_LINK.match(href)
    if not m or "://" in href:
        return href
    folder, name, frag = m.groups()
    if frag:
        return "#" + frag
    if folder is None and name == "REPORT":
        return "#top"
    return "#" + page_ids.get(name, anchor(name))


def render_pages(pages: list[tuple[str, str]], root: Path) -> tuple[str, list[tuple[int, str, str]]]:
    """The body HTML of Markdown ``pages`` (name, text) in order, and the (level, id, text) of
    every heading of the first page at levels 2–3 (for the table of contents).

    Images are read from ``root`` and embedded; links between pages are made internal.

    Parameters
    ----------
    pages : list of (str, str)
        (page name, Markdown text), the report first.
    root : Path
        The report folder.

    Returns
    -------
    body : str
    toc : list of (int, str, str)
    """
    md = _renderer()
    seen: dict[str, int] = {}
    page_ids: dict[str, str] = {}
    parsed = []
    for name, text in pages:
        tokens = md.parse(text)
        parsed.append((name, tokens))
    toc: list[tuple[int, str, str]] = []
    for k, (name, tokens) in enumerate(parsed):
        first = True
        for i, tok in enumerate(tokens):
            if tok.type != "heading_open":
                continue
            inline = tokens[i + 1]
            base = anchor(inline.content)  # as the Markdown's own links make it (attnspec.report.anchors)
            count = seen.get(base, 0)
            seen[base] = count + 1
            ident = base if count == 0 else f"{base}-{count}"
            tok.attrSet("id", ident)
            if first and k > 0:
                page_ids[name] = ident
                first = False
            level = int(tok.tag[1])
            if k == 0 and level in (2, 3):
                toc.append((level, ident, _plain(inline)))
    parts = []
    for k, (_name, tokens) in enumerate(parsed):
        for tok in tokens:
            for child in [tok, *(tok.children or [])]:
                if child.type == "image":
                    child.attrSet("src", _data_uri(root / str(child.attrGet("src")).removeprefix("../")))
                elif child.type == "link_open":
                    child.attrSet("href", _retarget(str(child.attrGet("href")), page_ids))
                elif child.type == "text" and (raised := superscripts(child.content)) is not None:
                    child.type, child.content = "html_inline", raised  # n^0.99 → n<sup>0.99</sup>
        rendered = md.renderer.render(tokens, md.options, {})
        parts.append(rendered if k == 0 else f'<section class="appendix-page">\n{rendered}</section>\n')
    return "".join(parts), toc


def _exponent_end(text: str, start: int) -> int:
    """The end of the exponent that begins at ``text[start]`` (just after a caret): a balanced
    parenthesis group, else a signed number or a word; ``start`` when there is none."""
    if start < len(text) and text[start] == "(":
        depth = 0
        for i in range(start, len(text)):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            if depth == 0:
                return i + 1
        return start
    m = re.match(r"[-+−]?(?:\d+(?:\.\d+)?|[^\W\d_]\w*)", text[start:])
    return start + m.end() if m else start


def superscripts(text: str) -> str | None:
    """``text`` as HTML with every ``x^e`` written as x<sup>e</sup> (a parenthesised exponent
    loses its outer parentheses); None when ``text`` has no caret to raise.

    Parameters
    ----------
    text : str
        Plain text of one Markdown inline (not code).

    Returns
    -------
    str or None
        Escaped HTML, or None.
    """
    out, i, raised = [], 0, False
    while i < len(text):
        j = text.find("^", i)
        end = _exponent_end(text, j + 1) if j > 0 else -1
        if j <= 0 or end == j + 1:
            if j < 0:
                out.append(html.escape(text[i:], quote=False))
                break
            out.append(html.escape(text[i : j + 1], quote=False))
            i = j + 1
            continue
        exponent = text[j + 1 : end]
        if exponent.startswith("(") and exponent.endswith(")"):
            exponent = exponent[1:-1]
        out.append(html.escape(text[i:j], quote=False) + f"<sup>{html.escape(exponent, quote=False)}</sup>")
        i, raised = end, True
    return "".join(out) if raised else None


def _plain(inline) -> str:  # noqa: ANN001 - a markdown-it inline token
    """A heading's text as a reader sees it: its text and code spans, without the marks."""
    return "".join(c.content for c in (inline.children or []) if c.type in ("text", "code_inline"))


def _data_uri(path: Path) -> str:
    kind = {".png": "image/png", ".svg": "image/svg+xml"}.get(path.suffix, "application/octet-stream")
    return f"data:{kind};base64," + base64.b64encode(path.read_bytes()).decode()


def _toc_html(toc: list[tuple[int, str, str]]) -> str:
    """A nested list: the level-2 headings, each with its level-3 headings under it."""
    groups: list[tuple[str, list[str]]] = []
    for level, ident, text in toc:
        item = f'<a href="#{ident}">{html.escape(text)}</a>'
        if level == 2 or not groups:
            groups.append((item, []))
        else:
            groups[-1][1].append(item)
    items = [
        f"<li>{top}" + ("<ul>" + "".join(f"<li>{s}</li>" for s in subs) + "</ul>" if subs else "") + "</li>"
        for top, subs in groups
    ]
    return '<nav class="toc"><strong>Contents</strong><ul>\n' + "\n".join(items) + "\n</ul></nav>"


def write_html(out: Path) -> Path:
    """Render ``out/REPORT.md`` and ``out/appendix/*.md`` (in the order REPORT.md links them)
    into ``out/REPORT.html``.

    Parameters
    ----------
    out : Path
        The report folder.

    Returns
    -------
    Path
        ``out/REPORT.html``.
    """
    from attnspec.report.files import _write_text

    report = (out / "REPORT.md").read_text()
    linked = list(dict.fromkeys(re.findall(r"\(appendix/([\w.-]+)\.md", report)))
    pages = [("REPORT", report)] + [
        (name, (out / "appendix" / f"{name}.md").read_text())
        for name in linked
        if (out / "appendix" / f"{name}.md").is_file()
    ]
    body, toc = render_pages(pages, out)
    # the table of contents goes after the title
    body = body.replace("</h1>", "</h1>\n" + _toc_html(toc), 1)
    title = "attnspec report"
    doc = (
        f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{title}</title>\n'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">\n<style>{_STYLE}</style>\n</head>\n'
        f'<body>\n<a id="top"></a>\n{body}</body>\n</html>\n'
    )
    path = out / "REPORT.html"
    _write_text(path, doc)
    return path
