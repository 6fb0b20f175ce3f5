"""The leaderboard that opens a benchmark report (``docs/benchmark.md``, the ``ufs
compare`` report): one row per competitor of the first protocol (label-free where it ran)
with its average rank and place on ACC and NMI, its median difference from the expected
random subset and from all features with the bootstrap 95 % interval and the verdict of
the paired test (and how many leave-one-family-out runs and sensitivity views keep that
verdict: :mod:`.robustness`, *fragile* where not all do), and the share of its fits that
are flagged; then one short paragraph per protocol saying whose labels it uses, the
smallest p its N allows and what the tests decide. Every number is the report's own
(:func:`ufs.stats.ranking.rank_all`, :func:`ufs.stats.references.all_reference_tests`,
:func:`ufs.report.answer.pairwise_results`); this module only arranges them.

Ties are shown as ties: a place is shared by the methods with equal rank sums
(:func:`ufs.stats.ranking.positions`, written ``1=``), never decided by the names."""

from __future__ import annotations

import pandas as pd

from ..pipeline.status import STATUS_MARK
from ..stats import paired, pairwise, ranking, views
from .answer import (
    LABELS_USED,
    TITLES,
    robustness_legend,
    smallest_p_text,
    unit,
    verdict_summary,
)
from .robustness import annotate

__all__ = ["leaderboard_lines", "flag_share_text", "mostly_flagged_leaders", "UP", "DOWN"]

#: the verdict marks of a difference cell: the paired test (Wilcoxon, Holm) says better /
#: worse than the reference; no mark: not distinguishable
UP, DOWN = "▲", "▼"

#: the statuses whose share the *flagged* column counts, in the order shown
_COUNTED = ("not_converged", "diverged", "degenerate", "budget_exceeded")


def _place_text(place: pd.Series, m: str) -> str:
    tied = int((place == place[m]).sum()) > 1
    return f"{place[m]}{'=' if tied else ''}"


def _diff_cell(res: pd.DataFrame, m: str, prefix: str, kept: dict | None = None) -> str:
    col = f"{prefix}median_diff"
    if res.empty or col not in res or m not in res.index or pd.isna(res.at[m, col]):
        return "–"
    r = res.loc[m]
    mark = {"better": f" {UP}", "worse": f" {DOWN}"}.get(r[f"{prefix}direction"], "")
    k = (kept or {}).get((prefix, m)) if mark else None
    return (
        f"{100 * r[f'{prefix}median_diff']:+.1f} [{100 * r[f'{prefix}ci_low']:+.1f}, "
        f"{100 * r[f'{prefix}ci_high']:+.1f}]{mark}" + (f" {k.text()}" if k is not None else "")
    )


def flag_share_text(status: pd.Series) -> str:
    """The shares of ``status`` (one fit status per row) that are flagged or over the
    budget, largest first, as ``78 % †, 3 % §``; ``none`` where every fit is clean."""
    if status.empty:
        return "–"
    shares = status.value_counts(normalize=True)
    parts = [(float(shares[s]), STATUS_MARK[s]) for s in _COUNTED if s in shares and shares[s] > 0]
    parts.sort(key=lambda x: -x[0])
    return ", ".join(f"{max(1, round(100 * x))} % {mark}" for x, mark in parts) or "none"


def mostly_flagged_leaders(
    results: list[ranking.RankResult],
    tables: pd.DataFrame,
    *,
    view=views.PRIMARY,
    sensitivity: bool = True,
) -> list[str]:
    """One sentence per comparison whose first place (or a method tied for it) is flagged
    on more than half of its fits (†, ‡, ◊: :func:`ufs.stats.views.flag_shares`, the rule
    of the *no_mostly_flagged_methods* view): a first place that rests on fits that did
    not converge is said beside the rank it earns. ``sensitivity``: the report has the
    sensitivity table, whose view without such methods the sentence names."""
    out = []
    rows = view.apply(tables)[0] if view is not None else tables
    for r in results:
        shares = views.flag_shares(rows, r.protocol)
        top = ranking.top_methods(r.avg_rank)
        for m in top:
            others = [f"`{o}`" for o in top if o != m]
            tie = f", tied with {', '.join(others)}," if others else ""
            share = float(shares.get(m, 0.0))
            if share > 0.5:
                marks = flag_share_text(
                    rows.loc[(rows["method"] == m) & (rows["protocol"] == r.protocol), "status"]
                )
                out.append(
                    f"First{tie} in {TITLES[r.protocol]} {r.metric.upper()} (average rank "
                    f"{r.avg_rank[m]:.2f}): `{m}`, flagged on {100 * share:.0f} % of its fits "
                    f"({marks})"
                    + (
                        "; the view *no_mostly_flagged_methods* leaves it out (*How the "
                        "verdicts move with the rules*)."
                        if sensitivity
                        else "."
                    )
                )
    return out


def _fits(tables: pd.DataFrame, view, protocol: str) -> pd.DataFrame:
    rows = view.apply(tables)[0] if view is not None else tables
    return rows[rows["protocol"] == protocol]


def _table(
    first: list[ranking.RankResult], tests: dict, fits: pd.DataFrame, robustness: dict
) -> list[str]:
    by = {r.metric: r for r in first}
    lead = by.get("acc") or first[0]
    places = {r.metric: ranking.positions(r.avg_rank) for r in first}
    metrics = [m for m in ranking.METRICS if m in by]
    header = ["#", "method"]
    header += [f"avg rank {m.upper()}" for m in metrics]
    header += [f"Δ random {m.upper()}" for m in metrics]
    header += [f"Δ all features {m.upper()}" for m in metrics]
    header += ["flagged fits"]
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---:"] + ["---"] + ["---:"] * (len(header) - 3) + ["---"]) + "|",
    ]
    order = sorted(lead.avg_rank.index, key=lambda m: (lead.avg_rank[m], str(m)))
    for m in order:
        cells = [_place_text(places[lead.metric], m), f"`{m}`"]
        for metric in metrics:
            r = by[metric]
            cells.append(
                f"{r.avg_rank[m]:.2f} ({_place_text(places[metric], m)})"
                if m in r.avg_rank
                else "–"
            )
        for prefix in ("rand_", "all_"):
            for metric in metrics:
                res = tests.get((by[metric].protocol, metric), pd.DataFrame())
                kept = robustness.get((by[metric].protocol, metric))
                cells.append(_diff_cell(res, m, prefix, kept))
        status = fits.loc[fits["method"] == m, "status"] if "status" in fits else pd.Series()
        cells.append(flag_share_text(status))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _protocol_paragraph(
    protocol: str,
    rs: list[ranking.RankResult],
    tests: dict,
    pairs: dict,
    robustness: dict | None = None,
) -> str:
    r0 = rs[0]
    what = (
        f"**{TITLES[protocol]}** (N = {r0.n} {unit(r0)}, k = {r0.k}; "
        f"{LABELS_USED[protocol]}; {smallest_p_text(r0.k, r0.n)})"
    )
    d = paired.detectable(max(r0.k, 2), r0.n, r0.alpha)
    if pairwise.min_holm_p(r0.k, r0.n) > r0.alpha and d.min_p_holm > r0.alpha:
        return (
            f"{what}: with N = {r0.n} no paired test can reach significance, so its ranks "
            "describe these data and decide nothing."
        )
    parts = []
    for r in rs:
        if not r.applicable:
            parts.append(f"{r.metric.upper()}: no rank test ({r.note})")
            continue
        s = verdict_summary(
            r, tests.get((r.protocol, r.metric), pd.DataFrame()), pairs.get((r.protocol, r.metric))
        )
        friedman = "rejects" if s["friedman_p"] < r.alpha else "does not reject"
        kept = (robustness or {}).get((r.protocol, r.metric))
        parts.append(
            f"on {r.metric.upper()} the Friedman test {friedman} equality and the paired tests "
            f"order {len(s['pairs'])} of {r.k * (r.k - 1) // 2} pairs; better than the "
            f"expected random subset: {annotate(s['better_random'], kept, 'rand_')}, worse: "
            f"{len(s['worse_random'])}{_fragile(s['worse_random'], kept, 'rand_')}; better "
            f"than all features: {annotate(s['better_all'], kept, 'all_')}, worse: "
            f"{len(s['worse_all'])}{_fragile(s['worse_all'], kept, 'all_')}"
        )
    return f"{what}: " + "; ".join(parts) + "."


def _fragile(names, kept: dict | None, prefix: str) -> str:
    """`` (fragile: `a`, `b`)`` for the fragile verdicts among ``names`` (a paragraph that
    counts the verdicts names these)."""
    weak = [m for m in names if (k := (kept or {}).get((prefix, m))) is not None and k.fragile]
    return f" (fragile: {', '.join(f'`{m}`' for m in weak)})" if weak else ""


def leaderboard_lines(
    results: list[ranking.RankResult],
    tests: dict[tuple[str, str], pd.DataFrame],
    pairs: dict[tuple[str, str], pd.DataFrame],
    tables: pd.DataFrame,
    *,
    view=views.PRIMARY,
    where: str = "primary view",
    sensitivity: bool = True,
    robustness: dict | None = None,
) -> list[str]:
    """The leaderboard section (markdown lines): the table of the first protocol with
    results, its legend, and one paragraph per protocol (module docstring);
    ``robustness``: :func:`ufs.report.robustness.verdict_robustness`, each verdict's
    counts."""
    ranked = [r for r in results if not r.avg_rank.empty]
    if not ranked:
        return []
    robustness = robustness or {}
    protocols = [p for p in ranking.PROTOCOLS if any(r.protocol == p for r in ranked)]
    first = [r for r in ranked if r.protocol == protocols[0]]
    title = TITLES[protocols[0]]
    lines = [
        f"## Leaderboard ({title}, {where})",
        "",
        *_table(first, tests, _fits(tables, view, protocols[0]), robustness),
        "",
        f"Sorted by the {title} ACC average rank (1 = best, over the {unit(first[0])}); "
        "`#` and the places in brackets are shared where rank sums are equal (`1=`: a tie, "
        "not decided by the names). Δ: the median difference in points over the "
        f"{unit(first[0])} from the expected random subset of the same size and from all "
        f"features, with its bootstrap 95 % interval; {UP} / {DOWN}: better / worse by the "
        f"paired Wilcoxon test with Holm's correction (α = {first[0].alpha:g}), no mark: "
        "the data cannot tell. Flagged fits: the share of the method's fits that did not "
        "converge (†), diverged (‡), were degenerate (◊) or went over the compute budget "
        "(§). " + views.BUDGET_RULE + " An average rank orders nothing by itself: only the "
        "paired tests do (*What the tests support*)."
        + (" " + robustness_legend(robustness) if robustness else ""),
        "",
    ]
    for p in protocols:
        rs = [r for r in ranked if r.protocol == p]
        lines += [_protocol_paragraph(p, rs, tests, pairs, robustness), ""]
    flagged = mostly_flagged_leaders(ranked, tables, view=view, sensitivity=sensitivity)
    return lines + ([" ".join(flagged), ""] if flagged else [])
