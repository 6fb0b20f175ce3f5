"""Methods from outside the package (ufs.plugins): the example plugin installed by
pip and found by its entry point, a config's import path, the adapters, a broken plugin's
error, the lineage of a plugin method, and a workflow run of a config-imported method."""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin

from tests.conftest import planted_clusters
from ufs import plugins
from ufs.registry import _REGISTRY, get_method, make_estimator

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "ufs-example-plugin"


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The example plugin, installed by pip into a folder of its own (``--target``: the
    test environment itself stays as it is)."""
    import shutil

    target = tmp_path_factory.mktemp("plugin")
    source = tmp_path_factory.mktemp("plugin_source") / EXAMPLE.name
    shutil.copytree(EXAMPLE, source)  # the build leaves build/ and *.egg-info beside it
    cmd = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target)]
    proc = subprocess.run([*cmd, str(source)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert list(target.glob("ufs_example_plugin-0.1.0.dist-info"))
    return target


@pytest.fixture()
def on_path(installed, monkeypatch):
    """The installed plugin importable, its entry points the only ones; the registry and
    the import cache restored afterwards."""
    get_method("mcfs")  # the built-in registry loaded first, with this environment's plugins
    monkeypatch.syspath_prepend(str(installed))
    eps = [
        ep
        for d in importlib.metadata.distributions(path=[str(installed)])
        for ep in d.entry_points
        if ep.group == plugins.ENTRY_POINT_GROUP
    ]
    monkeypatch.setattr(plugins, "_entry_points", lambda: eps)
    before = set(_REGISTRY)
    yield installed
    for name in set(_REGISTRY) - before:
        _REGISTRY.pop(name)
    for mod in [m for m in sys.modules if m.startswith("ufs_example_plugin")]:
        sys.modules.pop(mod)


def _python(code: str, pythonpath: Path, **env) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter with ``pythonpath`` first on its path."""
    environ = {**os.environ, "PYTHONPATH": f"{pythonpath}{os.pathsep}{REPO}", **env}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=environ, timeout=300
    )


def test_the_entry_point_is_found_at_import(installed):
    """A fresh interpreter with the plugin installed knows ``knn_residual`` as soon as the
    registry loads: no import of the plugin, no edit of this package."""
    proc = _python(
        "from ufs.registry import get_method, methods_with_role\n"
        "s = get_method('knn_residual')\n"
        "print(s.kind, s.role, s.defaults, 'knn_residual' in methods_with_role('method'))",
        installed,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["ranking", "method", "{'n_neighbors':", "5}", "True"]


def test_the_plugin_method_fits_as_any_other(on_path):
    assert plugins.load_entry_points() == ["knn_residual"]
    spec = get_method("knn_residual")
    assert "ufs-example-plugin 0.1.0" in spec.reference  # where it came from
    X, _, signal = planted_clusters(n_per=20, n_clusters=3, n_signal=4, n_noise=16, seed=2)
    est = make_estimator("knn_residual", spec.defaults, n_features_to_select=4).fit(X)
    assert set(est.get_support(indices=True)) == set(signal)  # the planted features first
    from ufs_example_plugin import knn_residual_scores

    np.testing.assert_allclose(est.scores_, knn_residual_scores(X, 5))


def test_a_plugin_lineage_is_its_code_and_its_package_version(on_path):
    from ufs.pipeline.lineage import method_code, method_entry

    plugins.load_entry_points()
    entry = method_entry("knn_residual")
    assert entry["distribution"] == {"package": "ufs-example-plugin", "version": "0.1.0"}
    assert "distribution" not in method_entry("laplacian_score")  # built-ins: unchanged
    assert len(method_code("knn_residual")) == 12


def test_a_broken_plugin_names_itself_its_package_and_the_cause(tmp_path):
    dist = tmp_path / "broken_plugin-2.3.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 2.3\n")
    (dist / "entry_points.txt").write_text("[ufs.methods]\nbad = broken_plugin_mod:registration\n")
    proc = _python("import ufs; ufs.make_estimator('mcfs')", tmp_path)
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("ufs.plugins.PluginError: method 'bad' (entry point ")
    assert "of broken-plugin 2.3) could not be loaded: ModuleNotFoundError" in last


def test_a_registration_that_is_no_method_says_what_qualifies(on_path):
    with pytest.raises(plugins.PluginError, match="is not a method: give a ufs.base.UFSSelector"):
        plugins._register("odd", {"cls": 42}, "test")
    with pytest.raises(plugins.PluginError, match="unknown registration key"):
        plugins._register("odd", {"cls": lambda X: X[0], "grids": {}}, "test")
    with pytest.raises(plugins.PluginError, match="already registered"):
        plugins._register("mcfs", {"cls": lambda X: X[0]}, "test")


class TopVariance(SelectorMixin, BaseEstimator):
    """A scikit-learn selector of its own (the adapter's test subject)."""

    def __init__(self, n_features_to_select=3, offset=0.0):
        self.n_features_to_select = n_features_to_select
        self.offset = offset

    def fit(self, X, y=None):
        self.mask_ = np.zeros(X.shape[1], dtype=bool)
        self.mask_[np.argsort(-X.var(axis=0))[: self.n_features_to_select]] = True
        return self

    def _get_support_mask(self):
        return self.mask_


def test_config_import_paths_and_the_adapters(on_path):
    names = plugins.register_config_methods(
        {
            "mine": {"class": "ufs_example_plugin:knn_residual_scores"},
            "sk": {"class": "tests.test_plugins:TopVariance", "grid": {"offset": [0.0, 1.0]}},
            "native": {"class": "ufs_example_plugin:KNNResidual", "role": "reference"},
            "builtin": {},  # no class: not this function's business
        }
    )
    assert names == ["mine", "native", "sk"]
    assert get_method("mine").kind == "ranking" and get_method("sk").kind == "subset"
    with pytest.raises(plugins.PluginError, match="variant_of"):
        plugins.register_config_methods(
            {"v": {"class": "ufs_example_plugin:KNNResidual", "role": "variant"}}
        )
    X = np.random.default_rng(0).normal(size=(30, 8)) * np.arange(1, 9)
    sk = make_estimator("sk", {"offset": 1.0}, n_features_to_select=3).fit(X)
    assert set(sk.get_support(indices=True)) == {5, 6, 7}  # the largest variances
    mine = make_estimator("mine", n_features_to_select=2).fit(X)
    assert mine.feature_order_.size == 8 and mine.get_support().sum() == 2
    with pytest.raises(plugins.PluginError, match="could not be imported"):
        plugins.register_config_methods({"gone": {"class": "no_such_module:Thing"}})


def test_the_schema_and_the_plan_take_a_class(on_path):
    from ufs.pipeline.config import ConfigError, build_plan

    base = {"datasets": {"wine": {"h": [2, 4, 6]}}}
    plan = build_plan({**base, "methods": {"mine": {"class": "ufs_example_plugin:KNNResidual"}}})
    assert {s.method for ss in plan.settings.values() for s in ss} == {"mine"}
    with pytest.raises(ConfigError, match=r"config method 'x' \(config methods.x.class"):
        build_plan({**base, "methods": {"x": {"class": "ufs_example_plugin:nothing_here"}}})


@pytest.mark.slow
def test_a_workflow_run_of_a_config_imported_method(installed, tmp_path, monkeypatch):
    """The workflow fits and evaluates a method given by import path in every job (the
    jobs learn it from the environment) and lists it in the tables."""
    from tests.workflow_helpers import TINY, run_snakemake, write_config

    config = {
        **TINY,
        "mlflow": {"enabled": False},
        "datasets": {"wine": {"h": [2, 4, 6]}},
        "methods": {
            "laplacian_score": {},
            "mine": {"class": "ufs_example_plugin:KNNResidual", "defaults": {"n_neighbors": 7}},
        },
    }
    cfg = write_config(tmp_path, config)
    monkeypatch.setenv("PYTHONPATH", f"{installed}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    run_snakemake(tmp_path, cfg)
    table = pd.read_csv(tmp_path / "results" / "tables" / "wine.csv")
    assert {"mine", "laplacian_score"} <= set(table["method"])
    ev = json.loads((tmp_path / "results" / "evaluations" / "wine" / "mine.c000.json").read_text())
    assert ev["evaluations"][0]["params"] == {"n_neighbors": 7}


# -- ufs compare: a plugin method placed in an archived benchmark --------------------------
SMALL = {
    "output_dir": "results",
    "resources_dir": "resources",
    "seed": 0,
    "protocols": ["label_free"],
    "evaluation": {"restarts": 3, "reference_draws": 4},
    "mlflow": {"enabled": False},
    "datasets": {
        "wine": {"h": [2, 4, 6]},
        "breast_cancer": {"h": [3, 6, 9]},
        "digits": {"h": [5, 10, 20]},
    },
    "methods": {
        "all_features": {},
        "random": {},
        "laplacian_score": {},
        "max_variance": {},
        "mcfs": {},
    },
}


@pytest.mark.slow
def test_compare_places_a_plugin_method_and_fits_nothing_else(
    installed, tmp_path, monkeypatch, capsys
):
    """``ufs compare --method knn_residual`` on a small archive: only the plugin's fit jobs
    run, every archived evaluation is left byte for byte, and the report's rank and paired
    test counts are those computed directly from the tables."""
    import re

    from ufs.cli import main
    from ufs.pipeline.archive import write_archive
    from ufs.report.answer import pairwise_results
    from ufs.report.benchmark_report import load_run
    from ufs.stats import ranking, views

    from .workflow_helpers import run_snakemake, write_config

    first = tmp_path / "first"
    first.mkdir()
    cfg = write_config(first, SMALL)
    run_snakemake(first, cfg)
    archive = tmp_path / "small.tar.xz"
    write_archive(first / "results", cfg, archive, note="a small benchmark")
    before = {
        p.relative_to(first / "results"): p.read_bytes()
        for p in (first / "results" / "evaluations").glob("*/*.json")
    }

    monkeypatch.setenv("PYTHONPATH", f"{installed}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    monkeypatch.chdir(tmp_path)
    results = tmp_path / "cmp"
    assert (
        main(
            [
                "compare",
                "--method",
                "knn_residual",
                "--archive",
                str(archive),
                "--results",
                str(results),
            ]
        )
        == 0
    )
    said = capsys.readouterr().out
    assert "fit jobs: 3 (knn_residual 3)" in said  # one per data set, nothing else
    for rel, data in before.items():
        assert (results / rel).read_bytes() == data, rel
    text = (tmp_path / "cmp.md").read_text()
    assert text.startswith("# `knn_residual` against the benchmark")
    assert "## Where `knn_residual` stands" in text and "## What the tests support" in text

    run = load_run(results, tmp_path / "cmp.config.yaml")
    results_ = ranking.rank_all(run.tables, view=views.PRIMARY)
    r = next(x for x in results_ if (x.protocol, x.metric) == ("label_free", "acc"))
    place = list(r.avg_rank.index).index("knn_residual") + 1
    line = re.search(
        r"\*\*label-free ACC\*\* \(N = (\d+) data sets, k = (\d+)\): average rank ([\d.]+), place (\d+) of",
        text,
    )
    assert line.groups() == (str(r.n), str(r.k), f"{r.avg_rank['knn_residual']:.2f}", str(place))
    pairs = pairwise_results(results_, families_of=views.PRIMARY)[("label_free", "acc")]
    mine = pairs[(pairs["a"] == "knn_residual") | (pairs["b"] == "knn_residual")]
    better = int((mine["ordered"] & (mine["a"] == "knn_residual")).sum())
    worse = int((mine["ordered"] & (mine["b"] == "knn_residual")).sum())
    part = text[line.end() :].split("**label-free NMI**")[0]
    counts = re.search(
        r"better than (\d+) .*?worse than (\d+) .*?no difference shown against (\d+)", part
    )
    assert counts.groups() == (str(better), str(worse), str(len(mine) - better - worse))
    assert len(re.findall(r"^\| `", part, flags=re.M)) == len(mine) == r.k - 1
