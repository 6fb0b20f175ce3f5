"""scikit-learn conventions: every registered method passes
:func:`sklearn.utils.estimator_checks.parametrize_with_checks`, and DataFrame column names
round-trip (``feature_names_in_``, ``get_feature_names_out``, ``set_output``).

Each method is checked as a faithful configuration: its registry defaults and ``fixed``
parameters (:func:`ufs.registry.make_estimator`), ``n_features_to_select=1`` (sklearn's
check data has 1 to 5 features) and ``n_clusters=2``. sklearn's checks set
``n_clusters=1`` themselves where they fit one feature or one sample, which every method
accepts (``ufs.base``). The checks a method cannot meet are declared in
:data:`EXPECTED_FAILED_CHECKS` with the reason (sklearn's expected-failures mechanism;
strict, so a declared failure that starts passing is reported); the same list is in the
:class:`ufs.base.UFSSelector` docstring and ``docs/methods.md``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.utils.estimator_checks import (
    check_dataframe_column_names_consistency,
    check_global_output_transform_pandas,
    check_inplace_ensure_writeable,
    check_set_output_transform,
    check_set_output_transform_pandas,
    check_transformer_get_feature_names_out,
    check_transformer_get_feature_names_out_pandas,
    parametrize_with_checks,
)

from ufs.registry import available_methods, get_method, make_estimator

pd = pytest.importorskip("pandas")

METHODS = available_methods()

#: ``n_clusters`` other than 2. UDFS needs ``n_features > n_clusters`` (its ``W`` is
#: ``p × c`` with ``WᵀMW = I``) and most of sklearn's check data has 2 features; one
#: cluster is a valid UDFS configuration (``ufs.base``: ``c = 1``).
N_CLUSTERS = {"udfs": 1}

#: registry name -> {check name: reason}; at most 3 per method, each with a reason. Empty:
#: every method passes every check (keep ``ufs.base.UFSSelector`` and docs/methods.md in
#: step when adding one).
EXPECTED_FAILED_CHECKS: dict[str, dict[str, str]] = {}

#: the neural selectors' training budget, shortened: the contract checked here does not
#: depend on it, and 300-500 epochs per fit over sklearn's ~40 checks would take minutes
SHORT_TRAINING = {
    "cae": {"epochs": 3, "tryout_limit": 1},
    "ipcae": {"epochs": 3},
    "lscae": {"epochs": 3},
}


def _estimator(name: str):
    return make_estimator(
        name,
        {**get_method(name).defaults, **SHORT_TRAINING.get(name, {})},
        n_features_to_select=1,
        n_clusters=N_CLUSTERS.get(name, 2),
        random_state=0,
    )


ESTIMATORS = {name: _estimator(name) for name in METHODS}
_NAME_OF = {id(est): name for name, est in ESTIMATORS.items()}


def _expected_failed_checks(estimator) -> dict[str, str]:
    return EXPECTED_FAILED_CHECKS.get(_NAME_OF[id(estimator)], {})


def test_udfs_needs_more_features_than_clusters():
    # why UDFS is checked with n_clusters=1: sklearn's 2-feature data and c = 2
    X = np.random.default_rng(0).normal(size=(20, 2))
    with pytest.raises(ValueError, match="n_features"):
        make_estimator("udfs", n_features_to_select=1, n_clusters=2).fit(X)
    assert make_estimator("udfs", n_features_to_select=1, n_clusters=1).fit(X).support_.sum() == 1


def test_expected_failures_are_few_and_explained():
    assert set(EXPECTED_FAILED_CHECKS) <= set(METHODS)
    for name, checks in EXPECTED_FAILED_CHECKS.items():
        assert len(checks) <= 3, name
        assert all(isinstance(r, str) and len(r) > 20 for r in checks.values()), name


@parametrize_with_checks(
    list(ESTIMATORS.values()),
    expected_failed_checks=_expected_failed_checks,
    xfail_strict=True,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


# -- checks parametrize_with_checks does not yield (sklearn runs them on its own
#    estimators only): column names, get_feature_names_out, set_output, writeability
EXTRA_CHECKS = [
    check_dataframe_column_names_consistency,
    check_transformer_get_feature_names_out,
    check_transformer_get_feature_names_out_pandas,
    check_set_output_transform,
    check_set_output_transform_pandas,
    check_global_output_transform_pandas,
    check_inplace_ensure_writeable,
]


@pytest.mark.parametrize("check", EXTRA_CHECKS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", METHODS)
def test_sklearn_feature_name_checks(name, check):
    est = _estimator(name)
    check(type(est).__name__, est)


# -- DataFrame round trip -----------------------------------------------------------------
def _frame(seed: int = 0):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], 15)
    X = rng.normal(size=(30, 6))
    X[:, [1, 4]] += 3.0 * y[:, None]  # two informative columns
    columns = ["height", "mass", "colour", "speed", "age", "zone"]
    return pd.DataFrame(X, columns=columns, index=[f"s{i}" for i in range(30)])


def _roundtrip_estimator(name: str):
    return make_estimator(
        name, get_method(name).defaults, n_features_to_select=2, n_clusters=2, random_state=0
    )


@pytest.mark.parametrize("name", METHODS)
def test_dataframe_feature_names_roundtrip(name):
    df = _frame()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning of iterative methods
        est = _roundtrip_estimator(name).fit(df)
        on_array = _roundtrip_estimator(name).fit(df.to_numpy())

    np.testing.assert_array_equal(est.feature_names_in_, df.columns)
    assert est.feature_names_in_.dtype == object
    assert est.n_features_in_ == 6
    # same selection as on the bare array: the names are bookkeeping only
    np.testing.assert_array_equal(est.support_, on_array.support_)
    selected = df.columns[est.support_]  # the selector's column order
    assert list(selected) == [df.columns[j] for j in sorted(est.selected_features_)]
    np.testing.assert_array_equal(est.get_feature_names_out(), selected)
    assert est.get_feature_names_out().dtype == object

    out = est.set_output(transform="pandas").transform(df)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == list(selected)
    pd.testing.assert_frame_equal(out, df[selected])  # values, dtype and index kept

    # wrongly named or reordered columns: sklearn's ValueError; no names: sklearn's warning
    with pytest.raises(ValueError, match="feature names should match"):
        est.transform(df.rename(columns={"height": "width"}))
    with pytest.raises(ValueError, match="feature names should match"):
        est.transform(df[df.columns[::-1]])
    with pytest.warns(UserWarning, match="X does not have valid feature names"):
        est.set_output(transform="default").transform(df.to_numpy())

    # fitted on an ndarray: no feature_names_in_, sklearn's generated names out
    assert not hasattr(on_array, "feature_names_in_")
    np.testing.assert_array_equal(
        on_array.get_feature_names_out(), [f"x{j}" for j in np.flatnonzero(on_array.support_)]
    )
    with pytest.warns(UserWarning, match="X has feature names"):
        on_array.transform(df)


def test_dataframe_non_string_columns_have_no_names():
    df = _frame()
    df.columns = range(6)
    est = make_estimator("max_variance", n_features_to_select=2).fit(df)
    assert not hasattr(est, "feature_names_in_")
    assert est.n_features_in_ == 6


def test_refit_on_array_forgets_feature_names():
    df = _frame()
    est = make_estimator("laplacian_score", n_features_to_select=2).fit(df)
    assert hasattr(est, "feature_names_in_")
    est.fit(df.to_numpy())
    assert not hasattr(est, "feature_names_in_")


def test_dataframe_in_pipeline_keeps_names():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    df = _frame()
    pipe = make_pipeline(StandardScaler(), make_estimator("max_variance", n_features_to_select=2))
    pipe.set_output(transform="pandas")
    out = pipe.fit_transform(df)
    assert list(out.columns) == list(pipe.get_feature_names_out())
    assert set(out.columns) <= set(df.columns)
