"""Expand a workflow config into the plan of jobs, and check what a JSON schema cannot.

The schema (``workflow/schemas/config.schema.yaml``) checks types and ranges; this module
checks meaning — unknown datasets or methods, unknown method parameters, ``h ≥ p``, a
method that cannot fit a dataset's shape, names that cannot be file names, an output
directory that would hold the repository or the home directory, a config inflated by YAML
aliases — and raises :class:`ConfigError` naming the offending key, before any job runs.

Nested ``--config`` overrides (``--config evaluation='{restarts: 5}'``) reach the config as
strings (Snakemake reads them with YAML's base loader); the Snakefile reads them by the
schema's declared types (:func:`coerce_config_strings`) right before the schema.

Planning is linear in the number of settings: the plan's task chunks and its setting
index are built once, so every per-job lookup of the workflow is a dict access.

Size (~700 lines): :func:`build_plan` and the :class:`Plan` it returns are one unit —
every check of meaning needs the plan under construction (the data set's shape for
``h``, the method's parameters for a grid); the document-level checks moved to
:mod:`.config_checks`.
"""

from __future__ import annotations

import copy
import math
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..availability import unavailable_note, unavailable_reason
from ..datasets import get_dataset
from ..preprocessing import check_input_space
from ..registry import available_methods, expand_grid, get_method, make_estimator, params_id
from .config_checks import (  # re-exported: the config's checks, one import for callers
    _NAME,
    LARGE_PLAN,
    NAME_PATTERN,
    SCHEMA_PATH,
    ConfigError,
    PlanSizeWarning,
    check_config_size,
    check_duplicate_keys,
    coerce_config_strings,
    config_flag,
    refuse_yte,
    schema_error_message,
    short_repr,
)
from .data_steps import file_entry

__all__ = [
    "ConfigError",
    "Plan",
    "Setting",
    "Task",
    "Instance",
    "build_plan",
    "REPLICATE_SEP",
    "CHUNK_SEP",
    "REFERENCE_DRAWS",
    "MIN_H_VALUES",
    "CHUNK_PATTERN",
    "PROTOCOLS",
    "file_entry",
    "dataset_h",
    "merge_configs",
    "refuse_yte",
    "relative_h",
    "resolve_h",
    "check_config_size",
    "coerce_config_strings",
    "SCHEMA_PATH",
    "check_duplicate_keys",
    "schema_error_message",
    "short_repr",
    "PlanSizeWarning",
    "NAME_PATTERN",
    "LARGE_PLAN",
]

REPLICATE_SEP = "-r"
#: default number of draws of a chance reference (``evaluation.reference_draws``)
REFERENCE_DRAWS = 30
#: between a chunk id's method and its number: ``kmeans_ufs.c000``
CHUNK_SEP = "."
#: a chunk id (the workflow's ``chunk`` wildcard)
CHUNK_PATTERN = r"[A-Za-z0-9_]+[.]c[0-9][0-9][0-9]+"
#: the evaluation protocols a config may run (key ``protocols``): label-free defaults and
#: the label-tuned grid ("oracle")
PROTOCOLS = ("label_free", "oracle")


@dataclass(frozen=True)
class Setting:
    method: str
    pid: str
    params: dict[str, Any]
    label_free: bool  # the method's label-free defaults
    in_grid: bool  # part of the label-tuned grid
    kind: str
    graph: dict[str, Any] | None = None
    graph_id: str | None = None


@dataclass(frozen=True)
class Task:
    """One fit: a setting of a method on a dataset, for the h values in ``hs``
    (``(None,)`` for ranking and full methods, which fit once)."""

    method: str
    pid: str
    hkey: str
    hs: tuple

    def as_dict(self) -> dict[str, Any]:
        return {"method": self.method, "pid": self.pid, "hkey": self.hkey, "hs": list(self.hs)}


@dataclass(frozen=True)
class Instance:
    name: str  # wildcard value, e.g. "golfs_sim1-r2"
    base: str  # registry name
    seed: int
    hs: tuple[int, ...]
    n_features: int
    #: a dataset given as a file in the config (the keys of
    #: :data:`ufs.pipeline.data_steps._FILE_KEYS` it sets), ``None`` for registered datasets
    file: dict[str, Any] | None = None
    #: number of samples and of classes where the plan knows them (registered datasets;
    #: .npz and .mat files), else ``None``
    n_samples: int | None = None
    n_classes: int | None = None


@dataclass
class Plan:
    """The jobs of a config. Read-only once :func:`build_plan` has returned it: the task
    chunks and the setting index are computed once, on first use."""

    config: dict[str, Any]
    instances: dict[str, Instance] = field(default_factory=dict)
    settings: dict[str, list[Setting]] = field(default_factory=dict)
    split_h: dict[str, bool] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)  # datasets left out by offline_only
    #: what :func:`build_plan` warned about (e.g. a plan larger than :data:`LARGE_PLAN`)
    warnings: list[str] = field(default_factory=list)
    #: the instances the label-tuned protocol runs on (config ``oracle_datasets``, by base
    #: name; every instance when it is not given); empty without the ``oracle`` protocol
    #: (``protocols: [label_free]`` on a config that declares a subset runs no grid)
    tuned: frozenset[str] = frozenset()
    #: the config's references a slice by ``only_methods`` keeps (:func:`_slice_references`)
    kept_references: list[str] = field(default_factory=list)
    #: methods of the config left out because a module their fit needs is not installed
    #: here (``build_plan(skip_unavailable=True)``): name → why
    #: (:func:`ufs.availability.unavailable_reason`)
    unavailable: dict[str, str] = field(default_factory=dict)
    _index: dict[tuple[str, str], Setting] = field(default_factory=dict, repr=False, compare=False)
    _chunks: dict[str, dict[str, list[Task]]] = field(
        default_factory=dict, repr=False, compare=False
    )

    # -- paths ------------------------------------------------------------------------
    @property
    def out(self) -> Path:
        return Path(self.config.get("output_dir", "results"))

    def setting(self, method: str, pid: str) -> Setting:
        if not self._index:  # one dict for every lookup (a scan per job is quadratic)
            self._index.update(
                {(s.method, s.pid): s for settings in self.settings.values() for s in settings}
            )
        try:
            return self._index[(method, pid)]
        except KeyError:
            raise KeyError(f"no setting {pid} for method {method}") from None

    def hkeys(self, method: str, dataset: str) -> list[str]:
        """Fit-job keys: ``rank``/``all`` (one fit), ``hs`` (every h in one job) or
        ``h<h>`` (one job per h, when the method's ``split_h`` is set)."""
        kind = get_method(method).kind
        if kind == "subset":
            if self.split_h.get(method, False):
                return [f"h{h}" for h in self.instances[dataset].hs]
            return ["hs"]
        return ["rank"] if kind == "ranking" else ["all"]

    def fit_hs(self, method: str, dataset: str, hkey: str) -> list[int | None]:
        """The h values one fit job covers."""
        if hkey in ("rank", "all"):
            return [None]
        if hkey == "hs":
            return list(self.instances[dataset].hs)
        return [int(hkey[1:])]

    # -- job granularity ------------------------------------------------------------
    @property
    def tasks_per_job(self) -> int:
        return int((self.config.get("jobs") or {}).get("tasks_per_job", 25))

    def is_tuned(self, dataset: str) -> bool:
        """Whether the label-tuned protocol runs on the instance ``dataset``."""
        return dataset in self.tuned

    def dataset_settings(self, method: str, dataset: str) -> list[Setting]:
        """The settings of ``method`` that run on ``dataset``: all of them where the
        label-tuned protocol runs there, else the label-free ones (as a
        ``protocols: [label_free]`` plan has them, so that declaring a tuned subset leaves
        the other data sets' jobs and files as they are)."""
        settings = self.settings[method]
        if self.is_tuned(dataset):
            return settings
        return [s for s in settings if s.label_free]

    def in_grid(self, setting: Setting, dataset: str) -> bool:
        """Whether ``setting`` is a label-tuned candidate on ``dataset``."""
        return setting.in_grid and self.is_tuned(dataset)

    def tasks(self, dataset: str) -> list[Task]:
        """Every fit task of a dataset, in a stable order (method, setting, h)."""
        out = []
        for method in sorted(self.settings):
            for s in sorted(self.dataset_settings(method, dataset), key=lambda s: s.pid):
                for hkey in self.hkeys(method, dataset):
                    out.append(Task(method, s.pid, hkey, tuple(self.fit_hs(method, dataset, hkey))))
        return out

    def chunks(self, dataset: str) -> dict[str, list[Task]]:
        """Tasks batched into jobs of at most ``jobs.tasks_per_job``, per method: ids
        ``<method>.c000``, ``<method>.c001``, ...

        A Python job that imports scikit-learn starts in ~1.5 s while most fits take
        milliseconds to seconds, so one job per fit would spend most of its time starting.
        A chunk holds one method's tasks only, so that its identity does not depend on the
        other methods of the plan: a slice (``only_methods``), an added method or a method
        whose number of settings changes leaves every other method's jobs and files as
        they are (numbering over the whole task list made a slice overwrite
        the full run's chunks).
        """
        if dataset not in self._chunks:  # computed once per dataset, not once per job
            n = max(1, self.tasks_per_job)
            by_method: dict[str, list[Task]] = {}
            for t in self.tasks(dataset):
                by_method.setdefault(t.method, []).append(t)
            out: dict[str, list[Task]] = {}
            for method, tasks in by_method.items():
                width = max(3, len(str(max(len(tasks) - 1, 0) // n)))  # ids sort as numbers
                for i in range(0, len(tasks), n):
                    out[f"{method}{CHUNK_SEP}c{i // n:0{width}d}"] = tasks[i : i + n]
            self._chunks[dataset] = out
        return self._chunks[dataset]

    def n_tasks(self) -> int:
        """Number of fit tasks of the plan (every dataset, setting and fit key)."""
        return sum(
            len(self.dataset_settings(m, d)) * len(self.hkeys(m, d))
            for d in self.instances
            for m in self.settings
        )

    def jobs(self):
        """Every (dataset, setting) pair of the plan."""
        for d in self.instances:
            for m in self.settings:
                for s in self.dataset_settings(m, d):
                    yield d, s


def thin_grid(grid: dict[str, list], max_settings: int | None) -> dict[str, list]:
    """A grid of at most ``max_settings`` points (config ``grid_max_settings``), the
    documented thinning rule of the label-tuned protocol.

    While the product of the value counts exceeds ``max_settings``, the parameter with the
    most values (the first by name on a tie) loses one value; each parameter then keeps
    ``m`` of its ``n`` values evenly spaced by position, ``round(i (n − 1) / (m − 1))`` for
    ``i = 0 … m − 1`` (both ends kept), or the middle value ``(n − 1) // 2`` when ``m = 1``.
    A grid listed in decades (``1e-6 … 1e6``) thins to ``1e-6, 1, 1e6`` at ``m = 3``.
    ``None``: the grid unchanged."""
    if max_settings is None or not grid:
        return dict(grid)
    keys = sorted(grid)
    sizes = {k: len(grid[k]) for k in keys}
    while math.prod(sizes.values()) > max_settings:
        widest = max(keys, key=lambda k: (sizes[k], -keys.index(k)))
        if sizes[widest] == 1:
            break
        sizes[widest] -= 1
    out = {}
    for k in keys:
        n, m = len(grid[k]), sizes[k]
        if m == 1:
            idx = [(n - 1) // 2]
        else:
            idx = [int(round(i * (n - 1) / (m - 1))) for i in range(m)]
        out[k] = [grid[k][i] for i in idx]
    return out


def _require(cond: bool, key: str, msg: str) -> None:
    if not cond:
        raise ConfigError(f"config {key}: {msg}")


#: a data set whose h grid has fewer values is flagged and left out of the cross-data-set
#: ranks by default (with one or two values of h a rank is a lottery)
MIN_H_VALUES = 3


def relative_h(spec: dict[str, Any], n_features: int) -> list[int]:
    """The h grid of a relative spec ``{percent: [...], min: a, max: b}``.

    ``h = round(p · percent / 100)`` (half up), clipped to ``[min, max]`` (``min``
    default 1, ``max`` default none) and to ``p − 1``; equal values once, ascending. E.g.
    ``percent [1, 2, 5, 10, 20]``, ``min 5``, ``max 300``: p = 1024 → 10, 20, 51, 102,
    205; p = 325 → 5, 7, 16, 33, 65; p = 64 → 5, 6, 13.

    Small p: when clipping at ``min`` leaves fewer than :data:`MIN_H_VALUES` values, the
    lower clip is lowered to 1 (``min 5`` left wine, p = 13, one h and
    breast_cancer, p = 30, two): p = 30 → 1, 2, 3, 6; p = 13 → 1, 3 (still fewer than
    three: such a data set is flagged and left out of the ranks by default).
    """
    lo, hi = int(spec.get("min", 1)), spec.get("max")

    def grid(lo: int) -> list[int]:
        out = set()
        for pct in spec["percent"]:
            h = max(lo, math.floor(n_features * float(pct) / 100.0 + 0.5))
            if hi is not None:
                h = min(int(hi), h)
            out.add(max(1, min(h, n_features - 1)))
        return sorted(out)

    hs = grid(lo)
    if len(hs) < MIN_H_VALUES and lo > 1:
        relaxed = grid(1)
        if len(relaxed) > len(hs):
            return relaxed
    return hs


def merge_configs(*configs: dict[str, Any]) -> dict[str, Any]:
    """Several config files as one, as Snakemake merges ``--configfile a b``: a later
    mapping updates an earlier one key by key, recursively; any other value (a list
    included) replaces it. The inputs are not changed."""
    out: dict[str, Any] = {}
    for cfg in configs:
        for key, value in (cfg or {}).items():
            if isinstance(value, dict) and isinstance(out.get(key), dict):
                out[key] = merge_configs(out[key], value)
            else:
                out[key] = copy.deepcopy(value)
    return out


def resolve_h(spec: Any, n_features: int | None) -> list[int]:
    """A dataset's ``h`` entry as a list: a list as given, a relative spec through
    :func:`relative_h` (which needs ``n_features``)."""
    if isinstance(spec, dict):
        if n_features is None:
            raise ConfigError("config h: a relative h grid needs the number of features")
        return relative_h(spec, n_features)
    return list(spec or [])


def dataset_h(
    config: dict[str, Any], instance: str, n_features: int | None = None
) -> tuple[str, list[int]]:
    """``(config key, h values)`` of a dataset instance (``name`` or ``name-r<i>``); a
    relative ``h`` needs ``n_features`` (the workflow passes the plan's values instead)."""
    datasets = config.get("datasets") or {}
    base = instance if instance in datasets else instance.rsplit(REPLICATE_SEP, 1)[0]
    return base, resolve_h((datasets.get(base) or {}).get("h"), n_features)


def _file_dataset(name: str, entry: dict[str, Any]) -> dict[str, Any]:
    """Check a ``datasets.<name>.file`` entry; read only the file's shape."""
    from ..datasets import available_datasets
    from ..datasets.user_files import peek_n_classes, peek_shape

    key = f"datasets.{name}"
    _require(
        name not in available_datasets(),
        key,
        f"{name!r} is a registered dataset; give the file dataset another name",
    )
    spec = file_entry({"datasets": {name: entry}}, name)
    try:
        options = {k: v for k, v in spec.items() if k not in ("file", "sha256")}
        n, p = peek_shape(spec["file"], **options)
    except ValueError as exc:
        raise ConfigError(f"config {key}.file: {exc}") from None
    _require(p >= 2, f"{key}.file", f"the file has {p} feature(s); feature selection needs >= 2")
    # the class count where the labels can be read alone (.npz, .mat); a text file's fit
    # jobs check the shape instead
    k = peek_n_classes(spec["file"], variables=spec.get("variables"))
    return {**spec, "n_features": p, "n_samples": n, "n_classes": k}


def _check_name(section: str, name: Any) -> None:
    """Dataset and method names become file and directory names and wildcard values."""
    key = name[:80] if isinstance(name, str) else short_repr(name, 80)
    _require(
        isinstance(name, str) and _NAME.fullmatch(name) is not None,
        f"{section}.{key}",
        f"{section[:-1]} names must match {NAME_PATTERN} (letters, digits and '_' only, at "
        f"most 64): they become file names and wildcard values; got {short_repr(name, 80)}",
    )


def _check_directory(config: dict[str, Any], key: str, default: str) -> None:
    """``output_dir`` / ``resources_dir`` may not be the filesystem root, the repository,
    the home directory or a parent of either (the workflow writes and, with Snakemake's
    ``--delete-all-output``, deletes files under it); relative paths are resolved against
    the working directory (Snakemake's ``--directory``)."""
    value = config.get(key, default)
    _require(
        isinstance(value, str) and value.strip() != "",
        key,
        f"must be a non-empty path (an empty one would put files under /); got {short_repr(value)}",
    )
    path = Path(value).expanduser().resolve()
    protected = [("the repository", Path(__file__).resolve().parents[2])]
    try:
        protected.append(("the home directory", Path.home().resolve()))
    except RuntimeError:  # no home directory known
        pass
    _require(
        path.parent != path,
        key,
        f"{value!r} is the filesystem root; give a dedicated directory such as 'results'",
    )
    for what, where in protected:
        if path == where or path in where.parents:
            relation = "is" if path == where else "is a parent of"
            raise ConfigError(
                f"config {key}: {value!r} resolves to {path}, which {relation} {what} "
                f"({where}); the workflow writes its files under {key} (and Snakemake's "
                "--delete-all-output removes them): give a dedicated directory such as 'results'"
            )


def _only(config: dict[str, Any], key: str) -> dict[str, Any]:
    """``config[key]`` restricted to the names in ``only_<key>`` (all when empty)."""
    entries = config.get(key) or {}
    only = list(config.get(f"only_{key}") or [])
    unknown = sorted(set(only) - set(entries))
    _require(
        not unknown, f"only_{key}", f"{unknown} are not in the config's {key} {sorted(entries)}"
    )
    return {k: v for k, v in entries.items() if not only or k in only}


def _slice_references(config: dict[str, Any], methods: dict[str, Any]) -> list[str]:
    """The config's references (registry role ``reference``: all features, random, ...)
    that a slice by ``only_methods`` leaves out, and keeps: every verdict of the slice's
    methods is against them, and their evaluations on disk make no job. None when the
    run is not sliced by method or ``slice_references`` is false."""
    if not config.get("only_methods") or not config_flag(config.get("slice_references"), True):
        return []
    return [
        m
        for m in (config.get("methods") or {})
        if m not in methods and m in available_methods() and get_method(m).role == "reference"
    ]


def _register_config_methods(methods: dict[str, Any]) -> None:
    """The config's methods given by import path (``class:``; :mod:`ufs.plugins`),
    registered for this process; a broken one is a :class:`ConfigError`."""
    from ..plugins import PluginError, register_config_methods

    try:
        register_config_methods(methods)
    except PluginError as exc:
        raise ConfigError(f"config {exc}") from None


def _require_config_datasets(config: dict[str, Any], key: str, bases) -> None:
    """A :class:`ConfigError` at ``key`` when its list of data sets (``None``: every one)
    names one that is not among the config's ``datasets``."""
    if bases is None:
        return
    known = sorted(config.get("datasets") or {})
    unknown = sorted(set(bases) - set(known))
    _require(not unknown, key, f"{unknown} are not in the config's datasets {known}")


def build_plan(
    config: dict[str, Any], *, warn: bool = True, skip_unavailable: bool = False
) -> Plan:
    """Validate ``config`` semantically and expand it into a :class:`Plan`.

    ``skip_unavailable``: leave out the methods (of the run, ``only_methods`` included)
    whose fit needs a module that is not installed here (an optional extra such as
    ``torch``; :func:`ufs.availability.unavailable_reason`), recorded in
    :attr:`Plan.unavailable`: the workflow's run does. By default the plan is the config's
    whatever is installed, as an archive's curation, a lineage migration and the reports
    need it. ``warn``: also issue what :attr:`Plan.warnings` records as a
    :class:`PlanSizeWarning`, and print the one line of the methods left out
    (:func:`ufs.availability.unavailable_note`) to stderr (the workflow logs both itself).
    Strings are not coerced here: the Snakefile has read the ``--config`` ones by the
    schema (:func:`coerce_config_strings`)."""
    check_config_size(config)
    for section in ("datasets", "methods"):
        for name in config.get(section) or {}:
            _check_name(section, name)
    _check_directory(config, "output_dir", "results")
    _check_directory(config, "resources_dir", "resources")
    _register_config_methods(config.get("methods") or {})
    plan = Plan(config=config)
    seed = int(config.get("seed", 0))
    ev = config.get("evaluation", {}) or {}
    _require(int(ev.get("restarts", 20)) >= 1, "evaluation.restarts", "must be >= 1")
    draws = int(ev.get("reference_draws", REFERENCE_DRAWS))
    _require(draws >= 1, "evaluation.reference_draws", "must be >= 1")
    datasets = _only(config, "datasets")
    _require(bool(datasets), "datasets", "at least one dataset is required")
    offline_missing: set[str] = set()
    if config_flag(config.get("offline_only"), False):
        # what can be read here without the network: bundled, generated, in the mirror
        # or in the cache (ufs.datasets.availability, ufs.datasets.locations)
        from ..datasets.availability import missing_states
        from ..datasets.locations import data_cache, data_mirror
        from ..datasets.registry import available_datasets

        registered = set(available_datasets())
        offline_missing = set(
            missing_states(
                {n: n for n, e in datasets.items() if "file" not in (e or {}) and n in registered},
                mirror=data_mirror(config),
                cache=data_cache(config),
            )
        )
    for name, entry in datasets.items():
        if name in offline_missing:
            plan.skipped.append(name)
            continue
        entry = entry or {}
        if "file" in entry:
            file_spec = _file_dataset(name, entry)
            n_features, is_simulation = file_spec.pop("n_features"), False
            n_samples, n_classes = file_spec.pop("n_samples"), file_spec.pop("n_classes")
        else:
            try:
                spec = get_dataset(name)
            except ValueError as exc:
                raise ConfigError(f"config datasets.{name}: {exc}") from None
            file_spec, n_features = None, spec.n_features
            n_samples, n_classes = spec.n_samples, spec.n_classes
            is_simulation = spec.source == "simulation"
        hs = entry.get("h")
        if isinstance(hs, dict):  # a relative grid (schema: percent, min, max)
            _require(
                bool(hs.get("percent")),
                f"datasets.{name}.h.percent",
                "give at least one percentage",
            )
            _require(
                hs.get("max") is None or int(hs["max"]) >= int(hs.get("min", 1)),
                f"datasets.{name}.h",
                f"max={hs.get('max')} is smaller than min={hs.get('min', 1)}",
            )
            hs = relative_h(hs, n_features)
        _require(bool(hs), f"datasets.{name}.h", "give at least one number of features")
        for h in hs:
            _require(
                isinstance(h, int) and not isinstance(h, bool) and h >= 1,
                f"datasets.{name}.h",
                f"h={short_repr(h)} must be a positive integer",
            )
            _require(
                h < n_features,
                f"datasets.{name}.h",
                f"h={h} must be smaller than the number of features p={n_features}",
            )
        _require(len(set(hs)) == len(hs), f"datasets.{name}.h", "duplicate values")
        reps = int(entry.get("replicates", 1))
        _require(reps >= 1, f"datasets.{name}.replicates", "must be >= 1")
        _require(
            reps == 1 or is_simulation,
            f"datasets.{name}.replicates",
            "replicates > 1 only make sense for simulated datasets",
        )
        for r in range(reps):
            inst = name if reps == 1 else f"{name}{REPLICATE_SEP}{r}"
            plan.instances[inst] = Instance(
                inst, name, seed + r, tuple(sorted(hs)), n_features, file_spec, n_samples, n_classes
            )
    _require(
        bool(plan.instances),
        "datasets",
        f"no dataset is available offline (skipped: {plan.skipped})",
    )
    sliced = _only(config, "methods")
    _require(bool(sliced), "methods", "at least one method is required")
    plan.kept_references = _slice_references(config, sliced)
    methods = {**sliced, **{m: config["methods"][m] for m in plan.kept_references}}
    if skip_unavailable:
        for name in list(methods):
            try:
                reason = unavailable_reason(name)
            except ValueError:  # not registered: named by the check of each method below
                continue
            if reason:
                plan.unavailable[name] = reason
                del methods[name]
        if not set(methods) - set(plan.kept_references):
            # the slice's own methods all left out: its references have nothing to be
            # compared with, and the plan has no job (the workflow's run does nothing)
            methods, plan.kept_references = {}, []
        if plan.unavailable and warn:
            print(unavailable_note(plan.unavailable), file=sys.stderr)
    protocols = set(config.get("protocols") or PROTOCOLS)
    _require(
        bool(protocols) and protocols <= set(PROTOCOLS),
        "protocols",
        f"a non-empty subset of {list(PROTOCOLS)}; got {short_repr(config.get('protocols'))}",
    )
    max_settings = config.get("grid_max_settings")
    _require(
        max_settings is None or (isinstance(max_settings, int) and max_settings >= 1),
        "grid_max_settings",
        f"a positive integer or null; got {short_repr(max_settings)}",
    )
    tuned_bases = config.get("oracle_datasets")
    _require_config_datasets(config, "oracle_datasets", tuned_bases)
    _require_config_datasets(
        config, "stability.datasets", (config.get("stability") or {}).get("datasets")
    )
    if "oracle" in protocols:
        plan.tuned = frozenset(
            i.name for i in plan.instances.values() if tuned_bases is None or i.base in tuned_bases
        )
    # one shape check per distinct known (n, p, k): replicates share theirs
    shapes: dict[tuple, str] = {}
    for inst in plan.instances.values():
        if inst.n_classes is not None:
            shapes.setdefault((inst.n_samples, inst.n_features, inst.n_classes), inst.base)
    for name, entry in methods.items():
        entry = entry or {}
        try:
            spec = get_method(name)
        except ValueError as exc:
            raise ConfigError(f"config methods.{name}: {exc}") from None
        grid = entry.get("grid", spec.grid) or {}
        defaults = entry.get("defaults", spec.defaults) or {}
        if "oracle" not in protocols:  # label-free only: no grid, no tuned rows
            grid = {}
        for p, values in grid.items():
            _require(
                isinstance(values, list) and len(values) > 0,
                f"methods.{name}.grid.{p}",
                "must be a non-empty list of values",
            )
        grid = thin_grid(grid, max_settings)
        for key, params in (("grid", grid), ("defaults", defaults)):
            try:
                spec.check_params(params)
            except ValueError as exc:
                raise ConfigError(f"config methods.{name}.{key}: {exc}") from None
        settings: dict[str, Setting] = {}
        if spec.draws:  # a chance reference: its draws, all label-free, none tuned
            _require(not grid, f"methods.{name}.grid", "a method of random draws has no grid")
            candidates = [({**defaults, spec.draws: r}, True, False) for r in range(draws)]
            for params, _, _ in candidates:
                pid = params_id(params)
                settings[pid] = Setting(name, pid, params, True, False, spec.kind)
            # kept under either protocol: the label-tuned view compares each method's
            # tuning gain with random's "best of G draws" (ufs.stats.paired)
            plan.settings[name] = list(settings.values())
            plan.split_h[name] = bool(entry.get("split_h", False))
            continue
        candidates = [(dict(defaults), True, False)] + [
            ({**defaults, **point}, False, True)
            for point in (expand_grid(grid) if "oracle" in protocols else [])
        ]
        for params, is_default, in_grid in candidates:
            pid = params_id(params)
            if pid in settings:
                old = settings[pid]
                settings[pid] = Setting(
                    name,
                    pid,
                    params,
                    old.label_free or is_default,
                    old.in_grid or in_grid,
                    spec.kind,
                    old.graph,
                    old.graph_id,
                )
                continue
            try:
                est = make_estimator(name, params, n_clusters=2)
                space = check_input_space(est.input_space)
            except (TypeError, ValueError) as exc:
                raise ConfigError(
                    f"config methods.{name}: invalid parameters {short_repr(params)}: {exc}"
                ) from None
            for (n, p, k), base in shapes.items():
                try:  # the method's own rule (UFSSelector.check_shape), as its fit applies it
                    est.check_shape(n, p, k)
                except ValueError as exc:
                    which = "defaults" if is_default else "grid"
                    source = (
                        f"methods.{name}.{which}" if which in entry else f"the registry {which}"
                    )
                    raise ConfigError(
                        f"config methods.{name} (parameters {short_repr(params)} from "
                        f"{source}) on datasets.{base} "
                        f"(p={p} features, k={k} classes): {exc}; leave {name} out for this "
                        "dataset (a separate config, or only_methods / only_datasets)"
                    ) from None
            gspec = est.graph_spec()
            if gspec is not None:
                # the graph is built on the matrix the method receives, and cached per
                # (knn_graph arguments, input space): see ufs.pipeline.steps.build_graph
                gspec = {**gspec, "input_space": space}
            settings[pid] = Setting(
                name,
                pid,
                params,
                is_default,
                in_grid,
                spec.kind,
                gspec,
                params_id(gspec) if gspec is not None else None,
            )
        if not grid and "oracle" in protocols:
            # no grid: the default setting is also the (only) tuned one
            settings = {
                k: Setting(
                    s.method, s.pid, s.params, s.label_free, True, s.kind, s.graph, s.graph_id
                )
                for k, s in settings.items()
            }
        if "label_free" not in protocols:  # label-tuned only: the grid's settings
            settings = {k: s for k, s in settings.items() if s.in_grid}
        plan.settings[name] = list(settings.values())
        plan.split_h[name] = bool(entry.get("split_h", False))
    n_tasks = plan.n_tasks()
    if n_tasks > LARGE_PLAN:
        plan.warnings.append(_size_message(plan, methods, n_tasks))
        if warn:
            warnings.warn(plan.warnings[-1], PlanSizeWarning, stacklevel=2)
    return plan


def _size_message(plan: Plan, methods: dict[str, Any], n_tasks: int) -> str:
    """Which config keys make the plan this large: each method's settings (the sizes of
    its ``grid`` lists), the dataset instances (``replicates``) and ``split_h``."""
    n_jobs = sum(len(plan.chunks(d)) for d in plan.instances)
    parts = []
    for m in sorted(plan.settings, key=lambda m: -len(plan.settings[m]))[:3]:
        grid = (methods.get(m) or {}).get("grid")
        source = f"methods.{m}.grid" if grid is not None else f"the registry grid of {m}"
        sizes = " × ".join(f"{k}: {len(v)}" for k, v in sorted((grid or {}).items()))
        split = f", methods.{m}.split_h: one job per h" if plan.split_h.get(m) else ""
        parts.append(f"{source} gives {len(plan.settings[m]):,} settings ({sizes}){split}")
    n_inst = len(plan.instances)
    reps = sorted({i.base for i in plan.instances.values() if i.name != i.base})
    parts.append(
        f"{n_inst} dataset instance(s) in datasets"
        + (f" (replicates of {', '.join(reps)})" if reps else "")
    )
    return (
        f"config methods/datasets: the plan has {n_tasks:,} fit tasks in {n_jobs:,} jobs, "
        f"more than {LARGE_PLAN:,}: is a grid larger than meant? " + "; ".join(parts) + "."
    )
