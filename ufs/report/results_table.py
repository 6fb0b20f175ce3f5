"""The tidy results table of one data set: every evaluation file read once into
one row per (method, setting, h) with its scores, fit status and CPU time (:func:`collect`),
the protocols' selections from it (:func:`select_protocols`: label-free defaults, the
label-tuned grid chosen on held-in restarts, every grid setting held out for the label-free
tuned choice made across data sets, the random draws pooled), and the layout the
markdown and LaTeX tables share (:func:`table_blocks`, :func:`ordered_methods`, the
legends). Renderers (:mod:`.aggregate` for markdown and figures, :mod:`.latex`) only read
it; nothing here writes a file."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..fileio import read_json
from ..pipeline.io import read_evaluations
from ..pipeline.status import fit_label, fit_status, worst
from ..reference_draws import pool_draws
from ..stats.tuning import GRID  # every grid setting's rows: the label-free tuned choice's input

METRIC_COLS = ("acc", "nmi", "ari", "ne")


STATUS_LEGEND = (
    "† a fit behind the number did not converge (its convergence tolerance was not met "
    "within max_iter); ‡ a fit diverged (overflow or a non-finite objective; the last finite "
    "iterate was used); § a fit exceeded its compute budget (jobs.fit_budget_seconds CPU "
    "seconds, or the dense-memory cap) and has no number; ◊ a fit is degenerate: its answer "
    "was decided by round-off or by a trivial rule, not by the method (a ranking beyond the "
    "features whose row weight is above 1e-4 of the largest, or a selection equal to the "
    "smallest-norm filter). A fixed iteration budget by design (tol = 0) is not marked."
)


#: the statuses counted as a failed fit (marked in tables, counted in summary.md)
FAILED = ("not_converged", "diverged", "budget_exceeded")


#: the statuses marked and counted: the failures and the degenerate fits
FLAGGED = (*FAILED, "degenerate")


def _row_status(ev: dict[str, Any], row: dict[str, Any], cache: dict) -> str:
    """The row's ``fit_status``; computed from its recorded facts for evaluation files
    written before the status was recorded."""
    if "fit_status" in row:
        return row["fit_status"]
    from ..pipeline.steps import fixed_iteration_budget  # builds the estimator: scikit-learn

    key = (ev["method"], repr(sorted(ev["params"].items())))
    if key not in cache:
        cache[key] = fixed_iteration_budget(ev["method"], ev["params"])
    return fit_status(
        row.get("fit_info", {}),
        row.get("objective_curve"),
        row.get("fit_warnings", []),
        fixed_budget=cache[key],
        h=row.get("h"),
    )


def _with_fit_cpu(paths) -> list[tuple[dict[str, Any], dict[str, float]]]:
    """Each evaluation record with its fits' CPU seconds by fit label
    (:func:`ufs.pipeline.status.fit_label`), from the file's ``fit_job`` (:func:`ufs.pipeline.steps.evaluate`, records in
    the same order); ``{}`` for files written without it (outside the workflow)."""
    out = []
    for path in paths:
        tasks = (read_json(path).get("fit_job") or {}).get("tasks") or []
        records = read_evaluations([path])
        if len(tasks) != len(records):
            tasks = [{}] * len(records)
        for rec, task in zip(records, tasks, strict=True):
            fits = task.get("fits", {})
            out.append(
                (rec, {k: v["fit_cpu_seconds"] for k, v in fits.items() if "fit_cpu_seconds" in v})
            )
    return out


def _row_cpu(cpu: dict[str, float], kind: str, row: dict[str, Any]) -> float:
    """The CPU seconds of the fit behind an evaluation row (NaN when not recorded)."""
    return float(cpu.get(fit_label(kind, row["h"]), np.nan))


def collect(evaluation_files: list[str | Path], base: str) -> pd.DataFrame:
    """One row per (method, setting, h) with replicate-pooled statistics, the method's
    ``role``, ``draw`` and ``input_space`` (:func:`ufs.registry.method_facts`) and each
    metric's means over the even and the odd restarts (``<metric>_half_a``/``_half_b``)."""
    from ..registry import method_facts  # the registry imports scikit-learn: only here

    pooled: dict[tuple, dict[str, Any]] = {}
    budget_cache: dict = {}
    for ev, cpu in _with_fit_cpu(evaluation_files):
        for row in ev["results"]:
            key = (ev["method"], ev["pid"], row["h_label"])
            e = pooled.setdefault(
                key,
                {
                    "dataset": base,
                    "method": ev["method"],
                    "kind": ev["kind"],
                    "pid": ev["pid"],
                    "params": ev["params"],
                    "label_free": ev["label_free"],
                    "in_grid": ev["in_grid"],
                    # None in files written before the graph id was recorded
                    "uses_graph": bool(ev["graph_id"]) if "graph_id" in ev else None,
                    "h": row["h"],
                    "h_label": row["h_label"],
                    "per": defaultdict(list),
                    "tp": [],
                    "cp": [],
                    "fit_seconds": [],
                    "fit_cpu_seconds": [],
                    "curves": [],
                    "statuses": [],
                    "replicates": 0,
                    "restart": [],
                },
            )
            e["replicates"] += 1
            e["restart"].extend(range(len(row["per_restart"][METRIC_COLS[0]])))
            e["statuses"].append(_row_status(ev, row, budget_cache))
            for m in METRIC_COLS:
                e["per"][m].extend(row["per_restart"][m])
            for m in ("tp", "cp"):
                if row.get(m) is not None:
                    e[m].append(row[m])
            e["fit_seconds"].append(row["fit_seconds"])
            e["fit_cpu_seconds"].append(_row_cpu(cpu, ev["kind"], row))
            if row.get("objective_curve"):
                e["curves"].append(row["objective_curve"])
    records = []
    for e in pooled.values():
        rec = {
            k: e[k]
            for k in (
                "dataset",
                "method",
                "kind",
                "pid",
                "label_free",
                "in_grid",
                "uses_graph",
                "h",
                "h_label",
                "replicates",
            )
        }
        rec["params"] = ", ".join(f"{k}={v}" for k, v in sorted(e["params"].items())) or "-"
        rec.update(method_facts(e["method"], e["params"]))
        # a fit over the compute budget has no result: the pooled cell has none either
        budget = "budget_exceeded" in e["statuses"]
        restart = np.asarray(e["restart"], dtype=int)
        values = {}
        for m in METRIC_COLS:
            v = np.array([np.nan if x is None else x for x in e["per"][m]], dtype=float)
            if budget:
                v = np.full(v.shape, np.nan)
            values[m] = v
            rec.update(_stats(v, m))
            # the two halves of the restarts (even / odd restart index): the label-tuned
            # protocol chooses a setting on one half and reports it on the other
            for half, r in (("a", 0), ("b", 1)):
                part = v[restart % 2 == r] if v.size == restart.size else v[:0]
                rec[f"{m}_half_{half}"] = float(part.mean()) if part.size and not budget else np.nan
        rec["_values"] = values
        rec["_restart"] = restart
        rec["tp"] = float(np.mean(e["tp"])) if e["tp"] and not budget else np.nan
        rec["cp"] = float(np.mean(e["cp"])) if e["cp"] and not budget else np.nan
        # the replicates' spread of TP@h (the agreement criterion of counts)
        many = len(e["tp"]) > 1 and not budget
        rec["tp_std"] = float(np.std(e["tp"], ddof=1)) if many else np.nan
        rec["fit_seconds"] = float(np.mean(e["fit_seconds"]))
        rec["fit_cpu_seconds"] = float(np.mean(e["fit_cpu_seconds"]))  # NaN: not recorded
        rec["objective_curve"] = e["curves"][0] if e["curves"] else None
        rec["status"] = worst(e["statuses"])
        for st in ("not_converged", "diverged", "degenerate", "fixed_budget", "budget_exceeded"):
            rec[f"n_{st}"] = sum(s == st for s in e["statuses"])
        records.append(rec)
    df = pd.DataFrame.from_records(records)
    return df.sort_values(["method", "h", "pid"]).reset_index(drop=True)


def _stats(v: np.ndarray, m: str) -> dict[str, float]:
    """``<m>_mean`` and ``<m>_std`` (ddof 1; 0 for one value) of the restarts' values."""
    if v.size == 0 or np.isnan(v).all():
        return {f"{m}_mean": np.nan, f"{m}_std": np.nan}
    return {
        f"{m}_mean": float(v.mean()),
        f"{m}_std": float(v.std(ddof=1)) if v.size > 1 else 0.0,
    }


#: the restarts that choose the label-tuned setting (even index) and those that report it
TUNING_SPLIT = "chosen on the even k-means restarts, reported on the odd ones"


def restarts_text(v: np.ndarray) -> str:
    """The scores of a row's restarts as its ``<metric>_restarts`` cell: space-separated,
    in restart order, each to full precision (read back by
    :func:`ufs.report.compare.restart_scores`)."""
    return " ".join(repr(float(x)) for x in v)


def _held_out(best: pd.DataFrame) -> pd.DataFrame:
    """The label-tuned rows' statistics on the restarts that did not choose them: the
    odd-numbered restarts (a score chosen and reported on the same restarts is
    biased upwards by the choice), and those restarts' scores (``<metric>_restarts``, in
    restart order: the per-h rows of a method are paired by restart, the k-means seeds
    being the same at every h, for the standard error of a mean over h)."""
    best = best.copy()
    odd = [restart % 2 == 1 for restart in best["_restart"]]
    # whole columns at once: a cell-by-cell assignment is a pandas call per cell
    for m in METRIC_COLS:
        stats = {k: best[k].to_numpy(dtype=float, copy=True) for k in (f"{m}_mean", f"{m}_std")}
        texts = []
        for i, (values, o) in enumerate(zip(best["_values"], odd, strict=True)):
            v = values[m]
            if o.any() and v.size == o.size:
                v = v[o]
                for k, x in _stats(v, m).items():
                    stats[k][i] = x
            texts.append(restarts_text(v))
        for k, col in stats.items():
            best[k] = col
        best[f"{m}_restarts"] = texts
    best["tuning"] = np.where([o.any() for o in odd], "held_out", "in_sample")
    return best


def _pool_draws(free: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(label-free rows with each chance reference's draws pooled, the draws' rows).

    A pooled row's ``<metric>_mean`` is the mean of its draws' means (the *expected*
    score of a random subset), ``<metric>_std`` the std over every restart of every draw,
    ``<metric>_p05``/``_p95`` the 5th and 95th percentiles of the draws' means (the band
    of one draw), ``n_draws`` their number."""
    is_draw = free["draw"].notna()
    if not is_draw.any():
        return free, free.iloc[:0]
    draws = free[is_draw].copy()
    draws["protocol"] = "draw"
    pooled = []
    for (_, _), g in draws.groupby(["method", "h_label"], sort=False):
        row = g.iloc[0].copy()
        for m in METRIC_COLS:
            pooled_m = pool_draws(g[f"{m}_mean"], [v[m] for v in g["_values"]])
            for stat in ("mean", "std", "p05", "p95"):
                row[f"{m}_{stat}"] = pooled_m[stat]
            for half in ("a", "b"):
                row[f"{m}_half_{half}"] = float(g[f"{m}_half_{half}"].mean())
        for col in ("tp", "cp", "fit_seconds"):
            row[col] = float(g[col].mean())
        row["status"] = worst(list(g["status"]))
        for col in [c for c in g.columns if c.startswith("n_") and c != "n_draws"]:
            if col in g:
                row[col] = int(g[col].sum())
        row["n_draws"] = len(g)
        row["protocol"] = "label_free"
        row["pid"] = "draws"
        row["draw"] = np.nan
        row["params"] = f"{len(g)} draws"
        pooled.append(row)
    out = pd.concat([free[~is_draw], pd.DataFrame(pooled)], ignore_index=True)
    return out, draws


def select_protocols(df: pd.DataFrame, oracle_metric: str = "acc") -> pd.DataFrame:
    """Rows of the protocols, with a ``protocol`` column and the grid size used.

    * ``oracle`` (label-tuned): per method and h the grid setting with the best mean of
      the oracle metric **on the even-numbered k-means restarts**; its row reports the
      **odd-numbered restarts** (``tuning = held_out``; ``in_sample`` only with a single
      restart), so that the choice does not inflate the reported score; their scores, in
      restart order, are the row's ``<metric>_restarts``. The oracle picks
      among the settings with a score: a setting over the compute budget (NaN) is picked
      only when every setting at that ``h`` is (the row then says so).
    * ``label_free``: each method's default setting; a chance reference's draws pooled
      (:func:`_pool_draws`: mean and 5-95 % band).
    * ``draw``: every draw of a chance reference, for its distribution (percentiles,
      best-of-G draws: :mod:`ufs.stats.paired`).
    * ``grid``: every grid setting at every h, reported as the ``oracle`` rows are (the
      odd-numbered restarts; ``<metric>_half_a`` the even ones): what the label-free tuned
      protocol chooses from across data sets (:mod:`ufs.stats.tuning`, which replaces these
      rows by its own). Not a protocol of the per-data-set tables."""
    col = f"{oracle_metric}_half_a"
    parts = []
    grid = df[df["in_grid"]]
    if not grid.empty:
        held = _held_out(grid)
        held["protocol"] = GRID
        sizes = grid.groupby(["method", "h_label"])[col].size()
        held["n_settings"] = sizes.reindex(
            list(zip(held["method"], held["h_label"], strict=True))
        ).to_numpy()
        key = grid[col].astype(float).fillna(-np.inf)
        idx = key.groupby([grid["method"], grid["h_label"]]).idxmax()
        best = held.loc[idx].copy()
        best["protocol"] = "oracle"
        parts += [best, held]
    free = df[df["label_free"]].copy()
    free["protocol"] = "label_free"
    free["n_settings"] = 1
    free, draws = _pool_draws(free)
    parts += [free, draws]
    out = pd.concat([p for p in parts if not p.empty], ignore_index=True)
    out = out.drop(columns=[c for c in ("_values", "_restart") if c in out])
    return out.sort_values(["protocol", "method", "h", "pid"]).reset_index(drop=True)


def _h_order(labels) -> list[str]:
    nums = sorted({int(x) for x in labels if x != "all"})
    return [str(x) for x in nums] + (["all"] if "all" in set(labels) else [])


#: the protocols in the order every table shows them: the unsupervised numbers first
TABLE_PROTOCOLS = ("label_free", "oracle")


#: a protocol's caption in the per-data-set tables (the legend says the rest once)
TABLE_TITLES = {
    "label_free": "label-free: each method's default setting, no labels used",
    "oracle": "label-tuned: the labels choose the grid setting per h (as in the papers)",
}


#: the summary columns of a protocol's score tables: the mean over h (the score the ranks
#: use) in both; the best over h only where the labels may choose (label-tuned)
SUMMARY_COLUMNS = {"label_free": ("mean",), "oracle": ("mean", "best")}


SUMMARY_TITLES = {"mean": "mean over h", "best": "best over h (labels choose h)"}


def mean_over_h(g: pd.DataFrame, m: str) -> tuple[float, bool]:
    """A method's score on a data set: the mean over its h of the metric's mean over
    restarts (what the ranks use), and whether some h has no number (budget exceeded)."""
    values = g[f"{m}_mean"].astype(float)
    scored = values.dropna()
    return (float(scored.mean()) if not scored.empty else float("nan")), bool(values.isna().any())


def ordered_methods(part: pd.DataFrame, m: str) -> list[tuple[str, pd.DataFrame, str]]:
    """``(method, rows indexed by h_label, role)`` of one protocol: competitors and
    variants by their mean over h of ``m`` (best first, no number last), then the
    references by name: the order of the markdown and the LaTeX tables."""
    items = []
    for method, g in part.groupby("method", sort=True):
        role = str(g["role"].iloc[0]) if "role" in g else "method"
        g = g.set_index("h_label")
        col = f"{m}_mean" if f"{m}_mean" in g else m
        score = g[col].astype(float).mean()
        key = (role == "reference", -score if score == score else np.inf, method)
        items.append((key, (method, g, role)))
    return [item for _, item in sorted(items, key=lambda kv: kv[0])]


#: the summaries of a metric a table cell shows (``<metric>_<moment>`` columns)
_MOMENTS = ("mean", "std", "p05", "p95")


def _table_columns(part: pd.DataFrame, m: str) -> list[str]:
    """The columns a table of metric ``m`` reads, in markdown and in LaTeX (the method,
    its role, h, the fit status, and the metric's value or summaries)."""
    wanted = ("method", "role", "h_label", "status", m, *(f"{m}_{s}" for s in _MOMENTS))
    return [c for c in wanted if c in part]


def table_blocks(sel: pd.DataFrame, protocols=TABLE_PROTOCOLS):
    """``(protocol, its rows, its h labels, metric)`` of every table of a data set, in the
    tables' order (label-free first; ACC, NMI, then TP@h and CP@h on simulations): what
    the markdown and the LaTeX tables iterate over. The rows carry only the columns a
    table reads (:func:`_table_columns`): :func:`ordered_methods` copies them per method,
    and the ~100 others made a quarter of the tables' time."""
    has_truth = "tp" in sel and sel["tp"].notna().any()
    for protocol in protocols:
        part = sel[sel["protocol"] == protocol]
        if part.empty:
            continue
        hs = _h_order(part["h_label"])
        for m in ["acc", "nmi"] + (["tp", "cp"] if has_truth else []):
            yield protocol, part[_table_columns(part, m)], hs, m


#: the legend of a chance reference's cells
BAND_LEGEND = (
    "A reference in italics is not a competitor. A chance reference (random features) "
    "reads mean [5th, 95th percentile] over its independent draws (evaluation."
    "reference_draws): the expected score of a random subset and the band of one draw."
)
