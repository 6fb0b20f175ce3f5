"""Per-data-set figures: ACC/NMI against h, convergence, run time.

One style per method name (:func:`method_style`), the same in every figure and data set.
Methods fall in three groups (:func:`method_group`, the README's method table): the
*seed* methods whose papers this benchmark reproduces, the *baselines* of those papers'
tables, and the *references* (no selection, chance, largest variance), always grey.

* ``acc_vs_h.png`` / ``nmi_vs_h.png``: small multiples, one row per group (seed methods,
  baselines; the references repeated in grey in each row) × one column per protocol
  (label-tuned, label-free), a shared y axis; ±1 std bands for the seed methods only.
* ``convergence.png``: one panel per iterative method (label-free setting), the relative
  gap to the lowest objective value the fit reached on a symlog axis; a diverged curve
  stops at its last finite value, marked ×.
* ``runtime.png``: wall-clock fit time per fit (label-free settings); the kNN graph of a
  graph-based method is built once per data set (in the fit job that uses it, or in a graph
  job when several share it) and **not** included. A
  method with a fit over the compute budget gets a cross-hatched bar at the longest time
  spent (where it was stopped) and a ``§ budget exceeded`` label.

Fit status marks as in the tables (:mod:`ufs.bench.aggregate`): a hollow marker is a point
whose fit did not converge (†), a black × one whose fit diverged (‡); a fit over the
compute budget has no value: a ``§`` at the bottom of the panel, at its h.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd

from ..fileio import write_with
from .status import STATUS_MARK

__all__ = [
    "SEED_METHODS",
    "BASELINE_METHODS",
    "REFERENCE_METHODS",
    "method_group",
    "method_style",
    "cut_curve",
    "relative_gap",
    "plot_metric_vs_h",
    "plot_convergence",
    "plot_runtime",
    "plot_dataset",
    "save_figure",
]

#: the methods whose papers the benchmark reproduces (README, method table)
SEED_METHODS = (
    "kmeans_ufs",
    "kmeans_ufs_exact",
    "dgufs",
    "golfs",
    "spcafs",
    "spcafs_raw",
    "fsbc",
    "fsbc_nobal",
)
#: the baselines of those papers' tables and figures
BASELINE_METHODS = (
    "laplacian_score",
    "mcfs",
    "udfs",
    "ndfs",
    "rufs",
    "eufs",
    "rsr",
    "sogfs",
    "sf2sog",
    "lrpfs_ma2024",
    "urafs",
    "fsasl",
    "nsslfs",
    "rne",
)
#: no selection, chance, largest raw variance
REFERENCE_METHODS = ("all_features", "random", "max_variance")
GROUP_TITLES = {"seed": "seed methods", "baseline": "baselines", "reference": "references"}

PAPER_DPI = 300
_RANKING_COLOR = "0.35"  # convergence: the one fit of a ranking method
_RC = {
    "font.size": 8,
    "axes.titlesize": 8.5,
    "axes.labelsize": 8,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "legend.fontsize": 7,
    "figure.titlesize": 9.5,
    "axes.formatter.useoffset": False,  # no "+1e2" / "1e6" offset text above the axes
    "axes.formatter.use_mathtext": True,
}

# Explicit styles: within a group every colour differs, and colour+marker+linestyle
# differ across all registered methods (tests/test_figures.py). Markers are fillable so
# that a hollow marker (fit not converged) is visible; "x" is reserved for "diverged".
_STYLES: dict[str, tuple[str, str, str]] = {
    # seed methods: solid, the strong tab10 hues (grey is for the references)
    "kmeans_ufs": ("#1f77b4", "o", "-"),
    "kmeans_ufs_exact": ("#9467bd", "s", "-"),
    "dgufs": ("#d62728", "D", "-"),
    "golfs": ("#2ca02c", "^", "-"),
    "spcafs": ("#ff7f0e", "v", "-"),
    "spcafs_raw": ("#17becf", "<", "-"),  # SPCAFS on the data as given
    "fsbc": ("#8c564b", "P", "-"),
    "fsbc_nobal": ("#e377c2", "p", "-"),
    # baselines: dashed / dash-dotted
    "laplacian_score": ("#1f77b4", "o", "--"),
    "mcfs": ("#ff7f0e", "s", "--"),
    "udfs": ("#2ca02c", "^", "--"),
    "ndfs": ("#d62728", "D", "--"),
    "rufs": ("#9467bd", "v", "--"),
    "eufs": ("#8c564b", "<", "--"),
    "rsr": ("#e377c2", ">", "--"),
    "sogfs": ("#bcbd22", "p", "--"),
    "sf2sog": ("#17becf", "h", "--"),
    "lrpfs_ma2024": ("#393b79", "8", "-."),
    "urafs": ("#000000", "d", "-."),
    "fsasl": ("#8c6d31", "H", "-."),
    "nsslfs": ("#843c39", "*", "-."),
    "rne": ("#7b4173", "P", "-."),
    # references: grey
    "all_features": ("0.15", "o", ":"),
    "random": ("0.45", "o", "--"),
    "max_variance": ("0.6", "s", "-."),
}
_FALLBACK_COLORS = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
    "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173",
)  # fmt: skip
_FALLBACK_MARKERS = ("o", "s", "^", "v", "D", "<", ">", "p", "h", "8", "d", "H", "*", "P")
_FALLBACK_LS = ("-", "--", "-.", ":")


def method_group(name: str) -> str:
    """``"seed"``, ``"baseline"`` or ``"reference"``; an unlisted method is a baseline."""
    if name in SEED_METHODS:
        return "seed"
    if name in REFERENCE_METHODS:
        return "reference"
    return "baseline"


@cache
def method_style(name: str) -> dict[str, str]:
    """``{"color", "marker", "ls"}`` of a method: fixed for the registered methods, derived
    from a hash of the name otherwise (stable across runs, figures and data sets)."""
    if name in _STYLES:
        color, marker, ls = _STYLES[name]
    else:
        k = zlib.crc32(name.encode())
        color = _FALLBACK_COLORS[k % len(_FALLBACK_COLORS)]
        marker = _FALLBACK_MARKERS[(k // 16) % len(_FALLBACK_MARKERS)]
        ls = _FALLBACK_LS[(k // 256) % len(_FALLBACK_LS)]
    return {"color": color, "marker": marker, "ls": ls}


def _method_order(names) -> list[str]:
    """Seed methods, baselines, references; each in the order of the lists above."""
    known = SEED_METHODS + BASELINE_METHODS + REFERENCE_METHODS
    rank = {m: i for i, m in enumerate(known)}
    group = {"seed": 0, "baseline": 1, "reference": 2}
    return sorted(set(names), key=lambda m: (group[method_group(m)], rank.get(m, len(rank)), m))


def _curve(c) -> np.ndarray:
    """An objective curve from JSON (non-finite values stored as None / "inf")."""
    return np.array([np.nan if v is None else float(v) for v in c], dtype=float)


def cut_curve(y, blowup: float = 1e12) -> tuple[np.ndarray, bool]:
    """The curve up to its last finite value before it diverges, and whether it was cut.

    It is cut before the first non-finite value and before the first value whose magnitude
    exceeds ``blowup`` times the largest magnitude before it (at least 1): an overflow
    that stayed finite (e.g. −2·10¹⁴² after values of order 10²)."""
    y = _curve(y) if not isinstance(y, np.ndarray) else np.asarray(y, dtype=float)
    bad = ~np.isfinite(y)
    mag = np.abs(np.where(bad, 0.0, y))
    if y.size > 1:  # the first value sets the scale
        seen = np.maximum(np.maximum.accumulate(mag[:-1]), 1.0)
        bad[1:] |= mag[1:] > blowup * seen
    if not bad.any():
        return y, False
    return y[: int(np.argmax(bad))], True


def relative_gap(y) -> np.ndarray:
    """``(f − f_min) / |f_min|`` with ``f_min`` the lowest value of the (finite) curve;
    divided by ``max |f|`` (or 1) when ``f_min = 0``. Zero where the curve is lowest."""
    y = np.asarray(y, dtype=float)
    if y.size == 0:
        return y
    fmin = float(np.min(y))
    den = abs(fmin) or float(np.max(np.abs(y))) or 1.0
    return (y - fmin) / den


def save_figure(fig, path: str | Path, dpi: int = PAPER_DPI) -> Path:
    """Write a PNG atomically and free the figure.

    Every figure here is laid out by ``tight_layout`` before it is saved, so the canvas is
    written as it is: ``bbox_inches="tight"`` would render the figure a second time to
    measure its extent (~30 % of a data set's aggregation job, issue 15)."""
    import matplotlib.pyplot as plt

    path = Path(path)
    write_with(path, lambda p: fig.savefig(p, dpi=dpi, format="png"))
    plt.close(fig)
    return path


Saver = Callable[..., Path]


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _status(g: pd.DataFrame) -> pd.Series:
    return g["status"] if "status" in g else pd.Series("ok", index=g.index)


def _log_h(hs: list[int]) -> bool:
    """A log h axis when h spans a factor of 6 or more."""
    return bool(hs) and min(hs) > 0 and max(hs) / min(hs) >= 6


def _h_axis(ax, hs: list[int]) -> None:
    """Ticks at the evaluated h (log axis per :func:`_log_h`), room for the dodge."""
    from matplotlib.ticker import FixedLocator, NullLocator, ScalarFormatter

    if not hs:
        return
    if _log_h(hs):
        ax.set_xscale("log")
        ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_locator(FixedLocator(hs))
    ax.xaxis.set_major_formatter(ScalarFormatter())
    lo, hi = min(hs), max(hs)
    if _log_h(hs):
        pad = (hi / lo) ** 0.07
        ax.set_xlim(lo / pad, hi * pad)
    else:
        d = 0.1 * max(hi - lo, 1)
        ax.set_xlim(lo - d, hi + d)


def _dodge(hs: list[int], n: int) -> list[Callable[[np.ndarray], np.ndarray]]:
    """``n`` horizontal offsets around each h, so that coinciding points stay visible:
    ±7 % of h on a log axis, ±15 % of the smallest h spacing on a linear one."""
    frac = (np.arange(n) - (n - 1) / 2) / max(n - 1, 1)  # in [-0.5, 0.5]
    if _log_h(hs):
        return [lambda x, f=f: np.asarray(x, float) * np.exp(0.14 * f) for f in frac]
    gaps = np.diff(sorted(set(hs))) if len(set(hs)) > 1 else np.array([1.0])
    width = 0.3 * float(gaps.min())
    return [lambda x, f=f: np.asarray(x, float) + width * f for f in frac]


def plot_metric_vs_h(sel: pd.DataFrame, base: str, metric: str, path, save: Saver = save_figure):
    """ACC or NMI against h: rows seed methods / baselines, columns label-tuned /
    label-free; references in grey in every row; error bars (±1 std over k-means
    restarts) for the seed methods; points dodged around each h."""
    plt = _pyplot()
    from matplotlib.lines import Line2D

    groups = [g for g in ("seed", "baseline") if (sel["method"].map(method_group) == g).any()]
    groups = groups or ["reference"]
    protocols = ("oracle", "label_free")
    hs = sorted({int(h) for h in sel.loc[sel["h_label"] != "all", "h"]})
    with plt.rc_context(_RC):
        fig, axes = plt.subplots(
            len(groups),
            2,
            figsize=(8.6, 0.7 + 2.9 * len(groups)),
            sharex=True,
            sharey=True,
            squeeze=False,
        )
        flagged: set[str] = set()
        for r, group in enumerate(groups):
            shown = [
                m for m in _method_order(sel["method"]) if method_group(m) in (group, "reference")
            ]
            lines = [
                m for m in shown if not (sel.loc[sel["method"] == m, "h_label"] == "all").all()
            ]
            shift = dict(zip(lines, _dodge(hs, len(lines)), strict=True))
            for c, protocol in enumerate(protocols):
                ax = axes[r, c]
                part = sel[sel["protocol"] == protocol]
                for method in shown:
                    g = part[part["method"] == method].sort_values("h")
                    if g.empty:
                        continue
                    flagged |= _draw_method(
                        ax,
                        g,
                        method,
                        metric,
                        shift.get(method),
                        errorbars=method_group(method) == "seed",
                    )
                ax.grid(alpha=0.25, lw=0.5)
                if r == 0:
                    ax.set_title(
                        "label-tuned (oracle): best grid setting per h — uses labels"
                        if protocol == "oracle"
                        else "label-free: documented default parameters"
                    )
                if c == 0:
                    ax.set_ylabel(f"{GROUP_TITLES[group]}\n{metric.upper()}")
                if r == len(groups) - 1:
                    ax.set_xlabel("h (number of selected features)")
                _h_axis(ax, hs)
            axes[r, 1].legend(
                [_handle(m) for m in shown],
                shown,
                loc="upper left",
                bbox_to_anchor=(1.02, 1.0),
                frameon=False,
                title=GROUP_TITLES[group] + " + references",
                title_fontsize=7,
                handlelength=2.6,
            )
        marks = []
        if "not_converged" in flagged:
            marks.append(
                (
                    Line2D([], [], ls="", marker="o", mfc="white", mec="0.3", mew=1.2, ms=5),
                    "† not converged",
                )
            )
        if "diverged" in flagged:
            marks.append(
                (Line2D([], [], ls="", marker="x", color="black", mew=1.5, ms=5), "‡ diverged")
            )
        if "budget_exceeded" in flagged:
            marks.append(
                (
                    Line2D([], [], ls="", marker="$§$", color="0.3", ms=6),
                    "§ budget exceeded (no value)",
                )
            )
        if "degenerate" in flagged:
            marks.append(
                (
                    Line2D([], [], ls="", marker="D", mfc="none", mec="black", mew=0.9, ms=6),
                    "◊ degenerate (round-off or a trivial rule decided it)",
                )
            )
        band = f"{metric}_p05"
        if band in sel and sel[band].notna().any():
            from matplotlib.patches import Patch

            n_draws = int(sel["n_draws"].max()) if "n_draws" in sel else 0
            marks.append(
                (Patch(color="0.5", alpha=0.25, lw=0), f"random: 5-95 % over {n_draws} draws")
            )
        if "seed" in groups:
            marks.append(
                (
                    Line2D([], [], ls="", marker="|", color="0.3", ms=8),
                    "±1 std over k-means restarts (seed methods)",
                )
            )
        fig.legend(
            [h for h, _ in marks] + [Line2D([], [], ls="")],
            [t for _, t in marks] + ["points dodged around each h for legibility"],
            loc="lower center",
            ncol=min(len(marks) + 1, 3),
            frameon=False,
            bbox_to_anchor=(0.5, 0.0),
            handlelength=1.2,
        )
        fig.suptitle(f"{base}: {metric.upper()} against h (mean over k-means restarts)")
        rows = -(-(len(marks) + 1) // 3)  # legend rows below the panels
        fig.tight_layout(rect=(0, 0.025 + 0.025 * rows, 1, 1))
        return save(fig, Path(path), dpi=PAPER_DPI)


def _handle(method: str):
    from matplotlib.lines import Line2D

    st = method_style(method)
    if method == "all_features":
        return Line2D([], [], color=st["color"], ls=st["ls"], lw=1.4)
    return Line2D([], [], color=st["color"], ls=st["ls"], marker=st["marker"], ms=3.5, lw=1.2)


def _draw_method(
    ax, g: pd.DataFrame, method: str, metric: str, shift=None, *, errorbars: bool = False
) -> set[str]:
    """One method's line (a horizontal line for a method without h), its error bars and
    its fit-status marks (hollow marker: not converged; ×: diverged; a ``§`` at the bottom
    of the panel: over the compute budget, no value)."""
    st = method_style(method)
    if (g["h_label"] == "all").all():
        value = g[f"{metric}_mean"].iloc[0]
        if np.isnan(value):  # over the budget: nothing to draw
            return {"budget_exceeded"} if (_status(g) == "budget_exceeded").any() else set()
        ax.axhline(value, color=st["color"], ls=st["ls"], lw=1.4, zorder=1)
        return set()
    g = g[g["h_label"] != "all"]
    x = (shift or np.asarray)(g["h"].to_numpy(dtype=float))
    mean, std = g[f"{metric}_mean"].to_numpy(), g[f"{metric}_std"].to_numpy()
    ref = method_group(method) == "reference"
    z = 1 if ref else 3
    ax.plot(
        x,
        mean,
        color=st["color"],
        ls=st["ls"],
        marker=st["marker"],
        ms=3.5,
        lw=1.0 if ref else 1.3,
        zorder=z,
    )
    lo_col, hi_col = f"{metric}_p05", f"{metric}_p95"
    if lo_col in g and g[lo_col].notna().all():  # a chance reference: its 5-95 % band
        ax.fill_between(
            x,
            g[lo_col].to_numpy(dtype=float),
            g[hi_col].to_numpy(dtype=float),
            color=st["color"],
            alpha=0.15,
            lw=0,
            zorder=0,
        )
    if errorbars:
        ax.errorbar(
            x, mean, yerr=std, fmt="none", ecolor=st["color"], elinewidth=0.8, alpha=0.7, zorder=z
        )
    status = _status(g).to_numpy()
    flagged = set()
    nc, dv = status == "not_converged", status == "diverged"
    if nc.any():  # hollow: the fit did not converge
        ax.scatter(
            x[nc],
            mean[nc],
            s=30,
            marker=st["marker"],
            facecolors="white",
            edgecolors=st["color"],
            linewidths=1.2,
            zorder=4,
        )
        flagged.add("not_converged")
    if dv.any():  # cross: the fit diverged
        ax.scatter(x[dv], mean[dv], s=40, marker="x", color="black", lw=1.5, zorder=5)
        flagged.add("diverged")
    be = status == "budget_exceeded"
    if be.any():  # no value: a § at the bottom of the panel, at its h
        from matplotlib.transforms import blended_transform_factory

        tr = blended_transform_factory(ax.transData, ax.transAxes)
        for xi in x[be]:
            ax.text(xi, 0.02, "§", transform=tr, ha="center", va="bottom", color=st["color"])
        flagged.add("budget_exceeded")
    dg = status == "degenerate"
    if dg.any():  # a diamond around the point: decided by round-off or a trivial rule
        ax.scatter(
            x[dg],
            mean[dg],
            s=70,
            marker="D",
            facecolors="none",
            edgecolors="black",
            lw=0.9,
            zorder=5,
        )
        flagged.add("degenerate")
    return flagged


def _symlog_threshold(values: np.ndarray) -> float:
    """The decade of the smallest positive gaps (5th percentile: a few stray tiny values do
    not stretch the axis), at most 12 decades below the largest."""
    pos = values[values > 0]
    lo = max(float(np.percentile(pos, 5)), float(pos.max()) * 1e-12, 1e-12)
    return 10.0 ** np.floor(np.log10(lo))


def _gap_axis(ax, gaps: np.ndarray, constant: float | None) -> None:
    """Symlog y for the relative gaps (0 at the bottom, at most ~6 labelled decades);
    a note instead when every curve of the panel is constant."""
    from matplotlib.ticker import FixedLocator, LogFormatterSciNotation, NullLocator

    if not np.any(gaps > 0):
        ax.set_ylim(-1, 1)
        ax.set_yticks([0])
        text = "constant objective" + (f"\nf = {constant:.4g}" if constant is not None else "")
        ax.text(0.5, 0.62, text, transform=ax.transAxes, ha="center", fontsize=7, color="0.3")
        return
    lt = _symlog_threshold(gaps)
    ax.set_yscale("symlog", linthresh=lt, linscale=0.6)
    lo, hi = int(round(np.log10(lt))), int(np.floor(np.log10(gaps.max())))
    step = max(1, -(-(hi - lo) // 5))
    ax.yaxis.set_major_locator(FixedLocator([0.0] + [10.0**k for k in range(hi, lo - 1, -step)]))
    ax.yaxis.set_major_formatter(LogFormatterSciNotation(labelOnlyBase=False))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.set_ylim(0, 10.0 ** (np.log10(gaps.max()) + 0.15))


def plot_convergence(df: pd.DataFrame, base: str, path, save: Saver = save_figure):
    """One panel per iterative method (label-free setting): relative gap to the lowest
    objective value reached, symlog y, integer iteration ticks; one line per fit (per h
    for a subset method, one for a ranking method); diverged curves cut and marked ×."""
    plt = _pyplot()
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator

    curves = df[
        df["label_free"] & df["objective_curve"].map(lambda c: c is not None and len(c) > 1)
    ]
    methods = _method_order(curves["method"])
    hs = sorted({int(h) for h in curves.loc[curves["kind"] == "subset", "h"]})
    cmap = plt.get_cmap("viridis")
    h_color = {h: cmap(0.85 * i / max(1, len(hs) - 1)) for i, h in enumerate(hs)}
    ncols = min(4, max(1, len(methods)))
    nrows = max(1, -(-len(methods) // ncols))
    with plt.rc_context(_RC):
        fig, axes = plt.subplots(
            nrows, ncols, figsize=(2.2 * ncols + 0.6, 1.75 * nrows + 1.4), squeeze=False
        )
        for ax in axes.ravel()[len(methods) :]:
            ax.axis("off")
        if not methods:
            axes[0, 0].text(0.5, 0.5, "no iterative method in this run", ha="center", va="center")
        seen_marks: set[str] = set()
        ranking_seen = False
        for ax, method in zip(axes.ravel(), methods, strict=False):
            g = curves[curves["method"] == method].sort_values("h")
            if g["kind"].iloc[0] == "ranking":
                g = g.iloc[:1]  # one fit serves every h
            status = _status(g)
            gaps, finals, n_iter = [], set(), 1
            for i, r in g.iterrows():
                y, cut = cut_curve(r["objective_curve"])
                if y.size == 0:
                    continue
                gap = relative_gap(y)
                gaps.append(gap)
                finals.add(float(y[-1]))
                t = np.arange(1, y.size + 1)
                n_iter = max(n_iter, y.size)
                ranking = r["kind"] != "subset"
                ranking_seen |= ranking
                color = _RANKING_COLOR if ranking else h_color.get(int(r["h"]), _RANKING_COLOR)
                ax.plot(t, gap, color=color, lw=0.9)
                if cut or status[i] == "diverged":
                    ax.plot(
                        t[-1],
                        gap[-1],
                        ls="",
                        marker="x",
                        color="black",
                        ms=7,
                        mew=2,
                        zorder=5,
                        clip_on=False,
                    )
                    seen_marks.add("diverged")
                if status[i] == "not_converged":
                    seen_marks.add("not_converged")
            allgap = np.concatenate(gaps) if gaps else np.zeros(1)
            _gap_axis(ax, allgap, finals.pop() if len(finals) == 1 else None)
            ax.xaxis.set_major_locator(MaxNLocator(integer=True, nbins=5))
            ax.ticklabel_format(axis="x", useOffset=False, style="plain")
            ax.set_xlim(1, max(n_iter, 2))
            mark = "".join(
                STATUS_MARK.get(s, "") for s in ("not_converged", "diverged") if s in set(status)
            )
            ax.set_title(
                method + mark, fontweight="bold" if method_group(method) == "seed" else "normal"
            )
            ax.grid(alpha=0.25, lw=0.5)
        for c in range(ncols):  # "iteration" under the lowest panel of each column
            below = [axes[r, c] for r in range(nrows) if r * ncols + c < len(methods)]
            if below:
                below[-1].set_xlabel("iteration")
        fig.supylabel("(f − f_min) / |f_min|   (symlog)")
        handles = [Line2D([], [], color=h_color[h], lw=1.2) for h in hs]
        labels = [f"h = {h}" for h in hs]
        if ranking_seen:
            handles.append(Line2D([], [], color=_RANKING_COLOR, lw=1.2))
            labels.append("one fit for all h (ranking)")
        if "diverged" in seen_marks:
            handles.append(Line2D([], [], ls="", marker="x", color="black", ms=7, mew=2))
            labels.append("‡ diverged: cut at the last finite value")
        if handles:
            fig.legend(
                handles,
                labels,
                loc="lower center",
                ncol=min(len(handles), 6),
                frameon=False,
                bbox_to_anchor=(0.5, 0.0),
            )
        note = "y: relative gap to the lowest objective value f_min the fit reached (0: at f_min)"
        note += "\nbold: seed methods"
        if "not_converged" in seen_marks:
            note += "; † did not converge (tolerance not met within max_iter)"
        fig.suptitle(f"{base}: convergence of the label-free settings\n{note}")
        fig.tight_layout(rect=(0, 0.045 if handles else 0, 1, 1))
        return save(fig, Path(path), dpi=PAPER_DPI)


def _uses_graph(method: str, df: pd.DataFrame | None = None) -> bool:
    """Whether the method's default setting takes a kNN graph: from the results'
    ``uses_graph`` column (recorded by the evaluation), else from the registry (which
    imports every method and scikit-learn: seconds)."""
    if df is not None and "uses_graph" in df:
        known = df.loc[df["method"] == method, "uses_graph"].dropna()
        if len(known):
            return bool(known.any())
    return _registry_uses_graph(method)


@cache
def _registry_uses_graph(method: str) -> bool:
    try:
        from ..registry import get_method, make_estimator

        spec = get_method(method)
        est = make_estimator(method, spec.defaults, n_features_to_select=1, n_clusters=2)
        return est.graph_spec() is not None
    except Exception:
        return False


def plot_runtime(df: pd.DataFrame, base: str, path, save: Saver = save_figure):
    """Wall-clock seconds per fit of the label-free settings (mean, min–max over the fits
    of a subset method), log x. Excludes the kNN graph (hatched bars: built once, by the
    fit job that uses it or by a graph job when several share it), data loading and the
    k-means evaluation. A method with a fit over
    the compute budget: a cross-hatched bar at the longest time spent (where it was
    stopped; a memory refusal stops at once) and a ``§ budget exceeded`` label."""
    plt = _pyplot()
    from matplotlib.patches import Patch

    free = df[df["label_free"]]
    # a ranking/full method's one fit is repeated on every h row: count it once
    once = free["kind"] != "subset"
    free = pd.concat([free[~once], free[once].drop_duplicates(["method", "pid"])])
    stats = free.groupby("method")["fit_seconds"].agg(["mean", "min", "max", "size"])
    over = (_status(free) == "budget_exceeded").groupby(free["method"]).sum()
    stats["over"] = over.reindex(stats.index, fill_value=0)
    # over the budget: the bar shows the time spent until the fit was stopped
    stats.loc[stats["over"] > 0, "mean"] = stats.loc[stats["over"] > 0, "max"]
    stats = stats.sort_values("mean")
    with plt.rc_context(_RC):
        fig, ax = plt.subplots(figsize=(5.6, 0.22 * len(stats) + 1.5))
        y = np.arange(len(stats))
        positive = stats["mean"][stats["mean"] > 0]
        floor = 10.0 ** np.floor(np.log10(positive.min() / 2)) if len(positive) else 1e-4
        colors = [method_style(m)["color"] for m in stats.index]
        hatches = [
            "xxx" if stats.loc[m, "over"] else "////" if _uses_graph(m, free) else ""
            for m in stats.index
        ]
        bars = ax.barh(
            y,
            np.maximum(stats["mean"].to_numpy(), floor),
            color=colors,
            alpha=0.85,
            edgecolor="white",
            height=0.7,
        )
        for b, h in zip(bars, hatches, strict=True):
            b.set_hatch(h)
        multi = (stats["size"] > 1) & (stats["over"] == 0)
        ax.errorbar(
            stats.loc[multi, "mean"].clip(lower=floor),
            y[multi.to_numpy()],
            xerr=[
                (stats["mean"] - stats["min"])[multi].clip(lower=0),
                (stats["max"] - stats["mean"])[multi].clip(lower=0),
            ],
            fmt="none",
            ecolor="0.2",
            elinewidth=0.8,
            capsize=2,
        )
        for yi, (_, r) in zip(y, stats.iterrows(), strict=True):
            label = _fmt_seconds(r["mean"])
            if r["over"]:
                label = f"§ budget exceeded ({int(r['over'])} of {int(r['size'])} fits)"
            ax.text(
                r["max"] * 1.15 if r["max"] > floor else floor * 1.15,
                yi,
                label,
                va="center",
                fontsize=6.5,
            )
        ax.set_yticks(y, stats.index)
        for lab in ax.get_yticklabels():
            if method_group(lab.get_text()) == "seed":
                lab.set_fontweight("bold")
        ax.set_xscale("log")
        ax.set_xlim(floor / 1.5, max(stats["max"].max(), floor) * 8)
        ax.set_ylim(-0.6, len(stats) - 0.4)
        ax.set_xlabel("wall-clock seconds per fit (log scale)")
        ax.grid(axis="x", alpha=0.25, lw=0.5)
        ax.set_title(
            f"{base}: fit time per fit, label-free default settings\n"
            "kNN-graph construction NOT included (built once per data set and graph\n"
            "spec); data loading and k-means evaluation not included either",
            fontsize=8,
        )
        legend = [
            Patch(
                facecolor="0.75",
                edgecolor="white",
                hatch="////",
                label="uses a kNN graph (built once)",
            )
        ]
        if stats["over"].any():
            legend.append(
                Patch(
                    facecolor="0.75",
                    edgecolor="white",
                    hatch="xxx",
                    label="§ over the compute budget: time until stopped",
                )
            )
        if multi.any():
            legend.append(
                plt.Line2D(
                    [],
                    [],
                    color="0.2",
                    lw=0.8,
                    marker="|",
                    ms=5,
                    label="min–max over h (one fit per h)",
                )
            )
        ax.legend(handles=legend, loc="lower right", frameon=False)
        fig.tight_layout()
        return save(fig, Path(path), dpi=PAPER_DPI)


def _fmt_seconds(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:.0f} µs"
    if s < 1:
        return f"{s * 1e3:.0f} ms"
    return f"{s:.1f} s"


def plot_dataset(
    df: pd.DataFrame, sel: pd.DataFrame, base: str, outdir: str | Path, save: Saver = save_figure
) -> list[Path]:
    """``acc_vs_h.png``, ``nmi_vs_h.png``, ``convergence.png`` and ``runtime.png``."""
    outdir = Path(outdir)
    written = [
        plot_metric_vs_h(sel, base, m, outdir / f"{m}_vs_h.png", save) for m in ("acc", "nmi")
    ]
    written.append(plot_convergence(df, base, outdir / "convergence.png", save))
    written.append(plot_runtime(df, base, outdir / "runtime.png", save))
    return written
