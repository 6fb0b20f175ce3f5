import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from ufs import ConstantFeaturesWarning, KMeansUFS, make_estimator
from ufs.registry import available_methods
from ufs.validation import check_data, check_labels


def _X(rng, n=30, p=8):
    return rng.normal(size=(n, p))


@pytest.mark.parametrize(
    "bad, message",
    [
        ("nan", "NaN"),
        ("inf", "inf"),
        ("one_sample", "at least 2"),
        ("strings", "numeric"),
        ("one_d", "2-D"),
        ("sparse", "sparse"),
    ],
)
def test_bad_data_raises_named_error(rng, bad, message):
    X = _X(rng)
    if bad == "nan":
        X[3, 2] = np.nan
    elif bad == "inf":
        X[1, 1] = np.inf
    elif bad == "one_sample":
        X = X[:1]
    elif bad == "strings":
        X = np.array([["a", "b"], ["c", "d"], ["e", "f"]], dtype=object)
    elif bad == "one_d":
        X = X[:, 0]
    elif bad == "sparse":
        X = sp.csr_matrix(X)
    with pytest.raises(ValueError, match=message):
        KMeansUFS(n_features_to_select=2, n_clusters=2).fit(X)


def test_nan_message_gives_position(rng):
    X = _X(rng)
    X[4, 6] = np.nan
    with pytest.raises(ValueError, match="sample 4, feature 6, both counted from 0"):
        check_data(X)


@pytest.mark.parametrize(
    "k, message", [(0, ">= 1"), (-3, ">= 1"), (31, "exceeds n_samples=30"), (None, "required")]
)
def test_bad_n_clusters(rng, k, message):
    with pytest.raises(ValueError, match=message):
        KMeansUFS(n_features_to_select=2, n_clusters=k).fit(_X(rng))


def test_one_cluster_selects_the_first_principal_component_loadings(rng):
    """n_clusters=1 (scikit-learn's checks set it) is a valid model: K-means UFS's A is
    sigma_1^2 p_1 p_1^T, so the exact selection is the h largest |loadings| of PC 1."""
    X = _X(rng, p=8)
    X[:, 3] *= 6.0  # a dominant direction
    X[:, 5] += 3.0 * X[:, 3]
    sel = KMeansUFS(n_features_to_select=2, n_clusters=1, solver="exact").fit(X)
    Xc = X - X.mean(axis=0)
    loadings = np.abs(np.linalg.svd(Xc, full_matrices=False)[2][0])
    assert set(sel.selected_features_) == set(np.argsort(-loadings)[:2])
    assert sel.n_iter_ == 1 and sel.converged_


@pytest.mark.parametrize("h, message", [(0, ">= 1"), (9, "exceeds n_features=8"), (2.5, "integer")])
def test_bad_n_features_to_select(rng, h, message):
    with pytest.raises(ValueError, match=message):
        KMeansUFS(n_features_to_select=h, n_clusters=2).fit(_X(rng))


@pytest.mark.parametrize("name", ["kmeans_ufs", "kmeans_ufs_exact", "random", "max_variance"])
def test_constant_features_are_never_selected_and_ranked_last(rng, name):
    X = _X(rng, p=10)
    X[:, [2, 7]] = 3.0
    est = make_estimator(name, n_features_to_select=8, n_clusters=3, random_state=0)
    with pytest.warns(ConstantFeaturesWarning, match="2 constant"):
        est.fit(X)
    assert not est.support_[[2, 7]].any()
    assert est.support_.sum() == 8
    np.testing.assert_array_equal(est.constant_features_, [2, 7])
    if est.kind == "ranking":
        np.testing.assert_array_equal(est.feature_order_[-2:], [2, 7])
        assert est.ranking_[2] == 9 and est.ranking_[7] == 10


def test_h_larger_than_informative_features_is_an_error(rng):
    X = _X(rng, p=5)
    X[:, 0] = 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConstantFeaturesWarning)
        with pytest.raises(ValueError, match="exceeds the 4 non-constant features"):
            KMeansUFS(n_features_to_select=5, n_clusters=2).fit(X)


def test_all_constant_is_an_error():
    with pytest.raises(ValueError, match="no non-constant feature"):
        KMeansUFS(n_features_to_select=1, n_clusters=2).fit(np.ones((5, 3)))


def test_labels_are_reencoded():
    np.testing.assert_array_equal(check_labels(["b", "a", "b", "c"]), [1, 0, 1, 2])
    np.testing.assert_array_equal(check_labels(np.array([[-1], [1], [1]])), [0, 1, 1])
    with pytest.raises(ValueError, match="3 entries but X has 4"):
        check_labels([1, 2, 3], 4)


@pytest.mark.parametrize("name", available_methods())
def test_every_method_is_clonable_and_validates(rng, name):
    est = make_estimator(name, n_features_to_select=3, n_clusters=2, random_state=0)
    est2 = clone(est)
    assert est2.get_params() == est.get_params()
    X = _X(rng)
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        est.fit(X)
