"""A method's scores over a grid of two of its parameters, and its label-free setting's
convergence curve: the K-means UFS paper's Figures 3 and 4 (§V-C), for any
method and any two parameters of its grid.

:func:`grid_scores` reads a run's evaluation files: one row per data set, ``h`` and
setting, with both parameters' values (a setting that leaves a parameter at its class
default gets that default, from the estimator itself), the metrics' means and standard
deviations over the k-means restarts, the fit's status (:func:`ufs.pipeline.status.fit_status`,
as the tables mark it) and the scalar facts the fit recorded (``n_iter``,
``optimality_gap``, ...). :func:`plot_grid` draws one heat map per data set and quantity
with every cell's number and status mark written in it; :func:`grid_markdown` gives the
same numbers as tables; :func:`plot_curves` draws the label-free setting's objective per
iteration. ``ufs sensitivity-figure`` writes all three. Nothing here uses the labels to
choose anything: every grid point is shown.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from ..pipeline.io import read_evaluations
from ..pipeline.status import STATUS_MARK
from .fonts import in_figure_font

__all__ = ["grid_scores", "grid_markdown", "plot_grid", "plot_curves", "write_grid_report"]

METRIC_LABEL = {"acc": "ACC", "nmi": "NMI", "ari": "ARI", "ne": "NE"}


def _full_params(method: str, params: dict) -> dict:
    from ..registry import make_estimator

    return make_estimator(method, **params).get_params()


def grid_scores(eval_files: Iterable[str | Path], method: str, x: str, y: str) -> pd.DataFrame:
    """One row per (data set, h, setting) of ``method``: ``x``, ``y`` (values),
    ``label_free``, ``in_grid``, ``restarts`` (k-means), ``<metric>_mean`` / ``_std``, ``status``, the fit's scalar
    facts (``n_iter``, ...) and ``objective_curve``. ``ValueError`` when the files hold no
    fit of ``method`` or a setting lacks ``x`` or ``y``."""
    rows = []
    for ev in read_evaluations(list(eval_files)):
        if ev["method"] != method:
            continue
        params = _full_params(method, ev["params"])
        missing = [p for p in (x, y) if p not in params]
        if missing:
            raise ValueError(
                f"{method} has no parameter {missing[0]!r}; its parameters: "
                f"{', '.join(sorted(params))}"
            )
        for r in ev["results"]:
            info = {
                k: v
                for k, v in (r.get("fit_info") or {}).items()
                if isinstance(v, bool | int | float)
            }
            rows.append(
                {
                    "dataset": ev["dataset"],
                    "h": r["h"],
                    "pid": ev["pid"],
                    x: float(params[x]),
                    y: float(params[y]),
                    "label_free": bool(ev.get("label_free")),
                    "in_grid": bool(ev.get("in_grid")),
                    "restarts": int(ev.get("restarts", 0)),
                    **{k: r[k] for k in r if k.endswith("_mean") or k.endswith("_std")},
                    "status": r.get("fit_status", "ok"),
                    **info,
                    "objective_curve": r.get("objective_curve") or [],
                }
            )
    if not rows:
        raise ValueError(f"no evaluation of {method!r} in the given files")
    scores = pd.DataFrame(rows).sort_values(["dataset", "h", y, x], kind="stable")
    _check_one_per_cell(scores, x, y)
    return scores


def _fmt(v: float) -> str:
    if not np.isfinite(v):
        return "—"
    if v != 0 and (abs(v) >= 1e4 or abs(v) < 1e-3):
        return f"{v:.1e}"
    return f"{v:.3g}" if abs(v) >= 1 else f"{v:.3f}"


def _pivot(g: pd.DataFrame, x: str, y: str, col: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``col`` and the status marks of the grid points as ``y`` × ``x`` tables (a cell whose
    fit has no value, e.g. over its budget, stays, empty)."""
    grid = g[g["in_grid"]].set_index([y, x])
    values = grid[col].astype(float).unstack(x)
    marks = grid["status"].map(STATUS_MARK).fillna("").unstack(x).fillna("")
    return values, marks.reindex_like(values).fillna("")


def _check_one_per_cell(scores: pd.DataFrame, x: str, y: str) -> None:
    grid = scores[scores["in_grid"]]
    dup = grid.duplicated(["dataset", "h", x, y], keep=False)
    if dup.any():
        first = grid[dup].iloc[0]
        raise ValueError(
            f"{int(dup.sum())} grid settings share their ({x}, {y}) with another (e.g. "
            f"{first['dataset']}, h = {first['h']}, {x} = {first[x]:g}, {y} = {first[y]:g}): "
            "another parameter of the grid varies too; a figure over two parameters needs a "
            "grid over those two"
        )


def _default_text(g: pd.DataFrame, x: str, y: str, cols: Sequence[str]) -> str:
    lf = g[g["label_free"]]
    if lf.empty:
        return ""
    r = lf.iloc[0]
    vals = ", ".join(
        f"{_label(c)} {_fmt(r[c])}{STATUS_MARK.get(r['status'], '')}" for c in cols if c in r
    )
    return f"label-free default {x} = {r[x]:g}, {y} = {r[y]:g}: {vals}"


def _label(col: str) -> str:
    base = col[: -len("_mean")] if col.endswith("_mean") else col
    return METRIC_LABEL.get(base, base)


def grid_markdown(scores: pd.DataFrame, x: str, y: str, cols: Sequence[str]) -> list[str]:
    """Per data set and h, one table per quantity: rows ``y``, columns ``x``; a status mark
    (:data:`ufs.pipeline.status.STATUS_MARK`) after a cell whose fit failed or is
    degenerate; the label-free setting's values under the tables."""
    lines: list[str] = []
    for (ds, h), g in scores.groupby(["dataset", "h"], sort=True):
        lines += [f"### {ds}, h = {h}", ""]
        for col in cols:
            values, marks = _pivot(g, x, y, col)
            head = [_label(col)] + [f"{x} = {v:g}" for v in values.columns]
            lines.append("| " + " | ".join(head) + " |")
            lines.append("|" + "|".join(["---"] + ["---:"] * len(values.columns)) + "|")
            for yv, row in values.iterrows():
                cells = [f"{_fmt(v)}{marks.loc[yv, xv]}" for xv, v in row.items()]
                lines.append(f"| {y} = {yv:g} | " + " | ".join(cells) + " |")
            lines.append("")
        text = _default_text(g, x, y, cols)
        if text:
            lines += [f"*{text}.*", ""]
    return lines


@in_figure_font
def plot_grid(
    scores: pd.DataFrame, method: str, x: str, y: str, cols: Sequence[str], path, save=None
) -> Path:
    """Heat maps: a row per (data set, h), a column per quantity in ``cols``; every cell
    carries its number and status mark; the metrics are coloured on 0 to 1, other
    quantities on their own range (logarithmic when positive and spanning two decades)."""
    from .figures import _pyplot, save_figure

    plt = _pyplot()
    groups = list(scores.groupby(["dataset", "h"], sort=True))
    fig, axes = plt.subplots(
        len(groups),
        len(cols),
        figsize=(2.9 * len(cols) + 0.4, 2.5 * len(groups) + 0.5),
        squeeze=False,
    )
    for i, ((ds, h), g) in enumerate(groups):
        for j, col in enumerate(cols):
            ax = axes[i][j]
            values, marks = _pivot(g, x, y, col)
            v = values.to_numpy(dtype=float)
            metric = col.endswith("_mean")
            norm = None
            pos = v[np.isfinite(v)]
            if not metric and pos.size and pos.min() > 0 and pos.max() >= 100 * pos.min():
                from matplotlib.colors import LogNorm

                norm = LogNorm(pos.min(), pos.max())
            im = ax.imshow(
                v,
                cmap="viridis",
                aspect="auto",
                origin="lower",
                norm=norm,
                vmin=0.0 if metric else None,
                vmax=1.0 if metric else None,
            )
            for (a, b), val in np.ndenumerate(v):
                finite = np.isfinite(val)
                shade = im.norm(val) if finite else 0.0
                ax.text(
                    b,
                    a,
                    f"{_fmt(val)}{marks.iloc[a, b]}",
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="black" if shade > 0.6 else "white",
                )
            ax.set_xticks(range(v.shape[1]), [f"{c:g}" for c in values.columns], fontsize=7)
            ax.set_yticks(range(v.shape[0]), [f"{c:g}" for c in values.index], fontsize=7)
            ax.set_xlabel(x, fontsize=8)
            ax.set_ylabel(y if j == 0 else "", fontsize=8)
            ax.set_title(f"{ds}, h = {h}: {_label(col)}", fontsize=8)
    fig.suptitle(
        f"{method}: scores over {x} × {y} (every grid point; † not converged, "
        "‡ diverged, ◊ degenerate, § over budget)",
        fontsize=9,
    )
    fig.tight_layout()
    return (save or save_figure)(fig, Path(path))


@in_figure_font
def plot_curves(
    scores: pd.DataFrame, method: str, path, save=None, reference: str | None = None
) -> Path:
    """The label-free setting's objective per iteration, one panel per (data set, h);
    ``reference``: a recorded fact of the fit drawn as a dashed line (e.g. K-means UFS's
    ``exact_objective``, the global optimum of its model)."""
    from .figures import _pyplot, save_figure

    plt = _pyplot()
    lf = scores[scores["label_free"]]
    groups = list(lf.groupby(["dataset", "h"], sort=True))
    if not groups:
        raise ValueError(f"no label-free setting of {method} in the results")
    fig, axes = plt.subplots(1, len(groups), figsize=(3.0 * len(groups) + 0.4, 2.6), squeeze=False)
    for ax, ((ds, h), g) in zip(axes[0], groups, strict=True):
        r = g.iloc[0]
        curve = np.asarray(r["objective_curve"], dtype=float)
        ax.plot(np.arange(1, curve.size + 1), curve, color="#0072B2", lw=1.2)
        if reference and np.isfinite(r.get(reference, np.nan)):
            ax.axhline(r[reference], color="#D55E00", ls="--", lw=1.0, label=reference)
            ax.legend(fontsize=7, frameon=False)
        ax.set_xlabel("iteration", fontsize=8)
        ax.set_ylabel("objective" if ax is axes[0][0] else "", fontsize=8)
        mark = STATUS_MARK.get(r["status"], "")
        ax.set_title(f"{ds}, h = {h} ({curve.size} iterations{mark})", fontsize=8)
        ax.tick_params(labelsize=7)
    fig.suptitle(f"{method}: objective per iteration, label-free setting", fontsize=9)
    fig.tight_layout()
    return (save or save_figure)(fig, Path(path))


def write_grid_report(
    eval_files,
    method: str,
    x: str,
    y: str,
    out_dir: str | Path,
    cols: Sequence[str] = ("acc_mean", "nmi_mean"),
    title: str | None = None,
    reference: str | None = None,
) -> list[Path]:
    """``<method>_<x>_<y>.png``/``.pdf`` (:func:`plot_grid`), ``<method>_convergence.png``
    /``.pdf`` (:func:`plot_curves`) and ``<method>_<x>_<y>.md`` (the numbers) in
    ``out_dir``; returns the paths."""
    from ..fileio import write_text

    scores = grid_scores(eval_files, method, x, y)
    unknown = [c for c in cols if c not in scores]
    if unknown:
        known = sorted(c for c in scores if c.endswith("_mean") or c in ("n_iter",))
        raise ValueError(f"no column {unknown[0]!r} in the results; e.g. {', '.join(known)}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stem = f"{method}_{x}_{y}"
    grid_png = plot_grid(scores, method, x, y, cols, out / f"{stem}.png")
    curve_png = plot_curves(scores, method, out / f"{method}_convergence.png", reference=reference)
    lines = [
        f"# {title or f'{method} over {x} × {y}'}",
        "",
        f"![{method} over {x} and {y}]({grid_png.name})",
        "",
        f"![{method} convergence]({curve_png.name})",
        "",
    ]
    lines += grid_markdown(scores, x, y, cols)
    md = out / f"{stem}.md"
    write_text(md, "\n".join(lines).rstrip() + "\n")
    return [grid_png, curve_png, md]
