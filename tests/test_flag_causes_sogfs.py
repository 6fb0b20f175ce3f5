"""The cause of SOGFS's "degenerate" flags (benchmarks/flag_causes/sogfs.md).

SOGFS scales features to unit norm, so the trace term per coordinate axis is at most
λ_max(L_S) ≈ 2 while ``γ||W||_{2,1} ≥ γ·m``: from γ ≈ 1 on ``W`` is ``m = c`` axes. The
authors' own outputs (shared/parity) show exactly ``c`` unit rows at γ = 1 and 100.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from ufs.base import resolved_rank
from ufs.methods import SOGFS
from ufs.parity import default_root
from ufs.preprocessing import standardize


@pytest.mark.parametrize("tag", ["sogfs__g1", "sogfs__g100"])
def test_authors_reference_keeps_exactly_c_rows(tag):
    path = default_root() / "digits" / f"{tag}.npz"
    if not path.is_file():
        pytest.skip(f"parity reference {path} not found")
    W = np.load(path)["W"]
    norms = np.linalg.norm(W, axis=1)
    assert resolved_rank(norms) == W.shape[1] == 10
    assert norms.sum() - W.shape[1] < 1e-6  # ‖W‖₂,₁ = m: coordinate axes


def test_gamma_one_keeps_c_axes_small_gamma_ranks_more():
    rng = np.random.default_rng(0)
    centres = rng.standard_normal((3, 30)) * 2.0
    X = standardize(rng.standard_normal((90, 30)) + np.repeat(centres, 30, axis=0)).X
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        big = SOGFS(10, 3, gamma=1.0, random_state=0).fit(X)
        small = SOGFS(10, 3, gamma=1e-3, random_state=0).fit(X)
    assert big.resolved_rank_ <= 2 * 3
    assert small.resolved_rank_ > big.resolved_rank_
