"""Parity with the authors' own code (reference outputs in ``shared/parity``).

Every case of :mod:`ufs.parity.cases` runs our estimator on the stored input with the
authors' parameters (and stored random initialisation) and must meet its bar: the same
ranking for deterministic methods, objective to 1e-6 relative and tie-aware overlap
≥ 0.9·h for iterative ones. Skipped, with the reason, when the references are absent.
"""

from __future__ import annotations

import numpy as np
import pytest

from ufs.parity import default_root, load_inputs, rebuild_digits_inputs, run_case
from ufs.parity.cases import all_cases
from ufs.parity.core import spearman_rankings, tie_aware_overlap

CASES = all_cases()


@pytest.fixture(scope="module")
def parity_root():
    root = default_root()
    if not (root / "digits" / "inputs.npz").is_file():
        pytest.skip(
            f"parity reference outputs not found at {root} "
            "(set UFS_PARITY_DIR to a copy of shared/parity to run these tests)"
        )
    return root


def test_stored_input_is_rebuilt_by_this_package(parity_root):
    """The stored input is what `ufs` builds today: a change of standardisation or graph
    construction would silently move every parity comparison."""
    ref = load_inputs("digits", parity_root)
    new = rebuild_digits_inputs()
    np.testing.assert_array_equal(new["feature_index"], ref["feature_index"])
    np.testing.assert_allclose(new["X"], ref["X"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(new["X01"], ref["X01"], rtol=0, atol=1e-12)
    assert new["sigma"] == pytest.approx(ref["sigma"], rel=1e-14)
    for g in ("W", "W_binary"):
        assert (new[g] != ref[g]).nnz == 0 or abs(new[g] - ref[g]).max() <= 1e-15, g
    np.testing.assert_array_equal(new["y"], ref["y"])


@pytest.mark.parametrize("tag", sorted(CASES))
def test_parity_case(tag, parity_root):
    case = CASES[tag]
    out = run_case(case, parity_root)
    detail = (
        f"{tag} ({case.method}): overlap {out.overlap} (raw {out.overlap_raw}), "
        f"spearman {out.spearman:.4f}, objective {out.objective} vs {out.objective_ref}, "
        f"iterations {out.n_iter} vs {out.n_iter_ref}; note: {case.note}"
    )
    assert out.passed, "; ".join(out.failures) + " — " + detail


def test_every_reference_of_an_implemented_method_has_a_case(parity_root):
    """A reference output for a registered method must not sit untested."""
    from ufs.registry import available_methods

    tags = {p.stem for p in (parity_root / "digits").glob("*.json")}
    prefix_to_method = {c.tag.split("__")[0]: c.method for c in CASES.values()}
    implemented = set(available_methods())
    missing = sorted(
        t
        for t in tags
        if t not in CASES
        and prefix_to_method.get(t.split("__")[0], t.split("__")[0]) in implemented
    )
    assert not missing, f"reference outputs without a parity case: {missing}"


# -- the measures themselves (no reference data needed) ---------------------------------


def test_tie_aware_overlap_counts_a_cut_tie_block_as_a_set():
    ref = np.arange(10)
    ours = np.array([0, 1, 5, 3, 4, 2, 6, 7, 8, 9])
    assert tie_aware_overlap(ours, ref, 3) == 2  # {0,1,5} vs {0,1,2}
    assert tie_aware_overlap(ours, ref, 3, [(2, 6)]) == 3  # 5 and 2 tie with 3, 4
    assert tie_aware_overlap(ours, ref, 3, [(6, 9)]) == 2  # block not cut by h
    assert tie_aware_overlap(np.array([9, 8, 7]), ref, 3, [(1, 5)]) == 0


def test_spearman_of_rankings():
    r = np.arange(20)
    assert spearman_rankings(r, r) == pytest.approx(1.0)
    assert spearman_rankings(r[::-1], r) == pytest.approx(-1.0)
    assert np.isnan(spearman_rankings(r[:5], r))


def test_report_marks_a_failing_case_and_counts(parity_root, tmp_path):
    """The generated report shows a case that misses its bar as FAIL (not silently)."""
    from dataclasses import replace

    from ufs.methods import LaplacianScore
    from ufs.parity.report import write_report

    good = CASES["lapscore"]
    # the binary graph instead of the authors' heat kernel: a different ranking
    bad = replace(
        good,
        build=lambda inputs, ref: (LaplacianScore(10), {"graph": inputs["W_binary"]}),
        check=None,
    )
    out = tmp_path / "parity.md"
    outcomes = write_report(out, [good, bad], parity_root)
    assert [o.passed for o in outcomes] == [True, False]
    text = out.read_text()
    assert "**1 of 2 cases pass**, 0 of them with a reduced bar" in text
    assert text.count("| pass |") == 1 and "**FAIL**" in text
    assert "Input rebuilt by this package: identical" in text


def test_cli_parity_exit_code(parity_root, tmp_path):
    from ufs.cli import main

    assert main(["parity", "--out", str(tmp_path / "p.md"), "--only", "lapscore"]) == 0
    assert main(["parity", "--out", str(tmp_path / "p.md"), "--only", "nope"]) == 2
