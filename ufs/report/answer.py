"""The answer of a benchmark in words: what the tests support, and
what the data cannot decide. One text for ``summary.md`` (the workflow) and
``docs/benchmark.md`` (``ufs benchmark-report``).

One wording per case, each backed by the test it names:

* the **Friedman test** (its χ² p decides at α; Iman–Davenport's F is shown beside it,
  never used for the verdict) rejects or does not reject "all competitors are equal";
* only where it rejects, the **all-pairs Wilcoxon signed-rank tests with Holm**
  (:mod:`ufs.stats.pairwise`) order the pairs they order (``a`` > ``b``), and no other
  pair is claimed; the Nemenyi CD diagram is a picture of the mean ranks, not a test of
  pairs (mean ranks depend on the other methods in the comparison);
* the **paired tests against the references** (random subsets, all features) give
  better / worse / not distinguishable, each verdict with how many leave-one-family-out
  runs and sensitivity views keep it (:mod:`.robustness`; *fragile* where not all do);
* a view whose N cannot reach significance in any of these says so first.

The claimed pairs are written ``\\`a\\` > \\`b\\`, \\`c\\```; :func:`claimed_pairs` reads
them back (``tests/test_verdicts.py`` checks every claim against the tests).
"""

from __future__ import annotations

import re

import pandas as pd

from ..stats import paired, pairwise, ranking, views
from . import rank_report
from .robustness import Kept, annotate

__all__ = [
    "support_lines",
    "pairwise_results",
    "claimed_pairs",
    "verdict_summary",
    "TITLES",
    "resolution_sentence",
    "smallest_p_text",
    "robustness_legend",
    "LABELS_USED",
    "unit",
]

#: the protocols as the answer names them
TITLES = {
    "label_free": "label-free",
    "label_free_tuned": "label-free tuned",
    "oracle": "label-tuned",
}

#: whose labels each protocol uses to choose a method's setting (every protocol uses the
#: data set's labels for the number of clusters and the evaluation, as the report says)
LABELS_USED = {
    "label_free": "no labels choose the setting: each method's default",
    "label_free_tuned": "the labels of the other families choose the setting, never this data "
    "set's: the setting with the best average rank elsewhere",
    "oracle": "this data set's labels choose the setting (the even restarts; reported on the "
    "odd ones)",
}


def pairwise_results(
    results: list[ranking.RankResult],
    *,
    families_of=None,
    bayes: bool = False,
    effects: bool = True,
) -> dict[tuple[str, str], pd.DataFrame]:
    """The all-pairs tests (:func:`ufs.stats.pairwise.pairwise_tests`) of each rank
    result's competitors on the same cells (``RankResult.cells``: one N per view);
    ``families_of``: the view whose families to count once (None: each data set)."""
    families = families_of.families() if families_of is not None else None
    out = {}
    for r in results:
        if r.avg_rank.empty:
            out[(r.protocol, r.metric)] = pd.DataFrame()
            continue
        out[(r.protocol, r.metric)] = pairwise.pairwise_tests(
            r.cells,
            list(r.avg_rank.index),
            families=families,
            alpha=r.alpha,
            bayes=bayes,
            effects=effects,
        )
    return out


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


def _grouped(pairs: list[tuple[str, str]]) -> str:
    """``\\`a\\` > \\`b\\`, \\`c\\`; \\`d\\` > …``: the ordered pairs grouped by the better method."""
    groups: dict[str, list[str]] = {}
    for a, b in pairs:
        groups.setdefault(a, []).append(b)
    return "; ".join(f"`{a}` > {_names(bs)}" for a, bs in groups.items())


_CLAIM = re.compile(r"`([^`]+)` > ((?:`[^`]+`(?:, )?)+)")


def claimed_pairs(text: str) -> set[tuple[str, str]]:
    """Every (better, worse) pair a text claims in the form written by :func:`_grouped`."""
    out = set()
    for a, rest in _CLAIM.findall(text):
        for b in re.findall(r"`([^`]+)`", rest):
            out.add((a, b))
    return out


def resolution_sentence(k: int, n: int, alpha: float, unit: str = "data sets") -> str:
    """What ``n`` paired units can show for ``k`` competitors: the smallest Holm-adjusted
    p of the all-pairs tests and of the tests against a reference."""
    d = paired.detectable(max(k, 2), n, alpha)
    pair_p = pairwise.min_holm_p(k, n)
    can_pairs = pair_p <= alpha
    can_refs = d.min_p_holm <= alpha
    tail = (
        "so a method that wins on (nearly) every one can be detected"
        if can_pairs and can_refs
        else "so no pair of competitors can be ordered whatever the scores"
        if not can_pairs and can_refs
        else "so no paired test here can reach significance, whatever the scores"
    )
    return (
        f"With N = {n} {unit} and k = {k} competitors, the smallest Holm-adjusted p of the "
        f"{k * (k - 1) // 2} pairwise tests is {pair_p:.2g} and of the tests against a "
        f"reference {d.min_p_holm:.2g} ({k} methods), {tail}."
    )


def smallest_p_text(k: int, n: int) -> str:
    """The smallest p ``n`` paired units allow, in words: the exact two-sided Wilcoxon
    signed-rank test's ``2 / 2^n`` (every difference of one sign) and, after Holm over the
    ``k`` methods compared with a reference, ``k`` times that (capped at 1)."""
    d = paired.detectable(max(k, 1), n)
    return (
        f"the smallest p its N = {n} allows is 2/2^{n} = {d.min_p:.2g} for one Wilcoxon "
        f"signed-rank test, {d.min_p_holm:.2g} after Holm over the {k} methods"
    )


def unit(r: ranking.RankResult) -> str:
    """What one of the comparison's N is: a family (where some have several members) or a
    data set."""
    return "families" if r.families else "data sets"


def support_lines(
    results: list[ranking.RankResult],
    tests: dict[tuple[str, str], pd.DataFrame],
    protocols=ranking.PROTOCOLS,
    pairs: dict[tuple[str, str], pd.DataFrame] | None = None,
    *,
    heading: str = "## What the tests support",
    intro: str = "",
    robustness: dict | None = None,
) -> list[str]:
    """The answer first: per protocol (label-free first) and metric, the Friedman
    verdict, the pairs the all-pairs paired tests order (``pairs``:
    :func:`pairwise_results`), and the paired verdicts against the references
    (``tests``: :func:`ufs.stats.references.all_reference_tests`), one N per line; each
    verdict with its leave-one-family-out and views' counts where ``robustness``
    (:func:`ufs.report.robustness.verdict_robustness`) has them."""
    lines = [heading, ""] + ([intro, ""] if intro else [])
    pairs = pairs or {}
    by = {(r.protocol, r.metric): r for r in results}
    n_before = len(lines)
    for protocol in protocols:
        for metric in ranking.METRICS:
            r = by.get((protocol, metric))
            if r is None or r.avg_rank.empty:
                continue
            kept = (robustness or {}).get((protocol, metric))
            lines.append(_line(r, tests.get((protocol, metric), pd.DataFrame()), pairs, kept))
    if len(lines) == n_before:
        lines.append(
            "- No rank test applies to these results (too few data sets or competitors; the "
            "notes under the rank table say why): nothing here supports a claim that one "
            "method is better than another."
        )
    lines += [
        "",
        "A method called best on a data set, or placed ahead in the average ranks or the CD "
        "diagram, is not thereby better: only the pairs and verdicts above are supported by "
        "a test. References (`all_features`, `random`, `max_variance`) and declared variants "
        "are not ranked; data sets with fewer than 3 values of h are not ranked (listed "
        "under the rank table). Missing results: " + views.MISSING_DATA_RULE,
    ]
    if robustness:
        lines[-1] += " " + robustness_legend(robustness)
    return lines + [""]


def robustness_legend(robustness: dict) -> str:
    """What the counts after a verdict say (the verdict lines and the leaderboard), for
    ``robustness`` (:func:`ufs.report.robustness.verdict_robustness`): with the views'
    count where it has one."""
    every = [k for d in robustness.values() for k in d.values()]
    with_views = any(k.views is not None for k in every)
    views_text = (
        ", and how many of the other sensitivity views that compare the method (*How the "
        "verdicts move with the rules*; the absolute h grid, other fits, not counted)"
        if with_views
        else ""
    )
    k0 = max(every, key=lambda k: (k.lofo_runs, k.views_runs or 0), default=Kept(0, 0))
    example = f"`{Kept(k0.lofo_runs, k0.lofo_runs, k0.views_runs, k0.views_runs).text()}`"
    return (
        "After each verdict against a reference: how many leave-one-family-out runs (the "
        f"same test with each family left out in turn) keep it{views_text}, {example} where "
        "all do; a verdict that fewer keep is *fragile*, with its counts."
    )


def _line(r: ranking.RankResult, res: pd.DataFrame, pairs: dict, kept: dict | None = None) -> str:
    what = f"**{TITLES[r.protocol]} {r.metric.upper()}**"
    head = f"- {what} (N = {r.n} {unit(r)}, k = {r.k}): "
    if not r.applicable:
        return head + f"no rank test: {r.note}."
    d = paired.detectable(r.k, r.n, r.alpha)
    nothing = pairwise.min_holm_p(r.k, r.n) > r.alpha and d.min_p_holm > r.alpha
    rejects = r.pvalue < r.alpha
    text = head + (
        f"the Friedman test (χ² p = {rank_report._fmt_p(r.pvalue)}, which decides; "
        f"Iman–Davenport p = {rank_report._fmt_p(r.iman_davenport_p)} shown for reference) "
        + ("rejects" if rejects else "does not reject")
        + " equality of the competitors"
    )
    tested = pairs.get((r.protocol, r.metric))
    if nothing:
        # the omnibus verdict first, then what no paired test can do at this N: the
        # bullet never opens with a verdict its next clause contradicts
        text += (
            f"{', yet' if rejects else ', and'} **no pair and no verdict against a reference "
            f"can be decided here**: with N = {r.n} no paired test can reach significance "
            f"(the smallest Holm-adjusted p is {d.min_p_holm:.2g} against a reference, "
            f"{pairwise.min_holm_p(r.k, r.n):.2g} for a pair), so what follows describes and "
            "cannot decide."
        )
    elif not rejects:
        text += "; no pair is tested further, none is ordered."
    elif tested is None or tested.empty:
        text += "; the pairs were not tested."
    else:
        ordered = pairwise.ordered_pairs(tested)
        m = len(tested)
        if ordered:
            text += (
                f"; the paired Wilcoxon tests of all {m} pairs (Holm) order {len(ordered)}: "
                f"{_grouped(ordered)}; no other pair can be ordered by these data."
            )
        else:
            text += (
                f"; yet the paired Wilcoxon tests of all {m} pairs (Holm) order none: no "
                "pair of competitors can be ordered by these data."
            )
    rb, rw, rn = _verdicts(res, "rand_")
    ab, aw, an = _verdicts(res, "all_")
    ref_rand = "the expected random subset" + REFERENCE_NOTE.get(r.protocol, "")
    if rb or rw or rn:
        text += (
            f" Against {ref_rand} (Wilcoxon, Holm, α = {r.alpha:g}): better "
            f"{annotate(rb, kept, 'rand_')}; worse {annotate(rw, kept, 'rand_')}; not "
            f"distinguishable {len(rn)} method{'s' if len(rn) != 1 else ''}."
        )
    if ab or aw or an:
        text += (
            f" Against all features: better {annotate(ab, kept, 'all_')}; worse "
            f"{annotate(aw, kept, 'all_')}; not distinguishable {len(an)}."
        )
    return text


#: how a protocol's random reference is drawn, where it is not the plain expected subset
REFERENCE_NOTE = {
    "oracle": " (the best of G random subsets for a grid of G settings)",
    "label_free_tuned": " (on the same odd restarts)",
}


def verdict_summary(
    r: ranking.RankResult, res: pd.DataFrame, tested: pd.DataFrame | None
) -> dict[str, object]:
    """The verdicts of one protocol and metric as data (the sensitivity table): N, the
    Friedman p, the ordered pairs (none unless Friedman rejects), the methods better /
    worse than random and than all features, and the top method by average rank."""
    rejects = r.applicable and r.pvalue < r.alpha
    ordered = pairwise.ordered_pairs(tested) if rejects and tested is not None else []
    rb, rw, _ = _verdicts(res, "rand_")
    ab, aw, _ = _verdicts(res, "all_")
    return {
        "n": r.n,
        "k": r.k,
        "friedman_p": r.pvalue if r.applicable else None,
        "pairs": ordered,
        "better_random": rb,
        "worse_random": rw,
        "better_all": ab,
        "worse_all": aw,
        "top": ranking.top_methods(r.avg_rank),
    }
