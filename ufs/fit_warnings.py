"""The warnings a fit can raise to say that its answer is not the method's own (a leaf
module: :mod:`ufs.base`, :mod:`ufs.linalg` and :mod:`ufs.eigen` all raise them, so they
live below all three; ``ufs.base`` re-exports them)."""

from __future__ import annotations

__all__ = ["DegenerateFitWarning", "RoundoffSolveWarning"]


class DegenerateFitWarning(UserWarning):
    """The fit's answer is decided by round-off or by a trivial rule, not by the method's
    model (the workflow marks such fits ``degenerate``, ◊)."""


class RoundoffSolveWarning(DegenerateFitWarning):
    """A solve that round-off defeated was finished another way, and its answer is one of
    many that the exact problem allows: a linear solve by a floored eigendecomposition
    (:class:`ufs.linalg.FlooredSPDFactor`), or eigenpairs in a repeated eigenvalue whose
    copies certified Lanczos could not collect above the dense limit
    (:func:`ufs.eigen.extreme_eigenvectors`). The whole fit is marked ``degenerate``, at
    every ``h`` (``ufs.pipeline.status.is_degenerate`` matches this class's name)."""
