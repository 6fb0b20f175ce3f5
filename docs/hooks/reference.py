"""The site's reference pages, generated at build time from the code (an MkDocs hook).

- ``reference/config.md``: every key of ``workflow/schemas/config.schema.yaml`` (type,
  default, allowed values, description), nested keys dotted (``evaluation.restarts``) and a
  data set's or method's own keys under ``datasets.<name>`` / ``methods.<name>``;
- ``reference/cli.md``: every ``ufs`` subcommand's help, from :func:`ufs.cli.build_parser`;
- ``reference/methods.md``: every registered method (:mod:`ufs.registry`) with its kind, role,
  paper, label-free default and grid, its constructor's signature and its docstring.

Nothing generated is committed, so the pages cannot fall behind the code; the functions are
importable (``tests/test_docs_site.py`` checks that every schema key, subcommand and method
is on its page).
"""

from __future__ import annotations

import argparse
import inspect
import json
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"

GENERATED = {
    "reference/config.md": "config_reference",
    "reference/cli.md": "cli_reference",
    "reference/methods.md": "methods_reference",
}


def _cell(text: Any) -> str:
    """``text`` as one markdown table cell."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _type(node: dict[str, Any]) -> str:
    if "enum" in node:
        return (
            " / ".join(
                f"`{json.dumps(v)}`"
                for v in node["enum"]
                if not isinstance(v, str) or v not in ("true", "false")
            )
            or "enum"
        )
    kind = node.get("type")
    if isinstance(kind, list):
        kind = " or ".join(kind)
    if kind is None and "anyOf" in node:
        kind = " or ".join(_type(n) for n in node["anyOf"])
    if kind is None and "oneOf" in node:
        kind = " or ".join(_type(n) for n in node["oneOf"])
    if kind == "array" and isinstance(node.get("items"), dict):
        kind = f"list of {_type(node['items'])}"
    return str(kind or "any")


def _bounds(node: dict[str, Any]) -> str:
    parts = []
    for key, word in (
        ("minimum", "≥"),
        ("exclusiveMinimum", ">"),
        ("maximum", "≤"),
        ("exclusiveMaximum", "<"),
        ("minItems", "items ≥"),
        ("pattern", "matches"),
    ):
        if key in node:
            parts.append(f"{word} `{node[key]}`")
    return ", ".join(parts)


def schema_keys(node: dict[str, Any] | None = None, prefix: str = "") -> list[tuple[str, dict]]:
    """Every key of the config schema, depth first: (dotted name, its schema node)."""
    node = yaml.safe_load(SCHEMA.read_text()) if node is None else node
    out: list[tuple[str, dict]] = []
    for name, child in (node.get("properties") or {}).items():
        key = f"{prefix}{name}"
        out.append((key, child))
        out.extend(schema_keys(child, f"{key}."))
    extra = node.get("additionalProperties")
    if isinstance(extra, dict) and (extra.get("properties") or extra.get("type")):
        placeholder = "<name>"
        if extra.get("properties"):
            out.extend(schema_keys(extra, f"{prefix}{placeholder}."))
    for pattern, child in (node.get("patternProperties") or {}).items():
        out.extend(schema_keys(child, f"{prefix}<{pattern}>."))
    return out


def config_reference() -> str:
    schema = yaml.safe_load(SCHEMA.read_text())
    lines = [
        "# Config keys",
        "",
        "Generated from `workflow/schemas/config.schema.yaml`, which checks every config "
        "before any job runs. `config/config.yaml` is the default; a paper's or the benchmark's "
        "config is a file of `config/experiments/`. How to give and merge configs: "
        "[the workflow](../guide/workflow.md).",
        "",
        f"Required at the top level: {', '.join(f'`{k}`' for k in schema.get('required', []))}.",
        "",
        "| key | type | default | allowed | description |",
        "|---|---|---|---|---|",
    ]
    for key, node in schema_keys(schema):
        default = f"`{json.dumps(node['default'])}`" if "default" in node else ""
        lines.append(
            f"| `{key}` | {_cell(_type(node))} | {_cell(default)} | {_cell(_bounds(node))} "
            f"| {_cell(node.get('description', ''))} |"
        )
    return "\n".join(lines) + "\n"


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def cli_reference() -> str:
    from ufs.cli import build_parser

    parser = build_parser()
    lines = [
        "# Command line: `ufs`",
        "",
        "Generated from the `ufs` argument parser (`ufs.cli.build_parser`); `ufs COMMAND -h` "
        "prints the same.",
        "",
        "```text",
        parser.format_help().rstrip(),
        "```",
        "",
    ]
    for name, sub in _subcommands(parser).items():
        lines += [f"## `ufs {name}`", "", "```text", sub.format_help().rstrip(), "```", ""]
    return "\n".join(lines)


def methods_reference() -> str:
    from ufs.availability import install_hint, requirements
    from ufs.registry import available_methods, get_method

    names = available_methods()
    lines = [
        "# Methods",
        "",
        "Generated from the method registry (`ufs methods` prints the same list). Each entry: "
        "its kind (*ranking*: one fit scores every feature; *subset*: the fit depends on h), "
        "its role (*method*, *variant* of another method, or *reference*), its paper, the "
        "label-free default (chosen without labels) and the grid the label-tuned protocol "
        "searches, then the estimator's signature and docstring. The choices made where a "
        "paper is ambiguous are in [the method notes](../methods.md).",
        "",
        "| method | kind | role | paper |",
        "|---|---|---|---|",
    ]
    for name in names:
        spec = get_method(name)
        lines.append(
            f"| [`{name}`](#{name}) | {spec.kind} | {spec.role} | {_cell(spec.reference)} |"
        )
    lines.append("")
    for name in names:
        spec = get_method(name)
        cls = spec.cls
        role = spec.role + (f" of `{spec.variant_of}`" if spec.variant_of else "")
        lines += [
            f"## {name} {{#{name}}}",
            "",
            f"**{_cell(spec.reference)}** — {spec.kind} {role}; class "
            f"`{cls.__module__}.{cls.__qualname__}`.",
            "",
            f"- label-free default: `{json.dumps(spec.defaults, default=str)}`",
            f"- label-tuned grid: `{json.dumps(spec.grid, default=str)}`",
            *(
                [
                    f"- needs: {', '.join(f'`{m}`' for m in requirements(cls))} (`{install_hint(cls)}`)"
                ]
                if requirements(cls)
                else []
            ),
            "",
            "```python",
            f"{cls.__qualname__}{inspect.signature(cls)}",
            "```",
            "",
            "```text",
            (inspect.getdoc(cls) or "(no docstring)").replace("```", "'''"),
            "```",
            "",
        ]
    return "\n".join(lines)


# -- the MkDocs hook --------------------------------------------------------------------------
def on_files(files, config):  # noqa: ANN001 - MkDocs' hook signature
    from mkdocs.structure.files import File

    for uri, fn in GENERATED.items():
        files.append(File.generated(config, uri, content=globals()[fn]()))
    return files


def on_page_markdown(markdown: str, page, config, files):  # noqa: ANN001 - MkDocs' signature
    """A link from a page to a repository file outside ``docs/`` (``../config/README.md``)
    becomes the file's path as code: the site holds the documentation, the repository the
    rest, and a reader of the site is told where to look."""
    import re

    docs = Path(config["docs_dir"]).resolve()
    here = (docs / page.file.src_uri).parent

    def repo_link(match: re.Match) -> str:
        text, target = match.group(1), match.group(2)
        if "://" in target or target.startswith(("#", "mailto:")):
            return match.group(0)
        path = (here / target.split("#", 1)[0]).resolve()
        try:
            path.relative_to(docs)
            return match.group(0)
        except ValueError:
            pass
        try:
            rel = path.relative_to(REPO)
        except ValueError:
            return match.group(0)
        return text if str(rel) in text else f"{text} (`{rel}`)"

    return re.sub(r"(?<!!)\[([^\]]+)\]\(([^)\s]+)\)", repo_link, markdown)
