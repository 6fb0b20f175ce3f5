"""Re-run triggers (items 2 and 3): a file dataset's spec and content, and the
code version of a method (every ``ufs`` module it imports, plus its registry entry)."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

import ufs.registry as registry
from tests.workflow_helpers import run_snakemake, write_config
from ufs.registry import available_methods, get_method, source_files, source_hash

KERNELS = ("_nonneg_spectral", "_optimal_graph", "_reweighted_eigen")


def _relative(files: list[Path]) -> set[str]:
    return {f.relative_to(registry._PKG).as_posix() for f in files}


# -- item 3: code triggers ------------------------------------------------------------
def test_source_files_of_ndfs_include_its_private_kernel():
    files = _relative(source_files("ndfs"))
    assert "methods/_nonneg_spectral.py" in files
    assert {"methods/ndfs.py", "base.py", "linalg.py", "validation.py"} <= files
    assert "methods/_optimal_graph.py" not in files  # only what it imports


def _kernels_by_text(module: str, seen: set[str] | None = None) -> set[str]:
    """Private kernels a method module imports, transitively through sibling modules,
    found by reading the import lines (an oracle independent of the AST walk)."""
    seen = set() if seen is None else seen
    text = (registry._PKG / "methods" / f"{module}.py").read_text()
    found = set()
    for sibling in re.findall(r"^\s*from \.(\w+) import", text, re.MULTILINE):
        if sibling in seen:
            continue
        seen.add(sibling)
        if sibling in KERNELS:
            found.add(sibling)
        found |= _kernels_by_text(sibling, seen)
    return found


def test_every_method_hashes_the_private_kernels_it_uses():
    used = set()
    for name in available_methods():
        module = get_method(name).cls.__module__.rsplit(".", 1)[1]
        kernels = _kernels_by_text(module)
        used |= kernels
        files = _relative(source_files(name))
        assert {f"methods/{k}.py" for k in kernels} <= files, name
        assert f"methods/{module}.py" in files, name
    assert used == set(KERNELS)  # each kernel is checked through some method
    assert "methods/_optimal_graph.py" in _relative(source_files("urafs"))
    assert "methods/_nonneg_spectral.py" in _relative(source_files("urafs"))


@pytest.mark.parametrize(
    "change",
    [
        {"fixed": {"solver": "exact"}},
        {"grid": {"n_neighbors": [3, 4]}},
        {"defaults": {"n_neighbors": 9}},
    ],
)
def test_registry_entry_is_part_of_the_code_version(monkeypatch, change):
    spec = get_method("laplacian_score")
    before = source_hash("laplacian_score")
    monkeypatch.setitem(registry._REGISTRY, spec.name, dataclasses.replace(spec, **change))
    assert source_hash("laplacian_score") != before
    monkeypatch.setitem(registry._REGISTRY, spec.name, dataclasses.replace(spec, reference="x"))
    assert source_hash("laplacian_score") == before  # the citation text is not code


def test_editing_an_imported_module_changes_the_hash(tmp_path, monkeypatch):
    """On a copy of the package: the same bytes give the same hash; one byte more in a
    private kernel changes the hash of its methods only; in linalg.py, of all."""
    copy = tmp_path / "ufs"
    shutil.copytree(registry._PKG, copy, ignore=shutil.ignore_patterns("__pycache__"))
    real = {m: source_hash(m) for m in ("ndfs", "eufs", "sogfs", "laplacian_score")}
    monkeypatch.setattr(registry, "_PKG", copy.resolve())
    assert all(str(f).startswith(str(copy.resolve())) for f in source_files("ndfs"))
    assert {m: source_hash(m) for m in real} == real
    with open(copy / "methods" / "_nonneg_spectral.py", "a") as fh:
        fh.write("# an edit\n")
    edited = {m: source_hash(m) for m in real}
    assert edited["ndfs"] != real["ndfs"] and edited["eufs"] != real["eufs"]
    assert edited["sogfs"] == real["sogfs"]
    assert edited["laplacian_score"] == real["laplacian_score"]
    with open(copy / "linalg.py", "a") as fh:
        fh.write("# an edit\n")
    assert all(source_hash(m) != edited[m] for m in real)


# -- item 2: file dataset triggers through the workflow ------------------------------
def _download_outputs(dry_run_output: str) -> set[str]:
    """The outputs of the download jobs a dry run would execute (a job is printed as its
    rule's message: ``read <dataset> from <file>``)."""
    names = re.findall(r"^Job \d+: read (\S+) from ", dry_run_output, flags=re.M)
    return {f"resources/raw/{name}.npz" for name in names}


def _dry_run(workdir: Path, config: dict) -> str:
    proc = run_snakemake(workdir, write_config(workdir, config), "-n")
    return proc.stdout + proc.stderr


def _write_csv(path: Path, X: np.ndarray, y: np.ndarray) -> None:
    lines = ["f0,f1,f2,f3,f4,label,grp"]
    for row, c in zip(X, y, strict=True):
        lines.append(",".join([repr(float(v)) for v in row] + [str(c), str(c % 2)]))
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.slow
def test_file_dataset_spec_and_content_changes_re_run_its_download(tmp_path):
    rng = np.random.default_rng(0)
    y = np.arange(30) % 3
    X = rng.normal(size=(30, 5)) + 2.0 * y[:, None]
    _write_csv(tmp_path / "t.csv", X, y)
    np.savez(tmp_path / "z.npz", X=X, y=y, y2=y % 2)
    config = {
        "output_dir": "results",
        "resources_dir": "resources",
        "evaluation": {"restarts": 2},
        "mlflow": {"enabled": False},
        "datasets": {
            "t": {"file": "t.csv", "label_column": "label", "h": [2]},
            "z": {"file": "z.npz", "h": [2]},
        },
        "methods": {"laplacian_score": {}},
    }
    run_snakemake(tmp_path, write_config(tmp_path, config))
    assert "Nothing to be done" in _dry_run(tmp_path, config)
    st = os.stat(tmp_path / "t.csv")
    os.utime(tmp_path / "t.csv", ns=(st.st_atime_ns, st.st_mtime_ns + 10**10))
    assert "Nothing to be done" in _dry_run(tmp_path, config)  # touched, same content

    digest = hashlib.sha256((tmp_path / "z.npz").read_bytes()).hexdigest()
    for dataset, change in [
        ("t", {"label_column": "grp"}),
        ("z", {"variables": ["X", "y2"]}),
        ("z", {"sha256": digest}),
    ]:
        changed = yaml.safe_load(yaml.safe_dump(config))
        changed["datasets"][dataset].update(change)
        out = _dry_run(tmp_path, changed)
        assert _download_outputs(out) == {f"resources/raw/{dataset}.npz"}, (change, out[-3000:])
        assert "Params have changed since last execution" in out

    raw = tmp_path / "resources" / "raw"
    z_mtime = (raw / "z.npz").stat().st_mtime_ns
    X2 = X[::-1].copy()
    old = (tmp_path / "t.csv").stat().st_mtime_ns
    _write_csv(tmp_path / "t.csv", X2, y)  # new content, mtime set back before the results
    os.utime(tmp_path / "t.csv", ns=(old - 10**11, old - 10**11))
    assert _download_outputs(_dry_run(tmp_path, config)) == {"resources/raw/t.npz"}
    run_snakemake(tmp_path, write_config(tmp_path, config))
    expected = np.c_[X2, y % 2]  # label_column: label, so column grp is a feature
    with np.load(raw / "t.npz") as f:
        np.testing.assert_array_equal(f["X"], expected)
    with np.load(tmp_path / "results" / "data" / "t.npz") as f:
        np.testing.assert_array_equal(f["X_raw"], expected)
    assert (raw / "z.npz").stat().st_mtime_ns == z_mtime  # the other dataset untouched
    assert "Nothing to be done" in _dry_run(tmp_path, config)


def test_step_code_keys_cover_what_the_steps_import(tmp_path, monkeypatch):
    """Issue 26 #6/#7: a rule's code key is the hash of its modules' import closure: an
    edit of the fit-status rule (pipeline/status.py, imported by pipeline/steps.py) changes the
    evaluation key; an edit of a method module changes neither the evaluation nor the data
    key (the fit jobs' own key covers it)."""
    from ufs.registry import closure_hash

    copy = tmp_path / "ufs"
    shutil.copytree(registry._PKG, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(registry, "_PKG", copy.resolve())
    keys = {
        "eval": ("evaluation.py", "metrics.py", "pipeline/steps.py"),
        "data": ("pipeline/data_steps.py",),
        "aggregate": ("report/aggregate.py",),
    }
    before = {k: closure_hash(*v) for k, v in keys.items()}
    with open(copy / "methods" / "mcfs.py", "a") as fh:
        fh.write("# an edit\n")
    assert {k: closure_hash(*v) for k, v in keys.items()} == before
    with open(copy / "pipeline" / "status.py", "a") as fh:
        fh.write("# an edit\n")
    after = {k: closure_hash(*v) for k, v in keys.items()}
    assert after["eval"] != before["eval"] and after["aggregate"] != before["aggregate"]
    with open(copy / "preprocessing.py", "a") as fh:
        fh.write("# an edit\n")
    assert closure_hash(*keys["data"]) != before["data"]


def test_every_computing_rule_carries_a_code_key():
    rules = Path(registry.__file__).resolve().parents[1] / "workflow" / "rules"
    text = "".join(
        (rules / f).read_text() for f in ("data.smk", "select.smk", "evaluate.smk", "aggregate.smk")
    )
    for rule in ("download", "download_file", "standardize", "graph", "fit", "evaluate"):
        body = text.split(f"rule {rule}:", 1)[1].split("\nrule ", 1)[0]
        assert "code=" in body, f"rule {rule} has no code key"
    for rule in ("aggregate_dataset", "figures_dataset", "summary"):
        body = text.split(f"rule {rule}:", 1)[1].split("\nrule ", 1)[0]
        assert "code=AGGREGATE_CODE" in body, f"rule {rule} has no code key"


def test_scheme_2_step_keys_ignore_comments_and_follow_code(tmp_path, monkeypatch):
    """The keys the workflow uses now (ufs.pipeline.lineage, scheme 2): the same closures as
    above, a comment changes none of them, a line of code in pipeline/status.py changes the
    evaluation and aggregation keys, one in a method module changes only that method's."""
    from ufs.pipeline.lineage import CodeVersions

    copy = tmp_path / "ufs"
    shutil.copytree(registry._PKG, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(registry, "_PKG", copy.resolve())

    def keys():
        c = CodeVersions(2)
        return {
            "eval": c.evaluate,
            "data": c.data,
            "aggregate": c.aggregate,
            "graph": c.graph,
            "mcfs": c.method("mcfs"),
            "ndfs": c.method("ndfs"),
        }

    before = keys()
    for f in ("pipeline/status.py", "methods/mcfs.py", "preprocessing.py"):
        with open(copy / f, "a") as fh:
            fh.write("# an edit\n")
    assert keys() == before
    with open(copy / "methods" / "mcfs.py", "a") as fh:
        fh.write("_EDIT = 1\n")
    after = keys()
    assert after["mcfs"] != before["mcfs"]
    assert {k: v for k, v in after.items() if k != "mcfs"} == {
        k: v for k, v in before.items() if k != "mcfs"
    }
    with open(copy / "pipeline" / "status.py", "a") as fh:
        fh.write("_EDIT = 1\n")
    again = keys()
    assert again["eval"] != after["eval"] and again["aggregate"] != after["aggregate"]
    assert again["data"] == after["data"] and again["graph"] == after["graph"]
    with open(copy / "preprocessing.py", "a") as fh:
        fh.write("_EDIT = 1\n")
    last = keys()
    assert last["data"] != again["data"] and last["graph"] != again["graph"]
