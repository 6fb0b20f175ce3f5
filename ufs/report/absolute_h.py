"""The absolute h view: the benchmark again on the seed papers' grid.

The benchmark's h grid is relative (``round(p · {1, 2, 5, 10, 20} %)`` clipped to
[5, 300]), so wide data sets see only h ≥ ~70 and "mean over h" averages different
regimes on different data sets. The papers choose h from an absolute grid, e.g.
{50, 100, …, 300}. The overlay ``config/experiments/overrides/benchmark_absolute_h.yaml``
runs every method on that grid (the values below p), with the same data, defaults,
seeds, budget and evaluation, into its own results folder and archive. This module
compares the two runs; the sensitivity table carries the absolute grid's verdicts as one
more row (:func:`ufs.report.sensitivity.sensitivity_markdown`, ``other_grids``).

Both grids' verdicts are computed on the data sets both runs have (a run in progress
covers fewer), under the primary view (:data:`ufs.stats.views.PRIMARY`). Nothing here
reads files: the callers pass the runs' tables.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..pipeline.status import STATUS_MARK, worst
from ..stats import ranking, views
from .sensitivity import friedman_p_text, names_text, primary_verdicts, top_text

__all__ = ["KEY", "absolute_h_markdown", "mean_by_h"]

#: the sensitivity table's row key of the absolute grid
KEY = "absolute_h"


def mean_by_h(
    tables: pd.DataFrame, metric: str, protocol: str = "label_free"
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(means, statuses), methods × h: the mean over the primary view's units (families
    count once by their median, simulations left out) of ``<metric>_mean`` at each h,
    fits over the budget scored as the expected random subset
    (:func:`ufs.stats.views.cell_table`), with the row ``n`` counting the units with a
    value at each h; and the worst fit status behind each mean (:func:`~ufs.pipeline.status.
    worst`), so that a flagged fit is marked where its number appears."""
    t, _ = views.PRIMARY.apply(tables)
    values, status = views.cell_table(t, protocol, metric)
    if values.empty:
        return pd.DataFrame(), pd.DataFrame()
    cols, marks = {}, {}
    for h, block in values.groupby(level="h", sort=False):
        per = views.collapse_families(block.droplevel("h"), views.PRIMARY.families())
        cols[int(h)] = per.mean(axis=0)
        cols[int(h)]["n"] = float(len(per))
        st = status.xs(h, level="h")
        marks[int(h)] = st.apply(worst, axis=0)
    out, st = pd.DataFrame(cols), pd.DataFrame(marks)
    return out[sorted(out.columns)], st[sorted(st.columns)]


_VERDICTS = (
    ("better_random", "better than random"),
    ("worse_random", "worse than random"),
    ("better_all", "better than all features"),
    ("worse_all", "worse than all features"),
)


def _both(a: Sequence[str], b: Sequence[str]) -> str:
    """Who is in both lists, and who in one only."""
    same = [m for m in a if m in b]
    only_rel = [m for m in a if m not in b]
    only_abs = [m for m in b if m not in a]
    parts = [names_text(same)]
    if only_rel:
        parts.append("relative grid only: " + names_text(only_rel))
    if only_abs:
        parts.append("absolute grid only: " + names_text(only_abs))
    return "; ".join(parts)


def absolute_h_markdown(
    relative: pd.DataFrame,
    absolute: pd.DataFrame,
    *,
    planned: Sequence[str],
    alpha: float = 0.05,
    min_h_values: int = 3,
    source: str = "",
    full_report: str = "",
) -> list[str]:
    """The section *The absolute h view*: coverage, the label-free verdicts of both grids
    on their common data sets, and the mean score per h. ``relative`` / ``absolute``: the
    two runs' tables; ``planned``: the absolute run's data sets (its config);
    ``source``: where its results come from; ``full_report``: a link to its own report."""
    done = sorted(set(absolute["dataset"].astype(str)))
    common = sorted(set(done) & set(relative["dataset"].astype(str)))
    pending = [d for d in planned if d not in done]
    grid = sorted({int(h) for h in absolute["h_label"].astype(str) if h.isdigit()})
    lines = [
        "## The absolute h view (the seed papers' grid)",
        "",
        "The ranks above average each method over a *relative* h grid (1–20 % of p). The "
        "seed papers choose h from an absolute grid; here every method runs again with the "
        f"same label-free defaults, data, seeds, budget and evaluation on h ∈ "
        f"{{{', '.join(map(str, grid))}}} (the values below p; "
        "`config/experiments/overrides/benchmark_absolute_h.yaml`)"
        + (f", from {source}" if source else "")
        + (f"; its own full report: {full_report}" if full_report else "")
        + ".",
        "",
    ]
    if pending:
        lines += [
            f"*Run in progress*: {len(done)} of {len(planned)} data sets evaluated; not yet: "
            f"{', '.join(pending)}. Every statement below covers only the {len(done)} "
            "evaluated ones; the relative grid's verdicts are recomputed on the same data "
            "sets so that the two columns compare like with like.",
            "",
        ]
    rel_common = relative[relative["dataset"].astype(str).isin(common)]
    abs_common = absolute[absolute["dataset"].astype(str).isin(common)]
    table, notes = [], []
    for metric in ranking.METRICS:
        r = primary_verdicts(rel_common, metric=metric, alpha=alpha, min_h_values=min_h_values)
        a = primary_verdicts(abs_common, metric=metric, alpha=alpha, min_h_values=min_h_values)
        if not r["n"] or not a["n"]:
            continue
        shared_pairs = [p for p in a["pairs"] if p in r["pairs"]]
        name = metric.upper()
        table += [
            f"| {name} | N | {r['n']} {r['unit']} | {a['n']} {a['unit']} |",
            f"| {name} | Friedman p | {friedman_p_text(r)} | {friedman_p_text(a)} |",
            f"| {name} | top average rank | {top_text(r['top'])} | {top_text(a['top'])} |",
            f"| {name} | ordered pairs | {len(r['pairs'])} | {len(a['pairs'])} "
            f"({len(shared_pairs)} of them also on the relative grid) |",
        ]
        for key, title in _VERDICTS:
            table.append(f"| {name} | {title} | {names_text(r[key])} | {names_text(a[key])} |")
        for key, title in _VERDICTS:
            if r[key] or a[key]:
                notes.append(f"{name}, {title}: {_both(r[key], a[key])}.")
    if table:
        lines += [
            "Label-free verdicts of both grids on the same data sets (primary view; Wilcoxon "
            "signed-rank with Holm, as above); then who holds on both grids:",
            "",
            "| metric | verdict | relative grid | absolute grid |",
            "|---|---|---|---|",
            *table,
            "",
            *([f"- {n}" for n in notes] + [""] if notes else []),
        ]
    for metric in ranking.METRICS:
        m, status = mean_by_h(absolute, metric)
        if m.empty:
            continue
        n = m.loc["n"]
        m = m.drop(index="n")
        order = m.mean(axis=1).sort_values(ascending=False).index
        head = [f"h = {h} (N = {int(n[h])})" for h in m.columns]
        lines += [
            f"Label-free {metric.upper()} (%) at each h of the absolute grid, mean over the "
            "primary view's units (a family by its median; fits over the budget scored as "
            "the expected random subset; a mark: the worst fit behind the mean, "
            "† not converged, ‡ diverged, § budget exceeded, ◊ degenerate). A descriptive "
            "table for setting beside the papers' per-h tables, not a test:",
            "",
            "| method | " + " | ".join(head) + " |",
            "|---|" + "---:|" * len(head),
        ]
        for meth in order:
            cells = [
                "–"
                if not np.isfinite(v)
                else f"{100 * v:.1f}" + STATUS_MARK.get(status.loc[meth, h], "")
                for h, v in m.loc[meth].items()
            ]
            lines.append(f"| `{meth}` | " + " | ".join(cells) + " |")
        lines.append("")
    return lines
