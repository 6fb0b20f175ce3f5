"""The package's layers: data flow one way, no import cycles, and the old
``ufs.bench`` names kept for a release with a warning."""

from __future__ import annotations

import importlib
import sys
import warnings
from pathlib import Path

import pytest

from ufs.registry import _PKG, _direct_imports

PKG = _PKG  # the package the tests import

#: the workflow's layers, bottom up: a module may import its own layer and those below
#: (the library itself, ``ufs.*`` outside these packages, is layer 0; ``ufs.cli`` sits on
#: top of everything); tracking and stats are side by side and import neither each other
LAYERS = {"pipeline": 1, "tracking": 2, "stats": 2, "report": 3}
TOP = {"ufs.cli", "ufs.bench"}


def _name(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph() -> dict[str, set[str]]:
    """module → the ``ufs`` modules it imports, lazy imports included, as the lineage's
    closures read them (:func:`ufs.registry._direct_imports`: ``from pkg import sub`` is
    the submodule only)."""
    return {
        _name(p): {_name(q) for q in _direct_imports(p, p.stat().st_mtime_ns)}
        for p in sorted(PKG.rglob("*.py"))
    }


def _layer(module: str) -> int:
    parts = module.split(".")
    return LAYERS.get(parts[1], 0) if len(parts) > 1 else 0


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles():
    assert cycles(import_graph()) == []


def test_the_cycle_finder_finds_one():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_imports_go_down_the_layers():
    """pipeline ← tracking, stats ← report: e.g. a statistic never imports a renderer, the
    pipeline never imports the report, and the library never imports the workflow."""
    upward = [
        (m, t)
        for m, targets in import_graph().items()
        if m not in TOP
        for t in sorted(targets)
        if t not in TOP
        and (
            _layer(t) > _layer(m)
            or (_layer(t) == _layer(m) == 2 and m.split(".")[1] != t.split(".")[1])
        )
    ]
    assert upward == []


def test_the_layer_rule_sees_an_upward_import():
    assert _layer("ufs.report.aggregate") > _layer("ufs.stats.ranking") > _layer("ufs.graph")
    assert _layer("ufs.pipeline.steps") == 1


@pytest.mark.parametrize(
    "old, new",
    [
        ("ranking", "ufs.stats.ranking"),
        ("tracking", "ufs.tracking"),
        ("steps", "ufs.pipeline.steps"),
        ("aggregate", "ufs.report.aggregate"),
    ],
)
def test_old_names_warn_and_are_the_moved_modules(old, new):
    sys.modules.pop(f"ufs.bench.{old}", None)
    with pytest.warns(DeprecationWarning, match=f"ufs.bench.{old} moved to {new}"):
        mod = importlib.import_module(f"ufs.bench.{old}")
    assert mod is importlib.import_module(new)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from ufs import bench

        assert getattr(bench, old) is mod


def test_every_moved_name_resolves():
    from ufs import bench

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for old, new in bench.MOVED.items():
            assert importlib.import_module(f"ufs.bench.{old}").__name__ == new
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("ufs.bench.no_such_module")
