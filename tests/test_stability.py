"""Nogueira, Sechidis & Brown's stability estimator (ufs.stability): hand-computed cases,
chance level, the interval's coverage on selections with a known stability, and the
seeded subsamples."""

from __future__ import annotations

import numpy as np
import pytest

from ufs.registry import make_estimator
from ufs.stability import selection_matrix, stability, subsample_selections


def test_identical_selections_are_perfectly_stable():
    Z = selection_matrix([[0, 3, 5]] * 6, d=10)
    s = stability(Z)
    assert s.phi == pytest.approx(1.0) and s.variance == pytest.approx(0.0, abs=1e-15)
    assert s.low == pytest.approx(1.0) and s.high == pytest.approx(1.0)


def test_a_hand_computed_case():
    """M = 3, d = 4: p̂ = (1, 2/3, 1/3, 0), k̄ = 2, mean p̂(1 − p̂) = 1/9, so
    Φ̂ = 1 − (3/2)(1/9)/(1/4) = 1/3; the φ_m and the variance by hand as well."""
    Z = np.array([[1, 1, 0, 0], [1, 0, 1, 0], [1, 1, 0, 0]])
    s = stability(Z)
    assert s.phi == pytest.approx(1 / 3)
    p, kbar, d, denom = np.array([1, 2 / 3, 1 / 3, 0]), 2.0, 4, 0.25
    phis = [
        ((z @ p) / d - 2 * kbar / d**2 + (1 / 6) * (2 * 2 * kbar / d**2 - 2 / d - kbar / d + 1))
        / denom
        for z in Z
    ]
    want = 4 / 9 * np.sum((np.array(phis) - np.mean(phis)) ** 2)
    assert s.variance == pytest.approx(want)
    # the mean over features is over all d, selected or not
    assert stability(np.hstack([Z, np.zeros((3, 4))])).phi != pytest.approx(s.phi)


def test_disjoint_selections_are_below_chance():
    Z = selection_matrix([[0, 1], [2, 3], [4, 5], [6, 7]], d=8)
    assert stability(Z).phi < 0


def test_random_selections_are_at_chance_level():
    rng = np.random.default_rng(0)
    phis = [
        stability(selection_matrix([rng.choice(50, 10, replace=False) for _ in range(10)], 50)).phi
        for _ in range(2000)
    ]
    assert abs(np.mean(phis)) < 0.01


def test_the_interval_covers_a_known_stability():
    """Each feature enters each selection independently with probability q_f: the
    population stability is 1 − mean_f q_f(1 − q_f) / [(K/d)(1 − K/d)], K = Σ q_f."""
    rng = np.random.default_rng(1)
    d, M = 30, 100
    q = np.r_[np.full(5, 0.9), np.full(5, 0.5), np.full(20, 0.05)]
    K = q.sum()
    truth = 1 - np.mean(q * (1 - q)) / ((K / d) * (1 - K / d))
    hits = 0
    reps = 1000
    for _ in range(reps):
        s = stability(rng.random((M, d)) < q)
        hits += s.low <= truth <= s.high
    assert 0.92 <= hits / reps <= 0.98, hits / reps


def test_the_interval_stops_at_one():
    Z = selection_matrix([[0, 1, 2]] * 9 + [[0, 1, 3]], d=8)
    s = stability(Z)
    assert s.phi < 1 and s.high == 1.0 and s.low < s.phi


def test_bad_input_is_one_clear_error():
    with pytest.raises(ValueError, match="at least 2 selections"):
        stability(np.ones((1, 4)))
    with pytest.raises(ValueError, match="binary"):
        stability(np.array([[0, 2], [1, 0]]))
    with pytest.raises(ValueError, match="undefined"):
        stability(np.ones((3, 4)))
    with pytest.raises(ValueError, match="repeats"):
        selection_matrix([[1, 1]], 4)
    with pytest.raises(ValueError, match="outside"):
        selection_matrix([[4]], 4)


def test_seeded_subsamples_are_reproducible_and_a_planted_selection_is_stable():
    from tests.conftest import planted_clusters

    X, _, signal = planted_clusters(seed=2)

    def select(Xs, draw):
        est = make_estimator("laplacian_score", n_features_to_select=len(signal))
        return est.fit(Xs).selected_features_

    a = subsample_selections(select, X, m=5, fraction=0.9, seed=3)
    b = subsample_selections(select, X, m=5, fraction=0.9, seed=3)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    s = stability(selection_matrix(a, X.shape[1]))
    assert s.phi > 0.9  # the planted features, every time
    with pytest.raises(ValueError, match="fraction"):
        subsample_selections(select, X, fraction=0)
