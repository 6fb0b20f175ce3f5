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
