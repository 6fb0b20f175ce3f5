"""The absolute h view: the overlay's grid, Snakemake's config merge, the
comparison of the two grids, and the report/archive wiring."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from snakemake.utils import update_config, validate

from ufs.cli import main
from ufs.datasets import get_dataset
from ufs.pipeline.archive import read_archive, write_archive
from ufs.pipeline.config import build_plan, merge_configs
from ufs.pipeline.stability_step import stability_jobs
from ufs.report import absolute_h, sensitivity
from ufs.report.benchmark_report import benchmark_report_from_archive

from .test_benchmark_report import make_results

REPO = Path(__file__).resolve().parents[1]
BASE = REPO / "config" / "experiments" / "benchmark.yaml"
OVERLAY = REPO / "config" / "experiments" / "overrides" / "benchmark_absolute_h.yaml"
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
MIRROR = REPO.parent / "shared" / "datasets"
GRID = [50, 100, 150, 200, 250, 300]


def _load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def test_merge_configs_is_snakemakes_rule():
    base, over = _load(BASE), _load(OVERLAY)
    ours = merge_configs(base, over)
    theirs = copy.deepcopy(base)
    update_config(theirs, over)  # what snakemake --configfile base overlay does
    assert ours == theirs
    assert base == _load(BASE)  # the inputs are not changed
    # a list replaces (the relative spec is a mapping the overlay must not merge into)
    assert ours["datasets"]["ar"]["h"] == GRID
    assert merge_configs({"a": {"b": [1, 2], "c": 1}}, {"a": {"b": [3]}}) == {
        "a": {"b": [3], "c": 1}
    }


@pytest.mark.skipif(not MIRROR.is_dir(), reason="../shared/datasets (the local mirror) is absent")
def test_the_overlay_plans_the_papers_grid_below_p_on_its_own_folder():
    cfg = merge_configs(_load(BASE), _load(OVERLAY))
    validate(cfg, str(SCHEMA))
    cfg["mirror_dir"] = str(MIRROR)
    plan = build_plan(cfg, warn=False)
    hs = {d: list(inst.hs) for d, inst in plan.instances.items()}
    assert len(hs) == 29
    assert hs["ar"] == GRID and hs["lung_discrete"] == GRID
    assert hs["mfeat_fac"] == [50, 100, 150, 200]  # p = 216
    assert hs["palmdata25"] == hs["usps"] == [50, 100, 150, 200, 250]  # p = 256
    for d, grid in hs.items():  # every value of the papers' grid below p, none other
        assert grid == [h for h in GRID if h < get_dataset(d).n_features]
        assert len(grid) >= 3
    assert cfg["protocols"] == ["label_free"]
    assert cfg["output_dir"] != _load(BASE)["output_dir"]
    assert set(plan.settings) == set(cfg["methods"])  # every method, as the benchmark
    # no stability step: it is the benchmark's, on its own grid (ufs.pipeline.stability_step)
    assert not list(stability_jobs(plan, cfg))
    assert list(stability_jobs(plan, {**cfg, "stability": _load(BASE)["stability"]}))


# -- the comparison, on tables whose answer is known ------------------------------------
def _rows(d, m, hs, v, status="ok"):
    return [
        {"dataset": d, "protocol": "label_free", "method": m, "h_label": str(h)}
        | {"acc_mean": (x := v(h) if callable(v) else v), "nmi_mean": x, "status": status}
        for h in hs
    ]


def _tables(datasets, hs, good_gap):
    """``good`` beats ``random`` by about ``good_gap`` on every data set; ``bad`` loses by
    it; ``mid`` and ``all_features`` sit in between. No two differences are equal (ties
    send scipy's signed-rank test to its slow permutation fallback)."""
    rows = []
    for i, d in enumerate(datasets):
        base = 0.3 + 0.01 * i
        rows += _rows(d, "random", hs, base)
        rows += _rows(d, "good", hs, lambda h, b=base, i=i: b + good_gap + 0.001 * i + 1e-5 * h)
        rows += _rows(d, "bad", hs, base - good_gap - 0.0013 * i)
        rows += _rows(d, "mid", hs, base + 0.002 * np.sin(i + 1))
        rows += _rows(d, "all_features", ("all",), base + 0.001 * np.cos(i))
    t = pd.DataFrame(rows)
    t["role"] = np.where(t["method"].isin(["random", "all_features"]), "reference", "method")
    return t


# real data set names (the views look them up): orl and orlraws10p are one family
REAL = ["orl", "orlraws10p", "yale", "jaffe", "umist", "coil20", "imm40", "isolet", "colon"]
REAL += ["srbct", "glioma", "bbc"]


def test_mean_by_h_counts_a_family_once_and_leaves_out_simulations():
    t = _tables([*REAL[:3], "golfs_sim1"], (50, 100), 0.2)
    t.loc[(t["dataset"] == "orl") & (t["method"] == "good"), "acc_mean"] = 0.9
    t.loc[(t["dataset"] == "yale") & (t["method"] == "bad"), "status"] = "not_converged"
    m, status = absolute_h.mean_by_h(t, "acc")
    assert status.loc["bad", 50] == "not_converged" and status.loc["good", 50] == "ok"
    assert list(m.columns) == [50, 100]
    assert m.loc["n", 50] == 2  # orl family and yale; the simulation is not a unit
    orlraws10p, yale = 0.31 + 0.2 + 0.001 + 5e-4, 0.32 + 0.2 + 0.002 + 5e-4  # at h = 50
    assert m.loc["good", 50] == pytest.approx((np.median([0.9, orlraws10p]) + yale) / 2)


def test_the_section_compares_both_grids_on_the_common_data_sets():
    relative = _tables(REAL, (10, 20, 40), 0.2)
    absolute = _tables(REAL[:10], (50, 100, 150), 0.2)
    lines = absolute_h.absolute_h_markdown(relative, absolute, planned=REAL + ["pie"])
    text = "\n".join(lines)
    assert "10 of 13 data sets evaluated; not yet: glioma, bbc, pie" in text
    assert "h ∈ {50, 100, 150}" in text
    # both columns count the same 9 units (orl + orlraws10p are one family)
    assert "| ACC | N | 9 families | 9 families |" in text
    assert "| ACC | better than random | `good` | `good` |" in text
    assert "| ACC | worse than random | `bad` | `bad` |" in text
    assert "ACC, better than random: `good`." in text
    # the descriptive table: one column per h, best method first
    head = next(ln for ln in lines if ln.startswith("| method | h = 50"))
    assert head.count("(N = 9)") == 3
    assert next(ln for ln in lines if ln.startswith("| `")).startswith("| `good`")
    # a flagged fit is marked where its mean appears
    flagged = absolute.assign(
        status=np.where(absolute["method"] == "bad", "degenerate", absolute["status"])
    )
    text = "\n".join(absolute_h.absolute_h_markdown(relative, flagged, planned=REAL))
    bad = next(ln for ln in text.splitlines() if ln.startswith("| `bad` |"))
    assert bad.count("◊") == 3


def test_a_verdict_that_holds_on_one_grid_only_is_named_so():
    relative = _tables(REAL, (10, 20, 40), 0.2)
    absolute = _tables(REAL, (50, 100, 150), 0.2)
    flip = absolute["method"] == "good"
    same = absolute[absolute["method"] == "random"]["acc_mean"].to_numpy()
    absolute.loc[flip, "acc_mean"] = same  # good = random on the absolute grid
    text = "\n".join(absolute_h.absolute_h_markdown(relative, absolute, planned=REAL))
    assert "Run in progress" not in text
    assert "ACC, better than random: none; relative grid only: `good`." in text


def test_the_sensitivity_table_gets_a_row_for_the_other_grid_outside_every_view():
    relative = _tables(REAL, (10, 20, 40), 0.2)
    absolute = _tables(REAL[:10], (50, 100, 150), 0.2)
    plain = sensitivity.sensitivity_markdown(relative)
    more = sensitivity.sensitivity_markdown(relative, other_grids={"absolute_h": absolute})
    rows = [ln for ln in more if ln.startswith("| absolute_h |")]
    assert len(rows) == 2 and "| 9 families |" in rows[0]  # ACC and NMI
    assert not any(ln.startswith("| absolute_h |") for ln in plain)
    assert "not counted in" in more[2]
    # the statements about every view are the same with or without the other grid
    ends = [ln for ln in plain if ln.startswith("Of the primary view")]
    assert ends == [ln for ln in more if ln.startswith("Of the primary view")]


# -- the archive stores the merged config; the report reads the second archive ----------
def test_archive_of_an_overlay_run_and_the_report_that_reads_it(tmp_path, capsys):
    rel_results, rel_config, _ = make_results(tmp_path / "rel")
    abs_results, abs_config, _ = make_results(tmp_path / "abs", datasets=("d1", "d2"))
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text("output_dir: results/abs\nonly_datasets: [d1, d2, d3]\n")
    rel_archive, abs_archive = tmp_path / "rel.tar.xz", tmp_path / "abs.tar.xz"
    write_archive(rel_results, rel_config, rel_archive, commit="abc")
    rc = main(
        [
            "benchmark-archive",
            "--results",
            str(abs_results),
            "--config",
            str(abs_config),
            str(overlay),
            "--out",
            str(abs_archive),
        ]  # fmt: skip
    )
    assert rc == 0
    manifest, _ = read_archive(abs_archive)
    assert manifest["config"]["path"] == f"{abs_config.as_posix()} + {overlay.as_posix()}"
    stored = yaml.safe_load(manifest["config"]["text"])
    assert stored == merge_configs(_load(abs_config), _load(overlay))
    assert manifest["config"]["text"].startswith("# merged as Snakemake merges --configfile")
    text = benchmark_report_from_archive(
        rel_archive,
        tmp_path / "docs" / "b.md",
        img_dir=tmp_path / "img",
        plots=False,
        absolute_h=abs_archive,
        absolute_h_report="[its report](x.md)",
    )
    assert "## The absolute h view (the seed papers' grid)" in text
    # only_datasets is the run's plan: d3 is pending, d4 (not in the slice) is not
    assert "2 of 3 data sets evaluated; not yet: d3." in text
    assert "its own full report: [its report](x.md)" in text
    assert f"from the archive `{abs_archive.as_posix()}`" in text
    without = benchmark_report_from_archive(
        rel_archive, tmp_path / "docs" / "c.md", img_dir=tmp_path / "img", plots=False
    )
    assert "absolute h view" not in without
    # the CLI says what is wrong with a missing second archive, in one line
    rc = main(
        [
            "benchmark-report",
            "--archive",
            str(rel_archive),
            "--absolute-h",
            str(tmp_path / "nope.tar.xz"),
            "--out",
            str(tmp_path / "d.md"),
        ]  # fmt: skip
    )
    assert rc == 2 and "nope.tar.xz" in capsys.readouterr().err
