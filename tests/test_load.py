"""Load test at CI size: ``benchmarks/load_test.py`` (same code) with N = 30 evaluate jobs.

The full benchmark (N = 500) is ``python benchmarks/load_test.py``. Here the workflow runs
2 N + 8 = 68 jobs on 2 cores and every count must be exact:
jobs by rule, benchmark files, and one FINISHED MLflow run per evaluate job with unique
run keys. The fast tests below show that the checks do fail on a wrong count.
"""

from __future__ import annotations

import pytest

from tests.workflow_helpers import benchmark_script

N_CI = 30


def _load_test_module():
    return benchmark_script("load_test")


lt = _load_test_module()


# -- fast: the config builder and the checks ---------------------------------------------------
@pytest.mark.parametrize("n", [1, 7, 500])
def test_config_has_one_evaluate_job_and_one_run_per_setting(n):
    exp = lt.expected_counts(lt.build_config(n))
    assert exp["evaluate"] == exp["fit"] == exp["runs"] == n
    assert len(set(exp["run_keys"])) == n


def test_a_chance_reference_counts_one_run_per_h():
    """Its draws are pooled into one MLflow run per h (ufs.tracking.runs._pooled_draws)."""
    config = lt.build_config(1)
    config["evaluation"]["reference_draws"] = 4
    (dataset,) = config["datasets"]
    config["datasets"][dataset]["h"] = [2, 3]
    config["methods"] = {"random": {}, "all_features": {}}
    exp = lt.expected_counts(config)
    assert exp["runs"] == 4 and len(set(exp["run_keys"])) == 4  # 2 h x (random, all features)
    from ufs.tracking import setting_key

    restarts, seed = config["evaluation"]["restarts"], config["seed"]
    pooled = {
        setting_key(dataset, "random", "draws", h, restarts, seed, "arithmetic") for h in "23"
    }
    assert pooled <= set(exp["run_keys"])


def _consistent(n=3):
    exp = lt.expected_counts(lt.build_config(n))
    rules = {"download": 1, "fit": n, "evaluate": n, "track": 1}
    log = {"finished_by_rule": dict(rules), "planned_by_rule": dict(rules)}
    bench = {"evaluate": {"files": n}}
    mlf = {
        "experiment_found": True,
        "finished": n,
        "run_keys": list(exp["run_keys"]),
        "other_status": {},
    }
    return n, exp, log, bench, mlf


def test_check_passes_on_exact_counts():
    assert lt.check(*_consistent()) == []


@pytest.mark.parametrize(
    "tamper, message",
    [
        (lambda log, bench, mlf: log["finished_by_rule"].update(evaluate=2), "evaluate jobs"),
        (lambda log, bench, mlf: bench["evaluate"].update(files=4), "benchmarks/evaluate"),
        (lambda log, bench, mlf: mlf.update(finished=2), "2 FINISHED runs, expected 3"),
        (
            lambda log, bench, mlf: mlf["run_keys"].__setitem__(0, mlf["run_keys"][1]),
            "more than once",
        ),
        (lambda log, bench, mlf: mlf["run_keys"].__setitem__(0, None), "without a run_key"),
        (lambda log, bench, mlf: mlf["other_status"].update(RUNNING=1), "did not finish"),
        (lambda log, bench, mlf: mlf.update(experiment_found=False), "experiment not found"),
    ],
)
def test_check_fails_on_any_mismatch(tamper, message):
    n, exp, log, bench, mlf = _consistent()
    tamper(log, bench, mlf)
    errors = lt.check(n, exp, log, bench, mlf)
    assert errors, "a wrong count passed the check"
    assert any(message in e for e in errors), errors


def test_parse_log_counts_finished_jobs_by_rule():
    lines = [
        "Job stats:",
        "job          count",
        "---------  -------",
        "fit              2",
        "evaluate         2",
        "total            4",
        "",
        "Finished jobid: 3 (Rule: fit)",
        "Finished jobid: 4 (Rule: fit)",
        "Finished jobid: 1 (Rule: evaluate)",
    ]
    got = lt.parse_log(lines)
    assert got["planned_by_rule"] == {"fit": 2, "evaluate": 2}
    assert got["finished_by_rule"] == {"evaluate": 1, "fit": 2}


# -- slow: the workflow at CI size -----------------------------------------------------------
@pytest.fixture(scope="module")
def load_run(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("load")
    report = lt.run_load_test(workdir, N_CI, cores=2, startup_repeats=0)
    return workdir, report


@pytest.mark.slow
def test_load_counts_are_exact(load_run):
    _, r = load_run
    assert r["returncode"] == 0, "\n".join(r.get("log_tail", []))
    assert r["errors"] == []
    assert r["jobs_by_rule"] == {
        "aggregate_dataset": 1,
        "all": 1,
        "download": 1,
        "evaluate": N_CI,
        "figures_dataset": 1,
        "fit": N_CI,
        "mlflow_init": 1,
        "standardize": 1,
        "summary": 1,
        "track": 1,
    }
    assert r["jobs_total"] == 2 * N_CI + 8
    assert r["per_rule"]["evaluate"]["files"] == N_CI
    assert r["mlflow_finished_runs"] == r["mlflow_unique_run_keys"] == N_CI
    assert r["wall_s"] > 0 and r["jobs_per_min"] > 0 and r["evaluations_per_min"] > 0
    print("\n".join(lt.summary_lines(r)))


@pytest.mark.slow
def test_load_check_fails_when_the_store_loses_or_duplicates_a_run(load_run):
    """The same check against the real store, after removing and after duplicating a run."""
    from mlflow.tracking import MlflowClient

    workdir, r = load_run
    db = workdir / "results" / "mlflow.db"
    experiment = lt.build_config(N_CI)["mlflow"]["experiment"]
    exp_counts = lt.expected_counts(lt.build_config(N_CI))
    log = {"finished_by_rule": r["jobs_by_rule"], "planned_by_rule": r["jobs_planned_by_rule"]}
    bench = {"evaluate": {"files": r["per_rule"]["evaluate"]["files"]}}
    client = MlflowClient(tracking_uri=f"sqlite:///{db}")
    exp_id = client.get_experiment_by_name(experiment).experiment_id
    victim = next(  # a setting's run, not the parent run that groups them
        r for r in client.search_runs([exp_id], max_results=100) if "ufs.parent" not in r.data.tags
    )
    assert lt.check(N_CI, exp_counts, log, bench, lt.mlflow_runs(db, experiment)) == []
    client.delete_run(victim.info.run_id)
    try:
        errors = lt.check(N_CI, exp_counts, log, bench, lt.mlflow_runs(db, experiment))
        assert any(f"{N_CI - 1} FINISHED runs" in e for e in errors), errors
    finally:
        client.restore_run(victim.info.run_id)
    # a second run of the same setting: the same run key and setting key
    keys = {t: victim.data.tags[t] for t in ("run_key", "setting_key")}
    dup = client.create_run(exp_id, tags=keys)
    client.set_terminated(dup.info.run_id, "FINISHED")
    try:
        errors = lt.check(N_CI, exp_counts, log, bench, lt.mlflow_runs(db, experiment))
        assert any("more than once" in e for e in errors), errors
    finally:
        client.delete_run(dup.info.run_id)
    assert lt.check(N_CI, exp_counts, log, bench, lt.mlflow_runs(db, experiment)) == []
