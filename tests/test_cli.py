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
    assert "unknown method(s) ['nope']" in capsys.readouterr().err


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
    assert len(list(_parsers(build_parser()))) == 9  # ufs and its eight commands
    assert missing == []
