"""A method's registration: its spec (:class:`MethodSpec`), the table of
registered methods and :func:`register`. The bottom of the registry, imported by the
built-in methods' registrations (``ufs/methods/__init__.py``) and by :mod:`ufs.plugins`
without importing :mod:`ufs.registry`, which loads those registrations on first use: the
registrations and the registry no longer import each other."""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass, field
from typing import Any

from .base import KINDS, UFSSelector

_REGISTRY: dict[str, MethodSpec] = {}


@functools.cache
def _init_params(cls: type) -> tuple[str, ...]:
    """Constructor parameter names of ``cls``, once: ``inspect.signature`` costs ~0.2 ms
    and the plan builds an estimator per setting (10^5 settings: 40 s of signatures)."""
    return tuple(p for p in inspect.signature(cls.__init__).parameters if p != "self")


#: parameters the workflow fills in itself; never part of a grid
CONTEXT_PARAMS = ("n_features_to_select", "n_clusters", "random_state")

#: the matrix a fit receives (``UFSSelector.input_space``): a setting may override it for
#: every method, a constructor parameter or not (input scaling as a factor; e.g.
#: ``defaults: {input_space: raw}`` in a config); the workflow reads it from the estimator
INPUT_SPACE = "input_space"

#: what a registered entry is in a comparison:
#: ``method`` a competitor, ranked in the omnibus test; ``variant`` another setting of a
#: method registered under its own name (e.g. ``fsbc_nobal``), left out of the omnibus
#: test unless asked for; ``reference`` a bound every method must beat (all features,
#: random features, largest variance): shown apart, never ranked as a method
ROLES = ("method", "variant", "reference")


@dataclass(frozen=True)
class MethodSpec:
    name: str
    cls: type[UFSSelector]
    grid: dict[str, list] = field(default_factory=dict)
    defaults: dict[str, Any] = field(default_factory=dict)
    fixed: dict[str, Any] = field(default_factory=dict)
    reference: str = ""
    #: one of :data:`ROLES`
    role: str = "method"
    #: a method whose result is a draw of chance (``random``): the constructor parameter
    #: that numbers independent draws. The workflow fits ``evaluation.reference_draws``
    #: draws of its label-free setting and reports their distribution, not one draw.
    draws: str = ""
    #: for a ``variant``: the method it is a variant of
    variant_of: str = ""

    @property
    def kind(self) -> str:
        return self.cls.kind

    @property
    def tunable(self) -> set[str]:
        """Constructor parameters a config may set, and ``input_space`` (:data:`INPUT_SPACE`)."""
        return (set(_init_params(self.cls)) | {INPUT_SPACE}) - set(CONTEXT_PARAMS) - set(self.fixed)

    def check_params(self, params: dict[str, Any]) -> None:
        unknown = sorted(set(params) - self.tunable)
        if unknown:
            raise ValueError(
                f"method {self.name!r} has no parameter(s) {unknown}; valid: {sorted(self.tunable)}"
            )


def register(
    name: str,
    cls: type[UFSSelector],
    *,
    grid: dict[str, list] | None = None,
    defaults: dict[str, Any] | None = None,
    fixed: dict[str, Any] | None = None,
    reference: str = "",
    role: str = "method",
    draws: str = "",
    variant_of: str = "",
) -> MethodSpec:
    """Add a method. ``fixed`` parameters define a variant (e.g. ``solver="exact"``);
    ``role`` says what it is in a comparison (:data:`ROLES`; a ``variant`` names the
    method it varies in ``variant_of``); ``draws`` names the parameter numbering the
    independent draws of a chance reference."""
    if name in _REGISTRY:
        raise ValueError(f"method {name!r} is already registered")
    if not (isinstance(cls, type) and issubclass(cls, UFSSelector)):
        raise TypeError(f"{cls!r} is not a UFSSelector subclass")
    if cls.kind not in KINDS:
        raise ValueError(f"{cls.__name__}.kind must be one of {KINDS}")
    if role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}; got {role!r}")
    if (role == "variant") != bool(variant_of):
        raise ValueError("a variant names the method it varies (variant_of), and only a variant")
    spec = MethodSpec(
        name,
        cls,
        dict(grid or {}),
        dict(defaults or {}),
        dict(fixed or {}),
        reference,
        role,
        draws,
        variant_of,
    )
    if draws and draws not in spec.tunable:
        raise ValueError(f"draws={draws!r} is not a parameter of {cls.__name__}")
    if draws and spec.grid:
        raise ValueError("a method of random draws has no grid (its draws are its settings)")
    spec.check_params(spec.grid)
    spec.check_params(spec.defaults)
    _REGISTRY[name] = spec
    return spec


def did_you_mean(name: Any, known) -> str:
    """``" (did you mean 'x'?)"`` for the closest of ``known`` to ``name``, else ``""``."""
    import difflib

    close = difflib.get_close_matches(str(name), sorted(map(str, known)), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""
