"""A killed fit job resumes from its checkpoint (ufs.pipeline.checkpoint): the fits it had
finished are taken, not fitted again, and its outputs equal an uninterrupted job's."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ufs.fileio import write_json, write_npz
from ufs.pipeline import checkpoint, steps
from ufs.pipeline.checkpoint import checkpoint_dir
from ufs.pipeline.io import damaged_files
from ufs.pipeline.steps import SKIPPED_REASON, fit

from .test_fit_budget import three_class_data

#: dgufs with a fixed, large number of iterations: over a 1 ms budget at its first h
SLOW_SUBSET = {"max_iter": 1000, "tol": 1e-300}
TIMING = ("fit_seconds", "fit_cpu_seconds", "graph_seconds")


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    return three_class_data(tmp_path_factory.mktemp("checkpoint"))


def _task(method, pid, params, hs):
    return {"method": method, "pid": pid, "params": params, "hkey": "x", "hs": hs}


TASKS = [
    _task("kmeans_ufs", "k", {}, [2, 3, 4]),
    _task("max_variance", "m", {}, [None]),
    _task("laplacian_score", "l", {}, [None]),
]
N_FITS = 5


class Killed(Exception):
    """Stands for the job's process being killed."""


def _counting(monkeypatch, kill_at: int | None = None) -> list[str]:
    """Count the estimators the job makes; the ``kill_at``-th (1-based) kills the job.
    Every finished fit is stored at once (these fits take milliseconds)."""
    monkeypatch.setattr(checkpoint, "STORE_EVERY_CPU_SECONDS", 0.0)
    made: list[str] = []
    real = steps.make_estimator

    def make(method, *args, **kwargs):
        made.append(method)
        if kill_at is not None and len(made) == kill_at:
            raise Killed(f"killed before fit {kill_at}")
        return real(method, *args, **kwargs)

    monkeypatch.setattr(steps, "make_estimator", make)
    return made


def _killed_run(monkeypatch, data, tasks, out, kill_at: int = 4, **kwargs) -> None:
    """A run of the job killed before its ``kill_at``-th fit: it must get that far."""
    _counting(monkeypatch, kill_at=kill_at)
    with pytest.raises(RuntimeError, match=f"killed before fit {kill_at}"):
        fit(data, tasks, out, out.with_suffix(".json"), resume_dir=checkpoint_dir(out), **kwargs)


def _outputs(out: Path, info: Path):
    with np.load(out) as f:
        arrays = {k: f[k] for k in f.files}
    return arrays, json.loads(info.read_text())


def _without_timing(obj):
    if isinstance(obj, dict):
        return {k: _without_timing(v) for k, v in obj.items() if k not in TIMING and k != "_sha256"}
    if isinstance(obj, list):
        return [_without_timing(v) for v in obj]
    return obj


def _assert_same(a, b):
    (arr_a, info_a), (arr_b, info_b) = a, b
    assert arr_a.keys() == arr_b.keys() and arr_a
    for k in arr_a:
        assert arr_a[k].dtype == arr_b[k].dtype
        np.testing.assert_array_equal(arr_a[k], arr_b[k])
    assert _without_timing(info_a) == _without_timing(info_b)


def test_a_killed_job_resumes_with_the_fits_it_had_made(data, tmp_path, monkeypatch, capsys):
    fit(data, TASKS, tmp_path / "ref.npz", tmp_path / "ref.json")
    reference = _outputs(tmp_path / "ref.npz", tmp_path / "ref.json")

    out, info = tmp_path / "job.npz", tmp_path / "job.json"
    resume = checkpoint_dir(out)
    assert resume == tmp_path / "job.partial"
    _killed_run(monkeypatch, data, TASKS, out)  # before the max_variance fit
    assert not out.exists() and not info.exists()  # nothing of the job is written
    assert len(list(resume.glob("*.json"))) == 3  # kmeans_ufs at h = 2, 3, 4

    capsys.readouterr()
    made = _counting(monkeypatch)
    fit(data, TASKS, out, info, resume_dir=resume)
    assert made == ["max_variance", "laplacian_score"]  # only the fits not made before
    _assert_same(_outputs(out, info), reference)
    assert not resume.exists()  # removed once the outputs are written
    log = capsys.readouterr().err
    assert log.count("taken from the checkpoint of an interrupted run") == 3 + 1
    assert f"3 of {N_FITS} fit(s) taken from the checkpoint" in log


def test_a_checkpoint_of_other_inputs_is_not_taken(data, tmp_path, monkeypatch):
    out, info = tmp_path / "job.npz", tmp_path / "job.json"
    resume = checkpoint_dir(out)
    _killed_run(monkeypatch, data, TASKS, out)

    # another seed, another budget, other parameters of a task: nothing is taken, so each
    # run gets as far as its 4th fit again
    for kwargs, tasks in [
        ({"seed": 1}, TASKS),
        ({"budget_seconds": 600}, TASKS),
        ({}, [_task("kmeans_ufs", "k", {"rho": 1.05}, [2, 3, 4]), *TASKS[1:]]),
    ]:
        _killed_run(monkeypatch, data, tasks, out, **kwargs)

    # other data (same shape, other values): nothing taken either
    other = tmp_path / "other.npz"
    with np.load(data) as f:
        arrays = {k: f[k] for k in f.files}
    arrays["X"] = arrays["X"][::-1].copy()
    write_npz(other, **arrays)
    made = _counting(monkeypatch)
    fit(other, TASKS, out, info, resume_dir=resume)
    assert len(made) == N_FITS


def test_a_damaged_stored_fit_is_fitted_again(data, tmp_path, monkeypatch):
    out, info = tmp_path / "job.npz", tmp_path / "job.json"
    resume = checkpoint_dir(out)
    _killed_run(monkeypatch, data, TASKS, out)
    first = sorted(resume.glob("*.npz"))[0]
    first.write_bytes(first.read_bytes()[:40])  # cut short while being written
    made = _counting(monkeypatch)
    fit(data, TASKS, out, info, resume_dir=resume)
    assert made == ["kmeans_ufs", "max_variance", "laplacian_score"]
    fit(data, TASKS, tmp_path / "ref.npz", tmp_path / "ref.json")
    _assert_same(_outputs(out, info), _outputs(tmp_path / "ref.npz", tmp_path / "ref.json"))


def test_a_resumed_budget_stop_still_skips_the_remaining_h(data, tmp_path, monkeypatch):
    """A fit over the time budget is stored with what it implies: the task's other h are
    skipped after a resume as they would have been without it."""
    tasks = [_task("dgufs", "g", SLOW_SUBSET, [2, 3, 4]), _task("max_variance", "m", {}, [None])]
    fit(data, tasks, tmp_path / "ref.npz", tmp_path / "ref.json", budget_seconds=1e-3)
    out, info = tmp_path / "job.npz", tmp_path / "job.json"
    # dgufs h=2 over the budget, h=3/4 skipped, then killed before max_variance
    _killed_run(monkeypatch, data, tasks, out, kill_at=2, budget_seconds=1e-3)
    made = _counting(monkeypatch)
    fit(data, tasks, out, info, budget_seconds=1e-3, resume_dir=checkpoint_dir(out))
    assert made == ["max_variance"]
    result = _outputs(out, info)
    _assert_same(result, _outputs(tmp_path / "ref.npz", tmp_path / "ref.json"))
    fits = result[1]["tasks"][0]["fits"]
    assert fits["h2"]["budget_exceeded"] and fits["h4"]["budget_reason"].startswith(SKIPPED_REASON)


def test_damaged_files_leaves_checkpoints_to_their_job(tmp_path):
    fits = tmp_path / "results" / "fits" / "toy"
    write_json(fits / "dgufs.c000.partial" / "a.json", {"key": "x"})
    write_json(fits / "dgufs.c000.json", {"tasks": []})
    for path in (fits / "dgufs.c000.partial" / "a.json", fits / "dgufs.c000.json"):
        path.write_text(path.read_text()[:5])
    found = damaged_files(tmp_path / "results", tmp_path / "resources")
    assert len(found) == 1 and found[0].startswith(str(fits / "dgufs.c000.json"))


def test_millisecond_fits_are_not_stored(data, tmp_path, monkeypatch):
    """Fits are stored in batches of at least 2 CPU-s: a job of quick fits killed loses less
    than that, and pays no writes (nor the data's hash) for its checkpoint."""
    out, info = tmp_path / "job.npz", tmp_path / "job.json"
    real = steps.make_estimator
    seen: list[bool] = []

    def make(method, *args, **kwargs):
        seen.append(checkpoint_dir(out).exists())
        return real(method, *args, **kwargs)

    monkeypatch.setattr(steps, "make_estimator", make)
    monkeypatch.setattr(checkpoint, "sha256_file", lambda path: pytest.fail("hashed"))
    fit(data, TASKS, out, info, resume_dir=checkpoint_dir(out))
    assert seen == [False] * N_FITS and not checkpoint_dir(out).exists()


def test_fits_are_stored_once_they_add_up(tmp_path):
    """The entries are written when the kept fits reach ``every`` CPU seconds, all of them."""
    (tmp_path / "data.npz").write_bytes(b"data")
    cp = checkpoint.FitCheckpoint(tmp_path / "cp", files={"data": tmp_path / "data.npz"},
                                  inputs={"seed": 0}, every=1.0)  # fmt: skip
    task = _task("dgufs", "g", {}, [2, 3, 4])
    cp.put(task, "h2", {"a": np.arange(3)}, {"fact": {"h": 2}, "skip": ""}, 0.6)
    assert not (tmp_path / "cp").exists() and cp.get(task, "h2") is None
    cp.put(task, "h3", {}, {"fact": {"h": 3}, "skip": "over"}, 0.5)
    arrays, record = cp.get(task, "h2")
    np.testing.assert_array_equal(arrays["a"], np.arange(3))
    assert record == {"fact": {"h": 2}, "skip": ""}
    assert cp.get(task, "h3") == ({}, {"fact": {"h": 3}, "skip": "over"})
    assert cp.get(task, "h4") is None and cp.get({**task, "pid": "x"}, "h2") is None
    cp.clear()
    assert not (tmp_path / "cp").exists()
