"""Registry: method name → estimator class, kind, parameter grid and defaults.

The workflow reads only this registry. A method's *grid* is the parameter grid of its
paper (used by the label-tuned ``oracle`` protocol); its *defaults* are the label-free
parameters (used by the ``label_free`` protocol). A parameter that appears in neither
is left at the class default.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import inspect
import itertools
import json
from pathlib import Path
from typing import Any

from .base import UFSSelector

__all__ = [
    "MethodSpec",
    "register",
    "get_method",
    "available_methods",
    "make_estimator",
    "expand_grid",
    "params_id",
    "source_hash",
    "source_files",
    "module_closure",
    "package_hash",
    "closure_hash",
    "ROLES",
    "methods_with_role",
    "method_facts",
    "did_you_mean",
]

from .method_spec import (  # noqa: F401  (the registration API, re-exported)
    _REGISTRY,
    CONTEXT_PARAMS,
    INPUT_SPACE,
    ROLES,
    MethodSpec,
    _init_params,
    did_you_mean,
    register,
)


def _ensure_loaded() -> None:
    from . import methods  # noqa: F401  (registers the built-in methods)


def get_method(name: str) -> MethodSpec:
    _ensure_loaded()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(
            f"unknown method {name!r}{did_you_mean(name, _REGISTRY)}; available: {sorted(_REGISTRY)}"
        ) from None


def available_methods() -> list[str]:
    _ensure_loaded()
    return sorted(_REGISTRY)


def method_facts(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """What the registry says of a fitted setting: ``role`` (:data:`ROLES`), ``draw`` (a
    chance reference's draw number, else NaN) and ``input_space`` (the matrix the fit
    received: input scaling is a recorded factor of every result). A method
    the registry does not know (a result of another code version) is a competitor."""
    nan = float("nan")
    try:
        spec = get_method(method)
    except ValueError:
        return {"role": "method", "draw": nan, "input_space": ""}
    try:
        space = str(make_estimator(method, params).input_space)
    except (TypeError, ValueError):
        space = ""
    draw = params.get(spec.draws, nan) if spec.draws else nan
    return {"role": spec.role, "draw": draw, "input_space": space}


def methods_with_role(*roles: str) -> list[str]:
    """The registered methods whose role is one of ``roles`` (sorted)."""
    _ensure_loaded()
    bad = set(roles) - set(ROLES)
    if bad:
        raise ValueError(f"unknown role(s) {sorted(bad)}; valid: {ROLES}")
    return sorted(n for n, s in _REGISTRY.items() if s.role in roles)


def make_estimator(
    name: str,
    /,
    params: dict[str, Any] | None = None,
    *,
    n_features_to_select: int | float | None = None,
    n_clusters: int | None = None,
    random_state: int | None = None,
    **method_params: Any,
) -> UFSSelector:
    """Instantiate a registered method; context parameters are passed where accepted.

    The method's parameters come as a dict (``make_estimator("mcfs", {"n_neighbors":
    5})``, how the workflow passes a setting), as keywords (``make_estimator("mcfs",
    n_neighbors=5)``) or both; a parameter given both ways is a ``TypeError`` naming it.
    ``name`` is positional only; ``params`` may be given by keyword, as before.
    ``n_features_to_select`` is a count or a fraction in ``(0, 1]`` of the non-constant
    features (:func:`ufs.validation.check_n_features_to_select`).
    """
    twice = sorted(set(params or {}) & set(method_params))
    if twice:
        raise TypeError(
            f"make_estimator({name!r}) got parameter(s) {twice} both in params and as "
            "keywords; give each once"
        )
    spec = get_method(name)
    params = {**(params or {}), **method_params}
    spec.check_params(params)
    accepted = set(_init_params(spec.cls))
    context = {
        "n_features_to_select": n_features_to_select,
        "n_clusters": n_clusters,
        "random_state": random_state,
    }
    kwargs = {k: v for k, v in context.items() if k in accepted and v is not None}
    kwargs.update(spec.fixed)
    kwargs.update(params)
    space = (
        kwargs.pop(INPUT_SPACE) if INPUT_SPACE in kwargs and INPUT_SPACE not in accepted else None
    )
    est = spec.cls(**kwargs)
    if space is not None:  # the class fixes its input space: this setting overrides it
        from .preprocessing import check_input_space

        est.input_space = check_input_space(space)
    return est


def expand_grid(grid: dict[str, list]) -> list[dict[str, Any]]:
    """Cartesian product of a ``{param: [values]}`` grid (sorted keys, stable order)."""
    keys = sorted(grid)
    return [
        dict(zip(keys, vals, strict=True)) for vals in itertools.product(*(grid[k] for k in keys))
    ]


def params_id(params: dict[str, Any]) -> str:
    """Stable short id of a parameter setting: 10 hex digits of the sha256 of sorted JSON."""
    blob = json.dumps(params, sort_keys=True, separators=(",", ":"), default=float)
    return hashlib.sha256(blob.encode()).hexdigest()[:10]


def package_hash(*relative: str) -> str:
    """Hash of files of the ``ufs`` package (paths relative to it)."""
    pkg = Path(__file__).parent
    h = hashlib.sha256()
    for f in relative:
        h.update(f.encode())
        h.update((pkg / f).read_bytes())
    return h.hexdigest()[:12]


_PKG = Path(__file__).resolve().parent
#: modules around every fit besides the method's own imports: the estimator base class,
#: the input-space preprocessing and validation applied to its input, the shared kernels
_CORE = ("base.py", "linalg.py", "graph.py", "preprocessing.py", "validation.py")


def _module_path(dotted: str) -> Path | None:
    """The file of ``ufs.<...>`` (a module or a package's ``__init__.py``), else ``None``."""
    parts = dotted.split(".")
    if parts[0] != _PKG.name:
        return None
    if len(parts) == 1:
        return _PKG / "__init__.py"
    base = _PKG.joinpath(*parts[1:])
    for cand in (base.with_suffix(".py"), base / "__init__.py"):
        if cand.is_file():
            return cand
    return None


@functools.cache
def _direct_imports(path: Path, mtime_ns: int) -> frozenset[Path]:
    """The ``ufs`` modules ``path`` imports (anywhere in the file, lazy imports included):
    ``import ufs.x``, ``from ufs.x import y``, ``from .x import y``, ``from .. import x``.
    ``from <package> import <submodule>`` is the submodule only, not the package's
    ``__init__`` (which would pull in every sibling)."""
    if path.is_relative_to(_PKG):
        module = ".".join(path.relative_to(_PKG.parent).with_suffix("").parts)
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        package = package.removesuffix(".__init__")
    else:  # a method defined outside the package: only its absolute ``ufs`` imports
        package = ""
    found: set[Path] = set()
    for node in ast.walk(ast.parse(path.read_bytes(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(filter(None, (_module_path(a.name) for a in node.names)))
        elif isinstance(node, ast.ImportFrom):
            if node.level and not package:
                continue
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                src = ".".join(anchor + ([node.module] if node.module else []))
            else:
                src = node.module or ""
            names_only = True
            for a in node.names:
                sub = _module_path(f"{src}.{a.name}") if a.name != "*" else None
                if sub is not None:
                    found.add(sub)
                else:
                    names_only = False
            if not names_only:  # an attribute of src: src itself
                mod = _module_path(src)
                if mod is not None:
                    found.add(mod)
    found.discard(path)
    return frozenset(found)


def module_closure(*paths: Path, stop: frozenset[Path] | set[Path] = frozenset()) -> list[Path]:
    """``paths`` and every ``ufs`` module they import, transitively (sorted); a module in
    ``stop`` is neither included nor followed."""
    seen: set[Path] = set()
    todo = [Path(p).resolve() for p in paths]
    while todo:
        p = todo.pop()
        if p in seen or p in stop:
            continue
        seen.add(p)
        todo.extend(_direct_imports(p, p.stat().st_mtime_ns) - seen)
    return sorted(seen)


def closure_hash(*relative: str, exclude: tuple[str, ...] = ("methods/",)) -> str:
    """Code version of workflow steps: the hash of the ``ufs`` modules ``relative`` (paths
    relative to the package) and of every ``ufs`` module they import, transitively
    (:func:`module_closure`; a rule keyed on its own files only missed a
    change in what they import). Modules under ``exclude`` are left out: the methods'
    own code is the fit jobs' key (:func:`source_hash`), not every step's."""
    h = hashlib.sha256()
    for f in module_closure(*(_PKG / r for r in relative)):
        rel = f.relative_to(_PKG).as_posix() if f.is_relative_to(_PKG) else f.name
        if rel.startswith(exclude):
            continue
        st = f.stat()
        h.update(rel.encode())
        h.update(_file_digest(f, st.st_mtime_ns, st.st_size))
    return h.hexdigest()[:12]


def source_files(name: str) -> list[Path]:
    """The source files a method's results depend on: its module, every ``ufs`` module it
    imports (transitively: private kernels such as ``methods/_nonneg_spectral.py``, the
    shared ``linalg``, ...) and the core modules around every fit (:data:`_CORE`)."""
    spec = get_method(name)
    own = _module_path(spec.cls.__module__) or Path(inspect.getfile(spec.cls))
    return module_closure(own, *(_PKG / f for f in _CORE))


def _entry_value(obj: Any) -> Any:
    """A process-independent JSON stand-in for a registry value JSON cannot hold."""
    if hasattr(obj, "item") and callable(obj.item) and getattr(obj, "ndim", None) == 0:
        return obj.item()  # a NumPy scalar
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if callable(obj):  # a function or class: its name, not repr's memory address
        return f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', obj)}"
    return repr(obj)


@functools.cache
def _file_digest(path: Path, mtime_ns: int, size: int) -> bytes:
    return hashlib.sha256(path.read_bytes()).digest()


def source_hash(name: str) -> str:
    """Code version of a method, so that a change invalidates workflow results: the hash
    of :func:`source_files` and of its registry entry (class, kind, ``fixed`` parameters,
    grid and defaults; not the ``reference`` text)."""
    spec = get_method(name)
    entry = {
        "name": spec.name,
        "class": f"{spec.cls.__module__}.{spec.cls.__qualname__}",
        "kind": spec.kind,
        "fixed": spec.fixed,
        "grid": spec.grid,
        "defaults": spec.defaults,
        **({"draws": spec.draws} if spec.draws else {}),
    }
    h = hashlib.sha256(json.dumps(entry, sort_keys=True, default=_entry_value).encode())
    for f in source_files(name):
        st = f.stat()
        h.update((f.relative_to(_PKG).as_posix() if f.is_relative_to(_PKG) else f.name).encode())
        h.update(_file_digest(f, st.st_mtime_ns, st.st_size))
    return h.hexdigest()[:12]
