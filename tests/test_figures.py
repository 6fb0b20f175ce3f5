"""Per-data-set figures (ufs.bench.figures): styles, diverged curves, axes, legends."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ufs.bench import aggregate, figures
from ufs.fileio import write_json
from ufs.registry import available_methods

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")


def _style_key(name):
    st = figures.method_style(name)
    return (matplotlib.colors.to_hex(st["color"]), st["marker"], st["ls"])


def test_styles_unique_and_grouped():
    names = available_methods()
    keys = [_style_key(m) for m in names]
    assert len(set(keys)) == len(keys), "two registered methods share colour+marker+linestyle"
    for group in ("seed", "baseline", "reference"):  # drawn together: colours must differ
        colours = [_style_key(m)[0] for m in names if figures.method_group(m) == group]
        assert len(set(colours)) == len(colours), group
    for m in names:  # "x" marks a diverged fit; a hollow marker needs a fillable one
        assert figures.method_style(m)["marker"] not in ("x", "X", "+", "|", "_", ".")
    listed = {*figures.SEED_METHODS, *figures.BASELINE_METHODS, *figures.REFERENCE_METHODS}
    missing = sorted(set(names) - listed)
    assert not missing, f"add {missing} to a group and a style in ufs/bench/figures.py"
    assert {figures.method_group(m) for m in figures.SEED_METHODS} == {"seed"}
    assert figures.method_group("all_features") == "reference"
    assert figures.method_group("some_new_method") == "baseline"


def test_styles_stable():
    first = {m: figures.method_style(m) for m in [*available_methods(), "some_new_method"]}
    figures.method_style.cache_clear()
    again = {m: figures.method_style(m) for m in reversed(list(first))}
    assert first == again
    assert figures.method_style("kmeans_ufs") == {"color": "#1f77b4", "marker": "o", "ls": "-"}


@pytest.mark.parametrize(
    ("curve", "kept", "cut"),
    [
        ([3.0, 2.0, 1.5], [3.0, 2.0, 1.5], False),
        ([3.0, 2.0, 1.0, float("inf"), 0.5], [3.0, 2.0, 1.0], True),
        ([3.0, 2.0, None, 1.0], [3.0, 2.0], True),  # JSON: non-finite stored as None
        ([120.0, 80.0, -2e142, 1.0], [120.0, 80.0], True),  # overflow that stayed finite
        ([1e15, 1e8, 1e4], [1e15, 1e8, 1e4], False),  # a large first value is the scale
        ([float("nan"), 1.0], [], True),
    ],
)
def test_cut_curve(curve, kept, cut):
    y, was_cut = figures.cut_curve(curve)
    assert was_cut is cut
    np.testing.assert_array_equal(y, kept)


def test_relative_gap():
    np.testing.assert_allclose(figures.relative_gap([-10.0, -12.0, -11.0]), [1 / 6, 0, 1 / 12])
    np.testing.assert_allclose(figures.relative_gap([0.0, 0.0]), [0.0, 0.0])


# -- a tiny synthetic run -------------------------------------------------------------------

HS = (5, 10, 40)


def _row(h, acc, status="ok", curve=None, seconds=0.1):
    per = {m: [acc, acc - 0.02, acc + 0.02] for m in ("acc", "nmi", "ari", "ne")}
    return {
        "h": h,
        "h_label": str(h),
        "per_restart": per,
        "fit_seconds": seconds,
        "fit_info": {},
        "fit_warnings": [],
        "fit_status": status,
        "objective_curve": curve,
        "selected": [0],
    }


def _record(method, kind, rows, *, pid="p", label_free=True, in_grid=True):
    return {
        "dataset": "toy",
        "dataset_base": "toy",
        "seed": 0,
        "method": method,
        "pid": pid,
        "hkey": "x",
        "params": {},
        "label_free": label_free,
        "in_grid": in_grid,
        "kind": kind,
        "kmeans_seconds": 0.5,
        "fit_seconds_total": 0.3,
        "code_version": "x",
        "results": rows,
    }


DIVERGED = [10.0, 6.0, 4.0, -2e142, None]  # dgufs at h = 10: overflow, then non-finite


@pytest.fixture()
def run(tmp_path):
    """kmeans_ufs and dgufs (seed, subset), ndfs (baseline, ranking, not converged),
    random (reference, ranking), all_features (reference, full)."""
    recs = [
        _record(
            "kmeans_ufs",
            "subset",
            [_row(h, 0.5 + h / 100, curve=[-1.0, -3.0, -2.5, -2.9], seconds=h / 10) for h in HS],
        ),
        _record(
            "dgufs",
            "subset",
            [
                _row(h, 0.3, "diverged" if h == 10 else "ok", DIVERGED if h == 10 else [2.0, 1.0])
                for h in HS
            ],
        ),
        _record(
            "ndfs",
            "ranking",
            [_row(h, 0.4 + h / 200, "not_converged", [1e12, 1e6, 1e2, 50.0]) for h in HS],
        ),
        _record("random", "ranking", [_row(h, 0.2, seconds=1e-4) for h in HS]),
        _record(
            "all_features",
            "full",
            [{**_row(64, 0.6, seconds=0.01), "h_label": "all"}],
        ),
    ]
    path = tmp_path / "ev.json"
    write_json(path, {"dataset": "toy", "evaluations": recs})
    df = aggregate.collect([path], "toy")
    return df, aggregate.select_protocols(df)


def _capture():
    figs = {}

    def save(fig, path, dpi):
        fig.canvas.draw()  # resolve ticks and offset texts
        figs[Path(path).name] = fig
        return Path(path)

    return figs, save


def test_metric_vs_h_layout(run, tmp_path):
    df, sel = run
    figs, save = _capture()
    figures.plot_metric_vs_h(sel, "toy", "acc", tmp_path / "acc_vs_h.png", save)
    fig = figs["acc_vs_h.png"]
    assert len(fig.axes) == 4  # (seed methods, baselines) × (label-tuned, label-free)
    labels = [
        t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()
    ]
    assert set(labels) >= set(df["method"])
    # the references are repeated in every row; seed methods and baselines are not mixed
    assert labels.count("random") == 2 and labels.count("kmeans_ufs") == 1
    assert "ndfs" not in labels[: labels.index("random")]
    marks = [t.get_text() for lg in fig.legends for t in lg.get_texts()]
    assert "† not converged" in marks and "‡ diverged" in marks
    assert all(ax.get_xscale() == "log" for ax in fig.axes)  # h from 5 to 40
    assert sorted(fig.axes[0].get_xticks()) == list(HS)
    fig.clf()


def test_convergence_cut_marked_symlog_integer_ticks(run, tmp_path):
    df, _ = run
    figs, save = _capture()
    figures.plot_convergence(df, "toy", tmp_path / "convergence.png", save)
    fig = figs["convergence.png"]
    panels = {ax.get_title(): ax for ax in fig.axes if ax.get_title()}
    assert set(panels) == {"kmeans_ufs", "dgufs‡", "ndfs†"}  # seed methods first
    for ax in panels.values():
        assert ax.get_yscale() == "symlog"
        ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
        assert ticks and all(float(t).is_integer() for t in ticks)
        assert ax.yaxis.get_offset_text().get_text() == ""
        assert ax.xaxis.get_offset_text().get_text() == ""
    ax = panels["dgufs‡"]
    curves = [ln for ln in ax.get_lines() if ln.get_linestyle() != "None"]
    crosses = [ln for ln in ax.get_lines() if ln.get_marker() == "x"]
    lengths = sorted(len(ln.get_xdata()) for ln in curves)
    assert lengths == [2, 2, 3]  # h = 10 stops at the last finite value before −2·10¹⁴²
    (cross,) = crosses
    assert list(cross.get_xdata()) == [3]
    long = next(ln for ln in curves if len(ln.get_xdata()) == 3)
    assert cross.get_ydata()[0] == long.get_ydata()[-1]
    assert np.all(np.isfinite(long.get_ydata())) and np.max(np.abs(long.get_ydata())) < 10
    texts = [t.get_text() for lg in fig.legends for t in lg.get_texts()]
    assert "‡ diverged: cut at the last finite value" in texts
    assert "one fit for all h (ranking)" in texts and "h = 40" in texts
    fig.clf()


def test_runtime_says_graph_time_excluded(run, tmp_path):
    df, _ = run
    figs, save = _capture()
    figures.plot_runtime(df, "toy", tmp_path / "runtime.png", save)
    fig = figs["runtime.png"]
    (ax,) = fig.axes
    assert ax.get_xscale() == "log"
    assert "kNN-graph construction NOT included" in ax.get_title()
    names = [t.get_text() for t in ax.get_yticklabels()]
    assert set(names) == set(df["method"])
    assert names[0] == "random" and names[-1] == "kmeans_ufs"  # sorted by mean fit time
    fig.clf()


def test_plot_dataset_writes_pngs(run, tmp_path):
    df, sel = run
    written = aggregate.plot_dataset(df, sel, "toy", tmp_path)
    assert [p.name for p in written] == [
        "acc_vs_h.png",
        "nmi_vs_h.png",
        "convergence.png",
        "runtime.png",
    ]
    for p in written:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
