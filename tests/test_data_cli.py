"""``ufs data list`` / ``ufs data fetch``: where each data set comes from on a machine
without this project's mirror, and fetching a file into the cache, sha256-checked, with
nothing half-written when it fails. Offline: the download is replaced by a local copy."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import pytest
import yaml

import ufs.datasets.availability as A
import ufs.datasets.mirror as M
from ufs.cli import main
from ufs.datasets import get_dataset

REPO = Path(__file__).resolve().parents[1]
BENCHMARK = REPO / "config" / "experiments" / "benchmark.yaml"


def _state_lines(out: str) -> dict[str, str]:
    rows = [ln.split(None, 1) for ln in out.splitlines() if ln and not ln[0].isdigit()]
    return {name: rest for name, rest in rows}


def test_every_data_set_of_the_benchmark_has_a_state_without_the_mirror(tmp_path, capsys):
    """A clone without ``../shared``: the mirror is hidden (an empty folder), and every data
    set of the benchmark's config is named with where it would come from."""
    empty = tmp_path / "no_mirror"
    empty.mkdir()
    cache = tmp_path / "cache"
    code = main(
        [
            "data",
            "list",
            "--config",
            str(BENCHMARK),
            "--mirror-dir",
            str(empty),
            "--cache-dir",
            str(cache),
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    names = set(yaml.safe_load(BENCHMARK.read_text())["datasets"])
    lines = _state_lines(out)
    assert set(lines) == names
    for name, rest in lines.items():
        state = rest.split("  ")[0].strip()
        assert state in A.STATES and state != "in mirror", (name, rest)
    assert lines["wine"].startswith("bundled") and lines["golfs_sim1"].startswith("generated")
    assert lines["yale"].startswith("downloadable") and "https://" in lines["yale"]
    assert out.splitlines()[-1].startswith(f"{len(names)} data sets: ")


def test_states_follow_the_mirror_and_the_cache(tmp_path):
    mirror, cache = tmp_path / "mirror", tmp_path / "cache"
    yale, orl = get_dataset("yale"), get_dataset("orl")
    (mirror / yale.filename).parent.mkdir(parents=True)
    (mirror / yale.filename).write_bytes(b"x")
    remote = A.remote_name(orl)
    (cache / "orl").mkdir(parents=True)
    (cache / "orl" / remote).write_bytes(b"x")
    got = {
        s.name: s
        for s in A.data_states(["yale", "orl", "pie", "20ng", "hars"], mirror=mirror, cache=cache)
    }
    assert got["yale"].state == "in mirror" and got["yale"].available
    assert got["orl"].state == "cached" and got["orl"].available
    assert got["pie"].state == "downloadable" and not got["pie"].available
    assert got["20ng"].state == "manual" and "<mirror>/20NG/20NG.mat" in got["20ng"].detail
    assert got["hars"].state == "OpenML"


@pytest.fixture
def served(tmp_path, monkeypatch):
    """``yale`` with a pinned URL whose bytes a local copy serves (no network)."""
    content = b"MATLAB 5.0 MAT-file, a stand-in for Yale.mat" * 100
    spec = dataclasses.replace(
        get_dataset("yale"),
        url="https://example.org/data/Yale.mat",
        sha256=hashlib.sha256(content).hexdigest(),
        url_sha256="",
        url_member="",
    )
    monkeypatch.setattr(
        A, "get_dataset", lambda name: spec if name == "yale" else get_dataset(name)
    )
    served = {"bytes": content}

    def download(url, dest, **kw):
        assert url == spec.url
        Path(dest).write_bytes(served["bytes"])
        return Path(dest)

    monkeypatch.setattr(M, "download", download)
    return served


def test_fetch_downloads_verifies_and_caches(served, tmp_path, capsys):
    cache = tmp_path / "cache"
    empty = tmp_path / "empty"
    empty.mkdir()
    args = ["data", "fetch", "yale", "--cache-dir", str(cache), "--mirror-dir", str(empty)]
    assert main(args) == 0
    assert "ok, sha256 checked" in capsys.readouterr().out
    cached = cache / "yale" / "Yale.mat"
    assert cached.read_bytes() == served["bytes"]
    assert A.data_state("yale", mirror=empty, cache=cache).state == "cached"
    assert (
        main(["data", "list", "yale", "--cache-dir", str(cache), "--mirror-dir", str(empty)]) == 0
    )
    assert "cached" in capsys.readouterr().out


def test_a_tampered_download_is_refused_and_nothing_is_kept(served, tmp_path, capsys):
    cache = tmp_path / "cache"
    empty = tmp_path / "empty"
    empty.mkdir()
    served["bytes"] = b"not the pinned file"
    args = ["data", "fetch", "yale", "--cache-dir", str(cache), "--mirror-dir", str(empty)]
    assert main(args) == 1
    out = capsys.readouterr().out
    assert "failed" in out and "sha256" in out
    left = list((cache / "yale").iterdir()) if (cache / "yale").exists() else []
    assert left == []  # neither the file nor a partial download


def test_an_unknown_data_set_is_one_line(capsys):
    assert main(["data", "list", "no_such_set"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no_such_set" in err


def test_unreachable_data_sets_are_named_with_what_to_do(tmp_path):
    empty = tmp_path / "m"
    empty.mkdir()
    msg = A.unreachable_message(
        A.missing_states({"20ng": "20ng", "wine": "wine", "yale": "yale"}, mirror=empty)
    )
    assert msg.startswith("data set(s) 20ng cannot be obtained here")
    assert "<mirror>/20NG/20NG.mat" in msg and "offline_only=true" in msg
    assert (
        A.unreachable_message(A.missing_states({"wine": "wine", "yale": "yale"}, mirror=empty))
        is None
    )
    assert (
        A.unreachable_message(A.missing_states({"20ng": "20ng"}, mirror=empty, done=["20ng"]))
        is None
    )
    (empty / "20NG").mkdir()
    (empty / "20NG" / "20NG.mat").write_bytes(b"x")  # placed by hand: reachable
    assert A.unreachable_message(A.missing_states({"20ng": "20ng"}, mirror=empty)) is None


def test_a_run_that_cannot_reach_a_data_set_stops_before_any_job(tmp_path):
    """Planned, not run: the workflow refuses at plan time, with one message, and no job
    (not even a dry run's) is scheduled."""
    from tests.workflow_helpers import run_snakemake, write_config

    config = {
        "output_dir": "results",
        "resources_dir": "resources",
        "mirror_dir": str(tmp_path / "empty_mirror"),
        "mlflow": {"enabled": False},
        "datasets": {"wine": {"h": [2]}, "20ng": {"h": [10]}},
        "methods": {"random": {}},
    }
    (tmp_path / "empty_mirror").mkdir()
    proc = run_snakemake(tmp_path, write_config(tmp_path, config), "-n", check=False)
    log = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "data set(s) 20ng cannot be obtained here" in log and "20NG/20NG.mat" in log
    assert "Traceback" not in log and "Job stats" not in log


def test_a_dry_run_says_what_it_costs_and_what_it_downloads(tmp_path):
    """Every run, a dry run too, prints its cost line before it starts: the fit jobs, the
    estimate, and a data set no mirror or cache holds here as one to download, with its
    size."""
    from tests.workflow_helpers import run_snakemake, write_config
    from ufs.datasets.availability import download_size

    config = {
        "output_dir": "results",
        "resources_dir": "resources",
        "mirror_dir": str(tmp_path / "empty_mirror"),
        "mlflow": {"enabled": False},
        "datasets": {"wine": {"h": [2]}, "yale": {"h": [10]}},
        "methods": {"max_variance": {}},
    }
    (tmp_path / "empty_mirror").mkdir()
    proc = run_snakemake(tmp_path, write_config(tmp_path, config), "-n")
    line = next(x for x in (proc.stdout + proc.stderr).splitlines() if "run cost:" in x)
    assert "2 fit job(s) to run; about " in line, line
    assert f"1 data set(s) to download ({download_size('yale') / 1e6:.1f} MB): yale" in line


# -- ufs compare where the archive's data sets are not all here -----------------------------
def test_a_placement_names_what_is_here_and_what_fetching_costs(tmp_path, monkeypatch):
    """An archive of wine, digits and yale, placed in a clone with no mirror: the method
    runs on wine and digits, the label-tuned data sets keep only those, the first line of
    the report names the data sets placed and the two left out, and the missing sentence
    says what --fetch would download (yale's size from the table); with --fetch yale is
    placed too."""
    from ufs.datasets.availability import download_size
    from ufs.report.placement import placement_plan

    monkeypatch.delenv("UFS_MIRROR", raising=False)
    results = tmp_path / "results"
    for d in ("wine", "digits", "yale"):
        (results / "evaluations" / d).mkdir(parents=True)
    methods = {"all_features": {}, "random": {}, "max_variance": {}}
    config = {
        "seed": 0,
        "protocols": ["label_free", "oracle"],
        "mirror_dir": "../shared/this-folder-is-not-here",
        "offline_only": True,
        "oracle_datasets": ["yale", "wine"],
        "datasets": {
            "wine": {"h": [2, 4]},
            "digits": {"h": [5, 10]},
            "yale": {"h": [10, 20]},
            "orl": {"h": [10]},  # no evaluation in the archive: not the archive's
        },
        "methods": methods,
    }
    p = placement_plan("max_variance", config, results, archive_methods=methods)
    assert p.archived == ["wine", "digits", "yale"] and p.placed == ["wine", "digits"]
    assert p.missing == {"yale": "downloadable"} and p.mirror is None
    assert p.config["oracle_datasets"] == ["wine"] and set(p.config["datasets"]) == {
        "wine",
        "digits",
    }
    assert p.scope_sentence().startswith(
        "Placed on 2 of the archive's 3 data sets (wine, digits); not on yale"
    )
    assert f"yale (downloadable, {download_size('yale') / 1e6:.1f} MB)" in p.missing_sentence()
    assert "--fetch downloads 1 of them" in p.missing_sentence()
    assert p.cost.startswith("run cost: ") and "nothing to download" in p.cost
    fetched = placement_plan("max_variance", config, results, archive_methods=methods, fetch=True)
    assert fetched.placed == ["wine", "digits", "yale"] and not fetched.missing
    assert "1 data set(s) to download" in fetched.cost and "yale" in fetched.cost
    assert fetched.scope_sentence().startswith("Placed on all 3 data sets of the archive")


def test_a_method_given_by_import_path_is_priced_before_the_placement(tmp_path, monkeypatch):
    """``ufs compare --config mine.yaml`` with ``class: pkg.mod:Cls``: the cost line prices
    the new method's fit jobs (it is registered here from its import path)."""
    from ufs.method_spec import _REGISTRY
    from ufs.report.placement import placement_plan

    monkeypatch.delenv("UFS_MIRROR", raising=False)
    results = tmp_path / "results"
    (results / "evaluations" / "wine").mkdir(parents=True)
    archived = {"all_features": {}, "random": {}}
    mine = {"class": "ufs.methods.laplacian_score:LaplacianScore", "defaults": {}}
    config = {
        "seed": 0,
        "protocols": ["label_free"],
        "datasets": {"wine": {"h": [2, 4]}},
        "methods": {**archived, "ls_again": mine},
    }
    before = set(_REGISTRY)
    try:
        p = placement_plan("ls_again", config, results, archive_methods=archived)
    finally:  # registered from its import path for this test only
        for name in set(_REGISTRY) - before:
            _REGISTRY.pop(name)
    assert "not estimated" not in p.cost and "fit job(s) to run" in p.cost, p.cost
    assert "ls_again not priced (no cost model)" in p.cost  # said, not guessed


def test_the_cost_line_counts_what_is_on_disk_and_prices_the_rest(tmp_path):
    """The run-cost line: a chunk whose evaluation is on disk is kept and not priced;
    an unknown method is named, not priced; the estimate grows with the data set."""
    from ufs.pipeline.config import build_plan
    from ufs.pipeline.run_cost import cost_line, load_cost_model, run_cost

    cfg = {
        "seed": 0,
        "protocols": ["label_free"],
        "datasets": {"wine": {"h": [2, 4]}, "digits": {"h": [5, 10]}},
        "methods": {"max_variance": {}, "laplacian_score": {}},
    }
    plan = build_plan(cfg, warn=False)
    model, factors, source = load_cost_model()
    assert "benchmark" in source
    full = run_cost(plan, cfg, tmp_path, model=model, factors=factors)
    assert full.jobs == sum(len(plan.chunks(d)) for d in plan.instances) and full.kept == 0
    assert full.cpu_hours > 0 and not full.unmodelled
    chunk = next(iter(plan.chunks("digits")))
    (tmp_path / "evaluations" / "digits").mkdir(parents=True)
    (tmp_path / "evaluations" / "digits" / f"{chunk}.json").write_text("{}")
    part = run_cost(plan, cfg, tmp_path, model=model, factors=factors)
    assert (part.jobs, part.kept) == (full.jobs - 1, 1) and part.cpu_hours < full.cpu_hours
    assert cost_line(part).startswith(f"run cost: {part.jobs} fit job(s) to run, 1 on disk kept")
    model.coef.pop("laplacian_score")
    other = run_cost(plan, cfg, tmp_path / "x", model=model, factors=factors)
    assert other.unmodelled == {"laplacian_score"}
    assert "the fits of laplacian_score not priced" in cost_line(other)


def _cost_with_lineage(plan, cfg, root):
    """The run cost of ``plan`` on the results folder ``root``, as the workflow prices it
    (the plan's lineage read afresh)."""
    from ufs.pipeline.lineage import PlanLineage
    from ufs.pipeline.run_cost import load_cost_model, run_cost

    model, factors, _ = load_cost_model()
    return run_cost(
        plan, cfg, root, model=model, factors=factors, lineage=PlanLineage(plan, cfg, root)
    )


def test_the_cost_line_prices_a_restored_evaluation_whose_lineage_changed(tmp_path):
    """A restored evaluation (no fit files) is kept when its recorded lineage is the plan's
    and priced as a re-fit, said so, when it is not (the workflow re-fits it); an
    evaluation with its fit files is kept either way (Snakemake's own triggers decide)."""
    import json

    from ufs.pipeline.config import build_plan
    from ufs.pipeline.lineage import PlanLineage
    from ufs.pipeline.run_cost import cost_line, load_cost_model, run_cost

    cfg = {
        "seed": 0,
        "protocols": ["label_free"],
        "datasets": {"digits": {"h": [5, 10]}},
        "methods": {"max_variance": {}, "laplacian_score": {}},
    }
    plan = build_plan(cfg, warn=False)
    model, factors, _ = load_cost_model()
    chunks = sorted(plan.chunks("digits"))
    assert len(chunks) >= 2
    lineage = PlanLineage(plan, cfg, tmp_path)
    ev = tmp_path / "evaluations" / "digits"
    ev.mkdir(parents=True)
    current, changed = chunks[0], chunks[1]
    (ev / f"{current}.json").write_text(
        json.dumps({"lineage": lineage.chunk_lineage("digits", current)})
    )
    (ev / f"{changed}.json").write_text(json.dumps({"lineage": "0123456789abcdef"}))

    def cost():
        return _cost_with_lineage(plan, cfg, tmp_path)

    out = cost()
    assert (out.jobs, out.stale, out.kept) == (len(chunks) - 1, 1, 1)
    assert cost_line(out).startswith(
        f"run cost: {len(chunks) - 1} fit job(s) to run (1 of them restored evaluations whose "
        "code, data or settings changed), 1 on disk kept"
    )
    # without the lineage (a caller that cannot tell) both count as kept
    blind = run_cost(plan, cfg, tmp_path, model=model, factors=factors)
    assert (blind.jobs, blind.stale, blind.kept) == (len(chunks) - 2, 0, 2)
    assert out.cpu_hours > blind.cpu_hours
    # the changed chunk's fit files on disk: Snakemake's triggers decide, the line keeps it
    (tmp_path / "fits" / "digits").mkdir(parents=True)
    (tmp_path / "fits" / "digits" / f"{changed}.json").write_text("{}")
    assert (cost().stale, cost().kept) == (0, 2)


def test_the_cost_line_prices_a_restored_stability_record_whose_lineage_changed(tmp_path):
    """A restored stability record (no log) whose lineage is the plan's is not priced; one
    whose lineage is not, and one made before records kept a lineage, are."""
    import json

    from ufs.pipeline.config import build_plan
    from ufs.pipeline.lineage import PlanLineage
    from ufs.pipeline.stability_step import stability_config, stability_jobs, stability_settings

    cfg = {
        "seed": 0,
        "protocols": ["label_free"],
        "datasets": {"digits": {"h": [5, 10]}},
        "methods": {"max_variance": {}, "laplacian_score": {}, "mcfs": {}},
    }
    plan = build_plan(cfg, warn=False)
    jobs = stability_jobs(plan, cfg)
    assert {m for _, m, _ in jobs} == {"laplacian_score", "mcfs"}

    def cost():
        return _cost_with_lineage(plan, cfg, tmp_path)

    assert cost().stability_jobs == 2
    lineage = PlanLineage(plan, cfg, tmp_path)
    settings, scfg = stability_settings(plan), stability_config(cfg)
    folder = tmp_path / "stability" / "digits"
    folder.mkdir(parents=True)
    for d, m, h in jobs:
        current = lineage.stability_lineage(d, settings[m], h, scfg)
        (folder / f"{m}.json").write_text(json.dumps({"lineage": current}))
    assert cost().stability_jobs == 0
    (folder / "mcfs.json").write_text(json.dumps({"lineage": "0123456789abcdef"}))
    assert cost().stability_jobs == 1
    (folder / "mcfs.json").write_text("{}")  # no lineage recorded
    assert cost().stability_jobs == 1
    # with its log the record is the run's own: Snakemake's triggers decide, it is kept
    (tmp_path / "logs" / "stability" / "digits").mkdir(parents=True)
    (tmp_path / "logs" / "stability" / "digits" / "mcfs.log").write_text("")
    assert cost().stability_jobs == 0


def test_a_run_over_another_configs_report_says_which_report_it_replaces(tmp_path):
    """A config of its own in the default folder after the default run: the run warns,
    before it starts, that it writes over that report, naming the data sets it drops;
    the same config again (a resumed run) does not."""
    from ufs.pipeline.run_cost import replaced_report

    out = tmp_path / "results"
    (out / "tables").mkdir(parents=True)
    (out / "summary.md").write_text("# a report")
    for d in ("wine", "digits"):
        (out / "tables" / f"{d}.csv").write_text("x")
    said = replaced_report(out, {"my_data"})
    assert said is not None and "digits, wine, not in this config" in said
    assert f"--config output_dir={out}/<name>" in said
    assert replaced_report(out, {"wine", "digits", "my_data"}) is None
    assert replaced_report(tmp_path / "elsewhere", {"my_data"}) is None
