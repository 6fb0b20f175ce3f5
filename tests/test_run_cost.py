"""The tables a run prices itself with are what their generators make: the cost model
from the benchmark archive's fits, the download sizes from the mirror."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ufs.datasets.availability import SIZES_FILE, measure_download_sizes
from ufs.pipeline.run_cost import load_cost_model

from .conftest import REPO, SHARED_DATASETS
from .workflow_helpers import benchmark_script

ARCHIVE = REPO / "benchmarks" / "results" / "benchmark.tar.xz"


@pytest.mark.slow
def test_the_stored_cost_model_is_the_archives_fit():
    script = benchmark_script("reproduction_cost")
    model, factors = script.models_from_archives([ARCHIVE])
    stored, stored_factors, source = load_cost_model()
    assert "benchmark.tar.xz" in source
    # the archive's models, and timed models only of methods the archive has no fits of
    assert {m: stored.form[m] for m in model.form} == model.form
    timed = set(stored.coef) - set(model.coef)
    assert all(m in source for m in timed)
    for m in model.coef:
        np.testing.assert_allclose(stored.coef[m], model.coef[m], rtol=1e-9, err_msg=m)
    assert stored_factors == pytest.approx(factors)


@pytest.mark.skipif(
    not (SHARED_DATASETS / "MANIFEST.tsv").exists(), reason="the data set mirror is absent"
)
def test_the_download_sizes_are_the_mirrors():
    stored = json.loads(Path(SIZES_FILE).read_text())
    assert stored == measure_download_sizes(SHARED_DATASETS)
