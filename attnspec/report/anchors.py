"""Markdown heading anchors, shared by the report's sections and its summary (a leaf module:
the summary links into every section, and sections link back into it)."""

from __future__ import annotations

import re
import unicodedata


def anchor(heading: str) -> str:
    """The anchor GitHub (and most Markdown renderers) give a heading: lower case, punctuation
    dropped, spaces to hyphens (``Figure 1: the spectrum`` → ``figure-1-the-spectrum``).

    Parameters
    ----------
    heading : str
        The heading's text, without the ``#``.

    Returns
    -------
    str
    """
    text = unicodedata.normalize("NFC", heading.strip().lower())
    text = "".join(ch for ch in text if ch.isalnum() or ch in " -_")
    return re.sub(r" ", "-", text)
