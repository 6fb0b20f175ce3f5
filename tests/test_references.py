"""References as distributions, competitors-only ranks, paired statistics,
held-out label-tuning and thin h grids (ufs.stats.paired, ufs.stats.references)."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ufs.methods import RandomFeatures
from ufs.pipeline.config import build_plan
from ufs.registry import get_method, methods_with_role, register
from ufs.report import aggregate, rank_report
from ufs.stats import paired, ranking, references

METRICS = ("acc", "nmi", "ari", "ne")


# -- fake evaluation files ---------------------------------------------------------------


def _record(method, pid, params, hs, per_restart, *, label_free=True, in_grid=False, kind=None):
    """One evaluation record; ``per_restart(h) -> list of ACC values`` (NMI = ACC / 2)."""
    rows = []
    for h in hs:
        acc = list(per_restart(h))
        rows.append(
            {
                "h": h,
                "h_label": str(h),
                "per_restart": {
                    "acc": acc,
                    "nmi": [a / 2 for a in acc],
                    "ari": acc,
                    "ne": acc,
                },
                "fit_seconds": 0.01,
                "fit_info": {},
                "fit_status": "ok",
            }
        )
    return {
        "dataset": "toy",
        "dataset_base": "toy",
        "method": method,
        "pid": pid,
        "kind": kind or get_method(method).kind,
        "params": params,
        "label_free": label_free,
        "in_grid": in_grid,
        "restarts": len(rows[0]["per_restart"]["acc"]),
        "kmeans_seconds": 0.0,
        "fit_seconds_total": 0.0,
        "results": rows,
    }


def _write(tmp_path, records, name="toy.json"):
    path = tmp_path / name
    path.write_text(json.dumps({"dataset": "toy", "evaluations": records}))
    return path


def _random_records(n_draws=12, hs=(5, 10, 20), restarts=4, seed=0):
    rng = np.random.default_rng(seed)
    recs = []
    for r in range(n_draws):
        values = {h: rng.uniform(0.2, 0.6, size=restarts) for h in hs}
        recs.append(_record("random", f"r{r}", {"draw": r}, hs, values.__getitem__))
    return recs


# -- random as a distribution ------------------------------------------------------------


def test_random_reported_mean_is_the_mean_of_its_draws(tmp_path):
    recs = _random_records()
    sel = aggregate.select_protocols(aggregate.collect([_write(tmp_path, recs)], "toy"))
    pooled = sel[(sel["protocol"] == "label_free") & (sel["method"] == "random")]
    draws = sel[(sel["protocol"] == "draw") & (sel["method"] == "random")]
    assert len(pooled) == 3 and len(draws) == 12 * 3
    for _, row in pooled.iterrows():
        i = recs[0]["results"].index(
            next(r for r in recs[0]["results"] if r["h_label"] == row["h_label"])
        )
        means = [np.mean(rec["results"][i]["per_restart"]["acc"]) for rec in recs]
        assert row["acc_mean"] == pytest.approx(np.mean(means))
        assert row["acc_p05"] == pytest.approx(np.percentile(means, 5))
        assert row["acc_p95"] == pytest.approx(np.percentile(means, 95))
        assert row["n_draws"] == 12
        everything = np.concatenate([rec["results"][i]["per_restart"]["acc"] for rec in recs])
        assert row["acc_std"] == pytest.approx(everything.std(ddof=1))
    md = aggregate.markdown_tables(sel, "toy")
    assert "_random_ (reference)" in md and aggregate.BAND_LEGEND in md


def test_random_draws_are_independent_and_reproducible():
    X = np.random.default_rng(0).normal(size=(20, 50))
    a = RandomFeatures(5, random_state=3, draw=0).fit(X).ranking_
    b = RandomFeatures(5, random_state=3, draw=1).fit(X).ranking_
    assert not np.array_equal(a, b)
    assert np.array_equal(a, RandomFeatures(5, random_state=3, draw=0).fit(X).ranking_)
    with pytest.raises(ValueError, match="draw"):
        RandomFeatures(5, random_state=0, draw=-1).fit(X)


def test_plan_fits_reference_draws_of_random_and_never_tunes_them():
    cfg = {
        "datasets": {"wine": {"h": [2, 4, 6]}},
        "methods": {"random": {}, "udfs": {}},
        "evaluation": {"reference_draws": 7},
    }
    plan = build_plan(cfg)
    draws = plan.settings["random"]
    assert sorted(s.params["draw"] for s in draws) == list(range(7))
    assert all(s.label_free and not s.in_grid for s in draws)
    assert len({s.pid for s in draws}) == 7
    tuned = build_plan({**cfg, "protocols": ["oracle"]})
    assert len(tuned.settings["random"]) == 7  # kept: the best-of-G reference needs them


# -- roles: who is ranked ----------------------------------------------------------------


def test_registry_roles():
    assert methods_with_role("reference") == ["all_features", "max_variance", "random"]
    assert {"kmeans_ufs_exact", "spcafs_raw", "fsbc_nobal"} <= set(methods_with_role("variant"))
    assert get_method("fsbc_nobal").variant_of == "fsbc"
    assert get_method("random").draws == "draw"
    with pytest.raises(ValueError, match="variant_of"):
        register("x_variant_without_parent", RandomFeatures, role="variant")
    with pytest.raises(ValueError, match="role"):
        register("x_bad_role", RandomFeatures, role="baseline")


def _tables(scores: dict[str, dict[str, float]], hs=("5", "10", "20"), protocol="label_free"):
    rows = [
        {
            "dataset": d,
            "protocol": protocol,
            "method": m,
            "h_label": h,
            "h": int(h),
            "acc_mean": v,
            "nmi_mean": v,
            "status": "ok",
        }
        for d, per in scores.items()
        for m, v in per.items()
        for h in hs
    ]
    return pd.DataFrame(rows)


def test_references_and_variants_never_enter_the_omnibus_test():
    rng = np.random.default_rng(1)
    names = ["kmeans_ufs", "mcfs", "udfs", "all_features", "random", "max_variance", "fsbc_nobal"]
    scores = {f"d{i}": {m: float(rng.uniform()) for m in names} for i in range(6)}
    t = _tables(scores)
    r = ranking.rank_methods(t, "label_free", "acc")
    assert set(r.avg_rank.index) == {"kmeans_ufs", "mcfs", "udfs"} and r.k == 3
    assert r.excluded == {
        "all_features": "reference",
        "fsbc_nobal": "variant",
        "max_variance": "reference",
        "random": "reference",
    }
    with_variants = ranking.rank_methods(t, "label_free", "acc", include_variants=True)
    assert set(with_variants.avg_rank.index) == {"kmeans_ufs", "mcfs", "udfs", "fsbc_nobal"}
    # the Friedman statistic is the competitors' alone
    only = ranking.rank_methods(
        t[t["method"].isin(["kmeans_ufs", "mcfs", "udfs"])], "label_free", "acc"
    )
    assert r.statistic == pytest.approx(only.statistic)


def test_dataset_with_two_values_of_h_is_flagged_and_not_ranked():
    rng = np.random.default_rng(2)
    scores = {f"d{i}": {m: float(rng.uniform()) for m in "abc"} for i in range(4)}
    t = pd.concat(
        [_tables(scores), _tables({"thin": {"a": 0.9, "b": 0.1, "c": 0.5}}, hs=("1", "3"))]
    )
    r = ranking.rank_methods(t, "label_free", "acc")
    assert r.thin_datasets == {"thin": 2}
    assert "thin" not in r.scores.index and r.n == 4
    assert "thin (2 values of h)" in rank_report.overview_markdown([r])
    loose = ranking.rank_methods(t, "label_free", "acc", min_h_values=2)
    assert "thin" in loose.scores.index and not loose.thin_datasets


# -- held-out label tuning ---------------------------------------------------------------


def test_label_tuned_scores_come_from_restarts_not_used_to_choose(tmp_path):
    hs = (5, 10, 20)
    # setting "lucky" is best on the even restarts, poor on the odd ones; "steady" is not
    lucky = _record(
        "udfs", "lucky", {"gamma": 1.0}, hs, lambda h: [0.9, 0.1, 0.9, 0.1], in_grid=True
    )
    steady = _record(
        "udfs", "steady", {"gamma": 2.0}, hs, lambda h: [0.5, 0.6, 0.5, 0.6], in_grid=True
    )
    sel = aggregate.select_protocols(aggregate.collect([_write(tmp_path, [lucky, steady])], "toy"))
    tuned = sel[sel["protocol"] == "oracle"]
    assert (tuned["pid"] == "lucky").all()  # chosen on restarts 0 and 2
    assert tuned["acc_mean"].tolist() == pytest.approx([0.1] * 3)  # reported on 1 and 3
    assert tuned["acc_std"].tolist() == pytest.approx([0.0] * 3)
    assert (tuned["tuning"] == "held_out").all()
    assert tuned["acc_half_a"].tolist() == pytest.approx([0.9] * 3)
    # exhaustively: the reported score never depends on the choosing restarts
    for even in itertools.product([0.0, 1.0], repeat=2):
        rec = _record(
            "udfs", "x", {"gamma": 3.0}, hs, lambda h, e=even: [e[0], 0.3, e[1], 0.4], in_grid=True
        )
        s2 = aggregate.select_protocols(aggregate.collect([_write(tmp_path, [rec])], "toy"))
        assert s2.loc[s2["protocol"] == "oracle", "acc_mean"].tolist() == pytest.approx([0.35] * 3)


# -- paired statistics -------------------------------------------------------------------


def test_holm_matches_a_hand_computed_case():
    # sorted 0.005, 0.01, 0.03, 0.04 -> 4 x 0.005 = 0.02, 3 x 0.01 = 0.03, 2 x 0.03 = 0.06,
    # max(0.06, 1 x 0.04) = 0.06
    adj = paired.holm([0.01, 0.04, 0.03, 0.005])
    assert adj.tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert np.isnan(paired.holm([0.5, np.nan, 0.6])[1])
    assert paired.holm([0.5, np.nan, 0.6])[[0, 2]].tolist() == pytest.approx([1.0, 1.0])
    assert paired.holm([0.9, 0.8]).max() <= 1.0


def test_holm_corrected_wilcoxon_equals_the_hand_computed_p_values():
    idx = [f"d{i}" for i in range(8)]
    ref = pd.Series(0.5, index=idx)
    better = pd.Series(0.5 + np.arange(1, 9) / 100, index=idx)  # wins on all 8
    mixed = pd.Series(0.5 + np.array([3, -1, 2, -4, 5, 1, -2, 6]) / 100, index=idx)
    res = paired.compare_to_reference(
        pd.DataFrame({"better": better, "mixed": mixed}), ref, bayes=False
    )
    p_b = stats.wilcoxon((better - ref).to_numpy()).pvalue
    p_m = stats.wilcoxon((mixed - ref).to_numpy()).pvalue
    assert p_b == pytest.approx(2 / 2**8)  # every difference of one sign: the exact minimum
    lo, hi = sorted([p_b, p_m])
    expected = {"better": min(1, 2 * p_b), "mixed": max(min(1, 2 * lo), hi)}
    assert res.loc["better", "p_holm"] == pytest.approx(expected["better"])
    assert res.loc["mixed", "p_holm"] == pytest.approx(expected["mixed"])
    assert res.loc["better", "wins"] == 8 and res.loc["better", "direction"] == "better"
    assert res.loc["mixed", "direction"] == "no difference shown"
    assert res.loc["better", "median_diff"] == pytest.approx(0.045)
    assert res.loc["better", "ci_low"] <= 0.045 <= res.loc["better", "ci_high"]


def test_signed_rank_of_all_ties_is_not_significant():
    assert paired.signed_rank([0.0, 0.0, 0.0]) == (pytest.approx(math.nan, nan_ok=True), 1.0)


def _brute_force_signed_rank(d):
    """``(W, p)`` by enumerating every sign flip of the nonzero differences."""
    d = np.asarray(d, dtype=float)
    nz = d[d != 0]
    ranks = stats.rankdata(np.abs(nz))
    r_plus = ranks[nz > 0].sum()
    null = np.array(
        [
            ranks[list(s)].sum()
            for k in range(nz.size + 1)
            for s in itertools.combinations(range(nz.size), k)
        ]
    )
    low, high = np.mean(null <= r_plus), np.mean(null >= r_plus)
    return min(r_plus, ranks.sum() - r_plus), min(1.0, 2 * min(low, high))


@pytest.mark.parametrize("seed", range(6))
def test_signed_rank_with_ties_and_zeros_is_the_exact_test(seed):
    """Tied and zero differences (scores equal on a data set, rounded ACC): the exact
    p-value counted from the null distribution is an enumeration's of every sign flip, up
    to N = 13 values, and scipy's permutation test's to the last bit (one N per seed: that
    test costs ~0.5 s)."""
    rng = np.random.default_rng(seed)
    for n in range(1, 14):
        d = rng.integers(-3, 4, size=n) * 0.01
        d[0] = 0.0 if seed % 2 else d[0]
        if not np.any(d != 0):
            continue
        w, p = paired.signed_rank(d)
        assert (w, p) == pytest.approx(_brute_force_signed_rank(d), rel=1e-12)
        if n == 8 + seed:
            ref = stats.wilcoxon(d)
            assert (w, p) == (float(ref.statistic), float(ref.pvalue))


def test_signed_rank_without_ties_is_the_exact_test_up_to_50_values():
    """Untied differences: the counted exact p-value is an enumeration's (N ≤ 12) and
    scipy's exact test's to the last bit up to N = 50, and beyond that (and beyond 13 tied
    values) scipy's normal approximation."""
    rng = np.random.default_rng(1)
    for n in [*range(1, 52), 60]:
        for d in (rng.normal(size=n), rng.normal(0.4, 1.0, size=n)):
            ref = stats.wilcoxon(d)
            w, p = paired.signed_rank(d)
            assert (w, p) == (float(ref.statistic), float(ref.pvalue)), n
            if n <= 12:
                assert (w, p) == pytest.approx(_brute_force_signed_rank(d), rel=1e-12)
    for n in (14, 30):  # tied, beyond the exact range: the normal approximation
        d = rng.integers(-3, 4, size=n) * 0.01
        ref = stats.wilcoxon(d)
        assert paired.signed_rank(d) == (float(ref.statistic), float(ref.pvalue))


def test_bootstrap_interval_is_seeded_and_brackets_the_median():
    d = np.random.default_rng(0).normal(0.02, 0.05, size=15)
    a = paired.bootstrap_median_ci(d)
    assert a == paired.bootstrap_median_ci(d)
    assert a[0] <= np.median(d) <= a[1]
    assert paired.bootstrap_median_ci([0.1]) == (
        pytest.approx(math.nan, nan_ok=True),
        pytest.approx(math.nan, nan_ok=True),
    )


def test_bayesian_signed_rank_decides_the_planted_cases():
    x = np.linspace(0.5, 0.9, 12)
    better = paired.bayes_signed_rank(x + 0.05, x)
    same = paired.bayes_signed_rank(x + 0.001 * np.sin(np.arange(12)), x)
    worse = paired.bayes_signed_rank(x - 0.05, x)
    assert better[0] > 0.95 and same[1] > 0.95 and worse[2] > 0.95
    assert sum(better) == pytest.approx(1.0)
    assert paired.bayes_signed_rank([0.5, np.nan], [0.4, 0.3]) is None  # one pair left


def test_bayesian_signed_rank_draws_its_dirichlet_samples_once():
    """Same size, prior, seed: the same samples, drawn once per process and read-only (a
    summary runs ~130 tests on as many data sets); the answers are those of a fresh draw."""
    x = np.linspace(0.5, 0.9, 7)
    paired._dirichlet_samples.cache_clear()
    first = paired.bayes_signed_rank(x + 0.02, x, seed=5, nsamples=5_000)
    again = paired.bayes_signed_rank(x - 0.02, x, seed=5, nsamples=5_000)
    info = paired._dirichlet_samples.cache_info()
    assert info.misses == 1 and info.hits == 1
    w = paired._dirichlet_samples(8, 0.5, 5, 5_000)
    assert not w.flags.writeable
    fresh = np.random.RandomState(5).dirichlet(np.r_[0.5, np.ones(7)], 5_000)
    assert np.array_equal(w, fresh)
    paired._dirichlet_samples.cache_clear()
    assert paired.bayes_signed_rank(x + 0.02, x, seed=5, nsamples=5_000) == first
    assert paired.bayes_signed_rank(x - 0.02, x, seed=5, nsamples=5_000) == again


def _cases():
    rng = np.random.default_rng(7)
    x = rng.uniform(0.3, 0.9, 24)
    yield x, x + rng.normal(0, 0.02, 24), 0.01  # around the ROPE
    yield x, x + 0.03 + rng.normal(0, 0.01, 24), 0.01  # mostly better
    yield x[:5], x[:5] + 0.005, 0.01  # few data sets: the prior weighs
    z = np.round(x, 1)
    yield z, np.round(x + rng.normal(0, 0.05, 24), 1), 0.05  # ties, sums on the threshold
    yield x, x + rng.normal(0, 0.02, 24), 0.0  # no ROPE


@pytest.mark.parametrize("case", range(5))
def test_bayesian_signed_rank_equals_baycomp(case):
    """The vectorized posterior samples are baycomp's (same draws, same masks)."""
    baycomp = pytest.importorskip(
        "baycomp.multiple", reason="baycomp is the reference (pip install ufs-bench[stats])"
    )
    x, y, rope = list(_cases())[case]
    ours = paired.bayes_signed_rank(x, y, rope=rope, seed=3, nsamples=20_000)
    probs = baycomp.SignedRankTest.probs(x, y, rope=rope, random_state=3, nsamples=20_000)
    if rope == 0:  # baycomp returns (left, right) without a ROPE
        probs = (probs[0], 0.0, probs[1])
    assert ours == tuple(float(p) for p in probs)


@pytest.mark.parametrize("g", [1, 2, 3, 5, 6])
def test_best_of_g_equals_brute_force_over_every_subset(g):
    rng = np.random.default_rng(g)
    a, b = rng.uniform(size=6), rng.uniform(size=6)
    a[2] = a[4]  # a tie in the choosing half: the conservative (lower) report wins it
    subsets = list(itertools.combinations(range(6), g))
    chosen = [max(s, key=lambda i: (a[i], -b[i])) for s in subsets]
    assert paired.best_of_g(a, b, g) == pytest.approx(np.mean([b[i] for i in chosen]))
    assert paired.best_of_g(a, b, 99) == pytest.approx(paired.best_of_g(a, b, 6))


def test_random_percentile_counts_draws_below_and_half_the_ties():
    draws = pd.DataFrame([[0.1, 0.2, 0.3, 0.4]], index=["d"])
    scores = pd.DataFrame({"m": [0.3], "top": [0.9], "low": [0.0]}, index=["d"])
    pct = paired.random_percentiles(scores, draws)
    assert pct.loc["d"].tolist() == [62.5, 100.0, 0.0]


def test_detectable_states_what_n_data_sets_can_show():
    small = paired.detectable(4, 3)
    assert small.min_p == pytest.approx(0.25) and not small.wilcoxon_can_reject
    assert "no paired test here can reach significance" in small.sentence()
    big = paired.detectable(20, 18)
    assert big.min_p == pytest.approx(2 / 2**18) and big.wilcoxon_can_reject
    assert big.cd == pytest.approx(ranking.nemenyi_cd(20, 18))


def test_references_section_uses_expected_random_not_one_draw(tmp_path):
    # a competitor at exactly the expected random score on every data set: never "better"
    rows = []
    rng = np.random.default_rng(5)
    for d in range(8):
        draws = rng.uniform(0.3, 0.5, size=30)
        for h in ("5", "10", "20"):
            for r, v in enumerate(draws):
                rows.append(_row(f"d{d}", "random", "draw", h, v, pid=f"r{r}", draw=r))
            rows.append(_row(f"d{d}", "random", "label_free", h, draws.mean()))
            rows.append(_row(f"d{d}", "mcfs", "label_free", h, draws.mean() + 0.1))
            rows.append(_row(f"d{d}", "udfs", "label_free", h, draws.max() + 1e-9))
            rows.append(_row(f"d{d}", "kmeans_ufs", "label_free", h, float(draws.mean())))
            rows.append(_row(f"d{d}", "all_features", "label_free", h, 0.6))
    t = pd.DataFrame(rows)
    res = references.reference_tests(t, "label_free", "acc", bayes=False)
    assert res.loc["mcfs", "rand_direction"] == "better"
    assert res.loc["kmeans_ufs", "rand_ties"] == 8
    assert res.loc["kmeans_ufs", "rand_direction"] == "no difference shown"
    assert res.loc["udfs", "percentile"] == 100.0 and res.loc["mcfs", "all_direction"] == "worse"
    assert res.loc["mcfs", "n_draws"] == 30
    view = references.per_h_view(t, "acc")
    assert view.loc["mcfs", "wins"] == 24 and view.loc["mcfs", "losses"] == 0
    md = references.references_markdown(t)
    assert "## Against the references" in md and "no difference shown" in md


def _row(d, method, protocol, h, v, *, pid="p", draw=np.nan):
    return {
        "dataset": d,
        "protocol": protocol,
        "method": method,
        "pid": pid,
        "h_label": h,
        "h": int(h),
        "acc_mean": v,
        "nmi_mean": v,
        "acc_half_a": v,
        "acc_half_b": v,
        "nmi_half_a": v,
        "nmi_half_b": v,
        "status": "ok",
        "draw": draw,
    }


# -- input scaling as a factor -----------------------------------------------------------


def test_input_space_override_reaches_the_estimator_and_the_graph():
    from ufs.registry import make_estimator

    assert make_estimator("kmeans_ufs", {"input_space": "raw"}).input_space == "raw"
    assert make_estimator("spcafs", {"input_space": "unit_range"}).input_space == "unit_range"
    with pytest.raises(ValueError, match="input_space"):
        make_estimator("kmeans_ufs", {"input_space": "zscore"})
    plan = build_plan(
        {
            "datasets": {"wine": {"h": [2, 4, 6]}},
            "methods": {"laplacian_score": {"defaults": {"input_space": "unit_range"}}},
        }
    )
    (s,) = plan.settings["laplacian_score"]
    assert s.graph["input_space"] == "unit_range"  # the kNN graph of the matrix it receives


def test_scaling_markdown_reports_ranks_per_input_space():
    from ufs.stats.input_scaling import scaling_markdown

    rows = []
    # "a" is best on z-scored data, worst on raw; "b" the reverse; "c" in between
    table = {"standardized": {"a": 0.9, "b": 0.5, "c": 0.7}, "raw": {"a": 0.4, "b": 0.8, "c": 0.6}}
    for d in ("d1", "d2"):
        for space, per in table.items():
            for m, v in per.items():
                src = "own" if space == "standardized" else "raw"
                for h in ("5", "10", "20"):
                    rows.append(
                        {"dataset": d, "protocol": "label_free", "method": m, "h_label": h}
                        | {"acc_mean": v, "input_space": space, "source": src}
                    )
    md = scaling_markdown(pd.DataFrame(rows))
    assert "| `a` | z-scored | 90.0 / 1.00 | 40.0 / 3.00 | 1.00 |" in md
    assert "| `b` | z-scored | 50.0 / 3.00 | 80.0 / 1.00 | 3.00 |" in md
    assert "z-scored: τ = 1.00" in md and "raw: τ = -1.00, largest move 2.00 ranks" in md
