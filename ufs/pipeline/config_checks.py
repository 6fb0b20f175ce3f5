"""A workflow config as a document (from :mod:`ufs.pipeline.config`): the checks
a JSON schema cannot make before any plan is built — duplicate keys, Snakemake's YTE
refused, a config inflated by YAML aliases, names that cannot be file names — the
``--config`` strings read by the schema's declared types, and schema errors in one line
naming the key. :mod:`.config` builds the plan from a config that passed them."""

from __future__ import annotations

import functools
import re
import reprlib
from pathlib import Path
from typing import Any


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


def config_flag(value: Any, default: bool) -> bool:
    """A config switch: a YAML bool, or the string a ``--config key=false`` gives (the
    schema's ``enum: [true, false, "true", "false"]``). Only the word opposite to
    ``default`` (any case) turns it from its default; ``None`` is the default."""
    if value is None:
        return default
    word = str(value).lower()
    return word != "false" if default else word == "true"


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
    """Refuse a config file that defines a key twice in one mapping, at any depth: YAML loaders keep the last one silently, so a data set or a section defined
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
    are left for the schema to refuse (config types are strict).
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
