"""Methods defined on dense ``n × n`` matrices refuse up front, before allocating."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ufs.validation as validation
from ufs.methods import DGUFS, FSASL, GOLFS, SF2SOG
from ufs.methods import dgufs as dgufs_mod
from ufs.methods import fsasl as fsasl_mod
from ufs.methods import golfs as golfs_mod
from ufs.methods import sf2sog as sf2sog_mod
from ufs.validation import check_dense_memory, dense_memory_cap, max_dense_n

CAP = 10**6  # 1 MB: n = 400 is refused by every method, n = 80 fits


@pytest.fixture(autouse=True)
def _tiny_cap(monkeypatch):
    monkeypatch.delenv("UFS_MAX_DENSE_BYTES", raising=False)
    monkeypatch.setattr(validation, "DENSE_MEMORY_CAP", CAP)


def _forbid_nn(monkeypatch, n):
    """Fail the test if anything allocates an ``n × n`` array through np.zeros/np.empty."""
    for name in ("zeros", "empty", "eye"):
        real = getattr(np, name)

        def guard(*args, _real=real, _name=name, **kw):
            shape = args[0] if args else kw.get("shape", kw.get("N"))
            if shape == (n, n) or (_name == "eye" and shape == n):
                raise AssertionError(f"np.{_name}({shape}) allocated before the refusal")
            return _real(*args, **kw)

        monkeypatch.setattr(np, name, guard)


CASES = [
    ("GOLFS", lambda: GOLFS(2, 2, max_iter=2), lambda n, d: golfs_mod.dense_arrays(n, d)),
    ("DGUFS", lambda: DGUFS(2, 2, max_iter=2), lambda n, d: dgufs_mod.DENSE_ARRAYS),
    (
        "FSASL(lasso_solver='slep')",
        lambda: FSASL(2, 2, max_iter=1),
        lambda n, d: fsasl_mod.DENSE_ARRAYS,
    ),
    (
        "SF2SOG(graph_support='full')",
        lambda: SF2SOG(2, 2, graph_support="full", max_iter=1),
        lambda n, d: sf2sog_mod.FULL_SUPPORT_ARRAYS,
    ),
]


@pytest.mark.parametrize(("what", "make", "k"), CASES, ids=[c[0] for c in CASES])
def test_refuses_large_n_before_allocating(what, make, k, rng, monkeypatch):
    n, d = 400, 5
    X = rng.normal(size=(n, d))
    called = []
    # the graph (and the k-means start) would come first: refusal must precede them
    monkeypatch.setattr(type(make()), "_graph", lambda self, X: called.append(1), raising=False)
    _forbid_nn(monkeypatch, n)
    with pytest.raises(MemoryError) as err:
        make().fit(X)
    msg = str(err.value)
    kk = k(n, d)
    assert not called
    assert what in msg
    assert f"n = {n}" in msg
    assert f"{kk} dense n × n float64 arrays" in msg
    assert f"{8 * kk * n * n / 1024**3:.2f} GiB" in msg
    assert f"{CAP / 1024**3:.2f} GiB cap" in msg
    assert f"largest n that fits is {max_dense_n(kk, CAP)}" in msg
    assert "UFS_MAX_DENSE_BYTES" in msg


@pytest.mark.parametrize(("what", "make", "k"), CASES, ids=[c[0] for c in CASES])
def test_small_n_passes(what, make, k, rng):
    X = rng.normal(size=(80, 5))
    assert 8 * k(80, 5) * 80**2 <= CAP
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 2 iterations: convergence warnings expected
        make().fit(X)


def test_fsasl_lars_and_golfs_wide_counts(rng):
    FSASL(2, 2, max_iter=1, lasso_solver="lars").fit(rng.normal(size=(400, 5)))  # sparse: no cap
    assert golfs_mod.dense_arrays(100, 5) == 3  # factored stage 1 (d < n)
    assert golfs_mod.dense_arrays(100, 100) == 5  # n × n systems (d ≥ n)
    with pytest.raises(MemoryError, match="5 dense"):
        GOLFS(2, 2).fit(rng.normal(size=(170, 180)))  # 5 · 8 · 170² > 1 MB > 3 · 8 · 170²


def test_sf2sog_full_support_peak_is_within_its_count(rng, monkeypatch):
    """The array count of the refusal bounds the measured peak (tracemalloc)."""
    import tracemalloc

    SF2SOG(2, 2).fit(rng.normal(size=(400, 5)))  # the kNN support is not capped (1 MB cap)
    monkeypatch.setattr(validation, "DENSE_MEMORY_CAP", 10**9)
    n = 400
    X = rng.normal(size=(n, 30))
    tracemalloc.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            SF2SOG(10, 3, graph_support="full", max_iter=3).fit(X)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert 10 * 8 * n * n < peak <= sf2sog_mod.FULL_SUPPORT_ARRAYS * 8 * n * n


@pytest.mark.parametrize("k", [1, 3, 5, 8])
@pytest.mark.parametrize("cap", [8, 1000, 10**6, 8 * 1024**3, 8 * 1024**3 + 1, 123456789])
def test_largest_n_formula(k, cap):
    n_max = max_dense_n(k, cap)
    assert n_max**2 * k * 8 <= cap < (n_max + 1) ** 2 * k * 8
    check_dense_memory(k, n_max, "m", cap)  # fits
    with pytest.raises(MemoryError):
        check_dense_memory(k, n_max + 1, "m", cap)


def test_cap_default_and_env(monkeypatch):
    monkeypatch.setattr(validation, "DENSE_MEMORY_CAP", 8 * 1024**3)
    assert dense_memory_cap() == 8 * 1024**3
    assert max_dense_n(8, 8 * 1024**3) == 11585
    monkeypatch.setenv("UFS_MAX_DENSE_BYTES", "2e6")
    assert dense_memory_cap() == 2_000_000
    monkeypatch.setenv("UFS_MAX_DENSE_BYTES", "lots")
    with pytest.raises(ValueError, match="UFS_MAX_DENSE_BYTES"):
        dense_memory_cap()
    monkeypatch.setenv("UFS_MAX_DENSE_BYTES", "0")
    with pytest.raises(ValueError, match="> 0"):
        dense_memory_cap()
