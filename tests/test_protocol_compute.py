"""The per-protocol compute table: each setting's recorded fit and k-means CPU, summed by
the protocols that use it."""

from __future__ import annotations

import json

import pytest

from ufs.report.protocol_compute import protocol_compute_rows, read_setting_compute


def _record(dataset, pid, label_free, in_grid, fit_cpu, kmeans_cpu, **extra):
    return {
        "dataset": dataset,
        "dataset_base": dataset,
        "method": "m",
        "pid": pid,
        "params": {},
        "results": [],
        "label_free": label_free,
        "in_grid": in_grid,
        "fit_cpu_seconds_total": fit_cpu,
        "kmeans_cpu_seconds": kmeans_cpu,
        **extra,
    }


def test_each_protocol_sums_the_cpu_of_the_settings_it_uses(tmp_path):
    # a: a tuned data set (default + two grid settings); b: label-free only
    records = {
        "a": [
            _record("a", "d", True, True, 3600.0, 360.0),
            _record("a", "g1", False, True, 7200.0, 360.0),
            _record("a", "g2", False, True, 1800.0, 360.0),
        ],
        "b": [_record("b", "d", True, False, 1800.0, 720.0)],
    }
    files = []
    for d, recs in records.items():
        f = tmp_path / f"{d}.json"
        f.write_text(json.dumps({"evaluations": recs}))
        files.append(f)
    settings = read_setting_compute(files)
    rows = {r[0]: r[1:] for r in protocol_compute_rows(settings)}
    assert rows["label-free (the defaults)"] == ["2", "2", "1.50", "0.30"]
    assert rows["label-tuned (the grid, the defaults included)"] == ["1", "3", "3.50", "0.30"]
    assert rows["label-tuned, beyond the defaults"] == ["1", "2", "2.50", "0.20"]
    assert rows["label-free tuned"][:3] == ["1", "0", "0 (the label-tuned grid's runs)"]
    # a label-free run has the one protocol
    only_free = protocol_compute_rows(settings[~settings["in_grid"]])
    assert [r[0] for r in only_free] == ["label-free (the defaults)"]


def test_a_record_without_fit_cpu_gives_its_wall_time(tmp_path):
    rec = _record("a", "d", True, False, 0.0, 0.0)
    del rec["fit_cpu_seconds_total"], rec["kmeans_cpu_seconds"]
    rec |= {"fit_seconds_total": 36.0, "kmeans_seconds": 72.0}
    (tmp_path / "a.json").write_text(json.dumps({"evaluations": [rec]}))
    s = read_setting_compute([tmp_path / "a.json"])
    assert s[["fit_cpu_s", "kmeans_cpu_s"]].iloc[0].tolist() == pytest.approx([36.0, 72.0])
