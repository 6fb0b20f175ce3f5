"""The ranking methods as scikit-learn score functions.

``f(X, y=None) -> scores``, one value per feature, **higher is better**, as
:class:`sklearn.feature_selection.SelectKBest` and ``SelectPercentile`` expect::

    from sklearn.feature_selection import SelectKBest
    import ufs.score_functions as sf

    SelectKBest(score_func=sf.laplacian_score, k=20).fit_transform(X)
    SelectKBest(score_func=sf.make_score_function("udfs", n_clusters=3, n_neighbors=10), k=5)

Every registered method of kind ``ranking`` is a module attribute of its registry name
(``sf.laplacian_score``, ``sf.ndfs``, ``sf.udfs``, …; :func:`available` lists them), fitted
with its label-free defaults (the registry's ``defaults``, as the benchmark's label-free
protocol); :func:`make_score_function` fixes other parameters. The
functions are picklable (``functools.partial`` of a module function), so they work inside
a ``Pipeline`` and ``GridSearchCV`` with ``n_jobs``.

Choices, written here and tested (``tests/test_score_functions.py``):

* **The scores are the estimator's ranking**, as ``p − rank`` (the first feature scores
  ``p − 1``, the last ``0``): distinct values, so ``SelectKBest(k)`` selects exactly the
  estimator's first ``k`` features whatever the method's own score scale (some methods
  rank by a score where lower is better, some by row norms of a matrix, some have no score
  at all, and equal raw scores would let scikit-learn's tie-break pick other features). The
  method's own scores stay on the estimator: ``make_estimator(name).fit(X).scores_``.
* **The number of clusters** a method needs (NDFS, UDFS, SPCAFS, …) is fixed with
  ``make_score_function(name, n_clusters=c)``. Without it, and with ``y`` given (scikit-learn
  passes ``y`` to ``score_func`` when ``fit`` got one), ``c`` is the number of distinct
  labels — the one use of the labels, the benchmark's own protocol (k = number of classes,
  ``docs/benchmark.md``); nothing else of ``y`` is used. With neither, a clear error.
* **Subset methods** (K-means UFS, DGUFS, …) choose a subset for one ``h``, not a ranking of
  every feature: they have no score function; use the estimator
  (``make_estimator(name, n_features_to_select=h)``), itself a scikit-learn selector. The
  chance reference ``random`` is left out too: a draw, not a score.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["available", "make_score_function"]

#: ranking methods without a score function: a chance draw is not a score
EXCLUDED = {"random": "a draw of chance, not a score"}


def available() -> list[str]:
    """The registered ranking methods that have a score function (sorted)."""
    from .registry import available_methods, get_method

    return [m for m in available_methods() if get_method(m).kind == "ranking" and m not in EXCLUDED]


def _check_ranking(name: str) -> None:
    from .registry import available_methods, did_you_mean, get_method

    if name not in available_methods():
        raise ValueError(
            f"no score function {name!r}{did_you_mean(name, available())}; available: {available()}"
        )
    if name in EXCLUDED:
        raise ValueError(f"{name!r} has no score function: {EXCLUDED[name]}")
    kind = get_method(name).kind
    if kind != "ranking":
        raise ValueError(
            f"{name!r} is a {kind} method: it selects a subset for one h and ranks no "
            f"feature, so it has no score function; use make_estimator({name!r}, "
            "n_features_to_select=h), a scikit-learn selector itself"
        )


def score(name: str, X, y=None, **params: Any) -> np.ndarray:
    """The scores of ``X``'s features by the ranking method ``name`` (``params``: its
    parameters, ``n_clusters`` included): ``p − rank``, higher is better (module
    docstring)."""
    from .registry import _init_params, get_method, make_estimator

    _check_ranking(name)
    spec = get_method(name)
    context = {"n_clusters", "random_state"}
    # the label-free defaults (the registry's), then what the caller fixed
    method = {**spec.defaults, **{k: v for k, v in params.items() if k not in context}}
    n_clusters = params.get("n_clusters")
    accepted = set(_init_params(spec.cls))
    if n_clusters is None and "n_clusters" in accepted and y is not None:
        n_clusters = int(np.unique(np.asarray(y)).size)  # the benchmark's k = classes
    est = make_estimator(
        name,
        method,
        n_clusters=n_clusters,
        random_state=params.get("random_state", 0),
    )
    try:
        est.fit(X)
    except ValueError as exc:
        if "n_clusters" in str(exc) and n_clusters is None:
            raise ValueError(
                f"score function {name!r} needs the number of clusters: use "
                f"make_score_function({name!r}, n_clusters=c), or give y to fit (its number "
                f"of distinct labels is taken); {exc}"
            ) from None
        raise
    return (est.ranking_.size - est.ranking_).astype(float)


def make_score_function(name: str, /, **params: Any) -> Callable[..., np.ndarray]:
    """``f(X, y=None) -> scores`` of the ranking method ``name`` with ``params`` fixed
    (``n_clusters``, ``random_state`` and the method's own parameters); checked here, so
    that a wrong name or parameter fails when the selector is built, not at fit."""
    from .registry import get_method

    _check_ranking(name)
    get_method(name).check_params(
        {k: v for k, v in params.items() if k not in ("n_clusters", "random_state")}
    )
    f = functools.partial(score, name, **params)
    functools.update_wrapper(f, score)
    f.__name__ = name  # what a Pipeline's repr shows
    return f


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        f = make_score_function(name)
    except ValueError as exc:
        raise AttributeError(str(exc)) from None
    globals()[name] = f
    return f


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(available()))
