"""The workflow's markdown (``summary.md``, ``tables/<base>.md``) as a standalone HTML page,
so that the Snakemake report shows it instead of offering a download.

Not a general markdown converter: it renders exactly what this project writes — ATX
headings, paragraphs, ``-`` lists, pipe tables, images and links, ``**bold**``,
``*italic*`` / ``_italic_``, ``code``, ``<u>underline</u>`` — with the text escaped, so a
method or data set name cannot inject markup. (No markdown library is a dependency; one
that renders the general language would be a heavier dependency than this job needs.)
"""

from __future__ import annotations

import html
import re

__all__ = ["markdown_to_html", "page"]

_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:72em;margin:1em auto;line-height:1.4}"
    "table{border-collapse:collapse;margin:.5em 0}th,td{border:1px solid #bbb;"
    "padding:.2em .5em;text-align:right}td:first-child,th:first-child{text-align:left}"
    "th{background:#f2f2f2}code{background:#f4f4f4}"
)
_TABLE_RULE = re.compile(r"^\|(\s*:?-+:?\s*\|)+$")


def _inline(text: str) -> str:
    """Escape, then the inline marks: code, images, links, bold, italic, underline."""
    codes: list[str] = []

    def keep_code(m: re.Match) -> str:
        codes.append(f"<code>{html.escape(m.group(1))}</code>")
        return f"\x00{len(codes) - 1}\x00"

    text = re.sub(r"`([^`]+)`", keep_code, text)
    text = html.escape(text, quote=False)
    text = text.replace("&lt;u&gt;", "<u>").replace("&lt;/u&gt;", "</u>")
    text = re.sub(r"!\[([^\]]*)\]\(([^)\s]+)\)", r'<img alt="\1" src="\2">', text)
    text = re.sub(r"\[([^\]]+)\]\(([^)\s]+)\)", r'<a href="\2">\1</a>', text)
    text = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", text)
    text = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"<em>\1</em>", text)
    text = re.sub(r"(?<![\w])_(?!\s)(.+?)(?<!\s)_(?![\w])", r"<em>\1</em>", text)
    return re.sub(r"\x00(\d+)\x00", lambda m: codes[int(m.group(1))], text)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def markdown_to_html(text: str) -> str:
    """The HTML body of the project's markdown ``text``."""
    out: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
        elif m := re.match(r"^(#{1,6})\s+(.*)$", line):
            n = len(m.group(1))
            out.append(f"<h{n}>{_inline(m.group(2))}</h{n}>")
            i += 1
        elif line.startswith("|") and i + 1 < len(lines) and _TABLE_RULE.match(lines[i + 1]):
            head = "".join(f"<th>{_inline(c)}</th>" for c in _cells(line))
            rows, i = [], i + 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append("<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in _cells(lines[i])))
                i += 1
            out.append(
                f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
            )
        elif re.match(r"^\s*- ", line):
            items = []
            while i < len(lines) and re.match(r"^\s*- ", lines[i]):
                items.append(f"<li>{_inline(lines[i].split('- ', 1)[1])}</li>")
                i += 1
            out.append(f"<ul>{''.join(items)}</ul>")
        else:  # a paragraph: this line and the plain lines after it
            para, i = [line.strip()], i + 1
            while i < len(lines) and lines[i].strip() and not re.match(r"^(#|\||\s*- )", lines[i]):
                para.append(lines[i].strip())
                i += 1
            out.append(f"<p>{_inline(' '.join(para))}</p>")
    return "\n".join(out)


def page(text: str, title: str) -> str:
    """A standalone HTML page of the markdown ``text``."""
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>\n"
        f"{markdown_to_html(text)}\n</body></html>\n"
    )
