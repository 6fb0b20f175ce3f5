"""Agreement with a published cell: within the published number's own rounding or the
standard errors' margin, and a mean over h whose standard error comes from the covariance
of the restarts' scores across h (the k-means seeds are the same at every h)."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.test_compare import PUBLISHED_COLUMNS, _compare
from ufs.fileio import write_json
from ufs.report.compare import (
    TRAILING_ZEROS_DROPPED,
    Z95,
    agreement,
    compare_published,
    comparison_markdown,
    mean_over_h_std,
    rounding_of,
)
from ufs.report.results_table import restarts_text

REPO = Path(__file__).resolve().parents[1]


# -- the published rounding --------------------------------------------------------------


def test_rounding_is_half_a_unit_of_the_printed_last_digit():
    assert rounding_of("0.736") == pytest.approx(5e-4)
    assert rounding_of("0.0855") == pytest.approx(5e-5)  # DGUFS's NMI 8.55 %
    assert rounding_of("0.720") == pytest.approx(5e-4)  # a trailing zero is a printed digit
    assert rounding_of("0.3800") == pytest.approx(5e-5)  # GOLFS's ACC 38.00 %
    assert rounding_of("3") == 0.5
    # GOLFS's Table 1 prints two decimals and drops trailing zeros ("2.4", "0.9", "0")
    assert TRAILING_ZEROS_DROPPED[("golfs", "1")] == 2
    assert rounding_of("0", "golfs", "1") == pytest.approx(5e-3)
    assert rounding_of("2.4", "golfs", "1") == pytest.approx(5e-3)
    assert rounding_of("3.98", "golfs", "1") == pytest.approx(5e-3)
    assert rounding_of("0.384", "golfs", "2") == pytest.approx(5e-4)


def test_the_published_digits_are_recoverable_from_config_published():
    """config/published stores each value as printed (text: ``0.720`` is not ``0.72``);
    every table prints at least three decimals except those that drop trailing zeros
    (named in TRAILING_ZEROS_DROPPED), so a value re-saved from floats would show here."""
    rows = []
    for path in sorted((REPO / "config" / "published").glob("*.csv")):
        with path.open(newline="") as f:
            rows += list(csv.DictReader(f))
    assert len(rows) > 400
    for row in rows:
        if (row["paper"], row["table"]) in TRAILING_ZEROS_DROPPED:
            continue
        assert len(row["value"].partition(".")[2]) >= 3, row
    eufs = next(
        r
        for r in rows
        if (r["paper"], r["table"], r["dataset"], r["method"]) == ("dgufs", "2", "allaml", "eufs")
    )
    assert eufs["value"] == "0.736" and rounding_of(eufs["value"]) == pytest.approx(5e-4)


def test_a_cell_within_the_published_rounding_agrees(tmp_path):
    """DGUFS's Table 2 prints EUFS on ALLAML as 73.6 ± 0.00; ours is 53 of the 72 samples
    on every restart (0.73611, std 0). Neither side has a spread, so the standard errors'
    margin is 0, but 0.00011 is within the published rounding (±0.0005): it agrees. A cell
    outside the rounding and the margin differs; one outside the rounding but inside the
    margin agrees."""
    ours_acc = 53 / 72
    cmp = _compare(
        tmp_path,
        [
            ["dgufs", "2", "allaml", "eufs", "acc", "best", "0.736", "0.0000", ""],
            ["dgufs", "2", "allaml", "mcfs", "acc", "best", "0.730", "0.0000", ""],
            ["dgufs", "2", "allaml", "udfs", "acc", "best", "0.760", "0.0000", ""],
            ["dgufs", "2", "allaml", "ndfs", "acc", "best", "0.740", "0.0000", ""],
        ],
        [
            ["allaml", "eufs", "oracle", 100, "100", ours_acc, 0.0],
            ["allaml", "mcfs", "oracle", 100, "100", ours_acc, 0.0],
            ["allaml", "udfs", "oracle", 100, "100", ours_acc, 0.01],
            ["allaml", "ndfs", "oracle", 100, "100", ours_acc, 0.01],
        ],
    ).set_index("method")
    eufs = cmp.loc["eufs"]
    assert eufs["difference"] == pytest.approx(0.000111, abs=1e-6)
    assert eufs["agreement"] == "agrees" and not eufs["differs"]
    assert eufs["margin"] == pytest.approx(5e-4)
    assert eufs["basis"].endswith("the published rounding, ±0.0005, is wider")
    # 0.73611 vs 0.730: 0.0061 beyond the rounding, and no spread on either side
    assert cmp.loc["mcfs", "agreement"] == "differs"
    # ours ± 0.01 over 20 restarts: margin 1.96 · 0.01/√20 = 0.0044
    margin = Z95 * 0.01 / 20**0.5
    assert cmp.loc["udfs", "margin"] == pytest.approx(margin)
    assert cmp.loc["udfs", "agreement"] == "differs"  # 0.0239: beyond both
    assert cmp.loc["ndfs", "agreement"] == "agrees"  # 0.0039: beyond the rounding, within
    md = comparison_markdown(cmp.reset_index(), "dgufs")
    row = next(ln for ln in md.splitlines() if "| allaml | eufs |" in ln)
    assert row.endswith("| 0.736 ± 0.000 | 0.736 ± 0.000 | +0.000 | 0.0005 | agrees |")
    assert "the published rounding, half a unit of the printed last digit" in md


def test_the_rounding_widens_no_margin_already_wider():
    status, margin, basis = agreement("acc", 0.60, 0.02, 0.61, 0.02, rounding=5e-4)
    assert margin == pytest.approx(Z95 * (2 * 0.02**2 / 20) ** 0.5)
    assert status == "agrees" and "rounding" not in basis
    # a count printed as an integer: half a feature, as printed
    assert agreement("tp", 3, None, 3.4, None, replicates=1, rounding=0.5)[0] == "agrees"


# -- the mean over h: the restarts' covariance across h ----------------------------------


def _rows(scores: np.ndarray) -> pd.DataFrame:
    """Per-h table rows (one per column of ``scores``, restarts × h) as the tables carry
    them: the mean, the std and the restarts' scores in restart order."""
    return pd.DataFrame(
        {
            "acc_mean": scores.mean(axis=0),
            "acc_std": scores.std(axis=0, ddof=1),
            "acc_restarts": [restarts_text(col) for col in scores.T],
        }
    )


@pytest.mark.parametrize("rho", [0.0, 0.5, 0.9])
def test_the_mean_over_h_error_matches_a_simulation_with_known_correlation(rho):
    """Restart scores drawn from a multivariate normal with correlation ρ across h: the
    standard error of the mean over n_h values is σ √((1 + (n_h − 1) ρ) / n_h) / √R, and the
    computed one is the covariance form (1/n_h²) Σ_{h,h'} Cov(y_h, y_h') / R exactly."""
    rng = np.random.default_rng(7)
    restarts, n_h, sigma = 20000, 5, 0.03
    cov = sigma**2 * ((1 - rho) * np.eye(n_h) + rho * np.ones((n_h, n_h)))
    scores = rng.multivariate_normal(np.linspace(0.5, 0.6, n_h), cov, size=restarts)
    se = mean_over_h_std(_rows(scores), "acc") / np.sqrt(restarts)
    analytic = sigma * np.sqrt((1 + (n_h - 1) * rho) / n_h) / np.sqrt(restarts)
    assert se == pytest.approx(analytic, rel=0.03)
    sample_cov = np.cov(scores, rowvar=False)  # ddof 1, paired by restart
    assert se == pytest.approx(np.sqrt(sample_cov.sum() / n_h**2 / restarts), rel=1e-9)


def test_fully_correlated_restarts_give_root_n_times_the_independent_error():
    """ρ = 1 (each restart shifts every h alike): the mean over h is as noisy as one h, √n_h
    times what the independent formula √(Σ σ_h²) / n_h would say."""
    rng = np.random.default_rng(3)
    n_h = 6
    shift = rng.normal(0, 0.04, size=10)
    scores = np.linspace(0.4, 0.7, n_h)[None, :] + shift[:, None]
    rows = _rows(scores)
    independent = float(np.sqrt((rows["acc_std"] ** 2).sum()) / n_h)
    std = mean_over_h_std(rows, "acc")
    assert std == pytest.approx(shift.std(ddof=1), rel=1e-9)
    assert std == pytest.approx(np.sqrt(n_h) * independent, rel=1e-9)


def test_the_independent_formula_is_not_used_even_without_the_restarts():
    """Tables without the restarts' scores (or with scores of unequal lengths) get the
    bound of full correlation, the mean of the per-h stds, never √(Σ σ_h²) / n."""
    rows = pd.DataFrame({"acc_mean": [0.5, 0.6], "acc_std": [0.03, 0.04]})
    assert mean_over_h_std(rows, "acc") == pytest.approx(0.035)
    assert mean_over_h_std(rows, "acc") > np.sqrt(0.03**2 + 0.04**2) / 2
    uneven = rows.assign(acc_restarts=["0.5 0.6 0.4", "0.6 0.7"])
    assert mean_over_h_std(uneven, "acc") == pytest.approx(0.035)


def _record(method: str, pid: str, per_h: dict[int, list[float]], *, in_grid: bool) -> dict:
    def row(h, values):
        per = {m: values for m in ("acc", "nmi", "ari", "ne")}
        return {
            "h": h,
            "h_label": str(h),
            "per_restart": per,
            "fit_seconds": 0.1,
            "fit_info": {},
            "fit_warnings": [],
            "fit_status": "ok",
            "objective_curve": None,
            "selected": [],
        }

    return {
        "dataset": "toy",
        "dataset_base": "toy",
        "seed": 0,
        "method": method,
        "pid": pid,
        "hkey": "x",
        "params": {"p": pid},
        "label_free": not in_grid,
        "in_grid": in_grid,
        "kind": "ranking",
        "kmeans_seconds": 0.1,
        "fit_seconds_total": 0.1,
        "code_version": "x",
        "results": [row(h, v) for h, v in per_h.items()],
    }


def test_tables_carry_the_held_out_restarts_and_the_comparison_pairs_them(tmp_path):
    """A label-tuned row's ``<metric>_restarts`` are the odd restarts' scores (those its
    mean and std are of); a published mean over h is held to the standard error of the
    per-restart means over h: here the two h move together (0.1 apart on every restart),
    so it is the std of one h over √2, √2 times the independent formula's."""
    from ufs.report.aggregate import write_dataset_csv

    low = [0.50, 0.40, 0.52, 0.46, 0.51, 0.60]  # restarts 0..5: the odd ones 0.40, 0.46, 0.60
    per_h = {10: low, 20: [x + 0.1 for x in low]}
    write_json(
        tmp_path / "ev.json",
        {"dataset": "toy", "evaluations": [_record("m", "g1", per_h, in_grid=True)]},
    )
    write_dataset_csv([tmp_path / "ev.json"], "toy", tmp_path / "toy.csv")
    table = pd.read_csv(tmp_path / "toy.csv", dtype={"h_label": str})
    tuned = table[table["protocol"] == "oracle"].set_index("h_label")
    assert tuned.loc["10", "acc_restarts"].split() == ["0.4", "0.46", "0.6"]
    assert tuned.loc["20", "acc_mean"] == pytest.approx(np.mean([0.5, 0.56, 0.7]))

    pd.DataFrame(
        [["p", "1", "toy", "m", "acc", "mean", "0.600", None, ""]], columns=PUBLISHED_COLUMNS
    ).to_csv(tmp_path / "pub.csv", index=False)
    cmp = compare_published(tmp_path / "pub.csv", [tmp_path / "toy.csv"], restarts=6)
    std = float(np.std([0.4, 0.46, 0.6], ddof=1))
    assert cmp.loc[0, "ours_std"] == pytest.approx(std)
    assert cmp.loc[0, "margin"] == pytest.approx(Z95 * std / np.sqrt(3))
    independent = np.sqrt(2 * std**2) / 2
    assert cmp.loc[0, "ours_std"] == pytest.approx(np.sqrt(2) * independent)
