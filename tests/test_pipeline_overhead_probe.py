"""benchmarks/pipeline_overhead.py: the environment record and the speed probe that make two
runs' wall times comparable (the script's full run is the benchmark itself, not a test)."""

from __future__ import annotations

from importlib import metadata

from tests.workflow_helpers import benchmark_script


def _script():
    return benchmark_script("pipeline_overhead")


def test_environment_names_the_installed_libraries_and_the_cpu():
    env = _script().environment()
    assert env["numpy"] == metadata.version("numpy")
    assert env["matplotlib"] == metadata.version("matplotlib")
    assert env["scikit-learn"] == metadata.version("scikit-learn")
    assert env["python"].count(".") == 2
    assert env["cpu"].endswith("logical cores")


def test_speed_probe_times_both_parts_in_a_process_of_its_own():
    probe = _script().speed_probe()
    assert set(probe) == {"numeric", "python"}
    # each part is a real workload: far above the clock's resolution
    assert all(0.01 < v < 60 for v in probe.values()), probe
