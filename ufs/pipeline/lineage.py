"""Lineage: the key of everything an evaluation's numbers depend on.

An evaluation is current when its recorded lineage equals the plan's. The lineage hashes
the data (data set, seed, h grid, data code, a file data set's spec and content), the fit
job (its tasks and parameters, graph specs, method and graph code, budget key) and the
evaluation's settings and code (:meth:`PlanLineage.chunk_lineage`). The Snakefile uses
it as a rule parameter and to decide whether an evaluation restored from an archive
without its fit files is done (``workflow/rules/common.smk``).

**Code versions, scheme 2** (:data:`SCHEME`). A code version hashes what changes results:
the *normalized syntax tree* of each source file — parsed, docstrings removed, printed back
by :func:`ast.unparse` (comments and formatting are gone) — keyed by the module's dotted
name, not its file path (:func:`code_digest`, :func:`modules_hash`). A docstring, a
comment or a reformatting re-runs nothing; a changed line of a solver re-runs that
method's fits only. Scheme 1 (until 2026-11-27) hashed the files' bytes and paths
(:func:`ufs.registry.source_hash`, :func:`~ufs.registry.closure_hash`,
:func:`~ufs.registry.package_hash`, still what a fit records as ``code_version``).

**Migration** (:func:`migrate_evaluations`, ``ufs benchmark-migrate``): an evaluation
whose recorded lineage is the plan's under scheme 1 *computed on the same source files*
is current; its lineage is rewritten to scheme 2. Any other evaluation is left as it is
(the workflow re-fits it). It is exact at the commit that introduced scheme 2, whose
files are byte for byte those of every archive made under scheme 1 with current code;
an older archive is migrated from a checkout of that commit.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import math
import os
import re
import textwrap
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from .. import registry
from ..fileio import read_json, write_json
from ..registry import (
    _entry_value,
    closure_hash,
    get_method,
    package_hash,
    source_files,
    source_hash,
)
from . import budget as budget_rules

__all__ = [
    "SCHEME",
    "CodeVersions",
    "PlanLineage",
    "code_digest",
    "migrate_evaluations",
    "modules_hash",
    "plan_lineages",
    "rekey_evaluations",
    "normalized_source",
]

#: the code-version scheme of new lineages (module docstring)
SCHEME = 2


# -- code versions ------------------------------------------------------------------------
def normalized_source(source: str | bytes, filename: str = "<source>") -> str:
    """``source`` parsed, its docstrings (module, class, function) removed and printed
    back by :func:`ast.unparse`: equal for two files that differ only in docstrings,
    comments or formatting."""
    tree = ast.parse(source, filename=filename)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            first = body[0] if body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                node.body = body[1:] or [ast.Pass()]
    return ast.unparse(tree)


@functools.cache
def _digest(path: Path, mtime_ns: int, size: int) -> str:
    return hashlib.sha256(normalized_source(path.read_bytes(), str(path)).encode()).hexdigest()


def code_digest(path: str | Path) -> str:
    """sha256 of :func:`normalized_source` of the file ``path`` (cached per mtime)."""
    path = Path(path)
    st = path.stat()
    return _digest(path.resolve(), st.st_mtime_ns, st.st_size)


def module_name(path: Path, root: Path | None = None) -> str:
    """The dotted module name of ``path`` (``ufs.methods.fsbc``; a package's
    ``__init__.py`` is the package), or the file name for a file outside ``root``
    (default: the ``ufs`` package)."""
    root = registry._PKG if root is None else root
    path = Path(path).resolve()
    if not path.is_relative_to(root):
        return path.name
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules_hash(
    files: Iterable[Path], *, exclude: tuple[str, ...] = (), root: Path | None = None
) -> str:
    """Hash of the files' :func:`code_digest`, keyed and ordered by module name; modules
    whose name starts with one of ``exclude`` (dotted, e.g. ``ufs.methods.``) left out."""
    keyed = sorted((module_name(f, root), f) for f in files)
    h = hashlib.sha256()
    for name, f in keyed:
        if name.startswith(exclude):
            continue
        h.update(name.encode() + b"\0" + code_digest(f).encode() + b"\0")
    return h.hexdigest()[:12]


#: modules holding data set *entries* (their loaders and specs): hashed per data set through
#: the entry's own loader (:func:`dataset_code`), not as a whole, so that adding a data set
#: (or its reader, in a module only the catalog imports) re-runs no other data set
ENTRY_MODULES = ("datasets/catalog.py",)
#: the methods' registrations (``ufs/methods/__init__.py``: every built-in method's entry,
#: and the loading of methods from outside the package, :mod:`ufs.plugins`): each method's
#: entry is part of its own code version (:func:`method_entry`), so a step's closure
#: neither hashes nor follows it. Until 2026-11-27 it did, and registering a method (or a
#: plugin hook) changed every evaluation's lineage; archives made before are re-keyed by
#: :func:`rekey_evaluations` (``ufs benchmark-migrate --before``).
REGISTRATION_MODULES = ("methods/__init__.py",)


def method_entry(name: str) -> dict[str, Any]:
    """The registry entry's part that changes results (class, kind, fixed parameters,
    grid, defaults, draws; not the reference text) and, for a method from an installed
    package (:mod:`ufs.plugins`), that package's name and version: its other modules are
    not hashed, so an upgrade re-fits it."""
    from ..plugins import distribution_of

    spec = get_method(name)
    package = distribution_of(getattr(spec.cls, "wrapped", spec.cls))
    return {
        **({"distribution": package} if package else {}),
        "name": spec.name,
        "class": f"{spec.cls.__module__}.{spec.cls.__qualname__}",
        "kind": spec.kind,
        "fixed": spec.fixed,
        "grid": spec.grid,
        "defaults": spec.defaults,
        **({"draws": spec.draws} if spec.draws else {}),
    }


def method_code(name: str) -> str:
    """Scheme-2 code version of a method: its registry entry and the normalized syntax
    trees of :func:`ufs.registry.source_files` (its module, what it imports, the core)."""
    entry = json.dumps(method_entry(name), sort_keys=True, default=_entry_value)
    return hashlib.sha256(entry.encode() + modules_hash(source_files(name)).encode()).hexdigest()[
        :12
    ]


def closure_code(*relative: str, exclude: tuple[str, ...] = ("methods/",)) -> str:
    """Scheme-2 code version of workflow steps: :func:`modules_hash` of the modules
    ``relative`` (paths in the package) and every ``ufs`` module they import; the
    methods' own modules (``exclude``) are the fit jobs' key, the data set entries
    (:data:`ENTRY_MODULES`, and what only they import) each data set's
    (:func:`dataset_code`)."""
    pkg = registry._PKG
    dotted = tuple(f"{pkg.name}." + e.rstrip("/").replace("/", ".") + "." for e in exclude)
    stop = {(pkg / m).resolve() for m in (*ENTRY_MODULES, *REGISTRATION_MODULES)}
    return modules_hash(
        registry.module_closure(*(pkg / r for r in relative), stop=stop), exclude=dotted
    )


def package_code(*relative: str) -> str:
    """Scheme-2 code version of the package files ``relative``."""
    return modules_hash([registry._PKG / r for r in relative])


# -- the data code of one data set ------------------------------------------------------------
def _is_ours(obj: Any) -> bool:
    mod = getattr(obj, "__module__", None) or getattr(obj, "__name__", "")
    return isinstance(mod, str) and (mod == registry._PKG.name or mod.startswith("ufs."))


def _function_closure(fn: Any, out: dict[str, str]) -> None:
    """Into ``out`` (qualified name → normalized source digest): ``fn`` and every ``ufs``
    function, class or module its code refers to (globals and closure cells,
    transitively); other objects it refers to by value (constants) by their ``repr``."""
    import inspect
    import types

    key = f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', repr(fn))}"
    if key in out:
        return
    if isinstance(fn, types.ModuleType):
        out[fn.__name__] = code_digest(fn.__file__)
        return
    src = inspect.getsource(fn)
    out[key] = hashlib.sha256(normalized_source(textwrap.dedent(src)).encode()).hexdigest()
    if not isinstance(fn, types.FunctionType):
        return
    refs = inspect.getclosurevars(fn)
    for name, value in sorted({**refs.globals, **refs.nonlocals}.items()):
        if isinstance(value, (types.FunctionType, type, types.ModuleType)):
            if _is_ours(value):
                _function_closure(value, out)
        elif isinstance(value, (str, int, float, bool, tuple, frozenset, type(None))):
            out[f"{key}:{name}"] = repr(value)


#: registry entry fields that document a data set without changing what is read
_TEXT_FIELDS = ("loader", "citation", "papers", "notes", "subsample", "homepage", "needs_network")


def dataset_code(name: str | None, shared: str | None = None) -> str:
    """Scheme-2 code version of reading one data set: the normalized syntax trees of the
    modules the data step imports (``shared``, default :func:`closure_code` of
    ``pipeline/data_steps.py``: :data:`ENTRY_MODULES` left out, and what only they import),
    plus — for a registered data set ``name`` — its registry entry (every field, the
    loader by name) and the normalized source of its loader and of every ``ufs`` function,
    class or module the loader refers to, transitively. ``None``: a data set given as a
    file (its spec and content are in the lineage already)."""
    if shared is None:
        shared = closure_code("pipeline/data_steps.py")
    if name is None:
        return shared
    from dataclasses import fields

    from ..datasets import get_dataset

    spec = get_dataset(name)
    entry = {f.name: getattr(spec, f.name) for f in fields(spec) if f.name not in _TEXT_FIELDS}
    loader: dict[str, str] = {}
    _function_closure(spec.loader, loader)
    blob = json.dumps([shared, entry, sorted(loader.items())], sort_keys=True, default=repr)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


class CodeVersions:
    """The code versions a lineage uses, under one scheme (1: bytes and paths; 2: the
    normalized syntax trees by module). Method versions are computed once each."""

    def __init__(self, scheme: int = SCHEME) -> None:
        if scheme not in (1, 2):
            raise ValueError(f"unknown lineage scheme {scheme} (1 or 2)")
        self.scheme = scheme
        closure, package = (
            (closure_hash, package_hash)
            if scheme == 1
            else (
                closure_code,
                package_code,
            )
        )
        self._method: Callable[[str], str] = source_hash if scheme == 1 else method_code
        #: evaluation, data and graph steps (the Snakefile's rule parameters)
        self.evaluate = closure("evaluation.py", "metrics.py", "pipeline/steps.py")
        #: reading the data: scheme 1 the one key of every data set, scheme 2 the part
        #: shared by all (:meth:`dataset` adds each data set's own)
        self.data = closure("pipeline/data_steps.py")
        self._datasets: dict[str | None, str] = {}
        self.graph = package("graph.py", "preprocessing.py", "validation.py")
        self.aggregate = closure("report/aggregate.py")
        self.track = closure("tracking/runs.py")
        self._closure = closure
        self._stability: str | None = None
        self._methods: dict[str, str] = {}

    @property
    def stability(self) -> str:
        """The stability step's code (:mod:`ufs.pipeline.stability_step` and the estimator
        of :mod:`ufs.stability`, with what they import), computed once when first asked."""
        if self._stability is None:
            self._stability = self._closure("pipeline/stability_step.py", "stability.py")
        return self._stability

    def dataset(self, name: str | None) -> str:
        """The data code of the registered data set ``name`` (``None``: a file data set);
        under scheme 1 the one data key (:attr:`data`)."""
        if self.scheme == 1:
            return self.data
        if name not in self._datasets:
            self._datasets[name] = dataset_code(name, shared=self.data)
        return self._datasets[name]

    def method(self, name: str) -> str:
        if name not in self._methods:
            self._methods[name] = self._method(name)
        return self._methods[name]


# -- the lineage of a plan's chunks --------------------------------------------------------
class PlanLineage:
    """What the workflow keys its jobs on, for one plan (:func:`ufs.pipeline.config.build_plan`)
    and config; ``out``: the run's results folder (the fit records the budget key reads)."""

    def __init__(self, plan: Any, config: dict[str, Any], out: str | Path, scheme: int = SCHEME):
        self.plan, self.config, self.out = plan, config, str(out)
        self.code = CodeVersions(scheme)
        ev = config.get("evaluation", {}) or {}
        self.restarts = int(ev.get("restarts", 20))
        self.nmi_average = ev.get("nmi_average", "arithmetic")
        self.seed = int(config.get("seed", 0))
        self.budget = (config.get("jobs") or {}).get("fit_budget_seconds", 600)
        self.graphs = {s.graph_id: s.graph for _, s in plan.jobs() if s.graph_id}
        self._graph_chunks: dict[str, dict[str, set[str]]] = {}
        self._fit_records: dict[tuple[str, str], Any] = {}
        self._evaluations: dict[tuple[str, str], Any] = {}
        self._stability_records: dict[tuple[str, str], Any] = {}
        self._content: dict[tuple, str] = {}

    # the fit job's inputs
    def chunk_tasks(self, dataset: str, chunk: str) -> list[dict[str, Any]]:
        """The fit tasks of one job, with everything the job needs to run them."""
        out = []
        for t in self.plan.chunks(dataset)[chunk]:
            s = self.plan.setting(t.method, t.pid)
            out.append({**t.as_dict(), "params": s.params, "graph_id": s.graph_id})
        return out

    def graph_chunks(self, dataset: str) -> dict[str, set[str]]:
        """Graph id → the chunks of ``dataset`` whose tasks use that graph."""
        if dataset not in self._graph_chunks:
            users: dict[str, set[str]] = {}
            for c, tasks in self.plan.chunks(dataset).items():
                for t in tasks:
                    gid = self.plan.setting(t.method, t.pid).graph_id
                    if gid:
                        users.setdefault(gid, set()).add(c)
            self._graph_chunks[dataset] = users
        return self._graph_chunks[dataset]

    def shared_graphs(self, dataset: str) -> list[str]:
        """The graphs several fit jobs of ``dataset`` use (built once by the graph step);
        a graph one fit job uses is built inside that job."""
        return sorted(g for g, cs in self.graph_chunks(dataset).items() if len(cs) > 1)

    def chunk_gids(self, dataset: str, chunk: str) -> list[str]:
        return sorted({t["graph_id"] for t in self.chunk_tasks(dataset, chunk) if t["graph_id"]})

    def chunk_graph_specs(self, dataset: str, chunk: str) -> dict[str, Any]:
        """The specs of the graphs only this chunk uses: its fit job builds them."""
        shared = set(self.shared_graphs(dataset))
        return {g: self.graphs[g] for g in self.chunk_gids(dataset, chunk) if g not in shared}

    def chunk_code(self, dataset: str, chunk: str) -> list[str]:
        """Code versions of the chunk's methods, and of the graph code when the job
        builds a graph itself."""
        methods = {t.method for t in self.plan.chunks(dataset)[chunk]}
        code = sorted(f"{m}:{self.code.method(m)}" for m in methods)
        return code + (
            [f"graph:{self.code.graph}"] if self.chunk_graph_specs(dataset, chunk) else []
        )

    def recorded_evaluation(self, dataset: str, chunk: str) -> Any:
        """The chunk's evaluation file as it is on disk (``None``: absent or unreadable).
        Read once: the fit record and the restore check both use it."""
        key = (dataset, chunk)
        if key not in self._evaluations:
            self._evaluations[key] = _read_or_none(f"{self.out}/evaluations/{dataset}/{chunk}.json")
        return self._evaluations[key]

    def restored_lineages(self, dataset: str, chunk: str) -> tuple[str, str] | None:
        """(recorded, plan) lineages of a chunk whose evaluation was restored without its
        fit files (a fresh machine after ``ufs benchmark-restore``); ``None`` when the fit
        files are there or there is no evaluation with a recorded lineage. The workflow
        keeps such an evaluation when the two agree and re-fits it otherwise."""
        if os.path.exists(f"{self.out}/fits/{dataset}/{chunk}.json"):
            return None
        ev = self.recorded_evaluation(dataset, chunk)
        if ev is None or not ev.get("lineage"):
            return None
        return ev["lineage"], self.chunk_lineage(dataset, chunk)

    def recorded_stability(self, dataset: str, method: str) -> Any:
        """The stability record of ``method`` on ``dataset`` as it is on disk (``None``:
        absent or unreadable). Read once."""
        key = (dataset, method)
        if key not in self._stability_records:
            self._stability_records[key] = _read_or_none(
                f"{self.out}/stability/{dataset}/{method}.json"
            )
        return self._stability_records[key]

    def stability_budget_key(self, dataset: str, method: str) -> Any:
        """The stability job's budget key (:func:`stability_budget_key` of its record)."""
        return stability_budget_key(self.recorded_stability(dataset, method), self.budget)

    def restored_stability_lineages(
        self, dataset: str, setting: Any, h: int, stability: dict[str, Any]
    ) -> tuple[str | None, str] | None:
        """(recorded, plan) lineages of a stability record restored without its log (a
        fresh machine after ``ufs benchmark-restore``; a record made before records kept a
        lineage records ``None``); ``None`` when the log is there or there is no record.
        The workflow keeps such a record when the two agree and makes it again otherwise."""
        method = setting.method
        if os.path.exists(f"{self.out}/logs/stability/{dataset}/{method}.log"):
            return None
        record = self.recorded_stability(dataset, method)
        if record is None:
            return None
        return record.get("lineage"), self.stability_lineage(dataset, setting, h, stability)

    def fit_record(self, dataset: str, chunk: str) -> Any:
        """The fit job's recorded budget facts: its info file, else the copy a (restored)
        evaluation holds (``fit_job``), else ``None``. Read once."""
        key = (dataset, chunk)
        if key not in self._fit_records:
            info = _read_or_none(f"{self.out}/fits/{dataset}/{chunk}.json")
            if info is None:
                info = (self.recorded_evaluation(dataset, chunk) or {}).get("fit_job")
            self._fit_records[key] = info
        return self._fit_records[key]

    def budget_key(self, dataset: str, chunk: str) -> Any:
        """The fit job's budget parameter (:func:`ufs.pipeline.budget.budget_key`)."""
        return budget_rules.budget_key(self.fit_record(dataset, chunk), self.budget)

    def fit_runtime_minutes(self, dataset: str, chunk: str) -> int:
        """A fit job's time limit (minutes): every fit at the per-fit CPU budget, plus 10 %
        and 10 minutes, and at least 120 minutes."""
        fits = sum(len(t.hs) for t in self.plan.chunks(dataset)[chunk])
        return max(120, 10 + math.ceil(1.1 * fits * float(self.budget) / 60))

    def evaluation_meta(self, dataset: str, chunk: str) -> dict[str, Any]:
        """The protocol membership of the chunk's settings (only theirs)."""
        inst = self.plan.instances[dataset]
        settings = {}
        for t in self.plan.chunks(dataset)[chunk]:
            s = self.plan.setting(t.method, t.pid)
            settings[f"{s.method}|{s.pid}"] = {
                "label_free": s.label_free,
                "in_grid": self.plan.in_grid(s, dataset),
            }
        return {
            "dataset": dataset,
            "dataset_base": inst.base,
            "seed": self.seed,
            "settings": settings,
        }

    def data_code(self, dataset: str) -> str:
        """The code version of reading ``dataset`` (:meth:`CodeVersions.dataset`)."""
        inst = self.plan.instances[dataset]
        return self.code.dataset(None if inst.file else inst.base)

    def file_version(self, dataset: str) -> dict[str, Any]:
        """A file data set's whole spec and the sha256 of its content (hashed once per
        file version)."""
        from ..datasets.mirror import sha256_file

        spec = self.plan.instances[dataset].file
        st = os.stat(spec["file"])
        key = (spec["file"], st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        if key not in self._content:
            self._content[key] = sha256_file(spec["file"])
        return {**dict(sorted(spec.items())), "content_sha256": self._content[key]}

    def data_key(self, dataset: str) -> list[Any]:
        """What a data set instance's content depends on: its base, seed, h grid, the code
        that reads it and, for a file data set, the file's spec and content."""
        inst = self.plan.instances[dataset]
        return [inst.base, inst.seed, list(inst.hs), self.data_code(dataset)] + (
            [self.file_version(dataset)] if inst.file else []
        )

    def chunk_lineage(self, dataset: str, chunk: str) -> str:
        """Everything an evaluation's content depends on, hashed (module docstring)."""
        blob = {
            "data": self.data_key(dataset),
            "fit": [
                self.chunk_tasks(dataset, chunk),
                {g: self.graphs[g] for g in self.chunk_gids(dataset, chunk)},
                self.chunk_code(dataset, chunk),
                self.budget_key(dataset, chunk),
            ],
            "evaluate": [
                self.evaluation_meta(dataset, chunk),
                self.restarts,
                self.nmi_average,
                self.seed,
                self.code.evaluate,
            ],
        }
        return _blob_hash(blob)

    def stability_lineage(
        self, dataset: str, setting: Any, h: int, stability: dict[str, Any]
    ) -> str:
        """Everything a stability record's content depends on, hashed: the data (as an
        evaluation's), the method's setting (``stability_settings`` of
        :mod:`ufs.pipeline.stability_step`) and code, the h, the stability step's
        parameters (``stability``: the config section with its defaults) and code, and the
        budget's re-run key (:func:`stability_budget_key`)."""
        blob = {
            "data": self.data_key(dataset),
            "stability": [
                setting.method,
                setting.pid,
                setting.params,
                int(h),
                self.code.method(setting.method),
                self.code.stability,
                {k: stability.get(k) for k in ("m", "fraction", "level")},
                _number(self.stability_budget_key(dataset, setting.method)),
            ],
        }
        return _blob_hash(blob)

    def stability_lineages(self) -> dict[tuple[str, str], str]:
        """``{(data set, method): lineage}`` of every stability job of the plan
        (:func:`ufs.pipeline.stability_step.stability_jobs`; none when stability is off)."""
        from .stability_step import stability_config, stability_jobs, stability_settings

        cfg = stability_config(self.config)
        settings = stability_settings(self.plan)
        return {
            (d, m): self.stability_lineage(d, settings[m], h, cfg)
            for d, m, h in stability_jobs(self.plan, self.config)
        }


def stability_budget_key(record: dict[str, Any] | None, budget: float | None) -> Any:
    """A stability job's re-run key for the budget, as a fit job's
    (:func:`ufs.pipeline.budget.budget_key`): the key its record ran under when each of its
    draws would end the same under ``budget`` (each finished draw used at most ``budget``
    CPU-s; a draw stopped for time ran under a budget of at least ``budget``), else
    ``budget``. ``None`` record (not run yet, or made before records kept their budget):
    ``budget``."""
    if not record or budget is None or "budget_seconds" not in record:
        return budget
    ran = float(record["budget_seconds"])
    for draw in record.get("fits") or []:
        if draw.get("status") != "budget_exceeded":
            if float(draw.get("cpu_seconds", float("inf"))) > float(budget):
                return budget
        elif float(budget) > ran:
            return budget
    return record.get("budget_key", record["budget_seconds"])


def _number(x: Any) -> float | None:
    """A budget as one type (the config's 600 and a record's 600.0 are one key)."""
    return None if x is None else float(x)


def _blob_hash(blob: dict[str, Any]) -> str:
    text = json.dumps(blob, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _read_or_none(path: str) -> Any:
    try:
        return read_json(path) if os.path.exists(path) else None
    except (OSError, ValueError):  # unreadable: no record (damaged_files says why)
        return None


# -- migration -----------------------------------------------------------------------------
def _translate(
    out: str | Path, now: PlanLineage, was: Callable[[str], str | None]
) -> dict[str, int]:
    """Rewrite the lineage of ``out``'s evaluations and stability records to ``now``'s where
    the recorded one is ``was(key)`` (key: ``"<data set>/<chunk>"`` of an evaluation,
    ``"stability/<data set>/<method>"`` of a stability record; the old lineage kept as
    ``lineage_migrated_from``). Counts, of evaluations and, prefixed ``stability_``, of
    stability records: ``migrated``, ``current`` (``now``'s already), ``stale`` (neither:
    left for the workflow to make again), ``absent`` (no record, or one without lineage)."""
    counts = {f"{p}{k}": 0 for p in ("", "stability_") for k in _COUNTS}
    plan = now.plan
    # (key, file, counts' prefix, the lineage now: computed only for a record on disk)
    records = [
        (f"{d}/{c}", f"evaluations/{d}/{c}.json", "", functools.partial(now.chunk_lineage, d, c))
        for d in plan.instances
        for c in plan.chunks(d)
    ]
    stability = now.stability_lineages()
    records += [
        (f"stability/{d}/{m}", f"stability/{d}/{m}.json", "stability_", lambda v=v: v)
        for (d, m), v in stability.items()
    ]
    for key, member, prefix, lineage_now in records:
        path = Path(out) / member
        doc = _read_or_none(str(path))
        if doc is None or not doc.get("lineage"):
            counts[f"{prefix}absent"] += 1
            continue
        target = lineage_now()
        if doc["lineage"] == target:
            counts[f"{prefix}current"] += 1
        elif doc["lineage"] == was(key):
            doc.update(lineage=target, lineage_migrated_from=doc["lineage"])
            write_json(path, doc)
            counts[f"{prefix}migrated"] += 1
        else:
            counts[f"{prefix}stale"] += 1
    return counts


_COUNTS = ("migrated", "current", "stale", "absent")


def migrate_evaluations(plan: Any, config: dict[str, Any], out: str | Path) -> dict[str, int]:
    """Rewrite the lineage of ``out``'s evaluations from scheme 1 to scheme 2 where the
    recorded lineage is the plan's under scheme 1 on the current source files (module
    docstring); counts as :func:`_translate`. Stability records kept a lineage only
    under scheme 2: none has a scheme-1 one to translate."""
    old = PlanLineage(plan, config, out, scheme=1)

    def was(key: str) -> str | None:  # computed only for a record whose lineage is not now's
        return None if key.startswith("stability/") else old.chunk_lineage(*key.split("/", 1))

    return _translate(out, PlanLineage(plan, config, out, scheme=2), was)


def _plan(config: dict[str, Any], mirror_dir: str | None) -> tuple[Any, dict[str, Any]]:
    from .config import build_plan

    cfg = dict(config)
    if mirror_dir is not None:
        cfg["mirror_dir"] = mirror_dir
    return build_plan(cfg, warn=False), cfg


def migrate_results(
    results_dir: str | Path, config: dict[str, Any], *, mirror_dir: str | None = None
) -> dict[str, int]:
    """:func:`migrate_evaluations` of a results folder under ``config`` (its plan is
    built here; ``mirror_dir`` overrides the config's)."""
    plan, cfg = _plan(config, mirror_dir)
    return migrate_evaluations(plan, cfg, results_dir)


def plan_lineages(
    results_dir: str | Path, config: dict[str, Any], *, mirror_dir: str | None = None
) -> dict[str, str]:
    """``{"<data set>/<chunk>": lineage}`` of every chunk of ``config``'s plan and
    ``{"stability/<data set>/<method>": lineage}`` of every stability job, with the fit
    and stability records of ``results_dir`` (the budget keys): what the code of this
    checkout calls current. ``benchmarks/plan_lineages.py`` writes it for a declared
    refactor."""
    plan, cfg = _plan(config, mirror_dir)
    return plan_keys(PlanLineage(plan, cfg, results_dir))


def plan_keys(lineage: PlanLineage) -> dict[str, str]:
    """``lineage``'s plan as :func:`plan_lineages` writes it: ``"<data set>/<chunk>"`` of
    every chunk and ``"stability/<data set>/<method>"`` of every stability job."""
    plan = lineage.plan
    out = {f"{d}/{c}": lineage.chunk_lineage(d, c) for d in plan.instances for c in plan.chunks(d)}
    out.update({f"stability/{d}/{m}": v for (d, m), v in lineage.stability_lineages().items()})
    return out


def rekey_evaluations(
    results_dir: str | Path,
    config: dict[str, Any],
    before: dict[str, str],
    *,
    mirror_dir: str | None = None,
) -> dict[str, int]:
    """A **declared refactor** (a change of code that changes no result, but changes the
    lineage: a module moved, a closure rule fixed): ``before`` is :func:`plan_lineages` of
    the same results and config computed by the code *before* the refactor (its
    checkout). An evaluation (a stability record) whose recorded lineage equals its
    chunk's (its job's) lineage there was current then, and is current now: its lineage
    becomes the plan's lineage of this code (the old one kept as
    ``lineage_migrated_from``). Any other record is left as it is (stale then, stale now:
    the workflow makes it again). The declaration is the reviewer's: the refactor's diff
    must change no number. Counts as :func:`migrate_evaluations`."""
    plan, cfg = _plan(config, mirror_dir)
    return _translate(results_dir, PlanLineage(plan, cfg, results_dir), before.get)


#: a re-key's sentence in an archive's note: one per re-key (before rekey_note) or the tally
_REKEY_SENTENCE = re.compile(
    r" ?Lineages re-keyed across (?:a declared refactor|\d+ declared refactors?) "
    r"\(ufs\.(?:bench|pipeline)\.lineage\)(?::| \(evaluations translated each time:) "
    r"(?P<body>[^.]*)\."
)


#: the stability records' re-key sentence, after the tally (one for every re-key)
_STABILITY_SENTENCE = re.compile(
    r" ?Stability records re-keyed: (?P<done>\d+) translated, (?P<left>\d+) left stale\."
)


def rekey_note(
    note: str, migrated: int, stale: int, stability_migrated: int = 0, stability_stale: int = 0
) -> str:
    """``note`` with the re-keys it records (one sentence each, as archives wrote them,
    or this function's tally) and one more (``migrated`` evaluations translated,
    ``stale`` left stale) as one tally sentence at the end: an archive re-keyed at every
    refactor read "Lineages re-keyed ..." nine times in its report's provenance line. The
    stability records re-keyed (``stability_migrated``, ``stability_stale``), summed over
    the re-keys, follow in a sentence of their own when there were any."""
    counts: list[tuple[int, int]] = []
    for m in _REKEY_SENTENCE.finditer(note):
        body = m.group("body")
        if "translated each time" in m.group(0):  # a tally: "a, b, c); d left stale"
            done, left = body.split(");")
            counts += [(int(x), 0) for x in done.split(",")]
            counts[-1] = (counts[-1][0], int(left.split()[0]))
        else:  # "N evaluations translated, S left stale"
            done, left = body.split(",")
            counts.append((int(done.split()[0]), int(left.split()[0])))
    counts.append((migrated, stale))
    for m in _STABILITY_SENTENCE.finditer(note):
        stability_migrated += int(m.group("done"))
        stability_stale += int(m.group("left"))
    rest = _STABILITY_SENTENCE.sub("", _REKEY_SENTENCE.sub("", note)).rstrip()
    if rest and not rest.endswith("."):
        rest += "."
    tally = (
        f"Lineages re-keyed across {len(counts)} declared "
        f"refactor{'s' if len(counts) > 1 else ''} (ufs.pipeline.lineage) "
        f"(evaluations translated each time: {', '.join(str(n) for n, _ in counts)}); "
        f"{sum(s for _, s in counts)} left stale."
    )
    if stability_migrated or stability_stale:
        tally += (
            f" Stability records re-keyed: {stability_migrated} translated, "
            f"{stability_stale} left stale."
        )
    return f"{rest} {tally}" if rest else tally


def migrate_archive(
    archive: str | Path,
    out: str | Path | None = None,
    *,
    mirror_dir: str | None = None,
    before: dict[str, str] | None = None,
) -> dict[str, int]:
    """Migrate a results archive (``out``: default in place): its members are restored
    into a temporary folder, the evaluations migrated under the archive's own config —
    scheme 1 to 2 (:func:`migrate_results`), or, given ``before``, re-keyed across a
    declared refactor (:func:`rekey_evaluations`, evaluations and stability records) —
    and the archive written again with the same commit, config and note (a sentence about
    the migration added), every other member byte for byte. Returns the counts; the
    archive is rewritten only when a record was migrated."""
    import tempfile

    import yaml

    from .archive import read_archive, restore_archive, write_archive

    manifest, _ = read_archive(archive)
    with tempfile.TemporaryDirectory(prefix="ufs-migrate-") as tmp:
        root = Path(tmp) / "results"
        restore_archive(archive, root)
        config = yaml.safe_load(manifest["config"]["text"]) or {}
        if before is None:
            counts = migrate_results(root, config, mirror_dir=mirror_dir)
            what = f"Lineages migrated to scheme {SCHEME} (ufs.pipeline.lineage)"
        else:
            counts = rekey_evaluations(root, config, before, mirror_dir=mirror_dir)
        if counts["migrated"] or counts["stability_migrated"]:
            cfg_file = Path(tmp) / "config.yaml"
            cfg_file.write_text(manifest["config"]["text"])
            note = (manifest.get("note") or "").rstrip()
            if before is None:
                note += (" " if note else "") + (
                    f"{what}: {counts['migrated']} evaluations translated, {counts['stale']} "
                    "left stale."
                )
            else:
                note = rekey_note(
                    note,
                    counts["migrated"],
                    counts["stale"],
                    counts["stability_migrated"],
                    counts["stability_stale"],
                )
            scaling = root / "input_scaling"
            written = write_archive(
                root,
                cfg_file,
                out or archive,
                note=note,
                commit=manifest["commit"],
                config_label=manifest["config"]["path"],
                input_scaling=scaling if scaling.is_dir() else None,
                # the versions that wrote it, or none recorded (an archive from before they were)
                environment=manifest.get("environment", {}),
            )
            lost = set(manifest["files"]) - set(written["files"])
            if lost:  # never: every kind of member is archived again
                raise RuntimeError(f"migration would drop {sorted(lost)[:5]}")
            changed = [m for m, h in written["files"].items() if manifest["files"].get(m) != h]
            if any(not m.startswith(("evaluations/", "stability/")) for m in changed):
                raise RuntimeError(
                    "migration changed a member that is not an evaluation or stability record"
                )
    return counts
