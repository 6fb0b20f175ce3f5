"""The paper-reproduction configs in ``config/experiments/``: valid under the schema,
consistent conventions, the paper's datasets, and a plan that builds (when every
dataset and method they name is registered)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from snakemake.utils import validate

from ufs.datasets import available_datasets, get_dataset
from ufs.pipeline.config import build_plan, merge_configs
from ufs.registry import available_methods

REPO = Path(__file__).resolve().parents[1]
EXPERIMENTS = REPO / "config" / "experiments"
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
PAPERS = ["kmeans_ufs", "dgufs", "golfs", "spcafs", "fsbc"]
#: runs behind a paper's figures rather than its tables
FIGURE_RUNS = ["kmeans_ufs_sensitivity"]

#: h grid of each paper (see the comments in each config)
H_GRID = {
    "kmeans_ufs": list(range(50, 301, 50)),
    "dgufs": list(range(50, 301, 50)),
    "golfs": list(range(10, 151, 10)),
    "spcafs": list(range(10, 101, 10)),
    "fsbc": list(range(20, 201, 20)),
}


def load(paper: str) -> dict:
    return yaml.safe_load((EXPERIMENTS / f"{paper}.yaml").read_text())


def test_one_config_per_paper():
    # and the cross-data-set benchmark (tests/test_benchmark_config.py)
    assert sorted(p.stem for p in EXPERIMENTS.glob("*.yaml")) == sorted(
        PAPERS + FIGURE_RUNS + ["benchmark"]
    )
    readme = (EXPERIMENTS / "README.md").read_text()
    for paper in PAPERS + FIGURE_RUNS:
        assert f"{paper}.yaml" in readme


def test_kmeans_ufs_sensitivity_is_the_papers_figure_3_grid():
    """§V-C: μ⁰ from {10^-6, 10^-3, ..., 10^6}, ρ from {1.0001, 1.01, 1.1, 10, 100}, h = 50
    (Fig. 4's), on offline data sets, one plan of 5 × 5 settings plus the default."""
    cfg = load("kmeans_ufs_sensitivity")
    validate(cfg, str(SCHEMA))
    assert cfg["output_dir"] == "results/kmeans_ufs_sensitivity"
    assert cfg["mlflow"]["experiment"] == "ufs-bench-kmeans_ufs_sensitivity"
    assert cfg["evaluation"]["restarts"] == 20
    grid = cfg["methods"]["kmeans_ufs"]["grid"]
    assert grid == {"mu0": [1e-6, 1e-3, 1.0, 1e3, 1e6], "rho": [1.0001, 1.01, 1.1, 10.0, 100.0]}
    assert all(entry["h"] == [50] for entry in cfg["datasets"].values())
    assert not any(get_dataset(d).needs_network for d in cfg["datasets"])
    plan = build_plan(cfg)
    settings = {(t.method, t.pid) for ts in plan.chunks("umist").values() for t in ts}
    assert len(settings) == 26  # the grid and the label-free default (0.1, 1.05)


@pytest.mark.parametrize("paper", PAPERS)
def test_schema_and_conventions(paper):
    cfg = load(paper)
    # a mirror is the machine's (UFS_MIRROR), never the experiment's
    assert "mirror_dir" not in cfg and "offline_only" not in cfg
    validate(cfg, str(SCHEMA))
    assert cfg["output_dir"] == f"results/{paper}"
    assert cfg["mlflow"]["experiment"] == f"ufs-bench-{paper}"
    assert cfg["evaluation"]["restarts"] == 20
    expected_nmi = {"spcafs": "max", "golfs": "geometric"}.get(paper, "arithmetic")
    assert cfg["evaluation"]["nmi_average"] == expected_nmi
    for name, entry in cfg["datasets"].items():
        assert entry["h"] == H_GRID[paper], name
    for name, entry in cfg["methods"].items():
        for param, values in ((entry or {}).get("grid") or {}).items():
            assert all(isinstance(v, float) for v in values), f"{name}.{param}"


@pytest.mark.parametrize("paper", PAPERS)
def test_datasets_are_the_papers(paper):
    """The config uses exactly the registered datasets that name this paper."""
    cfg = load(paper)
    missing = sorted(set(cfg["datasets"]) - set(available_datasets()))
    if missing:
        pytest.skip(f"datasets not registered yet: {missing}")
    registered = {d for d in available_datasets() if paper in get_dataset(d).papers}
    assert set(cfg["datasets"]) == registered


@pytest.mark.parametrize("paper", PAPERS)
def test_plan_builds(paper):
    cfg = load(paper)
    missing = sorted(set(cfg["datasets"]) - set(available_datasets())) + sorted(
        set(cfg["methods"]) - set(available_methods())
    )
    if missing:
        pytest.skip(f"not registered yet: {missing}")
    plan = build_plan(cfg)
    assert set(plan.settings) == set(cfg["methods"])
    reps = {name: entry.get("replicates", 1) for name, entry in cfg["datasets"].items()}
    assert len(plan.instances) == sum(reps.values())


@pytest.mark.parametrize(
    "override", sorted((EXPERIMENTS / "overrides").glob("*.yaml")), ids=lambda p: p.stem
)
def test_overrides_apply_to_their_paper(override):
    """Each override names its paper (``reproduction_*``: every paper's run), only touches
    entries that config has, and the merge validates and plans."""
    configs = sorted([*PAPERS, "benchmark"], key=len, reverse=True)
    if override.stem.startswith("reproduction_"):
        papers = list(PAPERS)
    else:
        papers = [p for p in configs if override.stem.startswith(p + "_")][:1]
    assert papers, override.name
    over = yaml.safe_load(override.read_text())
    for paper in papers:
        base = load(paper)
        for section, entries in over.items():
            if isinstance(entries, dict):  # a section: only entries the config has
                assert set(entries) <= set(base[section]), f"{override.name}: unknown {section}"
        cfg = merge_configs(base, over)
        validate(cfg, str(SCHEMA))
        plan = build_plan(cfg)
        ran = set(cfg.get("only_methods") or cfg["methods"]) | set(plan.kept_references)
        assert set(plan.settings) == ran
