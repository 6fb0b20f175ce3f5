"""Ours-vs-published comparison: reductions (h, best, mean, all), flags, missing cells."""

import json

import pandas as pd
import pytest

from ufs.report.compare import compare_published, comparison_markdown

PUBLISHED_COLUMNS = ["paper", "table", "dataset", "method", "metric", "h", "value", "std", "note"]
OUR_COLUMNS = ["dataset", "method", "protocol", "h", "h_label", "acc_mean", "acc_std"]


def _compare(tmp_path, published, ours, our_columns=OUR_COLUMNS, **kw):
    """compare_published on hand-written rows: the published table and one of ours."""
    pd.DataFrame(published, columns=PUBLISHED_COLUMNS).to_csv(tmp_path / "pub.csv", index=False)
    pd.DataFrame(ours, columns=our_columns).to_csv(tmp_path / "d.csv", index=False)
    return compare_published(tmp_path / "pub.csv", [tmp_path / "d.csv"], **kw)


@pytest.fixture
def files(tmp_path):
    # values as config/published stores them: the printed digits, trailing zeros kept
    pub = pd.DataFrame(
        [
            ["p", "1", "d", "m", "acc", "10", "0.500", 0.01, ""],
            ["p", "1", "d", "m", "acc", "best", "0.700", 0.05, ""],
            ["p", "1", "d", "m", "acc", "mean", "0.600", None, ""],
            ["p", "1", "d", "all_features", "acc", "all", "0.400", None, ""],
            ["p", "1", "d", "nosuch", "acc", "best", "0.900", None, ""],
            ["p", "1", "d", "m", "tp", "20", "9", None, ""],
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
    # 0.70 ± 0.05 published, 0.66 ± 0.02 ours, 20 restarts: margin 1.96·√((.05² + .02²)/20)
    assert r["margin"] == pytest.approx(1.959964 * (0.0029 / 20) ** 0.5)  # = 0.0236
    assert r["differs"] and r["agreement"] == "differs"  # |−0.04| > 0.0236
    assert cmp.loc[("m", "acc", "mean")]["ours"] == pytest.approx(0.59)
    # no published std: our standard error only (our std: the mean of the per-h stds)
    assert cmp.loc[("m", "acc", "mean")]["basis"].startswith("our spread only")
    assert cmp.loc[("all_features", "acc", "all")]["differs"]  # +0.05, ours ± 0.0
    assert cmp.loc[("nosuch", "acc", "best")]["status"] == "method not implemented"
    assert cmp.loc[("m", "tp", "20")]["ours"] == 9.0


def test_agreement_uses_both_standard_errors(files):
    cmp = compare_published(files[0], [files[1]]).set_index(["method", "metric", "h"])
    # ours 0.52 ± 0.01 vs published 0.50 ± 0.01 over 20 restarts: margin 1.96·√(2·.01²/20)
    r = cmp.loc[("m", "acc", "10")]
    assert r["margin"] == pytest.approx(0.0061980, abs=1e-6)
    assert r["differs"] and r["basis"] == "standard errors over 20 restarts"
    # with 2 restarts the same stds allow 1.96·√(2·.01²/2) = 0.0196 < 0.02: still differs;
    # with 1 restart 0.0277 > 0.02: agrees
    two = compare_published(files[0], [files[1]], restarts=2).set_index(["method", "metric", "h"])
    assert two.loc[("m", "acc", "10")]["differs"]
    one = compare_published(files[0], [files[1]], restarts=1).set_index(["method", "metric", "h"])
    assert one.loc[("m", "acc", "10")]["agreement"] == "agrees"


def test_agreement_on_hand_computed_cells():
    """A count cell, a cell without a published std, an impossible cell."""
    from ufs.report.compare import agreement, impossible

    # TP (a count): ours 6.0 ± 1.0 over 3 replicates vs published 7.0: margin 1.96/√3 = 1.13
    status, margin, basis = agreement("tp", 7.0, None, 6.0, 1.0, replicates=3)
    assert margin == pytest.approx(1.959964 / 3**0.5) and status == "agrees"
    assert agreement("tp", 7.5, None, 6.0, 1.0, replicates=3)[0] == "differs"
    # TP without a replicate spread: half a feature
    assert agreement("tp", 6.4, None, 6.0, None, replicates=1)[1:] == (
        0.5,
        "half a feature (no replicate spread)",
    )
    # CP (a fraction of repeats): ours 0 of 3 vs the paper's 0.01 of 100 repeats
    status, margin, _ = agreement("cp", 0.01, None, 0.0, None, replicates=3, published_repeats=100)
    se2 = (1 / 6) ** 2 + 0.01 * 0.99 / 100 + (1 / 200) ** 2
    assert margin == pytest.approx(1.959964 * se2**0.5) and status == "agrees"
    # no published std: our standard error only (0.03 / √20 · 1.96 = 0.0131)
    status, margin, basis = agreement("acc", 0.60, None, 0.615, 0.03, restarts=20)
    assert margin == pytest.approx(1.959964 * 0.03 / 20**0.5) and status == "differs"
    assert basis == "our spread only (no published std)"
    # neither std: the fixed 0.02
    assert agreement("nmi", 0.60, None, 0.615, None)[:2] == ("agrees", 0.02)
    # impossible: GOLFS Table 4's Yale ACC 0.042 with 15 classes (1/15 = 0.067)
    assert "below 1/k = 0.067" in impossible("acc", 0.042, n_classes=15, h="50")
    assert impossible("acc", 0.0667, n_classes=15, h="50") == ""  # 1/15 rounded: possible
    assert "outside [0, 1]" in impossible("nmi", 1.2, n_classes=None, h="best")
    assert "above h = 10" in impossible("tp", 10.5, n_classes=None, h="10")


def test_an_impossible_published_cell_is_its_own_status(tmp_path):
    cmp = _compare(
        tmp_path,
        [["golfs", "4", "yale", "m", "acc", "10", 0.042, None, ""]],
        [["yale", "m", "oracle", 10, "10", 0.45, 0.02]],
    )
    assert cmp.loc[0, "agreement"] == "impossible as published" and not cmp.loc[0, "differs"]
    md = comparison_markdown(cmp, "golfs")
    assert "1 impossible as published" in md and "*impossible as published* (ACC 0.042" in md


def test_markdown_says_not_run(files):
    md = comparison_markdown(compare_published(files[0], [files[1]]), "p")
    assert "method not implemented" in md and "**differs**" in md
    assert "5 of 6 published cells computed" in md
    assert "; not computed: 1 method not implemented." in md


def test_each_missing_cell_says_why(tmp_path):
    """A published cell without a value of ours names its reason, from the
    registries: network-only data, an unregistered data set or method, a registered pair
    outside the run, an h the run did not score (not counted as computed)."""
    rows = [
        ["hars", "kmeans_ufs", "acc", "best"],  # OpenML only
        ["nosuch_data", "kmeans_ufs", "acc", "best"],
        ["wine", "lrpfs", "acc", "best"],  # FSBC's LRPFS: not implemented
        ["wine", "ndfs", "acc", "best"],  # both registered, not in this run
        ["wine", "kmeans_ufs", "acc", "30"],  # the run scored h = 10 only
        ["wine", "kmeans_ufs", "acc", "10"],
    ]
    cmp = _compare(
        tmp_path,
        [["p", "1", d, m, metric, h, 0.5, 0.01, ""] for d, m, metric, h in rows],
        [["wine", "kmeans_ufs", "oracle", 10, "10", 0.52, 0.01]],
    )
    assert list(cmp["status"]) == [
        "data network-only",
        "data set not registered",
        "method not implemented",
        "not run",
        "h=30 not run",
        "ok",
    ]
    md = comparison_markdown(cmp, "p")
    assert "1 of 6 published cells computed" in md
    assert "nan" not in md  # the h missing from the run is not printed as a number
    assert (
        "not computed: 1 data network-only, 1 data set not registered, 1 h=30 not run, "
        "1 method not implemented, 1 not run." in md
    )


def test_reproduction_report_collects_comparisons(tmp_path, files):
    from ufs.cli import main
    from ufs.report.compare import write_comparison

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
    """SPCAFS publishes figures only: its run appears with its scope and its label-tuned
    ACC tables (not the label-free ones, not the legend)."""
    from ufs.cli import main

    run = tmp_path / "results" / "spcafs"
    (run / "tables").mkdir(parents=True)
    (run / "tables" / "srbct.csv").write_text("dataset,method\nsrbct,spcafs\nsrbct,mcfs\n")
    (run / "tables" / "srbct.md").write_text(
        "## srbct\n\n**ACC %** — label-free: defaults\n\n| FREE |\n|---|\n\n"
        "**ACC %** — label-tuned: the labels choose\n\n| TUNED |\n|---|\n\n"
        "**Legend**\n\nTRAILING-SECTION"
    )
    (run / "timing.json").write_text(
        '{"jobs": 3, "job_wall_seconds": 60, "solver_seconds": 30, "kmeans_seconds": 12}'
    )
    out = tmp_path / "reproduction.md"
    assert main(["reproduction", "--results", str(tmp_path / "results"), "--out", str(out)]) == 0
    text = out.read_text()
    assert "## spcafs" in text and "figures only" in text
    assert "datasets srbct; methods mcfs, spcafs. 3 jobs, 1.0 min of job time" in text
    assert "## srbct\n\n**ACC %** — label-tuned: the labels choose\n\n| TUNED |" in text
    assert "FREE" not in text and "TRAILING-SECTION" not in text


def test_reproduction_report_names_papers_without_a_run(tmp_path, monkeypatch):
    """A seed paper's run that is not there is named, not silently left out; the
    benchmark, which reproduces no paper, is not one of them (nor does the list depend on
    the folder the command runs in)."""
    from ufs.cli import main

    run = tmp_path / "results" / "spcafs"
    (run / "tables").mkdir(parents=True)
    (run / "tables" / "srbct.csv").write_text("dataset,method\nsrbct,spcafs\n")
    (run / "timing.json").write_text(
        '{"jobs": 1, "job_wall_seconds": 6, "solver_seconds": 3, "kmeans_seconds": 1}'
    )
    (tmp_path / "config" / "experiments").mkdir(parents=True)
    (tmp_path / "config" / "experiments" / "benchmark.yaml").write_text("{}\n")
    monkeypatch.chdir(tmp_path)
    assert main(["reproduction", "--results", "results", "--out", "r.md"]) == 0
    text = (tmp_path / "r.md").read_text()
    assert (
        "Not in this report (no completed run in `results`): dgufs, fsbc, golfs, kmeans_ufs, "
        "kmeans_ufs_sensitivity;" in text
    )
    assert "*Not computed here*: the report's inputs hold no run of this paper." in text


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
    (run / "tables" / "srbct.md").write_text("## srbct\n\n**ACC %** — label-tuned\n\n| NEW |\n")
    (run / "timing.json").write_text(
        '{"jobs": 1, "job_wall_seconds": 6, "solver_seconds": 3, "kmeans_seconds": 1}'
    )
    assert main(["reproduction", "--results", "results", "--out", "old.md"]) == 0
    text = (tmp_path / "old.md").read_text()
    assert "DGUFS CELLS" in text and "Kept from the previous report" in text
    assert "| NEW |" in text and "OLD SPCAFS" not in text
    assert text.count("<!-- run: dgufs -->") == 1 and text.count("Not in this report") == 1
    assert "Not in this report (no completed run in `results`): fsbc, golfs, kmeans_ufs," in text
    # regenerating again does not stack the note
    assert main(["reproduction", "--results", "results", "--out", "old.md"]) == 0
    again = (tmp_path / "old.md").read_text()
    assert again.count("Kept from the previous report") == 1 and "DGUFS CELLS" in again
    assert main(["reproduction", "--results", "results", "--out", "old.md", "--drop-missing"]) == 0
    assert "DGUFS CELLS" not in (tmp_path / "old.md").read_text()


def test_budget_exceeded_cells_have_no_value(tmp_path):
    """A method whose fits all exceeded the compute budget (NaN scores) is reported as
    "budget exceeded", not compared, whatever the h reduction."""
    cmp = _compare(
        tmp_path,
        [["p", "1", "d", "slow", "acc", h, 0.5, None, ""] for h in ("best", "mean", "10")],
        [["d", "slow", "oracle", h, str(h), float("nan"), float("nan")] for h in (10, 20)],
    )
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


def _cmp(rows):
    cols = ["table", "dataset", "method", "metric", "h", "published", "ours"]
    cmp = pd.DataFrame(rows, columns=cols)
    cmp["status"] = "ok"
    cmp["difference"] = cmp["ours"] - cmp["published"]
    cmp["agreement"] = ["agrees" if abs(d) <= 0.02 else "differs" for d in cmp["difference"]]
    return cmp


def test_paper_verdict_counts_best_and_ordering_by_hand():
    from ufs.report.paper_verdicts import paper_verdict, verdict_markdown

    rows = []
    # data set a: the paper has dgufs best (0.9 > 0.8 > 0.7); ours reverses the order
    for m, pub, ours in [("dgufs", 0.9, 0.6), ("mcfs", 0.8, 0.7), ("udfs", 0.7, 0.8)]:
        rows.append(["2", "a", m, "acc", "50", pub, ours])
    # data set b: dgufs best on both sides, same order
    for m, pub, ours in [("dgufs", 0.9, 0.9), ("mcfs", 0.8, 0.8), ("udfs", 0.7, 0.7)]:
        rows.append(["2", "b", m, "acc", "50", pub, ours])
    rows.append(["2", "a", "all_features", "acc", "all", 0.95, 0.99])  # not a competitor
    v = paper_verdict(_cmp(rows), "dgufs")
    assert (v["groups"], v["best_published"], v["best_ours"]) == (2, 2, 1)
    assert v["tau"] == {"2": (0.0, 2)}  # median of τ = −1 (a) and +1 (b)
    assert v["own"]["published"] == 2 and v["own"]["differs"] == 1
    assert v["own"]["mean_difference"] == pytest.approx(-0.15)
    assert v["baselines"]["published"] == 4  # the reference is neither
    text = verdict_markdown(_cmp(rows), "dgufs")
    assert "in 2 of 2 comparisons" in text and "in 1 of them here: **partly supported**" in text
    assert "superiority of DGUFS" in text and "(§1)" in text and "docs/methods.md" in text
    assert "*Not computed here*" in verdict_markdown(None, "golfs")


def test_verdict_means_keep_counts_apart_and_skip_impossible_cells():
    """A true-positive count (0..h) is not averaged with scores in [0, 1], and a published
    cell no clustering can score adds no difference (GOLFS: TP@10 +1.19, Yale ACC 0.059)."""
    from ufs.report.paper_verdicts import paper_verdict, verdict_markdown

    rows = [
        ["1", "s", "golfs", "tp", "10", 8.0, 10.0],
        ["1", "s", "golfs", "tp", "30", 9.0, 10.0],
        ["2", "s", "golfs", "acc", "mean", 0.50, 0.60],
        ["4", "y", "golfs", "acc", "best", 0.05, 0.45],
        ["2", "s", "mcfs", "acc", "mean", 0.40, 0.40],
    ]
    cmp = _cmp(rows)
    cmp.loc[3, "agreement"] = "impossible as published"
    own = paper_verdict(cmp, "golfs")["own"]
    assert own["mean_difference"] == pytest.approx(0.10)  # the ACC cell alone
    assert own["mean_tp_difference"] == pytest.approx(1.5)
    assert own["impossible as published"] == 1 and own["computed"] == 4  # it still counts
    text = verdict_markdown(cmp, "golfs")
    assert "mean difference ours − published +0.100" in text
    assert "true-positive counts +1.50 on average" in text


def test_reproduction_report_opens_with_the_five_verdicts(tmp_path, files):
    from ufs.cli import main
    from ufs.report.compare import write_comparison

    run = tmp_path / "results" / "dgufs"
    write_comparison(
        files[0],
        [files[1]],
        run / "comparison" / "dgufs.csv",
        run / "comparison" / "dgufs.md",
        run / "comparison" / "dgufs.png",
        paper="dgufs",
    )
    out = tmp_path / "r.md"
    assert main(["reproduction", "--results", str(tmp_path / "results"), "--out", str(out)]) == 0
    text = out.read_text()
    head = text.split("## Verdicts, one per paper", 1)[1].split("\n## ", 1)[0]
    for paper in ("kmeans_ufs", "dgufs", "fsbc", "golfs", "spcafs"):
        assert f"**{paper}**" in head
    assert head.count("*Not computed here*") == 4  # dgufs has a comparison (method "m")
    assert text.index("## Verdicts") < text.index("## dgufs")


def test_our_standard_error_counts_the_restarts_behind_it(tmp_path):
    """A label-tuned row reports the held-out half of the restarts (the odd ones), so its
    standard error is std/√(R/2); a mean over the h grid combines the per-h errors."""
    cmp = _compare(
        tmp_path,
        [
            ["p", "1", "d", "m", "acc", "10", "0.500", 0.02, ""],
            ["p", "1", "d", "m", "acc", "mean", "0.500", 0.02, ""],
        ],
        [
            ["d", "m", "oracle", 10, "10", 0.53, 0.03, "held_out"],
            ["d", "m", "oracle", 20, "20", 0.55, 0.04, "held_out"],
        ],
        OUR_COLUMNS + ["tuning"],
        restarts=20,
    )
    at10, mean = cmp.iloc[0], cmp.iloc[1]
    # h = 10: ours 0.03 over the 10 held-out restarts, published 0.02 over 20
    assert at10["margin"] == pytest.approx(1.959964 * (0.03**2 / 10 + 0.02**2 / 20) ** 0.5)
    assert at10["basis"] == "standard errors over 20 restarts (ours: the 10 held out)"
    # mean over h: (0.53 + 0.55) / 2; without the restarts' scores its se is the bound of
    # full correlation, (.03 + .04) / 2 / √10 (not the independent √(.03² + .04²) / 2 / √10)
    assert mean["ours"] == pytest.approx(0.54)
    se_ours = (0.03 + 0.04) / 2 / 10**0.5
    assert mean["margin"] == pytest.approx(1.959964 * (se_ours**2 + 0.02**2 / 20) ** 0.5)


def _spcafs_tables():
    """SPCAFS against all features on three data sets, label-tuned rows held out."""
    rows = []
    for ds, (a10, a20, ref) in {"x": (0.60, 0.62, 0.50), "y": (0.51, 0.52, 0.50)}.items():
        rows += [
            [ds, "spcafs", "oracle", "10", a10, 0.02, a10, 0.02, "held_out"],
            [ds, "spcafs", "oracle", "20", a20, 0.02, a20, 0.02, "held_out"],
            [ds, "all_features", "oracle", "all", ref, 0.02, ref, 0.02, "held_out"],
        ]
    rows += [
        ["z", "spcafs", "oracle", "10", 0.30, 0.02, 0.30, 0.02, "held_out"],
        ["z", "spcafs", "oracle", "20", 0.30, 0.02, 0.30, 0.02, "held_out"],
        ["z", "all_features", "oracle", "all", 0.50, 0.02, 0.50, 0.02, "held_out"],
        ["z", "spcafs", "label_free", "10", 0.90, 0.02, 0.90, 0.02, ""],  # not label-tuned
    ]
    cols = ["dataset", "method", "protocol", "h_label", "acc_mean", "acc_std"]
    return pd.DataFrame(rows, columns=cols + ["nmi_mean", "nmi_std", "tuning"])


def test_a_figures_only_paper_is_judged_against_its_reference_by_hand():
    """SPCAFS publishes no cells; its claim (improves on all features on almost
    all data sets) is checked on our label-tuned run: mean over h beyond 1.96 SE."""
    from ufs.report.paper_verdicts import CLAIMS, versus_markdown, versus_verdict

    v = versus_verdict(_spcafs_tables(), CLAIMS["spcafs"], restarts=20)
    acc = v[v.metric == "acc"].set_index("dataset")
    # se of the mean over h (no restarts' scores in these tables: the bound of full
    # correlation, the mean of the per-h stds) .02/√10; of the reference .02/√10
    margin = 1.959964 * ((0.02**2 + 0.02**2) / 10) ** 0.5  # 0.0175
    assert acc.loc["x", "margin"] == pytest.approx(margin)
    assert acc.loc["x", "improves"] and acc.loc["x", "difference"] == pytest.approx(0.11)
    assert not acc.loc["y", "improves"] and not acc.loc["y", "worse"]  # +0.015 < 0.0175
    assert acc.loc["z", "worse"] and acc.loc["z", "ours"] == pytest.approx(0.30)
    text = versus_markdown(v, "spcafs")
    assert "`spcafs` improves on all_features ACC on 1 of 3 (worse on 1), NMI on 1 of 3" in text
    assert "on both metrics on 1 of 3: **not supported**" in text
    assert "“almost all” read as all but 1" in text


def test_the_report_judges_a_figures_only_run(tmp_path):
    from ufs.cli import main

    run = tmp_path / "results" / "spcafs"
    (run / "tables").mkdir(parents=True)
    _spcafs_tables().to_csv(run / "tables" / "all.csv", index=False)
    (run / "timing.json").write_text(
        '{"jobs": 1, "job_wall_seconds": 6, "solver_seconds": 3, "kmeans_seconds": 1}'
    )
    out = tmp_path / "r.md"
    assert main(["reproduction", "--results", str(tmp_path / "results"), "--out", str(out)]) == 0
    verdict = next(ln for ln in out.read_text().splitlines() if ln.startswith("**spcafs**"))
    assert "No published cells (figures only)" in verdict and "**not supported**" in verdict

    # archived in progress: a withheld baseline leaves this verdict final; a withheld pair
    # of the proposed method or its reference makes it provisional
    def verdict_with(pending: dict[str, str]) -> str:
        (run / "in_progress.json").write_text(json.dumps(pending))
        assert main(["reproduction", "--results", str(run.parent), "--out", str(out)]) == 0
        return next(ln for ln in out.read_text().splitlines() if ln.startswith("**spcafs**"))

    verdict = verdict_with({"x/dgufs": "in progress (0 of 1 jobs)"})
    assert "Provisional" not in verdict and "the verdict is final" in verdict
    assert "(`spcafs`, `spcafs_raw` and `all_features` on each data set)" in verdict
    for pair in ("x/spcafs", "x/all_features", "x/spcafs_raw"):
        verdict = verdict_with({"x/dgufs": "in progress (0 of 1 jobs)", pair: "in progress"})
        assert "*Provisional: the run was archived in progress (1 method × data set" in verdict


def test_a_fit_over_the_budget_is_said_not_dropped():
    from ufs.report.paper_verdicts import CLAIMS, versus_markdown, versus_verdict

    t = _spcafs_tables()
    t.loc[(t.dataset == "x") & (t.method == "spcafs") & (t.h_label == "20"), "acc_mean"] = None
    v = versus_verdict(t, CLAIMS["spcafs"], restarts=20)
    assert v.set_index(["dataset", "metric"]).loc[("x", "acc"), "no_score"]
    text = versus_markdown(v, "spcafs")
    assert "ACC on 0 of 3 (worse on 1; no score on 1: a fit over the compute budget)" in text


def test_the_cells_table_counts_each_paper(tmp_path):
    """The report's table of published cells per paper: computed, agree, differ,
    impossible, why the others have no number, and the proposed method's own cells."""
    from ufs.report.reproduction_report import cells_markdown, comparisons

    pub_dir = tmp_path / "published"
    pub_dir.mkdir()
    pub = pd.DataFrame(
        [
            ["dgufs", "2", "wine", "dgufs", "acc", "10", 0.50, 0.01, ""],  # agrees
            ["dgufs", "2", "wine", "dgufs", "acc", "20", 0.90, 0.01, ""],  # differs
            ["dgufs", "2", "wine", "mcfs", "acc", "10", 0.01, 0.01, ""],  # impossible (k = 3)
            ["dgufs", "2", "lung", "dgufs", "acc", "10", 0.70, 0.01, ""],  # network-only
        ],
        columns=["paper", "table", "dataset", "method", "metric", "h", "value", "std", "note"],
    )
    pub.to_csv(pub_dir / "dgufs.csv", index=False)
    pub.head(1).assign(paper="fsbc").to_csv(pub_dir / "fsbc.csv", index=False)
    ours = pd.DataFrame(
        [
            ["wine", "dgufs", "oracle", 10, "10", 0.50, 0.01],
            ["wine", "dgufs", "oracle", 20, "20", 0.60, 0.01],
            ["wine", "mcfs", "oracle", 10, "10", 0.55, 0.01],
        ],
        columns=["dataset", "method", "protocol", "h", "h_label", "acc_mean", "acc_std"],
    )
    ours.to_csv(tmp_path / "wine.csv", index=False)
    cmp = compare_published(pub_dir / "dgufs.csv", [tmp_path / "wine.csv"])
    (tmp_path / "runs" / "dgufs" / "comparison").mkdir(parents=True)
    cmp.to_csv(tmp_path / "runs" / "dgufs" / "comparison" / "dgufs.csv", index=False)
    rows = cells_markdown(comparisons(tmp_path / "runs"), published_dir=pub_dir)
    dgufs = next(r for r in rows if r.startswith("| dgufs |"))
    assert dgufs == "| dgufs | 4 | 3 | 1 | 1 | 1 | 1 data network-only | 2 of 3: 1, 1 |"
    assert "| fsbc | 1 | 0 | — | — | — | 1 (no run archived) | — |" in rows
    assert "| spcafs | none (figures only) | — | — | — | — | — | — |" in rows


def test_reproduction_from_a_missing_or_damaged_archive_is_one_line(tmp_path, capsys):
    from ufs.cli import main

    out = tmp_path / "r.md"
    bad = tmp_path / "bad.tar.xz"
    bad.write_text("not an archive")
    for archive in (tmp_path / "nope.tar.xz", bad):
        assert main(["reproduction", "--archives", str(archive), "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err and "is not a readable .tar.xz archive" in err
        assert err.count("\n") == 1 and not out.exists()


def test_reproduction_scope_says_when_resumed_fits_outlast_the_jobs(tmp_path):
    """A fit job resumed from its checkpoint: Snakemake measured only its last attempt, so
    the fits, timed when they were made, add up to more than the job time; the scope line
    says so instead of printing the two numbers as if one held the other."""
    from ufs.report.reproduction_report import run_scope

    run = tmp_path / "run"
    run.mkdir()
    timing = {"jobs": 2, "job_wall_seconds": 60, "solver_seconds": 30, "kmeans_seconds": 6}
    (run / "timing.json").write_text(json.dumps(timing))
    assert "last attempt" not in run_scope(run)[0]
    (run / "timing.json").write_text(json.dumps({**timing, "solver_seconds": 600}))
    line = run_scope(run)[0]
    assert "1.0 min of job time as Snakemake measured each job's last attempt" in line
    assert "(10.0 min in solvers, 0.1 min in k-means)" in line


def test_summary_overhead_is_not_a_negative_share():
    from ufs.report.aggregate import overhead_text

    assert overhead_text({"outside_share": 0.254}).endswith("tables): 25%.")
    cpu = overhead_text({"outside_share": 0.254, "cpu_outside_share": 0.096})
    assert "these jobs' CPU" in cpu and cpu.endswith("tables): 10%.")
    text = overhead_text({"outside_share": -0.4})
    assert "not measured" in text and "last attempt" in text and "%" not in text
