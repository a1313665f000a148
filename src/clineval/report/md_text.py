"""Untrusted text made inert in Markdown: what a dataset, a suite or a model said is shown, never rendered.

``md_inline`` keeps one line of text as the reader should see it, with nothing a Markdown renderer
(CommonMark, GitHub) would turn into markup:

- ``&``, ``<`` and ``>`` become entities: no raw HTML (``<script>``, ``<img>``), no autolink ``<http://...>``;
- a ``]`` that could close a link is backslash-escaped (followed by ``(``, ``[`` or ``:``, spaces allowed):
  no inline link ``[x](javascript:...)``, no image ``![x](http://...)``, no reference link ``[x][y]`` and
  no link definition ``[x]: url``. A ``]`` elsewhere can start or end nothing (without a definition a
  bracket pair is plain text), so intervals such as ``[81.8, 85.9]`` stay readable in the raw file;
- ``\\``, ``|`` and backticks are escaped: no escape of our escapes, no table cell break, no code span.

A bare ``http://`` URL stays visible text (a GitHub renderer may still make it a link, but one whose
target is the text the reader sees).
"""

from __future__ import annotations

import html
import re

_SPECIAL = str.maketrans({"\\": "\\\\", "|": "\\|", "`": "\\`"})
_LINK_CLOSE = re.compile(r"\](?=\s*[(\[:])")


def md_inline(text: object) -> str:
    """``text`` on one line (runs of whitespace, newlines included, become one space), made inert."""
    escaped = html.escape(str(text), quote=False).translate(_SPECIAL)
    return " ".join(_LINK_CLOSE.sub(r"\\]", escaped).split())
