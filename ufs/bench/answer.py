"""The answer of a benchmark in words (issues 24 and 27): what the rank and paired tests
support, and what the data cannot decide. One text for ``summary.md`` (the workflow) and
``docs/benchmark.md`` (``ufs benchmark-report``)."""

from __future__ import annotations

import pandas as pd

from . import paired, ranking

__all__ = ["support_lines", "significant_pairs", "TITLES"]

#: the protocols as the answer names them
TITLES = {"label_free": "label-free", "oracle": "label-tuned"}


def significant_pairs(r: ranking.RankResult) -> list[tuple[str, str, float]]:
    """(better, worse, rank gap) of every pair of competitors whose average ranks differ by
    at least the Nemenyi CD (none when the Friedman test does not reject)."""
    if not r.applicable or r.pvalue >= r.alpha:
        return []
    names = list(r.avg_rank.index)
    return [
        (a, b, float(r.avg_rank[b] - r.avg_rank[a]))
        for i, a in enumerate(names)
        for b in names[i + 1 :]
        if r.avg_rank[b] - r.avg_rank[a] >= r.cd
    ]


def _names(ms) -> str:
    return ", ".join(f"`{m}`" for m in ms) if len(ms) else "none"


def _verdicts(res: pd.DataFrame, prefix: str) -> tuple[list[str], list[str], list[str]]:
    col = f"{prefix}direction"
    if col not in res:
        return [], [], []
    return (
        list(res.index[res[col] == "better"]),
        list(res.index[res[col] == "worse"]),
        list(res.index[res[col] == "no difference shown"]),
    )


def support_lines(
    results: list[ranking.RankResult],
    tests: dict[tuple[str, str], pd.DataFrame],
    protocols=("label_free", "oracle"),
) -> list[str]:
    """The answer first: what the tests of this run support and what they do not, per
    protocol (label-free first) and metric, in words: the Friedman verdict, the pairs the
    Nemenyi CD separates, and the paired verdicts against the references (``tests``:
    :func:`ufs.bench.references.all_reference_tests`)."""
    lines = ["## What the tests support", ""]
    by = {(r.protocol, r.metric): r for r in results}
    for protocol in protocols:
        for metric in ranking.METRICS:
            r = by.get((protocol, metric))
            if r is None or r.avg_rank.empty:
                continue
            what = f"**{TITLES[protocol]} {metric.upper()}**"
            res = tests.get((protocol, metric), pd.DataFrame())
            if r.applicable:
                pairs = significant_pairs(r)
                verdict = "reject" if r.pvalue < r.alpha else "do not reject"
                omnibus = (
                    f"the Friedman test over the {r.k} competitors on {r.n} data sets "
                    f"(p = {ranking._fmt_p(r.pvalue)}) and the Nemenyi CD of {r.cd:.2f} "
                    f"ranks {verdict} equality: "
                )
                if pairs:
                    shown = "; ".join(f"`{a}` ahead of `{b}` by {g:.1f}" for a, b, g in pairs[:8])
                    more = f" (and {len(pairs) - 8} more pairs)" if len(pairs) > 8 else ""
                    omnibus += (
                        f"{len(pairs)} of {r.k * (r.k - 1) // 2} pairs differ: {shown}{more}; "
                        "no other pair of competitors can be ordered by these data."
                    )
                else:
                    omnibus += "no pair of competitors can be ordered by these data."
            else:
                omnibus = f"no rank test: {r.note}."
            line = f"- {what}: {omnibus}"
            rb, rw, rn = _verdicts(res, "rand_")
            ab, aw, an = _verdicts(res, "all_")
            ref_rand = "the expected random subset" + (
                " (the best of G random subsets for a grid of G settings)"
                if protocol == "oracle"
                else ""
            )
            if rb or rw or rn:
                line += (
                    f" Against {ref_rand} (Wilcoxon, Holm, α = {r.alpha:g}): better "
                    f"{_names(rb)}; worse {_names(rw)}; not distinguishable {len(rn)} "
                    f"method{'s' if len(rn) != 1 else ''}."
                )
            if ab or aw or an:
                line += (
                    f" Against all features: better {_names(ab)}; worse {_names(aw)}; not "
                    f"distinguishable {len(an)}."
                )
            lines.append(line)
    if len(lines) == 2:
        lines.append(
            "- No rank test applies to these results (too few data sets or competitors; the "
            "notes under the rank table say why): nothing here supports a claim that one "
            "method is better than another."
        )
    first = next((r for r in results if not r.avg_rank.empty), None)
    if first is not None:
        lines += [
            "",
            paired.detectable(first.k, first.n, first.alpha).sentence()
            + " A method called best on a data set, or placed ahead in the average ranks, "
            "is not thereby better: only the pairs and verdicts above are supported by a "
            "test. References (`all_features`, `random`, `max_variance`) and declared variants "
            "are not ranked; data sets with fewer than 3 values of h are not ranked "
            "(listed under the rank table).",
        ]
    return lines + [""]
