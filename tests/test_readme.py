"""The README's library snippets run as written (issue 39: one used an undefined X, one
omitted a required parameter, one named the per-iteration history as the objective)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

README = Path(__file__).resolve().parents[1] / "README.md"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_the_library_snippet_runs_and_says_what_it_returns():
    blocks = _python_blocks()
    assert blocks, "the README has no python block"
    scope: dict = {}
    for block in blocks:
        exec(compile(block, str(README), "exec"), scope)  # noqa: S102 - our own README
    assert scope["X5"].shape == (178, 5)
    assert np.isscalar(scope["sel"].selection_objective_)
    assert scope["mcfs"].get_support().sum() == 3  # the comment's "rounded down: 3"
    assert len(scope["lap"].feature_order_) == 13


def test_the_names_the_readme_imports_exist():
    import ufs

    for name in ("AllFeatures", "RandomFeatures", "MaxVariance", "KMeansUFS", "make_estimator"):
        assert hasattr(ufs, name), name


def _primary_row(report: str, section: str) -> dict[str, str]:
    """The primary view's row of the sensitivity table of ``section`` (e.g. "label-free ACC")
    in docs/benchmark.md, column -> cell."""
    part = report.split(f"\n**{section}**\n", 1)[1]  # the sensitivity table's block
    lines = [ln for ln in part.splitlines() if ln.startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    for ln in lines[2:]:
        cells = [c.strip() for c in ln.strip("|").split("|")]
        if cells[0] == "primary":
            return dict(zip(header, cells, strict=True))
    raise AssertionError(f"no primary row under {section}")


def test_the_benchmark_findings_the_readme_quotes_are_the_reports():
    """Issue 39: the README leads with what the archived benchmark found; those sentences
    must be the report's (docs/benchmark.md, regenerated from the archive and checked byte
    for byte by tests/test_verdicts.py), and quote no count of fits the run makes."""
    readme = README.read_text()
    report = (README.parent / "docs" / "benchmark.md").read_text()
    row = _primary_row(report, "label-free ACC")
    assert row["N"] == "24 families" and "counted as 24 independent families" in readme
    assert row["better than all features"] == "none"
    assert "**no method is better\nthan using all features**" in readme
    assert row["better than random"] == "`mcfs`"
    assert "only **MCFS** is better than the expected random subset" in readme
    # the run's failure counts come from the run, not from the README
    assert re.search(r"\d+ of \d+ fits", readme) is None
