"""Whether a registered method can be fitted here: the modules its fit needs beyond the core
dependencies (a class's ``requires``, e.g. ``("torch",)`` for the neural selectors of the
``neural`` extra) and the command that installs them (its ``install_hint``).

Kept apart from :mod:`ufs.base` and :mod:`ufs.registry` on purpose: those are part of every
fit's and evaluation's code version (:mod:`ufs.pipeline.lineage`), and whether a module is
installed on a machine changes no result. Nothing here imports the modules it checks.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys

__all__ = [
    "import_requirements",
    "install_hint",
    "missing_modules",
    "module_installed",
    "requirements",
    "unavailable_note",
    "unavailable_reason",
]


def module_installed(name: str) -> bool:
    """Whether ``name`` can be imported here, without importing it
    (:func:`importlib.util.find_spec`: a look at the import path, ~0.1 ms). A module already
    imported is installed; one set to ``None`` in :data:`sys.modules` is not (how Python
    blocks an import, and how a test hides a module)."""
    if name in sys.modules:
        return sys.modules[name] is not None
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a parent package missing or hidden
        return False


def requirements(cls: type) -> tuple[str, ...]:
    """The modules a fit of the estimator class ``cls`` imports beyond the core
    dependencies (its ``requires``; none when it declares none)."""
    return tuple(getattr(cls, "requires", ()) or ())


def install_hint(cls: type) -> str:
    """The command that installs :func:`requirements` of ``cls`` (``""``: none given)."""
    return str(getattr(cls, "install_hint", "") or "")


def missing_modules(cls: type) -> list[str]:
    """The modules of :func:`requirements` of ``cls`` that are not installed here."""
    return [m for m in requirements(cls) if not module_installed(m)]


def import_requirements(cls: type) -> None:
    """Import :func:`requirements` of the estimator class ``cls`` now. The workflow's fit
    and stability jobs call it before they start a fit's clocks: importing an optional
    library (PyTorch: ~1.5 CPU-s) is the process's cost, not the method's, as NumPy's is."""
    for module in requirements(cls):
        importlib.import_module(module)


def unavailable_reason(name: str) -> str | None:
    """Why the registered method ``name`` cannot be fitted here, or ``None`` when it can:
    the modules its fit needs that are not installed, and the command that installs them
    (``'needs torch: pip install "ufs-bench[neural]"'``; nothing imported)."""
    from .registry import get_method

    cls = get_method(name).cls
    missing = missing_modules(cls)
    if not missing:
        return None
    hint = install_hint(cls)
    return f"needs {', '.join(missing)}" + (f": {hint}" if hint else "")


def unavailable_note(names) -> str:
    """One line saying which of the registered methods ``names`` are left out here and
    why, grouped by what they need (``note: skipped cae, ipcae, lscae: torch is not
    installed (pip install "ufs-bench[neural]")``); ``""`` when every one can be fitted.
    A name the registry does not know is not this line's business (the config's checks
    name it)."""
    from .registry import available_methods, get_method

    known = set(available_methods())
    groups: dict[tuple[tuple[str, ...], str], list[str]] = {}
    for name in names:
        cls = get_method(name).cls if name in known else None
        missing = tuple(missing_modules(cls)) if cls is not None else ()
        if missing:
            groups.setdefault((missing, install_hint(cls)), []).append(name)
    parts = []
    for (missing, hint), methods in groups.items():
        verb = "is" if len(missing) == 1 else "are"
        what = " and ".join(filter(None, (", ".join(missing[:-1]), missing[-1])))
        parts.append(
            f"{', '.join(methods)}: {what} {verb} not installed" + (f" ({hint})" if hint else "")
        )
    return "note: skipped " + "; ".join(parts) if parts else ""
