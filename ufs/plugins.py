"""Methods from outside this package: entry points, config import paths, adapters.

A researcher benchmarks a new selector without editing this repository, in one of two ways:

* **an entry point** in the group ``ufs.methods`` of an installed package (the pattern of
  pytest plugins and Snakemake's executor plugins). Its name is the method's name; it
  points to a function returning the registration — a mapping with ``cls`` (the
  selector) and, optionally, ``grid``, ``defaults`` (the label-free setting), ``role``,
  ``reference``::

      [project.entry-points."ufs.methods"]
      knn_residual = "ufs_example_plugin:registration"

  Entry points are read once, when the registry first loads (:func:`load_entry_points`);
  a broken one stops with a :class:`PluginError` naming the entry point, its package and
  version, and the cause.
* **an import path in a config**: ``methods: {mine: {class: "mypkg.sel:MySelector",
  grid: {...}, defaults: {...}}}`` (schema-checked; :func:`register_config_methods`). The
  workflow passes those entries to every job through the environment variable
  :data:`CONFIG_METHODS_ENV`, so that each job's registry knows the method.

What qualifies as ``cls``, or as the object an import path names (:func:`as_selector_class`):

* a :class:`ufs.base.UFSSelector` subclass (the project's contract: ``kind``, ``_fit``);
* a scikit-learn selector class (a ``SelectorMixin`` estimator taking
  ``n_features_to_select``, e.g. a wrapper around your own code): adapted by
  :func:`_sklearn_adapter` as a *subset* method, fitted once per h;
* a scoring function ``f(X) -> scores`` (higher is better): adapted by
  :func:`score_function_selector` as a *ranking* method, fitted once.

A plugin's lineage (``ufs.pipeline.lineage.method_code``) is its registry entry, its module's
code and its distribution's name and version (:func:`distribution_of`): an upgrade re-fits
that method and nothing else.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

__all__ = [
    "CONFIG_METHODS_ENV",
    "ENTRY_POINT_GROUP",
    "PluginError",
    "as_selector_class",
    "distribution_of",
    "import_object",
    "load_entry_points",
    "register_config_methods",
    "score_function_selector",
]

#: the entry-point group a package registers methods in
ENTRY_POINT_GROUP = "ufs.methods"
#: environment variable carrying a config's imported methods to the workflow's jobs (JSON)
CONFIG_METHODS_ENV = "UFS_CONFIG_METHODS"
#: the keys a registration may have
REGISTRATION_KEYS = {"cls", "grid", "defaults", "role", "reference", "fixed", "variant_of"}


class PluginError(RuntimeError):
    """A method from outside the package could not be registered: the message names it,
    where it came from (entry point and package, or config key) and why."""


def import_object(path: str) -> Any:
    """``"package.module:attribute"`` (or ``package.module.attribute``) imported."""
    module, sep, attr = path.partition(":")
    if not sep:
        module, _, attr = path.rpartition(".")
    if not module or not attr:
        raise ValueError(f"{path!r} is not an import path 'package.module:attribute'")
    obj = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def _sklearn_adapter(est_cls: type) -> type:
    """A ``UFSSelector`` subset method around a scikit-learn selector class taking
    ``n_features_to_select`` (its other constructor parameters become the method's)."""
    from .base import Selection, UFSSelector

    params = [
        p
        for name, p in inspect.signature(est_cls.__init__).parameters.items()
        if name not in ("self", "n_features_to_select") and p.kind == p.POSITIONAL_OR_KEYWORD
    ]

    def __init__(self, n_features_to_select=10, **kw):
        self.n_features_to_select = n_features_to_select
        for p in params:
            setattr(self, p.name, kw.pop(p.name, p.default))
        if kw:
            raise TypeError(f"{est_cls.__name__} has no parameter(s) {sorted(kw)}")

    def _fit(self, X):
        est = est_cls(
            n_features_to_select=self._h, **{p.name: getattr(self, p.name) for p in params}
        )
        est.fit(X)
        chosen = np.flatnonzero(est.get_support())
        return Selection(order=chosen)

    sig = inspect.Signature(
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [inspect.Parameter("n_features_to_select", inspect.Parameter.KEYWORD_ONLY, default=10)]
        + [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in params]
    )
    __init__.__signature__ = sig
    return type(
        est_cls.__name__,
        (UFSSelector,),
        {
            "kind": "subset",
            "requires_n_clusters": False,
            "__init__": __init__,
            "_fit": _fit,
            "__module__": est_cls.__module__,
            "__doc__": f"{est_cls.__name__} (scikit-learn selector) as a UFS subset method.",
            "wrapped": est_cls,
        },
    )


def score_function_selector(func: Callable[[np.ndarray], np.ndarray]) -> type:
    """A ``UFSSelector`` ranking method around ``func(X) -> scores`` (one per feature,
    higher is better; ties ordered by feature index)."""
    from .base import Selection, UFSSelector

    def __init__(self, n_features_to_select=10):
        self.n_features_to_select = n_features_to_select

    def _fit(self, X):
        scores = np.asarray(func(X), dtype=float).ravel()
        if scores.shape != (X.shape[1],) or not np.isfinite(scores).all():
            raise ValueError(
                f"{func.__name__} returned {scores.shape[0]} scores for {X.shape[1]} features "
                "(finite values, one per feature, are needed)"
            )
        return Selection(order=np.argsort(-scores, kind="stable"), scores=scores)

    return type(
        f"ScoreFunction_{func.__name__}",
        (UFSSelector,),
        {
            "kind": "ranking",
            "requires_n_clusters": False,
            "__init__": __init__,
            "_fit": _fit,
            "__module__": func.__module__,
            "__doc__": f"The features ranked by {func.__module__}.{func.__name__}(X).",
            "wrapped": func,
        },
    )


def as_selector_class(obj: Any) -> type:
    """``obj`` as a ``UFSSelector`` subclass: itself, a scikit-learn selector class adapted
    (:func:`_sklearn_adapter`), or a scoring function adapted
    (:func:`score_function_selector`); a ``TypeError`` saying what qualifies otherwise."""
    from sklearn.feature_selection import SelectorMixin

    from .base import UFSSelector

    if isinstance(obj, type) and issubclass(obj, UFSSelector):
        return obj
    if isinstance(obj, type) and issubclass(obj, SelectorMixin):
        if "n_features_to_select" not in inspect.signature(obj.__init__).parameters:
            raise TypeError(
                f"{obj.__name__} is a scikit-learn selector without n_features_to_select: the "
                "benchmark asks every method for h features"
            )
        return _sklearn_adapter(obj)
    if callable(obj) and not isinstance(obj, type):
        return score_function_selector(obj)
    raise TypeError(
        f"{obj!r} is not a method: give a ufs.base.UFSSelector subclass, a scikit-learn "
        "SelectorMixin class taking n_features_to_select, or a function f(X) -> scores"
    )


def _register(name: str, registration: Mapping[str, Any], where: str) -> None:
    from .method_spec import _REGISTRY, register

    if not isinstance(registration, Mapping) or "cls" not in registration:
        raise PluginError(
            f"method {name!r} ({where}): the registration must be a mapping with 'cls'"
        )
    unknown = sorted(set(registration) - REGISTRATION_KEYS)
    if unknown:
        raise PluginError(
            f"method {name!r} ({where}): unknown registration key(s) {unknown}; valid: "
            f"{sorted(REGISTRATION_KEYS)}"
        )
    known = _REGISTRY.get(name)
    if known is not None and registration["cls"] in (known.cls, getattr(known.cls, "wrapped", 0)):
        return  # the same registration, loaded again (idempotent)
    try:
        cls = as_selector_class(registration["cls"])
        kw = {k: v for k, v in registration.items() if k != "cls"}
        # where it came from, always: the entry point with its package and version
        kw["reference"] = f"{kw['reference']} [{where}]" if kw.get("reference") else where
        register(name, cls, **kw)
    except (TypeError, ValueError) as exc:
        raise PluginError(f"method {name!r} ({where}): {exc}") from None


def _entry_points():
    from importlib.metadata import entry_points

    return entry_points(group=ENTRY_POINT_GROUP)


def load_entry_points() -> list[str]:
    """Register every ``ufs.methods`` entry point of the installed packages; the names."""
    names = []
    for ep in sorted(_entry_points(), key=lambda e: e.name):
        dist = getattr(ep, "dist", None)
        origin = f"entry point {ep.value!r} of {dist.name} {dist.version}" if dist else ep.value
        try:
            registration = ep.load()()
        except Exception as exc:  # a broken plugin: say which, and why
            raise PluginError(
                f"method {ep.name!r} ({origin}) could not be loaded: {type(exc).__name__}: {exc}"
            ) from exc
        _register(ep.name, registration, origin)
        names.append(ep.name)
    return names


def register_config_methods(methods: Mapping[str, Any]) -> list[str]:
    """Register the config's methods given by import path (``class:``); the names. Ones
    already registered from the same path are left as they are."""
    from .method_spec import _REGISTRY

    names = []
    for name, entry in sorted(methods.items()):
        if not isinstance(entry, Mapping) or not entry.get("class"):
            continue
        path = entry["class"]
        where = f"config methods.{name}.class {path!r}"
        known = _REGISTRY.get(name)
        if known is not None:
            if known.reference == where:
                continue
            raise PluginError(f"method {name!r} ({where}): the name is already registered")
        try:
            obj = import_object(path)
        except (ImportError, AttributeError, ValueError) as exc:
            raise PluginError(f"method {name!r} ({where}) could not be imported: {exc}") from None
        registration = {"cls": obj}
        for key in ("grid", "defaults", "role"):
            if entry.get(key) is not None:
                registration[key] = entry[key]
        _register(name, registration, where)
        names.append(name)
    return names


def config_methods_env(methods: Mapping[str, Any]) -> str:
    """The value of :data:`CONFIG_METHODS_ENV` for the config's imported methods."""
    keep = {
        n: {k: e[k] for k in ("class", "grid", "defaults", "role") if e.get(k) is not None}
        for n, e in methods.items()
        if isinstance(e, Mapping) and e.get("class")
    }
    return json.dumps(keep, sort_keys=True)


def load_environment() -> list[str]:
    """Register the methods the workflow passed in :data:`CONFIG_METHODS_ENV` (a job's
    registry; nothing when unset)."""
    raw = os.environ.get(CONFIG_METHODS_ENV)
    return register_config_methods(json.loads(raw)) if raw else []


def distribution_of(cls: type) -> dict[str, str]:
    """``{"package": name, "version": version}`` of the installed distribution that holds
    ``cls``'s module (``{}`` for this package's own methods and for code not installed)."""
    from importlib.metadata import packages_distributions, version

    top = (getattr(cls, "__module__", "") or "").partition(".")[0]
    if not top or top == "ufs":
        return {}
    dists = packages_distributions().get(top) or []
    if not dists:
        return {}
    return {"package": dists[0], "version": version(dists[0])}
