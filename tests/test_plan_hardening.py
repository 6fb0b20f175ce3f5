"""Issue 13, "nothing silently wrong", for the plan: each case below is a clear error
before any job runs (or a correct result), in the library (:func:`build_plan`) and
through the real workflow (``snakemake -n`` in a temporary directory), and no output
directory is left behind by a refusal.

* planning is linear in the number of settings; a plan larger than ``LARGE_PLAN`` is
  warned about once, naming the config keys that make it large;
* dataset and method names outside ``[A-Za-z0-9_]`` are refused;
* a YAML "billion laughs" config fails in seconds, and schema messages stay short;
* a method that cannot fit a dataset's shape (UDFS with ``p <= k``, ...) is refused
  in the plan, by the rule its ``fit`` applies;
* ``output_dir`` / ``resources_dir`` may not be ``/``, the repository, the home
  directory or a parent of either.
"""

from __future__ import annotations

import copy
import re
import subprocess
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml

import ufs.pipeline.config as plan_config
from tests.workflow_helpers import REPO, TINY, env, run_snakemake, snakemake_cmd, write_config
from ufs.pipeline.config import (
    NAME_PATTERN,
    ConfigError,
    Plan,
    PlanSizeWarning,
    build_plan,
    check_config_size,
    schema_error_message,
)
from ufs.registry import make_estimator


def _grid_config(n_settings: int, tasks_per_job: int = 25) -> dict:
    """One small dataset and ``spcafs`` with ``n_settings - 1`` gamma values (plus the
    label-free default): ``n_settings`` settings, as benchmarks/plan_scaling.py."""
    gammas = [round(1e-3 * (i + 1), 6) for i in range(n_settings - 1)]
    return {
        "output_dir": "results",
        "jobs": {"tasks_per_job": tasks_per_job},
        "mlflow": {"enabled": False},
        "datasets": {"wine": {"h": [4]}},
        "methods": {"spcafs": {"grid": {"gamma": gammas}}},
    }


def _refused(tmp_path: Path, cfg: dict | str, *needles: str, timeout: float = 600):
    """Run ``snakemake -n``; it must fail naming every needle and create no output."""
    path = tmp_path / "config.yaml"
    path.write_text(cfg if isinstance(cfg, str) else yaml.safe_dump(cfg))
    t0 = time.perf_counter()
    proc = subprocess.run(
        snakemake_cmd(tmp_path, path, "-n"),
        capture_output=True,
        text=True,
        env=env(),
        timeout=timeout,
    )
    elapsed = time.perf_counter() - t0
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-3000:]
    for needle in needles:
        assert needle in out, f"{needle!r} not in:\n{out[-3000:]}"
    assert not (tmp_path / "results").exists()
    assert not (tmp_path / "resources").exists()
    return out, elapsed


# -- 6. planning is linear ----------------------------------------------------------------
def _plan_and_every_job(cfg: dict) -> tuple[Plan, float]:
    """Build the plan and do what the workflow's input functions do for every job
    (chunk tasks, setting lookups, chunk ids); return the plan and the seconds taken."""
    t0 = time.perf_counter()
    plan = build_plan(cfg)
    for d in plan.instances:
        for c in plan.chunks(d):
            for t in plan.chunks(d)[c]:
                assert plan.setting(t.method, t.pid).pid == t.pid
    return plan, time.perf_counter() - t0


def test_planning_is_linear(monkeypatch):
    calls = {"tasks": 0}
    tasks = Plan.tasks

    def counted(self, dataset):
        calls["tasks"] += 1
        return tasks(self, dataset)

    monkeypatch.setattr(Plan, "tasks", counted)
    # the task list is built once per dataset, not once per job
    plan, _ = _plan_and_every_job(_grid_config(2000))
    assert sum(len(plan.chunks(d)) for d in plan.instances) == 80
    assert calls["tasks"] == len(plan.instances) == 1
    # a generous absolute bound, not a timing ratio (the machine is shared): the quadratic
    # planner took 160 s for 10^4 settings; benchmarks/plan_scaling.py measures the scaling
    plan, large = _plan_and_every_job(_grid_config(20_000))
    assert len(plan.settings["spcafs"]) == 20_000
    assert calls["tasks"] == 2  # still once per dataset and plan
    assert large < 60, f"2·10^4 settings took {large:.1f} s to plan"


def test_chunk_ids_widen_past_999_jobs():
    plan = build_plan(_grid_config(1001, tasks_per_job=1))
    ids = list(plan.chunks("wine"))
    assert len(ids) == 1001 and ids[0] == "spcafs.c0000" and ids[-1] == "spcafs.c1000"
    assert ids == sorted(ids)  # ids sort as the chunks' order
    assert list(build_plan(_grid_config(30, tasks_per_job=1)).chunks("wine"))[-1] == "spcafs.c029"


def test_chunk_identity_is_stable_under_slices_and_added_methods():
    # a slice or an added method must leave every other method's chunks as
    # they are (numbered over the whole task list, a slice overwrote the full run's files)
    base = {
        "output_dir": "results",
        "jobs": {"tasks_per_job": 2},
        "mlflow": {"enabled": False},
        "datasets": {"wine": {"h": [4]}},
        "methods": {"laplacian_score": {}, "max_variance": {}, "spcafs": {}, "udfs": {}},
    }
    full = build_plan(base).chunks("wine")
    assert all(c.split(".")[0] == t.method for c, ts in full.items() for t in ts)
    sliced = build_plan({**base, "only_methods": ["spcafs"]}).chunks("wine")
    assert sliced and all(full[c] == ts for c, ts in sliced.items())
    more = build_plan({**base, "methods": {**base["methods"], "all_features": {}}})
    assert all(more.chunks("wine")[c] == ts for c, ts in full.items())


@pytest.mark.slow
def test_dry_run_beyond_999_jobs(tmp_path):
    # more than 1000 fit jobs: ids c0000 ... c1099 (the chunk wildcard once took 3 digits)
    path = write_config(tmp_path, _grid_config(1100, tasks_per_job=1))
    proc = run_snakemake(tmp_path, path, "-n")
    assert re.search(r"^fit\s+1100$", proc.stdout, re.M), proc.stdout[-2000:]
    assert re.search(r"^evaluate\s+1100$", proc.stdout, re.M)
    assert not (tmp_path / "results").exists()


@pytest.mark.slow
def test_dry_run_of_10k_settings_is_fast(tmp_path):
    # quadratic planning took 160 s and 1.4 GB here; linear planning takes ~15-30 s
    path = write_config(tmp_path, _grid_config(10_000))
    t0 = time.perf_counter()
    proc = run_snakemake(tmp_path, path, "-n")
    elapsed = time.perf_counter() - t0
    assert re.search(r"^fit\s+400$", proc.stdout, re.M), proc.stdout[-2000:]
    assert elapsed < 120, f"dry run of 10^4 settings took {elapsed:.0f} s"


def test_large_plan_is_warned_once_with_the_keys(monkeypatch):
    monkeypatch.setattr(plan_config, "LARGE_PLAN", 100)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plan = build_plan(_grid_config(201))
    sizes = [w for w in caught if issubclass(w.category, PlanSizeWarning)]
    assert len(sizes) == 1 and plan.warnings == [str(sizes[0].message)]
    msg = plan.warnings[0]
    assert "201 fit tasks in 9 jobs" in msg and "more than 100" in msg
    assert "methods.spcafs.grid gives 201 settings (gamma: 200)" in msg
    assert "1 dataset instance(s)" in msg
    # recorded but not issued for the workflow, which logs Plan.warnings itself
    with warnings.catch_warnings():
        warnings.simplefilter("error", PlanSizeWarning)
        assert build_plan(_grid_config(201), warn=False).warnings == plan.warnings
        assert build_plan(_grid_config(100)).warnings == []  # at the limit: silent


@pytest.mark.slow
def test_snakemake_warns_about_a_large_plan_once(tmp_path):
    # 400 x 250 grid points: 100,001 settings from 650 values in the config
    cfg = _grid_config(2)
    cfg["methods"]["spcafs"]["grid"] = {
        "gamma": [round(1e-3 * (i + 1), 6) for i in range(400)],
        "p": [round(0.004 * (i + 1), 4) for i in range(250)],
    }
    path = write_config(tmp_path, cfg)
    # plan only (one target): the DAG of 4001 jobs is not what is tested here
    proc = run_snakemake(tmp_path, path, "-n", "results/data/wine.npz")
    out = proc.stdout + proc.stderr
    assert out.count("the plan has 100,001 fit tasks in 4,001 jobs") == 1, out[-3000:]
    assert "methods.spcafs.grid gives 100,001 settings (gamma: 400 × p: 250)" in out


# -- 10. names ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["my-data", "../../x", "with space", "a.b", "é", "x" * 65])
def test_build_plan_refuses_dataset_names(tmp_path, name):
    csv = tmp_path / "d.csv"
    csv.write_text("".join(f"{i},{i % 3},{i * i % 7},{i % 2}\n" for i in range(20)))
    cfg = {"datasets": {name: {"file": str(csv), "h": [1]}}, "methods": {"random": {}}}
    with pytest.raises(ConfigError, match=re.escape(NAME_PATTERN)) as info:
        build_plan(cfg)
    assert str(info.value).startswith("config datasets.")
    assert "file names" in str(info.value)


def test_build_plan_refuses_method_names():
    cfg = copy.deepcopy(TINY)
    cfg["methods"]["random-2"] = {}
    with pytest.raises(ConfigError, match=r"config methods\.random-2: .*A-Za-z0-9_"):
        build_plan(cfg)
    cfg = copy.deepcopy(TINY)
    cfg["datasets"][3] = {"h": [2]}  # a YAML integer key
    with pytest.raises(ConfigError, match="config datasets.3: "):
        build_plan(cfg)


@pytest.mark.parametrize("name", ["my-data", "../../x"])
def test_snakemake_refuses_dataset_names(tmp_path, name):
    csv = tmp_path / "d.csv"
    csv.write_text("".join(f"{i},{i % 3},{i * i % 7},{i % 2}\n" for i in range(20)))
    cfg = {"datasets": {name: {"file": str(csv), "h": [1]}}, "methods": {"random": {}}}
    _refused(tmp_path, cfg, "config datasets:", repr(name), "A-Za-z0-9_", "file names")


def test_snakemake_refuses_method_names(tmp_path):
    cfg = copy.deepcopy(TINY)
    cfg["methods"]["random x"] = {}
    _refused(tmp_path, cfg, "config methods:", "'random x'", "A-Za-z0-9_")


# -- 11. YAML bombs and long messages --------------------------------------------------------
def _billion_laughs(levels: int = 10) -> str:
    """Ten aliases per level: ``levels`` levels are 10^levels values. The anchors sit in a
    schema-valid place (a method's defaults), the bomb in ``datasets.wine.h``."""
    text = "methods:\n  random:\n    defaults:\n      l0: &l0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n"
    for i in range(1, levels):
        text += f"      l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]\n"
    return text + f"datasets:\n  wine:\n    h: *l{levels - 1}\n"


def test_billion_laughs_is_refused_in_the_library():
    cfg = yaml.safe_load(_billion_laughs())
    t0 = time.perf_counter()
    with pytest.raises(ConfigError, match="billion laughs") as info:
        check_config_size(cfg)
    assert time.perf_counter() - t0 < 10
    assert str(info.value).startswith("config methods.random.defaults.l")
    with pytest.raises(ConfigError, match="billion laughs"):
        build_plan(cfg)
    selfref = yaml.safe_load("datasets:\n  wine:\n    h: &a [*a]\nmethods: {random: {}}\n")
    with pytest.raises(ConfigError, match=r"config datasets\.wine\.h\[0\]\[0\].*nested more"):
        check_config_size(selfref)
    check_config_size(_grid_config(100_000))  # a large legitimate grid passes


def test_snakemake_refuses_billion_laughs_in_seconds(tmp_path):
    out, elapsed = _refused(
        tmp_path, _billion_laughs(), "billion laughs", "config methods.random.defaults", timeout=300
    )
    assert elapsed < 60, f"took {elapsed:.0f} s"  # Snakemake starts in ~5 s; it once hung
    assert len(out) < 5000


def test_schema_message_is_short(tmp_path):
    cfg = copy.deepcopy(TINY)
    cfg["datasets"]["wine"]["h"] = [list(range(20_000))]
    out, _ = _refused(tmp_path, cfg, "config datasets.wine.h[0]: [0, 1, 2", "characters)")
    assert "schema rule type: 'integer'" in out
    assert len(out) < 5000  # the value alone prints as 128 kB


def test_schema_error_message_without_a_schema_error():
    assert schema_error_message(ValueError("x" * 5000)).endswith(" ...")
    assert len(schema_error_message(ValueError("x" * 5000))) < 1300


# -- 12. the method's shape rule, in the plan -------------------------------------------------
def _npz(tmp_path: Path, n: int, p: int, k: int) -> Path:
    rng = np.random.default_rng(0)
    y = np.arange(n) % k
    X = rng.normal(size=(n, p)) + y[:, None]
    path = tmp_path / f"blobs_{p}x{k}.npz"
    np.savez(path, X=X, y=y)
    return path


def _file_config(path: Path, methods: dict) -> dict:
    return {"datasets": {"blobs": {"file": str(path), "h": [2]}}, "methods": methods}


def test_fit_and_plan_apply_one_rule(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 5))
    for method, p_ok in (("udfs", 6), ("spcafs", 5), ("sogfs", 5), ("lrpfs_ma2024", 5)):
        est = make_estimator(method, {}, n_features_to_select=1, n_clusters=5, random_state=0)
        with pytest.raises(ValueError, match=f"needs at least {p_ok} non-constant features"):
            est.fit(X[:, : p_ok - 1])
        with pytest.raises(ConfigError, match=f"needs at least {p_ok} non-constant"):
            build_plan(_file_config(_npz(tmp_path, 60, p_ok - 1, 5), {method: {}}))
        build_plan(_file_config(_npz(tmp_path, 60, p_ok, 5), {method: {}}))  # p large enough
    # constant features do not count (fit) and parameters enter the rule
    Xc = np.hstack([X, np.ones((60, 1))])
    with pytest.raises(ValueError, match="UDFS.*needs at least 6 non-constant.*got n_features=5"):
        make_estimator("udfs", {}, n_features_to_select=1, n_clusters=5).fit(Xc)
    with pytest.raises(
        ConfigError, match=r"SPCAFS\(n_clusters=5, n_components=5\) needs at least 6"
    ):
        build_plan(
            _file_config(_npz(tmp_path, 60, 5, 5), {"spcafs": {"defaults": {"n_components": 5}}})
        )


def test_plan_checks_registered_datasets_with_the_grid():
    # wine: p = 13, k = 3; SOGFS's n_components is its embedding dimension (<= p)
    cfg = {
        "datasets": {"wine": {"h": [2]}},
        "methods": {"sogfs": {"grid": {"n_components": [3, 20]}}},
    }
    with pytest.raises(ConfigError) as info:
        build_plan(cfg)
    msg = str(info.value)
    assert re.match(r"config methods\.sogfs \(parameters \{.*'n_components': 20\}", msg)
    assert "from methods.sogfs.grid) on datasets.wine (p=13 features, k=3 classes)" in msg
    assert "needs at least 20 non-constant features; got n_features=13" in msg


def test_snakemake_refuses_udfs_when_p_le_k(tmp_path):
    path = _npz(tmp_path, 60, 5, 5)
    cfg = {**_file_config(path, {"udfs": {}, "random": {}}), "mlflow": {"enabled": False}}
    _refused(
        tmp_path,
        cfg,
        "config methods.udfs",
        "datasets.blobs (p=5 features, k=5 classes)",
        "UDFS(n_clusters=5) needs at least 6 non-constant features; got n_features=5",
    )


@pytest.mark.slow
def test_text_dataset_p_le_k_fails_in_the_fit_with_the_same_rule(tmp_path):
    # a text file's classes are not counted at plan time (the whole file would be
    # parsed); the fit job applies the same rule and writes nothing for its chunk
    rng = np.random.default_rng(0)
    y = np.arange(60) % 5
    X = rng.normal(size=(60, 4)) + y[:, None]
    csv = tmp_path / "blobs.csv"
    csv.write_text(
        "".join(",".join(map(str, [*row, lab])) + "\n" for row, lab in zip(X, y, strict=True))
    )
    cfg = {**_file_config(csv, {"udfs": {}}), "mlflow": {"enabled": False}}
    path = write_config(tmp_path, cfg)
    proc = run_snakemake(tmp_path, path, "--cores", "1", check=False)
    assert proc.returncode != 0
    assert "UDFS(n_clusters=5) needs at least 6 non-constant features; got n_features=4" in (
        proc.stdout + proc.stderr
    )
    assert not list((tmp_path / "results").glob("fits/*/*.npz"))
    assert not list((tmp_path / "results").glob("evaluations/*/*.json"))


# -- 14. output and resources directories ------------------------------------------------------
@pytest.mark.parametrize(
    "value, what",
    [
        ("/", "filesystem root"),
        (str(REPO), "is the repository"),
        (str(REPO.parent), "is a parent of the repository"),
        ("~", "is the home directory"),
        (str(Path.home().parent), "is a parent of the home directory"),
        ("", "non-empty path"),
        ("   ", "non-empty path"),
    ],
)
@pytest.mark.parametrize("key", ["output_dir", "resources_dir"])
def test_build_plan_refuses_dangerous_directories(key, value, what):
    if value == str(Path.home().parent) and Path.home().parent == Path("/"):
        pytest.skip("the home directory's parent is the filesystem root")
    cfg = {**copy.deepcopy(TINY), key: value}
    with pytest.raises(ConfigError, match=f"config {key}: ") as info:
        build_plan(cfg)
    assert what in str(info.value)


def test_build_plan_accepts_ordinary_directories(tmp_path):
    for value in ("results", str(tmp_path / "out"), str(REPO / "results"), "~/ufs-results"):
        build_plan({**copy.deepcopy(TINY), "output_dir": value})


@pytest.mark.parametrize(
    "value, what",
    [("/", "is the filesystem root"), (str(REPO), "is the repository"), ("~", "home directory")],
)
def test_snakemake_refuses_dangerous_output_dir(tmp_path, value, what):
    cfg = {**copy.deepcopy(TINY), "output_dir": value}
    before = sorted(p.name for p in Path("/").iterdir())
    _refused(tmp_path, cfg, f"config output_dir: {value!r}", what)
    assert sorted(p.name for p in Path("/").iterdir()) == before  # no /data, /logs, ...


def test_snakemake_refuses_empty_output_dir(tmp_path):
    cfg = {**copy.deepcopy(TINY), "output_dir": ""}
    _refused(tmp_path, cfg, "config output_dir: ''", "minLength")
