"""``ufs data list`` / ``ufs data fetch``: where each data set comes from on a machine
without this project's mirror, and fetching a file into the cache, sha256-checked, with
nothing half-written when it fails. Offline: the download is replaced by a local copy."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import pytest
import yaml

import ufs.datasets.availability as A
import ufs.datasets.mirror as M
from ufs.cli import main
from ufs.datasets import get_dataset

REPO = Path(__file__).resolve().parents[1]
BENCHMARK = REPO / "config" / "experiments" / "benchmark.yaml"


def _state_lines(out: str) -> dict[str, str]:
    rows = [ln.split(None, 1) for ln in out.splitlines() if ln and not ln[0].isdigit()]
    return {name: rest for name, rest in rows}


def test_every_data_set_of_the_benchmark_has_a_state_without_the_mirror(tmp_path, capsys):
    """A clone without ``../shared``: the mirror is hidden (an empty folder), and every data
    set of the benchmark's config is named with where it would come from."""
    empty = tmp_path / "no_mirror"
    empty.mkdir()
    cache = tmp_path / "cache"
    code = main(
        [
            "data",
            "list",
            "--config",
            str(BENCHMARK),
            "--mirror-dir",
            str(empty),
            "--cache-dir",
            str(cache),
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    names = set(yaml.safe_load(BENCHMARK.read_text())["datasets"])
    lines = _state_lines(out)
    assert set(lines) == names
    for name, rest in lines.items():
        state = rest.split("  ")[0].strip()
        assert state in A.STATES and state != "in mirror", (name, rest)
    assert lines["wine"].startswith("bundled") and lines["golfs_sim1"].startswith("generated")
    assert lines["yale"].startswith("downloadable") and "https://" in lines["yale"]
    assert out.splitlines()[-1].startswith(f"{len(names)} data sets: ")


def test_states_follow_the_mirror_and_the_cache(tmp_path):
    mirror, cache = tmp_path / "mirror", tmp_path / "cache"
    yale, orl = get_dataset("yale"), get_dataset("orl")
    (mirror / yale.filename).parent.mkdir(parents=True)
    (mirror / yale.filename).write_bytes(b"x")
    remote = A._remote_name(orl)
    (cache / "orl").mkdir(parents=True)
    (cache / "orl" / remote).write_bytes(b"x")
    got = {
        s.name: s
        for s in A.data_states(["yale", "orl", "pie", "20ng", "hars"], mirror=mirror, cache=cache)
    }
    assert got["yale"].state == "in mirror" and got["yale"].available
    assert got["orl"].state == "cached" and got["orl"].available
    assert got["pie"].state == "downloadable" and not got["pie"].available
    assert got["20ng"].state == "manual" and "<mirror>/20NG/20NG.mat" in got["20ng"].detail
    assert got["hars"].state == "OpenML"


@pytest.fixture
def served(tmp_path, monkeypatch):
    """``yale`` with a pinned URL whose bytes a local copy serves (no network)."""
    content = b"MATLAB 5.0 MAT-file, a stand-in for Yale.mat" * 100
    spec = dataclasses.replace(
        get_dataset("yale"),
        url="https://example.org/data/Yale.mat",
        sha256=hashlib.sha256(content).hexdigest(),
        url_sha256="",
        url_member="",
    )
    monkeypatch.setattr(
        A, "get_dataset", lambda name: spec if name == "yale" else get_dataset(name)
    )
    served = {"bytes": content}

    def download(url, dest, **kw):
        assert url == spec.url
        Path(dest).write_bytes(served["bytes"])
        return Path(dest)

    monkeypatch.setattr(M, "download", download)
    return served


def test_fetch_downloads_verifies_and_caches(served, tmp_path, capsys):
    cache = tmp_path / "cache"
    empty = tmp_path / "empty"
    empty.mkdir()
    args = ["data", "fetch", "yale", "--cache-dir", str(cache), "--mirror-dir", str(empty)]
    assert main(args) == 0
    assert "ok, sha256 checked" in capsys.readouterr().out
    cached = cache / "yale" / "Yale.mat"
    assert cached.read_bytes() == served["bytes"]
    assert A.data_state("yale", mirror=empty, cache=cache).state == "cached"
    assert (
        main(["data", "list", "yale", "--cache-dir", str(cache), "--mirror-dir", str(empty)]) == 0
    )
    assert "cached" in capsys.readouterr().out


def test_a_tampered_download_is_refused_and_nothing_is_kept(served, tmp_path, capsys):
    cache = tmp_path / "cache"
    empty = tmp_path / "empty"
    empty.mkdir()
    served["bytes"] = b"not the pinned file"
    args = ["data", "fetch", "yale", "--cache-dir", str(cache), "--mirror-dir", str(empty)]
    assert main(args) == 1
    out = capsys.readouterr().out
    assert "failed" in out and "sha256" in out
    left = list((cache / "yale").iterdir()) if (cache / "yale").exists() else []
    assert left == []  # neither the file nor a partial download


def test_an_unknown_data_set_is_one_line(capsys):
    assert main(["data", "list", "no_such_set"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no_such_set" in err


def test_unreachable_data_sets_are_named_with_what_to_do(tmp_path):
    empty = tmp_path / "m"
    empty.mkdir()
    msg = A.unreachable_message({"20ng": "20ng", "wine": "wine", "yale": "yale"}, mirror=empty)
    assert msg.startswith("data set(s) 20ng cannot be obtained here")
    assert "<mirror>/20NG/20NG.mat" in msg and "offline_only=true" in msg
    assert A.unreachable_message({"wine": "wine", "yale": "yale"}, mirror=empty) is None
    assert A.unreachable_message({"20ng": "20ng"}, mirror=empty, done=["20ng"]) is None
    (empty / "20NG").mkdir()
    (empty / "20NG" / "20NG.mat").write_bytes(b"x")  # placed by hand: reachable
    assert A.unreachable_message({"20ng": "20ng"}, mirror=empty) is None


def test_a_run_that_cannot_reach_a_data_set_stops_before_any_job(tmp_path):
    """Planned, not run: the workflow refuses at plan time, with one message, and no job
    (not even a dry run's) is scheduled."""
    from tests.workflow_helpers import run_snakemake, write_config

    config = {
        "output_dir": "results",
        "resources_dir": "resources",
        "mirror_dir": str(tmp_path / "empty_mirror"),
        "mlflow": {"enabled": False},
        "datasets": {"wine": {"h": [2]}, "20ng": {"h": [10]}},
        "methods": {"random": {}},
    }
    (tmp_path / "empty_mirror").mkdir()
    proc = run_snakemake(tmp_path, write_config(tmp_path, config), "-n", check=False)
    log = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "data set(s) 20ng cannot be obtained here" in log and "20NG/20NG.mat" in log
    assert "Traceback" not in log and "Job stats" not in log
