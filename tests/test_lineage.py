"""Lineage that follows the code, not its formatting: scheme-2 code versions
ignore docstrings, comments and formatting, key modules by name, and change with a real
line of code; the migration translates scheme-1 archives without re-fitting."""

from __future__ import annotations

import shutil
import textwrap

import pytest

from ufs.pipeline.archive import read_archive, restore_archive, write_archive
from ufs.pipeline.lineage import (
    PlanLineage,
    code_digest,
    method_code,
    module_name,
    modules_hash,
    normalized_source,
    plan_lineages,
)
from ufs.registry import _PKG, module_closure, source_files, source_hash

from .test_archive import RESUME

SOURCE = textwrap.dedent(
    '''
    """Module docstring."""
    import numpy as np


    def f(x, k=3):
        """Docstring of f."""
        # a comment
        y = np.sort(x)[:k]
        "a string statement that is not a docstring"
        return y


    class C:
        """Docstring of C."""

        def m(self):
            return 1
    '''
)


def test_docstrings_comments_and_formatting_do_not_count():
    edited = (
        SOURCE.replace("Docstring of f.", "Another docstring, two\n    lines.")
        .replace("# a comment", "# another comment\n    # and one more")
        .replace("y = np.sort(x)[:k]", "y = np.sort( x )[ : k ]   # trailing comment")
        .replace('"""Module docstring."""', "")
        .replace('        """Docstring of C."""\n', "")
    )
    assert normalized_source(edited) == normalized_source(SOURCE)
    # a body that was only a docstring stays a valid body
    assert normalized_source('def g():\n    """Only a docstring."""\n') == "def g():\n    pass"


@pytest.mark.parametrize(
    "change",
    [
        ("[:k]", "[:k + 1]"),  # a changed line
        ("k=3", "k=4"),  # a default
        ('"a string statement that is not a docstring"', '"another"'),  # not a docstring
        ("return 1", "return 2"),
    ],
)
def test_a_real_change_counts(change):
    assert normalized_source(SOURCE.replace(*change)) != normalized_source(SOURCE)


def test_modules_are_keyed_by_name_not_path(tmp_path):
    pkg = tmp_path / "ufs"
    (pkg / "methods" / "mine").mkdir(parents=True)
    (pkg / "methods" / "mine.py").write_text(SOURCE)
    (pkg / "methods" / "mine" / "__init__.py").write_text(SOURCE.replace("# a comment", ""))
    as_module = module_name(pkg / "methods" / "mine.py", root=pkg)
    as_package = module_name(pkg / "methods" / "mine" / "__init__.py", root=pkg)
    assert as_module == as_package == "ufs.methods.mine"
    assert modules_hash([pkg / "methods" / "mine.py"], root=pkg) == modules_hash(
        [pkg / "methods" / "mine" / "__init__.py"], root=pkg
    )
    # excluded by dotted prefix
    assert modules_hash([pkg / "methods" / "mine.py"], root=pkg, exclude=("ufs.methods.",)) == (
        modules_hash([], root=pkg)
    )


@pytest.fixture
def package_copy(tmp_path):
    """A copy of the ``ufs`` package and the copied closures of two methods."""
    root = tmp_path / "ufs"
    shutil.copytree(_PKG, root, ignore=shutil.ignore_patterns("__pycache__"))

    def closure(name):
        return [root / f.relative_to(_PKG) for f in source_files(name)]

    return root, closure


def _versions(root, closure):
    return {m: modules_hash(closure(m), root=root) for m in ("fsbc", "mcfs")}


def test_a_docstring_edit_to_fsbc_changes_no_code_version(package_copy):
    """The FSBC edit issue 40 names: a docstring and a comment change nothing."""
    root, closure = package_copy
    before = _versions(root, closure)
    fsbc = root / "methods" / "fsbc.py"
    text = fsbc.read_text()
    i = text.index('"""') + 3
    fsbc.write_text(text[:i] + "An edited sentence. " + text[i:] + "\n# a trailing comment\n")
    assert _versions(root, closure) == before


def test_a_solver_line_changes_that_methods_version_only(package_copy):
    root, closure = package_copy
    before = _versions(root, closure)
    fsbc = root / "methods" / "fsbc.py"
    fsbc.write_text(fsbc.read_text() + "\n_UNUSED_BUT_CODE = 1\n")
    after = _versions(root, closure)
    assert after["fsbc"] != before["fsbc"] and after["mcfs"] == before["mcfs"]
    # a shared kernel both import: both change
    linalg = root / "linalg.py"
    assert linalg in closure("fsbc") and linalg in closure("mcfs")
    linalg.write_text(linalg.read_text() + "\n_SHARED = 2\n")
    again = _versions(root, closure)
    assert again["fsbc"] != after["fsbc"] and again["mcfs"] != after["mcfs"]


def test_method_code_is_the_registry_entry_and_the_trees():
    assert method_code("fsbc") != method_code("fsbc_nobal")  # same files, other entry
    assert method_code("mcfs") == method_code("mcfs")
    assert len(method_code("mcfs")) == 12
    assert method_code("mcfs") != source_hash("mcfs")  # scheme 2 is not scheme 1
    assert code_digest(_PKG / "metrics.py") == code_digest(str(_PKG / "metrics.py"))


# -- the migration, on a real run ----------------------------------------------------------
RUN = {k: v for k, v in RESUME.items() if k not in ("oracle_datasets", "grid_max_settings")} | {
    "protocols": ["label_free"],
    "datasets": {"wine": {"h": [2, 4, 6]}},
    "methods": {"all_features": {}, "random": {}, "laplacian_score": {}, "mcfs": {}},
}


@pytest.mark.slow
def test_a_scheme_1_archive_is_migrated_without_refitting(tmp_path, capsys):
    """An archive whose evaluations record scheme-1 lineages (as every archive made before
    scheme 2): restored, its chunks are stale; migrated, a restore plans no fit, and an
    evaluation whose lineage matches neither scheme is still re-fitted."""
    from ufs.cli import main
    from ufs.fileio import read_json, write_json
    from ufs.pipeline.config import build_plan

    from .test_archive import _jobs
    from .workflow_helpers import run_snakemake, write_config

    first = tmp_path / "first"
    first.mkdir()
    cfg = write_config(first, RUN)
    run_snakemake(first, cfg)
    out = first / "results"
    old = PlanLineage(build_plan(RUN, warn=False), RUN, out, scheme=1)
    files = sorted((out / "evaluations").glob("*/*.json"))
    for path in files:
        doc = read_json(path)
        chunk = path.stem
        doc["lineage"] = old.chunk_lineage(path.parent.name, chunk)
        if chunk == "mcfs.c000":
            doc["lineage"] = "0" * 16  # neither scheme: stays stale
        write_json(path, doc)
    archive = tmp_path / "old.tar.xz"
    write_archive(out, cfg, archive, note="made under scheme 1")

    stale = tmp_path / "stale"
    stale.mkdir()
    restore_archive(archive, stale / "results")
    jobs = _jobs(run_snakemake(stale, write_config(stale, RUN), "-n").stdout)
    assert jobs.get("fit") == len(files), jobs

    assert main(["benchmark-migrate", str(archive), "--out", str(tmp_path / "new.tar.xz")]) == 0
    said = capsys.readouterr().out
    assert f"{len(files) - 1} evaluations migrated to lineage scheme 2" in said
    assert "1 stale" in said
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    restore_archive(tmp_path / "new.tar.xz", fresh / "results")
    jobs = _jobs(run_snakemake(fresh, write_config(fresh, RUN), "-n").stdout)
    assert jobs.get("fit") == 1 and jobs.get("evaluate") == 1, jobs  # mcfs only
    migrated = read_json(fresh / "results" / "evaluations" / "wine" / "random.c000.json")
    assert migrated["lineage_migrated_from"] != migrated["lineage"]
    # migrating again changes nothing and writes nothing
    assert main(["benchmark-migrate", str(tmp_path / "new.tar.xz")]) == 0
    assert "0 evaluations migrated" in capsys.readouterr().out


# -- the data code of one data set ---------------------------------------------------------
def test_a_new_catalog_entry_or_reader_changes_no_other_data_sets_code(package_copy, monkeypatch):
    """Loader must not re-fit the benchmark: the catalog and the modules only
    it imports are hashed per data set, through each entry's own loader."""
    import ufs.registry as reg
    from ufs.pipeline.lineage import dataset_code

    root, _ = package_copy
    real = {d: dataset_code(d) for d in ("wine", "ar", "golfs_sim1")}
    monkeypatch.setattr(reg, "_PKG", root.resolve())  # the shared part is read from the copy
    assert {d: dataset_code(d) for d in real} == real
    (root / "datasets" / "idx.py").write_text("def read_idx(path):\n    return path\n")
    with open(root / "datasets" / "catalog.py", "a") as fh:
        fh.write(
            "\nfrom .idx import read_idx\n\n\ndef _idx_loader(**kw):\n    return read_idx(kw)\n"
        )
    assert {d: dataset_code(d) for d in real} == real
    with open(root / "preprocessing.py", "a") as fh:  # shared code: every data set
        fh.write("\n_EDIT = 1\n")
    assert all(dataset_code(d) != real[d] for d in real)


def test_a_data_sets_entry_and_loader_are_its_own(monkeypatch, tmp_path):
    import dataclasses
    import importlib.util

    from ufs.datasets import registry as dreg
    from ufs.pipeline.lineage import _function_closure, dataset_code

    wine, ar = dataset_code("wine"), dataset_code("ar")
    spec = dreg.get_dataset("ar")
    monkeypatch.setitem(dreg._DATASETS, "ar", dataclasses.replace(spec, options={"x": 1}))
    assert dataset_code("ar") != ar and dataset_code("wine") == wine
    monkeypatch.setitem(dreg._DATASETS, "ar", dataclasses.replace(spec, notes="other text"))
    assert dataset_code("ar") == ar  # documentation is not code

    def probe(name, helper_body, doc):
        path = tmp_path / f"{name}.py"
        path.write_text(
            f'def helper(x):\n    """{doc}"""\n    {helper_body}\n\n\n'
            "def load(**kw):\n    return helper(kw)\n"
        )
        module_spec = importlib.util.spec_from_file_location(f"ufs._probe_{name}", path)
        mod = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(mod)
        out = {}
        _function_closure(mod.load, out)
        return sorted(v for k, v in out.items())

    base = probe("a", "return x", "One docstring.")
    assert probe("b", "return x", "Another docstring.") == base  # names differ, code same
    assert probe("c", "return [x]", "One docstring.") != base  # the helper's code counts


# -- the registrations leave the step closures; a declared refactor re-keys ----------------
def test_the_registrations_and_plugins_are_in_no_step_closure():
    """Registering a method (ufs/methods/__init__.py) or loading plugins (ufs/plugins.py)
    changes no step's code version: each method's entry is its own (issue 41; before,
    every evaluation's lineage changed with a new registration)."""
    from ufs.pipeline import lineage

    stop = {(_PKG / m).resolve() for m in (*lineage.ENTRY_MODULES, *lineage.REGISTRATION_MODULES)}
    for step in (("evaluation.py", "metrics.py", "pipeline/steps.py"), ("report/aggregate.py",)):
        files = module_closure(*(_PKG / r for r in step), stop=stop)
        names = {f.relative_to(_PKG).as_posix() for f in files}
        assert "pipeline/steps.py" in names or "report/aggregate.py" in names
        assert "methods/__init__.py" not in names and "plugins.py" not in names, step
        assert not any(n.startswith("methods/") for n in names), step


@pytest.mark.slow
def test_a_declared_refactor_is_re_keyed_without_refitting(tmp_path, capsys):
    """An archive made by code whose lineages differ from this code's (as before a
    declared refactor): restored, every chunk is stale; re-keyed with the lineages the old
    code computed (``--before``), a restore plans no fit and no stability job, except the
    evaluation and the stability record that were already stale under the old code."""
    import json

    from ufs.cli import main
    from ufs.fileio import read_json, write_json

    from .test_archive import _jobs
    from .workflow_helpers import benchmark_script, run_snakemake, write_config

    first = tmp_path / "first"
    first.mkdir()
    cfg = write_config(first, RUN)
    run_snakemake(first, cfg)
    out = first / "results"
    before = {}
    for path in sorted((out / "evaluations").glob("*/*.json")):
        doc = read_json(path)
        key = f"{path.parent.name}/{path.stem}"
        before[key] = doc["lineage"] = f"{len(before):016x}"  # the old code's lineage
        if path.stem == "mcfs.c000":
            doc["lineage"] = "f" * 16  # stale already then
        write_json(path, doc)
    records = sorted((out / "stability").glob("*/*.json"))
    assert {p.stem for p in records} == {"laplacian_score", "mcfs"}
    for path in records:  # the stability records, keyed the same way
        doc = read_json(path)
        key = f"stability/{path.parent.name}/{path.stem}"
        before[key] = doc["lineage"] = f"{len(before):016x}"
        if path.stem == "mcfs":
            doc["lineage"] = "e" * 16
        write_json(path, doc)
    archive = tmp_path / "old.tar.xz"
    write_archive(out, cfg, archive, note="made before the refactor")
    (tmp_path / "before.json").write_text(json.dumps(before))

    stale = tmp_path / "stale"
    stale.mkdir()
    restore_archive(archive, stale / "results")
    jobs = _jobs(run_snakemake(stale, write_config(stale, RUN), "-n").stdout)
    assert jobs.get("fit") == len(before) - 2 and jobs.get("stability") == 2, jobs

    new = tmp_path / "new.tar.xz"
    args = ["benchmark-migrate", str(archive), "--out", str(new), "--before"]
    assert main([*args, str(tmp_path / "before.json")]) == 0
    said = capsys.readouterr()
    assert f"{len(before) - 3} evaluations re-keyed across the declared refactor" in said.out
    assert "1 stale" in said.out
    assert "stability records: 1 translated, 0 already current, 1 stale" in said.out
    assert (
        "1 evaluations' and 1 stability records' recorded lineages are not the --before file's"
        in said.err
    )
    assert "--mirror-dir" in said.err
    note = read_archive(new)[0]["note"]
    assert note.endswith("1 left stale. Stability records re-keyed: 1 translated, 1 left stale.")
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    restore_archive(new, fresh / "results")
    jobs = _jobs(run_snakemake(fresh, write_config(fresh, RUN), "-n").stdout)
    assert jobs.get("fit") == 1 and jobs.get("evaluate") == 1, jobs  # mcfs only
    assert jobs.get("stability") == 1, jobs  # mcfs's, stale before
    now = plan_lineages(fresh / "results", RUN)
    # benchmarks/plan_lineages.py adds the stability jobs to a checkout's chunks-only list
    chunks = {k: v for k, v in now.items() if not k.startswith("stability/")}
    script = benchmark_script("plan_lineages")
    assert len(chunks) < len(now) and script.with_stability(chunks, fresh / "results", RUN) == now
    stability = read_json(fresh / "results" / "stability" / "wine" / "laplacian_score.json")
    assert now["stability/wine/laplacian_score"] == stability["lineage"]
    assert stability["lineage_migrated_from"] == before["stability/wine/laplacian_score"]
    assert (
        now["wine/random.c000"]
        == read_json(fresh / "results" / "evaluations" / "wine" / "random.c000.json")["lineage"]
    )


def test_rekey_note_keeps_one_tally_of_the_rekeys():
    """An archive re-keyed at every refactor recorded one sentence each (nine in the
    benchmark's provenance line); the note keeps the rest and one tally sentence."""
    from ufs.pipeline.lineage import rekey_note

    old = (
        "Made on 2 cores. Lineages migrated to scheme 2 (ufs.bench.lineage): 1248 "
        "evaluations translated, 0 left stale. Lineages re-keyed across a declared refactor "
        "(ufs.bench.lineage): 1248 evaluations translated, 0 left stale. Then a slice. "
        "Lineages re-keyed across a declared refactor (ufs.pipeline.lineage): 48 "
        "evaluations translated, 2 left stale."
    )
    once = rekey_note(old, 10, 1)
    assert once == (
        "Made on 2 cores. Lineages migrated to scheme 2 (ufs.bench.lineage): 1248 "
        "evaluations translated, 0 left stale. Then a slice. Lineages re-keyed across 3 "
        "declared refactors (ufs.pipeline.lineage) (evaluations translated each time: 1248, "
        "48, 10); 3 left stale."
    )
    assert rekey_note(once, 5, 0).endswith(
        "(evaluations translated each time: 1248, 48, 10, 5); 3 left stale."
    )
    assert rekey_note("", 7, 0) == (
        "Lineages re-keyed across 1 declared refactor (ufs.pipeline.lineage) "
        "(evaluations translated each time: 7); 0 left stale."
    )
    assert rekey_note(rekey_note("", 7, 0), 2, 0).startswith("Lineages re-keyed across 2 declared")
    # the stability records, summed over the re-keys in a sentence of their own
    both = rekey_note(rekey_note("Made.", 7, 0, 5, 1), 2, 0, 3, 0)
    assert both == (
        "Made. Lineages re-keyed across 2 declared refactors (ufs.pipeline.lineage) "
        "(evaluations translated each time: 7, 2); 0 left stale. Stability records "
        "re-keyed: 8 translated, 1 left stale."
    )
    assert "Stability" not in rekey_note("Made.", 7, 0)
