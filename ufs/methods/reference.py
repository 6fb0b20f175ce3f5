"""Reference selectors every benchmark needs: all features, random features and
maximum variance. They have no paper of their own; they bound what a method must beat.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

from ..base import Selection, UFSSelector

__all__ = ["AllFeatures", "RandomFeatures", "MaxVariance"]


class AllFeatures(UFSSelector):
    """Keep every (non-constant) feature: the papers' "All Features" column.

    ``n_features_to_select`` is accepted for a uniform interface and ignored.
    """

    kind = "full"
    requires_n_clusters = False

    def __init__(self, n_features_to_select: int | None = None):
        self.n_features_to_select = n_features_to_select

    def _fit(self, X: np.ndarray) -> Selection:
        return Selection(order=np.arange(X.shape[1]))


class RandomFeatures(UFSSelector):
    """A uniformly random ranking: a chance-level reference.

    One fit is one draw. A benchmark reports the *distribution* of ``R`` independent draws
    (``draw = 0 .. R-1``, config key ``evaluation.reference_draws``), not one lucky draw.
    With an integer ``random_state`` the draw is seeded by the pair
    ``(random_state, draw)`` (:class:`numpy.random.SeedSequence`), so that draws are
    independent and reproducible; with a ``RandomState``/``Generator`` instance the
    permutation is taken from it and ``draw`` is ignored; ``None`` is unseeded.
    """

    kind = "ranking"
    requires_n_clusters = False

    def __init__(self, n_features_to_select: int = 10, random_state=None, draw: int = 0):
        self.n_features_to_select = n_features_to_select
        self.random_state = random_state
        self.draw = draw

    def _fit(self, X: np.ndarray) -> Selection:
        draw = int(self.draw)
        if draw < 0:
            raise ValueError(f"draw must be >= 0; got {self.draw}")
        seed = self.random_state
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            rng = np.random.default_rng(np.random.SeedSequence([int(seed), draw]))
        elif seed is None:
            rng = np.random.default_rng()
        else:
            rng = check_random_state(seed)
        return Selection(order=rng.permutation(X.shape[1]))


class MaxVariance(UFSSelector):
    """Rank features by their variance on the *raw* (unstandardised) data.

    On z-scored data every variance is 1, so this baseline declares
    ``input_space = "raw"``: the workflow hands it the validated data before scaling.
    Ties go to the lower index.
    """

    kind = "ranking"
    input_space = "raw"
    requires_n_clusters = False

    def __init__(self, n_features_to_select: int = 10):
        self.n_features_to_select = n_features_to_select

    def _fit(self, X: np.ndarray) -> Selection:
        var = X.var(axis=0)
        return Selection(order=np.argsort(-var, kind="stable"), scores=var)
