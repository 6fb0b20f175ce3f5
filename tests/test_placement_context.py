"""``ufs compare``'s standing section says what adding a method changes: one more
competitor moves every rank, and a method with another's scores is named as its twin."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ufs.report import placement
from ufs.stats import ranking


def _tables(scores: dict[str, dict[str, float]]) -> pd.DataFrame:
    rows = [
        {
            "dataset": d,
            "protocol": "label_free",
            "method": m,
            "h_label": h,
            "acc_mean": v,
            "nmi_mean": v,
            "status": "ok",
        }
        for d, per in scores.items()
        for m, v in per.items()
        for h in ("5", "10", "20")
    ]
    return pd.DataFrame(rows)


def _scores(seed: int = 0) -> dict[str, dict[str, float]]:
    rng = np.random.default_rng(seed)
    return {f"d{i}": {m: float(rng.uniform()) for m in "abcd"} for i in range(8)}


def test_a_twin_is_found_and_a_near_twin_is_not():
    s = _scores()
    for d in s:
        s[d]["mine"] = s[d]["b"]  # Laplacian Score under another name
        s[d]["near"] = s[d]["c"] + 1e-6
    r = ranking.rank_methods(_tables(s), "label_free", "acc")
    assert placement.same_scores("mine", r.scores) == ["b"]
    assert placement.same_scores("near", r.scores) == []
    # the tie: both take the mean of their places on every data set
    np.testing.assert_array_equal(r.ranks["mine"], r.ranks["b"])
    assert (r.ranks["mine"] % 1 == 0.5).all()


def test_the_context_names_k_and_the_twin():
    s = _scores(1)
    for d in s:
        s[d]["mine"] = s[d]["a"]
    r = ranking.rank_methods(_tables(s), "label_free", "acc")
    text = placement.rank_context("mine", r)
    assert f"k = {r.k} competitors, one more than the archived benchmark" in text
    assert "same scores as `a` on all 8 compared data sets" in text
    lines = placement.standing_markdown("mine", [r], {}, {})
    assert text in lines


def test_no_twin_no_twin_sentence():
    s = _scores(2)
    for d in s:
        s[d]["mine"] = s[d]["a"] * 0.5
    r = ranking.rank_methods(_tables(s), "label_free", "acc")
    text = placement.rank_context("mine", r)
    assert "k = 5" in text and "same scores" not in text
