"""Extreme magnitudes in standardisation (item 7), file modes of atomically
written outputs (item 8) and the default target rebuilding deleted outputs (item 9)."""

from __future__ import annotations

import hashlib
import os
import re
import stat
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from tests.workflow_helpers import result_tables, run_snakemake, write_config
from ufs.datasets import mirror
from ufs.fileio import current_umask, write_json, write_npz, write_text
from ufs.preprocessing import standardize, unit_range
from ufs.validation import constant_feature_mask

RNG = np.random.default_rng(0)


def _data(n: int = 40, p: int = 6) -> np.ndarray:
    X = RNG.normal(size=(n, p)) * np.array([1.0, 1e3, 1e-3, 7.0, 0.1, 2.5])[:p]
    return X + np.array([0.0, 5e4, -3.0, 1e6, 0.25, -8.0])[:p]


# -- item 7: overflow -----------------------------------------------------------------
def test_pm_1e308_column_standardises_like_its_scaled_copy():
    v = RNG.uniform(-1.0, 1.0, size=50)
    X = np.c_[v * 1.7e308, v]
    X[0, 0], X[1, 0] = 1.7e308, -1.7e308
    Z = standardize(X).X
    assert np.isfinite(Z).all()
    np.testing.assert_allclose(Z[:, 0], standardize(X[:, :1] / 1e300).X[:, 0], atol=1e-12)
    np.testing.assert_allclose(unit_range(X)[:, 0], unit_range(X[:, :1] / 1e300)[:, 0], atol=1e-12)


@pytest.mark.parametrize("factor", [1e300, 1e-300])
def test_extremely_scaled_column_is_not_constant_and_standardises_alike(factor):
    X = _data()
    Y = X.copy()
    Y[:, 0] *= factor  # column 0 is centred: the product's rounding stays at 1e-16
    assert not constant_feature_mask(Y).any()
    st = standardize(Y)
    assert not st.constant.any()
    np.testing.assert_allclose(st.X, standardize(X).X, rtol=0, atol=1e-12)
    np.testing.assert_allclose(unit_range(Y), unit_range(X), rtol=0, atol=1e-12)
    np.testing.assert_allclose(st.scale[0], X[:, 0].std() * factor, rtol=1e-12)


def test_constant_extreme_columns_are_still_constant():
    X = _data()
    X[:, 1] = 1.7e308
    X[:, 4] = -1e-300
    st = standardize(X)
    assert st.constant.tolist() == [False, True, False, False, True, False]
    assert (st.X[:, [1, 4]] == 0).all() and np.isfinite(st.X).all()


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_non_finite_input_names_the_feature(bad):
    X = _data()
    X[7, 4] = bad
    for f in (standardize, unit_range):
        with pytest.raises(ValueError, match=re.escape("in feature 4 (row 7;")):
            f(X)


def _old_standardize(X: np.ndarray) -> np.ndarray:
    """The formulas before issue 13 (overflow-prone, exact on ordinary data)."""
    constant = np.ptp(X, axis=0) <= 1e-12 * np.abs(X).max(axis=0)
    scale = X.std(axis=0)
    scale[constant] = 1.0
    Z = (X - X.mean(axis=0)) / scale
    Z[:, constant] = 0.0
    return Z


def _old_unit_range(X: np.ndarray) -> np.ndarray:
    constant = np.ptp(X, axis=0) <= 1e-12 * np.abs(X).max(axis=0)
    lo = X.min(axis=0)
    span = X.max(axis=0) - lo
    span[constant] = 1.0
    U = (X - lo) / span
    U[:, constant] = 0.0
    return U


def test_ordinary_data_bitwise_as_the_old_formulas():
    """Scaling by powers of two is exact: ordinary data give the very same bits."""
    X = _data(n=200)
    X[:, 5] = 3.0  # a constant column: zeros, as before
    st = standardize(X)
    assert np.array_equal(st.X, _old_standardize(X))
    assert np.array_equal(st.mean, X.mean(axis=0))
    assert np.array_equal(st.scale[:5], X.std(axis=0)[:5]) and st.scale[5] == 1.0
    assert np.array_equal(unit_range(X), _old_unit_range(X))


# -- item 8: file modes -------------------------------------------------------------
@contextmanager
def _umask(mask: int):
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_atomic_outputs_honour_the_umask(tmp_path, mask, mode):
    with _umask(mask):
        assert current_umask() == mask
        assert current_umask() == mask  # reading it does not change it
        write_json(tmp_path / "a.json", {"x": 1})
        write_text(tmp_path / "b.md", "x\n")
        write_npz(tmp_path / "c.npz", x=np.zeros(2))
    for name in ("a.json", "b.md", "c.npz"):
        assert _mode(tmp_path / name) == mode, name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.md", "c.npz"]


def test_verified_download_honours_the_umask(tmp_path, monkeypatch):
    payload = b"some dataset bytes\n"

    def fake_download(url, dest, *, timeout=None):
        Path(dest).write_bytes(payload)
        return Path(dest)

    monkeypatch.setattr(mirror, "download", fake_download)
    final = tmp_path / "cache" / "d.mat"
    with _umask(0o022):
        mirror._download_verified(
            "https://example.org/d.mat", final, hashlib.sha256(payload).hexdigest()
        )
    assert final.read_bytes() == payload
    assert _mode(final) == 0o644
    assert [p.name for p in final.parent.iterdir()] == ["d.mat"]  # no temporary file left


# -- items 8 and 9 through the workflow -----------------------------------------------
@pytest.mark.slow
def test_workflow_outputs_are_readable_and_deleted_ones_come_back(tmp_path):
    """Under umask 027 every result file is 0640 (not mkstemp's 0600); after a complete
    run, a deleted evaluations JSON and a deleted table CSV are rebuilt by a plain re-run
    (the default target), equal to the originals."""
    cfg = write_config(
        tmp_path,
        {
            "output_dir": "results",
            "resources_dir": "resources",
            "evaluation": {"restarts": 2},
            "mlflow": {"enabled": False},
            "datasets": {"wine": {"h": [2]}},
            "methods": {"all_features": {}, "laplacian_score": {}},
        },
    )
    with _umask(0o027):
        run_snakemake(tmp_path, cfg)
    files = [p for d in ("results", "resources") for p in (tmp_path / d).rglob("*") if p.is_file()]
    assert files
    wrong = {str(p.relative_to(tmp_path)): oct(_mode(p)) for p in files if _mode(p) != 0o640}
    assert not wrong, wrong
    assert not [p for p in files if p.name.startswith(".")], "a temporary file remained"

    evaluation = tmp_path / "results" / "evaluations" / "wine" / "laplacian_score.c000.json"
    table = tmp_path / "results" / "tables" / "wine.csv"
    before = result_tables(tmp_path)
    evaluation.unlink()
    table.unlink()
    proc = run_snakemake(tmp_path, cfg)
    assert evaluation.exists() and table.exists(), proc.stdout[-3000:]
    after = result_tables(tmp_path)
    assert after.keys() == before.keys()
    for name in before:
        assert after[name].equals(before[name]), name
    proc = run_snakemake(tmp_path, cfg, "-n")
    assert "Nothing to be done" in proc.stdout + proc.stderr
