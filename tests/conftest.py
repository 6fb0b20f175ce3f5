"""Shared fixtures. Tests that need the public dataset mirror skip when it is absent."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATASETS = Path(os.environ.get("UFS_SHARED_DATASETS", REPO.parent / "shared" / "datasets"))

# The suite never reads nor fills the user's data cache, nor a mirror of the machine
# (ufs.datasets.locations): a test that wants one gives it. Set before any test (and every
# workflow the tests start inherits it).
os.environ.pop("UFS_MIRROR", None)
os.environ["UFS_DATA"] = tempfile.mkdtemp(prefix="ufs-test-data-cache-")


@pytest.fixture(autouse=True)
def _single_blas_thread():
    """One BLAS thread per test: small LAPACK calls are far slower when oversubscribed."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        yield


@pytest.fixture(autouse=True)
def _close_figures():
    """Close the figures a test left open: pyplot keeps them, and past 20 its warning (an
    error here, ``filterwarnings``) would fail whichever test comes next on that worker."""
    yield
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is not None:
        plt.close("all")


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture(scope="session")
def shared_datasets() -> Path:
    if not (SHARED_DATASETS / "MANIFEST.tsv").exists():
        pytest.skip(
            f"dataset mirror not found at {SHARED_DATASETS} "
            "(set UFS_SHARED_DATASETS to a copy of shared/datasets to run this test)"
        )
    return SHARED_DATASETS


def planted_clusters(n_per=40, n_clusters=4, n_signal=6, n_noise=44, sep=4.0, seed=0):
    """Gaussian blobs that differ only on the first ``n_signal`` features.

    Returns ``(X, y, signal)`` with the signal features shuffled among the noise.
    """
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(n_clusters), n_per)
    centers = rng.normal(scale=sep, size=(n_clusters, n_signal))
    signal_part = centers[y] + rng.normal(size=(y.size, n_signal))
    noise_part = rng.normal(size=(y.size, n_noise))
    X = np.hstack([signal_part, noise_part])
    perm = rng.permutation(X.shape[1])
    X = X[:, perm]
    signal = np.flatnonzero(perm < n_signal)
    return X, y, signal
