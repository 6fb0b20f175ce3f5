"""benchmarks/benchmark_compute.py: the sums docs/performance.md quotes, on hand-made entries."""

from __future__ import annotations

from tests.workflow_helpers import benchmark_script


def _script():
    return benchmark_script("benchmark_compute")


def _ev(method, dataset, cpu, label_free=True, budget=600, kind="subset", n_results=2):
    return {
        "method": method,
        "dataset_base": dataset,
        "fit_cpu_seconds_total": cpu,
        "label_free": label_free,
        "budget_seconds": budget,
        "kind": kind,
        "results": [{}] * n_results,
    }


EVS = [
    _ev("rne", "a", 3600.0),
    _ev("rne", "b", 1800.0, budget=120),
    _ev("mcfs", "a", 360.0, label_free=False),
    _ev("mcfs", "c", 720.0),
    _ev("all_features", "c", 0.0, kind="reference", n_results=5),
]


def test_split_counts_protocols_and_budgets():
    lines = _script().split_section(EVS, 600.0)
    assert lines[0] == (
        "- fit CPU-h: 1.80 in total; label-free settings 1.70, "
        "settings only the label-tuned grid needs 0.10"
    )
    # 120 s: one chunk of 2 fits; 600 s: 3 subset chunks (2 fits each) + 1 reference chunk
    assert "- fits under a 120 CPU-s budget (kept from an earlier budget): 2, 0.50 CPU-h" in lines
    assert "- fits under a 600 CPU-s budget (the run's budget): 7, 1.30 CPU-h" in lines


def test_dataset_section_counts_label_free_fits_only():
    (line,) = _script().dataset_section(EVS, top=2)
    assert line == (
        "- label-free fit CPU-h per data set (3 sets): 0.20 to 1.00, median 0.50; "
        "the largest: a 1.00, b 0.50"
    )
    assert _script().dataset_section([]) == []


def test_method_section_orders_by_cpu():
    lines = _script().method_section(EVS, top=2)
    assert lines[3] == "| `rne` | 1.50 | 83 % |"
    assert lines[4] == "| `mcfs` | 0.30 | 17 % |"
    assert "| `rne` | a | 3600 |" in lines


def test_before_after_lists_only_the_re_run_methods():
    """Methods whose fit CPU time is the same in both archives were not re-run and are not
    listed; the totals and the label-free share compare the whole run."""
    after = [dict(e) for e in EVS]
    after[0]["fit_cpu_seconds_total"] = 360.0  # rne on a re-run, 10 times faster
    lines = _script().before_after_section(EVS, after)
    rows = [ln for ln in lines if ln.startswith("| `")]
    assert rows == ["| `rne` | 1.50 | 0.60 | 2.5 |"]
    assert "| **all methods** | **1.80** | **0.90** | **2.00** |" in lines
    assert "| label-free settings | 1.70 | 0.80 | 2.12 |" in lines
