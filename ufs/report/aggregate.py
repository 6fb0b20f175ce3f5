"""Tables and figures from evaluation files, read once into the tidy table of
:mod:`.results_table` (its rows, protocols and pooling are described here, where they are
shown).

Two parameter-selection protocols, always labelled:

* ``oracle`` — for each (method, h) the grid setting with the best mean of the oracle
  metric (ACC by default). This is what the papers report; it **uses the labels**.
* ``label_free`` — the method's documented default parameters; no labels involved.

Replicates of a simulated dataset are pooled: ACC/NMI/ARI/NE mean ± std over all
restarts of all replicates, TP@h and CP@h averaged over replicates (GOLFS Eqs. 19-20).

Solver status (:func:`ufs.pipeline.steps.fit_status`, one definition): every fit is ``ok``,
``fixed_budget`` (exactly ``max_iter`` iterations by design, ``tol = 0``: not a failure),
``not_converged``, ``diverged`` or ``budget_exceeded`` (over the per-fit compute budget
``jobs.fit_budget_seconds`` or refused for memory, :mod:`ufs.pipeline.budget`: no result). A
table cell or figure point is marked when a fit behind it did not converge (``†``, hollow
marker) or diverged (``‡``, cross); a cell whose fit exceeded the budget reads ``budget
exceeded §`` (NaN in the CSV; a replicate over the budget makes the pooled cell NaN). The
CSV has the worst ``status`` of each row and the counts; ``summary.md`` counts the failed
fits per method and data set and ``fit_status.json`` feeds the warning printed at the end
of a run.

The per-data-set figures are drawn by :mod:`ufs.report.figures` (:func:`plot_dataset`).

Size (~600 lines): the per-data-set outputs of the workflow's ``aggregate_dataset`` and
``summary`` jobs in one place — the markdown tables, the fit-status accounting and
``summary.md`` — reading the tidy table of :mod:`.results_table`.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pandas as pd

from ..fileio import write_json, write_text, write_with
from ..pipeline.io import read_evaluations
from ..pipeline.status import STATUS_MARK, fit_label, is_degenerate, worst
from .results_table import (  # the tidy table these renderers read
    BAND_LEGEND,
    FLAGGED,
    STATUS_LEGEND,
    SUMMARY_COLUMNS,
    SUMMARY_TITLES,
    TABLE_TITLES,
    _row_status,
    collect,
    mean_over_h,
    ordered_methods,
    select_protocols,
    table_blocks,
)

__all__ = [
    "collect",
    "select_protocols",
    "markdown_tables",
    "plot_dataset",
    "write_dataset_tables",
    "write_dataset_figures",
    "write_dataset_outputs",
    "timing_summary",
    "fit_records",
    "degenerate_flag",
    "degenerate_fits",
    "failure_counts",
    "failure_markdown",
    "failure_report",
    "fit_status_warning",
    "write_summary",
    "STATUS_MARK",
    "FLAGGED",
    "STATUS_LEGEND",
]


def _md_decorate(text: str, kind: str) -> str:
    if not text:
        return text
    return f"**{text}**" if kind == "best" else f"<u>{text}</u>" if kind == "second" else text


def _md_cell(g: pd.DataFrame, h: str, m: str, status: pd.Series):
    """One method at one h: ``mean ± std`` in % (a chance reference ``mean [p5, p95]``;
    TP/CP with two decimals), its status mark, and the printed value that competes."""
    from .cells import Cell

    if h not in g.index:
        return Cell("")
    mark = STATUS_MARK.get(status[h], "")
    if status[h] == "budget_exceeded":
        return Cell(f"budget exceeded {mark}")
    if m not in ("acc", "nmi"):
        shown = f"{g.loc[h, m]:.2f}"
        return Cell(f"{shown}{mark}", float(shown))
    shown = f"{100 * g.loc[h, f'{m}_mean']:.1f}"
    if _has_band(g, h, m):
        spread = f"[{100 * g.loc[h, f'{m}_p05']:.1f}, {100 * g.loc[h, f'{m}_p95']:.1f}]"
        return Cell(f"{shown} {spread}{mark}", float(shown))
    return Cell(f"{shown} ± {100 * g.loc[h, f'{m}_std']:.1f}{mark}", float(shown))


def _md_summary_cell(g: pd.DataFrame, m: str, status: pd.Series, which: str):
    """The mean over h (the rank score; § if some h has no number) or the best over h
    (with its h)."""
    from .cells import Cell

    if which == "mean":
        score, missing = mean_over_h(g, m)
        if score != score:
            return Cell(f"budget exceeded {STATUS_MARK['budget_exceeded']}" if missing else "–")
        shown = f"{100 * score:.1f}"
        flag = worst(status) if len(status) else "ok"
        mark = STATUS_MARK["budget_exceeded"] if missing else STATUS_MARK.get(flag, "")
        return Cell(f"{shown}{mark}", float(shown))
    scored = g[f"{m}_mean"].dropna()
    if scored.empty:
        return Cell("–")
    b = scored.idxmax()
    cell = _md_cell(g, b, m, status)
    return type(cell)(f"{cell.text} (h={b})", cell.value)


def markdown_tables(
    sel: pd.DataFrame, base: str, oracle_metric: str = "acc", *, legend: bool = True
) -> str:
    """The data set's score tables: per protocol (label-free first) and metric, a row per
    method (competitors and variants by their mean over h, best first; the references
    last, in italics), a column per h and the summary columns (:data:`SUMMARY_COLUMNS`).
    ACC and NMI in %, mean ± std over restarts; per column the best competitor value in
    bold and the runner-up underlined (as printed; ties share). ``legend``: end with the
    legend (a standalone file; ``summary.md`` gives it once for every data set)."""
    from .cells import Row, emphasis

    lines = [f"## {base}", ""]
    for protocol, part, hs, m in table_blocks(sel):
        name = {"tp": "TP@h", "cp": "CP@h"}.get(m, f"{m.upper()} %")
        extra = SUMMARY_COLUMNS[protocol] if m in ("acc", "nmi") else ()
        if protocol == "oracle" and m in ("acc", "nmi"):
            title = TABLE_TITLES[protocol].replace("choose", f"choose (by {oracle_metric.upper()})")
        else:
            title = TABLE_TITLES[protocol]
        lines += [f"**{name}** — {title}", ""]
        header = ["method", *(f"h={h}" for h in hs), *(SUMMARY_TITLES[c] for c in extra)]
        lines += ["| " + " | ".join(header) + " |", "|---" * len(header) + "|"]
        rows = []
        for method, g, role in ordered_methods(part, m):
            status = g["status"] if "status" in g else pd.Series("ok", index=g.index)
            cells = [_md_cell(g, h, m, status) for h in hs]
            cells += [_md_summary_cell(g, m, status, c) for c in extra]
            rows.append(Row(_row_name(method, role), tuple(cells), role))
        for row, kinds in zip(rows, emphasis(rows), strict=True):
            texts = [_md_decorate(c.text, k) for c, k in zip(row.cells, kinds, strict=True)]
            lines.append(f"| {row.name} | " + " | ".join(texts) + " |")
        lines.append("")
    if legend:
        lines += ["**Legend**", "", *TABLE_LEGEND, ""]
    return "\n".join(lines)


#: the per-data-set tables' legend, given once (the end of ``tables/<base>.md``, and the
#: Legend section of ``summary.md``)
TABLE_LEGEND = [
    "- ACC and NMI in %, mean ± std over the k-means restarts (TP@h, CP@h: true features "
    "among the h selected, all true features covered; simulations only).",
    "- **Bold**: the best competitor (or declared variant) in the column; <u>underlined</u>: "
    "the runner-up; compared as printed, ties share the mark. References are never marked.",
    "- *mean over h*: the method's score on the data set, the one the ranks use; *best over "
    "h* (label-tuned only): the labels choose h too, as the papers' best-over-h numbers do.",
    "- Label-tuned rows: per method and h, the grid setting with the best mean on the even "
    "k-means restarts, reported on the odd ones (held out).",
    "- " + BAND_LEGEND,
    "- " + STATUS_LEGEND,
]


def _row_name(method: str, role: str) -> str:
    if role == "reference":
        return f"_{method}_ (reference)"
    if role == "variant":
        return f"{method} (variant)"
    return method


def _has_band(g: pd.DataFrame, h, m: str) -> bool:
    return f"{m}_p05" in g and not pd.isna(g.loc[h, f"{m}_p05"])


def _save_figure(fig, path: Path, dpi: int) -> Path:
    """Write a PNG and its vector PDF twin atomically and free the figure
    (:func:`ufs.report.figures.save_figure`)."""
    from .figures import save_figure

    return save_figure(fig, path, dpi)


def plot_dataset(df: pd.DataFrame, sel: pd.DataFrame, base: str, outdir: str | Path) -> list[Path]:
    """ACC/NMI against h, convergence curves and run times (:mod:`ufs.report.figures`)."""
    from . import figures

    return figures.plot_dataset(
        df, sel, base, outdir, save=lambda fig, path, dpi: _save_figure(fig, path, dpi)
    )


def _benchmark_seconds(path: str | Path) -> float:
    """The wall seconds (column ``s``, first row) of a Snakemake benchmark file: read with
    the standard library, a few hundred files a run (``pandas.read_csv`` took ~1 ms each)."""
    with open(path, newline="") as f:
        rows = csv.DictReader(f, delimiter="\t")
        return float(next(rows)["s"])


def warm_cpu(benchmark: str | Path) -> float:
    """CPU seconds of the warm worker that ran the job of the Snakemake benchmark file
    ``benchmark`` (``<out>/benchmarks/<rel>.tsv`` → ``<out>/logs/<rel>.warm.json``, written
    by the job's client: Snakemake's benchmark measures the client process only, and
    nothing when Snakemake's own process handed the job over; ``workflow/scripts/_warm.py``);
    0 for a job run in its own process."""
    path = Path(benchmark)
    root = next((q.parent for q in path.parents if q.name == "benchmarks"), None)
    if root is None:
        return 0.0
    side = root / "logs" / path.relative_to(root / "benchmarks").with_suffix(".warm.json")
    return float(json.loads(side.read_text())["cpu_seconds"]) if side.is_file() else 0.0


def _benchmark_cpu(path: str | Path) -> float:
    """The CPU seconds (column ``cpu_time``; ``NA``: 0) of a Snakemake benchmark file."""
    with open(path, newline="") as f:
        value = next(csv.DictReader(f, delimiter="\t")).get("cpu_time") or "NA"
    try:
        return float(value)
    except ValueError:
        return 0.0


def timing_summary(benchmarks: list[str | Path], evaluations: list[str | Path]) -> dict[str, float]:
    """Time of the jobs of ``benchmarks`` (Snakemake benchmark files: the data, graph, fit,
    evaluate and table jobs) against the time in the methods (their fits, and the kNN graphs
    a fit job builds itself) and in k-means: wall seconds as Snakemake measured them, and
    CPU seconds, a job's warm worker's included (:func:`warm_cpu`), against the fits' and
    k-means' own CPU (``cpu_outside_share``: what ``benchmarks/pipeline_overhead.py``
    counts, over these jobs)."""
    wall = sum(_benchmark_seconds(b) for b in benchmarks)
    cpu = sum(_benchmark_cpu(b) + warm_cpu(b) for b in benchmarks)
    solver = kmeans = graph = fit_cpu = kmeans_cpu = 0.0
    for ev in read_evaluations(evaluations):
        kmeans += ev["kmeans_seconds"]
        solver += ev["fit_seconds_total"]
        graph += ev.get("graph_seconds", 0.0)
        # CPU seconds where recorded (wall clocks of older results otherwise)
        fit_cpu += ev.get("fit_cpu_seconds_total", ev["fit_seconds_total"])
        kmeans_cpu += ev.get("kmeans_cpu_seconds", ev["kmeans_seconds"])
    inside = solver + graph + kmeans
    inside_cpu = fit_cpu + graph + kmeans_cpu
    return {
        "jobs": len(benchmarks),
        "job_wall_seconds": wall,
        "solver_seconds": solver,
        "graph_seconds": graph,
        "kmeans_seconds": kmeans,
        "outside_share": 1.0 - inside / wall if wall > 0 else float("nan"),
        "job_cpu_seconds": cpu,
        "fit_cpu_seconds": fit_cpu,
        "kmeans_cpu_seconds": kmeans_cpu,
        "cpu_outside_share": 1.0 - inside_cpu / cpu if cpu > 0 else float("nan"),
    }


def overhead_text(timing: dict[str, float]) -> str:
    """The summary's sentence on the share of the jobs' CPU outside the methods and
    k-means (:func:`timing_summary`; the wall-time share for timings that record no CPU);
    none when the methods took longer than the jobs, as they do after a fit job resumed
    from its checkpoint (Snakemake times only its last attempt)."""
    share = timing.get("cpu_outside_share", timing["outside_share"])
    what = "CPU" if "cpu_outside_share" in timing else "summed wall time"
    head = (
        f"*Overhead*: the share of these jobs' {what} outside methods and k-means "
        "(start-up, imports, I/O, tables): "
    )
    if share >= 0:
        return head + f"{100 * share:.0f}%."
    return head + (
        "not measured: the methods and k-means took longer than the jobs as Snakemake "
        "measured them, which counts only a job's last attempt (a fit job resumed from its "
        "checkpoint took its earlier fits from it)."
    )


def _write_table_csv(sel: pd.DataFrame, out_csv) -> None:
    cols = [c for c in sel.columns if c != "objective_curve"]
    write_with(out_csv, lambda p: sel[cols].to_csv(p, index=False))


def write_dataset_csv(eval_files, base: str, out_csv, oracle_metric: str = "acc") -> None:
    """The data set's CSV table alone, as :func:`write_dataset_outputs` writes it (what
    ``ufs benchmark-report --archive`` rebuilds from archived evaluations)."""
    _write_table_csv(select_protocols(collect(eval_files, base), oracle_metric), out_csv)


def write_dataset_tables(
    eval_files,
    base: str,
    out_csv,
    out_md,
    oracle_metric: str = "acc",
    out_tex=None,
    note: list[str] = (),
) -> pd.DataFrame:
    """The data set's CSV, markdown tables (and their HTML page beside them, for the
    Snakemake report) and LaTeX tables (``out_tex``, default: ``out_md`` with ``.tex``;
    :func:`ufs.report.latex.dataset_tables`); the selected rows. ``note``: markdown lines
    under the heading (a sliced run's :func:`ufs.pipeline.slices.slice_note`)."""
    df = collect(eval_files, base)
    sel = select_protocols(df, oracle_metric)
    _write_tables(sel, base, out_csv, out_md, oracle_metric, out_tex, note)
    return sel


def _write_tables(sel, base, out_csv, out_md, oracle_metric, out_tex, note) -> None:
    from .html import page
    from .latex import dataset_tables

    _write_table_csv(sel, out_csv)
    md = markdown_tables(sel, base, oracle_metric)
    if note:
        head, rest = md.split("\n\n", 1)
        md = "\n".join([head, "", *note, rest])
    write_text(out_md, md)
    write_text(Path(out_md).with_suffix(".html"), page(md, f"UFS-bench: {base}"))
    write_text(
        out_tex or Path(out_md).with_suffix(".tex"), dataset_tables(sel, base, oracle_metric)
    )


def write_dataset_figures(eval_files, base: str, figdir, oracle_metric: str = "acc") -> list[Path]:
    """The data set's figures (PNG and PDF: :func:`plot_dataset`), from the same rows as
    its tables. A job of its own in the workflow, so that the summary (which reads the
    tables) need not wait for the last data set's figures."""
    df = collect(eval_files, base)
    return plot_dataset(df, select_protocols(df, oracle_metric), base, figdir)


def write_dataset_outputs(
    eval_files,
    base: str,
    out_csv,
    out_md,
    figdir,
    oracle_metric: str = "acc",
    out_tex=None,
    note: list[str] = (),
) -> None:
    """:func:`write_dataset_tables` and :func:`write_dataset_figures` in one pass."""
    df = collect(eval_files, base)
    sel = select_protocols(df, oracle_metric)
    _write_tables(sel, base, out_csv, out_md, oracle_metric, out_tex, note)
    plot_dataset(df, sel, base, figdir)


def degenerate_flag(fit_info: dict[str, Any], h, warnings=()) -> bool:
    """Whether the fit's own facts say a trivial rule or round-off decided its answer
    (:func:`ufs.pipeline.status.is_degenerate`, the rule of :func:`fit_status`'s
    ``"degenerate"``), applied whatever the fit's status: a fit that is also not converged
    has status ``not_converged`` (it comes first), and the failure counts must still show it
    degenerate (every DGUFS fit with the authors' rescaling is both).
    ``tests/test_degenerate_fits.py`` checks that the two agree."""
    return is_degenerate(fit_info, h, tuple(warnings or ()))


def fit_records(evaluation_files: list[str | Path]) -> pd.DataFrame:
    """One row per fit (a ranking fit serves every h; replicates are separate fits):
    ``dataset`` (instance), ``base``, ``method``, ``pid``, ``fit`` label, ``status``,
    ``n_iter``, ``in_grid``, ``label_free``, ``fit_seconds``, ``budget_reason`` (a fit over
    the compute budget), ``budget_seconds`` (the budget it ran under), ``restarts``,
    ``git_commit`` (the commit the fit was made at; ``""`` where not recorded) and
    ``degenerate`` (:func:`degenerate_flag` at any of its h, whatever its status)."""
    seen: dict[tuple, dict[str, Any]] = {}
    cache: dict = {}
    for ev in read_evaluations(evaluation_files):
        for row in ev["results"]:
            label = fit_label(ev["kind"], row["h"])
            key = (ev["dataset"], ev["method"], ev["pid"], label)
            flag = degenerate_flag(row.get("fit_info") or {}, row.get("h"), row.get("fit_warnings"))
            if key in seen:  # a ranking fit serves every h: its status is the worst over h
                seen[key]["status"] = worst([seen[key]["status"], _row_status(ev, row, cache)])
                seen[key]["degenerate"] = seen[key]["degenerate"] or flag
                continue
            seen[key] = {
                "dataset": ev["dataset"],
                "base": ev.get("dataset_base", ev["dataset"]),
                "method": ev["method"],
                "pid": ev["pid"],
                "fit": label,
                "status": _row_status(ev, row, cache),
                "n_iter": row.get("fit_info", {}).get("n_iter"),
                "in_grid": ev["in_grid"],
                "label_free": ev["label_free"],
                "fit_seconds": float(row.get("fit_seconds") or 0.0),
                "budget_reason": row.get("budget_reason", ""),
                "budget_seconds": ev.get("budget_seconds"),
                "restarts": ev.get("restarts"),
                "git_commit": ev.get("git_commit") or "",
                "degenerate": flag,
            }
    cols = ["dataset", "base", "method", "pid", "fit", "status", "n_iter", "in_grid", "label_free"]
    cols += ["fit_seconds", "budget_reason", "budget_seconds", "restarts", "git_commit"]
    cols += ["degenerate"]
    return pd.DataFrame.from_records(list(seen.values()), columns=cols)


def failure_counts(fits: pd.DataFrame) -> pd.DataFrame:
    """Per method and data set (replicates pooled): the number of fits, of fits that did
    not converge / diverged / ran a fixed budget / exceeded the compute budget, of settings
    and of settings affected."""
    cols = [
        "method",
        "dataset",
        "fits",
        "not_converged",
        "diverged",
        "degenerate",
        "fixed_budget",
        "budget_exceeded",
        "settings",
        "settings_affected",
    ]
    rows = []
    for (method, base), g in fits.groupby(["method", "base"], sort=True):
        bad = g["status"].isin(STATUS_MARK) | degenerate_fits(g)
        rows.append(
            {
                "method": method,
                "dataset": base,
                "fits": len(g),
                "not_converged": int((g["status"] == "not_converged").sum()),
                "diverged": int((g["status"] == "diverged").sum()),
                "degenerate": int(degenerate_fits(g).sum()),
                "fixed_budget": int((g["status"] == "fixed_budget").sum()),
                "budget_exceeded": int((g["status"] == "budget_exceeded").sum()),
                "settings": g["pid"].nunique(),
                "settings_affected": g.loc[bad, "pid"].nunique(),
            }
        )
    return pd.DataFrame.from_records(rows, columns=cols)


def degenerate_fits(fits: pd.DataFrame) -> pd.Series:
    """The fits that are degenerate by status or by their own flag (:func:`degenerate_flag`):
    a fit is counted under every flag that applies."""
    by_status = fits["status"] == "degenerate"
    if "degenerate" not in fits:
        return by_status
    return by_status | fits["degenerate"].fillna(False).astype(bool)


def _totals(counts: pd.DataFrame) -> dict[str, int]:
    """Fits, not converged, diverged, fixed-budget and budget-exceeded fits summed over
    ``counts``."""
    cols = ("fits", "not_converged", "diverged", "degenerate", "fixed_budget", "budget_exceeded")
    return {c: int(counts[c].sum()) if c in counts else 0 for c in cols}


def _failed(counts: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``counts`` with a failed or degenerate fit (:data:`FLAGGED`)."""
    return counts[counts.reindex(columns=list(FLAGGED), fill_value=0).sum(axis=1) > 0]


def failure_markdown(counts: pd.DataFrame) -> str:
    """The ``summary.md`` section: failed and degenerate fits per method and data set."""
    t = _totals(counts)
    total, nc, dv, be = t["fits"], t["not_converged"], t["diverged"], t["budget_exceeded"]
    dg = t["degenerate"]
    over = f"; {be} exceeded the compute budget (§)" if be else ""
    degen = f"; {dg} were degenerate (◊)" if dg else ""
    lines = [
        "## Solver failures and degenerate fits",
        "",
        f"{nc} of {total} fits did not converge (†) and {dv} diverged (‡){over}{degen}; every "
        "grid setting and h is counted, simulation replicates separately, a ranking method's "
        "one fit once for all h (with its worst status over h); the marks are defined in the "
        "*Legend*. Their numbers are marked in the per-data-set tables, the CSVs (`status`, "
        "`n_not_converged`, `n_diverged`, `n_degenerate`, `n_budget_exceeded`) and the "
        "figures (hollow marker: not converged; ×: diverged; open diamond: degenerate; §: "
        "budget exceeded, no point).",
        "",
    ]
    bad = _failed(counts)
    if bad.empty:
        lines += ["No fit failed or was degenerate.", ""]
    else:
        head = "| method | data set | fits | † not converged | ‡ diverged |"
        if be:  # the column only when some fit went over the budget
            head += " § budget exceeded |"
        if dg:
            head += " ◊ degenerate |"
        lines += [head + " settings affected |", "|---" * (6 + bool(be) + bool(dg)) + "|"]
        for _, r in bad.iterrows():
            over_cell = f" {r.get('budget_exceeded', 0)} |" if be else ""
            deg_cell = f" {r.get('degenerate', 0)} |" if dg else ""
            lines.append(
                f"| {r['method']} | {r['dataset']} | {r['fits']} | {r['not_converged']} | "
                f"{r['diverged']} |{over_cell}{deg_cell} {r['settings_affected']} of "
                f"{r['settings']} |"
            )
        lines.append("")
    budget = counts[counts["fixed_budget"] > 0].groupby("method")["fixed_budget"].sum()
    if len(budget):
        lines += [
            "Fixed iteration budget by design (`tol = 0`: exactly `max_iter` iterations, the "
            "authors' rule; not a failure, not marked): "
            + ", ".join(f"{m} ({n} fits)" for m, n in budget.items())
            + ".",
            "",
        ]
    return "\n".join(lines)


def failure_report(counts: pd.DataFrame, summary: str | Path = "summary.md") -> dict[str, Any]:
    """``fit_status.json``: totals and the affected method × data set counts."""
    bad = _failed(counts)
    return {
        **_totals(counts),
        "affected": bad.to_dict(orient="records"),
        "summary": str(summary),
    }


def fit_status_warning(report: dict[str, Any] | str | Path) -> str | None:
    """The end-of-run warning for a ``fit_status.json`` (or its dict); ``None`` if no fit
    failed or the file does not exist."""
    if not isinstance(report, dict):
        path = Path(report)
        if not path.exists():
            return None
        import json

        report = json.loads(path.read_text())
    if not report.get("affected"):
        return None
    be = report.get("budget_exceeded", 0)
    over = f", {be} exceeded the compute budget (§)" if be else ""
    dg = report.get("degenerate", 0)
    degen = f", {dg} were degenerate (◊)" if dg else ""
    lines = [
        f"UFS-bench: {report['not_converged']} of {report['fits']} fits did not converge (†) "
        f"and {report['diverged']} diverged (‡){over}{degen}; their numbers are marked in the "
        f"tables and figures (see {report['summary']}, 'Solver failures and degenerate fits'):"
    ]
    width = max(len(a["method"]) for a in report["affected"])
    dwidth = max(len(a["dataset"]) for a in report["affected"])
    for a in report["affected"]:
        what = []
        if a["not_converged"]:
            what.append(f"{a['not_converged']} not converged")
        if a["diverged"]:
            what.append(f"{a['diverged']} diverged")
        if a.get("budget_exceeded"):
            what.append(f"{a['budget_exceeded']} budget exceeded")
        if a.get("degenerate"):
            what.append(f"{a['degenerate']} degenerate")
        lines.append(
            f"  {a['method']:<{width}}  {a['dataset']:<{dwidth}}  {', '.join(what)} of "
            f"{a['fits']} fits; {a['settings_affected']} of {a['settings']} settings"
        )
    return "\n".join(lines)


#: the LaTeX rank table's default file name, beside ``summary.md`` (:func:`write_summary`)
RANK_TABLE_TEX = "ranks.tex"


def _scope_line(tables: pd.DataFrame) -> str:
    """What the summary covers: data sets and methods by role."""
    roles = tables.drop_duplicates("method").set_index("method")["role"]
    by = {r: sorted(roles.index[roles == r]) for r in ("method", "variant", "reference")}
    col = "dataset_base" if "dataset_base" in tables else "dataset"
    sets = sorted(tables[col].astype(str).unique())
    return (
        f"**Scope:** {len(sets)} data set(s) ({', '.join(sets)}); {len(by['method'])} "
        f"competitor(s) ({', '.join(by['method'])}); variants: {', '.join(by['variant']) or 'none'}; "
        f"references: {', '.join(by['reference']) or 'none'}."
    )


#: beside ``summary.md``: every test against the references, scores and ranks per data set
DETAILS_MD = "summary_details.md"


def _answer_lines(results, tables: pd.DataFrame, timing: dict, links: list[str], details: str):
    """The summary's opening (at most ten lines): what ran, what its N can decide, where
    the project's benchmark gives its answer, where the per-data-set tables are."""
    from ..stats import paired, pairwise

    col = "dataset_base" if "dataset_base" in tables else "dataset"
    sets = sorted(tables[col].astype(str).unique())
    roles = tables.drop_duplicates("method").set_index("method")["role"]
    k = int((roles == "method").sum())
    ranked = [r for r in results if not r.avg_rank.empty]
    lines = [
        "## The answer",
        "",
        f"- **What ran:** {len(sets)} data set{'s' if len(sets) != 1 else ''} "
        f"({', '.join(sets)}), {k} competing methods and their references, "
        f"{timing['jobs']} jobs of the data, fit, evaluate and table steps.",
    ]
    if ranked:
        r = ranked[0]
        merged = "; ".join(
            f"{' and '.join(ms)}, of one source, count once" for _, ms in sorted(r.families.items())
        )
        n_text = f"N = {r.n} {'families' if r.families else 'data sets'}" + (
            f" ({merged})" if merged else ""
        )
        decidable = [
            x
            for x in ranked
            if pairwise.min_holm_p(x.k, x.n) <= x.alpha
            or paired.detectable(max(x.k, 2), x.n, x.alpha).min_p_holm <= x.alpha
        ]
        lines.append(
            f"- **What it can decide:** {n_text}, k = {r.k}: "
            + (
                "no paired test can reach significance with so few, so the ranks and tables "
                "below describe this run and decide nothing about which method is better."
                if not decidable
                else "only what *What the tests support* lists is decided by a test; a rank "
                "or a best score alone decides nothing."
            )
        )
    else:
        lines.append("- **What it can decide:** nothing: no rank test applies to these results.")
    lines += [
        "- **The benchmark's answer** (every registered method on every data set that loads "
        "offline, each source counted once): `docs/benchmark.md` of the UFS-bench "
        "repository, its leaderboard first; `ufs benchmark-report --archive "
        "benchmarks/results/benchmark.tar.xz` rebuilds it.",
        f"- **Per data set:** {', '.join(links)}; every test in [{details}]({details}).",
        "",
    ]
    return lines


def _stability_lines(csv: str | Path, out_dir: Path) -> list[str]:
    import os

    from .stability_report import stability_summary_lines

    md = Path(csv).with_suffix(".md")
    return stability_summary_lines(csv, Path(os.path.relpath(md, out_dir)).as_posix())


def write_summary(
    tables_md: list[str | Path],
    tables_csv: list[str | Path],
    benchmarks: list[str | Path],
    evaluations: list[str | Path],
    out_md: str | Path,
    out_timing: str | Path,
    out_status: str | Path,
    cd_figures: dict[tuple[str, str], str | Path],
    *,
    alpha: float = 0.05,
    min_h_values: int = 3,
    include_variants: bool = False,
    out_tex: str | Path | None = None,
    oracle_metric: str = "acc",
    note: list[str] = (),
    out_details: str | Path | None = None,
    families: dict[str, str] | None = None,
    stability: str | Path | None = None,
) -> str | None:
    """``summary.md`` (the answer in a few lines, what the tests support, the leaderboard,
    ranks across data sets, solver failures, links to the per-data-set tables, timing),
    ``summary_details.md`` (``out_details``: every test against the references, and each
    method's score and rank per data set), ``timing.json``, ``fit_status.json``, the CD
    diagrams ``cd_figures[(protocol, metric)]`` (PNG, and a PDF beside each) and the rank
    table in LaTeX (``out_tex``, default ``ranks.tex`` beside ``out_md``). ``note``:
    markdown lines after the scope line (a sliced run's
    :func:`ufs.pipeline.slices.slice_note`). ``families``: the config's ``family:`` entries
    (data set → family), merged with the registered families in every view. ``stability``:
    the run's ``stability.csv`` (:mod:`ufs.report.stability_report`), summarised in a
    section of its own. The label-free tuned protocol is made from the tables' grid rows
    (:func:`ufs.stats.tuning.with_label_free_tuned`); each verdict against a reference
    carries its leave-one-family-out count (:mod:`ufs.report.robustness`). Returns the
    end-of-run warning, if any."""
    import os

    from ..stats import ranking, references, tuning, views
    from . import rank_report
    from .answer import pairwise_results, support_lines
    from .html import page
    from .latex import rank_table
    from .leaderboard import leaderboard_lines
    from .robustness import verdict_robustness

    with views.extra_families(families):
        timing = timing_summary(benchmarks, evaluations)
        write_json(out_timing, timing)
        tables = pd.concat([pd.read_csv(t) for t in tables_csv], ignore_index=True)
        tables = tuning.with_label_free_tuned(tables, oracle_metric)
        choices = {"min_h_values": min_h_values, "include_variants": include_variants}
        view = views.FAMILIES
        results = ranking.rank_all(tables, alpha=alpha, view=view, **choices)
        for r in results:
            rank_report.plot_cd(r, cd_figures[(r.protocol, r.metric)], vector=True)
        write_text(out_tex or Path(out_md).with_name(RANK_TABLE_TEX), rank_table(results))
        counts = failure_counts(fit_records(evaluations))
        report = failure_report(counts, out_md)
        write_json(out_status, report)
        figdir = os.path.relpath(Path(next(iter(cd_figures.values()))).parent, Path(out_md).parent)
        tests = references.all_reference_tests(
            tables, alpha=alpha, view=view, results=results, **choices
        )
        pairs = pairwise_results(results, families_of=view)
        kept = verdict_robustness(tables, results, tests, view=view, **choices)
        out_dir = Path(out_md).parent
        details = Path(out_details) if out_details else Path(out_md).with_name(DETAILS_MD)
        links = []
        for t in tables_md:
            rel = Path(os.path.relpath(t, out_dir)).as_posix()
            links.append(f"[{Path(t).stem}]({rel})")
        legend = [
            "## Legend",
            "",
            *TABLE_LEGEND,
            "- Average ranks: 1 = best; **bold** the lowest, <u>underlined</u> the runner-up. "
            + rank_report.RANK_MARKS_LEGEND,
            "",
        ]
        parts = [
            "# UFS-bench results",
            "",
            *_answer_lines(results, tables, timing, links, details.name),
            _scope_line(tables),
            "",
            *note,
            "Three parameter protocols, label-free first everywhere: **label-free** runs each "
            "method's default setting and uses no labels (the unsupervised numbers); "
            "**label-free tuned** takes, on each data set, the grid setting with the best "
            "average rank on the other families (their labels, never this data set's; "
            "`ufs.stats.tuning`); **label-tuned** lets the data set's labels choose the grid "
            "setting per h, as the papers do. Both tuned protocols report the odd k-means "
            "restarts (the label-tuned choice is made on the even ones). Only competitors "
            "are ranked; references and declared variants are shown apart. Marks and units: "
            "*Legend*, at the end.",
            "",
            *support_lines(
                results,
                tests,
                ranking.PROTOCOLS,
                pairs,
                intro=(
                    "Data sets drawn from one source count once (the median of their members' "
                    "scores; `ufs.datasets.families` and the config's `family:` entries); every "
                    "line uses one N for all its tests."
                ),
                robustness=kept,
            ),  # the answer, in words
            *leaderboard_lines(
                results,
                tests,
                pairs,
                tables,
                view=view,
                where=view.title,
                sensitivity=False,
                robustness=kept,
            ),
            rank_report.overview_markdown(results, figure_dir=figdir),
            failure_markdown(counts),
            *(_stability_lines(stability, out_dir) if stability else []),
            "## Per data set",
            "",
            "Each data set's tables (scores against h under both protocols, the references, "
            "the selected features, fit status) are files of their own: "
            + ", ".join(links)
            + f". Every test against the references and each method's score and rank per data "
            f"set: [{details.name}]({details.name}).",
            "",
            "## Time",
            "",
            f"CPU seconds (user + system; a job's warm worker's included) of the "
            f"{timing['jobs']} jobs of the data, graph, fit, evaluate and table steps: "
            f"{timing['job_cpu_seconds']:.1f} s; in the methods' fits "
            f"{timing['fit_cpu_seconds']:.1f} s and the kNN graphs fit jobs build "
            f"{timing.get('graph_seconds', 0.0):.1f} s; in the k-means evaluation "
            f"{timing['kmeans_cpu_seconds']:.1f} s. " + overhead_text(timing) + " Not counted: "
            "the figures' and MLflow jobs, which run beside this summary, this summary's own "
            "job, the warm server's start-up (its imports, once a run) and Snakemake's own "
            "process; `benchmarks/pipeline_overhead.py` counts them all, and prints this "
            "figure's share, over these jobs, beside its own. Wall time summed over these jobs: "
            f"{timing['job_wall_seconds']:.1f} s.",
            "",
            *legend,
        ]
        write_text(
            details,
            "\n".join(
                [
                    "# UFS-bench results: the details",
                    "",
                    f"The tests behind [summary.md]({Path(out_md).name}), method by method.",
                    "",
                    references.references_markdown(tables, alpha=alpha, tests=tests, **choices),
                    rank_report.details_markdown(results),
                    *legend,
                ]
            ),
        )
        text = "\n".join(parts)
        write_text(out_md, text)
        write_text(Path(out_md).with_suffix(".html"), page(text, "UFS-bench results"))
        return fit_status_warning(report)
