"""Ours-vs-published comparison: reductions (h, best, mean, all), flags, missing cells."""

import pandas as pd
import pytest

from ufs.bench.compare import compare_published, comparison_markdown


@pytest.fixture
def files(tmp_path):
    pub = pd.DataFrame(
        [
            ["p", "1", "d", "m", "acc", "10", 0.50, 0.01, ""],
            ["p", "1", "d", "m", "acc", "best", 0.70, 0.05, ""],
            ["p", "1", "d", "m", "acc", "mean", 0.60, None, ""],
            ["p", "1", "d", "all_features", "acc", "all", 0.40, None, ""],
            ["p", "1", "d", "nosuch", "acc", "best", 0.90, None, ""],
            ["p", "1", "d", "m", "tp", "20", 9, None, ""],
        ],
        columns=["paper", "table", "dataset", "method", "metric", "h", "value", "std", "note"],
    )
    pub_path = tmp_path / "pub.csv"
    pub.to_csv(pub_path, index=False)
    ours = pd.DataFrame(
        [
            ["d", "m", "oracle", 10, "10", 0.52, 0.01, 5.0],
            ["d", "m", "oracle", 20, "20", 0.66, 0.02, 9.0],
            ["d", "m", "label_free", 20, "20", 0.90, 0.02, 9.0],
            ["d", "all_features", "oracle", 100, "all", 0.45, 0.0, float("nan")],
        ],
        columns=["dataset", "method", "protocol", "h", "h_label", "acc_mean", "acc_std", "tp"],
    )
    ours_path = tmp_path / "d.csv"
    ours.to_csv(ours_path, index=False)
    return pub_path, ours_path


def test_reductions_and_flags(files):
    cmp = compare_published(*files[:1], [files[1]]).set_index(["method", "metric", "h"])
    r = cmp.loc[("m", "acc", "10")]
    assert r["ours"] == pytest.approx(0.52)
    r = cmp.loc[("m", "acc", "best")]
    assert r["ours"] == pytest.approx(0.66)  # oracle only: the label-free 0.90 is ignored
    assert not r["differs"]  # |−0.04| ≤ 0.05
    assert cmp.loc[("m", "acc", "mean")]["ours"] == pytest.approx(0.59)
    assert cmp.loc[("all_features", "acc", "all")]["differs"]  # +0.05 > 0.02 (no std)
    assert cmp.loc[("nosuch", "acc", "best")]["status"] == "not run"
    assert cmp.loc[("m", "tp", "20")]["ours"] == 9.0


def test_differs_uses_published_std(files):
    cmp = compare_published(files[0], [files[1]]).set_index(["method", "metric", "h"])
    # ours 0.52 vs published 0.50 ± 0.01: a difference of 0.02 exceeds the std
    assert cmp.loc[("m", "acc", "10")]["differs"]


def test_markdown_says_not_run(files):
    md = comparison_markdown(compare_published(files[0], [files[1]]), "p")
    assert "not run" in md and "**differs**" in md and "5 of 6 published cells computed" in md


def test_reproduction_report_collects_comparisons(tmp_path, files):
    from ufs.bench.compare import write_comparison
    from ufs.cli import main

    run = tmp_path / "results" / "p"
    write_comparison(
        files[0],
        [files[1]],
        run / "comparison" / "p.csv",
        run / "comparison" / "p.md",
        run / "comparison" / "p.png",
        paper="p",
    )
    out = tmp_path / "reproduction.md"
    assert main(["reproduction", "--results", str(tmp_path / "results"), "--out", str(out)]) == 0
    text = out.read_text()
    assert "## p" in text and "5 of 6 published cells computed" in text
    assert (run / "comparison" / "p.png").stat().st_size > 1000


def test_reproduction_report_shows_runs_without_published_tables(tmp_path):
    """SPCAFS publishes figures only: its run appears with its scope and ACC tables."""
    from ufs.cli import main

    run = tmp_path / "results" / "spcafs"
    (run / "tables").mkdir(parents=True)
    (run / "tables" / "srbct.csv").write_text("dataset,method\nsrbct,spcafs\nsrbct,mcfs\n")
    (run / "tables" / "srbct.md").write_text("## srbct\n\n**ACC %**\n\n| method |\n|---|\n\nrest")
    (run / "timing.json").write_text(
        '{"jobs": 3, "job_wall_seconds": 60, "solver_seconds": 30, "kmeans_seconds": 12}'
    )
    out = tmp_path / "reproduction.md"
    assert main(["reproduction", "--results", str(tmp_path / "results"), "--out", str(out)]) == 0
    text = out.read_text()
    assert "## spcafs" in text and "figures only" in text
    assert "datasets srbct; methods mcfs, spcafs. 3 jobs, 1.0 min of job time" in text
    assert "**ACC %**\n\n| method |" in text and "rest" not in text


def test_reproduction_report_names_papers_without_a_run(tmp_path, monkeypatch):
    """A paper config with no completed run is named, not silently left out."""
    from ufs.cli import main

    run = tmp_path / "results" / "spcafs"
    (run / "tables").mkdir(parents=True)
    (run / "tables" / "srbct.csv").write_text("dataset,method\nsrbct,spcafs\n")
    (run / "timing.json").write_text(
        '{"jobs": 1, "job_wall_seconds": 6, "solver_seconds": 3, "kmeans_seconds": 1}'
    )
    (tmp_path / "config" / "experiments").mkdir(parents=True)
    for paper in ("spcafs", "fsbc", "dgufs"):
        (tmp_path / "config" / "experiments" / f"{paper}.yaml").write_text("{}\n")
    monkeypatch.chdir(tmp_path)
    assert main(["reproduction", "--results", "results", "--out", "r.md"]) == 0
    text = (tmp_path / "r.md").read_text()
    assert "Not in this report (no completed run under `results`): dgufs, fsbc;" in text


def test_reproduction_report_keeps_sections_of_runs_not_present(tmp_path, monkeypatch):
    """Regenerating from the runs at hand replaces their sections and keeps (marked) the
    sections of runs computed elsewhere; --drop-missing removes them."""
    from ufs.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "old.md").write_text(
        "# Reproduction\n\nintro\n\n<!-- results/dgufs -->\n## dgufs\n\nDGUFS CELLS\n\n"
        "<!-- results/spcafs -->\n## spcafs\n\nOLD SPCAFS\n\n"
        "Not in this report (no completed run under `results`): fsbc; run ...\n"
    )
    run = tmp_path / "results" / "spcafs"
    (run / "tables").mkdir(parents=True)
    (run / "tables" / "srbct.csv").write_text("dataset,method\nsrbct,spcafs\n")
    (run / "tables" / "srbct.md").write_text("## srbct\n\n**ACC %**\n\n| NEW |\n")
    (run / "timing.json").write_text(
        '{"jobs": 1, "job_wall_seconds": 6, "solver_seconds": 3, "kmeans_seconds": 1}'
    )
    assert main(["reproduction", "--results", "results", "--out", "old.md"]) == 0
    text = (tmp_path / "old.md").read_text()
    assert "DGUFS CELLS" in text and "Kept from the previous report" in text
    assert "| NEW |" in text and "OLD SPCAFS" not in text
    assert text.count("<!-- run: dgufs -->") == 1 and text.count("Not in this report") == 0
    # regenerating again does not stack the note
    assert main(["reproduction", "--results", "results", "--out", "old.md"]) == 0
    again = (tmp_path / "old.md").read_text()
    assert again.count("Kept from the previous report") == 1 and "DGUFS CELLS" in again
    assert main(["reproduction", "--results", "results", "--out", "old.md", "--drop-missing"]) == 0
    assert "DGUFS CELLS" not in (tmp_path / "old.md").read_text()


def test_budget_exceeded_cells_have_no_value(tmp_path):
    """A method whose fits all exceeded the compute budget (NaN scores) is reported as
    "budget exceeded", not compared, whatever the h reduction."""
    pub = pd.DataFrame(
        [["p", "1", "d", "slow", "acc", h, 0.5, None, ""] for h in ("best", "mean", "10")],
        columns=["paper", "table", "dataset", "method", "metric", "h", "value", "std", "note"],
    )
    ours = pd.DataFrame(
        [["d", "slow", "oracle", h, str(h), float("nan"), float("nan")] for h in (10, 20)],
        columns=["dataset", "method", "protocol", "h", "h_label", "acc_mean", "acc_std"],
    )
    pub.to_csv(tmp_path / "pub.csv", index=False)
    ours.to_csv(tmp_path / "d.csv", index=False)
    cmp = compare_published(tmp_path / "pub.csv", [tmp_path / "d.csv"])
    assert list(cmp["status"]) == ["budget exceeded"] * 3
    assert cmp["ours"].isna().all() and not cmp["differs"].any()
    md = comparison_markdown(cmp, "p")
    assert "0 of 3 published cells computed" in md and "nan" not in md


def test_reproduction_scope_names_the_size_of_each_tuned_grid(tmp_path):
    """A label-tuned cell is a maximum over its grid: the scope line says over how many
    settings each method was tuned (a range where data sets differ); label-free and
    random rows do not count."""
    from ufs.cli import main

    run = tmp_path / "results" / "fsbc"
    (run / "tables").mkdir(parents=True)
    head = "dataset,method,protocol,n_settings\n"
    (run / "tables" / "yale.csv").write_text(
        head + "yale,fsasl,oracle,9\nyale,fsasl,label_free,1\nyale,fsbc,oracle,49\n"
        "yale,random,draw,1\n"
    )
    (run / "tables" / "orl.csv").write_text(head + "orl,fsasl,oracle,9\norl,fsbc,oracle,45\n")
    (run / "timing.json").write_text(
        '{"jobs": 1, "job_wall_seconds": 6, "solver_seconds": 3, "kmeans_seconds": 1}'
    )
    out = tmp_path / "r.md"
    assert main(["reproduction", "--results", str(tmp_path / "results"), "--out", str(out)]) == 0
    text = out.read_text()
    assert "Label-tuned over fsasl 9, fsbc 45–49 parameter settings (the run's grids)." in text
    assert "random" not in text.split("Label-tuned over", 1)[1].split("\n", 1)[0]
