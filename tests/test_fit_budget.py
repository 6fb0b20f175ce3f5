"""The per-fit compute budget (config ``jobs.fit_budget_seconds``, ufs.pipeline.budget).

A fit over its CPU-time budget, or refused for memory, is recorded as ``budget_exceeded``:
no arrays, NaN metrics, ``budget exceeded §`` in the tables, scored as the expected random subset at its (data set, h) in every test.
"""

from __future__ import annotations

import json
import signal
import threading
import time
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest

from ufs.fileio import write_json, write_npz
from ufs.pipeline.budget import FitBudgetExceeded, budget_reason, fit_budget
from ufs.pipeline.status import FIT_STATUSES, STATUS_MARK, fit_status, worst
from ufs.pipeline.steps import SKIPPED_REASON, evaluate, fit, standardize
from ufs.registry import get_method
from ufs.report import aggregate, rank_report
from ufs.stats import ranking
from ufs.validation import check_dense_memory

matplotlib.use("Agg")

TINY = 1e-3  # CPU seconds: every fit below takes far longer
#: slow by construction (a fixed, large number of Python-level iterations, no early stop)
SLOW_RANKING = {"max_iter": 2000, "tol": 1e-300}  # eufs, ~0.2 CPU-s
SLOW_SUBSET = {"max_iter": 1000, "tol": 1e-300}  # dgufs, ~0.25 CPU-s per h


def _timer_state():
    return signal.getitimer(signal.ITIMER_PROF), signal.getsignal(signal.SIGPROF)


# -- the context manager ----------------------------------------------------------------
def test_budget_stops_a_busy_loop_and_cleans_up():
    before = _timer_state()
    t0 = time.process_time()
    with pytest.raises(FitBudgetExceeded, match=r"over 0.2 CPU-s"):
        with fit_budget(0.2):
            while True:
                pass
    used = time.process_time() - t0
    # ITIMER_PROF is charged per scheduler tick, process_time() precisely: on a loaded
    # machine the timer has fired at 0.182 s of process_time() for a 0.2 s budget
    assert 0.15 <= used < 1.0
    assert _timer_state() == ((0.0, 0.0), before[1])
    assert not issubclass(FitBudgetExceeded, Exception)  # `except Exception` cannot swallow it


def test_budget_off_in_a_thread_or_without_seconds():
    before = _timer_state()
    for seconds in (None, 0):
        with fit_budget(seconds) as b:
            # ~50 ms: once a test in this process has armed a CPU timer, the kernel may
            # read process time per scheduler tick (4-10 ms); 2 ms of work then read as 0.0
            sum(range(5_000_000))
        assert b.cpu_seconds > 0
    done = []

    def work():
        with fit_budget(1e-3):  # not the main thread: no signal handler, no budget
            sum(range(2_000_000))
        done.append(True)

    th = threading.Thread(target=work)
    th.start()
    th.join()
    assert done == [True]
    assert _timer_state() == before


def test_budget_restores_an_outer_timer():
    before = _timer_state()
    with fit_budget(30):
        with fit_budget(20):
            pass
        delay, interval = signal.getitimer(signal.ITIMER_PROF)
        assert 29 < delay <= 30.1 and interval == 30  # (rounded up to clock ticks)
    assert _timer_state() == before


def test_budget_reason_and_status():
    assert budget_reason(FitBudgetExceeded(600)) == "time: over 600 CPU-s"
    assert budget_reason(MemoryError("12 GiB needed")) == "memory: 12 GiB needed"
    assert FIT_STATUSES[0] == "budget_exceeded" and STATUS_MARK["budget_exceeded"] == "§"
    assert worst(["ok", "diverged", "budget_exceeded"]) == "budget_exceeded"
    assert fit_status({"budget_exceeded": True, "converged": True}) == "budget_exceeded"


# -- fit and evaluate ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    return three_class_data(tmp_path_factory.mktemp("budget"))


def three_class_data(d: Path) -> Path:
    """Three classes of 30 samples, 20 features (3 informative) in ``d / "data.npz"``: the
    format of ``steps.standardize`` (X, X_raw, y, true_features, has_truth, constant)."""
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(3), 30)
    X = rng.normal(size=(90, 20))
    X[:, :3] += 3 * y[:, None]
    write_npz(d / "raw.npz", X=X, y=y, true_features=np.arange(3), has_truth=True)
    standardize(d / "raw.npz", d / "data.npz", d / "summary.json")
    return d / "data.npz"


def _task(method, pid, params, hs):
    return {"method": method, "pid": pid, "params": params, "hkey": "x", "hs": hs}


def _evaluate(data, d, tasks, name, hs=(2, 3, 4)):
    meta = {
        "dataset": "toy",
        "dataset_base": "toy",
        "seed": 0,
        "settings": {
            f"{t['method']}|{t['pid']}": {"label_free": True, "in_grid": True} for t in tasks
        },
    }
    out = d / f"{name}_ev.json"
    evaluate(data, d / f"{name}.npz", d / f"{name}.json", out, meta=meta, hs=list(hs), restarts=2)
    return out


def test_quick_fits_are_unchanged_under_a_budget(data, tmp_path):
    tasks = [
        _task("ndfs", "n", {}, [None]),
        _task("kmeans_ufs", "k", {}, [2, 3]),
        _task("max_variance", "m", {}, [None]),
    ]
    fit(data, tasks, tmp_path / "a.npz", tmp_path / "a.json")
    fit(data, tasks, tmp_path / "b.npz", tmp_path / "b.json", budget_seconds=600)
    with np.load(tmp_path / "a.npz") as a, np.load(tmp_path / "b.npz") as b:
        assert sorted(a.files) == sorted(b.files) and len(a.files) > 5
        for k in a.files:
            np.testing.assert_array_equal(a[k], b[k])
    info = json.loads((tmp_path / "b.json").read_text())
    assert not any(f.get("budget_exceeded") for t in info["tasks"] for f in t["fits"].values())


def test_fits_over_the_budget_are_recorded_and_skipped(data, tmp_path, capsys):
    tasks = [
        _task("eufs", "e", SLOW_RANKING, [None]),
        _task("dgufs", "g", SLOW_SUBSET, [2, 3, 4]),
        _task("max_variance", "m", {}, [None]),
    ]
    fit(data, tasks, tmp_path / "f.npz", tmp_path / "f.json", budget_seconds=TINY)
    head, *log = capsys.readouterr().err.splitlines()
    assert "task(s), 5 fit(s) of" in head  # the job's first line, then one line per fit
    assert len(log) == 5
    assert "status=budget_exceeded (time: over 0.001 CPU-s)" in log[0]
    assert "h=3" in log[2] and f"status=budget_exceeded ({SKIPPED_REASON}" in log[2]
    assert log[4].endswith("status=ok")
    with np.load(tmp_path / "f.npz") as f:  # no arrays of a fit over the budget
        assert f.files and all(k.startswith("max_variance|m|rank|") for k in f.files)
    recs = {t["method"]: t for t in json.loads((tmp_path / "f.json").read_text())["tasks"]}
    rank = recs["eufs"]["fits"]["rank"]
    assert rank["budget_exceeded"] and rank["budget_reason"] == "time: over 0.001 CPU-s"
    assert rank["fit_info"] == {"budget_exceeded": True} and 0 < rank["fit_seconds"] < 0.2
    g = recs["dgufs"]["fits"]
    assert g["h2"]["budget_reason"] == "time: over 0.001 CPU-s"
    for label in ("h3", "h4"):
        assert g[label]["budget_reason"].startswith(SKIPPED_REASON)
        assert g[label]["fit_seconds"] == 0.0

    ev = _evaluate(data, tmp_path, tasks, "f")
    evs = {e["method"]: e for e in json.loads(ev.read_text())["evaluations"]}
    rows = evs["eufs"]["results"]
    assert [r["h"] for r in rows] == [2, 3, 4]  # the one ranking fit serves every h
    ok_row = evs["max_variance"]["results"][0]
    for r in rows + evs["dgufs"]["results"]:
        assert r["fit_status"] == "budget_exceeded" and r["selected"] == []
        assert set(r) == set(ok_row) | {"budget_reason"}  # the keys rows normally have
        assert all(r[f"{m}_{s}"] is None for m in ("acc", "nmi", "ari") for s in ("mean", "std"))
        assert r["tp"] is None and r["cp"] is None
    assert ok_row["fit_status"] == "ok" and ok_row["acc_mean"] > 0

    # aggregation: NaN numbers, "budget exceeded §" cells, counts and the warning
    df = aggregate.collect([ev], "toy")
    sel = aggregate.select_protocols(df)
    bad = sel[sel["method"].isin(["eufs", "dgufs"])]
    assert set(bad["status"]) == {"budget_exceeded"} and bad["acc_mean"].isna().all()
    assert (bad["n_budget_exceeded"] == 1).all()
    md = aggregate.markdown_tables(sel, "toy")
    lines = [ln for ln in md.splitlines() if ln.startswith("| eufs |")]
    # ACC and NMI: 3 h + best over h; TP and CP (true features known): 3 h
    assert [ln.count("budget exceeded §") for ln in lines] == [4, 4, 3, 3] * 2
    assert "| _max_variance_ (reference) |" in md and aggregate.STATUS_LEGEND in md
    counts = aggregate.failure_counts(aggregate.fit_records([ev]))
    c = counts.set_index("method")
    assert c.loc["dgufs", "budget_exceeded"] == 3 and c.loc["eufs", "budget_exceeded"] == 1
    fmd = aggregate.failure_markdown(counts)
    assert "4 exceeded the compute budget (§)" in fmd and "§ budget exceeded" in fmd
    warning = aggregate.fit_status_warning(aggregate.failure_report(counts))
    assert "4 exceeded the compute budget (§)" in warning
    assert "3 budget exceeded of 3 fits" in warning


def test_best_over_h_ignores_budget_rows(tmp_path):
    def row(h, acc, status="ok"):
        per = {m: [] if acc is None else [acc, acc] for m in ("acc", "nmi", "ari", "ne")}
        return {
            "h": h,
            "h_label": str(h),
            "per_restart": per,
            "fit_seconds": 0.1,
            "fit_info": {},
            "fit_warnings": [],
            "fit_status": status,
            "objective_curve": None,
            "selected": [],
        }

    rec = {
        "dataset": "toy",
        "dataset_base": "toy",
        "seed": 0,
        "method": "dgufs",
        "pid": "g",
        "hkey": "x",
        "params": {},
        "label_free": True,
        "in_grid": True,
        "kind": "subset",
        "kmeans_seconds": 0.1,
        "fit_seconds_total": 0.3,
        "code_version": "x",
        "results": [row(2, 0.5), row(3, 0.7), row(4, None, "budget_exceeded")],
    }
    write_json(tmp_path / "ev.json", {"dataset": "toy", "evaluations": [rec]})
    sel = aggregate.select_protocols(aggregate.collect([tmp_path / "ev.json"], "toy"))
    md = aggregate.markdown_tables(sel, "toy")
    free, tuned = [ln for ln in md.splitlines() if ln.startswith("| dgufs |")][::2][:2]
    cells = [c.strip() for c in free.split("|")[2:-1]]
    # label-free (first): the only competitor is best in every column; its mean over h
    # covers the h with a number and is marked § for the one without
    assert cells == ["**50.0 ± 0.0**", "**70.0 ± 0.0**", "budget exceeded §", "**60.0§**"]
    cells = [c.strip() for c in tuned.split("|")[2:-1]]
    assert cells[-1] == "**70.0 ± 0.0 (h=3)**"  # label-tuned: the best over h too


def test_memory_refusal_is_a_memory_budget_exceeded(data, tmp_path, monkeypatch, capsys):
    def refuse(self, X, *args, **kwargs):
        check_dense_memory(3, 50_000, "FAKE", cap_bytes=1024**3)

    monkeypatch.setattr(get_method("kmeans_ufs").cls, "fit", refuse)
    tasks = [_task("kmeans_ufs", "k", {}, [2, 3]), _task("max_variance", "m", {}, [None])]
    fit(data, tasks, tmp_path / "m.npz", tmp_path / "m.json", budget_seconds=600)
    fits = json.loads((tmp_path / "m.json").read_text())["tasks"][0]["fits"]
    for label in ("h2", "h3"):  # a memory refusal does not skip the other h: each is tried
        assert fits[label]["budget_exceeded"]
        reason = fits[label]["budget_reason"]
        assert reason.startswith("memory: FAKE holds 3 dense n × n float64 arrays")
        assert "GiB, above the 1.00 GiB cap" in reason
    assert "status=budget_exceeded (memory: FAKE" in capsys.readouterr().err
    ev = _evaluate(data, tmp_path, tasks, "m")
    rows = json.loads(ev.read_text())["evaluations"][0]["results"]
    assert {r["fit_status"] for r in rows} == {"budget_exceeded"}
    assert rows[0]["budget_reason"].startswith("memory: ")


def test_figures_draw_budget_exceeded(tmp_path, monkeypatch):
    """A method whose fits all went over the budget (dgufs) and one over it at one h:
    no crash, a § legend in the h figures, a labelled bar in the run-time figure."""

    def row(h, acc, status="ok", seconds=0.1):
        per = {m: [] if acc is None else [acc, acc - 0.01] for m in ("acc", "nmi", "ari", "ne")}
        return {
            "h": h,
            "h_label": str(h),
            "per_restart": per,
            "fit_seconds": seconds,
            "fit_info": {},
            "fit_warnings": [],
            "fit_status": status,
            "objective_curve": None if acc is None else [3.0, 2.0, 1.5],
            "selected": [],
        }

    def rec(method, kind, rows):
        return {
            "dataset": "toy",
            "dataset_base": "toy",
            "seed": 0,
            "method": method,
            "pid": "p",
            "hkey": "x",
            "params": {},
            "label_free": True,
            "in_grid": True,
            "kind": kind,
            "kmeans_seconds": 0.1,
            "fit_seconds_total": 0.3,
            "code_version": "x",
            "results": rows,
        }

    recs = [
        rec(
            "dgufs",
            "subset",
            [row(2, None, "budget_exceeded", 2.0), row(4, None, "budget_exceeded", 0.0)],
        ),
        rec("kmeans_ufs", "subset", [row(2, 0.6), row(4, None, "budget_exceeded", 3.0)]),
        rec("max_variance", "ranking", [row(2, 0.5), row(4, 0.55)]),
        rec("all_features", "full", [{**row(20, None, "budget_exceeded"), "h_label": "all"}]),
    ]
    write_json(tmp_path / "ev.json", {"dataset": "toy", "evaluations": recs})
    seen = {}

    def capture(fig, path, dpi):
        fig.canvas.draw()
        texts = [t.get_text() for t in fig.findobj(matplotlib.text.Text)]
        seen[Path(path).name] = texts
        return Path(path)

    monkeypatch.setattr(aggregate, "_save_figure", capture)
    df = aggregate.collect([tmp_path / "ev.json"], "toy")
    aggregate.plot_dataset(df, aggregate.select_protocols(df), "toy", tmp_path)
    assert "§ budget exceeded (no value)" in seen["acc_vs_h.png"]
    assert seen["acc_vs_h.png"].count("§") >= 3  # dgufs at h = 2, 4 and kmeans_ufs at 4
    runtime = seen["runtime.png"]
    assert "§ budget exceeded (2 of 2 fits)" in runtime  # dgufs
    assert "§ budget exceeded (1 of 2 fits)" in runtime  # kmeans_ufs
    assert "§ over the compute budget: time until stopped" in runtime


# -- ranks across data sets -------------------------------------------------------------
def _tables(scores: dict[str, dict[str, float | None]], hs=("5", "10", "20")) -> pd.DataFrame:
    """Per-data-set table rows (``tests/test_ranking.py``); a ``None`` score is a method
    over the budget there."""
    from .test_ranking import _tables as tables

    filled = {
        d: {m: np.nan if v is None else v for m, v in per.items()} for d, per in scores.items()
    }
    over = {
        (d, m): "budget_exceeded" for d, per in scores.items() for m, v in per.items() if v is None
    }
    return tables(filled, hs=hs, status=over)


def test_a_method_over_the_budget_scores_as_random_in_every_test(tmp_path, monkeypatch):
    """One missing-data rule, per (data set, h): a fit over the budget scores the
    expected random subset of its cell (here at h = 5 of d0 only), in the Friedman ranks,
    the all-pairs Wilcoxon tests and the tests against the references alike; no data set
    is dropped and the other h of d0 keep the method's own scores."""
    from ufs.report import answer
    from ufs.stats import paired, references, views

    s = {
        f"d{i}": {"a": 0.9 - 0.01 * i, "b": 0.8, "c": 0.7, "slow": 0.95, "random": 0.5}
        for i in range(6)
    }
    t = _tables(s)
    cell = (t["dataset"] == "d0") & (t["method"] == "slow") & (t["h_label"] == "5")
    t.loc[cell, ["acc_mean", "nmi_mean"]] = np.nan
    t.loc[cell, "status"] = "budget_exceeded"
    r = ranking.rank_methods(t, "label_free", "acc")
    assert r.n == 6 and r.k == 4 and not r.dropped_datasets and not r.dropped_methods
    assert r.imputed == {"d0": ["slow"]}
    imputed = (0.5 + 0.95 + 0.95) / 3  # random at h = 5, its own scores at 10 and 20
    assert r.scores.loc["d0", "slow"] == pytest.approx(imputed)
    assert r.scores.loc["d1", "slow"] == pytest.approx(0.95)
    assert r.method_status("slow") == "budget_exceeded"
    over = rank_report.overview_markdown([r])
    assert "on d0, slow exceeded the budget (§) at some h, scored there as the expected" in over
    # the pairwise tests see the same paired scores as the Friedman ranks
    pairs = answer.pairwise_results([r])[("label_free", "acc")]
    row = pairs[(pairs["a"] == "slow") & (pairs["b"] == "a")].iloc[0]
    diff = (r.scores["slow"] - r.scores["a"]).to_numpy()
    assert row["p"] == pytest.approx(paired.signed_rank(diff)[1])
    assert row["wins"] == int((diff > 0).sum())
    # and so do the reference tests, the Bayesian one included (its inputs captured)
    seen: dict[str, list] = {}

    def capture(x, y, **kw):
        seen.setdefault(str(x.name), list(x))
        return (0.0, 0.0, 1.0)

    monkeypatch.setattr(paired, "bayes_signed_rank", capture)
    res = references.reference_tests(t, "label_free", "acc", bayes=True, cells=r.cells.index)
    assert res.loc["slow", "rand_n"] == 6
    rdiff = (r.scores["slow"] - 0.5).to_numpy()
    assert res.loc["slow", "rand_W"] == pytest.approx(paired.signed_rank(rdiff)[0])
    assert seen["slow"] == pytest.approx(list(r.scores["slow"]))
    # complete cases instead (the sensitivity view): d0's h = 5 is left out for everyone
    cc = views.View(
        "cc", "complete cases", one_per_family=False, simulations=True, impute_budget=False
    )
    r2 = ranking.rank_methods(t, "label_free", "acc", view=cc)
    assert r2.n == 6 and r2.partial_support == {"d0": ["slow"]} and not r2.imputed
    assert r2.scores.loc["d0", "slow"] == pytest.approx(0.95)
    assert r2.scores.loc["d0", "a"] == pytest.approx(0.9)

    import matplotlib.pyplot as plt

    texts, close = [], plt.close

    def grab(fig=None):
        if fig is not None and hasattr(fig, "findobj"):
            texts.extend(t.get_text() for t in fig.findobj(matplotlib.text.Text))
        close(fig)

    monkeypatch.setattr(plt, "close", grab)
    rank_report.plot_cd(r, tmp_path / "cd.png")
    assert any(t.startswith("slow§ (") for t in texts)


def test_without_a_random_reference_a_budget_cell_is_missing_like_any_other():
    """Nothing to impute with: complete cases (the data set is dropped and listed)."""
    s = {f"d{i}": {"a": 0.9, "b": 0.8, "x": 0.7} for i in range(3)}
    s["d0"].update(x=None)
    r = ranking.rank_methods(_tables(s), "label_free", "acc")
    assert r.dropped_datasets == {"d0": ["x"]} and list(r.scores.index) == ["d1", "d2"]


def test_other_missing_scores_keep_the_drop_rule():
    t = _tables(
        {
            "d0": {"a": 0.9, "b": 0.8, "c": 0.85},
            "d1": {"a": 0.9, "b": 0.7, "c": 0.8},
            "d2": {"a": 0.6, "b": 0.7, "c": 0.8},
        }
    )
    t = t[~((t["dataset"] == "d1") & (t["method"] == "b"))]  # no rows: not a budget case
    r = ranking.rank_methods(t, "label_free", "acc")
    assert r.dropped_datasets == {"d1": ["b"]} and list(r.scores.index) == ["d0", "d2"]
    # fewer than two data sets would remain: the method is dropped instead
    s = {f"d{i}": {"a": 0.9 - i / 10, "b": 0.5, "never": None} for i in range(3)}
    r = ranking.rank_methods(_tables(s), "label_free", "acc")
    assert r.dropped_methods == {"never": ["d0", "d1", "d2"]} and r.n == 3
