"""Per-data-set figures (ufs.report.figures): styles, diverged curves, axes, legends."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ufs.fileio import write_json
from ufs.registry import available_methods, get_method, methods_with_role
from ufs.report import aggregate, figures, fonts, rank_report
from ufs.stats import ranking

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")


def _style_key(name):
    st = figures.method_style(name)
    return (matplotlib.colors.to_hex(st["color"]), st["marker"], st["ls"])


def _hex(name):
    return matplotlib.colors.to_hex(figures.method_style(name)["color"])


PAPER_METHODS = {"kmeans_ufs", "dgufs", "golfs", "spcafs", "fsbc"}


def test_every_registered_method_has_its_own_style():
    names = available_methods()
    keys = [_style_key(m) for m in names]
    assert len(set(keys)) == len(keys), "two registered methods share colour+marker+linestyle"
    listed = {
        *figures.SEED_METHODS,
        *figures.BASELINE_METHODS,
        *figures.FURTHER_BASELINES,
        *figures.NEURAL_METHODS,
        *figures.REFERENCE_METHODS,
    }
    missing = sorted(set(names) - listed)
    assert not missing, f"add {missing} to a group and a style in ufs/report/figures.py"
    groups = (
        figures.SEED_METHODS
        + figures.BASELINE_METHODS
        + figures.FURTHER_BASELINES
        + figures.NEURAL_METHODS
        + figures.REFERENCE_METHODS
    )
    assert len(groups) == len(set(groups)), "a method in two groups"
    for m in names:  # "x" marks a diverged fit; a hollow marker needs a fillable one
        assert figures.method_style(m)["marker"] not in ("x", "X", "+", "|", "_", ".", "1")
    assert figures.method_group("some_new_method") == "further"


def test_palettes_roles_and_panels():
    names = available_methods()
    oi = {matplotlib.colors.to_hex(c) for c in figures.OKABE_ITO.values()}
    tol = {matplotlib.colors.to_hex(c) for c in figures.TOL_MUTED}
    # the seed methods: the five paper methods and their declared variants
    seeds = set(figures.SEED_METHODS)
    assert set(methods_with_role("method")) & seeds == PAPER_METHODS
    assert {m for m in methods_with_role("variant") if get_method(m).variant_of in seeds} <= seeds
    for m in seeds:
        assert _hex(m) in oi and figures.method_style(m)["ls"] in ("-", "--")
    assert len({_hex(m) for m in PAPER_METHODS}) == 5
    others = set(names) - seeds - set(methods_with_role("reference"))
    assert not {_hex(m) for m in others} & {_hex(m) for m in seeds}  # seed hues exclusive
    assert {_hex(m) for m in others} <= tol
    for m in methods_with_role("variant"):  # the parent's hue, another marker and line
        parent = get_method(m).variant_of
        assert _hex(m) == _hex(parent)
        assert figures.method_style(m)["marker"] != figures.method_style(parent)["marker"]
        assert figures.method_style(m)["ls"] != figures.method_style(parent)["ls"]
    assert set(methods_with_role("reference")) == set(figures.REFERENCE_METHODS)
    for m in figures.REFERENCE_METHODS:  # black or grey, dashed
        r, g, b = matplotlib.colors.to_rgb(figures.method_style(m)["color"])
        assert r == g == b and figures.method_style(m)["ls"] in ("--", "-.")
    for group in ("seed", "baseline", "further"):  # one panel: no hue twice (variants apart)
        shown = [m for m in names if figures.method_group(m) == group]
        hues = [_hex(m) for m in shown if get_method(m).role == "method"]
        assert len(set(hues)) == len(hues) and len(shown) <= 8, group


def test_non_monotone_methods_are_registered_and_iterative():
    assert set(figures.NON_MONOTONE) <= set(available_methods())
    assert all(0 < len(why) <= 45 for why in figures.NON_MONOTONE.values())
    for m in ("golfs", "spcafs", "nsslfs"):  # proven or tested non-increasing
        assert m not in figures.NON_MONOTONE


def test_styles_stable():
    first = {m: figures.method_style(m) for m in [*available_methods(), "some_new_method"]}
    figures.method_style.cache_clear()
    again = {m: figures.method_style(m) for m in reversed(list(first))}
    assert first == again
    assert figures.method_style("kmeans_ufs") == {"color": "#0072B2", "marker": "o", "ls": "-"}


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


def _row(h, acc, status="ok", curve=None, seconds=0.1, per=None):
    """An evaluation row; ``per``: the restarts' ACC/NMI (default ``acc`` ± 0.02)."""
    per = {m: list(per or [acc, acc - 0.02, acc + 0.02]) for m in ("acc", "nmi", "ari", "ne")}
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


def _frames(tmp_path, recs):
    path = tmp_path / "ev.json"
    write_json(path, {"dataset": "toy", "evaluations": recs})
    df = aggregate.collect([path], "toy")
    return df, aggregate.select_protocols(df)


DIVERGED = [10.0, 6.0, 4.0, -2e142, None]  # dgufs at h = 10: overflow, then non-finite


@pytest.fixture()
def run(tmp_path):
    """kmeans_ufs and dgufs (seed, subset), fsbc and its variant fsbc_nobal (the same
    scores), ndfs (baseline, ranking, not converged), random (reference, ranking),
    all_features (reference, full)."""
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
        _record("fsbc", "subset", [_row(h, 0.45) for h in HS]),
        _record("fsbc_nobal", "subset", [_row(h, 0.45) for h in HS]),
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
    return _frames(tmp_path, recs)


def _capture():
    figs = {}

    def save(fig, path, dpi):
        fig.canvas.draw()  # resolve ticks and offset texts
        figs[Path(path).name] = fig
        return Path(path)

    return figs, save


def _styled_lines(ax):
    """(colour, marker, linestyle) → the data lines of a panel with that style."""
    out = {}
    for ln in ax.get_lines():
        key = (matplotlib.colors.to_hex(ln.get_color()), ln.get_marker(), ln.get_linestyle())
        out.setdefault(key, []).append(ln)
    return out


def _line_of(ax, method):
    st = figures.method_style(method)
    (line,) = _styled_lines(ax)[(matplotlib.colors.to_hex(st["color"]), st["marker"], st["ls"])]
    return line


def test_tick_labels_are_plain_text_but_log_decades(run, tmp_path):
    """Numbers on linear axes are plain text (mathtext laid out every tick label:
    ~9 % of a data set's figures' CPU); a log axis's decades keep their 10^k labels."""
    df, sel = run
    figs, save = _capture()
    figures.plot_metric_vs_h(sel, "toy", "acc", tmp_path / "acc_vs_h.png", save)
    figures.plot_runtime(df, "toy", tmp_path / "runtime.png", save)
    ax = figs["acc_vs_h.png"].axes[0]
    ticks = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    assert ticks and not any("$" in t for t in ticks), ticks
    (rt,) = figs["runtime.png"].axes
    decades = [t.get_text() for t in rt.get_xticklabels() if t.get_text()]
    assert decades and all(t.startswith("$") for t in decades), decades


@pytest.mark.parametrize("dpi", [figures.PNG_DPI, 300])
def test_the_marks_legend_fits_the_figure_at_the_png_resolution(dpi):
    """Every mark the legend under the ACC/NMI panels can hold stays inside the figure,
    in fewer columns when three do not fit: three were ~0.2 in wider than the 8.6-in
    figure at 150 dpi (hinted text is wider at small pixel sizes), and the PNG lost its
    first and last entries."""
    import pandas as pd

    plt = figures._pyplot()
    fig = plt.figure(figsize=(8.6, 8.4), dpi=dpi)
    sel = pd.DataFrame({"acc_p05": [0.1], "n_draws": [30]})
    flagged = {"not_converged", "diverged", "budget_exceeded", "degenerate"}
    marks = figures._status_handles(flagged) + figures._band_handles(sel, "acc", True)
    rows = figures._figure_legend(fig, marks)
    fig.canvas.draw()
    (legend,) = fig.legends
    box = legend.get_window_extent(fig.canvas.get_renderer())
    assert box.x0 >= 0 and box.x1 <= fig.bbox.width, (box, fig.bbox)
    assert rows == -(-(len(marks) + 1) // legend._ncols)  # what the layout reserves room for
    plt.close(fig)


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
    # in % as in the tables, within the metric's range; the log h axis says so
    assert fig.axes[0].get_ylabel().endswith("ACC (%)")
    assert fig.axes[-1].get_xlabel() == "h, number of selected features (log scale)"
    lo, hi = fig.axes[0].get_ylim()
    assert 0 <= lo < 20 and 60 < hi <= 100
    km = _line_of(fig.axes[0], "kmeans_ufs")  # label-free: mean of 0.55, 0.53, 0.57 at h = 5
    assert km.get_ydata()[0] == pytest.approx(55.0)
    fig.clf()


def test_a_variant_never_hides_its_parent(run, tmp_path):
    _, sel = run
    figs, save = _capture()
    figures.plot_metric_vs_h(sel, "toy", "acc", tmp_path / "acc_vs_h.png", save)
    ax = figs["acc_vs_h.png"].axes[0]  # seed methods, label-free (the first column)
    parent, variant = _line_of(ax, "fsbc"), _line_of(ax, "fsbc_nobal")
    np.testing.assert_allclose(parent.get_ydata(), variant.get_ydata())  # the same scores
    assert parent.get_zorder() > variant.get_zorder()  # the parent is drawn on top
    assert np.all(parent.get_xdata() != variant.get_xdata())  # and dodged apart
    assert _line_of(ax, "random").get_zorder() < variant.get_zorder()  # references beneath


def test_error_bars_are_clipped_to_the_metric_range(tmp_path):
    np.testing.assert_allclose(
        figures.clipped_yerr([95.0, 10.0, 50.0], [20.0, 30.0, 5.0]),
        [[20.0, 10.0, 5.0], [5.0, 30.0, 5.0]],
    )
    recs = [  # ±1 std reaches above 100 % and below 0 % (label-free: all restarts)
        _record("kmeans_ufs", "subset", [_row(h, 0.9, per=[1.0, 1.0, 0.6]) for h in HS]),
        _record("dgufs", "subset", [_row(h, 0.1, per=[0.0, 0.0, 0.4]) for h in HS]),
    ]
    _, sel = _frames(tmp_path, recs)
    figs, save = _capture()
    figures.plot_metric_vs_h(sel, "toy", "nmi", tmp_path / "nmi_vs_h.png", save)
    ax = figs["nmi_vs_h.png"].axes[0]  # label-free (the first column)
    segments = np.concatenate([c.get_segments() for c in ax.collections if c.get_segments()])
    ys = segments[..., 1]
    assert ys.min() == pytest.approx(0.0) and ys.max() == pytest.approx(100.0)
    assert ax.get_ylim()[0] >= 0 and ax.get_ylim()[1] <= 100


def test_styles_do_not_depend_on_the_methods_shown(run, tmp_path):
    _, sel = run

    def styles(part):
        figs, save = _capture()
        figures.plot_metric_vs_h(part, "toy", "acc", tmp_path / "acc_vs_h.png", save)
        out = {}
        for lg in [ax.get_legend() for ax in figs["acc_vs_h.png"].axes]:
            for h, t in zip(
                lg.legend_handles if lg else [], lg.get_texts() if lg else [], strict=True
            ):
                out[t.get_text()] = (
                    matplotlib.colors.to_hex(h.get_color()),
                    h.get_marker(),
                    h.get_linestyle(),
                )
        return out

    full = styles(sel)
    subset = styles(sel[~sel["method"].isin(["kmeans_ufs", "dgufs", "random"])])
    assert set(subset) == {"fsbc", "fsbc_nobal", "ndfs", "all_features"}
    assert {m: full[m] for m in subset} == subset
    for m, (color, marker, _) in full.items():
        assert color == matplotlib.colors.to_hex(figures.method_style(m)["color"])
        assert m == "all_features" or marker == figures.method_style(m)["marker"]


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


def test_convergence_says_which_methods_are_not_monotone_by_design(run, tmp_path):
    df, _ = run
    figs, save = _capture()
    figures.plot_convergence(df, "toy", tmp_path / "convergence.png", save)
    fig = figs["convergence.png"]
    notes = {
        ax.get_title(): [t.get_text() for t in ax.texts if "monotone" in t.get_text()]
        for ax in fig.axes
        if ax.get_title()
    }
    assert notes["kmeans_ufs"] == [f"not monotone by design:\n{figures.NON_MONOTONE['kmeans_ufs']}"]
    assert notes["dgufs‡"] == [f"not monotone by design:\n{figures.NON_MONOTONE['dgufs']}"]
    assert notes["ndfs†"] == []  # NDFS's recorded objective is non-increasing at its default
    assert "not monotone by design" in fig._suptitle.get_text()
    fig.clf()


def test_status_marks_ring_their_point_and_hide_no_other(tmp_path):
    """The degenerate diamonds (8.4 pt) covered neighbouring points. Every status
    mark is at most 3 pt wider than the 3.5 pt point it rings."""
    recs = [
        _record("kmeans_ufs", "subset", [_row(h, 0.5, "degenerate") for h in HS]),
        _record("dgufs", "subset", [_row(h, 0.5, "diverged") for h in HS]),
        _record("ndfs", "ranking", [_row(h, 0.4, "not_converged") for h in HS]),
    ]
    _, sel = _frames(tmp_path, recs)
    figs, save = _capture()
    figures.plot_metric_vs_h(sel, "toy", "acc", tmp_path / "acc_vs_h.png", save)
    fig = figs["acc_vs_h.png"]
    sizes = [
        np.sqrt(c.get_sizes()).max()
        for ax in fig.axes
        for c in ax.collections
        if hasattr(c, "get_sizes") and len(c.get_sizes()) and c.get_offsets().size
    ]
    assert len(sizes) >= 3  # the three kinds of marks were drawn
    assert max(sizes) <= figures.POINT_SIZE + 3.0
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
    # a log axis from the data's own minimum (random's 100 µs), not an arbitrary floor
    assert ax.get_xlim()[0] == pytest.approx(1e-4)
    # these records carry no fit_job: the wall clock, said as such
    assert ax.get_xlabel().startswith("wall-clock seconds per fit (CPU time not recorded")
    assert "the axis starts at the fastest fit, 100 µs" in ax.get_xlabel()
    assert all(p.get_x() == pytest.approx(1e-4) for p in ax.patches)  # bars start there
    fig.clf()


def test_runtime_shows_cpu_time_where_recorded(tmp_path):
    """The runtime figure showed wall-clock time on whatever load the machine had.
    With the fit job's CPU seconds recorded (the workflow's evaluation files), the bars are
    CPU time: a subset method's CPU per h, a ranking method's one fit at every h."""
    recs = [
        _record("kmeans_ufs", "subset", [_row(h, 0.5, seconds=9.0) for h in HS]),
        _record("ndfs", "ranking", [_row(h, 0.4, seconds=9.0) for h in HS]),
    ]
    tasks = [
        {"fits": {f"h{h}": {"fit_cpu_seconds": h / 100} for h in HS}},
        {"fits": {"rank": {"fit_cpu_seconds": 0.02}}},
    ]
    path = tmp_path / "ev.json"
    write_json(path, {"dataset": "toy", "evaluations": recs, "fit_job": {"tasks": tasks}})
    df = aggregate.collect([path], "toy")
    k = df[df["method"] == "kmeans_ufs"].set_index("h")
    assert k["fit_cpu_seconds"].to_dict() == {h: h / 100 for h in HS}
    assert (df.loc[df["method"] == "ndfs", "fit_cpu_seconds"] == 0.02).all()
    stats = figures.runtime_stats(df)
    assert stats.loc["kmeans_ufs", "mean"] == pytest.approx(np.mean(HS) / 100)
    assert stats.loc["ndfs", "size"] == 1  # one fit, not one per h
    figs, save = _capture()
    figures.plot_runtime(df, "toy", tmp_path / "runtime.png", save)
    (ax,) = figs["runtime.png"].axes
    assert ax.get_xlabel().startswith("CPU seconds per fit (process CPU time")
    assert ax.get_xlim()[0] == pytest.approx(0.02)  # the CPU times, not the 9 s wall clock
    figs["runtime.png"].clf()


def test_plot_dataset_writes_pngs_and_pdfs(run, tmp_path):
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
        pdf = figures.vector_path(p).read_bytes()
        assert pdf[:5] == b"%PDF-" and b"/FontFile2" in pdf  # TrueType, not Type 3
        assert b"/Subtype /Type3" not in pdf and b"CreationDate" not in pdf
        if fonts.font_family()[0] == fonts.FAMILY:  # the figures' cut font (ufs.report.fonts)
            assert b"+UFSSans" in pdf and b"+DejaVuSans" not in pdf, p.name
    assert not list(tmp_path.glob(".*"))  # no temporary file left behind


def test_a_laid_out_figure_is_drawn_once_per_file(tmp_path, monkeypatch):
    """``tight_layout`` leaves a placeholder engine that made ``savefig`` draw the figure
    twice per file; the files are the same either way."""
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    draws = []
    real = Figure.draw
    monkeypatch.setattr(Figure, "draw", lambda self, r: (draws.append(1), real(self, r))[1])

    def make():
        fig, ax = plt.subplots(figsize=(3, 2))
        ax.plot([1, 2, 3], [3, 1, 2], label="x")
        ax.legend()
        fig.tight_layout()
        return fig

    figures.save_figure(make(), tmp_path / "new.png", dpi=50)
    assert len(draws) == 2  # the PNG and the PDF, once each
    fig = make()
    with plt.rc_context({"pdf.fonttype": 42}):  # as save_figure writes, engine left in place
        fig.savefig(tmp_path / "old.png", dpi=50, format="png")
        fig.savefig(tmp_path / "old.pdf", format="pdf", metadata={"CreationDate": None})
    assert len(draws) == 6  # what the engine cost: a second draw per file
    for ext in ("png", "pdf"):
        assert (tmp_path / f"new.{ext}").read_bytes() == (tmp_path / f"old.{ext}").read_bytes()


def test_a_font_is_embedded_once_with_characters_past_latin1(tmp_path):
    """The figures' markers († ◊ —) are past Latin-1; matplotlib 3.11 sized the PDF's font
    subsets by ``ps.fonttype`` (Type 3's 256 glyphs), so such text embedded its font twice.
    One font, one font program."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(3, 2))
    ax.set_title("seed methods \u2014 \u2020 \u25ca")  # no ligature pair (ff, fi, fl)
    ax.set_xticks([])
    ax.set_yticks([])
    figures.save_figure(fig, tmp_path / "marks.png", dpi=50)
    pdf = (tmp_path / "marks.pdf").read_bytes()
    assert pdf.count(b"/FontFile2") == 1


# -- critical-difference diagrams (ufs.report.rank_report) ----------------------------------------


def test_spread_positions_separates_ties_and_keeps_the_rest():
    x = np.array([1.0, 2.0, 2.0, 2.0, 2.05, 5.0])
    pos = rank_report.spread_positions(x, 0.2)
    assert np.all(np.diff(pos) >= 0.2 - 1e-12)  # order kept, at least the gap apart
    assert pos[0] == 1.0 and pos[-1] == 5.0  # isolated values stay at their value
    assert pos[1:5].mean() == pytest.approx(x[1:5].mean())  # a block centred on its values
    np.testing.assert_array_equal(rank_report.spread_positions([3.0, 4.0], 0.1), [3.0, 4.0])


def _cd_result(scores, **kw):
    from tests.test_ranking import _tables

    return ranking.rank_methods(_tables(scores), "label_free", "acc", **kw)


def _bars(fig):
    return [ln for ax in fig.axes for ln in ax.get_lines() if ln.get_linewidth() == 3]


def test_cd_bars_only_when_the_friedman_test_is_significant():
    methods = ["kmeans_ufs", "dgufs", "golfs", "spcafs", "mcfs"]
    planted = {f"d{j}": {m: 1.0 - 0.1 * i for i, m in enumerate(methods)} for j in range(6)}
    planted["d0"]["mcfs"] = 0.95  # a little noise: not every rank decided
    sig = _cd_result(planted)
    assert sig.pvalue < sig.alpha and ranking.post_hoc(sig) and sig.groups
    fig = rank_report.cd_figure(sig)
    assert _bars(fig) and any(t.get_text().startswith("CD = ") for t in fig.axes[0].texts)
    rng = np.random.default_rng(3)
    flat = {f"d{j}": {m: float(rng.uniform()) for m in methods} for j in range(3)}
    ns = _cd_result(flat)
    assert ns.applicable and ns.pvalue >= ns.alpha and ns.groups  # cliques exist, not drawn
    fig = rank_report.cd_figure(ns)
    assert not _bars(fig)
    assert not any(t.get_text().startswith("CD = ") for t in fig.axes[0].texts)
    title = fig._suptitle.get_text()
    assert "\n" not in title and title.endswith("; bold: seed methods")  # one line
    assert "NOT significant at α = 0.05, so no post-hoc test" in rank_report.cd_caption(ns)
    assert rank_report.cd_caption(ns).endswith("Bold names: the seed papers' methods.")


def test_cd_tied_ranks_keep_separate_leader_lines():
    s = {f"d{j}": {"a": 0.9, "b": 0.7, "c": 0.7, "d": 0.7, "e": 0.2} for j in range(4)}
    r = _cd_result(s)
    assert r.avg_rank[["b", "c", "d"]].nunique() == 1  # a three-way tie
    fig = rank_report.cd_figure(r)
    leaders = [ln for ln in fig.axes[0].get_lines() if len(ln.get_xdata()) == 4]
    assert len(leaders) == 5
    start = [ln.get_xdata()[0] for ln in leaders]
    drop = [ln.get_xdata()[1] for ln in leaders]  # the vertical part of each line
    assert start.count(r.avg_rank["b"]) == 3  # all three leave the axis at their rank
    assert len(set(np.round(drop, 9))) == 5  # but no two run down the same x
    assert min(np.diff(sorted(drop))) > 0.02


def test_plot_cd_png_for_screens_and_its_vector_twin(tmp_path):
    from PIL import Image

    r = _cd_result({f"d{j}": {"a": 0.9, "b": 0.5, "c": 0.1} for j in range(3)})
    out = rank_report.plot_cd(r, tmp_path / "cd.png", vector=True)
    assert figures.PNG_DPI == 150  # the PNGs are for screens, the PDFs for papers
    assert Image.open(out).info["dpi"] == pytest.approx((150, 150), abs=0.05)
    assert (tmp_path / "cd.pdf").read_bytes()[:5] == b"%PDF-"
    rank_report.plot_cd(r, tmp_path / "png_only.png")
    assert not (tmp_path / "png_only.pdf").exists()


def test_a_user_registered_reference_is_styled_as_a_reference():
    """A method registered by a user with role ``reference`` joins the references' group
    (grey, beneath), whatever its name; a user's variant joins its parent's group."""
    from ufs.methods.reference import MaxVariance
    from ufs.registry import _REGISTRY, register

    register("my_reference", MaxVariance, reference="test", role="reference")
    register(
        "my_kmeans_variant",
        MaxVariance,
        reference="test",
        role="variant",
        variant_of="kmeans_ufs",
    )
    try:
        assert figures.method_group("my_reference") == "reference"
        figures.method_style.cache_clear()
        style = figures.method_style("my_reference")
        assert style["color"] == "#999999" and style["ls"] == "--"
        assert figures.method_group("my_kmeans_variant") == "seed"
        assert figures.method_group("unregistered_name") == "further"
    finally:
        _REGISTRY.pop("my_reference")
        _REGISTRY.pop("my_kmeans_variant")
        figures.method_style.cache_clear()
