"""What a verdict of a report can claim: the smallest p a protocol's N allows, and how
firmly a verdict against a reference stands (``ufs.report.robustness``: leave-one-family-out
runs, sensitivity views), on a small table where leaving one family out flips it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ufs.report import answer, leaderboard, robustness
from ufs.report.robustness import Kept
from ufs.stats import ranking, references, views


def test_the_smallest_p_each_protocols_n_allows_is_stated():
    assert answer.smallest_p_text(19, 24) == (
        "the smallest p its N = 24 allows is 2/2^24 = 1.2e-07 for one Wilcoxon signed-rank "
        "test, 2.3e-06 after Holm over the 19 methods"
    )
    # N = 5: 2/32 for one test, capped at 1 after Holm over 19
    assert "2/2^5 = 0.062 for one" in answer.smallest_p_text(19, 5)
    assert answer.smallest_p_text(19, 5).endswith("1 after Holm over the 19 methods")
    # the exact test reaches it: all five differences of one sign
    assert stats.wilcoxon([1, 2, 3, 4, 5]).pvalue == pytest.approx(2 / 2**5)


# -- robustness: leave one family out, and the views ----------------------------------
def _verdict_tables() -> pd.DataFrame:
    """Nine families, `a` above the random reference on eight and below it on one, the
    loss the second smallest difference (signed-rank W− = 2): Wilcoxon p = 2·3/2⁹, 0.035
    after Holm over the three methods (`b`, `c`: noise). Left out, the family whose win is
    the smallest (W− becomes 1) or the loss keep the verdict; any other leaves W− = 2 on
    eight: p = 2·3/2⁸, 0.07 after Holm, the verdict lost. Kept in 2 of 9."""
    diffs = {f"d{i}": 0.01 * (i + 1) for i in range(9)}
    diffs["d1"] = -0.02  # rank 2 among |differences| 0.01, 0.02, 0.03, …
    rng = np.random.default_rng(1)
    rows = []
    for d, diff in diffs.items():
        base = 0.5
        values = {"random": base, "a": base + diff}
        values |= {"b": base + rng.normal(0, 0.01), "c": base + rng.normal(0, 0.01)}
        for m, v in values.items():
            for h in ("5", "10", "20"):
                rows.append(
                    {"dataset": d, "protocol": "label_free", "method": m, "h_label": h}
                    | {"acc_mean": v, "nmi_mean": v, "status": "ok"}
                )
    t = pd.DataFrame(rows)
    t["role"] = np.where(t["method"] == "random", "reference", "method")
    return t


def test_a_verdict_that_leaving_one_family_out_flips_is_fragile():
    t = _verdict_tables()
    r = ranking.rank_methods(t, "label_free", "acc", view=views.PRIMARY)
    res = references.reference_tests(
        t, "label_free", "acc", view=views.PRIMARY, bayes=False, cells=r.cells.index
    )
    assert res.at["a", "rand_direction"] == "better"
    assert res.at["a", "rand_p_holm"] == pytest.approx(3 * 2 * 3 / 2**9)
    kept = robustness.verdict_robustness(t, [r], {("label_free", "acc"): res})
    k = kept[("label_free", "acc")][("rand_", "a")]
    assert k == Kept(2, 9) and k.fragile
    assert k.text() == "fragile: 2 of 9 leave-one-family-out runs"
    line = answer.support_lines(
        [r], {("label_free", "acc"): res}, ("label_free",), robustness=kept
    )[2]
    assert "better `a` (fragile: 2 of 9 leave-one-family-out runs)" in line
    # the views' count beside it, where the sensitivity rows are given
    rows = {
        "primary": {"n": 9, "left_out": {}, "better_random": ["a"]},
        "all": {"n": 9, "left_out": {}, "better_random": ["a"]},
        "no_a": {"n": 9, "left_out": {"a": "flagged"}, "better_random": []},
        "other": {"n": 9, "left_out": {}, "better_random": []},
    }
    kept = robustness.verdict_robustness(
        t, [r], {("label_free", "acc"): res}, sensitivity_of=lambda p, m: rows
    )
    k = kept[("label_free", "acc")][("rand_", "a")]
    assert k == Kept(2, 9, 1, 2)  # of the views that keep `a`, one keeps the verdict
    assert k.text() == "fragile: 2 of 9 leave-one-family-out runs, 1 of 2 views"
    board = leaderboard.leaderboard_lines([r], {("label_free", "acc"): res}, {}, t, robustness=kept)
    cell = next(ln for ln in board if ln.startswith("| 1 | `a` |"))
    assert "▲ fragile: 2 of 9 leave-one-family-out runs, 1 of 2 views" in cell


def test_a_verdict_kept_everywhere_says_its_counts_and_no_mark_has_none():
    assert Kept(24, 24, 6, 6).text() == "24/24 · 6/6" and not Kept(24, 24, 6, 6).fragile
    assert Kept(24, 24).text() == "24/24"
    assert Kept(24, 24, 5, 6).fragile and Kept(23, 24, 6, 6).fragile
    assert robustness.annotate([], {}, "rand_") == "none"
    assert robustness.annotate(["x"], {}, "rand_") == "`x`"
