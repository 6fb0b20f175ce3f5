"""The cross-data-set benchmark config (config/experiments/benchmark.yaml):
valid, every registered method, every data set that loads offline, the documented
relative h grid, and a workflow dry run of its label-free protocol."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from snakemake.utils import validate

from ufs.datasets import available_datasets, datasets_needing_network, get_dataset
from ufs.pipeline.config import ConfigError, build_plan, relative_h, resolve_h
from ufs.registry import available_methods, get_method

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "config" / "experiments" / "benchmark.yaml"
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
MIRROR = REPO.parent / "shared" / "datasets"
RELATIVE = {"percent": [1, 2, 5, 10, 20], "min": 5, "max": 300}
#: registered offline data sets the config leaves out, each with its reason in a comment
LEFT_OUT = {"dorothea"}


def load() -> dict:
    return yaml.safe_load(CONFIG.read_text())


def test_valid_and_labelled():
    cfg = load()
    validate(cfg, str(SCHEMA))
    assert cfg["protocols"] == ["label_free", "oracle"]
    assert cfg["evaluation"]["restarts"] == 20
    assert cfg["jobs"]["fit_budget_seconds"] == 600
    assert cfg["mlflow"]["experiment"] == "ufs-bench-benchmark"
    assert all(entry["h"] == RELATIVE for entry in cfg["datasets"].values())


def test_every_method_and_every_offline_dataset():
    cfg = load()
    assert sorted(cfg["methods"]) == sorted(available_methods())
    offline = set(available_datasets()) - set(datasets_needing_network(str(MIRROR)))
    if not MIRROR.is_dir():  # without the mirror only bundled/simulated sets are offline
        offline = {d for d in available_datasets() if get_dataset(d).source != "url"}
        offline -= set(datasets_needing_network(None))
        assert offline <= set(cfg["datasets"])
    else:
        assert set(cfg["datasets"]) == offline - LEFT_OUT
    assert LEFT_OUT <= set(available_datasets()) and not LEFT_OUT & set(cfg["datasets"])
    text = CONFIG.read_text()
    for name in LEFT_OUT:  # the config says why
        assert f"# Left out: {name} (" in text, name
    for manifest, count in (
        (MIRROR / "MANIFEST.tsv", 27),
        (MIRROR / "PMLB" / "MANIFEST.tsv", 18),
        (MIRROR / "Extended" / "MANIFEST.tsv", 28),
    ):
        if manifest.exists():  # every file of the mirror is a data set of the benchmark
            rows = manifest.read_text().splitlines()[1:]
            names = [ln.split("\t")[0] for ln in rows if ln.strip()]
            assert len(names) == count, manifest
            registered = {n.lower().replace("-", "_") for n in names}
            assert registered <= set(cfg["datasets"]) | LEFT_OUT, manifest


@pytest.mark.parametrize(
    ("p", "expected"),
    [
        (1024, [10, 20, 51, 102, 205]),
        (325, [5, 7, 16, 33, 65]),  # 32.5 rounds half up
        (64, [5, 6, 13]),  # 1 % and 2 % clip to 5; equal values once
        (13, [1, 3]),  # min 5 would leave one h: the lower clip drops to 1
        (30, [1, 2, 3, 6]),  # min 5 would leave 5, 6
        (10304, [103, 206, 300]),  # 10 % and 20 % clip to 300
        (5, [4]),  # below p: h = p - 1 at most (lowering the clip gives no more values)
    ],
)
def test_relative_h(p, expected):
    assert relative_h(RELATIVE, p) == expected
    assert all(1 <= h < p for h in relative_h(RELATIVE, p))


def test_relative_h_needs_p_and_consistent_bounds():
    with pytest.raises(ConfigError, match="number of features"):
        resolve_h(RELATIVE, None)
    assert resolve_h([3, 4], None) == [3, 4]
    bad = {
        "datasets": {"wine": {"h": {"percent": [10], "min": 9, "max": 5}}},
        "methods": {"random": {}},
    }
    with pytest.raises(ConfigError, match="max=5 is smaller than min=9"):
        build_plan(bad)


def test_plan_resolves_the_grid_per_dataset():
    cfg = {**load(), "mirror_dir": str(MIRROR), "only_datasets": ["wine", "digits", "golfs_sim1"]}
    plan = build_plan(cfg, warn=False)
    assert {d: list(i.hs) for d, i in plan.instances.items()} == {
        "wine": [1, 3],
        "digits": [5, 6, 13],
        "golfs_sim1": [10, 20, 50, 100, 200],
    }


def test_label_free_protocol_runs_no_grid_setting():
    cfg = {**load(), "mirror_dir": str(MIRROR), "only_datasets": ["wine", "golfs_sim1"]}
    both = build_plan(cfg, warn=False)
    free = build_plan({**cfg, "protocols": ["label_free"]}, warn=False)
    tuned = build_plan({**cfg, "protocols": ["oracle"]}, warn=False)
    draws = cfg.get("evaluation", {}).get("reference_draws", 30)
    for m in cfg["methods"]:
        if get_method(m).draws:  # a chance reference: its draws, never tuned, in both
            assert [s.label_free for s in free.settings[m]] == [True] * draws
            assert not any(s.in_grid for s in tuned.settings[m] + free.settings[m])
            continue
        assert [s.label_free for s in free.settings[m]] == [True]
        assert not any(s.in_grid for s in free.settings[m])  # no tuned rows at all
        assert all(s.in_grid for s in tuned.settings[m])
        assert {s.pid for s in free.settings[m]} <= {s.pid for s in both.settings[m]}
    assert free.n_tasks() < tuned.n_tasks() < both.n_tasks() + 1
    with pytest.raises(ConfigError, match="protocols"):
        build_plan({**cfg, "protocols": ["labels"]}, warn=False)


@pytest.mark.skipif(not MIRROR.is_dir(), reason="the dataset mirror ../shared/datasets is absent")
def test_workflow_dry_run(tmp_path):
    """`snakemake -n` of the label-free protocol on every data set: the plan, the rules
    and the relative h grid fit together (nothing is run)."""
    out = tmp_path / "bench"
    cmd = [
        sys.executable, "-m", "snakemake", "-n", "--quiet", "rules", "--cores", "2",
        "--directory", str(REPO), "--configfile", str(CONFIG),
        "--config", f"output_dir={out}", f"mirror_dir={MIRROR}", "protocols=[label_free]",
    ]  # fmt: skip
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    counts = {}
    for line in res.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            counts[parts[0]] = int(parts[1])
    cfg = load()
    assert counts["standardize"] == len(cfg["datasets"])
    assert counts["aggregate_dataset"] == counts["figures_dataset"] == len(cfg["datasets"])
    assert counts["fit"] == counts["evaluate"] > len(cfg["datasets"])
