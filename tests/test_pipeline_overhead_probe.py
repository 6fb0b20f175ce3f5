"""benchmarks/pipeline_overhead.py: the environment record and the speed probe that make two
runs' wall times comparable (the script's full run is the benchmark itself, not a test)."""

from __future__ import annotations

import time
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


def test_speed_sampler_samples_while_running_and_stops():
    script = _script()
    sampler = script.SpeedSampler(every=0.02, steps=20_000)
    sampler.start()
    deadline = time.monotonic() + 10
    while len(sampler.samples) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    samples = sampler.stop()
    assert len(samples) >= 3 and all(v > 0 for v in samples)
    assert not sampler.is_alive()
    n = len(sampler.samples)
    time.sleep(0.1)
    assert len(sampler.samples) == n  # stopped: no more samples


def test_spread_of_samples():
    spread = _script()._spread
    assert spread([3.0, 1.0, 2.0]) == {"median": 2.0, "min": 1.0, "max": 3.0, "n": 3}
    assert spread([4.0, 1.0, 2.0, 3.0])["median"] == 2.5
    empty = spread([])
    assert empty["n"] == 0 and empty["median"] != empty["median"]  # NaN
