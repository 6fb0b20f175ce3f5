"""Config validation: bad configs fail before any job runs, naming the offending key;
static checks of the workflow (lint; the conda envs: tests/test_envs.py)."""

from __future__ import annotations

import copy
import re
import subprocess
import sys

import pytest
import yaml

from tests.workflow_helpers import REPO, TINY, run_snakemake, write_config
from ufs.pipeline.config import ConfigError, build_plan


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda c: c["methods"].update(nosuch={}), "methods.nosuch"),
        (lambda c: c["datasets"].update(nosuch={"h": [2]}), "datasets.nosuch"),
        (lambda c: c["datasets"]["wine"].update(h=[13]), "datasets.wine.h"),
        (lambda c: c["datasets"]["wine"].update(h=[50]), "datasets.wine.h"),
        (
            lambda c: c["methods"].update(kmeans_ufs={"grid": {"lambda_": [1.0]}}),
            "methods.kmeans_ufs.grid",
        ),
        (lambda c: c["datasets"]["wine"].update(replicates=2), "datasets.wine.replicates"),
    ],
)
def test_semantic_errors_name_the_key(mutate, message):
    cfg = copy.deepcopy(TINY)
    mutate(cfg)
    with pytest.raises(ConfigError, match=re.escape(message)):
        build_plan(cfg)


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda c: c["methods"].update(nosuch={}), "methods.nosuch"),
        (lambda c: c["datasets"]["wine"].update(h=[13]), "datasets.wine.h"),
        (lambda c: c["datasets"]["wine"].update(h=[0]), "minimum"),
        (lambda c: c["evaluation"].update(restarts=-1), "restarts"),
        (lambda c: c["methods"].update(random={"grid": {"alpha": [1.0]}}), "methods.random.grid"),
        (lambda c: c.update(bogus_key=1), "bogus_key"),
        # the CPU timer overflowed with an error naming no key
        (lambda c: c["jobs"].update(fit_budget_seconds=1e10), "fit_budget_seconds"),
        # a path out of the output directory
        (lambda c: c.update(published="../../etc"), "published"),
        (lambda c: c["evaluation"].update(reference_draws=0), "reference_draws"),
    ],
)
def test_snakemake_refuses_bad_config_before_any_job(tmp_path, mutate, message):
    cfg = copy.deepcopy(TINY)
    mutate(cfg)
    path = write_config(tmp_path, cfg)
    proc = run_snakemake(tmp_path, path, "-n", check=False)
    assert proc.returncode != 0
    assert message in proc.stdout + proc.stderr
    assert not (tmp_path / "results").exists()


def test_duplicate_keys_are_refused_at_any_depth(tmp_path):
    # the last of two definitions won silently
    from ufs.pipeline.config import check_duplicate_keys

    top = tmp_path / "top.yaml"
    top.write_text("seed: 0\nmethods: {random: {}}\nseed: 1\n")
    nested = tmp_path / "nested.yaml"
    nested.write_text("datasets:\n  wine: {h: [2]}\n  digits: {h: [5]}\n  wine: {h: [4]}\n")
    with pytest.raises(ConfigError, match=r"key 'seed' is defined twice \(lines 1 and 3\)"):
        check_duplicate_keys(top)
    with pytest.raises(ConfigError, match=r"key 'wine' is defined twice \(lines 2 and 4\)"):
        check_duplicate_keys(nested)
    ok = tmp_path / "ok.yaml"
    ok.write_text(yaml.safe_dump(TINY))
    check_duplicate_keys(ok)
    cfg = tmp_path / "dup.yaml"
    cfg.write_text(yaml.safe_dump(TINY) + "seed: 3\n")
    proc = run_snakemake(tmp_path, cfg, "-n", check=False)
    assert proc.returncode != 0 and "defined twice" in proc.stdout + proc.stderr


def test_default_config_and_tiny_config_are_valid():
    default = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    plan = build_plan(default)
    assert plan.instances and plan.settings
    build_plan(TINY)


def test_snakemake_lint_is_clean():
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--lint"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Lints for" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr


def test_offline_only_skips_unavailable_datasets(tmp_path):
    cfg = copy.deepcopy(TINY)
    cfg["datasets"]["lung"] = {"h": [10]}  # registered, needs the network
    cfg["mirror_dir"] = str(tmp_path)  # an empty mirror
    with pytest.raises(ConfigError):
        build_plan({**cfg, "datasets": {"lung": {"h": [10]}}, "offline_only": True})
    plan = build_plan({**cfg, "offline_only": True})
    assert plan.skipped == ["lung"] and "lung" not in plan.instances
    assert "lung" in build_plan(cfg).instances


def test_unknown_names_suggest_the_closest_valid_one():
    cfg = copy.deepcopy(TINY)
    cfg["methods"]["laplacian"] = {}
    with pytest.raises(ConfigError, match="did you mean 'laplacian_score'"):
        build_plan(cfg)
    cfg = copy.deepcopy(TINY)
    cfg["datasets"]["wines"] = {"h": [2]}
    with pytest.raises(ConfigError, match="did you mean 'wine'"):
        build_plan(cfg)


def test_every_rule_says_what_it_does():
    """A ``message:`` on every rule (but the ``all`` target), so that the console
    names the data set, methods and h instead of ``fit chunk=c000``."""
    import re

    missing = []
    for smk in sorted((REPO / "workflow" / "rules").glob("*.smk")):
        blocks = re.split(r"^(\s*)rule (\w+):", smk.read_text(), flags=re.M)[1:]
        for indent, name, body in zip(blocks[::3], blocks[1::3], blocks[2::3], strict=True):
            own = re.split(rf"^{indent}\S", body, maxsplit=1, flags=re.M)[0]
            if name != "all" and not re.search(r"^\s+message:", own, flags=re.M):
                missing.append(f"{smk.name}: {name}")
    assert not missing, missing
