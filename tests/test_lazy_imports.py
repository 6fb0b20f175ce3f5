"""Workflow jobs import only what they use (Python start-up per job).

Each check runs in a fresh interpreter, so modules imported by other tests do not mask
a regression.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "workflow" / "scripts"


def _loaded(code: str, modules: tuple[str, ...]) -> list[str]:
    """Run ``code`` in a fresh interpreter; return which of ``modules`` it imported."""
    probe = (
        f"import sys; sys.path.insert(0, {str(SCRIPTS)!r}); {code}; "
        f"print(' '.join(m for m in {modules!r} if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return out.stdout.split()


HEAVY = ("mlflow", "matplotlib", "snakemake")


@pytest.mark.parametrize(
    "code",
    [
        "import _job; from ufs.pipeline.steps import fit",  # fit_selector.py
        "import _job; from ufs.pipeline.steps import evaluate",  # evaluate_selection.py
        "import _job; from ufs.pipeline.steps import build_graph, standardize, download",
        "import ufs; from ufs.methods import *",  # the library itself
    ],
)
def test_fit_and_evaluate_jobs_do_not_import_mlflow_or_matplotlib(code):
    assert _loaded(code, HEAVY) == []


@pytest.mark.parametrize(
    "code",
    [
        "import _job; import ufs; from ufs.tracking import log_evaluations",  # track
        "import _job; from ufs.tracking import init_experiment",  # mlflow_init
        "import _job; from ufs.report.aggregate import write_dataset_outputs, write_summary",
    ],
)
def test_tracking_and_aggregation_jobs_import_neither_sklearn_nor_mlflow_up_front(code):
    # mlflow is imported inside the functions that log; scikit-learn is not needed at all
    assert _loaded(code, (*HEAVY, "sklearn")) == []


@pytest.mark.parametrize("script", ["download_dataset.py", "standardize_dataset.py"])
def test_data_jobs_import_no_scikit_learn(script):
    # download and standardize read, check and z-score arrays: NumPy and the readers only
    # (scikit-learn's import alone is ~0.7 s of CPU per job); the imports of the script
    # itself, up to the first use of the snakemake object
    src = (SCRIPTS / script).read_text()
    imports = src[: src.index("setup(snakemake)")]
    assert _loaded(f"exec({imports!r})", (*HEAVY, "sklearn", "pandas")) == []


def test_lazy_package_exports():
    code = (
        "import ufs; from ufs import KMeansUFS, make_estimator, UFSSelector; "
        "assert issubclass(KMeansUFS, UFSSelector); assert ufs.methods.KMeansUFS is KMeansUFS; "
        "assert 'evaluate_clustering' in dir(ufs); assert ufs.get_method('golfs'); "
        "assert not hasattr(ufs, 'no_such_name')"
    )
    assert _loaded(code, ("sklearn",)) == ["sklearn"]
