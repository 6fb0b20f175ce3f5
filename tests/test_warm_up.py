"""A process's one-time library costs are not timed as its first fit or k-means run
(``ufs.pipeline.warm_up``), and the fit jobs' commit is read with one git process
(``ufs.pipeline.provenance.git_commit``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ufs.pipeline import steps
from ufs.pipeline.provenance import git_commit

from .test_fit_budget import _evaluate, _task, three_class_data


def _python(code: str) -> str:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    ).stdout


def test_warm_up_reads_the_plugin_list_a_feature_name_check_reads_first():
    pytest.importorskip("narwhals.plugins")
    out = _python(
        "import narwhals.plugins as p\n"
        "from ufs.pipeline.warm_up import warm_up\n"
        "before = p._discover_entrypoints.cache_info().currsize\n"
        "warm_up()\n"
        "print(before, p._discover_entrypoints.cache_info().currsize)\n"
    )
    assert out.split() == ["0", "1"]


def test_fit_and_evaluate_warm_up_before_their_first_timed_call(tmp_path, monkeypatch):
    data = three_class_data(tmp_path)
    events: list = []
    monkeypatch.setattr(steps, "warm_up", lambda kmeans=False: events.append(("warm_up", kmeans)))
    budget = steps.fit_budget
    monkeypatch.setattr(steps, "fit_budget", lambda s: events.append("fit") or budget(s))
    clustering = steps.evaluate_clustering
    monkeypatch.setattr(
        steps, "evaluate_clustering", lambda *a, **k: events.append("kmeans") or clustering(*a, **k)
    )
    tasks = [_task("max_variance", "p1", {}, [None]), _task("random", "p2", {}, [2, 3])]
    steps.fit(data, tasks, tmp_path / "f.npz", tmp_path / "f.json", seed=0)
    assert events == [("warm_up", False), "fit", "fit", "fit"]
    events.clear()
    _evaluate(data, tmp_path, tasks, "f", hs=(2, 3))
    assert events[0] == ("warm_up", True) and events[1:] == ["kmeans"] * 4


def test_the_first_fit_of_a_fresh_process_is_timed_as_the_later_ones(tmp_path):
    """In a fresh process, two identical millisecond fits: the first used to carry ~10 ms
    of scikit-learn's first feature-name check (narwhals reading every installed
    distribution's entry points)."""
    data = three_class_data(tmp_path)
    code = (
        "import json, sys\n"
        "from ufs.pipeline.steps import fit\n"
        "t = lambda pid: {'method': 'max_variance', 'pid': pid, 'params': {}, 'hkey': 'x', "
        "'hs': [None]}\n"
        f"fit({str(data)!r}, [t('a'), t('b'), t('c')], {str(tmp_path / 'f.npz')!r}, "
        f"{str(tmp_path / 'f.json')!r})\n"
        f"info = json.load(open({str(tmp_path / 'f.json')!r}))\n"
        "print(json.dumps([t['fits']['rank']['fit_cpu_seconds'] for t in info['tasks']]))\n"
    )
    first, *later = json.loads(_python(code).splitlines()[-1])
    assert first <= max(later) + 0.004, (first, later)


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.fixture
def repo(tmp_path):
    try:
        _git(tmp_path, "init", "-q")
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("git is not available")
    _git(tmp_path, "config", "user.email", "t@example.org")
    _git(tmp_path, "config", "user.name", "t")
    return tmp_path


def test_git_commit_names_the_commit_and_a_changed_tracked_file(repo):
    git_commit.cache_clear()
    assert git_commit(repo) == ""  # no commit yet
    (repo / "a.txt").write_text("1")
    _git(repo, "add", "a.txt")
    _git(repo, "commit", "-q", "-m", "one")
    sha = _git(repo, "rev-parse", "HEAD")
    git_commit.cache_clear()
    assert git_commit(repo) == sha
    (repo / "untracked.txt").write_text("x")  # untracked files do not count
    git_commit.cache_clear()
    assert git_commit(repo) == sha
    (repo / "a.txt").write_text("2")
    git_commit.cache_clear()
    assert git_commit(repo) == f"{sha}-dirty"
    _git(repo, "add", "a.txt")  # staged, not committed: still dirty
    git_commit.cache_clear()
    assert git_commit(repo) == f"{sha}-dirty"
    (repo / "sub").mkdir()
    git_commit.cache_clear()
    assert git_commit(repo / "sub") == ""  # inside another checkout, not its top folder
    git_commit.cache_clear()
