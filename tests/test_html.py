"""The project's markdown as HTML for the Snakemake report."""

from __future__ import annotations

import re

from ufs.report.html import markdown_to_html, page

TEXT = """# UFS-bench results

**Scope:** 2 data set(s); see *Legend* and `summary.md`.

## wine

| method | h=2 | mean over h |
|---|---|---|
| kmeans_ufs | **60.0 ± 1.0** | <u>55.0</u> |
| _random_ (reference) | 50.0 [40.0, 60.0] | 50.0 |

- first item with [a link](figures/cd.png)
- second <script>alert(1)</script> item
|stray line that is not a table
"""


def test_tables_marks_lists_and_headings():
    out = markdown_to_html(TEXT)
    assert "<h1>UFS-bench results</h1>" in out and "<h2>wine</h2>" in out
    assert out.count("<table>") == 1 and out.count("<tr>") == 3  # header + 2 rows
    assert "<th>mean over h</th>" in out
    assert "<td><strong>60.0 ± 1.0</strong></td>" in out and "<td><u>55.0</u></td>" in out
    assert "<td><em>random</em> (reference)</td>" in out
    assert "<em>Legend</em>" in out and "<code>summary.md</code>" in out
    assert '<a href="figures/cd.png">a link</a>' in out and out.count("<li>") == 2
    assert "<script>" not in out and "&lt;script&gt;" in out  # names cannot inject markup
    assert "stray line" in out  # a line that only looks like a table is a paragraph


def test_underscores_inside_names_are_not_italics():
    out = markdown_to_html("laplacian_score beats max_variance on golfs_sim1")
    assert "<em>" not in out and "laplacian_score" in out


def test_page_is_a_standalone_document():
    doc = page("# t\n\ntext", "A <title>")
    assert doc.startswith("<!DOCTYPE html>") and doc.rstrip().endswith("</html>")
    assert re.search(r"<title>A &lt;title&gt;</title>", doc)
