"""The library's entry points as a user calls them: ``make_estimator`` with keyword
parameters, a fractional ``n_features_to_select``, and the constant-features warning."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.pipeline import make_pipeline

from ufs import ConstantFeaturesWarning, make_estimator
from ufs.validation import check_n_features_to_select, fraction_to_count

# -- make_estimator(name, **params) ---------------------------------------------------------


def test_make_estimator_takes_parameters_as_keywords_a_dict_or_both():
    assert make_estimator("mcfs", n_neighbors=7).n_neighbors == 7
    assert make_estimator("mcfs", {"n_neighbors": 7}).n_neighbors == 7
    assert make_estimator("mcfs", params={"n_neighbors": 7}).n_neighbors == 7
    est = make_estimator("mcfs", {"n_neighbors": 7}, weight="binary", n_features_to_select=3)
    assert (est.n_neighbors, est.weight, est.n_features_to_select) == (7, "binary", 3)
    assert make_estimator("kmeans_ufs", input_space="raw").input_space == "raw"


def test_make_estimator_refuses_a_parameter_given_twice_naming_it():
    with pytest.raises(TypeError, match=r"\['n_neighbors'\] both in params and as keywords"):
        make_estimator("mcfs", {"n_neighbors": 5, "ridge": 1.0}, n_neighbors=5)


def test_make_estimator_keyword_parameters_are_checked_like_the_dict():
    with pytest.raises(ValueError, match=r"no parameter\(s\) \['n_neighbour'\]"):
        make_estimator("mcfs", n_neighbour=5)


# -- fractional n_features_to_select ---------------------------------------------------------


@pytest.mark.parametrize(
    "fraction, p, h",
    [
        (0.3, 10, 3),
        (0.3, 13, 3),  # 3.9: floored
        (0.5, 7, 3),
        (0.29, 100, 29),  # 28.999999999999996 in floating point
        (0.001, 50, 1),  # at least one feature
        (1.0, 64, 64),
        (np.float64(0.25), 1024, 256),
    ],
)
def test_a_fraction_gives_the_floor_of_its_share_of_the_features(fraction, p, h):
    assert fraction_to_count(fraction, p) == h
    assert check_n_features_to_select(fraction, p) == h


def test_a_fraction_counts_only_the_non_constant_features():
    assert check_n_features_to_select(0.5, 20, n_informative=10) == 5
    assert check_n_features_to_select(1.0, 20, n_informative=10) == 10


@pytest.mark.parametrize(
    "h, message",
    [
        (0.0, r"a float in \(0, 1\] \(a fraction of them\); got 0.0"),
        (-0.5, r"got -0.5"),
        (1.5, r"an integer \(a number of features\) or a float in \(0, 1\]"),
        (3.0, r"for 3 features pass the integer 3"),
        (float("nan"), r"got nan"),
        (0, r"must be >= 1; got 0"),
        (-2, r"must be >= 1; got -2"),
        (True, r"must be an integer or a fraction"),
        ("3", r"must be an integer or a fraction"),
    ],
)
def test_bad_numbers_of_features_are_refused_clearly(h, message):
    with pytest.raises(ValueError, match=message):
        check_n_features_to_select(h, 10)


def test_integers_are_unchanged():
    assert check_n_features_to_select(4, 10) == 4
    assert check_n_features_to_select(np.int64(10), 10) == 10
    with pytest.raises(ValueError, match="exceeds n_features=10"):
        check_n_features_to_select(11, 10)


def test_laplacian_score_fitted_with_a_fraction(rng):
    X = rng.normal(size=(40, 10))
    X[:, 7] = 2.0  # constant: 9 features the method sees
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConstantFeaturesWarning)
        est = make_estimator("laplacian_score", n_features_to_select=0.3).fit(X)
        exact = make_estimator("laplacian_score", n_features_to_select=2).fit(X)
    assert est.support_.sum() == 2  # floor(0.3 · 9)
    assert est.transform(X).shape == (40, 2)
    np.testing.assert_array_equal(est.selected_features_, exact.selected_features_)
    np.testing.assert_array_equal(est.select_prefix(0.5), est.feature_order_[:4])


# -- ConstantFeaturesWarning -----------------------------------------------------------------


def _with_constants(rng, names: bool = False):
    X = rng.normal(size=(30, 16))
    X[:, [1, 3]] = 5.0
    if names:
        return pd.DataFrame(X, columns=[f"g{i}" for i in range(16)])
    return X


def _fit_recording(fit) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit()
    return [w for w in caught if issubclass(w.category, ConstantFeaturesWarning)]


def test_one_warning_per_fit_naming_the_columns_at_the_callers_line(rng):
    df = _with_constants(rng, names=True)
    est = make_estimator("max_variance", n_features_to_select=2)
    caught = _fit_recording(lambda: est.fit(df))
    assert len(caught) == 1
    assert str(caught[0].message) == (
        "2 constant feature(s) excluded from selection (columns 'g1', 'g3')"
    )
    assert caught[0].filename == __file__
    assert len(_fit_recording(lambda: (est.fit(df), est.fit(df)))) == 2  # once per fit


def test_the_warning_names_indices_and_caps_the_list(rng):
    X = _with_constants(rng)
    caught = _fit_recording(lambda: make_estimator("max_variance", n_features_to_select=2).fit(X))
    assert "(indices 1, 3)" in str(caught[0].message)
    X[:, 2:14] = 1.0  # 13 constant features: 1, 2, ..., 13
    caught = _fit_recording(lambda: make_estimator("max_variance", n_features_to_select=2).fit(X))
    assert str(caught[0].message).endswith("(indices 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, … and 3 more)")


def test_the_warning_points_at_the_caller_through_scikit_learn(rng):
    """``fit_transform`` and a pipeline call ``fit`` from inside scikit-learn: the warning
    still points at this file, not at scikit-learn."""
    df = _with_constants(rng, names=True)
    est = make_estimator("laplacian_score", n_features_to_select=2)
    for fit in (
        lambda: est.fit_transform(df),
        lambda: est.set_output(transform="pandas").fit_transform(df),
        lambda: make_pipeline(make_estimator("max_variance", n_features_to_select=2)).fit(df),
    ):
        caught = _fit_recording(fit)
        assert len(caught) == 1 and caught[0].filename == __file__, caught
