"""Input spaces: one mapping (``ufs.preprocessing.input_matrix``) from an estimator's
``input_space`` to the matrix the workflow fits on and builds its cached graph on."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from ufs.graph import knn_graph
from ufs.methods import DGUFS
from ufs.pipeline import steps
from ufs.pipeline.config import ConfigError, build_plan
from ufs.preprocessing import INPUT_SPACES, input_matrix, standardize, unit_range


def skewed(rng, n=40, p=6):
    """Features with very different ranges and offsets (+ one constant feature)."""
    X = rng.normal(size=(n, p)) * np.array([1, 10, 0.1, 5, 100, 2.0]) + np.arange(p) * 7
    X[:, 3] = 4.0
    X[: n // 2, :2] += 3.0  # two clusters on the first two features
    return X


def test_unit_range(rng):
    X = skewed(rng)
    U = unit_range(X)
    informative = [0, 1, 2, 4, 5]
    np.testing.assert_allclose(U[:, informative].min(axis=0), 0.0, atol=0)
    np.testing.assert_allclose(U[:, informative].max(axis=0), 1.0, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(U[:, 3], 0.0)  # constant feature
    # affine per feature: the min-max of z-scores is the min-max of the raw data
    np.testing.assert_allclose(unit_range(standardize(X).X), U, rtol=0, atol=1e-14)
    # idempotent
    np.testing.assert_allclose(unit_range(U)[:, informative], U[:, informative], atol=1e-15)


def test_input_matrix_maps_every_space(rng):
    X = skewed(rng)
    Z = standardize(X).X
    assert set(INPUT_SPACES) == {"standardized", "raw", "unit_range"}
    assert input_matrix("raw", X, Z) is X
    assert input_matrix("standardized", X, Z) is Z
    np.testing.assert_array_equal(input_matrix("standardized", X), Z)
    np.testing.assert_array_equal(input_matrix("unit_range", X, Z), unit_range(X))
    with pytest.raises(ValueError, match="input_space must be one of"):
        input_matrix("minmax", X, Z)


def _data(tmp_path, rng):
    X = skewed(rng)
    y = np.repeat([0, 1], X.shape[0] // 2)
    path = tmp_path / "user.npz"
    np.savez(path, X=X, y=y)
    raw, data = tmp_path / "raw.npz", tmp_path / "data.npz"
    steps.download("userdata", "userdata", 0, raw, file={"file": str(path)})
    steps.standardize(raw, data, tmp_path / "summary.json")
    return path, data, X


def _config(path, methods):
    return {
        "output_dir": "results",
        "evaluation": {"restarts": 2},
        "mlflow": {"enabled": False},
        "datasets": {"userdata": {"file": str(path), "h": [2]}},
        "methods": methods,
    }


def test_graph_is_built_and_cached_per_input_space(tmp_path, rng):
    """DGUFS's graph (unit-range space by default) is keyed and built apart from the same
    kNN graph of the z-scores; the fit step hands DGUFS the unit-range matrix."""
    path, data, X = _data(tmp_path, rng)
    plan = build_plan(
        _config(
            path,
            {"dgufs": {"grid": {"input_space": ["unit_range", "standardized"]}}, "golfs": {}},
        )
    )
    by_space = {s.params.get("input_space", "unit_range"): s for s in plan.settings["dgufs"]}
    assert set(by_space) == {"unit_range", "standardized"}
    for space, s in by_space.items():
        assert s.graph == {"n_neighbors": 5, "weight": "binary", "input_space": space}
    assert by_space["unit_range"].graph_id != by_space["standardized"].graph_id
    assert all(s.graph["input_space"] == "raw" for s in plan.settings["golfs"])

    graphs = {}
    for space, s in by_space.items():
        out = tmp_path / f"{s.graph_id}.npz"
        steps.build_graph(data, s.graph, out)
        graphs[space] = (s.graph_id, out)
        expected = knn_graph(input_matrix(space, X), 5, weight="binary")
        assert (sp.load_npz(out) != expected).nnz == 0
    g_u, g_s = (sp.load_npz(graphs[k][1]) for k in ("unit_range", "standardized"))
    assert (g_u != g_s).nnz > 0  # the two spaces give different neighbourhoods here

    s = by_space["unit_range"]
    task = {"method": "dgufs", "pid": s.pid, "params": s.params, "hkey": "hs", "hs": [2]}
    steps.fit(
        data,
        [{**task, "graph_id": s.graph_id}],
        tmp_path / "fit.npz",
        tmp_path / "fit.json",
        graphs={s.graph_id: str(graphs["unit_range"][1])},
    )
    with np.load(tmp_path / "fit.npz") as f:
        got = f[f"dgufs|{s.pid}|h2|selected"]
    # DGUFS keeps the 2 smallest squared norms of the matrix it receives
    U = unit_range(X)
    sq = np.where(np.ptp(X, axis=0) > 0, (U**2).sum(axis=0), np.inf)
    assert set(got.tolist()) == set(np.argsort(sq)[:2].tolist())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant feature; the authors' variant's max_iter
        est = DGUFS(2, 2).fit(U, graph=g_u)
    np.testing.assert_array_equal(got, est.selected_features_)


def test_invalid_input_space_is_a_config_error(tmp_path, rng):
    path, _, _ = _data(tmp_path, rng)
    with pytest.raises(ConfigError, match="input_space must be one of"):
        build_plan(_config(path, {"dgufs": {"defaults": {"input_space": "minmax"}}}))
