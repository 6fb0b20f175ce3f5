r"""LaTeX versions of the results tables, for a paper: booktabs, the best value in bold.

* :func:`dataset_tables`: the per-data-set tables of
  :func:`ufs.report.aggregate.markdown_tables` (ACC and NMI in %, mean ± std over
  restarts, with the best over h; TP@h and CP@h on simulations), one ``table`` float per
  protocol and metric, labelled ``tab:<data set>-<protocol>-<metric>``;
* :func:`rank_table`: the average ranks across data sets (the first table of
  ``summary.md``), with each column's Friedman p, CD and number of data sets.

Conventions of every table:

* booktabs rules (``\toprule``, ``\midrule``, ``\bottomrule``): the preamble needs
  ``\usepackage{booktabs}`` and ``\usepackage{graphicx}``, nothing else;
* every table fits the line it is set in (the per-data-set tables overflowed a
  17 cm text by up to 60 pt): a table wider than ``\linewidth`` is scaled down to it, a
  narrower one is left at its natural size (:func:`fit_width`). ``\linewidth`` is the
  column width inside a float of a two-column document, so the same file serves a
  single-column figure* or a one-column ``table`` float;
* per column the best value is bold and the runner-up underlined, compared **as
  printed**: equal printed values tie (all bold; after a tie for best the next value is
  the runner-up). Highest is best, lowest for ranks. Competitors and declared variants are
  eligible; the references are not;
* the references (no selection, chance, largest variance) come last, after a
  ``\midrule``, in italics;
* the fit-status marks of the markdown tables as superscripts — † not converged, ‡
  diverged, § budget exceeded (no value: ``--``), ◊ degenerate — with the same legend
  under the table;
* every text taken from the data (method and data set names contain ``_``) goes through
  :func:`escape`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .cells import ELIGIBLE, Cell, Row, emphasis
from .results_table import (
    BAND_LEGEND,
    STATUS_LEGEND,
    SUMMARY_COLUMNS,
    mean_over_h,
    ordered_methods,
    table_blocks,
)

__all__ = [
    "MARKS",
    "Cell",
    "Row",
    "escape",
    "emphasis",
    "fit_width",
    "tabular",
    "dataset_tables",
    "rank_table",
]

#: the fit-status marks (:data:`ufs.pipeline.status.STATUS_MARK`) as LaTeX superscripts
MARKS = {
    "not_converged": r"\textsuperscript{\dag}",
    "diverged": r"\textsuperscript{\ddag}",
    "budget_exceeded": r"\textsuperscript{\S}",
    "degenerate": r"\textsuperscript{$\diamond$}",
}
_ESCAPES = str.maketrans(
    {
        "\\": r"\textbackslash{}",
        "&": r"\&",
        "%": r"\%",
        "$": r"\$",
        "#": r"\#",
        "_": r"\_",
        "{": r"\{",
        "}": r"\}",
        "~": r"\textasciitilde{}",
        "^": r"\textasciicircum{}",
        "<": r"\textless{}",
        ">": r"\textgreater{}",
        "|": r"\textbar{}",
        "±": r"$\pm$",
        "×": r"$\times$",
        "≥": r"$\geq$",
        "≤": r"$\leq$",
        "α": r"$\alpha$",
        "γ": r"$\gamma$",
        "λ": r"$\lambda$",
        "µ": r"$\mu$",
        "–": "--",
        "—": "---",
        "†": r"\dag{}",
        "‡": r"\ddag{}",
        "§": r"\S{}",
        "◊": r"$\diamond$",
    }
)
#: the protocols' captions (``{metric}``: the metric the label-tuned choice maximises)
PROTOCOLS = {  # in the tables' order: the unsupervised numbers first
    "label_free": "label-free defaults: each method's documented default parameters "
    "--- no labels used",
    "oracle": "label-tuned (oracle): best grid setting per method and h by mean {metric} on "
    "the even k-means restarts, reported on the odd ones --- uses labels, as in the papers",
}
_SHORT = {
    "oracle": "label-tuned (oracle)",
    "label_free": "label-free defaults",
    "label_free_tuned": "label-free tuned",
}
_METRICS = {
    "acc": r"ACC (\%, mean $\pm$ std over k-means restarts)",
    "nmi": r"NMI (\%, mean $\pm$ std over k-means restarts)",
    "tp": "TP@$h$ (true features among the $h$ selected)",
    "cp": "CP@$h$ (all true features covered)",
}
_EMPHASIS = (
    r"Bold: best; underlined: runner-up (as printed; references, in italics, are not eligible)."
)


def escape(text) -> str:
    """``text`` as LaTeX text: the special characters escaped, the symbols the tables use
    (±, †, ‡, §, ◊, dashes, a few Greek letters) spelled in LaTeX."""
    return str(text).translate(_ESCAPES)


def _decorate(text: str, kind: str, italic: bool) -> str:
    if not text:
        return text
    if kind == "best":
        text = rf"\textbf{{{text}}}"
    elif kind == "second":
        text = rf"\underline{{{text}}}"
    return rf"\textit{{{text}}}" if italic else text


def tabular(
    header: Sequence[str],
    rows: Sequence[Row],
    *,
    higher_is_better: bool = True,
    spans: Sequence[tuple[str, int]] = (),
) -> str:
    """A booktabs ``tabular``: ``header`` (LaTeX), the eligible rows, then the references
    after a ``\\midrule`` (italics), then the notes after another; best bold, runner-up
    underlined per column (:func:`emphasis`). ``spans``: an optional header row above
    ``header`` of (text, number of columns) groups over the value columns."""
    ncols = len(header)
    order = [r for r in rows if r.role in ELIGIBLE]
    order += [r for r in rows if r.role == "reference"]
    order += [r for r in rows if r.role not in (*ELIGIBLE, "reference")]
    marks = emphasis(order, higher_is_better)
    lines = [rf"\begin{{tabular}}{{l{'r' * (ncols - 1)}}}", r"\toprule"]
    if spans:
        lines += _span_rows(spans)
    lines += [" & ".join(header) + r" \\", r"\midrule"]
    previous = None
    for row, kinds in zip(order, marks, strict=True):
        block = "main" if row.role in ELIGIBLE else row.role
        if previous is not None and block != previous:
            lines.append(r"\midrule")
        previous = block
        italic = row.role == "reference"
        cells = [_decorate(row.name, "", italic)]
        cells += [_decorate(c.text, k, italic) for c, k in zip(row.cells, kinds, strict=True)]
        cells += [""] * (ncols - len(cells))
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines)


def _span_rows(spans: Sequence[tuple[str, int]]) -> list[str]:
    """``& \\multicolumn{n}{c}{text} …`` over the value columns, with their cmidrules."""
    cells, rules, first = [""], [], 2
    for text, n in spans:
        cells.append(rf"\multicolumn{{{n}}}{{c}}{{{text}}}")
        rules.append(rf"\cmidrule(lr){{{first}-{first + n - 1}}}")
        first += n
    return [" & ".join(cells) + r" \\", "".join(rules)]


def _float(body: str, caption: str, label: str, notes: Sequence[str] = ()) -> str:
    """A ``table`` float around ``body``: caption, label and the notes (LaTeX) below."""
    lines = [
        r"\begin{table}[htbp]",
        r"\centering",
        r"\small",
        r"\setlength{\tabcolsep}{4pt}",
        rf"\caption{{{caption}}}",
        rf"\label{{{label}}}",
        fit_width(body),
    ]
    if notes:
        lines += [r"\par\smallskip", r"\begin{minipage}{\linewidth}\footnotesize"]
        lines += [f"{n}\\par" for n in notes]
        lines.append(r"\end{minipage}")
    lines.append(r"\end{table}")
    return "\n".join(lines)


def fit_width(body: str) -> str:
    """``body`` (a ``tabular``) scaled down to ``\\linewidth`` when it is wider, at its
    natural size otherwise (graphicx's ``\\resizebox``, whose size arguments may refer to
    the box's own ``\\width``)."""
    return (
        "\\resizebox{\\ifdim\\width>\\linewidth\\linewidth\\else\\width\\fi}{!}{%\n"
        f"{body}%\n}}"
    )


def _label(*parts: str) -> str:
    return "tab:" + re.sub(r"[^A-Za-z0-9]+", "-", "-".join(parts)).strip("-")


def _preamble(what: str) -> str:
    return (
        f"% {what}: written by ufs.report.latex (UFS-bench); do not edit.\n"
        "% Needs \\usepackage{booktabs} and \\usepackage{graphicx}. "
        "\\input{} this file where the tables belong."
    )


# -- per-data-set tables ----------------------------------------------------------------


def dataset_tables(sel: pd.DataFrame, base: str, oracle_metric: str = "acc") -> str:
    """The per-data-set tables (:func:`ufs.report.aggregate.markdown_tables`) as LaTeX:
    one float per protocol and metric."""

    parts = [_preamble(f"{base}: ACC and NMI per method and h")]
    for protocol, part, hs, m in table_blocks(sel, tuple(PROTOCOLS)):
        caption = (
            f"{escape(base)}: {_METRICS[m]} --- "
            f"{escape(PROTOCOLS[protocol].format(metric=oracle_metric.upper()))}. {_EMPHASIS}"
        )
        body = _metric_table(part, hs, m, protocol)
        parts.append(_float(body, caption, _label(base, protocol, m), _legends(part, m)))
    return "\n\n".join(parts) + "\n"


def _metric_table(part: pd.DataFrame, hs: list[str], m: str, protocol: str) -> str:
    """One protocol's table of metric ``m``: a column per h and the summary columns of
    :data:`ufs.report.aggregate.SUMMARY_COLUMNS` (mean over h; best over h label-tuned)."""

    extra = SUMMARY_COLUMNS[protocol] if m in ("acc", "nmi") else ()
    titles = {"mean": "mean over $h$", "best": "best over $h$"}
    header = ["method"] + [_h_header(h) for h in hs] + [titles[c] for c in extra]
    return tabular(header, _metric_rows(part, hs, m, extra))


def _legends(part: pd.DataFrame, m: str) -> list[str]:
    """The markdown tables' legends that apply: the chance band, the status marks."""

    notes = []
    if m in ("acc", "nmi") and f"{m}_p05" in part and part[f"{m}_p05"].notna().any():
        notes.append(escape(BAND_LEGEND))
    if "status" in part and part["status"].isin(list(MARKS)).any():
        notes.append(escape(STATUS_LEGEND))
    return notes


def _h_header(h: str) -> str:
    return f"$h={h}$" if h != "all" else r"all features"


def _metric_rows(part: pd.DataFrame, hs: list[str], m: str, extra=()) -> list[Row]:
    """One row per method of one protocol and metric, in the markdown tables' order
    (:func:`ufs.report.aggregate.ordered_methods`)."""

    rows = []
    for method, g, role in ordered_methods(part, m):
        status = g["status"] if "status" in g else pd.Series("ok", index=g.index)
        cells = [_score_cell(g, h, m, status) for h in hs]
        cells += [
            _best_over_h(g, m, status) if c == "best" else _mean_over_h(g, m, status) for c in extra
        ]
        name = escape(method) + (" (variant)" if role == "variant" else "")
        rows.append(Row(name, tuple(cells), role))
    return rows


def _mean_over_h(g: pd.DataFrame, m: str, status: pd.Series) -> Cell:
    """The method's mean over h (the rank score); § when some h has no number."""
    from ..pipeline.status import worst

    score, missing = mean_over_h(g, m)
    if score != score:
        return Cell("--" + (MARKS["budget_exceeded"] if missing else ""))
    shown = f"{100 * score:.1f}"
    mark = MARKS["budget_exceeded"] if missing else MARKS.get(worst(status), "")
    return Cell(shown + mark, float(shown))


def _score_cell(g: pd.DataFrame, h: str, m: str, status: pd.Series) -> Cell:
    """A cell of one method at one h: ``mean $\\pm$ std`` in % (a chance reference:
    ``mean [p5, p95]``), or TP/CP with two decimals; ``--`` without a value."""
    if h not in g.index:
        return Cell("")
    mark = MARKS.get(status[h], "")
    col = f"{m}_mean" if m in ("acc", "nmi") else m
    value = g.loc[h, col]
    if status[h] == "budget_exceeded" or pd.isna(value):
        return Cell("--" + mark)
    if m not in ("acc", "nmi"):
        shown = f"{value:.2f}"
        return Cell(shown + mark, float(shown))
    shown = f"{100 * value:.1f}"
    return Cell(f"{shown} {_spread(g, h, m)}{mark}", float(shown))


def _spread(g: pd.DataFrame, h: str, m: str) -> str:
    band = f"{m}_p05"
    if band in g and not pd.isna(g.loc[h, band]):
        return f"[{100 * g.loc[h, band]:.1f}, {100 * g.loc[h, f'{m}_p95']:.1f}]"
    return rf"$\pm$ {100 * g.loc[h, f'{m}_std']:.1f}"


def _best_over_h(g: pd.DataFrame, m: str, status: pd.Series) -> Cell:
    """The method's best mean over h, with its spread, mark and h."""
    scored = g[f"{m}_mean"].dropna()
    if scored.empty:
        over = (status == "budget_exceeded").any()
        return Cell("--" + (MARKS["budget_exceeded"] if over else ""))
    b = scored.idxmax()
    shown = f"{100 * scored[b]:.1f}"
    mark = MARKS.get(status[b], "")
    return Cell(f"{shown} {_spread(g, b, m)}{mark} ({_h_header(b)})", float(shown))


# -- ranks across data sets -------------------------------------------------------------


def rank_table(results) -> str:
    """The average ranks across data sets (:class:`ufs.stats.ranking.RankResult` per
    protocol and metric) as a LaTeX float: one column per protocol × metric, lowest rank
    bold, and below the Friedman p, the CD and the number of data sets of each column."""
    from .rank_report import _fmt_p

    cols = [r for r in results if not r.avg_rank.empty]
    parts = [_preamble("average ranks across data sets")]
    if not cols:
        return parts[0] + "\n% no method has a score under any protocol\n"
    first = cols[0].avg_rank
    methods = sorted({m for r in cols for m in r.avg_rank.index})
    methods.sort(key=lambda m: (first.get(m, np.inf), m))
    rows = [Row(escape(m), tuple(_rank_cell(r, m) for r in cols)) for m in methods]
    alpha = cols[0].alpha
    rows += [
        Row("Friedman $p$", tuple(Cell(escape(_fmt_p(r.pvalue))) for r in cols), "note"),
        Row(
            rf"CD ($\alpha = {alpha:g}$)",
            tuple(Cell(_cd_text(r)) for r in cols),
            "note",
        ),
        Row("data sets $N$", tuple(Cell(str(r.n)) for r in cols), "note"),
    ]
    spans = _protocol_spans(cols)
    header = ["method"] + [r.metric.upper() for r in cols]
    notes = _rank_notes(cols, STATUS_LEGEND)
    caption = (
        "Average rank across data sets (1 = best): per data set the methods are ranked by the "
        "mean over its $h$ grid of the mean over k-means restarts (ties averaged), and the "
        "ranks averaged. Friedman test of the ranks; Nemenyi critical difference CD, "
        "given only where the Friedman test rejects (--: it does not). "
        "Bold: best; underlined: runner-up (as printed); =: an average rank another method "
        "shares (equal rank sums: a tie, not an order)."
    )
    body = tabular(header, rows, higher_is_better=False, spans=spans)
    parts.append(_float(body, caption, "tab:average-ranks", notes))
    return "\n\n".join(parts) + "\n"


def _cd_text(r) -> str:
    """The CD of a column, only where the Friedman test rejects (a CD under a
    test that does not reject separates nothing and read as a claim)."""
    if r.cd is None or not r.applicable:
        return "n/a"
    return f"{r.cd:.2f}" if r.pvalue < r.alpha else "--"


def _rank_cell(r, method: str) -> Cell:
    """An average rank: two decimals, ``=`` where another method shares it (equal rank
    sums: a tie), the status mark."""
    from ..stats.ranking import tied

    if method not in r.avg_rank:
        return Cell("--")
    shown = f"{r.avg_rank[method]:.2f}"
    tie = "=" if bool(tied(r.avg_rank).get(method, False)) else ""
    return Cell(shown + tie + MARKS.get(r.method_status(method), ""), float(shown))


def _protocol_spans(cols) -> list[tuple[str, int]]:
    """Consecutive columns of one protocol under one spanning header."""
    spans: list[tuple[str, int]] = []
    for r in cols:
        text = escape(_SHORT[r.protocol])
        if spans and spans[-1][0] == text:
            spans[-1] = (text, spans[-1][1] + 1)
        else:
            spans.append((text, 1))
    return spans


def _rank_notes(cols, status_legend: str) -> list[str]:
    """Who is not ranked, and the marks' legend when a mark occurs."""
    notes = []
    by_role: dict[str, list[str]] = {}
    for m, role in cols[0].excluded.items():
        by_role.setdefault(role, []).append(escape(m))
    if by_role:
        notes.append(
            "Not ranked (not competitors): "
            + "; ".join(f"{role}s {', '.join(ms)}" for role, ms in sorted(by_role.items()))
            + "."
        )
    statuses = {r.method_status(m) for r in cols for m in r.avg_rank.index}
    if statuses & set(MARKS):
        notes.append(
            escape(status_legend)
            + " A fit over the budget scores the expected random subset at its (data set, h)."
        )
    return notes
