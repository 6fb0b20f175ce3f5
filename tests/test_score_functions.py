"""Our rankings as scikit-learn score functions (ufs.score_functions)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from sklearn.feature_selection import SelectKBest, SelectPercentile
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
from sklearn.svm import LinearSVC

import ufs.score_functions as sf
from tests.conftest import planted_clusters
from ufs.registry import _init_params, available_methods, get_method, make_estimator

K = 5
# methods whose fit needs the number of clusters get it fixed; the data have 4
RANKING = sf.available()


def _data():
    X, y, _ = planted_clusters(n_per=12, n_clusters=4, n_signal=5, n_noise=15, seed=1)
    return X, y


def test_every_ranking_method_has_one_and_no_other_method_does():
    ranking = {m for m in available_methods() if get_method(m).kind == "ranking"}
    assert set(RANKING) == ranking - {"random"} and len(RANKING) >= 10
    for m in sorted(set(available_methods()) - set(RANKING)):
        with pytest.raises(ValueError, match="no score function"):
            sf.make_score_function(m)
    with pytest.raises(AttributeError, match="did you mean 'laplacian_score'"):
        _ = sf.laplacian_scor


@pytest.mark.parametrize("name", RANKING)
def test_select_k_best_selects_the_estimators_first_k_features(name):
    """SelectKBest(score_func=sf.<name>, k) keeps exactly the estimator's first k features
    (same label-free defaults, same k = number of classes)."""
    X, y = _data()
    f = getattr(sf, name)
    picked = SelectKBest(score_func=f, k=K).fit(X, y).get_support(indices=True)
    needs_k = "n_clusters" in _init_params(get_method(name).cls)
    est = make_estimator(
        name, get_method(name).defaults, n_clusters=4 if needs_k else None, random_state=0
    ).fit(X)
    assert sorted(picked) == sorted(est.feature_order_[:K])
    scores = f(X, y)
    assert scores.shape == (X.shape[1],) and np.unique(scores).size == X.shape[1]
    assert np.argmax(scores) == est.feature_order_[0]  # higher is better


def test_select_percentile_and_fixed_parameters():
    X, y = _data()
    f = sf.make_score_function("udfs", n_clusters=4, n_neighbors=7)
    keep = SelectPercentile(score_func=f, percentile=25).fit(X).get_support(indices=True)
    params = {**get_method("udfs").defaults, "n_neighbors": 7}
    est = make_estimator("udfs", params, n_clusters=4, random_state=0).fit(X)
    assert sorted(keep) == sorted(est.feature_order_[: keep.size]) and keep.size == 5
    with pytest.raises(ValueError, match="has no parameter"):
        sf.make_score_function("udfs", neighbours=7)


def test_without_y_or_n_clusters_the_error_says_what_to_do():
    X, _ = _data()
    with pytest.raises(ValueError, match=r"make_score_function\('ndfs', n_clusters=c\)"):
        sf.ndfs(X)


def test_in_a_pipeline_under_grid_search_and_pickled():
    X, y = _data()
    pipe = Pipeline([("select", SelectKBest(score_func=sf.laplacian_score)), ("clf", LinearSVC())])
    search = GridSearchCV(pipe, {"select__k": [3, 6]}, cv=2).fit(X, y)
    assert search.best_params_["select__k"] in (3, 6)
    again = pickle.loads(pickle.dumps(sf.laplacian_score))
    np.testing.assert_array_equal(again(X), sf.laplacian_score(X))
    assert "laplacian_score" in dir(sf)
