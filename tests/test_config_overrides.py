"""Nested ``--config`` overrides: Snakemake reads ``--config evaluation='{restarts: 5}'`` with
YAML's base loader (every scalar a string); ``coerce_config_strings``, which the Snakefile runs
right before the schema, reads those strings by the schema's declared types."""

from __future__ import annotations

import copy
import re

import pytest
import yaml
from jsonschema import Draft202012Validator
from snakemake.cli import parse_config
from snakemake.utils import update_config

from tests.workflow_helpers import REPO, TINY, run_snakemake, write_config
from ufs.pipeline.config import SCHEMA_PATH, build_plan, check_config_size, coerce_config_strings

SCHEMA = yaml.safe_load(SCHEMA_PATH.read_text())


def overridden(*entries: str, base: dict | None = None) -> dict:
    """``base`` (default TINY) with ``--config`` entries merged in as Snakemake does, then
    through the functions the Snakefile calls before the schema."""
    config = copy.deepcopy(TINY if base is None else base)
    update_config(config, parse_config(list(entries)))
    check_config_size(config)
    coerce_config_strings(config)
    return config


def schema_errors(config: dict) -> list[str]:
    return [e.message for e in Draft202012Validator(SCHEMA).iter_errors(config)]


def test_snakemake_gives_nested_values_as_strings_which_the_schema_refuses():
    """Why the coercion exists (and a check that these tests can fail without it)."""
    raw = copy.deepcopy(TINY)
    update_config(raw, parse_config(["evaluation={restarts: 5}"]))
    assert raw["evaluation"]["restarts"] == "5"
    assert "'5' is not of type 'integer'" in schema_errors(raw)


def test_evaluation():
    config = overridden("evaluation={restarts: 5, reference_draws: 7, nmi_average: max}")
    assert config["evaluation"] == {"restarts": 5, "reference_draws": 7, "nmi_average": "max"}
    assert schema_errors(config) == []
    build_plan(config)


def test_jobs():
    config = overridden("jobs={tasks_per_job: 4, fit_budget_seconds: 1e-3}")
    assert config["jobs"] == {"tasks_per_job": 4, "fit_budget_seconds": 0.001}
    assert schema_errors(config) == []
    assert overridden("jobs={fit_budget_seconds: 600}")["jobs"]["fit_budget_seconds"] == 600


def test_mlflow_and_the_forms_docs_mlflow_server_shows():
    config = overridden("mlflow={enabled: false, experiment: 2024}")
    # a string where the schema declares a string stays one (an experiment named "2024")
    assert config["mlflow"] == {"enabled": False, "experiment": "2024"}
    assert schema_errors(config) == []
    doc = (REPO / "docs" / "guide" / "mlflow-server.md").read_text()
    shown = re.findall(r"--config (\w+)='(\{[^']*\})'", doc)  # the shell drops the quotes
    assert ("mlflow", '{tracking_uri: "http://127.0.0.1:5000"}') in shown
    for key, value in shown:
        config = overridden(f"{key}={value}")
        assert schema_errors(config) == [], (key, value)
    assert overridden("mlflow={enabled: false}")["mlflow"]["enabled"] is False


def test_datasets_h_lists_relative_grids_and_replicates():
    config = overridden(
        "datasets={wine: {h: [2, 4, 6]}, "
        "golfs_sim1: {h: {percent: [1.5, 10], min: 2, max: 40}, replicates: 3}}"
    )
    assert config["datasets"]["wine"] == {"h": [2, 4, 6]}
    assert config["datasets"]["golfs_sim1"] == {
        "h": {"percent": [1.5, 10], "min": 2, "max": 40},
        "replicates": 3,
    }
    assert schema_errors(config) == []
    plan = build_plan(config)
    assert plan.instances["wine"].hs == (2, 4, 6) and "golfs_sim1-r2" in plan.instances


def test_datasets_file_options_follow_their_declared_types():
    """``header`` (boolean or "auto") becomes a boolean; ``label_column`` (a column name
    or an index) stays the string the schema accepts: a column named "3"."""
    config = overridden(
        "datasets={mine: {file: x.csv, h: [2], header: true, label_column: 3}}",
        base={"methods": {"random": {}}, "datasets": {}},
    )
    assert config["datasets"]["mine"] == {
        "file": "x.csv",
        "h": [2],
        "header": True,
        "label_column": "3",
    }
    assert schema_errors(config) == []
    assert overridden("datasets={mine: {header: auto}}")["datasets"]["mine"]["header"] == "auto"


def test_methods_null_entries_and_split_h():
    config = overridden("methods={mcfs: null, random: ~, kmeans_ufs: {split_h: true}}")
    assert config["methods"]["mcfs"] is None and config["methods"]["random"] is None
    assert config["methods"]["kmeans_ufs"] == {"split_h": True}
    assert schema_errors(config) == []


def test_method_grids_and_defaults_have_no_type_so_number_strings_are_refused():
    """Method parameters have no declared type: their strings stay strings; the schema
    refuses those meant as numbers, booleans or null (a --configfile gives them typed)."""
    config = overridden("methods={laplacian_score: {grid: {n_neighbors: [3, 5]}}}")
    assert config["methods"]["laplacian_score"]["grid"] == {"n_neighbors": ["3", "5"]}
    assert any("'3' should not be valid" in m for m in schema_errors(config))
    config = overridden("methods={mcfs: {defaults: {weight: binary, ridge: 1e-3}}}")
    assert config["methods"]["mcfs"]["defaults"] == {"weight": "binary", "ridge": "1e-3"}
    errors = schema_errors(config)
    assert len(errors) == 1 and "'1e-3' should not be valid" in errors[0], errors


_METHOD_VALUE_PATTERN = SCHEMA["properties"]["methods"]["additionalProperties"]["properties"][
    "defaults"
]["additionalProperties"]["not"]["pattern"]


@pytest.mark.parametrize(
    "text, typed",
    [
        ("5", True),
        ("-2", True),
        ("1e-3", True),
        (".5", True),
        ("2.", True),
        ("true", True),
        ("FALSE", True),
        ("~", True),
        ("null", True),
        ("", True),
        ("exact", False),
        ("1.0.0", False),
        ("0x1F", False),
        ("yes", False),
        (".inf", False),
        ("1_000", False),
    ],
)
def test_the_schema_refuses_exactly_what_the_coercion_would_read(text, typed):
    """The schema's pattern for untyped method values and the coercion's YAML 1.2 reading
    agree: a value refused there is one that a declared type would have read."""
    kinds = ("null", "boolean", "number")
    read = coerce_config_strings({"v": text}, {"properties": {"v": {"type": list(kinds)}}})
    assert bool(read) is typed
    assert (re.search(_METHOD_VALUE_PATTERN, text) is not None) is typed


@pytest.mark.parametrize(
    "entry, message",
    [
        ("evaluation={restarts: five}", "'five' is not of type 'integer'"),
        ("evaluation={restarts: 5.0}", "'5.0' is not of type 'integer'"),
        ("evaluation={restarts: 0}", "0 is less than the minimum of 1"),
        ("jobs={fit_budget_seconds: .inf}", "'.inf' is not of type 'number'"),
        ("mlflow={enabled: yes}", "'yes' is not of type 'boolean'"),
        ("evaluation={oracle_metric: f1}", "'f1' is not one of"),
    ],
)
def test_anything_else_is_left_for_the_schema_to_refuse(entry, message):
    errors = schema_errors(overridden(entry))
    assert any(message in e for e in errors), errors


def test_a_config_from_files_is_unchanged():
    config = copy.deepcopy(TINY)
    assert coerce_config_strings(config) == [] and config == TINY
    assert coerce_config_strings(overridden("evaluation={restarts: 5}")) == []


@pytest.mark.slow
def test_snakemake_accepts_a_nested_config_override(tmp_path):
    """The workflow end to end (dry run): the override passes the schema as an integer (a
    string '0' would fail the type rule, the integer 0 fails the minimum)."""
    path = write_config(tmp_path, TINY)
    run_snakemake(tmp_path, path, "-n", "--config", "evaluation={restarts: 5}")
    proc = run_snakemake(tmp_path, path, "-n", "--config", "evaluation={restarts: 0}", check=False)
    assert proc.returncode != 0
    assert "0 is less than the minimum of 1" in proc.stdout + proc.stderr


def test_the_readme_says_how_a_nested_value_is_given_and_why_not_dotted():
    """docs/guide/workflow.md: a nested value is a YAML mapping that keeps the section's other keys; a dotted
    key is refused by Snakemake's parser (before the Snakefile runs, so the workflow cannot
    word the error itself) with the message the page quotes."""
    readme = " ".join((REPO / "docs" / "guide" / "workflow.md").read_text().split())
    assert "`--config 'mlflow={enabled: false}'`, which keeps the other `mlflow` keys" in readme
    config = overridden("mlflow={enabled: false}", base={**TINY, "mlflow": {"experiment": "x"}})
    assert config["mlflow"] == {"experiment": "x", "enabled": False}
    with pytest.raises(ValueError) as raised:
        parse_config(["mlflow.enabled=false"])
    assert "Config entry must start with a valid identifier" in str(raised.value)
    assert '"Config entry must start with a valid identifier"' in readme
