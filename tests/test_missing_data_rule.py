"""One missing-data rule, stated in the same words wherever a reader meets it: the reports'
legends and answers, the config reference, the user guide and the README."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ufs.report.rank_report import RANK_MARKS_LEGEND
from ufs.stats.views import BUDGET_RULE, MISSING_DATA_RULE

REPO = Path(__file__).resolve().parents[1]

#: where the rule is stated for a reader (text files of the repository)
STATED_IN = [
    "README.md",
    "config/README.md",
    "config/experiments/benchmark.yaml",
    "docs/guide/workflow.md",
    "docs/reference/statistics.md",
    "docs/benchmark.md",
    "docs/benchmark_absolute_h.md",
]

#: what earlier wordings said, each contradicting the rule the tests use
CONTRADICTIONS = ("ranked last on that data set", "leaves out those (data set, h) cells")


def _flat(text: str) -> str:
    """Text with line breaks, comment marks and runs of white space as single spaces."""
    return re.sub(r"\s+", " ", re.sub(r"(?m)^\s*#\s?", " ", text))


def test_the_rule_is_one_sentence_inside_the_full_rule_and_the_legend():
    assert BUDGET_RULE in MISSING_DATA_RULE and BUDGET_RULE in RANK_MARKS_LEGEND
    assert "expected random subset" in BUDGET_RULE and "§" in BUDGET_RULE


@pytest.mark.parametrize("name", STATED_IN)
def test_every_statement_of_the_rule_is_the_same_sentence(name):
    path = REPO / name
    if not path.exists():
        pytest.skip(f"{name} is absent")
    text = _flat(path.read_text())
    assert BUDGET_RULE in text, name
    for old in CONTRADICTIONS:
        assert old not in text, (name, old)


def test_no_source_file_states_a_contradicting_rule():
    files = [*REPO.glob("ufs/**/*.py"), *REPO.glob("docs/**/*.md"), *REPO.glob("config/**/*")]
    for path in files:
        if path.is_file():
            text = _flat(path.read_text(errors="ignore"))
            for old in CONTRADICTIONS:
                assert old not in text, (path, old)
