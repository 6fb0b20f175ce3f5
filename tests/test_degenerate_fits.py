"""Degenerate fits are a status: a fit whose answer is decided by round-off or by
a trivial rule is warned about, recorded, marked ◊ in tables, counted in summary.md and
tagged in MLflow, like a fit that did not converge."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from ufs.base import ROUNDOFF_RTOL, DegenerateFitWarning, resolved_rank
from ufs.methods import DGUFS, MCFS, SPCAFS
from ufs.methods.dgufs import smallest_norm_selection
from ufs.pipeline.status import STATUS_MARK, fit_status
from ufs.pipeline.steps import _scalar_attributes
from ufs.preprocessing import standardize
from ufs.report import aggregate

from .test_failure_flags import _record, _row


def _clusters(seed: int = 0, n_per: int = 40, c: int = 4, p: int = 30) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_per * c, p))
    X[:, :3] += np.repeat(rng.normal(scale=6.0, size=(c, 3)), n_per, axis=0)
    return standardize(X).X


def test_resolved_rank_counts_weights_above_the_roundoff_threshold():
    s = np.array([1.0, 0.5, 2e-4, 5e-5, 0.0, 1e-9])
    assert resolved_rank(s) == 3  # 1, 0.5 and 2e-4 are above 1e-4 · 1
    assert resolved_rank(s**2, power=2) == 3  # squared norms: the same rows
    assert resolved_rank(np.zeros(4)) == 0
    assert resolved_rank(np.array([3.0, 3.0, 3.0])) == 3
    assert ROUNDOFF_RTOL == 1e-4


def test_collapsed_spcafs_is_degenerate_beyond_its_resolved_rank():
    X = _clusters()
    with pytest.warns(DegenerateFitWarning, match="only 3 of 30 features"):
        est = SPCAFS(10, 4, gamma=1e4).fit(X)
    norms = np.sort(np.linalg.norm(est.W_, axis=1))[::-1]
    assert est.resolved_rank_ == 3  # c − 1 unit rows, the rest at the smoothing level
    assert norms[2] > 0.99 and norms[3] < ROUNDOFF_RTOL
    info = _scalar_attributes(est)
    assert info["resolved_rank"] == 3
    assert fit_status(info, est.objective_, h=3) == "ok"
    assert fit_status(info, est.objective_, h=4) == "degenerate"
    # a small γ does not collapse: every feature ranked above round-off, no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateFitWarning)
        small = SPCAFS(10, 4, gamma=1e-2).fit(X)
    assert small.resolved_rank_ == 30
    assert fit_status(_scalar_attributes(small), small.objective_, h=30) == "ok"


def test_dgufs_on_zscored_data_is_the_smallest_norm_filter():
    X = _clusters()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DGUFS's own ConvergenceWarning
        with pytest.warns(DegenerateFitWarning, match="smallest norm"):
            est = DGUFS(5, 4, input_space="standardized", max_iter=20).fit(X)
    assert est.degenerate_ is True
    assert smallest_norm_selection(X, est.selected_features_)
    info = _scalar_attributes(est)
    assert fit_status(info, est.objective_, h=5) in ("degenerate", "not_converged")
    info["converged"] = True
    assert fit_status(info, None, h=5) == "degenerate"


def test_smallest_norm_selection_brute_force():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(20, 6)) * np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    order = np.argsort(np.einsum("ij,ij->j", X, X))
    for h in range(1, 6):
        assert smallest_norm_selection(X, order[:h])
        assert not smallest_norm_selection(X, order[-h:])


def test_an_ordinary_mcfs_fit_is_not_degenerate():
    X = _clusters()
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateFitWarning)
        est = MCFS(5, 4).fit(X)
    info = _scalar_attributes(est)
    assert "degenerate" not in info and "resolved_rank" not in info
    assert fit_status(info, None, h=5) == "ok"


def test_degenerate_cells_are_marked_and_counted(tmp_path):
    from ufs.fileio import write_json

    recs = [
        _record("toy", "spcafs", "ranking", "s", [_row(5, "ok", 0.6), _row(10, "degenerate", 0.5)]),
        _record("toy", "mcfs", "subset", "m", [_row(5, "ok", 0.7), _row(10, "ok", 0.72)]),
    ]
    path = tmp_path / "evaluations" / "toy.json"
    write_json(path, {"dataset": "toy", "evaluations": recs})
    aggregate.write_dataset_outputs(
        [path], "toy", tmp_path / "toy.csv", tmp_path / "toy.md", tmp_path / "fig"
    )
    md = (tmp_path / "toy.md").read_text()
    lines = {ln.split("|")[1].strip(): ln for ln in md.splitlines() if ln.startswith("| ")}
    mark = STATUS_MARK["degenerate"]
    assert mark not in lines["spcafs"].split("|")[2] and mark in lines["spcafs"].split("|")[3]
    assert mark not in lines["mcfs"]
    assert aggregate.STATUS_LEGEND in md and "◊ a fit is degenerate" in md
    fits = aggregate.fit_records([path])
    # the ranking fit serves both h: its status is the worst over h
    assert fits.set_index("method").loc["spcafs", "status"] == "degenerate"
    counts = aggregate.failure_counts(fits)
    summary = aggregate.failure_markdown(counts)
    assert "1 were degenerate (◊)" in summary and "| spcafs | toy |" in summary
    warning = aggregate.fit_status_warning(aggregate.failure_report(counts))
    assert "1 degenerate" in warning


def test_spcafs_auto_gamma_is_a_fraction_of_the_data_scale_and_does_not_collapse():
    from ufs.methods.spcafs import AUTO_GAMMA_RATIO

    X = _clusters()
    auto = SPCAFS(10, 4, gamma="auto").fit(X)
    top = np.linalg.eigvalsh((X - X.mean(0)).T @ (X - X.mean(0)))[-1]
    assert auto.gamma_ == pytest.approx(AUTO_GAMMA_RATIO * top, rel=1e-10)
    fixed = SPCAFS(10, 4, gamma=auto.gamma_).fit(X)
    np.testing.assert_array_equal(auto.feature_order_, fixed.feature_order_)
    assert auto.resolved_rank_ == X.shape[1]  # no collapse (γ = 1e4 keeps 3, above)
    # the low-rank solver (p > 500, rank ≤ p/4) reads λ_max off its SVD: the same γ
    wide = np.hstack([X] + [X[:, :] + 0.01 * np.random.default_rng(1).normal(size=X.shape)] * 20)
    a = SPCAFS(10, 4, gamma="auto", solver="lowrank").fit(wide)
    b = SPCAFS(10, 4, gamma="auto", solver="dense").fit(wide)
    assert a.gamma_ == pytest.approx(b.gamma_, rel=1e-9)
    with pytest.raises(ValueError, match="gamma must be"):
        SPCAFS(10, 4, gamma="large").fit(X)
    with pytest.raises(ValueError, match="gamma must be > 0"):
        SPCAFS(10, 4, gamma=0.0).fit(X)


def test_registry_label_free_spcafs_uses_auto_gamma():
    from ufs.registry import get_method

    for name in ("spcafs", "spcafs_raw"):
        assert get_method(name).defaults["gamma"] == "auto"
        assert 1e4 in get_method(name).grid["gamma"]  # the paper's value stays in the grid


@pytest.mark.parametrize(
    "info",
    [
        {"converged": True, "degenerate": True},
        {"converged": True, "degenerate": False},
        {"converged": True, "resolved_rank": 4},
        {"converged": True, "resolved_rank": 5},
        {"converged": True, "resolved_rank": 9},
        {},
    ],
)
@pytest.mark.parametrize("warned", [(), ("RoundoffSolveWarning: Cholesky failed ...",)])
def test_degenerate_flag_is_fit_status_rule(info, warned):
    """aggregate.degenerate_flag applies fit_status's ◊ rule for fits whose status is an
    earlier one (not converged); where no earlier status applies the two must agree."""
    got = aggregate.degenerate_flag(info, 5, warned)
    assert got == (fit_status(info, None, warned, h=5) == "degenerate")
    assert got == (bool(warned) or aggregate.degenerate_flag(info, 5))


def test_a_fit_both_not_converged_and_degenerate_counts_under_both(tmp_path):
    """Every DGUFS fit with the authors' rescaling runs max_iter iterations (†) and returns
    the smallest-norm features (◊): its status is not_converged, the counts show both."""
    from ufs.fileio import write_json

    both = _row(5, "not_converged", 0.4)
    both["fit_info"] = {"converged": False, "degenerate": True}
    plain = _row(10, "not_converged", 0.4)
    plain["fit_info"] = {"converged": False, "degenerate": False}
    path = tmp_path / "evaluations" / "toy.json"
    write_json(
        path,
        {"dataset": "toy", "evaluations": [_record("toy", "dgufs", "subset", "d", [both, plain])]},
    )
    fits = aggregate.fit_records([path])
    assert fits["status"].tolist() == ["not_converged", "not_converged"]
    assert fits["degenerate"].tolist() == [True, False]
    (row,) = aggregate.failure_counts(fits).to_dict("records")
    assert (row["not_converged"], row["degenerate"], row["settings_affected"]) == (2, 1, 1)
    # a file without the flag column (an older table) counts by status alone
    assert aggregate.degenerate_fits(fits.drop(columns="degenerate")).sum() == 0
