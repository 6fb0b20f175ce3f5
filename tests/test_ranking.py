"""Cross-data-set comparison (ufs.stats.ranking) on planted score tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ufs.report import rank_report
from ufs.stats import ranking


def _tables(
    scores: dict[str, dict[str, float]], protocol="label_free", hs=("5", "10", "20"), status=None
):
    """Per-data-set table rows: scores[dataset][method] at every h (ACC and NMI alike);
    ``status[(dataset, method)]`` where not ``ok``."""
    status = status or {}
    rows = []
    for d, per in scores.items():
        for m, v in per.items():
            for h in hs:
                rows.append(
                    {
                        "dataset": d,
                        "protocol": protocol,
                        "method": m,
                        "h_label": h,
                        "acc_mean": v,
                        "nmi_mean": v,
                        "status": status.get((d, m), "ok"),
                    }
                )
    return pd.DataFrame(rows)


def _random_scores(n_datasets=6, methods="abcde", seed=0):
    rng = np.random.default_rng(seed)
    return {f"d{i}": {m: float(rng.uniform()) for m in methods} for i in range(n_datasets)}


def test_a_method_best_everywhere_has_rank_one():
    s = _random_scores()
    for d in s:
        s[d]["best"] = 2.0  # above every uniform score
    r = ranking.rank_methods(_tables(s), "label_free", "acc")
    assert r.avg_rank.index[0] == "best" and r.avg_rank["best"] == 1.0
    assert (r.ranks["best"] == 1).all()
    assert r.k == 6 and r.n == 6


def test_friedman_matches_hand_computation():
    s = _random_scores(n_datasets=7, methods="abcd", seed=3)
    r = ranking.rank_methods(_tables(s), "label_free", "acc")
    # Demšar Eq. 1 on ranks (no ties in continuous scores), rank 1 = best
    X = np.array([[s[d][m] for m in "abcd"] for d in s])
    R = np.vstack([stats.rankdata(-row) for row in X])
    n, k = R.shape
    Rj = R.mean(axis=0)
    chi2 = 12 * n / (k * (k + 1)) * (np.sum(Rj**2) - k * (k + 1) ** 2 / 4)
    assert r.statistic == pytest.approx(chi2)
    assert r.pvalue == pytest.approx(stats.chi2.sf(chi2, k - 1))
    ff = (n - 1) * chi2 / (n * (k - 1) - chi2)  # Iman-Davenport, Eq. 2
    assert r.iman_davenport == pytest.approx(ff)
    assert r.iman_davenport_p == pytest.approx(stats.f.sf(ff, k - 1, (k - 1) * (n - 1)))
    for m in "abcd":
        assert r.avg_rank[m] == pytest.approx(Rj["abcd".index(m)])


def test_critical_difference_matches_demsar_2006():
    # Table 5(a), alpha = 0.05 and 0.10, k = 2..10
    q05 = [1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164]
    q10 = [1.645, 2.052, 2.291, 2.459, 2.589, 2.693, 2.780, 2.855, 2.920]
    for k, a, b in zip(range(2, 11), q05, q10, strict=True):
        assert ranking.nemenyi_q(k, 0.05) == pytest.approx(a, abs=2e-3)
        assert ranking.nemenyi_q(k, 0.10) == pytest.approx(b, abs=2e-3)
    # Sec. 3.2.2's example: four methods on 14 data sets, CD = 2.569 sqrt(4*5/(6*14)) = 1.25
    assert ranking.nemenyi_cd(4, 14) == pytest.approx(1.25, abs=5e-3)
    assert ranking.nemenyi_cd(4, 14) == pytest.approx(
        ranking.nemenyi_q(4) * np.sqrt(4 * 5 / (6 * 14))
    )


def test_ties_get_the_average_rank():
    s = {
        "d1": {"a": 0.9, "b": 0.9, "c": 0.5},
        "d2": {"a": 0.8, "b": 0.7, "c": 0.7},
    }
    r = ranking.rank_methods(_tables(s), "label_free", "nmi")
    assert r.ranks.loc["d1", ["a", "b", "c"]].tolist() == [1.5, 1.5, 3.0]
    assert r.ranks.loc["d2", ["a", "b", "c"]].tolist() == [1.0, 2.5, 2.5]
    assert r.avg_rank.to_dict() == {"a": 1.25, "b": 2.0, "c": 2.75}
    # scipy's tie-corrected Friedman statistic
    X = np.array([[0.9, 0.9, 0.5], [0.8, 0.7, 0.7]])
    assert r.statistic == pytest.approx(stats.friedmanchisquare(*X.T).statistic)


def test_score_is_mean_over_h_and_carries_the_worst_status():
    t = _tables({"d1": {"a": 0.5, "b": 0.4, "c": 0.3}, "d2": {"a": 0.5, "b": 0.4, "c": 0.3}})
    at = (t["method"] == "a") & t["h_label"].isin(["10", "20"]) & (t["dataset"] == "d1")
    t.loc[at, "acc_mean"] = 0.2
    t.loc[(t["method"] == "c") & (t["h_label"] == "5") & (t["dataset"] == "d2"), "status"] = (
        "not_converged"
    )
    scores, status = ranking.dataset_scores(t, "label_free", "acc")
    assert scores.loc["d1", "a"] == pytest.approx(0.3)  # (0.5 + 0.2 + 0.2) / 3
    assert status.loc["d2", "c"] == "not_converged" and status.loc["d1", "c"] == "ok"
    best, _ = ranking.dataset_scores(t, "label_free", "acc", h_aggregate="max")
    assert best.loc["d1", "a"] == pytest.approx(0.5)
    r = ranking.rank_methods(t, "label_free", "acc")
    assert r.method_status("c") == "not_converged"
    assert r.avg_rank["c"] == 2.75  # d1: a and c tie at 0.3 (rank 2.5); d2: last
    assert "| c | 2.75† |" in rank_report.overview_markdown([r])


def test_missing_method_drops_the_dataset_and_says_so():
    s = _random_scores(n_datasets=4, methods="abc")
    del s["d2"]["b"]
    r = ranking.rank_methods(_tables(s), "label_free", "acc")
    assert list(r.scores.index) == ["d0", "d1", "d3"]
    assert r.dropped_datasets == {"d2": ["b"]} and not r.dropped_methods
    assert "data set d2 dropped (no h where b and the other methods all have a result)" in (
        rank_report.overview_markdown([r])
    )


def test_missing_method_is_dropped_when_too_few_datasets_would_remain():
    s = _random_scores(n_datasets=3, methods="abcd")
    for d in ("d0", "d1"):
        del s[d]["d"]
    r = ranking.rank_methods(_tables(s), "label_free", "acc")
    assert r.n == 3 and list(r.scores.columns) == sorted(r.scores.columns, key=r.avg_rank.get)
    assert "d" not in r.scores and r.dropped_methods == {"d": ["d0", "d1"]}
    assert r.applicable


def test_not_applicable_with_two_methods_or_one_dataset(tmp_path):
    two = ranking.rank_methods(_tables(_random_scores(methods="ab")), "label_free", "acc")
    one = ranking.rank_methods(_tables(_random_scores(n_datasets=1)), "label_free", "acc")
    for r in (two, one):
        assert not r.applicable and r.cd is None and "not applicable" in r.note
        assert r.avg_rank.size in (2, 5)
        rank_report.plot_cd(r, tmp_path / "cd.png")
        assert (tmp_path / "cd.png").stat().st_size > 1000
    none = ranking.rank_methods(_tables(_random_scores()), "oracle", "acc")  # no oracle rows
    assert none.avg_rank.empty and none.note
    md = rank_report.overview_markdown([two, one, none])
    assert md.count("n/a") >= 15
    rank_report.plot_cd(none, tmp_path / "none.png")


def test_cliques_join_methods_closer_than_cd():
    avg = pd.Series({"a": 1.0, "b": 1.5, "c": 2.2, "d": 3.9, "e": 4.0})
    assert ranking.cliques(avg, 1.0) == [["a", "b"], ["b", "c"], ["d", "e"]]
    assert ranking.cliques(avg, 0.1) == []
    assert ranking.cliques(avg, 10.0) == [["a", "b", "c", "d", "e"]]


def test_cd_diagram_and_markdown(tmp_path):
    s = _random_scores(n_datasets=8, methods=[f"method_{i}" for i in range(9)], seed=1)
    for j, d in enumerate(s):  # a planted order with noise: method_0 best
        for i, m in enumerate(s[d]):
            s[d][m] = 1.0 - 0.1 * i + 0.15 * np.sin(i * j)
    t = pd.concat([_tables(s, "oracle"), _tables(s, "label_free")], ignore_index=True)
    results = ranking.rank_all(t)
    assert [(r.protocol, r.metric) for r in results] == [  # label-free first
        ("label_free", "acc"),
        ("label_free", "nmi"),
        ("label_free_tuned", "acc"),  # no grid rows here: nothing ranked
        ("label_free_tuned", "nmi"),
        ("oracle", "acc"),
        ("oracle", "nmi"),
    ]
    assert results[2].avg_rank.empty
    r = results[4]
    assert r.avg_rank.index[0] == "method_0" and r.pvalue < 1e-3 and r.groups
    out = rank_report.plot_cd(r, tmp_path / "cd_oracle_acc.png")
    assert out.stat().st_size > 5000
    md = rank_report.overview_markdown(results)
    assert md.startswith("## Across data sets: average rank")
    assert "[figures/cd_oracle_acc.png](figures/cd_oracle_acc.png)" in md
    assert f"| {r.cd:.2f} |" in md
    # the diagram's caption beside it (its title is one line)
    assert f"- CD diagram, label-tuned (oracle) ACC: {rank_report.cd_caption(r)}" in md
    assert "Friedman χ²" in rank_report.cd_caption(r) and "Bold names" in rank_report.cd_caption(r)
    details = rank_report.details_markdown(results)
    assert "| method_0 | 1.00 |" in details or "| method_0 | " in details


def test_row_status_is_the_worst_status_per_data_set_and_family():
    """The rank table's status cells: per data set (then per family) and method, the
    worst fit status of its cells (``ufs.pipeline.status.worst``), a missing value or an
    unknown string counted as ``ok``."""
    from ufs.pipeline.status import FIT_STATUSES, worst

    rng = np.random.default_rng(3)
    choices = [*FIT_STATUSES, None, np.nan, "unknown"]
    index = pd.MultiIndex.from_tuples(
        [(d, h) for d in ("a", "b", "c", "d") for h in ("5", "10", "20")], names=["dataset", "h"]
    )
    for _ in range(20):
        cells = pd.DataFrame(
            rng.choice(np.array(choices, dtype=object), size=(len(index), 3)),
            index=index,
            columns=["m1", "m2", "m3"],
        )
        families = {"a": "f", "b": "f"}
        got = ranking._row_status(cells, ["m1", "m2", "m3", "absent"], None)
        fam = ranking._row_status(cells, ["m1", "m3"], families)
        for d in "abcd":
            for m in ("m1", "m2", "m3"):
                assert got.loc[d, m] == worst(cells.loc[d, m].dropna())
            assert got.loc[d, "absent"] == "ok"
        for m in ("m1", "m3"):
            assert fam.loc["f", m] == worst(cells.loc[["a", "b"], m].dropna())
            assert fam.loc["c", m] == worst(cells.loc["c", m].dropna())
        assert list(fam.index) == ["c", "d", "f"] and fam.index.name == "dataset"
