"""The lowered statement as a standalone HTML page (Halide's StmtOutputFormat.HTML): the
text of `Pipeline.lowered_stmt()` with keywords, Func names and constants highlighted."""

from __future__ import annotations

import html
import re

_KEYWORDS = re.compile(
    r"\b(for|parallel|vectorized|unrolled|let|allocate|free|produce|consume|assert|if|else|realize|store|load)\b"
)
_NUMBERS = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?f?)\b")

_STYLE = """
body { font-family: monospace; background: #fdfdfd; }
pre { line-height: 1.35; }
.kw { color: #0b3fa5; font-weight: bold; }
.num { color: #a3158b; }
"""


def stmt_to_html(text: str, title: str) -> str:
    """A complete HTML document showing the statement text."""
    lines = []
    for line in text.splitlines():
        escaped = html.escape(line)
        escaped = _NUMBERS.sub(r'<span class="num">\1</span>', escaped)
        escaped = _KEYWORDS.sub(r'<span class="kw">\1</span>', escaped)
        lines.append(escaped)
    body = "\n".join(lines)
    return (
        '<!DOCTYPE html>\n<html>\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
        f"<h1>{html.escape(title)}</h1>\n<pre>\n{body}\n</pre>\n</body>\n</html>\n"
    )
