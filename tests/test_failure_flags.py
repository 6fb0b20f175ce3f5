"""Solver failures reach the tables, figures, summary and console.

One status per fit (ufs.pipeline.steps.fit_status): ok / fixed_budget / not_converged /
diverged; marks † (not converged) and ‡ (diverged) in tables and figures, counts in
summary.md and fit_status.json, a warning at the end of the run.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ufs.fileio import write_json, write_npz
from ufs.pipeline.steps import evaluate, fit, fit_status, fixed_iteration_budget, standardize
from ufs.report import aggregate


@pytest.mark.parametrize(
    ("info", "objective", "warnings", "budget", "expected"),
    [
        ({"converged": True, "n_iter": 5}, [3.0, 2.0], [], False, "ok"),
        ({}, None, [], False, "ok"),  # no iterative solver
        ({"converged": False, "n_iter": 300}, [3.0, 2.0], [], False, "not_converged"),
        ({"converged": False, "n_iter": 100}, [3.0, 2.0], [], True, "fixed_budget"),
        ({"converged": False, "diverged": True}, [3.0, 2.0], [], False, "diverged"),
        ({"converged": True}, [3.0, np.inf], [], False, "diverged"),
        ({"converged": False}, [3.0, "inf"], [], True, "diverged"),  # JSON form
        ({"converged": False}, [3.0, None], [], False, "diverged"),  # JSON NaN
        (
            {"converged": True},
            [1.0],
            ["RuntimeWarning: overflow encountered in matmul"],
            False,
            "diverged",
        ),
        ({"converged": True}, [1.0], ["ConvergenceWarning: slow"], False, "ok"),
    ],
)
def test_fit_status_definition(info, objective, warnings, budget, expected):
    assert fit_status(info, objective, warnings, fixed_budget=budget) == expected


def test_fixed_budget_is_what_the_estimator_documents():
    assert fixed_iteration_budget("ndfs", {})  # tol = 0 by default: exactly 100 iterations
    assert fixed_iteration_budget("rne", {}) and fixed_iteration_budget("fsasl", {})
    assert not fixed_iteration_budget("ndfs", {"tol": 1e-4})
    assert fixed_iteration_budget("lrpfs_ma2024", {"tol": 0})
    assert not fixed_iteration_budget("eufs", {})
    assert not fixed_iteration_budget("random", {})  # no tol at all
    assert not fixed_iteration_budget("no_such_method", {})


def test_real_fits_record_their_status(tmp_path, capsys):
    """fit → evaluate on a small data set: the evaluation rows carry ``fit_status``, and
    the fit logs one progress line per fit (method, setting, h, seconds, status)."""
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(3), 20)
    X = rng.normal(size=(60, 12))
    X[:, :3] += 3 * y[:, None]
    write_npz(tmp_path / "raw.npz", X=X, y=y, true_features=np.array([]), has_truth=False)
    standardize(tmp_path / "raw.npz", tmp_path / "data.npz", tmp_path / "summary.json")
    tasks = [
        {"method": "eufs", "pid": "p1", "params": {"max_iter": 2}, "hkey": "x", "hs": [None]},
        {"method": "ndfs", "pid": "p2", "params": {"max_iter": 3}, "hkey": "x", "hs": [None]},
        {"method": "max_variance", "pid": "p3", "params": {}, "hkey": "x", "hs": [None]},
    ]
    fit(tmp_path / "data.npz", tasks, tmp_path / "fit.npz", tmp_path / "fit.json")
    head, *log = capsys.readouterr().err.splitlines()
    assert re.fullmatch(
        r"\S+ \S+ 3 task\(s\), 3 fit\(s\) of eufs, max_variance, ndfs on data", head
    )
    assert len(log) == 3
    # local time, "fit i of N", then method, setting, h
    stamp = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[+-]\d{4}"
    assert re.match(stamp + r" fit 1 of 3: eufs setting=p1 \{'max_iter': 2\} h=all: ", log[0])
    assert all(f" fit {i} of 3: " in line for i, line in enumerate(log, 1))
    # ranking by row weights: the log also gives resolved_rank (h above it is degenerate)
    assert " n_iter=2 resolved_rank=" in log[0] and log[0].endswith(" status=not_converged")
    assert " n_iter=3 resolved_rank=" in log[1] and log[1].endswith(" status=fixed_budget")
    assert log[2].endswith("status=ok")
    meta = {
        "dataset": "toy",
        "dataset_base": "toy",
        "seed": 0,
        "settings": {
            f"{t['method']}|{t['pid']}": {"label_free": True, "in_grid": True} for t in tasks
        },
    }
    evaluate(
        tmp_path / "data.npz",
        tmp_path / "fit.npz",
        tmp_path / "fit.json",
        tmp_path / "ev.json",
        meta=meta,
        hs=[2, 4],
        restarts=2,
    )
    got = {
        ev["method"]: {r["fit_status"] for r in ev["results"]}
        for ev in json.loads((tmp_path / "ev.json").read_text())["evaluations"]
    }
    assert got == {"eufs": {"not_converged"}, "ndfs": {"fixed_budget"}, "max_variance": {"ok"}}
    fits = aggregate.fit_records([tmp_path / "ev.json"])
    assert len(fits) == 3  # one ranking fit serves both h


def _row(h, status, acc, curve=None):
    per = {m: [acc, acc - 0.02, acc + 0.02] for m in ("acc", "nmi", "ari", "ne")}
    return {
        "h": h,
        "h_label": str(h),
        "per_restart": per,
        "fit_seconds": 0.1,
        "fit_info": {},
        "fit_warnings": [],
        "fit_status": status,
        "objective_curve": curve or [3.0, 2.0, 1.5],
        "selected": [0],
    }


def _record(dataset, method, kind, pid, rows, *, label_free=True, in_grid=True):
    return {
        "dataset": dataset,
        "dataset_base": dataset,
        "seed": 0,
        "method": method,
        "pid": pid,
        "hkey": "x",
        "params": {"a": 1},
        "label_free": label_free,
        "in_grid": in_grid,
        "kind": kind,
        "kmeans_seconds": 0.5,
        "fit_seconds_total": 0.3,
        "code_version": "x",
        "results": rows,
    }


def _evaluations(tmp_path: Path, dataset: str, shift: float = 0.0) -> Path:
    """eufs never converges (ranking: one fit for both h), dgufs diverges at h = 5 only
    (subset), ndfs runs a fixed budget, max_variance is closed-form."""
    recs = [
        _record(
            dataset,
            "eufs",
            "ranking",
            "e",
            [_row(5, "not_converged", 0.6 + shift), _row(10, "not_converged", 0.62)],
        ),
        _record(dataset, "dgufs", "subset", "g", [_row(5, "diverged", 0.3), _row(10, "ok", 0.35)]),
        _record(
            dataset,
            "ndfs",
            "ranking",
            "n",
            [_row(5, "fixed_budget", 0.7), _row(10, "fixed_budget", 0.72)],
        ),
        _record(
            dataset,
            "max_variance",
            "ranking",
            "m",
            [_row(5, "ok", 0.5 - shift), _row(10, "ok", 0.55)],
        ),
    ]
    path = tmp_path / "evaluations" / f"{dataset}.json"
    write_json(path, {"dataset": dataset, "evaluations": recs})
    return path


def test_tables_mark_cells_and_csv_has_status(tmp_path):
    ev = _evaluations(tmp_path, "toy")
    aggregate.write_dataset_outputs(
        [ev], "toy", tmp_path / "toy.csv", tmp_path / "toy.md", tmp_path / "fig"
    )
    md = (tmp_path / "toy.md").read_text()
    lines = {ln.split("|")[1].strip(): ln for ln in md.splitlines() if ln.startswith("| ")}
    # the last table (label-tuned): h = 5, h = 10, "mean over h" and "best over h"
    assert lines["eufs"].count("†") == 4
    assert "‡" in lines["dgufs"].split("|")[2] and "‡" not in lines["dgufs"].split("|")[3]
    assert "†" not in lines["ndfs"] and "‡" not in lines["ndfs"]  # fixed budget: not marked
    assert "†" not in lines["_max_variance_ (reference)"]
    assert aggregate.STATUS_LEGEND in md
    csv = pd.read_csv(tmp_path / "toy.csv")
    row = csv[(csv["method"] == "dgufs") & (csv["h"] == 5)].iloc[0]
    assert row["status"] == "diverged" and row["n_diverged"] == 1
    assert set(csv[csv["method"] == "ndfs"]["status"]) == {"fixed_budget"}
    assert set(csv.columns) >= {"status", "n_not_converged", "n_diverged", "n_fixed_budget"}


def test_figures_mark_points(tmp_path, monkeypatch):
    seen = {}

    def capture(fig, path, dpi):
        seen[Path(path).name] = (
            [
                t.get_text()
                for lg in fig.legends + [ax.get_legend() for ax in fig.axes]
                if lg
                for t in lg.get_texts()
            ]
            + [fig._suptitle.get_text() if fig._suptitle else ""]
            + [a.get_title() for a in fig.axes]
        )
        return Path(path)

    monkeypatch.setattr(aggregate, "_save_figure", capture)
    df = aggregate.collect([_evaluations(tmp_path, "toy")], "toy")
    aggregate.plot_dataset(df, aggregate.select_protocols(df), "toy", tmp_path)
    for name in ("acc_vs_h.png", "nmi_vs_h.png"):
        assert "† not converged" in seen[name] and "‡ diverged" in seen[name]
    conv = " ".join(seen["convergence.png"])
    assert "eufs†" in conv and "† did not converge" in conv


def test_failure_counts_summary_and_warning(tmp_path):
    evs = [_evaluations(tmp_path, "toy"), _evaluations(tmp_path, "other", shift=0.2)]
    fits = aggregate.fit_records(evs)
    # per data set: eufs 1 fit (ranking), dgufs 2 (subset, one per h), ndfs 1, max_variance 1
    assert len(fits) == 10
    counts = aggregate.failure_counts(fits)
    toy = counts.set_index(["method", "dataset"])
    assert toy.loc[("eufs", "toy"), ["fits", "not_converged"]].tolist() == [1, 1]
    assert toy.loc[("dgufs", "toy"), ["fits", "diverged", "settings_affected"]].tolist() == [
        2,
        1,
        1,
    ]
    assert toy.loc[("ndfs", "toy"), ["not_converged", "fixed_budget"]].tolist() == [0, 1]
    md = aggregate.failure_markdown(counts)
    assert "2 of 10 fits did not converge (†) and 2 diverged (‡)" in md
    assert "| eufs | toy | 1 | 1 | 0 | 1 of 1 |" in md
    assert "ndfs (2 fits)" in md  # fixed budget: listed, not counted as a failure
    report = aggregate.failure_report(counts, "out/summary.md")
    warning = aggregate.fit_status_warning(report)
    assert warning.startswith("UFS-bench: 2 of 10 fits did not converge")
    assert len(warning.splitlines()) == 5  # dgufs and eufs on two data sets
    assert "ndfs" not in warning
    ok = counts.assign(not_converged=0, diverged=0)
    assert aggregate.fit_status_warning(aggregate.failure_report(ok)) is None
    assert aggregate.failure_markdown(ok).count("No fit failed or was degenerate.") == 1
    assert aggregate.fit_status_warning(tmp_path / "missing.json") is None


def test_summary_opens_with_ranks_then_failures(tmp_path):
    out = tmp_path / "results"
    tables_md, tables_csv = [], []
    evs = []
    for i, d in enumerate(("alpha", "beta", "gamma")):
        ev = _evaluations(tmp_path, d, shift=0.01 * i)
        evs.append(ev)
        csv, md = out / "tables" / f"{d}.csv", out / "tables" / f"{d}.md"
        aggregate.write_dataset_outputs([ev], d, csv, md, out / "figures" / d)
        tables_md.append(md)
        tables_csv.append(csv)
    bench = tmp_path / "b.tsv"
    bench.write_text("s\th:m:s\n1.5\t0:00:01\n")
    cds = {
        (p, m): out / "figures" / f"cd_{p}_{m}.png"
        for p in ("oracle", "label_free", "label_free_tuned")
        for m in ("acc", "nmi")
    }
    warning = aggregate.write_summary(
        tables_md,
        tables_csv,
        [bench],
        evs,
        out / "summary.md",
        out / "timing.json",
        out / "fit_status.json",
        cds,
        min_h_values=2,  # two values of h per data set here: ranked anyway
    )
    text = (out / "summary.md").read_text()
    heads = [ln for ln in text.splitlines() if ln.startswith("## ")]
    assert heads == [  # the answer first, the legend once at the end
        "## The answer",
        "## What the tests support",
        "## Leaderboard (label-free, one per family, simulations included)",
        "## Across data sets: average rank (1 = best)",
        "## Solver failures and degenerate fits",
        "## Per data set",
        "## Time",
        "## Legend",
    ]
    answer = text.split("## The answer\n", 1)[1].split("\n## ", 1)[0].strip().splitlines()
    assert len(answer) <= 10 and "decide nothing" in answer[1]  # N = 3: nothing decided
    # the per-data-set tables are linked, not repeated; every test is in the details file
    assert "[alpha](tables/alpha.md), [beta](tables/beta.md), [gamma](tables/gamma.md)" in text
    assert not [ln for ln in text.splitlines() if ln.startswith("### ")]
    details = (out / "summary_details.md").read_text()
    assert "## Against the references: chance and all features" in details
    assert "## Scores and ranks per data set" in details
    assert text.count(aggregate.STATUS_LEGEND) == 1  # one legend, not one per table
    assert "[figures/cd_oracle_acc.png](figures/cd_oracle_acc.png)" in text
    assert "| ndfs | **1.00** |" in text  # best on every data set under both protocols
    assert "| eufs | <u>2.00†</u> |" in text and "dgufs" in text
    for f in cds.values():
        assert f.stat().st_size > 5000
    timing = json.loads((out / "timing.json").read_text())  # the benchmark file's wall time
    assert timing["jobs"] == 1 and timing["job_wall_seconds"] == 1.5
    status = json.loads((out / "fit_status.json").read_text())
    assert status["not_converged"] == 3 and status["diverged"] == 3
    assert status["fixed_budget"] == 3 and status["fits"] == 15
    assert warning and "eufs" in warning and "dgufs" in warning


@pytest.mark.slow
def test_workflow_reports_failures_and_ranks(tmp_path):
    """A tiny run where NDFS's grid setting cannot converge (3 iterations, tol 1e-12) and
    its label-free default runs its fixed budget: marked, counted, warned at the end."""
    from tests.workflow_helpers import run_snakemake, write_config

    config = {
        "output_dir": "results",
        "resources_dir": "resources",
        "seed": 0,
        "evaluation": {"restarts": 2, "reference_draws": 2},
        "mlflow": {"enabled": False},
        "datasets": {"wine": {"h": [2, 4]}, "breast_cancer": {"h": [5]}},
        "methods": {
            "random": {},
            "max_variance": {},
            "laplacian_score": {},
            "ndfs": {"grid": {"max_iter": [3], "tol": [1e-12]}},
        },
    }
    proc = run_snakemake(tmp_path, write_config(tmp_path, config))
    log = proc.stdout + proc.stderr
    tail = log[log.rindex("steps (100%) done") :]  # printed by the onsuccess handler
    assert "UFS-bench: 2 of" in tail and "did not converge (†)" in tail
    assert "ndfs" in tail and "breast_cancer" in tail and "wine" in tail
    res = tmp_path / "results"
    status = json.loads((res / "fit_status.json").read_text())
    assert status["not_converged"] == 2 and status["fixed_budget"] == 2
    assert status["diverged"] == 0
    heads = [ln for ln in (res / "summary.md").read_text().splitlines() if ln.startswith("## ")]
    assert heads[:4] == [  # two competitors: no rank comparison, so no leaderboard
        "## The answer",
        "## What the tests support",
        "## Across data sets: average rank (1 = best)",
        "## Solver failures and degenerate fits",
    ]
    for p in ("oracle", "label_free"):
        for m in ("acc", "nmi"):
            assert (res / "figures" / f"cd_{p}_{m}.png").stat().st_size > 5000
    wine = pd.read_csv(res / "tables" / "wine.csv")
    ndfs = wine[wine["method"] == "ndfs"].set_index("protocol")["status"]
    assert set(ndfs["oracle"]) == {"not_converged"}
    assert set(ndfs["label_free"]) == {"fixed_budget"}
    assert "†" in (res / "tables" / "wine.md").read_text()
