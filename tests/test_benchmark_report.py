"""``ufs benchmark-report`` on a small synthetic results directory: 3 of the config's 4 data
sets × 4 methods, written as the workflow writes them (evaluation JSONs aggregated by
:mod:`ufs.report.aggregate`, Snakemake benchmark TSVs, data info JSONs). Expected values are
computed here from the generated numbers, independently of the report's code."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pandas as pd
import pytest

from ufs.cli import main
from ufs.report import aggregate
from ufs.report.benchmark_report import benchmark_report, label_gap, load_run
from ufs.stats import ranking

DATASETS = {"d1": (60, 40, 3), "d2": (50, 30, 4), "d3": (80, 20, 2)}  # n, p, classes
MISSING = "d4"  # in the config, no results
HS = [2, 4, 8]
# method -> (kind, [(pid, label_free, in_grid)])
METHODS = {
    "all_features": ("full", [("af", True, True)]),
    "alpha": ("subset", [("a0", True, True), ("a1", False, True)]),
    "beta": ("ranking", [("b0", True, True), ("b1", False, True), ("b2", False, True)]),
    "gamma": ("subset", [("g0", True, False), ("g1", False, True), ("g2", False, True)]),
}
NOT_CONVERGED = ("d2", "gamma", "g0", 4)  # dataset, method, pid, h
BUDGET = ("d3", "beta", "b0")  # a ranking fit over the budget: every h
RECORDED_BUDGET = 45  # the config says 600: the recorded one must win
TSVS = {  # benchmarks/<step>/<file>: (s, cpu_time)
    "fit/d1/c000.tsv": (1000.5, 900.25),
    "fit/d2/c000.tsv": (2500.0, 2400.0),
    "evaluate/d1/c000.tsv": (300.0, 250.5),
}


def _per_restart(rng) -> dict[str, list[float]]:
    return {m: rng.uniform(0.1, 0.9, size=3).tolist() for m in ("acc", "nmi", "ari", "ne")}


def _row(d, method, pid, h, rng, budget=False) -> dict:
    kind = METHODS[method][0]
    nan = [float("nan")] * 3
    status = "ok"
    if budget:
        status = "budget_exceeded"
    elif (d, method, pid, h) == NOT_CONVERGED:
        status = "not_converged"
    row = {
        "h": DATASETS[d][1] if kind == "full" else h,
        "h_label": "all" if kind == "full" else str(h),
        "per_restart": {m: nan for m in ("acc", "nmi", "ari", "ne")}
        if budget
        else _per_restart(rng),
        "fit_seconds": float(rng.uniform(1, 100)),
        "fit_info": {"budget_exceeded": True} if budget else {},
        "fit_status": status,
    }
    if budget:
        row["budget_reason"] = f"time: over {RECORDED_BUDGET} CPU-s"
    return row


def _evaluations(d: str, rng) -> list[dict]:
    records = []
    for method, (kind, settings) in METHODS.items():
        for pid, label_free, in_grid in settings:
            budget = (d, method, pid) == BUDGET
            hs = [None] if kind == "full" else HS
            rows = [_row(d, method, pid, h, rng, budget) for h in hs]
            if kind == "ranking":  # one fit for every h
                for r in rows[1:]:
                    r["fit_seconds"] = rows[0]["fit_seconds"]
            records.append(
                {
                    "dataset": d,
                    "dataset_base": d,
                    "method": method,
                    "pid": pid,
                    "kind": kind,
                    "params": {"setting": pid},
                    "label_free": label_free,
                    "in_grid": in_grid,
                    "restarts": 3,
                    "kmeans_seconds": 0.1,
                    "fit_seconds_total": 1.0,
                    "results": rows,
                }
            )
    return records


def _config(protocols) -> str:
    lines = [f"protocols: [{', '.join(protocols)}]", "evaluation: {restarts: 3}"]
    lines += ["jobs: {fit_budget_seconds: 600}", "datasets:"]
    for d in [*DATASETS, MISSING]:
        lines.append(f"  {d}: {{h: {{percent: [1, 2, 5], min: 2, max: 300}}}}")
    lines += ["methods:"] + [f"  {m}: {{}}" for m in METHODS]
    return "\n".join(lines) + "\n"


def make_results(root, *, protocols=("label_free", "oracle"), datasets=tuple(DATASETS)):
    """A results dir like the workflow's; returns (results dir, config path, evaluations)."""
    rng = np.random.default_rng(7)
    out = root / "results"
    evals = {}
    for d in datasets:
        evals[d] = _evaluations(d, rng)
        ev_file = out / "evaluations" / d / "c000.json"
        ev_file.parent.mkdir(parents=True)
        ev_file.write_text(json.dumps({"dataset": d, "evaluations": evals[d]}))
        sel = aggregate.select_protocols(aggregate.collect([ev_file], d))
        # every grid setting's rows come with the label-tuned protocol, as in the workflow
        sel = sel[sel["protocol"].isin([*protocols, *(["grid"] if "oracle" in protocols else [])])]
        (out / "tables").mkdir(exist_ok=True)
        cols = [c for c in sel.columns if c != "objective_curve"]  # as write_dataset_outputs
        sel[cols].to_csv(out / "tables" / f"{d}.csv", index=False)
        n, p, k = DATASETS[d]
        (out / "data").mkdir(exist_ok=True)
        info = {"n_samples": n, "n_features": p, "n_classes": k}
        (out / "data" / f"{d}.json").write_text(json.dumps(info))
    for name, (s, cpu) in TSVS.items():
        path = out / "benchmarks" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"s\th:m:s\tmax_rss\tcpu_time\n{s}\t0:00:01\t10.0\t{cpu}\n")
    config = root / "config.yaml"
    config.write_text(_config(protocols))
    return out, config, evals


# -- expected values, from the generated evaluations ------------------------------------


def _mean(xs) -> float:
    return sum(xs) / len(xs)


def expected_scores(evals: dict, protocol: str, metric: str) -> dict[tuple[str, str], float]:
    """(dataset, method) -> mean over h of the mean over restarts (oracle: the setting
    with the best mean ACC on the even-numbered restarts at each h, reported on the odd
    ones: issue 24's held-out tuning); NaN where a fit exceeded the budget."""
    out = {}
    for d, records in evals.items():
        for method in METHODS:
            recs = [
                r
                for r in records
                if r["method"] == method
                and (r["label_free"] if protocol == "label_free" else r["in_grid"])
            ]
            per_h = []
            for i in range(len(recs[0]["results"])):
                rows = [
                    r["results"][i]
                    for r in recs
                    if r["results"][i]["fit_status"] != "budget_exceeded"
                ]
                if not rows:
                    per_h.append(math.nan)
                    continue
                if protocol == "label_free":
                    per_h.append(_mean(rows[0]["per_restart"][metric]))
                    continue
                best = max(rows, key=lambda row: _mean(row["per_restart"]["acc"][0::2]))
                per_h.append(_mean(best["per_restart"][metric][1::2]))
            out[(d, method)] = _mean(per_h)
    return out


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    root = tmp_path_factory.mktemp("bench")
    results, config, evals = make_results(root)
    out = root / "docs" / "benchmark.md"
    text = benchmark_report(results, config, out, img_dir=root / "docs" / "img")
    return {"root": root, "results": results, "config": config, "evals": evals, "text": text}


def test_writes_the_markdown_and_the_cd_diagrams(full):
    root = full["root"]
    assert (root / "docs" / "benchmark.md").read_text() == full["text"]
    for protocol in ("label_free", "oracle"):
        for metric in ("acc", "nmi"):
            png = root / "docs" / "img" / f"benchmark_cd_{protocol}_{metric}.png"
            assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
            assert f"](img/benchmark_cd_{protocol}_{metric}.png)" in full["text"]
    assert f"from `{full['results']}`; do not edit by hand" in full["text"]


def test_scope_line_counts_missing_and_compute(full):
    scope = next(ln for ln in full["text"].splitlines() if ln.startswith("**Scope:**"))
    assert f"data sets with results 3 of the config's 4 (missing: {MISSING})" in scope
    assert "methods 4;" in scope
    assert (
        "label-free (primary), label-free tuned (the other families' labels choose, from the "
        "same grid runs, on 3 data sets) and label-tuned (secondary)" in scope
    )
    assert "h = round(p × {1, 2, 5} %) clipped to [2, 300]" in scope
    assert "3 k-means restarts" in scope
    assert f"per-fit budget {RECORDED_BUDGET} CPU-s (recorded in the results)" in scope
    cpu = sum(c for _, c in TSVS.values()) / 3600
    wall = sum(s for s, _ in TSVS.values()) / 3600
    assert f"compute used {cpu:.2f} CPU-h / {wall:.2f} wall-h over {len(TSVS)} jobs" in scope
    run = load_run(full["results"], full["config"])
    fit_cpu = sum(c for name, (_, c) in TSVS.items() if name.startswith("fit/"))
    assert run.compute.loc["fit", "cpu_time"] == pytest.approx(fit_cpu)
    assert run.compute.loc["evaluate", "s"] == pytest.approx(300.0)
    assert "*Partial results*" in full["text"]


def _section(text: str, title: str) -> str:
    return text.split(f"## {title}", 1)[1].split("\n## ", 1)[0]


def test_best_per_dataset_names_the_right_method(full):
    section = _section(full["text"], "Best per data set")
    for metric in ("acc", "nmi"):
        block = section.split(f"**{metric.upper()}**", 1)[1].split("\n\n**", 1)[0]
        for protocol, title in (("label_free", "label-free"), ("oracle", "label-tuned")):
            scores = expected_scores(full["evals"], protocol, metric)
            for d, (n, p, k) in DATASETS.items():
                cand = {
                    m: scores[(d, m)]
                    for m in METHODS
                    if m != "all_features" and not math.isnan(scores[(d, m)])
                }
                ranked = sorted(cand, key=cand.get, reverse=True)
                ref = scores[(d, "all_features")]
                row = (
                    f"| {d} ({n} × {p}, {k}) | {title} | `{ranked[0]}` | "
                    f"{100 * cand[ranked[0]]:.1f} | `{ranked[1]}` | {100 * cand[ranked[1]]:.1f} "
                    f"| {100 * ref:.1f} |"
                )
                assert row in re.sub("[†‡§◊]", "", block), row
        # the flags are carried: the not-converged fit's score is marked where it is named
        d, method, *_ = NOT_CONVERGED
        line = next(
            ln for ln in block.splitlines() if ln.startswith(f"| {d} (") and "label-free" in ln
        )
        if f"`{method}`" in line:
            assert re.search(rf"`{method}` \| [0-9.]+†", line), line


def test_budget_exceeded_method_is_never_best_and_is_marked(full):
    d, method, _ = BUDGET
    lf = expected_scores(full["evals"], "label_free", "acc")
    assert math.isnan(lf[(d, method)])
    section = _section(full["text"], "Per data set scores (label-free ACC %)")
    row = next(ln for ln in section.splitlines() if ln.startswith(f"| {d} |"))
    assert "–§" in row
    failures = _section(full["text"], "Failures")
    assert f"- {d}: `{method}` (1 fit: time)" in failures
    ranks = _section(full["text"], "Average ranks across data sets")
    # no random reference in this run to impute with: the data set is left out, and said
    assert f"data set {d} dropped (no h where `{method}` and the other methods" in ranks


def test_scores_table_marks_not_converged_and_bolds_the_best(full):
    section = _section(full["text"], "Per data set scores (label-free ACC %)")
    lines = section.splitlines()
    header = next(ln for ln in lines if ln.startswith("| data set |"))
    cols = [c.strip(" `") for c in header.strip("|").split("|")][1:]
    lf = expected_scores(full["evals"], "label_free", "acc")
    for d in DATASETS:
        cells = [
            c.strip()
            for c in next(ln for ln in lines if ln.startswith(f"| {d} |")).strip("|").split("|")
        ][1:]
        by_method = dict(zip(cols, cells, strict=True))
        cand = {
            m: v
            for (dd, m), v in lf.items()
            if dd == d and m != "all_features" and not math.isnan(v)
        }
        best = max(cand, key=cand.get)
        assert by_method[best].startswith(f"**{100 * cand[best]:.1f}")
        assert sum(c.startswith("**") for c in cells) == 1
    d, method, *_ = NOT_CONVERGED
    row = dict(
        zip(
            cols,
            [
                c.strip()
                for c in next(ln for ln in lines if ln.startswith(f"| {d} |")).strip("|").split("|")
            ][1:],
            strict=True,
        )
    )
    assert row[method].rstrip("*").endswith("†")
    failures = _section(full["text"], "Failures")
    line = next(ln for ln in failures.splitlines() if ln.startswith(f"| `{method}` |"))
    assert f"† {d} (1)" in line


def test_gap_table_is_tuned_minus_label_free(full):
    evals = full["evals"]
    gap = label_gap(load_run(full["results"], full["config"])).set_index("method")
    section = _section(full["text"], "How much does a method owe to the labels?")
    for method in METHODS:
        hand = {}
        for metric in ("acc", "nmi"):
            lf = expected_scores(evals, "label_free", metric)
            tu = expected_scores(evals, "oracle", metric)
            diffs = [
                tu[(d, method)] - lf[(d, method)]
                for d in DATASETS
                if not (math.isnan(lf[(d, method)]) or math.isnan(tu[(d, method)]))
            ]
            hand[metric] = _mean(diffs)
            assert gap.loc[method, f"d_{metric}"] == pytest.approx(hand[metric])
        n = 2 if method == BUDGET[1] else 3
        assert gap.loc[method, "n_acc"] == n
        assert (
            f"| `{method}` | {100 * hand['acc']:+.1f} | {100 * hand['nmi']:+.1f} | {n} |" in section
        )
    settings = {m: sum(s[2] for s in METHODS[m][1]) for m in METHODS}
    assert gap["settings"].to_dict() == settings


def test_run_time_and_fit_counts(full):
    run = load_run(full["results"], full["config"])
    section = _section(full["text"], "Run time")
    for method, (kind, settings) in METHODS.items():
        per_fit = 1 if kind in ("full", "ranking") else len(HS)
        fits = len(DATASETS) * len(settings) * per_fit
        total = 0.0
        for records in full["evals"].values():
            for r in records:
                if r["method"] == method:
                    rows = r["results"][:1] if kind == "ranking" else r["results"]
                    total += sum(row["fit_seconds"] for row in rows)
        line = next(ln for ln in section.splitlines() if ln.startswith(f"| `{method}` |"))
        assert line.rstrip(" |").endswith(f"| {fits}")
        assert run.fits[run.fits["method"] == method]["fit_seconds"].sum() == pytest.approx(total)


def test_label_free_only_says_label_tuned_not_run(tmp_path):
    results, config, _ = make_results(tmp_path, protocols=("label_free",))
    text = benchmark_report(results, config, tmp_path / "b.md", img_dir=tmp_path / "img")
    scope = next(ln for ln in text.splitlines() if ln.startswith("**Scope:**"))
    assert "label-tuned not run" in scope
    assert "The label-tuned protocol was not run" in _section(
        text, "How much does a method owe to the labels?"
    )
    assert "label-tuned" not in _section(text, "Best per data set").split("\n\n", 2)[2]
    assert not (tmp_path / "img" / "benchmark_cd_oracle_acc.png").exists()
    assert (tmp_path / "img" / "benchmark_cd_label_free_acc.png").exists()


def test_partial_results_with_one_data_set(tmp_path):
    results, config, _ = make_results(tmp_path, datasets=("d2",))
    text = benchmark_report(results, config, tmp_path / "b.md", img_dir=tmp_path / "img")
    assert "data sets with results 1 of the config's 4 (missing: d1, d3, d4)" in text
    assert "not applicable" in text  # Friedman needs two data sets


def test_cli_writes_the_report(full, tmp_path, capsys):
    out = tmp_path / "b.md"
    argv = ["benchmark-report", "--results", str(full["results"]), "--config", str(full["config"])]
    assert main(argv + ["--out", str(out), "--img-dir", str(tmp_path / "img")]) == 0
    printed = capsys.readouterr().out
    assert f"wrote {out}" in printed and "data sets with results 3 of the config's 4" in printed
    assert out.read_text().startswith("# UFS-bench")
    assert "How this run was made" not in out.read_text()
    assert (
        main(argv + ["--out", str(out), "--img-dir", str(tmp_path / "img"), "--note", "X y"]) == 0
    )
    assert "**How this run was made:** X y" in out.read_text()


def test_cli_exits_2_on_a_results_dir_without_tables(full, tmp_path, capsys):
    (tmp_path / "empty" / "tables").mkdir(parents=True)
    argv = ["benchmark-report", "--results", str(tmp_path / "empty"), "--config"]
    code = main(argv + [str(full["config"]), "--out", str(tmp_path / "b.md")])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: no per-data-set tables") and err.count("\n") == 1
    assert not (tmp_path / "b.md").exists()


def test_tables_have_the_aggregate_columns(full):
    """The synthetic tables carry what the workflow's tables carry (status, counts)."""
    t = pd.read_csv(full["results"] / "tables" / "d2.csv")
    for col in ("protocol", "status", "n_not_converged", "n_diverged", "n_settings"):
        assert col in t


def test_the_report_opens_with_what_the_tests_support(full):
    section = _section(full["text"], "What the tests support")
    assert "the Friedman test (χ² p = " in section and "which decides" in section
    assert "**Primary view**" in section and "Missing results: one rule per" in section
    assert "What these N can show" in full["text"]  # the resolution, per protocol
    assert "out-rank" not in full["text"]  # never claimed without a test
    assert "## Against the references" in full["text"]
    assert "## How the verdicts move with the rules (sensitivity)" in full["text"]


def test_pairs_are_claimed_only_where_friedman_rejects_and_holm_orders_them():
    """A pair is ordered by the all-pairs Wilcoxon–Holm tests, not by the
    Nemenyi CD: here `top` wins on every one of 12 data sets against `low` (Holm p tiny),
    and three equal-up-to-noise methods give no ordered pair."""
    from ufs.report import answer

    rng = np.random.default_rng(0)
    rows = []
    for i in range(12):
        for m, base in (("top", 0.9), ("mid", 0.5), ("low", 0.1)):
            for h in ("5", "10", "20"):
                v = base + rng.uniform(-0.01, 0.01)
                rows.append(
                    {"dataset": f"d{i}", "protocol": "label_free", "method": m, "h_label": h}
                    | {"acc_mean": v, "nmi_mean": v, "status": "ok"}
                )
    r = ranking.rank_methods(pd.DataFrame(rows), "label_free", "acc")
    tested = answer.pairwise_results([r])[("label_free", "acc")]
    ordered = set(answer.pairwise.ordered_pairs(tested))
    assert ordered == {("top", "mid"), ("top", "low"), ("mid", "low")}
    line = answer.support_lines([r], {}, ("label_free",), {("label_free", "acc"): tested})[2]
    assert answer.claimed_pairs(line) == ordered
    flat = pd.DataFrame(rows)
    flat["acc_mean"] = 0.5 + (flat["acc_mean"] - flat["acc_mean"].round(1))
    null = ranking.rank_methods(flat, "label_free", "acc")
    tested = answer.pairwise_results([null])[("label_free", "acc")]
    line = answer.support_lines([null], {}, ("label_free",), {("label_free", "acc"): tested})[2]
    assert null.pvalue >= 0.05 and "does not reject" in line
    assert answer.claimed_pairs(line) == set()


def test_missing_data_sets_get_a_cost_estimate_checked_on_the_measured_ones(tmp_path):
    """A config data set without results gets the cost model's estimate; the sentence
    gives the held-out ratios of the measured data sets (each predicted by a model fitted
    without it) and the last numeric column is the estimate times the largest of them."""
    from ufs.datasets import get_dataset
    from ufs.report.benchmark_report import load_run, missing_estimate

    # measured: registered data sets with recorded CPU times; missing: jaffe (registered)
    measured = ["wine", "breast_cancer", "digits", "golfs_sim1"]
    out = tmp_path / "results"
    for i, d in enumerate(measured):
        spec = get_dataset(d)
        n, p, c = spec.n_samples, spec.n_features, spec.n_classes
        hs = [2, 3, 4]
        t = 1e-4 * n * p * (1 + i)  # the data sets depart from any power law in n and p
        rows = [
            {
                "h": h,
                "h_label": str(h),
                "per_restart": {m: [0.5, 0.6, 0.7] for m in ("acc", "nmi", "ari", "ne")},
                "fit_seconds": t * h / 9,
                "fit_info": {},
                "fit_status": "ok",
            }
            for h in hs
        ]
        ev = {
            "dataset": d,
            "dataset_base": d,
            "method": "mcfs",
            "pid": "m0",
            "kind": "subset",
            "params": {},
            "label_free": True,
            "in_grid": True,
            "restarts": 3,
            "kmeans_seconds": 0.1,
            "kmeans_cpu_seconds": 1e-3 * n,
            "fit_seconds_total": t,
            "fit_cpu_seconds_total": t,
            "results": rows,
        }
        path = out / "evaluations" / d / "c000.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps({"dataset": d, "evaluations": [ev]}))
        sel = aggregate.select_protocols(aggregate.collect([path], d))
        (out / "tables").mkdir(exist_ok=True)
        cols = [c for c in sel.columns if c != "objective_curve"]
        sel[cols].to_csv(out / "tables" / f"{d}.csv", index=False)
        (out / "data").mkdir(exist_ok=True)
        info = {"n_samples": n, "n_features": p, "n_classes": c}
        (out / "data" / f"{d}.json").write_text(json.dumps(info))
    config = tmp_path / "config.yaml"
    lines = ["protocols: [label_free]", "evaluation: {restarts: 3}", "datasets:"]
    lines += [f"  {d}: {{h: [2, 3, 4]}}" for d in [*measured, "jaffe"]]
    config.write_text("\n".join(lines + ["methods:", "  mcfs: {}"]) + "\n")

    run = load_run(out, config)
    assert run.missing == ["jaffe"]
    est, _model, checked = missing_estimate(run)
    assert sorted(checked["dataset"]) == sorted(measured)
    assert (checked["ratio"] > 0).all() and checked["ratio"].nunique() > 1
    worst = checked["ratio"].max()
    text = benchmark_report(out, config, tmp_path / "benchmark.md", img_dir=tmp_path / "img")
    section = text.split("## Data sets not run yet")[1].split("\n## ")[0]
    assert (
        f"the run's 4 measured data sets took {checked['ratio'].min():.2f}–{worst:.2f} "
        "times their estimate" in section
    )
    row = next(ln for ln in section.splitlines() if ln.startswith("| jaffe"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    total = (est.loc[0, "fit_cpu"] + est.loc[0, "kmeans_cpu"]) / 3600
    assert cells[1] == f"{total:.2f}" and cells[4] == f"{total * worst:.2f}"


def test_fits_timed_before_the_warm_up_are_said_to_carry_its_set_up():
    from types import SimpleNamespace

    from ufs.report.benchmark_report import WARM_UP_COMMIT, _has_warm_up, first_fit_set_up_text

    fits = pd.DataFrame(
        {
            "method": ["all_features", "all_features", "sogfs", "sogfs"],
            "fit_seconds": [0.011, 0.012, 3.0, 4.0],
            "git_commit": ["", "0" * 40, "", ""],
        }
    )
    text = first_fit_set_up_text(SimpleNamespace(fits=fits))
    assert text.startswith("All 4 fits were timed before `ufs.pipeline.warm_up`")
    assert "(`all_features`: median fit under 0.05 s)" in text and "sogfs" not in text
    if not _has_warm_up(WARM_UP_COMMIT):
        pytest.skip("this checkout has no git history to place the commits in")
    fits["git_commit"] = [WARM_UP_COMMIT, f"{WARM_UP_COMMIT}-dirty", "", WARM_UP_COMMIT]
    text = first_fit_set_up_text(SimpleNamespace(fits=fits))
    assert text.startswith("1 of the 4 fits was timed before") and "median fit" not in text
    fits["git_commit"] = WARM_UP_COMMIT
    assert first_fit_set_up_text(SimpleNamespace(fits=fits)) == ""
