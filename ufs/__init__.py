"""UFS-bench: unsupervised feature selection solvers under one scikit-learn contract."""

import importlib
from typing import TYPE_CHECKING

__version__ = "0.1.0"

# Lazy exports (PEP 562): ``import ufs.tracking`` or ``ufs.report.aggregate`` (the
# MLflow and aggregation jobs) must not pay for scikit-learn (~0.8 s), which importing
# ``ufs.base`` costs. ``from ufs import X`` and ``ufs.X`` still work as before.
_EXPORTS = {
    "ConstantFeaturesWarning": "base",
    "Selection": "base",
    "UFSSelector": "base",
    "EvaluationResult": "evaluation",
    "evaluate_clustering": "evaluation",
    "AllFeatures": "methods",
    "KMeansUFS": "methods",
    "MaxVariance": "methods",
    "RandomFeatures": "methods",
    "standardize": "preprocessing",
    "available_methods": "registry",
    "get_method": "registry",
    "make_estimator": "registry",
}

if TYPE_CHECKING:  # static analysers see the eager imports
    from .base import ConstantFeaturesWarning, Selection, UFSSelector
    from .evaluation import EvaluationResult, evaluate_clustering
    from .methods import AllFeatures, KMeansUFS, MaxVariance, RandomFeatures
    from .preprocessing import standardize
    from .registry import available_methods, get_method, make_estimator


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
        globals()[name] = value
        return value
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:  # a submodule not imported yet (``import ufs; ufs.methods``)
        return importlib.import_module(f".{name}", __name__)
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


__all__ = [
    "UFSSelector",
    "Selection",
    "ConstantFeaturesWarning",
    "KMeansUFS",
    "AllFeatures",
    "RandomFeatures",
    "MaxVariance",
    "standardize",
    "evaluate_clustering",
    "EvaluationResult",
    "available_methods",
    "get_method",
    "make_estimator",
    "__version__",
]
