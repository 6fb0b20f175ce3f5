"""The estimator contract every UFS method follows.

A selector is a scikit-learn estimator (``BaseEstimator`` + ``SelectorMixin``) with
``fit(X)`` on an ``n_samples × n_features`` array. The papers write data as
``p × n``; each method converts at its boundary and says so in its docstring.

Kinds (class attribute ``kind``):

* ``"ranking"`` – one fit scores every feature; any ``h`` is a prefix of
  ``feature_order_``. The workflow fits once per parameter setting and slices per h.
* ``"subset"`` – the fit depends on ``h`` (ℓ2,0-constrained models); the workflow fits
  once per ``h``.
* ``"full"`` – a reference that keeps every feature (the papers' "All Features").

Constant features (one rule for every method): a zero-variance feature carries no
cluster information and cannot be standardised, so it is removed before the method
sees the data, placed after every informative feature in ``feature_order_`` (by index)
and never selected; ``n_features_to_select`` may not exceed the number of non-constant
features. One :class:`ConstantFeaturesWarning` per fit names the dropped features (column
names after a fit on a DataFrame with string column names, else indices) and points at
the line that called ``fit`` (or ``fit_transform``, a pipeline's ``fit``: the first frame
outside this module and scikit-learn).

``n_features_to_select`` is an integer (a number of features) or, as in scikit-learn's
``RFE``, a float in ``(0, 1]``: a fraction of the non-constant features,
``max(1, floor(fraction · n_informative))`` (:func:`ufs.validation.fraction_to_count`;
constant features do not count, so ``1.0`` selects every non-constant feature).

One cluster (``n_clusters=1``) is accepted by every method that takes ``n_clusters``:
each model is defined for ``c = 1`` — its cluster indicator, pseudo-label or embedding
matrix simply has one column — and none of them needs a special case. With one cluster
there is no between-cluster structure, so the selection follows the single leading
direction the method extracts (K-means UFS: ``A = σ₁² p₁p₁ᵀ``, the loadings of the first
principal component; the spectral methods: one non-trivial eigenvector of the sample
graph). Method-specific limits still apply (UDFS needs ``n_features > n_clusters``).

scikit-learn conventions: ``fit`` accepts any array-like or pandas DataFrame; a
DataFrame with string column names sets ``feature_names_in_`` and
:meth:`get_feature_names_out` returns the selected column names (so
``set_output(transform="pandas")`` works). Complex data, no columns and entries that are
not numbers are refused with scikit-learn's messages (:func:`check_input`).
"""

from __future__ import annotations

import numbers
import os
import sys
import warnings
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import scipy.sparse as sp
import sklearn
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin
from sklearn.utils.validation import check_is_fitted

try:  # scikit-learn >= 1.6
    from sklearn.utils.validation import _check_feature_names
except ImportError:  # pragma: no cover - scikit-learn 1.4/1.5

    def _check_feature_names(estimator, X, *, reset):
        estimator._check_feature_names(X, reset=reset)


from .fit_warnings import DegenerateFitWarning, RoundoffSolveWarning
from .validation import (
    check_data,
    check_n_clusters,
    check_n_features_to_select,
    constant_feature_mask,
)

__all__ = [
    "UFSSelector",
    "Selection",
    "ConstantFeaturesWarning",
    "DegenerateFitWarning",
    "RoundoffSolveWarning",
    "NonNumericDataError",
    "resolved_rank",
    "ROUNDOFF_RTOL",
    "check_input",
]

KINDS = ("ranking", "subset", "full")


class ConstantFeaturesWarning(UserWarning):
    """Constant features were found; they are excluded from selection (the message names
    them; one warning per fit)."""


#: a constant-features warning lists at most this many features, then "… and N more"
MAX_NAMED_FEATURES = 10
#: frames a warning of ``fit`` skips to reach its caller: this module and scikit-learn
#: (``fit_transform``, pipelines and ``set_output`` wrappers call ``fit`` from there)
_INTERNAL_FILES = (
    os.path.realpath(__file__),
    os.path.join(os.path.dirname(os.path.realpath(sklearn.__file__)), ""),
)


def _caller_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning issued by the calling function point at the
    first frame outside this module and scikit-learn: the user's line, whether it called
    ``fit`` directly or through ``fit_transform`` or a pipeline."""
    frame = sys._getframe(1)  # the function that warns: stacklevel 1
    level = 1
    while frame.f_back is not None and os.path.realpath(frame.f_code.co_filename).startswith(
        _INTERNAL_FILES
    ):
        frame = frame.f_back
        level += 1
    return level


def _constant_features_message(constant: np.ndarray, names: np.ndarray | None) -> str:
    """``"2 constant feature(s) excluded from selection (columns 'b', 'd')"``: the names
    (``names``, a fit on a DataFrame) or indices of the constant features, at most
    :data:`MAX_NAMED_FEATURES` of them."""
    idx = np.flatnonzero(constant)
    shown = idx[:MAX_NAMED_FEATURES]
    labels = [repr(str(names[i])) for i in shown] if names is not None else [str(i) for i in shown]
    what = "columns" if names is not None else "indices"
    more = f", … and {idx.size - shown.size} more" if idx.size > shown.size else ""
    return (
        f"{idx.size} constant feature(s) excluded from selection ({what} {', '.join(labels)}{more})"
    )


#: a row weight below this fraction of the largest is not a ranking signal: the ℓ2,p methods
#: re-weight rows by ``(||w_i||² + ε)^{(p−2)/2}`` with ``ε = 1e-8``, so a row under
#: ``√ε = 1e-4`` (their top rows have norm ~1) is sized by the smoothing constant and by
#: round-off, not by the model. Measured (label-free defaults, z-scored data): SPCAFS keeps
#: exactly c − 1 rows above it (the rest 1e-6-1e-5: Yale 14 of 1 024, GLIOMA 3 of 4 434),
#: SOGFS about c (Yale 18), UDFS 63 on Yale and 4 on GLIOMA, NDFS 572 / 178; RUFS, EUFS,
#: NSSLFS keep every feature.
ROUNDOFF_RTOL = 1e-4


def resolved_rank(scores: np.ndarray, power: float = 1.0, rtol: float = ROUNDOFF_RTOL) -> int:
    """How many features a ranking by row weights orders above round-off: the number of
    scores whose ``1/power``-th root (``power = 2`` for squared row norms) exceeds
    ``rtol`` times the largest. Features below are tied at round-off level (an ℓ2,p
    penalty collapsed them, or they are exactly 0): their order is decided by rounding
    or by feature index, not by the method."""
    w = np.asarray(scores, dtype=np.float64)
    w = np.where(np.isfinite(w), np.maximum(w, 0.0), 0.0) ** (1.0 / power)
    top = float(w.max()) if w.size else 0.0
    return int(np.sum(w > rtol * top)) if top > 0 else 0


class NonNumericDataError(TypeError, ValueError):
    """``X`` holds entries that are not numbers (e.g. a ``dict`` in an object array).

    Both a :class:`TypeError` (what NumPy and scikit-learn raise for such entries) and a
    :class:`ValueError` (what every other input check of this package raises)."""


def check_input(X, *, name: str = "X") -> np.ndarray:
    """:func:`ufs.validation.check_data` with scikit-learn's conventions first.

    Refuses complex data (``"Complex data not supported"``), ``n × 0`` input
    (``"0 feature(s) (shape=(n, 0)) while a minimum of 1 is required"``) and object
    arrays whose entries are not numbers (:class:`NonNumericDataError`); everything else,
    and the conversion to a C-contiguous float64 array, is ``check_data``'s. Valid input
    gives exactly ``check_data(X)``.
    """
    if not sp.issparse(X):
        try:
            arr = np.asarray(X)
        except Exception:  # ragged lists and the like: check_data names them
            arr = None
        if arr is not None:
            if arr.dtype.kind == "c":
                raise ValueError(
                    f"Complex data not supported: {name} has dtype {arr.dtype}; "
                    "UFS solvers need real numbers"
                )
            if arr.dtype.kind == "O":
                try:
                    arr = arr.astype(np.float64)
                except TypeError as exc:
                    raise NonNumericDataError(
                        f"{name} must be numeric; got non-numeric entries of dtype object ({exc})"
                    ) from exc
                except ValueError:  # strings that are not numbers: check_data's message
                    pass
            if arr.ndim == 2 and arr.shape[1] == 0:
                raise ValueError(
                    f"{name} has 0 feature(s) (shape={arr.shape}) while a minimum of 1 is required."
                )
            X = arr
    return check_data(X, name=name)


def _check_n_clusters(n_clusters, n_samples: int) -> int:
    """:func:`ufs.validation.check_n_clusters`, which also accepts one cluster.

    ``1 <= n_clusters <= n_samples`` (``check_data`` guarantees ``n_samples >= 2``)."""
    if n_clusters is not None and not isinstance(n_clusters, bool):
        if isinstance(n_clusters, numbers.Integral) and n_clusters < 1:
            raise ValueError(f"n_clusters must be >= 1; got {n_clusters}")
        if isinstance(n_clusters, numbers.Integral) and n_clusters == 1:
            return 1
    return check_n_clusters(n_clusters, n_samples)


@dataclass
class Selection:
    """What a method's ``_fit`` returns, in the coordinates of the informative columns.

    ``order``: feature indices best first — every feature for ranking methods, the
    ``h`` selected ones (in selection order) for subset methods.
    ``scores``: optional per-feature score, larger is better.
    """

    order: np.ndarray
    scores: np.ndarray | None = None


class UFSSelector(SelectorMixin, BaseEstimator):
    """Base class. Subclasses set ``kind`` and implement ``_fit(X) -> Selection``.

    ``__init__`` of a subclass stores hyper-parameters only; fitted state ends in ``_``:

    * ``support_`` – boolean mask of the selected features;
    * ``selected_features_`` – selected indices in selection order;
    * ``feature_order_`` – every feature index best first (ranking methods);
    * ``ranking_`` – 1-based rank of each feature, scikit-learn style (ranking methods);
    * ``scores_`` – per-feature scores where the method has them (constant features: -inf);
    * ``constant_features_`` – indices of constant features that were excluded;
    * ``n_iter_``, ``converged_``, ``objective_`` – set by iterative methods
      (``n_iter_ >= 1``: a closed-form solve counts as one step);
    * ``resolved_rank_`` – ranking methods by row weights (``score_power``): how many
      leading features are ranked above round-off (:func:`resolved_rank`);
    * ``n_graph_components_`` – connected components of the sample graph (graph-based
      methods);
    * ``n_features_in_`` and, after a fit on a DataFrame with string column names,
      ``feature_names_in_`` (scikit-learn's).

    scikit-learn's estimator checks: every registered method passes
    ``parametrize_with_checks`` (``tests/test_sklearn_conventions.py``, with
    ``n_features_to_select=1`` and ``n_clusters=2``), plus sklearn's column-name,
    ``get_feature_names_out`` and ``set_output`` checks. Declared expected failures:
    none. One configuration differs: UDFS is checked with ``n_clusters=1``, because it
    needs ``n_features > n_clusters`` (``W`` is ``p × c`` with ``WᵀMW = I``) and most
    check data has 2 features; with ``n_clusters=2`` six checks would fail on that
    ``ValueError``.
    """

    kind: ClassVar[str] = "ranking"
    #: Which matrix the workflow passes in (:data:`ufs.preprocessing.INPUT_SPACES`):
    #: ``"standardized"`` (default, z-scores), ``"raw"`` (validated, unscaled) or
    #: ``"unit_range"`` (per-feature min-max to [0, 1]); the cached kNN graph is built on
    #: the same matrix. A class fixes it here; a method whose authors' code and paper differ
    #: may take it as a constructor parameter instead (e.g. ``DGUFS(input_space=...)``), so
    #: read it from the estimator, not the class. ``fit`` uses ``X`` as given: the mapping
    #: is :func:`ufs.preprocessing.input_matrix`.
    input_space: str = "standardized"
    #: whether ``n_clusters`` must be given
    requires_n_clusters: ClassVar[bool] = True
    #: ranking by row weights of a learned ``W``: ``1`` for ``||w_i||``, ``2`` for
    #: ``||w_i||²``; then ``fit`` records ``resolved_rank_`` (:func:`resolved_rank`) and
    #: warns (:class:`DegenerateFitWarning`) when it is below the number of features
    score_power: ClassVar[float | None] = None

    # -- the contract ---------------------------------------------------------------
    def fit(self, X, y=None, graph=None):
        """Select features from ``X`` (``n_samples × n_features``); ``y`` is ignored.

        ``graph``: optional precomputed sample affinity (sparse ``n × n``) for graph-based
        methods, built by :func:`ufs.graph.knn_graph` with this estimator's
        :meth:`graph_spec`; the workflow caches one per dataset and passes it here.

        ``X`` may be a pandas DataFrame: string column names are kept in
        ``feature_names_in_`` (:meth:`get_feature_names_out` returns the selected ones).
        """
        _check_feature_names(self, X, reset=True)
        X = check_input(X)
        n, p = X.shape
        self._graph_input = self._check_graph(graph, n)
        constant = constant_feature_mask(X)
        informative = np.flatnonzero(~constant)
        if informative.size == 0:
            raise ValueError("X has no non-constant feature; nothing can be selected")
        if self.kind != "full":
            self._h = check_n_features_to_select(
                self.n_features_to_select, p, n_informative=informative.size
            )
        if self.requires_n_clusters or getattr(self, "n_clusters", None) is not None:
            self._k = _check_n_clusters(getattr(self, "n_clusters", None), n)
        self.check_shape(n, informative.size, getattr(self, "_k", None))
        if constant.any():
            warnings.warn(
                _constant_features_message(constant, getattr(self, "feature_names_in_", None)),
                ConstantFeaturesWarning,
                stacklevel=_caller_stacklevel(),
            )
        Xi = X[:, informative] if constant.any() else X
        sel = self._fit(Xi)
        self._store(sel, informative, p, constant)
        return self

    def _fit(self, X: np.ndarray) -> Selection:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- what a fit needs of the data's shape (one rule: fit and the workflow's plan) --
    def min_n_features(self, n_clusters: int | None) -> int:
        """The fewest (non-constant) features a fit with ``n_clusters`` clusters needs.

        1 here; a method whose model needs more overrides it in one line (UDFS:
        ``n_clusters + 1``, its ``p × c`` projection has orthonormal columns). ``fit``
        checks it through :meth:`check_shape`, and so does the workflow's plan
        (:func:`ufs.pipeline.config.build_plan`) for every dataset whose shape it knows.
        ``n_clusters`` is ``None`` when the method was given none.
        """
        return 1

    def check_shape(self, n_samples: int | None, n_features: int, n_clusters: int | None) -> None:
        """Raise ``ValueError`` if data of this shape cannot be fitted (see
        :meth:`min_n_features`); parameter values the rule cannot read are left to the
        method's own checks."""
        try:
            need = int(self.min_n_features(n_clusters))
        except (TypeError, ValueError):
            return
        if n_features < need:
            m = getattr(self, "n_components", None)
            extra = f", n_components={m!r}" if isinstance(m, int) else ""
            raise ValueError(
                f"{type(self).__name__}(n_clusters={n_clusters}{extra}) needs at least "
                f"{need} non-constant features; got n_features={n_features}"
            )

    # -- sample graphs (graph-based methods) ----------------------------------------
    def graph_spec(self) -> dict | None:
        """Keyword arguments of :func:`ufs.graph.knn_graph` this method needs
        (``n_neighbors``, ``weight``, ``sigma``), or ``None`` if it uses no kNN graph."""
        return None

    def _check_graph(self, graph, n: int):
        if graph is None:
            return None
        if self.graph_spec() is None:
            raise ValueError(f"{type(self).__name__} does not use a sample graph")
        if not sp.issparse(graph) or graph.shape != (n, n):
            raise ValueError(
                f"graph must be a sparse {n}×{n} matrix; got {getattr(graph, 'shape', None)}"
            )
        return sp.csr_matrix(graph)

    def _graph(self, X: np.ndarray) -> sp.csr_matrix:
        """The sample graph: the one passed to ``fit`` or one built from ``X``.

        Sets the fitted fact ``n_graph_components_`` (connected components of the graph:
        with more than one, graph eigen-problems have repeated extreme eigenvalues,
        handled exactly by :func:`ufs.eigen.component_eigenpairs`)."""
        from .eigen import graph_components

        if getattr(self, "_graph_input", None) is not None:
            S = self._graph_input
        else:
            from .graph import knn_graph

            S = knn_graph(X, **self.graph_spec())
        self.n_graph_components_ = graph_components(S)[0]
        return S

    # -- bookkeeping ----------------------------------------------------------------
    def _store(self, sel: Selection, informative: np.ndarray, p: int, constant) -> None:
        order = informative[np.asarray(sel.order, dtype=np.int64)]
        self.n_features_in_ = p
        self.constant_features_ = np.flatnonzero(constant)
        if sel.scores is not None:
            scores = np.full(p, -np.inf)
            scores[informative] = sel.scores
            self.scores_ = scores
            if self.kind == "ranking" and self.score_power:
                r = resolved_rank(sel.scores, self.score_power)
                self.resolved_rank_ = r
                if r < informative.size:
                    warnings.warn(
                        f"{type(self).__name__}: only {r} of {informative.size} features have "
                        f"a row weight above {ROUNDOFF_RTOL:g} of the largest; the ranking "
                        f"after position {r} is decided by round-off or feature index "
                        f"(h > {r} is marked degenerate)",
                        DegenerateFitWarning,
                        stacklevel=3,
                    )
        if self.kind == "full":
            selected = np.arange(p)[~constant]
        elif self.kind == "ranking":
            full_order = np.concatenate([order, self.constant_features_])
            self.feature_order_ = full_order
            ranking = np.empty(p, dtype=np.int64)
            ranking[full_order] = np.arange(1, p + 1)
            self.ranking_ = ranking
            selected = full_order[: self._h]
        else:
            if order.shape[0] != self._h or np.unique(order).shape[0] != self._h:
                raise RuntimeError(
                    f"{type(self).__name__} returned {np.unique(order).shape[0]} distinct "
                    f"features; exactly {self._h} required"
                )
            selected = order
        self.selected_features_ = selected
        support = np.zeros(p, dtype=bool)
        support[selected] = True
        self.support_ = support

    def _get_support_mask(self) -> np.ndarray:
        check_is_fitted(self, "support_")
        return self.support_

    def select_prefix(self, h: int | float) -> np.ndarray:
        """Indices of the best ``h`` features of a fitted ranking method (``h`` as
        ``n_features_to_select``: a count or a fraction of the non-constant features)."""
        check_is_fitted(self, "feature_order_")
        h = check_n_features_to_select(
            h, self.n_features_in_, n_informative=self.n_features_in_ - self.constant_features_.size
        )
        return self.feature_order_[:h]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        tags.requires_fit = True
        return tags
