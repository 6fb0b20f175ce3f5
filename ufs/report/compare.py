"""Our numbers beside a paper's published numbers, cell by cell.

For every published cell ``(dataset, method, metric, h)`` we take our **label-tuned
(oracle)** result — the protocol the papers use — and reduce it the way the paper did:

* numeric ``h``: our value at that h;
* ``best``: our best mean over our h grid (the paper's "best over h");
* ``mean``: the mean over our h grid of the per-h values (FSBC and GOLFS average over h);
* ``unstated``: treated as ``best`` and flagged as an assumption;
* ``all``: the all-features reference.

**Agreement** (:func:`agreement`): a cell *agrees* when the difference is within
what both sides' uncertainty allows at the two-sided 95 % level, ``|ours − published| ≤
1.96 · √(se_pub² + se_ours²)``, each ``se`` the standard error of a mean, **or** within the
published number's own rounding, half a unit of its last printed digit
(:func:`rounding_of`: 0.736 → 0.0005; a paper that prints zero spread and a mean rounded
to three digits agrees with any mean that rounds to it) —

* ACC, NMI, ARI, NE: a std over ``R`` k-means restarts divided by ``√R`` (published: the
  papers' 20; ours: a label-tuned row reports the ``R/2`` odd-numbered restarts of the
  run's ``R``, held out from the choice of its setting; a mean over the h grid: from the
  covariance of the restarts' scores across h, :func:`mean_over_h_std` — the k-means
  seeds are the same at every h, so the per-h means are not independent); a side
  without a published std contributes 0, and the basis says so ("our spread only"); with
  neither std the old fixed tolerance 0.02 is the basis;
* TP (a mean count of true features over simulation repeats): our replicates' spread
  ``tp_std / √replicates``; the paper publishes no spread (0);
* CP (a fraction of repeats): binomial, ``√(p(1 − p)/n)`` on each side (the paper's
  ``n``: :data:`PUBLISHED_REPEATS`; ours: the replicates), with a floor of half a repeat,
  ``1/(2n)``, so that two equal-looking fractions from few repeats are not "exact".

A published cell outside what the metric can take is its own status, *impossible as
published*, not "differs": ACC below ``1/k`` (the Hungarian matching of ``k`` clusters to
``k`` classes scores at least the average over all matchings, ``1/k`` of the samples),
ACC, NMI, NE or CP outside [0, 1], TP above h. No multiplicity correction: the status is a
per-cell description, the paper-level verdict counts them.

A cell we have no value for keeps the reason as its status (:func:`missing_reason`, from
the registries, so the report reads the same on any machine): *method not implemented*
(not in the method registry), *data set not registered*, *data network-only* (the
registry's static flag: no public copy small enough to mirror), or *not run* (both
registered, but outside the run's scope: a slice, a budget, an unfinished run); ``h=<h> not
run`` and *budget exceeded* for a missing h or a fit over the compute budget.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..fileio import write_text, write_with
from .aggregate import _save_figure
from .fonts import in_figure_font

__all__ = [
    "compare_published",
    "comparison_markdown",
    "mean_over_h_std",
    "missing_reason",
    "missing_text",
    "no_value",
    "restart_scores",
    "restarts_behind",
    "rounding_of",
]

NO_STD_TOLERANCE = 0.02
#: two-sided 95 % normal quantile of the agreement test
Z95 = 1.959963984540054
#: simulation repeats behind a paper's TP/CP cells (GOLFS §3.1: 100 repeats)
PUBLISHED_REPEATS = {"golfs": 100}
#: a rounding margin where a published number's digits are not at hand: the papers print
#: 3-4 decimals (a cell's own is :func:`rounding_of`)
ROUNDING = 5e-4
#: the published tables that print fewer digits than they measure by dropping trailing
#: zeros (paper, table) → the decimals the table prints: GOLFS's Table 1 prints TP and CP
#: (means over its 100 repeats, multiples of 0.01) as ``2.4``, ``0.9``, ``0``
TRAILING_ZEROS_DROPPED = {("golfs", "1"): 2}

AGREES, DIFFERS, IMPOSSIBLE = "agrees", "differs", "impossible as published"


def rounding_of(text: str, paper: str = "", table: str = "") -> float:
    """Half a unit of the last digit of a published number as stored (``value`` of
    ``config/published/<paper>.csv``: the printed digits, percentages shifted by two
    places, trailing zeros kept: ``0.720``): ``"0.736"`` → 0.0005, ``"0.0855"`` → 0.00005,
    ``"3"`` → 0.5. A table of :data:`TRAILING_ZEROS_DROPPED` counts the decimals it prints
    (``"0"`` in GOLFS's Table 1 → 0.005)."""
    digits = text.strip().lower().split("e")[0]
    decimals = len(digits.split(".", 1)[1]) if "." in digits else 0
    decimals = max(decimals, TRAILING_ZEROS_DROPPED.get((str(paper), str(table)), 0))
    return 0.5 * 10.0**-decimals


def impossible(
    metric: str, value: float, *, n_classes: int | None, h: str, rounding: float = ROUNDING
) -> str:
    """Why a published ``value`` of ``metric`` cannot be, or ``""``; ``rounding``: the
    value's own (:func:`rounding_of`), so that a bound met after rounding is possible."""
    if metric in ("acc", "nmi", "ne", "cp") and not -rounding <= value <= 1 + rounding:
        return f"{metric.upper()} {value} is outside [0, 1]"
    if metric == "ari" and not -1 - rounding <= value <= 1 + rounding:
        return f"ARI {value} is outside [−1, 1]"
    if metric == "acc" and n_classes and value < 1 / n_classes - rounding:
        return (
            f"ACC {value} is below 1/k = {1 / n_classes:.3f}, the least any partition into "
            f"k = {n_classes} clusters scores under the best matching"
        )
    if metric == "tp" and h.isdigit() and value > int(h) + rounding:
        return f"TP {value} is above h = {h}"
    return ""


def agreement(
    metric: str,
    published: float,
    published_std: float | None,
    ours: float,
    ours_std: float | None,
    *,
    restarts: int = 20,
    ours_restarts: int | None = None,
    replicates: int | None = None,
    published_repeats: int | None = None,
    rounding: float = 0.0,
) -> tuple[str, float, str]:
    """(``agrees`` / ``differs``, the margin the difference is held to, its basis): the
    criterion of the module docstring for one computed cell. ``restarts``: behind the
    published std (the papers' 20); ``ours_restarts``: behind ours (default the same; the
    held-out half of a label-tuned row); ``rounding``: half a unit of the published
    number's last digit (:func:`rounding_of`) — the margin is the larger of it and the
    standard errors' (the basis names the rounding where it is the larger)."""

    def ok(x: float | None) -> bool:
        return x is not None and np.isfinite(x)

    diff = abs(ours - published)
    if metric == "cp":
        n_o = max(int(replicates or 1), 1)
        se_o2 = max(ours * (1 - ours), 0.0) / n_o + (1 / (2 * n_o)) ** 2
        se_p2 = 0.0
        basis = f"binomial, our {n_o} replicates"
        if published_repeats:
            n_p = int(published_repeats)
            se_p2 = max(published * (1 - published), 0.0) / n_p + (1 / (2 * n_p)) ** 2
            basis += f" and the paper's {n_p} repeats"
        margin = Z95 * float(np.sqrt(se_o2 + se_p2))
    elif metric == "tp":
        if ok(ours_std) and replicates and replicates > 1:
            margin = Z95 * float(ours_std) / np.sqrt(replicates)
            basis = f"our {replicates} replicates' spread (the paper publishes none)"
        else:
            margin, basis = 0.5, "half a feature (no replicate spread)"
    else:
        r = max(int(restarts), 1)
        r_o = max(int(ours_restarts or restarts), 1)
        se_o = float(ours_std) / np.sqrt(r_o) if ok(ours_std) else None
        se_p = float(published_std) / np.sqrt(r) if ok(published_std) else None
        if se_o is None and se_p is None:
            margin, basis = NO_STD_TOLERANCE, f"fixed {NO_STD_TOLERANCE} (no std on either side)"
        else:
            margin = Z95 * float(np.sqrt((se_o or 0.0) ** 2 + (se_p or 0.0) ** 2))
            basis = (
                f"standard errors over {r} restarts"
                + (f" (ours: the {r_o} held out)" if r_o != r else "")
                if se_o is not None and se_p is not None
                else "our spread only (no published std)"
                if se_p is None
                else "the published spread only"
            )
    if rounding > margin:
        margin, basis = rounding, f"{basis}; the published rounding, ±{rounding:g}, is wider"
    return (AGREES if diff <= margin + 1e-12 else DIFFERS), margin, basis


NOT_RUN = "not run"
NOT_IMPLEMENTED = "method not implemented"
NOT_REGISTERED = "data set not registered"
NETWORK_ONLY = "data network-only"
#: a method whose jobs on a data set were not all done when its run was archived
IN_PROGRESS = "in progress"


def missing_reason(dataset: str, method: str) -> str:
    """Why a published cell of ``method`` on ``dataset`` has no value of ours, from the
    method and data set registries (module docstring)."""
    from ..datasets import get_dataset
    from ..registry import available_methods

    if method not in set(available_methods()):
        return NOT_IMPLEMENTED
    try:
        spec = get_dataset(dataset)
    except (KeyError, ValueError):
        return NOT_REGISTERED
    return NETWORK_ONLY if spec.needs_network else NOT_RUN


def restart_scores(text) -> np.ndarray:
    """A table row's ``<metric>_restarts`` cell (the scores of the restarts behind its mean,
    in restart order, space-separated: :func:`ufs.report.results_table.select_protocols`) as
    an array; empty where the cell is empty (a row without them)."""
    if not isinstance(text, str) or not text.strip():
        return np.empty(0)
    return np.array([float(x) for x in text.split()])


def mean_over_h_std(rows: pd.DataFrame, metric: str) -> float:
    """The std that gives a mean over the h grid (the ``rows``, one per h) its standard
    error over the same restarts, ``std / √R``.

    The k-means restarts are seeded alike at every h (and a ranking method's feature sets
    are nested), so the per-h means are correlated: Var(mean over h) = (1/n²) Σ_{h,h'}
    Cov(ȳ_h, ȳ_h'), with Cov(ȳ_h, ȳ_h') = Cov(y_h, y_h') / R from the restarts' scores
    paired by restart (``<metric>_restarts``). Its estimate equals the variance over the
    restarts of each restart's mean over h, divided by R: the std returned is that of the
    per-restart means over h. Without the restarts' scores (a table written without them,
    or of unequal lengths) it is the bound of full correlation, the mean of the per-h stds —
    never the independent ``√(Σ σ_h²) / n``, which is too small by up to √n."""
    col, std = f"{metric}_restarts", f"{metric}_std"
    stds = rows[std].astype(float) if std in rows else pd.Series(dtype=float)
    if col in rows:
        scores = [restart_scores(t) for t in rows[col]]
        if scores and scores[0].size > 1 and len({s.size for s in scores}) == 1:
            per_restart = np.vstack(scores).mean(axis=0)
            if np.isfinite(per_restart).all():
                return float(per_restart.std(ddof=1))
    return float(stds.mean())


def restarts_behind(rows: pd.DataFrame, restarts: int) -> int:
    """The k-means restarts behind our label-tuned std: the odd-numbered half when the
    setting was chosen on the even ones (``tuning = held_out``,
    :func:`ufs.report.results_table.select_protocols`), else all ``restarts``."""
    held_out = "tuning" in rows and (rows["tuning"] == "held_out").all()
    return max(restarts // 2, 1) if held_out else restarts


def _ours(
    tables: pd.DataFrame,
    dataset: str,
    method: str,
    metric: str,
    h: str,
    restarts: int,
    pending: dict[tuple[str, str], str] | None = None,
):
    """(our value, its std, status, the restarts behind the std) for one published cell;
    ``pending``: (data set, method) → ``"in progress (k of m jobs)"`` for a run archived
    before it finished (:func:`ufs.report.reproduction.withhold_unfinished`)."""
    if pending and (dataset, method) in pending:
        return None, None, pending[(dataset, method)], restarts
    part = tables[
        (tables["dataset"] == dataset)
        & (tables["method"] == method)
        & (tables["protocol"] == "oracle")
    ]
    if part.empty:
        return None, None, missing_reason(dataset, method), restarts
    col = metric if metric in ("tp", "cp") else f"{metric}_mean"
    scol = {"tp": "tp_std", "cp": None}.get(metric, f"{metric}_std")
    if scol is not None and scol not in part:
        scol = None

    def one(row: pd.Series, status: str = "ok"):
        if pd.isna(row[col]):  # the fit exceeded the compute budget
            return None, None, "budget exceeded", restarts
        std = float(row[scol]) if scol else None
        return float(row[col]), std, status, restarts_behind(row.to_frame().T, restarts)

    if h == "all" or (part["h_label"] == "all").all():
        return one(part.iloc[0])
    part = part[part["h_label"] != "all"]
    if part[col].isna().all():  # every fit over the compute budget: no value to compare
        return None, None, "budget exceeded", restarts
    if h in ("best", "unstated"):
        return one(part.loc[part[col].idxmax()], "ok" if h == "best" else "assumed best over h")
    if h == "mean":
        scored = part[part[col].notna()]
        std = mean_over_h_std(scored, metric) if scol else None
        return float(part[col].mean()), std, "ok", restarts_behind(part, restarts)
    sel = part[part["h_label"] == str(h)]
    if sel.empty:
        return None, None, f"h={h} not run", restarts
    return one(sel.iloc[0])


#: statuses of a published cell for which we have no value
NO_VALUE = (NOT_RUN, NOT_IMPLEMENTED, NOT_REGISTERED, NETWORK_ONLY, "budget exceeded")


def no_value(status: pd.Series) -> pd.Series:
    """Cells without a value of ours (the statuses of :data:`NO_VALUE`, ``h=<h> not
    run`` and ``in progress (k of m jobs)``)."""
    return (
        status.isin(NO_VALUE) | status.str.endswith(" not run") | status.str.startswith(IN_PROGRESS)
    )


def _replicates(tables: pd.DataFrame, dataset: str, method: str) -> int | None:
    part = tables[(tables["dataset"] == dataset) & (tables["method"] == method)]
    if "replicates" not in part or part["replicates"].isna().all():
        return None
    return int(part["replicates"].max())


def _n_classes(dataset: str) -> int | None:
    from ..datasets import get_dataset

    try:
        return int(get_dataset(dataset).n_classes)
    except (KeyError, ValueError):
        return None


def compare_published(
    published_csv: str | Path,
    table_csvs: list[str | Path],
    *,
    restarts: int = 20,
    pending: dict[tuple[str, str], str] | None = None,
) -> pd.DataFrame:
    """One row per published cell with our value, the difference, the agreement status
    (:func:`agreement`, :func:`impossible`), its margin and basis; ``restarts``: the
    k-means restarts behind each side's std (the run's, the papers' 20); ``pending``: the
    (data set, method) pairs of a run in progress whose cells are withheld (their label-
    tuned best would be a best over part of the grid)."""
    # the values as printed: their last digit is the published rounding (rounding_of)
    pub = pd.read_csv(published_csv, dtype={"h": str, "value": str})
    frames = [pd.read_csv(f, dtype={"h_label": str}) for f in table_csvs if Path(f).exists()]
    tables = (
        pd.concat(frames, ignore_index=True)
        if frames
        else pd.DataFrame(columns=["dataset", "method", "protocol", "h_label"])
    )
    rows = []
    for _, p in pub.iterrows():
        ours, ours_std, status, n_ours = _ours(
            tables, p["dataset"], p["method"], p["metric"], str(p["h"]), restarts, pending
        )
        diff = None if ours is None else ours - float(p["value"])
        pub_std = float(p["std"]) if pd.notna(p["std"]) and float(p["std"]) > 0 else None
        rounding = rounding_of(str(p["value"]), str(p["paper"]), str(p["table"]))
        why = impossible(
            p["metric"],
            float(p["value"]),
            n_classes=_n_classes(p["dataset"]),
            h=str(p["h"]),
            rounding=rounding,
        )
        verdict, margin, basis = "", np.nan, ""
        if why:
            verdict, basis = IMPOSSIBLE, why
        elif ours is not None:
            verdict, margin, basis = agreement(
                p["metric"],
                float(p["value"]),
                pub_std,
                ours,
                ours_std,
                restarts=restarts,
                ours_restarts=n_ours,
                replicates=_replicates(tables, p["dataset"], p["method"]),
                published_repeats=PUBLISHED_REPEATS.get(str(p["paper"])),
                rounding=rounding,
            )
        rows.append(
            {
                "paper": p["paper"],
                "table": p["table"],
                "dataset": p["dataset"],
                "method": p["method"],
                "metric": p["metric"],
                "h": p["h"],
                "published": float(p["value"]),
                "published_std": float(p["std"]) if pd.notna(p["std"]) else np.nan,
                "ours": np.nan if ours is None else ours,
                "ours_std": np.nan if ours_std is None else ours_std,
                "difference": np.nan if diff is None else diff,
                "agreement": verdict,
                "margin": margin,
                "basis": basis,
                "differs": verdict == DIFFERS,
                "protocol": "oracle",
                "status": status,
            }
        )
    return pd.DataFrame(rows)


def missing_text(cmp: pd.DataFrame) -> str:
    """``"70 data network-only, 2 not run"``: why the cells without a value of ours have
    none, most frequent reason first (ties by name); ``""`` when every cell has one."""
    status = cmp.loc[no_value(cmp["status"].astype(str)), "status"].astype(str)
    why = status.where(~status.str.startswith(IN_PROGRESS), IN_PROGRESS).value_counts()
    return ", ".join(f"{n} {r}" for r, n in sorted(why.items(), key=lambda i: (-i[1], i[0])))


def _margin_text(margin) -> str:
    """A margin as the table prints it: three decimals, or two significant digits below
    0.001 (a published rounding: ``0.0005``, ``0.00005``); ``—`` without one."""
    if margin is None or pd.isna(margin):
        return "—"
    if 0 < margin < 1e-3:
        return np.format_float_positional(float(margin), precision=2, fractional=False)
    return f"{margin:.3f}"


def comparison_markdown(cmp: pd.DataFrame, paper: str) -> str:
    missing = no_value(cmp["status"])
    done = cmp[~missing]
    counts = done["agreement"].value_counts() if "agreement" in done else pd.Series(dtype=int)
    impossible_n = int((cmp.get("agreement", pd.Series(dtype=str)) == IMPOSSIBLE).sum())
    why_text = missing_text(cmp)
    lines = [
        f"## {paper}",
        "",
        f"{len(done)} of {len(cmp)} published cells computed: {int(counts.get(AGREES, 0))} "
        f"agree, {int(counts.get(DIFFERS, 0))} differ (beyond both 1.96 standard errors of the "
        "two means and the published rounding, half a unit of the printed last digit; the "
        "module docstring of `ufs.report.compare`)"
        + (f"; {impossible_n} impossible as published" if impossible_n else "")
        + (f"; not computed: {why_text}" if why_text else "")
        + ". Ours: label-tuned (oracle) protocol, as in the paper — it uses the labels.",
        "",
        "| table | dataset | method | metric | h | published | ours | difference | margin | |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for _, r in cmp.iterrows():
        pub = f"{r['published']:.3f}" + (
            f" ± {r['published_std']:.3f}" if pd.notna(r["published_std"]) else ""
        )
        margin = _margin_text(r.get("margin"))
        if r.get("agreement") == IMPOSSIBLE:
            flag = f"*impossible as published* ({r['basis']})"
        elif missing[r.name]:
            flag = r["status"]
        else:
            flag = ("**differs**" if r["differs"] else "agrees") + (
                "" if r["status"] == "ok" else f" ({r['status']})"
            )
        if missing[r.name]:
            ours, diff = "—", "—"
        else:
            ours = f"{r['ours']:.3f}" + (
                f" ± {r['ours_std']:.3f}" if pd.notna(r["ours_std"]) else ""
            )
            diff = f"{r['difference']:+.3f}"
        lines.append(
            f"| {r['table']} | {r['dataset']} | {r['method']} | {r['metric']} | {r['h']} | "
            f"{pub} | {ours} | {diff} | {margin} | {flag} |"
        )
    return "\n".join(lines) + "\n"


@in_figure_font
def write_comparison(
    published_csv,
    table_csvs,
    out_csv,
    out_md,
    out_png,
    paper: str,
    restarts: int = 20,
    pending: dict[tuple[str, str], str] | None = None,
) -> None:
    """The comparison with the paper's published cells (:func:`compare_published`) as CSV
    and markdown, and its scatter plot of ours against published (``out_png``; ``None``:
    no plot)."""
    cmp = compare_published(published_csv, table_csvs, restarts=restarts, pending=pending)
    write_with(out_csv, lambda p: cmp.to_csv(p, index=False))
    write_text(out_md, comparison_markdown(cmp, paper))
    if out_png is None:  # the table only
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    done = cmp[~no_value(cmp["status"]) & cmp["metric"].isin(["acc", "nmi", "ari", "ne"])]
    fig, ax = plt.subplots(figsize=(5, 5))
    for metric, g in done.groupby("metric"):
        ax.scatter(g["published"], g["ours"], s=14, label=metric)
    ax.plot([0, 1], [0, 1], color="gray", lw=1, ls="--")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("published")
    ax.set_ylabel("ours (label-tuned oracle)")
    ax.set_title(f"{paper}: ours vs published ({len(done)} cells)")
    if not done.empty:
        ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    _save_figure(fig, Path(out_png), dpi=110)
