"""The ``ufs`` command line as a newcomer meets it: help, the methods listing, the demo."""

import pytest

from ufs.cli import main
from ufs.registry import available_methods, expand_grid, get_method


def test_help_has_no_raw_markup(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "``" not in out and "list the registered methods" in out


def test_methods_lists_defaults_grid_and_fixed(capsys):
    assert main(["methods"]) == 0
    out = capsys.readouterr().out
    for name in available_methods():
        assert f"{name}  ({get_method(name).kind})" in out
    lines = out.splitlines()
    i = next(j for j, ln in enumerate(lines) if ln.startswith("ndfs  ("))
    block = [lines[i]] + [ln for ln in lines[i + 1 : i + 5] if ln.startswith("    ")]
    ndfs = "\n".join(block)
    n = len(expand_grid(get_method("ndfs").grid))
    assert f"label-tuned grid ({n} settings)" in ndfs
    assert "label-free defaults:" in ndfs and "fixed: gamma=" in ndfs


def test_methods_brief_and_unknown(capsys):
    assert main(["methods", "--brief", "mcfs"]) == 0
    assert capsys.readouterr().out.startswith("mcfs")
    assert main(["methods", "nope"]) == 2
    assert "unknown method 'nope';" in capsys.readouterr().err


def test_demo_clamps_h_to_the_features_and_says_so(capsys):
    """``ufs demo --dataset wine`` used to crash (default h = 20 > p = 13)."""
    assert main(["demo", "--dataset", "wine", "--restarts", "2", "--methods", "random"]) == 0
    captured = capsys.readouterr()
    assert "using h = 13" in captured.err and "h=13" in captured.out
    assert "random" in captured.out


def test_version_is_the_installed_distributions(capsys):
    import tomllib
    from importlib.metadata import version

    from tests.workflow_helpers import REPO
    from ufs.cli import DISTRIBUTION

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert DISTRIBUTION == project["name"]
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out == f"ufs {version(project['name'])}\n"


def _parsers(parser):
    """``parser`` and every subcommand's parser, with its name."""
    import argparse

    yield parser.prog, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for parsers in action.choices.values():
                yield from _parsers(parsers)


def test_every_option_and_subcommand_has_a_help_text():
    import argparse

    from ufs.cli import build_parser

    missing = []
    for prog, parser in _parsers(build_parser()):
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            if not action.help:
                missing.append(f"{prog} {'/'.join(action.option_strings) or action.dest}")
            if isinstance(action, argparse._SubParsersAction):
                helped = {a.dest for a in action._choices_actions if a.help}
                missing += [f"{prog} {name}" for name in action.choices if name not in helped]
    assert len(list(_parsers(build_parser()))) == 13  # ufs and its twelve commands
    assert missing == []


# -- no traceback for a user error ----------------------------------------------
def test_unknown_method_names_get_suggestions_not_tracebacks(capsys):
    from ufs.cli import main

    assert main(["demo", "--dataset", "wine", "--h", "5", "--methods", "kmeansufs"]) == 2
    err = capsys.readouterr().err
    assert "unknown method 'kmeansufs' (did you mean 'kmeans_ufs'" in err
    assert "Traceback" not in err
    assert main(["methods", "kmeansufs", "laplacianscore"]) == 2
    err = capsys.readouterr().err
    assert "unknown methods 'kmeansufs'" in err and "did you mean 'laplacian_score'?" in err


def test_a_closed_pipe_is_not_an_error():
    import subprocess
    import sys

    proc = subprocess.run(
        f"{sys.executable} -m ufs.cli methods | head -1",
        shell=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.stdout.count("\n") == 1
    assert "Traceback" not in proc.stderr and "BrokenPipeError" not in proc.stderr


def test_reproduction_from_zero_runs_writes_nothing(tmp_path, capsys):
    from ufs.cli import main

    out = tmp_path / "reproduction.md"
    out.write_text("the tracked report\n")
    assert main(["reproduction", "--results", str(tmp_path / "none"), "--out", str(out)]) == 2
    assert out.read_text() == "the tracked report\n"
    assert "no completed run" in capsys.readouterr().err


def test_config_strings_are_coerced_only_where_given_on_the_command_line(tmp_path):
    import pytest

    from ufs.pipeline.config import ConfigError, coerce_config_strings, refuse_yte

    cfg = {"jobs": {"fit_budget_seconds": "600"}, "evaluation": {"restarts": "5"}}
    changed = coerce_config_strings(cfg, only={"evaluation": {"restarts": "5"}})
    assert changed == ["evaluation.restarts"] and cfg["evaluation"]["restarts"] == 5
    assert cfg["jobs"]["fit_budget_seconds"] == "600"  # from a file: left for the schema
    assert coerce_config_strings(cfg, only={}) == []
    path = tmp_path / "c.yaml"
    path.write_text("__use_yte__: true\nseed: 0\n")
    with pytest.raises(ConfigError, match="__use_yte__ asks for YTE templating"):
        refuse_yte(path)
    path.write_text("seed: 0\n")
    refuse_yte(path)  # a plain config passes


def test_config_overrides_merge_into_the_default_config(tmp_path):
    """`--config 'datasets={...}'` without --configfile adds to the default config
    instead of replacing it (it used to fail: "'methods' is a required property"); a quoted
    number in a config file is refused by the schema."""
    import subprocess
    import sys

    from .workflow_helpers import SNAKEFILE

    base = [sys.executable, "-m", "snakemake", "-s", str(SNAKEFILE), "--directory", str(tmp_path)]
    proc = subprocess.run(
        [*base, "-n", "--cores", "1", "--config", "datasets={wine: {h: [3]}}"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "required property" not in proc.stdout + proc.stderr
    assert "download digits" in proc.stdout  # the default data sets are still there
    assert "h = 3" in proc.stdout  # and wine's grid is the override's
    bad = tmp_path / "bad.yaml"
    bad.write_text("jobs:\n  fit_budget_seconds: '600'\n")
    cfg = SNAKEFILE.parent / "config" / "config.yaml"
    proc = subprocess.run(
        [*base, "-n", "--configfile", str(cfg), str(bad)], capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    assert proc.returncode != 0
    assert "'600' is not of type 'number'" in proc.stdout + proc.stderr
