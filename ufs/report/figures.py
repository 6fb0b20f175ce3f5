"""Per-data-set figures: ACC/NMI against h, convergence, run time.

Every figure is written twice, atomically (:func:`save_figure`): a PNG for screens
(:data:`PNG_DPI`) and a vector PDF beside it for papers (same name, ``.pdf``; TrueType
fonts, for LaTeX). The text is DejaVu Sans, matplotlib's default, as a copy cut to the
characters the figures write (:mod:`ufs.report.fonts`): the same drawing, cheaper PDFs.

**One style per method** (:func:`method_style`), the same in every figure, data set and run
(fixed per registered name, never derived from which methods a run contains):

* the *seed* methods (:data:`SEED_METHODS`: the five methods whose papers this benchmark
  reproduces, and their declared variants; this is the one definition of the term) take the
  five strong Okabe–Ito hues, used by no other method; solid lines. A variant keeps its
  parent's hue with another marker and a dashed line, and is drawn below its parent;
* the baselines take Paul Tol's *muted* palette (nine hues, none an Okabe–Ito seed hue),
  dash-dotted; a hue serves at most two baselines, one in each baseline panel, with
  different markers and line styles, so that no panel shows a hue twice;
* the references (no selection, chance, largest variance) are black or grey, dashed, drawn
  beneath everything.

Markers are fillable (a hollow marker means "not converged"; ``x`` is reserved for "diverged").

**Legibility with ~25 methods: small multiples** (:func:`method_group`): one row of panels
per group — seed methods, the baselines of the seed papers' tables, further baselines —
with the references repeated in every row; at most eight methods per panel, each in its
own hue. Points are dodged around each h.

* ``acc_vs_h`` / ``nmi_vs_h``: rows as above × columns label-tuned / label-free, a shared
  y axis in % (as the tables) clipped to [0, 100]; ±1 std bars for the seed methods,
  clipped to [0, 100]; h on a log axis (labelled so) when it spans a factor of 6 or more.
* ``convergence``: one panel per iterative method (label-free setting), the relative gap
  to the lowest objective value the fit reached on a symlog axis; a diverged curve stops at
  its last finite value, marked ×. A method whose objective is not monotone by design
  (:data:`NON_MONOTONE`, from ``docs/methods.md`` and the estimators' docstrings) says so in
  its panel: an increase there is not a failure.
* ``runtime``: CPU time per fit (label-free settings; process CPU time, which a loaded
  machine hardly changes, where the results record it — wall-clock time of older results,
  said on the axis) on a log axis that starts
  at the fastest fit of the figure (the data's own minimum, printed in the axis label), so a
  bar's length is how many decades the method is slower than the fastest fit; the method's
  marker sits at the end of its bar. The kNN graph of a graph-based method is built once per
  data set (in the fit job that uses it, or in a graph job when several share it) and **not**
  included. A method with a fit over the compute budget gets a cross-hatched bar at the
  longest time spent (where it was stopped) and a ``§ budget exceeded`` label.

Fit status marks as in the tables (:mod:`ufs.report.aggregate`): a hollow marker is a point
whose fit did not converge (†), a black × one whose fit diverged (‡); a fit over the
compute budget has no value: a ``§`` at the bottom of the panel, at its h.

Size (~1000 lines): the three per-data-set figures (scores against h, convergence, CPU
time) and the style they share (method groups, colour-blind-safe palettes, markers,
status marks, atomic PNG+PDF saving); a style change must reach all three, so they stay
with it.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd

from ..fileio import write_with
from ..pipeline.status import STATUS_MARK
from .fonts import in_figure_font

__all__ = [
    "SEED_METHODS",
    "BASELINE_METHODS",
    "FURTHER_BASELINES",
    "NEURAL_METHODS",
    "REFERENCE_METHODS",
    "NON_MONOTONE",
    "OKABE_ITO",
    "TOL_MUTED",
    "method_group",
    "method_style",
    "vector_path",
    "cut_curve",
    "relative_gap",
    "plot_metric_vs_h",
    "plot_convergence",
    "plot_runtime",
    "runtime_stats",
    "runtime_origin",
    "clipped_yerr",
    "plot_dataset",
    "save_figure",
]

#: the seed methods: the five whose papers the benchmark reproduces (README, method table)
#: and their declared variants (registry role ``variant``)
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
#: the baselines of the seed papers' tables (README, method table)
BASELINE_METHODS = (
    "laplacian_score",
    "mcfs",
    "udfs",
    "ndfs",
    "rufs",
    "eufs",
    "rsr",
    "sogfs",
)
#: further baselines (of FSBC's tables and SPCAFS's figures, public codes); an unlisted
#: method joins them
FURTHER_BASELINES = (
    "fsasl",
    "urafs",
    "nsslfs",
    "rne",
    "lrpfs_ma2024",
    "sf2sog",
    "spec",
    "spec_skfeature",
)
#: the neural selectors (the optional ``neural`` extra)
NEURAL_METHODS = ("cae", "ipcae", "lscae")
#: no selection, chance, largest raw variance
REFERENCE_METHODS = ("all_features", "random", "max_variance")
GROUPS = ("seed", "baseline", "further", "neural", "reference")
GROUP_TITLES = {
    "seed": "seed methods",
    "baseline": "baselines of the seed papers",
    "further": "further baselines",
    "neural": "neural selectors",
    "reference": "references",
}

#: methods whose recorded objective is not monotone by design (default settings), with
#: the reason (docs/methods.md and the estimators' docstrings)
NON_MONOTONE = {
    "kmeans_ufs": "ADMM (Algorithm 1): no descent guarantee",
    "dgufs": "ADMM on a non-convex problem",
    "eufs": "ADMM: no monotone decrease",
    "fsbc": "multiplier updates (λ > 0)",
    "fsbc_nobal": "a change of support can raise it",
    "sogfs": "λ and the candidate sets change",
    "urafs": "the W-step is not a descent step",
    "fsasl": "relaxed W-step, inexact lassos",
    "rne": "ADMM, growing penalty: no proof",
    "lrpfs_ma2024": "the authors' updates oscillate",
}

#: the PNGs' resolution: they are for screens (the summary, the HTML report, the README;
#: a 7-inch figure is ~1 000 pixels wide), the PDF twin is what a paper takes (vector).
#: 300 dpi cost ~10 % more of a data set's figure job's CPU for pixels no screen shows
PNG_DPI = 150
_RANKING_COLOR = "0.35"  # convergence: the one fit of a ranking method
_RC = {
    "font.size": 8,
    "axes.titlesize": 8.5,
    "axes.labelsize": 8,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "legend.fontsize": 7,
    "figure.titlesize": 9.5,
    # laid out at the PNG's resolution: the PNG then reuses the layout's text measurements
    # (~7 % of a data set's figures' CPU), and what is measured to fit is what is drawn
    "figure.dpi": PNG_DPI,
    "axes.formatter.useoffset": False,  # no "+1e2" / "1e6" offset text above the axes
    # plain-text tick labels: mathtext laid out every number of every axis (~9 % of a data
    # set's figures' CPU); log axes' decades (10^k) keep their own mathtext labels
    "axes.formatter.use_mathtext": False,
}

#: Okabe & Ito (2008), colour-blind safe: the seed methods' hues (black: a reference)
OKABE_ITO = {
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "green": "#009E73",
    "orange": "#E69F00",
    "purple": "#CC79A7",
    "black": "#000000",
}
#: Paul Tol's muted qualitative palette, colour-blind safe: the baselines' hues
TOL_MUTED = (
    "#332288",  # indigo
    "#88CCEE",  # cyan
    "#44AA99",  # teal
    "#117733",  # green
    "#999933",  # olive
    "#DDCC77",  # sand
    "#CC6677",  # rose
    "#882255",  # wine
    "#AA4499",  # purple
)
_OI = OKABE_ITO
_INDIGO, _CYAN, _TEAL, _GREEN, _OLIVE, _SAND, _ROSE, _WINE, _PURPLE = TOL_MUTED

# (colour, marker, linestyle) per registered method; tests/test_figures.py checks that the
# triples are unique, that seed hues are exclusive and that no panel repeats a hue
_STYLES: dict[str, tuple[str, str, str]] = {
    # seed methods: Okabe–Ito, solid; a variant: its parent's hue, dashed, another marker
    "kmeans_ufs": (_OI["blue"], "o", "-"),
    "kmeans_ufs_exact": (_OI["blue"], "p", "--"),
    "dgufs": (_OI["vermillion"], "s", "-"),
    "golfs": (_OI["green"], "^", "-"),
    "spcafs": (_OI["orange"], "D", "-"),
    "spcafs_raw": (_OI["orange"], "h", "--"),
    "fsbc": (_OI["purple"], "v", "-"),
    "fsbc_nobal": (_OI["purple"], "<", "--"),
    # baselines of the seed papers: Tol muted, dash-dotted
    "laplacian_score": (_INDIGO, "o", "-."),
    "mcfs": (_CYAN, "s", "-."),
    "udfs": (_TEAL, "^", "-."),
    "ndfs": (_GREEN, "D", "-."),
    "rufs": (_OLIVE, "v", "-."),
    "eufs": (_SAND, "<", "-."),
    "rsr": (_ROSE, ">", "-."),
    "sogfs": (_WINE, "p", "-."),
    # further baselines: Tol muted again (another panel), other markers, dotted
    "fsasl": (_PURPLE, "h", ":"),
    "urafs": (_INDIGO, "8", ":"),
    "nsslfs": (_TEAL, "*", ":"),
    "rne": (_ROSE, "d", ":"),
    "lrpfs_ma2024": (_OLIVE, "H", ":"),
    "sf2sog": (_GREEN, "P", ":"),
    "spec": (_CYAN, "o", ":"),
    "spec_skfeature": (_CYAN, "D", "-."),
    # neural selectors: Tol muted (their own panel), solid
    "cae": (_PURPLE, "o", "-"),
    "ipcae": (_SAND, "s", "-"),
    "lscae": (_INDIGO, "^", "-"),
    # references: black and greys, dashed
    "all_features": (_OI["black"], "o", "--"),
    "random": ("#777777", "o", "--"),
    "max_variance": ("#444444", "s", "-."),
}
# unregistered names: a Tol muted hue, a marker and a line style from a hash of the name
_FALLBACK_MARKERS = ("o", "s", "^", "v", "D", "<", ">", "p", "h", "8", "d", "H", "*", "P")
_FALLBACK_LS = ("-.", ":")


def method_group(name: str) -> str:
    """``"seed"``, ``"baseline"`` (of the seed papers), ``"further"`` (baselines),
    ``"neural"`` or ``"reference"``; an unlisted method goes by its registry role (a reference, or a
    variant in its parent's group), else it is a further baseline."""
    if name in SEED_METHODS:
        return "seed"
    if name in BASELINE_METHODS:
        return "baseline"
    if name in NEURAL_METHODS:
        return "neural"
    if name in REFERENCE_METHODS:
        return "reference"
    from ..registry import available_methods, get_method

    if name in available_methods():  # a method a user registered
        spec = get_method(name)
        if spec.role == "reference":
            return "reference"
        if spec.role == "variant" and spec.variant_of and spec.variant_of != name:
            return method_group(spec.variant_of)
    return "further"


@cache
def method_style(name: str) -> dict[str, str]:
    """``{"color", "marker", "ls"}`` of a method: fixed for the registered methods, derived
    from a hash of the name otherwise (stable across runs, figures and data sets); a method
    a user registered as a reference is grey and dashed like the references."""
    if name in _STYLES:
        color, marker, ls = _STYLES[name]
    else:
        k = zlib.crc32(name.encode())
        color = TOL_MUTED[k % len(TOL_MUTED)]
        marker = _FALLBACK_MARKERS[(k // 16) % len(_FALLBACK_MARKERS)]
        ls = _FALLBACK_LS[(k // 256) % len(_FALLBACK_LS)]
        if method_group(name) == "reference":
            color, ls = "#999999", "--"
    return {"color": color, "marker": marker, "ls": ls}


def _method_order(names) -> list[str]:
    """Seed methods, baselines, further baselines, references; each in the order of the
    lists above (a variant right after its parent)."""
    known = SEED_METHODS + BASELINE_METHODS + FURTHER_BASELINES + NEURAL_METHODS + REFERENCE_METHODS
    rank = {m: i for i, m in enumerate(known)}
    return sorted(
        set(names), key=lambda m: (GROUPS.index(method_group(m)), rank.get(m, len(rank)), m)
    )


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


def vector_path(path: str | Path) -> Path:
    """The vector twin of a figure's PNG: the same name with ``.pdf``."""
    return Path(path).with_suffix(".pdf")


def save_figure(fig, path: str | Path, dpi: int = PNG_DPI, *, vector: bool = True, **kw) -> Path:
    """Write the PNG ``path`` and (``vector``) its PDF twin (:func:`vector_path`), each
    atomically, and free the figure; ``kw`` go to ``savefig`` (e.g. ``bbox_inches``).

    The PDF embeds its fonts as TrueType (not Type 3, which some publishers refuse) and
    carries no creation date. ``ps.fonttype`` is set to 42 as well: matplotlib 3.11's PDF
    writer sizes its font subsets by it, and with Type 3's 256 it embedded every font
    whose text has a character past Latin-1 (the figures' †, ◊, —) twice, as two
    subsets, each costing a parse of the whole font file (13 -> 11 font
    programs in digits' four PDFs). The per-data-set figures are laid out by ``tight_layout``
    before they are saved, so the canvas is written as it is: ``bbox_inches="tight"``
    would render the figure once more to measure it (~30 % of a data set's aggregation
    job); the CD diagrams pass it. ``tight_layout`` leaves a placeholder layout
    engine behind, which makes every ``savefig`` draw the figure once more before it
    writes (to lay it out, though a placeholder lays out nothing): it is removed first,
    which leaves the files as they were and saves ~15 % of the figures' CPU (5.6 -> 4.7
    CPU-s for digits' four figures)."""
    import matplotlib.pyplot as plt
    from matplotlib.layout_engine import PlaceHolderLayoutEngine

    path = Path(path)
    if isinstance(fig.get_layout_engine(), PlaceHolderLayoutEngine):
        fig.set_layout_engine(None)
    write_with(path, lambda p: fig.savefig(p, dpi=dpi, format="png", **kw))
    if vector:
        with plt.rc_context({"pdf.fonttype": 42, "ps.fonttype": 42}):
            write_with(
                vector_path(path),
                lambda p: fig.savefig(p, format="pdf", metadata={"CreationDate": None}, **kw),
            )
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


PROTOCOL_TITLES = {  # the panels' columns, label-free first as in every table
    "label_free": "label-free\ndocumented default parameters",
    "oracle": "label-tuned (oracle)\nbest grid setting per h — uses labels",
}
_LW = {"seed": 1.5, "baseline": 1.1, "further": 1.1, "neural": 1.1, "reference": 1.0}


def _h_label(hs: list[int]) -> str:
    return "h, number of selected features" + (" (log scale)" if _log_h(hs) else "")


def _panel_groups(sel: pd.DataFrame) -> list[str]:
    """The rows of the small multiples: the method groups present (references alone: one)."""
    present = set(sel["method"].map(method_group))
    return [g for g in GROUPS[:-1] if g in present] or ["reference"]


def _roles(df: pd.DataFrame) -> dict[str, str]:
    """method → registry role, from the table's ``role`` column (empty without it)."""
    if "role" not in df:
        return {}
    return df.dropna(subset=["role"]).groupby("method")["role"].first().to_dict()


def _zorder(method: str, role: str | None) -> float:
    """References beneath everything, then baselines, then seed methods; a variant just
    below the methods of its group, so that it never hides its parent."""
    z = {"reference": 1.5, "seed": 3.5}.get(method_group(method), 2.5)
    return z - 0.4 if role == "variant" else z


def clipped_yerr(mean, std, top: float = 100.0) -> np.ndarray:
    """``[lower, upper]`` error bar lengths of ``mean ± std`` clipped to ``[0, top]``."""
    mean, std = np.asarray(mean, dtype=float), np.asarray(std, dtype=float)
    return np.vstack([np.minimum(std, mean), np.minimum(std, top - mean)]).clip(min=0)


@in_figure_font
def plot_metric_vs_h(sel: pd.DataFrame, base: str, metric: str, path, save: Saver = save_figure):
    """ACC or NMI (%) against h: one row per method group (:func:`method_group`), columns
    label-tuned / label-free; references in every row; ±1 std bars (clipped to [0, 100])
    for the seed methods; points dodged around each h."""
    plt = _pyplot()
    groups = _panel_groups(sel)
    roles = _roles(sel)
    hs = sorted({int(h) for h in sel.loc[sel["h_label"] != "all", "h"]})
    with plt.rc_context(_RC):
        fig, axes = plt.subplots(
            len(groups),
            2,
            figsize=(8.6, 0.9 + 2.5 * len(groups)),
            sharex=True,
            sharey=True,
            squeeze=False,
        )
        flagged: set[str] = set()
        for r, group in enumerate(groups):
            shown = [
                m for m in _method_order(sel["method"]) if method_group(m) in (group, "reference")
            ]
            flagged |= _draw_row(axes[r], sel, shown, metric, hs, roles)
            axes[r, 0].set_ylabel(f"{GROUP_TITLES[group]}\n{metric.upper()} (%)")
            _row_legend(axes[r, 1], shown, group)
        for ax, protocol in zip(axes[0], PROTOCOL_TITLES, strict=True):
            ax.set_title(PROTOCOL_TITLES[protocol])
        for ax in axes.ravel():
            ax.grid(alpha=0.25, lw=0.5)
            _h_axis(ax, hs)
        for ax in axes[-1]:
            ax.set_xlabel(_h_label(hs))
        lo, hi = axes[0, 0].get_ylim()  # a shared axis: within the metric's range
        axes[0, 0].set_ylim(max(lo, 0.0), min(hi, 100.0))
        marks = _status_handles(flagged) + _band_handles(sel, metric, "seed" in groups)
        rows = _figure_legend(fig, marks)  # legend rows below the panels
        fig.suptitle(f"{base}: {metric.upper()} (%) against h (mean over k-means restarts)")
        fig.tight_layout(rect=(0, 0.025 + 0.022 * rows, 1, 1))
        return save(fig, Path(path), dpi=PNG_DPI)


def _draw_row(axes_row, sel, shown: list[str], metric: str, hs, roles) -> set[str]:
    """The methods ``shown`` in one row of panels (one per protocol); their status marks."""
    lines = [m for m in shown if not (sel.loc[sel["method"] == m, "h_label"] == "all").all()]
    shift = dict(zip(lines, _dodge(hs, len(lines)), strict=True))
    flagged: set[str] = set()
    for ax, protocol in zip(axes_row, PROTOCOL_TITLES, strict=True):
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
                zorder=_zorder(method, roles.get(method)),
            )
    return flagged


def _row_legend(ax, shown: list[str], group: str) -> None:
    ax.legend(
        [_handle(m) for m in shown],
        shown,
        loc="upper left",
        bbox_to_anchor=(1.02, 1.0),
        frameon=False,
        title=GROUP_TITLES[group] + " + references",
        title_fontsize=7,
        handlelength=2.6,
    )


def _status_handles(flagged: set[str]) -> list[tuple]:
    """Legend entries of the fit-status marks that occur."""
    from matplotlib.lines import Line2D

    entries = {
        "not_converged": (
            Line2D([], [], ls="", marker="o", mfc="white", mec="0.3", mew=1.2, ms=5),
            "† not converged",
        ),
        "diverged": (
            Line2D([], [], ls="", marker="x", color="black", mew=1.5, ms=5),
            "‡ diverged",
        ),
        "budget_exceeded": (
            Line2D([], [], ls="", marker="$§$", color="0.3", ms=6),
            "§ budget exceeded (no value)",
        ),
        "degenerate": (
            Line2D(
                [],
                [],
                ls="",
                marker="D",
                mfc="none",
                mec="black",
                mew=0.6,
                ms=MARK_WIDTH["degenerate"],
            ),
            "◊ degenerate (round-off or a trivial rule decided it)",
        ),
    }
    return [entries[s] for s in entries if s in flagged]


def _band_handles(sel: pd.DataFrame, metric: str, errorbars: bool) -> list[tuple]:
    """Legend entries of the chance reference's band and of the error bars."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    out = []
    band = f"{metric}_p05"
    if band in sel and sel[band].notna().any():
        n_draws = int(sel["n_draws"].max()) if "n_draws" in sel else 0
        out.append((Patch(color="0.5", alpha=0.25, lw=0), f"random: 5-95 % over {n_draws} draws"))
    if errorbars:
        out.append(
            (
                Line2D([], [], ls="", marker="|", color="0.3", ms=8),
                "±1 std over k-means restarts (seed methods), clipped to [0, 100]",
            )
        )
    return out


def _figure_legend(fig, marks: list[tuple]) -> int:
    """The marks' legend under the panels, in as many columns (at most 3) as fit the
    figure's width, measured at its resolution (:data:`PNG_DPI`: hinted text is wider at
    small pixel sizes; three columns of every mark were ~0.2 in wider than the figure at
    150 dpi, and the PNG lost its first and last entries). Returns its number of rows."""
    from matplotlib.lines import Line2D

    handles = [h for h, _ in marks] + [Line2D([], [], ls="")]
    labels = [t for _, t in marks] + ["points dodged around each h for legibility"]

    def place(ncol: int):
        return fig.legend(
            handles,
            labels,
            loc="lower center",
            ncol=ncol,
            frameon=False,
            bbox_to_anchor=(0.5, 0.0),
            handlelength=1.2,
        )

    renderer = fig.canvas.get_renderer()
    ncol = min(len(labels), 3)
    legend = place(ncol)
    while ncol > 1 and legend.get_window_extent(renderer).width > fig.bbox.width:
        legend.remove()
        ncol -= 1
        legend = place(ncol)
    return -(-len(labels) // ncol)


def _handle(method: str):
    from matplotlib.lines import Line2D

    st = method_style(method)
    lw = _LW[method_group(method)]
    if method == "all_features":
        return Line2D([], [], color=st["color"], ls=st["ls"], lw=lw)
    return Line2D([], [], color=st["color"], ls=st["ls"], marker=st["marker"], ms=3.5, lw=lw)


def _draw_method(
    ax,
    g: pd.DataFrame,
    method: str,
    metric: str,
    shift=None,
    *,
    errorbars: bool = False,
    zorder: float = 3.0,
) -> set[str]:
    """One method's line in % (a horizontal line for a method without h), its error bars
    (clipped to [0, 100]) and its fit-status marks (hollow marker: not converged; ×:
    diverged; a ``§`` at the bottom of the panel: over the compute budget, no value)."""
    st = method_style(method)
    lw = _LW[method_group(method)]
    if (g["h_label"] == "all").all():
        value = 100 * g[f"{metric}_mean"].iloc[0]
        if np.isnan(value):  # over the budget: nothing to draw
            return {"budget_exceeded"} if (_status(g) == "budget_exceeded").any() else set()
        ax.axhline(value, color=st["color"], ls=st["ls"], lw=lw, zorder=zorder)
        return set()
    g = g[g["h_label"] != "all"]
    x = (shift or np.asarray)(g["h"].to_numpy(dtype=float))
    mean = 100 * g[f"{metric}_mean"].to_numpy(dtype=float)
    std = 100 * g[f"{metric}_std"].to_numpy(dtype=float)
    ax.plot(
        x,
        mean,
        color=st["color"],
        ls=st["ls"],
        marker=st["marker"],
        ms=POINT_SIZE,
        lw=lw,
        zorder=zorder,
    )
    lo_col, hi_col = f"{metric}_p05", f"{metric}_p95"
    if lo_col in g and g[lo_col].notna().all():  # a chance reference: its 5-95 % band
        ax.fill_between(
            x,
            100 * g[lo_col].to_numpy(dtype=float),
            100 * g[hi_col].to_numpy(dtype=float),
            color=st["color"],
            alpha=0.15,
            lw=0,
            zorder=0,
        )
    if errorbars:
        ax.errorbar(
            x,
            mean,
            yerr=clipped_yerr(mean, std),
            fmt="none",
            ecolor=st["color"],
            elinewidth=0.8,
            alpha=0.7,
            zorder=zorder,
        )
    return _status_marks(ax, x, mean, _status(g).to_numpy(), st)


#: a data point's marker size (points) in the metric-vs-h figures
POINT_SIZE = 3.5
#: the status marks' widths (points; scatter sizes are their squares): each rings its point
#: tightly, at most 1.5 pt beyond it on each side, so that it hides no neighbouring point
#: (the degenerate diamonds, 8.4 pt wide, covered the other methods' points)
MARK_WIDTH = {
    "not_converged": POINT_SIZE + 1.0,
    "diverged": POINT_SIZE + 1.5,
    "degenerate": POINT_SIZE + 3.0,
}


def _status_marks(ax, x, y, status, st) -> set[str]:
    """Hollow markers (not converged), × (diverged), § (budget exceeded) and diamonds
    (degenerate) at the points of one method, each no wider than its point plus 3 pt
    (:data:`MARK_WIDTH`); the statuses marked."""
    flagged = set()
    nc, dv = status == "not_converged", status == "diverged"
    if nc.any():  # hollow: the fit did not converge
        ax.scatter(
            x[nc],
            y[nc],
            s=MARK_WIDTH["not_converged"] ** 2,
            marker=st["marker"],
            facecolors="white",
            edgecolors=st["color"],
            linewidths=1.0,
            zorder=4.5,
        )
        flagged.add("not_converged")
    if dv.any():  # cross: the fit diverged
        ax.scatter(
            x[dv], y[dv], s=MARK_WIDTH["diverged"] ** 2, marker="x", color="black", lw=1.2, zorder=5
        )
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
            y[dg],
            s=MARK_WIDTH["degenerate"] ** 2,
            marker="D",
            facecolors="none",
            edgecolors="black",
            lw=0.6,
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


@in_figure_font
def plot_convergence(df: pd.DataFrame, base: str, path, save: Saver = save_figure):
    """One panel per iterative method (label-free setting): relative gap to the lowest
    objective value reached, symlog y, integer iteration ticks; one line per fit (per h
    for a subset method, one for a ranking method); diverged curves cut and marked ×; a
    method of :data:`NON_MONOTONE` says in its panel why its objective may rise."""
    plt = _pyplot()
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
        seen: set[str] = set()
        for ax, method in zip(axes.ravel(), methods, strict=False):
            seen |= _convergence_panel(ax, curves[curves["method"] == method], h_color)
        for c in range(ncols):  # "iteration" under the lowest panel of each column
            below = [axes[r, c] for r in range(nrows) if r * ncols + c < len(methods)]
            if below:
                below[-1].set_xlabel("iteration")
        fig.supylabel("(f − f_min) / |f_min|   (symlog)")
        handles = _convergence_legend(fig, hs, h_color, seen)
        fig.suptitle(f"{base}: convergence of the label-free settings\n{_convergence_note(seen)}")
        fig.tight_layout(rect=(0, 0.045 if handles else 0, 1, 1))
        return save(fig, Path(path), dpi=PNG_DPI)


def _convergence_panel(ax, g: pd.DataFrame, h_color: dict) -> set[str]:
    """One method's objective curves; what the figure's legend and note must explain
    (``diverged``, ``not_converged``, ``ranking``, ``non_monotone``)."""
    from matplotlib.ticker import MaxNLocator

    method = g["method"].iloc[0]
    g = g.sort_values("h")
    if g["kind"].iloc[0] == "ranking":
        g = g.iloc[:1]  # one fit serves every h
    status = _status(g)
    seen: set[str] = {s for s in ("not_converged",) if s in set(status)}
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
        if ranking:
            seen.add("ranking")
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
            seen.add("diverged")
    allgap = np.concatenate(gaps) if gaps else np.zeros(1)
    _gap_axis(ax, allgap, finals.pop() if len(finals) == 1 else None)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, nbins=5))
    ax.ticklabel_format(axis="x", useOffset=False, style="plain")
    ax.set_xlim(1, max(n_iter, 2))
    mark = "".join(
        STATUS_MARK.get(s, "") for s in ("not_converged", "diverged") if s in set(status)
    )
    ax.set_title(method + mark, fontweight="bold" if method_group(method) == "seed" else "normal")
    ax.grid(alpha=0.25, lw=0.5)
    if method in NON_MONOTONE:
        _headroom(ax, 0.3)  # the note sits above the curves
        ax.text(
            0.97,
            0.95,
            f"not monotone by design:\n{NON_MONOTONE[method]}",
            transform=ax.transAxes,
            ha="right",
            va="top",
            fontsize=5.5,
            style="italic",
            color="0.25",
            bbox={"fc": "white", "ec": "none", "alpha": 0.8, "pad": 1},
            zorder=6,
        )
        seen.add("non_monotone")
    return seen


def _headroom(ax, frac: float) -> None:
    """Raise the top of the y axis so that the top ``frac`` of the panel stays empty
    (in the axis' own scale: linear or symlog)."""
    tr = ax.yaxis.get_transform()
    lo, hi = tr.transform(np.array(ax.get_ylim()))
    ax.set_ylim(top=float(tr.inverted().transform(np.array([lo + (hi - lo) / (1 - frac)]))[0]))


def _convergence_legend(fig, hs: list[int], h_color: dict, seen: set[str]) -> list:
    """The colours of h, the ranking fits' grey and the × of a diverged curve."""
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=h_color[h], lw=1.2) for h in hs]
    labels = [f"h = {h}" for h in hs]
    if "ranking" in seen:
        handles.append(Line2D([], [], color=_RANKING_COLOR, lw=1.2))
        labels.append("one fit for all h (ranking)")
    if "diverged" in seen:
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
    return handles


def _convergence_note(seen: set[str]) -> str:
    note = "y: relative gap to the lowest objective value f_min the fit reached (0: at f_min)"
    note += "\nbold: seed methods"
    if "not_converged" in seen:
        note += "; † did not converge (tolerance not met within max_iter)"
    if "non_monotone" in seen:
        note += "\n'not monotone by design' (docs/methods.md): a rise there is no failure"
    return note


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


def runtime_stats(df: pd.DataFrame) -> pd.DataFrame:
    """Per method (label-free settings; a ranking or full method's one fit counted once):
    ``mean``, ``min``, ``max`` and ``size`` of the fit seconds, ``over`` the fits over the
    compute budget (their ``mean`` is the longest time spent); sorted by ``mean``."""
    free = df[df["label_free"]]
    once = free["kind"] != "subset"  # a ranking/full fit is repeated on every h row
    free = pd.concat([free[~once], free[once].drop_duplicates(["method", "pid"])])
    stats = free.groupby("method")[runtime_column(free)].agg(["mean", "min", "max", "size"])
    over = (_status(free) == "budget_exceeded").groupby(free["method"]).sum()
    stats["over"] = over.reindex(stats.index, fill_value=0)
    # over the budget: the bar shows the time spent until the fit was stopped
    stats.loc[stats["over"] > 0, "mean"] = stats.loc[stats["over"] > 0, "max"]
    return stats.sort_values("mean")


def runtime_column(df: pd.DataFrame) -> str:
    """``fit_cpu_seconds`` when every fit of ``df`` recorded its CPU time (the
    figure showed wall-clock time on whatever load the machine had), ``fit_seconds`` (wall
    clock) otherwise."""
    cpu = df.get("fit_cpu_seconds")
    return "fit_cpu_seconds" if cpu is not None and cpu.notna().all() else "fit_seconds"


def runtime_origin(stats: pd.DataFrame) -> float:
    """Where the log time axis starts: the fastest positive fit time of the figure (the
    data's own minimum; 1 µs when no fit took measurable time)."""
    times = stats[["mean", "min"]].to_numpy(dtype=float).ravel()
    positive = times[times > 0]
    return float(positive.min()) if positive.size else 1e-6


@in_figure_font
def plot_runtime(df: pd.DataFrame, base: str, path, save: Saver = save_figure):
    """CPU seconds (:func:`runtime_column`) per fit of the label-free settings (mean, min–max over the fits
    of a subset method) on a log axis starting at the fastest fit (:func:`runtime_origin`):
    a bar spans from there to the method's time, its marker at the end. Excludes the kNN
    graph (hatched bars: built once, by the fit job that uses it or by a graph job when
    several share it), data loading and the k-means evaluation. A method with a fit over
    the compute budget: a cross-hatched bar at the longest time spent (where it was
    stopped; a memory refusal stops at once) and a ``§ budget exceeded`` label."""
    plt = _pyplot()
    stats = runtime_stats(df)
    origin = runtime_origin(stats)
    free = df[df["label_free"]]
    with plt.rc_context(_RC):
        fig, ax = plt.subplots(figsize=(5.6, 0.22 * len(stats) + 1.6))
        y = np.arange(len(stats))
        end = stats["mean"].clip(lower=origin).to_numpy()
        hatches = [
            "xxx" if stats.loc[m, "over"] else "////" if _uses_graph(m, free) else ""
            for m in stats.index
        ]
        bars = ax.barh(
            y,
            end - origin,
            left=origin,
            color=[method_style(m)["color"] for m in stats.index],
            alpha=0.85,
            edgecolor="white",
            height=0.7,
        )
        for b, h in zip(bars, hatches, strict=True):
            b.set_hatch(h)
        for yi, m, x in zip(y, stats.index, end, strict=True):
            st = method_style(m)
            ax.plot(
                x,
                yi,
                ls="",
                marker=st["marker"],
                color=st["color"],
                mec="0.15",
                ms=4.5,
                clip_on=False,
            )
        multi = _runtime_whiskers(ax, stats, y, origin)
        _runtime_labels(ax, stats, y, origin)
        ax.set_xscale("log")
        ax.set_xlim(origin, max(stats["max"].max(), origin) * 8)
        ax.set_ylim(-0.6, len(stats) - 0.4)
        clock = (
            "CPU seconds per fit (process CPU time, hardly changed by the machine's load)"
            if runtime_column(free) == "fit_cpu_seconds"
            else "wall-clock seconds per fit (CPU time not recorded: depends on the load)"
        )
        ax.set_xlabel(
            f"{clock}\nlog scale; the axis starts at the fastest fit, {_fmt_seconds(origin)}"
        )
        ax.grid(axis="x", alpha=0.25, lw=0.5)
        ax.set_title(
            f"{base}: fit time per fit, label-free default settings\n"
            "kNN-graph construction NOT included (built once per data set and graph\n"
            "spec); data loading and k-means evaluation not included either",
            fontsize=8,
        )
        ax.legend(handles=_runtime_legend(stats, multi), loc="lower right", frameon=False)
        fig.tight_layout()
        return save(fig, Path(path), dpi=PNG_DPI)


def _runtime_whiskers(ax, stats: pd.DataFrame, y: np.ndarray, origin: float) -> pd.Series:
    """Min–max whiskers of the methods with several fits (none over the budget)."""
    multi = (stats["size"] > 1) & (stats["over"] == 0)
    ax.errorbar(
        stats.loc[multi, "mean"].clip(lower=origin),
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
    return multi


def _runtime_labels(ax, stats: pd.DataFrame, y: np.ndarray, origin: float) -> None:
    """The time (or the budget note) right of each bar; method names, seed methods bold."""
    for yi, (_, r) in zip(y, stats.iterrows(), strict=True):
        label = _fmt_seconds(r["mean"])
        if r["over"]:
            label = f"§ budget exceeded ({int(r['over'])} of {int(r['size'])} fits)"
        ax.text(max(r["max"], origin) * 1.2, yi, label, va="center", fontsize=6.5)
    ax.set_yticks(y, stats.index)
    for lab in ax.get_yticklabels():
        if method_group(lab.get_text()) == "seed":
            lab.set_fontweight("bold")


def _runtime_legend(stats: pd.DataFrame, multi: pd.Series) -> list:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    legend = [
        Patch(
            facecolor="0.75", edgecolor="white", hatch="////", label="uses a kNN graph (built once)"
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
            Line2D(
                [],
                [],
                color="0.2",
                lw=0.8,
                marker="|",
                ms=5,
                label="min–max over the fits (one per h or per draw)",
            )
        )
    return legend


def _fmt_seconds(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:.0f} µs"
    if s < 1:
        return f"{s * 1e3:.0f} ms"
    return f"{s:.1f} s"


def plot_dataset(
    df: pd.DataFrame, sel: pd.DataFrame, base: str, outdir: str | Path, save: Saver = save_figure
) -> list[Path]:
    """``acc_vs_h.png``, ``nmi_vs_h.png``, ``convergence.png`` and ``runtime.png`` (each
    with its PDF twin when ``save`` is :func:`save_figure`); returns the PNG paths."""
    outdir = Path(outdir)
    written = [
        plot_metric_vs_h(sel, base, m, outdir / f"{m}_vs_h.png", save) for m in ("acc", "nmi")
    ]
    written.append(plot_convergence(df, base, outdir / "convergence.png", save))
    written.append(plot_runtime(df, base, outdir / "runtime.png", save))
    return written
