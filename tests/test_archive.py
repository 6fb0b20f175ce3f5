"""Results archives: ``ufs benchmark-archive`` / ``benchmark-restore`` /
``benchmark-report --archive`` on the synthetic results of ``test_benchmark_report``, and on
the repository's own archive (the committed ``docs/benchmark.md`` is regenerated from it
byte for byte)."""

from __future__ import annotations

import io
import json
import os
import tarfile
from pathlib import Path

import pytest

from ufs.cli import main
from ufs.pipeline.archive import (
    MANIFEST,
    ArchiveError,
    archive_members,
    describe_commits,
    read_archive,
    restore_archive,
    write_archive,
)
from ufs.report.benchmark_report import benchmark_report, benchmark_report_from_archive

from .test_benchmark_report import make_results

REPO = Path(__file__).resolve().parents[1]
REPO_ARCHIVE = REPO / "benchmarks" / "results" / "benchmark.tar.xz"


@pytest.fixture
def run(tmp_path):
    results, config, _ = make_results(tmp_path)
    archive = tmp_path / "arch" / "run.tar.xz"
    manifest = write_archive(results, config, archive, note="made by a test", commit="abc1234")
    return {
        "root": tmp_path,
        "results": results,
        "config": config,
        "archive": archive,
        "manifest": manifest,
    }


def test_manifest_lists_every_member_with_its_checksum(run):
    manifest, members = read_archive(run["archive"])
    assert manifest == run["manifest"]
    assert set(members) == set(archive_members(run["results"]))
    assert manifest["counts"]["evaluations"] == 3 and manifest["counts"]["datasets"] == 3
    assert manifest["config"]["text"] == run["config"].read_text()
    assert manifest["commit"] == "abc1234" and manifest["note"] == "made by a test"
    for name, data in members.items():
        assert data == (run["results"] / name).read_bytes()
    # tables and figures are rebuilt, not archived
    assert not any(m.startswith("tables/") for m in members)


def test_manifest_says_which_commits_computed_the_results(tmp_path, capsys):
    """``commit`` is the code that wrote the archive; ``computed_at`` counts the commits the
    evaluations record (a run continued across commits, or made in another checkout)."""
    results, config, _ = make_results(tmp_path)
    files = sorted((results / "evaluations").glob("*/*.json"))
    a, b = "a" * 40, "b" * 40 + "-dirty"
    for i, f in enumerate(files[:2]):
        doc = json.loads(f.read_text())
        for j, ev in enumerate(doc["evaluations"]):
            ev["git_commit"] = a if (i, j) != (1, 0) else b
        f.write_text(json.dumps(doc))
    n = [len(json.loads(f.read_text())["evaluations"]) for f in files]
    out = tmp_path / "a.tar.xz"
    assert main(["benchmark-archive", "--results", str(results), "--config", str(config),
                 "--out", str(out)]) == 0  # fmt: skip
    manifest, _ = read_archive(out)
    assert manifest["computed_at"] == {"": n[2], a: n[0] + n[1] - 1, b: 1}
    assert manifest["commit"] not in (a, b)
    said = capsys.readouterr().out
    assert f"results computed at {'a' * 12} ({n[0] + n[1] - 1} evaluations)" in said
    assert f"{'b' * 12}-dirty (1)" in said and f"unknown ({n[2]})" in said
    assert describe_commits({}) == "no evaluations"
    assert describe_commits({a: 1}) == f"{'a' * 12} (1 evaluation)"


def test_manifest_records_the_installed_versions(run, tmp_path):
    """What computed an archive: Python and the libraries, as installed; a note rewrite or
    a migration keeps the versions the archive was written with."""
    import platform

    import numpy
    import snakemake

    env = run["manifest"]["environment"]
    assert env["python"] == platform.python_version()
    assert env["numpy"] == numpy.__version__ and env["snakemake"] == snakemake.__version__
    assert set(env) >= {"ufs-bench", "scipy", "scikit-learn", "mlflow"}
    again = tmp_path / "again.tar.xz"
    write_archive(run["results"], run["config"], again, environment={"numpy": "1.0"})
    assert read_archive(again)[0]["environment"] == {"numpy": "1.0"}


def test_archive_bytes_depend_only_on_the_members(run):
    again = run["root"] / "again.tar.xz"
    for path in run["results"].rglob("*"):  # other time stamps, same content
        os.utime(path, (1e9, 1e9))
    write_archive(run["results"], run["config"], again, note="made by a test", commit="abc1234")
    assert again.read_bytes() == run["archive"].read_bytes()


def test_report_from_the_archive_alone_is_the_report_of_the_results(run, tmp_path):
    """The tables are rebuilt from the archived evaluations by the workflow's own code: the
    report equals the one written from the results folder (same source label and note)."""
    docs = tmp_path / "docs"
    from_archive = benchmark_report_from_archive(
        run["archive"], docs / "a.md", img_dir=docs / "img", plots=False
    )
    label = f"the archive `{run['archive'].as_posix()}`"
    how = "**How this run was made:** "
    note = next(ln for ln in from_archive.splitlines() if ln.startswith(how))[len(how) :]
    # the synthetic methods are not registered, so the archive's config has no plan here:
    # the evaluations are reported as archived, and the note says so
    assert "the config has no plan here" in note
    from_results = benchmark_report(
        run["results"],
        run["config"],
        docs / "b.md",
        img_dir=docs / "img",
        plots=False,
        note=note,
        source=label,
    )
    assert from_archive == from_results
    assert (docs / "a.md").read_bytes() == (docs / "b.md").read_bytes()
    assert "**How this run was made:** made by a test" in from_archive


def test_cli_report_from_archive_twice_is_byte_identical(run, tmp_path, capsys):
    outs = []
    for i in range(2):
        out = tmp_path / f"r{i}" / "benchmark.md"
        code = main(
            [
                "benchmark-report",
                "--archive",
                str(run["archive"]),
                "--out",
                str(out),
                "--img-dir",
                str(out.parent / "img"),
            ]
        )
        assert code == 0
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    assert "data sets with results 3 of the config's 4" in capsys.readouterr().out


def test_a_new_note_keeps_every_member_and_manifest_field(run, tmp_path, capsys):
    """``ufs benchmark-note --set-file`` replaces the note alone: the members and every
    other manifest field stay byte for byte, the report renders the new note, and an
    empty note is refused with the archive untouched."""
    before, blobs = read_archive(run["archive"])
    text = tmp_path / "note.txt"
    text.write_text("Made at abc1234 on a laptop,\n  one core.\n")
    assert main(["benchmark-note", str(run["archive"]), "--set-file", str(text)]) == 0
    after, blobs_after = read_archive(run["archive"])
    assert blobs_after == blobs
    assert after == {**before, "note": "Made at abc1234 on a laptop, one core."}
    capsys.readouterr()
    assert main(["benchmark-note", str(run["archive"])]) == 0
    assert capsys.readouterr().out == "Made at abc1234 on a laptop, one core.\n"
    report = benchmark_report_from_archive(
        run["archive"], tmp_path / "r.md", img_dir=tmp_path / "img", plots=False
    )
    assert "**How this run was made:** Made at abc1234 on a laptop, one core." in report
    saved = run["archive"].read_bytes()
    text.write_text("  \n")
    assert main(["benchmark-note", str(run["archive"]), "--set-file", str(text)]) == 2
    assert "cannot be empty" in capsys.readouterr().err
    assert run["archive"].read_bytes() == saved


def test_restore_writes_members_and_refuses_to_replace_different_files(run, tmp_path):
    target = tmp_path / "fresh" / "results"
    counts = restore_archive(run["archive"], target)
    assert counts == {
        "written": len(archive_members(run["results"])),
        "unchanged": 0,
        "replaced": 0,
    }
    for name in archive_members(run["results"]):
        assert (target / name).read_bytes() == (run["results"] / name).read_bytes()
    assert restore_archive(run["archive"], target)["unchanged"] == counts["written"]
    changed = target / "data" / "d1.json"
    changed.write_text(json.dumps({"n_samples": 1}))
    with pytest.raises(ArchiveError, match="differ from the archive"):
        restore_archive(run["archive"], target)
    assert json.loads(changed.read_text()) == {"n_samples": 1}  # nothing replaced
    assert restore_archive(run["archive"], target, force=True)["replaced"] == 1
    assert changed.read_bytes() == (run["results"] / "data" / "d1.json").read_bytes()


def _rewrite(archive: Path, out: Path, edit) -> None:
    """Copy ``archive`` to ``out`` with ``edit(name, data) -> (name, data) | None``."""
    with tarfile.open(archive, "r:xz") as src, tarfile.open(out, "w:xz") as dst:
        for info in src:
            res = edit(info.name, src.extractfile(info).read())
            if res is None:
                continue
            name, data = res
            new = tarfile.TarInfo(name)
            new.size = len(data)
            dst.addfile(new, io.BytesIO(data))


def test_a_damaged_member_is_refused(run, tmp_path):
    bad = tmp_path / "bad.tar.xz"
    _rewrite(
        run["archive"],
        bad,
        lambda n, d: (n, d.replace(b"0.", b"1.", 1)) if n.startswith("evaluations/") else (n, d),
    )
    with pytest.raises(ArchiveError, match="fail their sha256"):
        read_archive(bad)
    with pytest.raises(ArchiveError, match="fail their sha256"):
        restore_archive(bad, tmp_path / "out")
    assert not (tmp_path / "out").exists()  # nothing written from a damaged archive


@pytest.mark.parametrize("name", ["../escape.json", "/abs/escape.json"])
def test_paths_outside_the_folder_are_refused(run, tmp_path, name):
    bad = tmp_path / "evil.tar.xz"
    _rewrite(run["archive"], bad, lambda n, d: (name, d) if n == "data/d1.json" else (n, d))
    with pytest.raises(ArchiveError, match="not a plain relative file"):
        read_archive(bad)


def test_unlisted_or_missing_members_and_other_files_are_refused(run, tmp_path):
    extra = tmp_path / "extra.tar.xz"
    _rewrite(
        run["archive"],
        extra,
        lambda n, d: ("data/extra.json", d) if n == "data/d1.json" else (n, d),
    )
    with pytest.raises(ArchiveError, match="not in the manifest"):
        read_archive(extra)
    nomanifest = tmp_path / "nomanifest.tar.xz"
    _rewrite(run["archive"], nomanifest, lambda n, d: None if n == MANIFEST else (n, d))
    with pytest.raises(ArchiveError, match="no MANIFEST.json"):
        read_archive(nomanifest)
    plain = tmp_path / "plain.tar.xz"
    plain.write_bytes(b"not an archive")
    with pytest.raises(ArchiveError, match="not a readable"):
        read_archive(plain)
    assert main(["benchmark-restore", str(plain), "--results", str(tmp_path / "r")]) == 2


def test_an_archive_needs_evaluations(tmp_path):
    (tmp_path / "results").mkdir()
    cfg = tmp_path / "c.yaml"
    cfg.write_text("datasets: {}\n")
    with pytest.raises(ArchiveError, match="no evaluations"):
        write_archive(tmp_path / "results", cfg, tmp_path / "a.tar.xz")
    assert not (tmp_path / "a.tar.xz").exists()


# -- a fresh machine: restore, resume, regenerate (the real workflow) -----------------------

RESUME = {
    "output_dir": "results",
    "resources_dir": "resources",
    "seed": 0,
    "evaluation": {"restarts": 3, "reference_draws": 3},
    "jobs": {"tasks_per_job": 3},
    "mlflow": {"enabled": False},
    "protocols": ["label_free", "oracle"],
    "oracle_datasets": ["wine"],
    "grid_max_settings": 2,
    "datasets": {"wine": {"h": [2, 4, 6]}, "breast_cancer": {"h": [3, 6, 9]}},
    "methods": {
        "all_features": {},
        "random": {},
        "laplacian_score": {"grid": {"n_neighbors": [3, 5, 7]}},
        "mcfs": {},
    },
}


def _jobs(dry_run_stdout: str) -> dict[str, int]:
    """Job counts of a dry run's "Job stats" table."""
    block = dry_run_stdout.split("Job stats:", 1)[1].split("\n\n", 1)[0]
    out = {}
    for line in block.splitlines()[3:]:
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            out[parts[0]] = int(parts[1])
    return out


@pytest.mark.slow
def test_a_fresh_machine_restores_resumes_and_regenerates(tmp_path):
    """Run, archive, restore into a new project folder (no fits, data, graphs, logs or
    Snakemake metadata): the dry run plans no fit, graph, evaluate or stability job; the run
    rebuilds the same tables; a changed budget that changes no fit re-runs nothing, and a
    new method is the only thing fitted."""
    from .workflow_helpers import result_tables, run_snakemake, write_config

    first = tmp_path / "first"
    first.mkdir()
    cfg = write_config(first, RESUME)
    run_snakemake(first, cfg)
    archive = tmp_path / "run.tar.xz"
    write_archive(first / "results", cfg, archive)

    fresh = tmp_path / "fresh"
    fresh.mkdir()
    cfg2 = write_config(fresh, RESUME)
    restore_archive(archive, fresh / "results")
    dry = run_snakemake(fresh, cfg2, "-n").stdout
    jobs = _jobs(dry)
    assert list((fresh / "results" / "stability").glob("*/*.json"))  # archived, restored
    assert not {"fit", "graph", "evaluate", "stability"} & set(jobs), jobs
    run_snakemake(fresh, cfg2)
    assert not list((fresh / "results").glob("fits/*/*"))  # nothing was fitted
    a, b = result_tables(first), result_tables(fresh)
    assert a.keys() == b.keys() and a
    for name in a:
        assert a[name].equals(b[name]), name
    assert "Nothing to be done" in run_snakemake(fresh, cfg2, "-n").stdout

    # every fit finished far below 600 s: a budget of 300 s changes none of them
    lower = write_config(fresh, {**RESUME, "jobs": {"tasks_per_job": 3, "fit_budget_seconds": 300}})
    assert "Nothing to be done" in run_snakemake(fresh, lower, "-n").stdout
    # a new method: its jobs only
    more = {**RESUME, "methods": {**RESUME["methods"], "max_variance": {}}}
    jobs = _jobs(run_snakemake(fresh, write_config(fresh, more), "-n").stdout)
    assert jobs.get("fit") == 2 and jobs.get("evaluate") == 2, jobs  # one chunk per data set


@pytest.mark.slow
def test_a_restored_evaluation_whose_lineage_changed_is_refitted(tmp_path):
    """After a restore, a chunk whose method (data, budget, setting) changed is
    re-fitted and re-evaluated, and nothing else; so is a stability record. A changed
    solver changes the plan's lineage of its chunks; here the recorded lineage of one
    restored evaluation (and of one stability record) is changed instead (the same
    mismatch, without editing the package). Before the stale marker, Snakemake kept the
    restored file: its fit files are missing but producible, which does not re-run an
    existing output, and a restored file has no metadata."""
    from ufs.fileio import read_json, write_json

    from .workflow_helpers import run_snakemake, write_config

    cfg_run = {**RESUME, "datasets": {"wine": {"h": [2, 4, 6]}}, "protocols": ["label_free"]}
    first = tmp_path / "first"
    first.mkdir()
    run_snakemake(first, write_config(first, cfg_run))
    archive = tmp_path / "run.tar.xz"
    write_archive(first / "results", write_config(first, cfg_run), archive)
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    cfg = write_config(fresh, cfg_run)
    restore_archive(archive, fresh / "results")
    assert not {"fit", "evaluate"} & set(_jobs(run_snakemake(fresh, cfg, "-n").stdout))
    path = fresh / "results" / "evaluations" / "wine" / "mcfs.c000.json"
    doc = read_json(path)
    write_json(path, {**doc, "lineage": "0" * 16})
    stab = fresh / "results" / "stability" / "wine" / "laplacian_score.json"
    write_json(stab, {**read_json(stab), "lineage": "0" * 16})
    jobs = _jobs(run_snakemake(fresh, cfg, "-n").stdout)
    assert jobs.get("fit") == 1 and jobs.get("evaluate") == 1, jobs
    assert jobs.get("stability") == 1, jobs
    run_snakemake(fresh, cfg)
    assert read_json(path)["lineage"] != "0" * 16  # evaluated again, at the plan's lineage
    assert read_json(stab)["lineage"] != "0" * 16
    after = run_snakemake(fresh, cfg, "-n").stdout
    assert "Nothing to be done" in after, after[after.find("Job stats") :]


# -- an archive of a run in progress -------------------------------------------------------


def test_curation_reports_what_the_workflow_would_aggregate(tmp_path):
    """Complete data sets stay as they are; a data set whose label-tuned grid is half
    done is reported label-free only (no duplicate of a setting a previous run's chunk
    also holds); one without every label-free setting is left out."""
    from ufs.fileio import read_json, write_json
    from ufs.pipeline.archive import curate_evaluations
    from ufs.pipeline.config import build_plan

    config = {
        "datasets": {"wine": {"h": [2, 4]}, "breast_cancer": {"h": [3, 6]}, "digits": {"h": [5]}},
        "methods": {"all_features": {}, "udfs": {}},
        "oracle_datasets": ["wine", "digits"],
        "grid_max_settings": 4,
        "jobs": {"tasks_per_job": 2},
    }
    plan = build_plan(config)

    def doc(d, tasks, previous=False):
        return {
            "dataset": d,
            "evaluations": [
                {
                    "method": t.method,
                    "pid": t.pid,
                    "hkey": t.hkey,
                    "label_free": plan.setting(t.method, t.pid).label_free,
                    "in_grid": False
                    if previous
                    else plan.in_grid(plan.setting(t.method, t.pid), d),
                }
                for t in tasks
            ],
        }

    ev = tmp_path / "evaluations"
    for d in ("wine", "breast_cancer", "digits"):
        for c, tasks in plan.chunks(d).items():
            write_json(ev / d / f"{c}.json", doc(d, tasks))
    # wine: a grid chunk not evaluated yet, and the previous (label-free) run's c000 of
    # udfs holding the default setting only
    udfs = sorted(c for c in plan.chunks("wine") if c.startswith("udfs"))
    default = next(
        t
        for t in plan.tasks("wine")
        if t.method == "udfs" and plan.setting("udfs", t.pid).label_free
    )
    in_c000 = default in plan.chunks("wine")[udfs[0]]
    (ev / "wine" / f"{udfs[-1]}.json").unlink()
    if in_c000:  # the previous c000 has only the default: stale beside a current c001
        write_json(ev / "wine" / f"{udfs[0]}.json", doc("wine", [default], previous=True))
    # digits: the udfs default is missing altogether
    for c, tasks in plan.chunks("digits").items():
        if default.pid in {t.pid for t in tasks if t.method == "udfs"}:
            (ev / "digits" / f"{c}.json").unlink()

    status = curate_evaluations(tmp_path, config)
    assert "breast_cancer" not in status  # complete: untouched
    assert status["digits"] == "in progress" and not list((ev / "digits").glob("*.json"))
    assert status["wine"].startswith("label-free only (label-tuned ")
    records = [e for p in (ev / "wine").glob("*.json") for e in read_json(p)["evaluations"]]
    keys = [(e["method"], e["pid"], e["hkey"]) for e in records]
    assert len(keys) == len(set(keys))  # no setting twice
    assert all(e["label_free"] and not e["in_grid"] for e in records)
    assert {(m, p) for m, p, _ in keys} == {
        (s.method, s.pid)
        for m in plan.settings
        for s in plan.dataset_settings(m, "wine")
        if s.label_free
    }
