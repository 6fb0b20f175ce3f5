"""Ties are shown as ties: methods with equal rank sums share a place, marked ``=`` in the
rank tables, named together in the CD diagram and its caption and in a placement report;
a best or runner-up shared by equal scores names every method that has it."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ufs.report import benchmark_report, latex, placement, rank_report
from ufs.stats import ranking
from ufs.stats.ranking import RankResult


def _result(avg: dict[str, float], protocol: str = "label_free", metric: str = "nmi"):
    """A comparison with these average ranks (one data set: only the ranks are read)."""
    methods = list(avg)
    scores = pd.DataFrame([[0.5] * len(methods)], index=["d"], columns=methods)
    status = pd.DataFrame([["ok"] * len(methods)], index=["d"], columns=methods)
    return RankResult(
        protocol,
        metric,
        scores,
        scores.rank(axis=1),
        pd.Series(avg, dtype=float).sort_values(kind="stable"),
        status,
        statistic=30.0,
        pvalue=1e-4,
        iman_davenport=9.0,
        iman_davenport_p=1e-5,
        cd=1.0,
    )


#: the label-free NMI of the archived benchmark: mcfs and urafs share the first place
TIE = {"mcfs": 130 / 24, "urafs": 130 / 24, "fsasl": 139 / 24}


def test_tied_says_which_places_are_shared():
    t = ranking.tied(pd.Series({"a": 1.5, "b": 1.5, "c": 3.0, "d": 4.0, "e": 4.0}))
    assert t.to_dict() == {"a": True, "b": True, "c": False, "d": True, "e": True}
    assert ranking.top_methods(pd.Series(TIE)) == ["mcfs", "urafs"]


def test_the_rank_tables_mark_a_shared_average_rank():
    r = _result(TIE)
    rows = {row[0]: row[1] for row in benchmark_report._rank_rows([r])}
    assert rows == {"`mcfs`": "5.42=", "`urafs`": "5.42=", "`fsasl`": "5.79"}
    overview = rank_report.overview_markdown([r])
    assert "| mcfs | **5.42=** |" in overview and "| urafs | **5.42=** |" in overview
    assert "| fsasl | <u>5.79</u> |" in overview and rank_report.TIE_LEGEND in overview
    assert latex._rank_cell(r, "urafs").text == "5.42="
    assert latex._rank_cell(r, "fsasl").text == "5.79"


def test_the_cd_diagram_and_its_caption_show_the_tie():
    r = _result(TIE)
    caption = rank_report.cd_caption(r)
    assert "Tied average ranks (=): mcfs = urafs (5.42)" in caption
    assert "Tied" not in rank_report.cd_caption(_result({"a": 1.0, "b": 2.0}))
    fig = rank_report.cd_figure(r)
    labels = {t.get_text() for ax in fig.axes for t in ax.texts}
    assert {"mcfs (5.42=)", "urafs (5.42=)", "fsasl (5.79)"} <= labels


def test_a_placement_names_the_methods_sharing_its_place():
    r = _result(TIE)
    assert placement.place_text("urafs", r) == "place 1= of 3, tied with `mcfs`"
    assert placement.place_text("mcfs", r) == "place 1= of 3, tied with `urafs`"
    assert placement.place_text("fsasl", r) == "place 3 of 3"


def test_best_and_runner_up_name_every_method_with_the_same_score():
    rows = [
        ("d", "a", 0.70),
        ("d", "b", 0.60),
        ("d", "c", 0.60),
        ("d", "e", 0.50),
        ("d", "all_features", 0.65),
    ]
    tables = pd.DataFrame(
        [
            {"dataset": d, "protocol": "label_free", "method": m, "h_label": h}
            | {
                "acc_mean": s,
                "nmi_mean": s,
                "status": "ok",
                "role": "reference" if m == "all_features" else "",
            }
            for d, m, s in rows
            for h in ("10", "20", "30")
        ]
    )
    tables["role"] = tables["role"].replace("", "method")
    run = benchmark_report.Run(Path("."), {}, tables, ["d"], [], pd.DataFrame(), pd.DataFrame(), {})
    best = benchmark_report.best_per_dataset(run, "label_free", "acc").iloc[0]
    assert best["best_ties"] == ["a"] and best["runner_up_ties"] == ["b", "c"]
    assert benchmark_report._named_or_tied(best, "best") == ["`a`", "70.0"]
    assert benchmark_report._named_or_tied(best, "runner_up") == ["`b` = `c`", "60.0"]
    section = "\n".join(benchmark_report._best_section(run))
    assert "| `a` | 70.0 | `b` = `c` | 60.0 | 65.0 |" in section


def test_the_largest_move_between_input_spaces_names_every_method_with_it():
    """`a` and `b` swap the first and last places between z-scored and raw inputs: both
    move by 2 ranks, and both are named."""
    from ufs.stats.input_scaling import scaling_markdown

    table = {"standardized": {"a": 0.9, "b": 0.5, "c": 0.7}, "raw": {"a": 0.4, "b": 0.8, "c": 0.6}}
    rows = [
        {"dataset": d, "protocol": "label_free", "method": m, "h_label": h, "acc_mean": v}
        | {"input_space": space, "source": "own" if space == "standardized" else "raw"}
        for d in ("d1", "d2")
        for space, per in table.items()
        for m, v in per.items()
        for h in ("5", "10", "20")
    ]
    md = scaling_markdown(pd.DataFrame(rows))
    assert "raw: τ = -1.00, largest move 2.00 ranks (`a` = `b`)" in md
