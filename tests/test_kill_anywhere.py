"""Kill anywhere (``benchmarks/kill_anywhere.py`` with fewer kills): a small benchmark
slice with MLflow on, SIGKILLed with all its jobs at seeded random moments and resumed with
the README's commands, ends equal to an uninterrupted run — every evaluation once, one
MLflow run per setting × h, no temporary file, an archive whose sha256 list verifies; and
the checks see a missing evaluation and a left-over temporary file."""

from __future__ import annotations

import pytest

from .workflow_helpers import benchmark_script

pytestmark = pytest.mark.slow


def test_two_kills_anywhere_resume_to_the_uninterrupted_run(tmp_path):
    script = benchmark_script("kill_anywhere")
    said: list[str] = []
    done = script.kill_anywhere(2, 0, tmp_path, say=said.append)
    assert done["kills"] == 2 and not done["problems"], said
    assert sum("kill " in line and " during: " in line for line in said) == 2
    episode = tmp_path / "episode1"
    assert script.check(episode, tmp_path / "reference") == []
    victim = next((episode / "results" / "evaluations" / "wine").glob("*.json"))
    victim.unlink()
    (episode / "results" / "tables" / ".wine.csv.abc.csv").write_text("half")
    found = script.check(episode, tmp_path / "reference")
    assert any(p.startswith("evaluations: ") for p in found), found
    assert any(p.startswith("temporary files left") for p in found), found
