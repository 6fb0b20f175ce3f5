"""The MLflow UI in a real browser: the runs-table link the workflow prints opens
the runs table with ACC and NMI as columns and the experiment's description, in headless
Chromium against ``mlflow server``. The screenshot is left in the test's directory."""

from __future__ import annotations

import json
import os
import shutil

import pytest

pytest.importorskip("mlflow")

from tests.browser_helpers import chromium, mlflow_ui, render  # noqa: E402
from ufs import tracking  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A store with one experiment and the runs of two settings at two h."""
    if chromium() is None:
        if os.environ.get("UFS_REQUIRE_BROWSER"):
            pytest.fail("UFS_REQUIRE_BROWSER is set but no chromium is on PATH")
        pytest.skip("no headless Chromium (Debian: apt-get install chromium)")
    root = tmp_path_factory.mktemp("ui")
    uri = tracking.default_tracking_uri(root)
    exp_id = tracking.init_experiment(
        uri, "ui", tracking.default_artifact_root(uri), root / "mlflow" / "experiment.json"
    )
    row = {
        "acc_mean": 0.8125,
        "acc_std": 0.01,
        "nmi_mean": 0.6875,
        "nmi_std": 0.02,
        "fit_seconds": 0.25,
        "fit_info": {},
        "fit_warnings": [],
        "fit_status": "ok",
        "per_restart": {"acc": [0.8, 0.825]},
        "selected": [0, 1],
    }
    ev = {
        "code_version": "c",
        "dataset": "wine",
        "dataset_base": "wine",
        "in_grid": True,
        "kind": "ranking",
        "label_free": True,
        "method": "laplacian_score",
        "nmi_average": "arithmetic",
        "params": {"n_neighbors": 5},
        "pid": "p1",
        "restarts": 2,
        "seed": 0,
        "results": [{**row, "h": h, "h_label": str(h)} for h in (2, 4)],
    }
    f = root / "c000.json"
    f.write_text(json.dumps({"dataset": "wine", "evaluations": [ev]}))
    tracking.log_evaluations(
        uri, "ui", [f], root / "r.json", dataset="wine", output_dir=root, data_sha256="d" * 64
    )
    return root, uri, exp_id


def test_runs_table_link_opens_on_acc_and_nmi(store, tmp_path):
    root, uri, exp_id = store
    with mlflow_ui(uri, tmp_path / "server") as base:
        png = tmp_path / "runs_table.png"
        dom = render(base + tracking.runs_table_path(exp_id), tmp_path / "chromium", png=png)
        plain = render(
            f"{base}/#/experiments/{exp_id}/runs?workflowType=machine_learning",
            tmp_path / "chromium-plain",
        )
    assert png.stat().st_size > 10_000
    assert "wine/laplacian_score/h=4/n_neighbors=5" in dom  # the runs table, with its runs
    assert "UFS-bench results" in dom  # the experiment's description
    for column in ("acc_mean", "nmi_mean", "protocol", "selected_by_label_tuning"):
        assert column in dom, column
    assert "0.8125" in dom  # the numbers themselves, not only the headers
    # without the link's shared view, MLflow 3.17 hides every metric column
    assert "wine/laplacian_score" in plain and "0.8125" not in plain
    if os.environ.get("UFS_SCREENSHOT_DIR"):  # keep it (benchmarks/mlflow_screenshots.py)
        shutil.copy(png, os.environ["UFS_SCREENSHOT_DIR"])
