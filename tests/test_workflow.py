"""The Snakemake workflow end to end on a tiny config (runs real jobs; ~1-2 min each)."""

from __future__ import annotations

import collections
import os
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest

from tests.workflow_helpers import (
    TINY,
    env,
    expected_run_count,
    finished_runs,
    result_tables,
    run_snakemake,
    snakemake_cmd,
    write_config,
)

pytestmark = pytest.mark.slow


def _check_runs(workdir: Path, config: dict) -> None:
    runs = finished_runs(workdir, config["mlflow"]["experiment"])
    keys = collections.Counter(r.data.tags["run_key"] for r in runs)
    assert len(runs) == expected_run_count(config)
    assert max(keys.values()) == 1, "an MLflow run was logged twice"
    combos = {
        (
            r.data.tags["dataset"],
            r.data.tags["method"],
            r.data.tags["params_id"],
            r.data.params["h"],
        )
        for r in runs
    }
    assert len(combos) == len(runs)


@pytest.fixture(scope="module")
def completed_run(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("wf")
    cfg = write_config(workdir, TINY)
    run_snakemake(workdir, cfg)
    return workdir, cfg


def test_outputs_and_one_mlflow_run_per_setting(completed_run):
    workdir, _ = completed_run
    res = workdir / "results"
    for base in ("wine", "golfs_sim1"):
        for f in ("acc_vs_h.png", "nmi_vs_h.png", "convergence.png", "runtime.png"):
            assert (res / "figures" / base / f).stat().st_size > 1000
        assert (res / "tables" / f"{base}.csv").exists()
        md = (res / "tables" / f"{base}.md").read_text()
        assert md.index("— label-free:") < md.index("— label-tuned:")  # label-free first
        # paper-ready twins: LaTeX tables, an HTML page, every figure as PDF
        assert "\\toprule" in (res / "tables" / f"{base}.tex").read_text()
        assert "<table>" in (res / "tables" / f"{base}.html").read_text()
        for f in ("acc_vs_h", "nmi_vs_h", "convergence", "runtime"):
            assert (res / "figures" / base / f"{f}.pdf").read_bytes()[:5] == b"%PDF-"
    summary = (res / "summary.md").read_text()
    assert summary.index("## What the tests support") < summary.index("## Across data sets")
    assert "*Overhead*" in summary and summary.rstrip().splitlines()[-1].startswith("- ")
    assert (res / "ranks.tex").exists() and (res / "summary.html").exists()
    # simulations carry TP/CP; replicates are pooled
    sim = pd.read_csv(res / "tables" / "golfs_sim1.csv")
    assert sim["tp"].notna().all() and (sim["replicates"] == 2).all()
    # ranking methods: one fit per setting, sliced per h; subset methods: one fit per h
    import json

    tasks = [
        t
        for f in (res / "fits" / "wine").glob("*.c*.json")
        for t in json.loads(f.read_text())["tasks"]
    ]
    lap = [t for t in tasks if t["method"] == "laplacian_score"]
    assert len(lap) == 2 and all(list(t["fits"]) == ["rank"] for t in lap)
    # parameters are written beside the outputs
    assert {t["params"]["n_neighbors"] for t in lap} == {3, 5}
    km = [t for t in tasks if t["method"] == "kmeans_ufs"]
    assert len(km) == 1 and sorted(km[0]["fits"]) == ["h2", "h4"]
    _check_runs(workdir, TINY)


def test_oracle_protocol_picks_best_grid_setting(completed_run):
    workdir, _ = completed_run
    df = pd.read_csv(workdir / "results" / "tables" / "wine.csv")
    oracle = df[(df["protocol"] == "oracle") & (df["method"] == "laplacian_score")]
    assert set(oracle["n_settings"]) == {2}
    from ufs.pipeline.io import read_evaluations

    # chosen on the even k-means restarts, reported on the odd ones
    best = {}
    records = read_evaluations((workdir / "results" / "evaluations" / "wine").glob("*.c*.json"))
    for ev in records:
        if ev["method"] != "laplacian_score":
            continue
        for row in ev["results"]:
            acc = row["per_restart"]["acc"]
            choose, report = sum(acc[0::2]) / len(acc[0::2]), sum(acc[1::2]) / len(acc[1::2])
            if choose > best.get(row["h"], (-1.0, 0.0))[0]:
                best[row["h"]] = (choose, report)
    assert best and len(oracle) == len(best)
    for _, r in oracle.iterrows():
        assert r["acc_mean"] == pytest.approx(best[r["h"]][1])
        assert r["tuning"] == "held_out"


def test_snakemake_report_shows_the_summary_with_captions(completed_run, tmp_path):
    """The report renders the summary and the tables (HTML pages, not downloads)
    and every item has a caption."""
    workdir, cfg = completed_run
    report = tmp_path / "report.html"
    run_snakemake(workdir, cfg, "--report", str(report))
    text = report.read_text()
    for caption in ("opens with what the tests support", "label-free first; competitors by"):
        assert caption in text, caption
    assert "summary.html" in text and "wine.html" in text
    assert "Critical-difference diagram" in text


def test_second_run_does_nothing(completed_run):
    workdir, cfg = completed_run
    proc = run_snakemake(workdir, cfg)
    assert "Nothing to be done" in proc.stdout + proc.stderr
    _check_runs(workdir, TINY)


def test_tracking_is_idempotent_when_forced(completed_run):
    """Re-running the logging jobs logs nothing new (same run keys, same results)."""
    workdir, cfg = completed_run
    run_snakemake(workdir, cfg, "--forcerun", "track")
    _check_runs(workdir, TINY)
    import json

    receipt = json.loads((workdir / "results" / "mlflow" / "wine.json").read_text())
    assert receipt["logged"] == 0 and receipt["skipped"] > 0


def test_sigkill_and_resume_equals_uninterrupted_run(completed_run, tmp_path):
    reference, _ = completed_run
    cfg = write_config(tmp_path, TINY)
    proc = subprocess.Popen(
        snakemake_cmd(tmp_path, cfg),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env(),
        start_new_session=True,
    )
    # wait until some, but not all, evaluations and MLflow logging have happened
    deadline = time.time() + 600
    evals = tmp_path / "results" / "evaluations"
    while time.time() < deadline and proc.poll() is None:
        if evals.exists() and len(list(evals.rglob("*.json"))) >= 2:
            break
        time.sleep(0.2)
    assert proc.poll() is None, "workflow finished before it could be killed; make TINY bigger"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (tmp_path / "results" / "summary.md").exists()
    # a killed Snakemake leaves its lock behind: a refusal first, then unlock and resume
    refused = run_snakemake(tmp_path, cfg, check=False)
    assert refused.returncode != 0 and "cannot be locked" in refused.stdout + refused.stderr
    run_snakemake(tmp_path, cfg, "--unlock")
    run_snakemake(tmp_path, cfg, "--rerun-incomplete")
    ours, ref = result_tables(tmp_path), result_tables(reference)
    assert ours.keys() == ref.keys()
    for k in ref:
        pd.testing.assert_frame_equal(ours[k], ref[k])
    _check_runs(tmp_path, TINY)


def test_slices_only_add_or_refresh_their_own_part(tmp_path):
    """A full run, then each of two slices (only_methods), then a full run again
    gives the same evaluations (files untouched) and the same MLflow runs (ids) as the one
    full run: a slice never overwrites or deletes another method's results."""
    config = {
        **TINY,
        "datasets": {"wine": {"h": [2, 4, 6]}},
        "methods": {"max_variance": {}, "laplacian_score": {}, "random": {}},
    }
    cfg = write_config(tmp_path, config)
    run_snakemake(tmp_path, cfg)
    evals = sorted((tmp_path / "results" / "evaluations" / "wine").glob("*.json"))
    before = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in evals}
    runs = {r.info.run_id for r in finished_runs(tmp_path, config["mlflow"]["experiment"])}
    assert len(runs) == expected_run_count(config)
    # the first slice keeps the references (their evaluations on disk: no job), the
    # second leaves them out and its tables take them from disk
    for piece, refs in ((["laplacian_score"], "true"), (["max_variance"], "false")):
        only = f"only_methods=[{','.join(piece)}]"
        run_snakemake(tmp_path, cfg, "--config", only, f"slice_references={refs}")
        after = {r.info.run_id for r in finished_runs(tmp_path, config["mlflow"]["experiment"])}
        assert after == runs, f"slice {piece} changed the MLflow runs"
        now = sorted((tmp_path / "results" / "evaluations" / "wine").glob("*.json"))
        assert {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in now} == before, piece
        # the slice's tables hold every method on disk, not the slice's only
        table = pd.read_csv(tmp_path / "results" / "tables" / "wine.csv")
        assert set(table["method"]) == set(config["methods"]), piece
        md = (tmp_path / "results" / "tables" / "wine.md").read_text()
        assert "**A sliced run** (`only_methods=" in md
        if refs == "true":
            assert "references too, for its verdicts: max_variance, random" in md
        else:
            assert "from earlier runs" in md and "references too" not in md
        assert "**A sliced run**" in (tmp_path / "results" / "summary.md").read_text()
    run_snakemake(tmp_path, cfg)
    now = sorted((tmp_path / "results" / "evaluations" / "wine").glob("*.json"))
    assert {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in now} == before
    assert {r.info.run_id for r in finished_runs(tmp_path, config["mlflow"]["experiment"])} == runs
