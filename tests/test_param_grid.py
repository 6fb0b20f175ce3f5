"""A method's scores over two of its parameters (``ufs.report.param_grid``, ``ufs
sensitivity-figure``; the K-means UFS paper's Figs. 3-4): every grid point in its
cell with its status mark, class defaults filled in, the label-free setting apart, clear
errors; the committed figure page regenerates from its archive."""

from __future__ import annotations

from pathlib import Path

import pytest

from ufs.cli import main
from ufs.fileio import write_json
from ufs.report.param_grid import grid_markdown, grid_scores, write_grid_report

ROOT = Path(__file__).resolve().parents[1]
ARCHIVE = ROOT / "benchmarks" / "results" / "reproduction-kmeans_ufs_sensitivity.tar.xz"
PAGE = ROOT / "docs" / "kmeans_ufs_figures" / "kmeans_ufs_mu0_rho.md"


def _cmd(*extra: str) -> list[str]:
    """``ufs sensitivity-figure`` for K-means UFS over μ⁰ × ρ, with ``extra`` options."""
    return ["sensitivity-figure", "--method", "kmeans_ufs", "--x", "mu0", "--y", "rho", *extra]


def _ev(params, acc, *, label_free=False, in_grid=True, status="ok", n_iter=7, dataset="toy"):
    return {
        "dataset": dataset,
        "method": "kmeans_ufs",
        "pid": "p" + "_".join(f"{v:g}" for v in params.values()),
        "params": params,
        "label_free": label_free,
        "in_grid": in_grid,
        "results": [
            {
                "h": 5,
                "acc_mean": acc,
                "acc_std": 0.01,
                "nmi_mean": acc / 2,
                "nmi_std": 0.0,
                "fit_status": status,
                "fit_info": {"n_iter": n_iter, "converged": status != "not_converged"},
                "objective_curve": [3.0, 2.0, 1.5],
            }
        ],
    }


@pytest.fixture
def files(tmp_path):
    evs = [
        _ev({"mu0": 1e-3, "rho": 1.1}, 0.50),
        _ev({"mu0": 1e3, "rho": 1.1}, 0.40, status="not_converged"),
        _ev({"mu0": 1e-3, "rho": 10.0}, 0.30),
        _ev({"mu0": 1e3, "rho": 10.0}, 0.20, status="degenerate"),
        # the label-free default: no parameter given, the class defaults apply
        _ev({}, 0.45, label_free=True, in_grid=False),
    ]
    path = tmp_path / "kmeans_ufs.c000.json"
    write_json(path, {"evaluations": evs})
    return [path]


def test_every_grid_point_in_its_cell_with_its_mark(files):
    scores = grid_scores(files, "kmeans_ufs", "mu0", "rho")
    default = scores[scores["label_free"]].iloc[0]
    assert (default["mu0"], default["rho"]) == (0.1, 1.05)  # KMeansUFS's defaults
    lines = grid_markdown(scores, "mu0", "rho", ["acc_mean", "n_iter"])
    text = "\n".join(lines)
    assert "| ACC | mu0 = 0.001 | mu0 = 1000 |" in text
    assert "| rho = 1.1 | 0.500 | 0.400† |" in text  # rows ρ, columns μ⁰
    assert "| rho = 10 | 0.300 | 0.200◊ |" in text
    assert "| rho = 1.1 | 7 | 7† |" in text  # a fit fact, same marks
    assert "*label-free default mu0 = 0.1, rho = 1.05: ACC 0.450, n_iter 7.*" in text
    assert "0.45" not in text.split("*label-free")[0]  # off the grid: not in a cell


def test_the_report_writes_figures_and_tables(files, tmp_path):
    paths = write_grid_report(
        files, "kmeans_ufs", "mu0", "rho", tmp_path / "out", title="T", reference="n_iter"
    )
    assert [p.name for p in paths] == [
        "kmeans_ufs_mu0_rho.png",
        "kmeans_ufs_convergence.png",
        "kmeans_ufs_mu0_rho.md",
    ]
    assert all(p.stat().st_size > 0 for p in paths)
    assert (tmp_path / "out" / "kmeans_ufs_mu0_rho.pdf").exists()
    assert paths[2].read_text().startswith("# T\n")


def test_clear_errors(files, tmp_path, capsys):
    with pytest.raises(ValueError, match="no parameter 'gamma'.*mu0"):
        grid_scores(files, "kmeans_ufs", "gamma", "rho")
    with pytest.raises(ValueError, match="no evaluation of 'udfs'"):
        grid_scores(files, "udfs", "gamma", "lam")
    with pytest.raises(ValueError, match="no column 'bogus'"):
        write_grid_report(files, "kmeans_ufs", "mu0", "rho", tmp_path / "o", cols=["bogus"])
    code = main(_cmd("--results", str(tmp_path / "none"), "--out-dir", str(tmp_path / "o")))
    assert code == 2 and "no evaluation files" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.skipif(not ARCHIVE.exists(), reason="the sensitivity run's archive is not here")
def test_the_committed_page_regenerates_from_its_archive(tmp_path):
    """docs/kmeans_ufs_figures/ is generated from the archive alone, byte for byte (the
    markdown; the command in config/experiments/README.md)."""
    code = main(
        _cmd(
            "--archive",
            str(ARCHIVE),
            "--out-dir",
            str(tmp_path),
            "--cols",
            "acc_mean",
            "nmi_mean",
            "optimality_gap",
            "n_iter",
            "--curve-reference",
            "exact_objective",
            "--title",
            "K-means UFS, Figures 3 and 4 (§V-C) on the offline data sets",
        )
    )
    assert code == 0
    assert (tmp_path / PAGE.name).read_text() == PAGE.read_text()


def test_a_grid_over_more_than_two_parameters_is_refused(tmp_path):
    path = tmp_path / "kmeans_ufs.c000.json"
    evs = [_ev({"mu0": 1.0, "rho": 1.1, "mu_max": m}, 0.5) for m in (1e5, 1e7)]
    write_json(path, {"evaluations": evs})
    with pytest.raises(ValueError, match="2 grid settings share their .mu0, rho.*another"):
        grid_scores([path], "kmeans_ufs", "mu0", "rho")


def test_a_fit_without_a_value_keeps_its_cell(tmp_path):
    path = tmp_path / "kmeans_ufs.c000.json"
    evs = [
        _ev({"mu0": 1.0, "rho": 1.1}, 0.5),
        _ev({"mu0": 1.0, "rho": 10.0}, float("nan"), status="budget_exceeded"),
    ]
    write_json(path, {"evaluations": evs})
    text = "\n".join(
        grid_markdown(grid_scores([path], "kmeans_ufs", "mu0", "rho"), "mu0", "rho", ["acc_mean"])
    )
    assert "| rho = 10 | —§ |" in text and "| rho = 1.1 | 0.500 |" in text


def _region_scores(cells):
    """grid_scores-shaped rows: (mu0, rho, acc_mean, acc_std), 20 restarts, one data set."""
    import pandas as pd

    return pd.DataFrame(
        [
            {"dataset": "toy", "h": 5, "mu0": m, "rho": r, "acc_mean": a, "acc_std": s}
            | {"in_grid": True, "restarts": 20}
            for m, r, a, s in cells
        ]
    )


def test_the_sensitivity_claim_by_hand():
    """Issue 38: "not sensitive over μ⁰ ≤ 1, ρ ≤ 1.1" holds when the region's best and
    worst cell differ within 1.96 standard errors, Bonferroni over the region's pairs."""
    from scipy.stats import norm

    from ufs.report.paper_verdicts import (
        SENSITIVITY_CLAIMS,
        sensitivity_markdown,
        sensitivity_verdict,
    )

    claim = SENSITIVITY_CLAIMS["kmeans_ufs"]
    outside = [(1e3, 1.1, 0.10, 0.01), (1e-3, 10.0, 0.90, 0.01)]  # never in the region
    cells = [(1e-6, 1.01, 0.50, 0.02), (1.0, 1.01, 0.51, 0.02), (1e-3, 1.1, 0.49, 0.04)]
    v = sensitivity_verdict(_region_scores(cells + outside), claim)
    z = norm.isf(0.025 / 3)  # three cells, three pairs: 2.394
    allowance = z * ((0.02**2 + 0.04**2) / 20) ** 0.5  # best (0.51 ± .02), worst (0.49 ± .04)
    row = v.iloc[0]
    assert (row["cells"], row["low"], row["high"]) == (3, 0.49, 0.51)
    assert row["allowance"] == pytest.approx(allowance)  # 0.0240
    assert row["range"] == pytest.approx(0.02) and row["holds"]
    text = sensitivity_markdown(v, claim)
    assert "**supported** — it holds on 1 of 1 data sets" in text
    assert "ACC 0.490–0.510 over 3 cells, range 0.020 against 0.024" in text
    # the worst cell 0.45 instead: 0.06 > 0.024, the claim fails
    cells[2] = (1e-3, 1.1, 0.45, 0.04)
    v = sensitivity_verdict(_region_scores(cells + outside), claim)
    assert not v.iloc[0]["holds"]
    assert "**not supported** — it holds on 0 of 1" in sensitivity_markdown(v, claim)


@pytest.mark.slow
@pytest.mark.skipif(not ARCHIVE.exists(), reason="the sensitivity run's archive is not here")
def test_the_reproduction_report_checks_the_sensitivity_claim_from_the_archive(tmp_path):
    """The K-means UFS verdict carries Fig. 3's claim checked on the archived run, with the
    ranges docs/methods.md quotes; the run's section shows every grid point."""
    out = tmp_path / "r.md"
    assert main(["reproduction", "--archives", str(ARCHIVE), "--out", str(out)]) == 0
    text = out.read_text()
    verdict = next(ln for ln in text.splitlines() if ln.startswith("**kmeans_ufs**"))
    assert (
        "Its sensitivity claim" in verdict and "**not supported** — it holds on 0 of 3" in verdict
    )
    methods = (ROOT / "docs" / "methods.md").read_text()
    for span in ("0.366–0.484", "0.569–0.705", "0.340–0.450"):
        assert f"ACC {span} over 9 cells" in verdict and span in methods
    assert "#### umist, h = 50" in text and "| rho = 1.0001 | 0.466† |" in text
    assert "ufs sensitivity-figure --archive" in text
