"""Laplacian Score against Cai's ``LaplacianScore.m`` on the stored heat-kernel graph."""

from ...methods import LaplacianScore
from ..core import Case


def _build(inputs, ref):
    est = LaplacianScore(
        10, n_neighbors=inputs["n_neighbors"], weight="heat", sigma=inputs["sigma"]
    )
    return est, {"graph": inputs["W"]}


def _scores_agree(est, inputs, ref) -> list[str]:
    # Cai returns 1 − L_r; ours stores the Laplacian score L_r (smaller is better)
    import numpy as np

    ours = -np.asarray(est.scores_)  # scores_ = −L_r
    diff = float(np.max(np.abs((1.0 - ours) - ref.scores)))
    return [] if diff <= 1e-10 else [f"scores differ from Cai's 1 − L_r by {diff:.3g}"]


CASES = [
    Case(
        "lapscore",
        "laplacian_score",
        _build,
        exact_ranking=True,
        min_overlap=1.0,
        check=_scores_agree,
        note="deterministic: same ranking and Cai's scores 1 − L_r to 1e-10",
    )
]
