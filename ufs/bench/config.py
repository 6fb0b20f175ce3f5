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
"""

from __future__ import annotations

import copy
import functools
import math
import re
import reprlib
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..datasets import get_dataset
from ..preprocessing import check_input_space
from ..registry import expand_grid, get_method, make_estimator, params_id
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


class ConfigError(ValueError):
    """A config value is invalid; the message starts with the offending key."""


class PlanSizeWarning(UserWarning):
    """The plan has more fit tasks than :data:`LARGE_PLAN` (probably not what was meant)."""


#: dataset and method names: they become file and directory names and wildcard values
NAME_PATTERN = r"[A-Za-z0-9_]{1,64}"
_NAME = re.compile(NAME_PATTERN)
#: more fit tasks than this in one plan is warned about (a grid larger than meant?)
LARGE_PLAN = 100_000
#: a config holding more values than this once YAML aliases are expanded is refused (a
#: "billion laughs" YAML: ten levels of ten aliases are 10^10 values in a few lines)
MAX_CONFIG_VALUES = 1_000_000
#: deeper nesting is refused (a YAML alias that refers to itself nests without end)
MAX_CONFIG_DEPTH = 32

_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxlist, _REPR.maxtuple, _REPR.maxdict = 3, 8, 8, 8
_REPR.maxstring, _REPR.maxother = 80, 80


def short_repr(value: Any, limit: int = 200) -> str:
    """``repr(value)`` cut to about ``limit`` characters, in time independent of the size
    of ``value`` (nested and shared containers included)."""
    text = _REPR.repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _key_path(keys: list) -> str:
    out = ""
    for k in keys:
        out += f"[{k}]" if isinstance(k, int) else (f".{k}" if out else str(k))
    return out or "(top level)"


def schema_error_message(exc: BaseException, limit: int = 300) -> str:
    """A short message for a config that fails the JSON schema: the offending key, the
    schema's rule and jsonschema's message cut to ``limit`` characters (Snakemake's own
    message prints the offending value in full, twice: megabytes for a large one).
    ``exc``: a ``jsonschema.ValidationError`` or an exception raised from one; any other
    exception's text, cut to ``4 * limit`` characters."""
    import jsonschema

    err = exc  # Snakemake's validate raises a WorkflowError from the ValidationError
    while err is not None and not isinstance(err, jsonschema.ValidationError):
        err = err.__cause__ or err.__context__
    if err is None:
        text = str(exc)
        return text if len(text) <= 4 * limit else text[: 4 * limit] + " ..."
    if err.validator in ("oneOf", "anyOf") and err.context:
        # "… is not valid under any of the given schemas": name the closest branch's error
        # (the branch of the value's type, its deepest error; a type error if none)
        fitting = [e for e in err.context if e.validator != "type" or e.relative_path]
        err = max(fitting or err.context, key=lambda e: len(e.relative_path))
    message = err.message
    if len(message) > limit:
        message = f"{message[:limit]} ... ({len(message):,} characters)"
    rule = f"{err.validator}: {short_repr(err.validator_value, 100)}"
    if isinstance(err.schema, dict) and err.schema.get("description"):
        rule += f"; {err.schema['description']}"
    return f"config {_key_path(list(err.absolute_path))}: {message} (schema rule {rule})"


def refuse_yte(*paths: str | Path) -> None:
    """:class:`ConfigError` for a config file that asks Snakemake for YTE templating
    (``__use_yte__: true``): Snakemake then evaluates Python expressions in the file
    when it reads it — before this check can run —, and this workflow treats a config
    as data (``tests/test_security.py``). The error says so: such a file is code."""
    import yaml

    for path in paths:
        try:
            doc = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError):
            continue  # unreadable: Snakemake has said why
        if isinstance(doc, dict) and doc.get("__use_yte__"):
            raise ConfigError(
                f"config file {path}: __use_yte__ asks for YTE templating, i.e. Python "
                "expressions that Snakemake evaluated when it read the file; this workflow "
                "reads configs as data only: remove __use_yte__ and write the values out"
            )


def check_duplicate_keys(*paths: str | Path) -> None:
    """Refuse a config file that defines a key twice in one mapping, at any depth (issue
    26 #3): YAML loaders keep the last one silently, so a data set or a section defined
    twice would lose its first definition without a word. Raises :class:`ConfigError`
    naming the file, the key and both lines. Walks the YAML node tree (``yaml.compose``
    with the safe loader): nothing is constructed."""
    import yaml

    for path in paths:
        text = Path(path).read_text(encoding="utf-8")
        try:
            root = yaml.compose(text, Loader=yaml.SafeLoader)
        except yaml.YAMLError:
            continue  # a syntax error: Snakemake's own loader reports it
        todo = [root] if root is not None else []
        seen_nodes: set[int] = set()
        while todo:
            node = todo.pop()
            if id(node) in seen_nodes:  # an alias: the same node again
                continue
            seen_nodes.add(id(node))
            if isinstance(node, yaml.MappingNode):
                keys: dict[str, int] = {}
                for key_node, value_node in node.value:
                    if (
                        isinstance(key_node, yaml.ScalarNode)
                        and key_node.tag != "tag:yaml.org,2002:merge"
                    ):
                        line = key_node.start_mark.line + 1
                        if key_node.value in keys:
                            raise ConfigError(
                                f"config file {path}: key {key_node.value!r} is defined twice "
                                f"(lines {keys[key_node.value]} and {line}); YAML would keep the "
                                "last silently: merge them into one"
                            )
                        keys[key_node.value] = line
                    todo.append(value_node)
            elif isinstance(node, yaml.SequenceNode):
                todo.extend(node.value)


def check_config_size(config: Any) -> None:
    """Refuse a config that holds more than :data:`MAX_CONFIG_VALUES` values once YAML
    aliases are expanded, or nests deeper than :data:`MAX_CONFIG_DEPTH`.

    A YAML alias (``*name``) is one shared object after loading, but the JSON-schema
    validation, error messages and the plan walk every use of it: a "billion laughs"
    config would take hours. The walk stops at the limit, so this takes well under a
    second whatever the config. Run it before validating the config (and before
    :func:`coerce_config_strings`).
    """
    count = 0
    keys: list = []  # the key of every container being walked
    stack: list = [iter(((None, config),))]
    while stack:
        item = next(stack[-1], None)
        if item is None:
            stack.pop()
            if keys:
                keys.pop()
            continue
        key, value = item
        count += 1
        where = [k for k in (*keys, key) if k is not None] if count > MAX_CONFIG_VALUES else []
        if count > MAX_CONFIG_VALUES:
            raise ConfigError(
                f"config {_key_path(where)}: the config holds more than "
                f"{MAX_CONFIG_VALUES:,} values once its YAML aliases (*name) are expanded "
                "(the count passed the limit here), as in a 'billion laughs' file; refused: "
                "an alias counts wherever it is used"
            )
        if isinstance(value, dict):
            children = iter(value.items())
        elif isinstance(value, list | tuple):
            children = iter(enumerate(value))
        else:
            continue
        if len(stack) > MAX_CONFIG_DEPTH:
            where = [k for k in (*keys, key) if k is not None]
            raise ConfigError(
                f"config {_key_path(where)}: nested more than {MAX_CONFIG_DEPTH} levels deep "
                f"(a YAML alias that contains itself?); refused. Value: {short_repr(value)}"
            )
        stack.append(children)
        keys.append(key)


#: the workflow's config schema (a checkout's ``workflow/schemas``; an install of the package
#: without the workflow has none, and strings are then left to the schema as they are)
SCHEMA_PATH = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "config.schema.yaml"

# YAML 1.2 core-schema scalars (decimal integers; finite floats; no .inf, .nan, 0x, 0o)
_INT_RE = re.compile(r"[-+]?[0-9]+")
_FLOAT_RE = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_NULLS = ("null", "Null", "NULL", "~", "")
_NO = object()  # "does not parse as that type"


def _parse_as(text: str, kind: str) -> Any:
    """``text`` read as the JSON-schema type ``kind`` by the YAML 1.2 core schema, else
    ``_NO``: ``integer`` decimal digits with an optional sign; ``number`` those or a
    finite float (``2.5``, ``1e-3``, ``.5``); ``boolean`` true/false (also Title and UPPER
    case); ``null`` null, ``~`` or nothing."""
    if kind in ("integer", "number") and _INT_RE.fullmatch(text):
        return int(text)
    if kind == "number" and _FLOAT_RE.fullmatch(text):
        return float(text)
    if kind == "boolean" and text in _BOOLS:
        return _BOOLS[text]
    if kind == "null" and text in _NULLS:
        return None
    return _NO


def _branches(schema: Any) -> list[dict]:
    """The alternatives a value may match: the ``oneOf`` / ``anyOf`` branches (flattened),
    else the schema itself."""
    if not isinstance(schema, dict):
        return []
    alternatives = schema.get("oneOf", []) + schema.get("anyOf", [])
    if not alternatives:
        return [schema]
    return [b for alt in alternatives for b in _branches(alt)]


def _declared_types(branch: dict) -> list[str] | None:
    """The JSON types a schema branch declares (``type``, else those of its ``enum``
    values), ``None`` when it declares none."""
    if "type" in branch:
        t = branch["type"]
        return [t] if isinstance(t, str) else list(t)
    if "enum" in branch:
        names = {
            bool: "boolean",
            int: "integer",
            float: "number",
            str: "string",
            type(None): "null",
        }
        return [names[type(v)] for v in branch["enum"] if type(v) in names]
    return None


def _coerce_string(text: str, schema: Any) -> Any:
    """``text`` read by the types ``schema`` declares, or ``text`` itself when a branch
    accepts it as a string or declares no type (the schema then has the last word)."""
    parsed = []
    for branch in _branches(schema):
        types, enum = _declared_types(branch), branch.get("enum")
        if types is None or ("string" in types and (enum is None or text in enum)):
            return text
        for kind in ("null", "boolean", "integer", "number"):
            value = _parse_as(text, kind) if kind in types else _NO
            if value is not _NO and (enum is None or value in enum):
                parsed.append(value)
                break
    return parsed[0] if parsed else text


def _child_schema(schema: Any, value: Any, key: Any) -> Any:
    """The schema of ``value[key]`` in the branch of ``schema`` that fits ``value`` (a
    mapping: ``properties``, else ``additionalProperties``; a list: ``items``)."""
    for branch in _branches(schema):
        if isinstance(value, dict):
            sub = branch.get("properties", {}).get(key, branch.get("additionalProperties"))
        else:
            sub = branch.get("items")
        if isinstance(sub, dict):
            return sub
    return None


def _coerce(value: Any, schema: Any, path: list, changed: list[str], only: Any = None) -> Any:
    if isinstance(value, str):
        new = _coerce_string(value, schema)
        if new is not value:
            changed.append(_key_path(path))
        return new
    if isinstance(value, dict | list):
        keys = list(value) if isinstance(value, dict) else range(len(value))
        for k in keys:
            if isinstance(only, dict) and isinstance(value, dict):
                if k not in only:
                    continue  # not given on the command line: read as the file has it
                below = only[k] if isinstance(only[k], dict) else None
            else:
                below = None
            sub = _child_schema(schema, value, k)
            if sub is not None:
                value[k] = _coerce(value[k], sub, [*path, k], changed, below)
    return value


@functools.cache
def _load_schema(path: Path, mtime_ns: int) -> dict:
    """The parsed schema file (once per version of the file; callers do not modify it)."""
    import yaml

    return yaml.safe_load(path.read_text(encoding="utf-8"))


def coerce_config_strings(
    config: dict[str, Any], schema: dict | None = None, *, only: dict[str, Any] | None = None
) -> list[str]:
    """Read the strings of ``config`` by the types ``schema`` declares for them, in place;
    return the key paths changed.

    ``snakemake --config evaluation='{restarts: 5}'`` gives ``{"restarts": "5"}``
    (Snakemake reads a nested value with YAML's base loader: every scalar a string), which
    the schema refuses (``'5' is not of type 'integer'``). A string is replaced only where
    the schema declares a type other than string for it (``type``, or the values of an
    ``enum``; inside ``oneOf`` / ``anyOf``, the branch of the value's shape) and the
    string parses cleanly as that type by the YAML 1.2 core schema (:func:`_parse_as`):
    ``"5"`` for an integer, ``"1e-3"`` for a number, ``"true"`` for a boolean, ``"~"``
    for null. A string the schema accepts as a string stays one (``label_column: "3"`` is
    a column name), and so do strings where the schema declares no type (method
    ``grid`` and ``defaults`` values: the schema refuses those that look like numbers);
    anything else is left for the schema to refuse. ``schema``: the parsed schema, by
    default :data:`SCHEMA_PATH` (none there: nothing is changed). ``only``: the values
    given with ``--config`` (Snakemake's ``workflow.config_settings.config``): strings
    elsewhere came from a YAML file, where a quoted ``'600'`` is a string on purpose, and
    are left for the schema to refuse (issue 39: config types are strict).
    """
    if schema is None:
        if not SCHEMA_PATH.is_file():
            return []
        schema = _load_schema(SCHEMA_PATH, SCHEMA_PATH.stat().st_mtime_ns)
    changed: list[str] = []
    if only is not None and not only:
        return changed
    _coerce(config, schema, [], changed, only)
    return changed


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
    #: :data:`ufs.bench.data_steps._FILE_KEYS` it sets), ``None`` for registered datasets
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
        they are (issue 26 #1; numbering over the whole task list made a slice overwrite
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
    documented thinning rule of the label-tuned protocol (issue 28).

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
#: ranks by default (issue 24: with one or two values of h a rank is a lottery)
MIN_H_VALUES = 3


def relative_h(spec: dict[str, Any], n_features: int) -> list[int]:
    """The h grid of a relative spec ``{percent: [...], min: a, max: b}``.

    ``h = round(p · percent / 100)`` (half up), clipped to ``[min, max]`` (``min``
    default 1, ``max`` default none) and to ``p − 1``; equal values once, ascending. E.g.
    ``percent [1, 2, 5, 10, 20]``, ``min 5``, ``max 300``: p = 1024 → 10, 20, 51, 102,
    205; p = 325 → 5, 7, 16, 33, 65; p = 64 → 5, 6, 13.

    Small p: when clipping at ``min`` leaves fewer than :data:`MIN_H_VALUES` values, the
    lower clip is lowered to 1 (issue 24: ``min 5`` left wine, p = 13, one h and
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


def _register_config_methods(methods: dict[str, Any]) -> None:
    """The config's methods given by import path (``class:``; :mod:`ufs.plugins`),
    registered for this process; a broken one is a :class:`ConfigError`."""
    from ..plugins import PluginError, register_config_methods

    try:
        register_config_methods(methods)
    except PluginError as exc:
        raise ConfigError(f"config {exc}") from None


def build_plan(config: dict[str, Any], *, warn: bool = True) -> Plan:
    """Validate ``config`` semantically and expand it into a :class:`Plan`.

    ``warn``: also issue what :attr:`Plan.warnings` records as a :class:`PlanSizeWarning`
    (the workflow logs ``Plan.warnings`` itself). Strings are not coerced here: the
    Snakefile has read the ``--config`` ones by the schema (:func:`coerce_config_strings`)."""
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
    if str(config.get("offline_only", False)).lower() == "true":
        from ..datasets import datasets_needing_network

        offline_missing = set(datasets_needing_network(config.get("mirror_dir") or None))
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
    methods = _only(config, "methods")
    _require(bool(methods), "methods", "at least one method is required")
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
    if tuned_bases is not None:
        unknown = sorted(set(tuned_bases) - set(config.get("datasets") or {}))
        _require(
            not unknown,
            "oracle_datasets",
            f"{unknown} are not in the config's datasets {sorted(config.get('datasets') or {})}",
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
            # tuning gain with random's "best of G draws" (ufs.bench.paired)
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
                # (knn_graph arguments, input space): see ufs.bench.steps.build_graph
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
