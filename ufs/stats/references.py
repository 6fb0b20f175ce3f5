"""The methods against the references, per data set and per h: the tables of
``summary.md`` and ``docs/benchmark.md`` that say whether a method beats chance and
beats using every feature, with paired tests (:mod:`ufs.stats.paired`).

* :func:`reference_tests` — each competitor against the *expected* random score and
  against ``all_features``: wins/ties/losses, median difference with its bootstrap 95 %
  CI, Wilcoxon p Holm-corrected, the Bayesian signed-rank probabilities, and the median
  percentile of the method among the random draws. Under the label-tuned protocol the
  random reference of a method with G settings is the **best of G random draws** chosen
  on the same restarts (:func:`ufs.stats.paired.best_of_g`); under the label-free tuned
  protocol (:mod:`ufs.stats.tuning`), whose choice does not use the data set's labels, it
  is the expected random subset on the same (odd) restarts (the best of one draw).
* :func:`paired_scores` — each method and its reference per data set (or family), the
  input of those tests (and of their leave-one-family-out runs).
* :func:`per_h_view` — the area under the score curve over log h, and per-h wins and
  losses against the expected random score (and beyond its 5-95 % band).
* :func:`tuning_gain` — each method's label-tuning gain next to random's gain for the
  same number of settings G.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import paired, ranking, views

__all__ = [
    "RANDOM",
    "ALL_FEATURES",
    "paired_scores",
    "reference_tests",
    "all_reference_tests",
    "per_h_view",
    "tuning_gain",
    "references_markdown",
]

RANDOM = "random"
ALL_FEATURES = "all_features"


def _grid_sizes(tables: pd.DataFrame) -> pd.Series:
    """method → its number of label-tuned settings G (the largest over data sets and h)."""
    part = tables[tables["protocol"] == "oracle"]
    if part.empty or "n_settings" not in part:
        return pd.Series(dtype=int)
    return part.groupby("method")["n_settings"].max().astype(int)


def _compared(tables, include_variants: bool, min_h_values: int):
    rows, excluded, thin = ranking.competitors(
        tables, include_variants=include_variants, min_h_values=min_h_values
    )
    return rows, thin


def _reference_cells(tables: pd.DataFrame, protocol: str, metric: str, methods) -> dict:
    """method → (data set, h) cells of its random reference: the expected random score
    (label-free), the same on the odd restarts that report the label-free tuned rows (the
    best of one draw: the choice did not use these labels), or the best of G random draws,
    G its number of settings (label-tuned)."""
    if protocol == "label_free":
        values, _ = views.cell_table(tables, protocol, metric)
        if RANDOM not in values:
            return {}
        return {m: values[RANDOM] for m in methods}
    sizes = _grid_sizes(tables)
    g_of = {m: 1 if protocol != "oracle" else int(sizes.get(m, 1)) for m in methods}
    best = {g: paired.best_of_g_cells(tables, metric, g) for g in set(g_of.values())}
    if all(b.empty for b in best.values()):
        return {}
    return {m: best[g] for m, g in g_of.items()}


def _paired_with(values: pd.DataFrame, ref_cells: dict, families) -> tuple[pd.DataFrame, dict]:
    """(data sets × methods, method → reference per data set): each method and its
    reference on the cells where both have a result (the missing-data rule)."""
    cols, refs = {}, {}
    for m, ref in ref_cells.items():
        if m not in values:
            continue
        both = pd.DataFrame({"m": values[m], "ref": ref.reindex(values.index)})
        s, _ = views.view_scores(both, ["m", "ref"], families)
        cols[m], refs[m] = s["m"], s["ref"]
    return pd.DataFrame(cols), refs


def paired_scores(
    tables: pd.DataFrame,
    protocol: str,
    metric: str,
    *,
    include_variants: bool = False,
    min_h_values: int = 3,
    view=None,
    cells: pd.Index | None = None,
) -> dict[str, tuple[pd.DataFrame, dict[str, pd.Series]]]:
    """What :func:`reference_tests` tests: prefix (``rand_``, ``all_``) → (data sets, or
    families, × methods, method → its reference's scores on the same rows), each pair on
    the cells where both have a result; a reference that did not run has no entry."""
    families = None
    if view is not None:
        tables, _ = view.apply(tables)
        families = view.families()
    rows, thin = _compared(tables, include_variants, min_h_values)
    kept = tables[~tables["dataset"].isin(list(thin))]
    impute = view.impute_budget if view is not None else True
    values, _ = views.cell_table(rows, protocol, metric, impute_budget=impute, reference_rows=kept)
    if cells is not None:
        values = values.reindex(cells)
    if values.empty:
        return {}
    methods = [m for m in values.columns if values[m].notna().any()]
    every, _ = views.cell_table(kept, protocol, metric)  # references too
    out = {}
    rand = _reference_cells(kept, protocol, metric, methods)
    if rand:
        out["rand_"] = _paired_with(values, rand, families)
    if ALL_FEATURES in every:
        out["all_"] = _paired_with(values, {m: every[ALL_FEATURES] for m in methods}, families)
    return out


def reference_tests(
    tables: pd.DataFrame,
    protocol: str,
    metric: str,
    *,
    alpha: float = 0.05,
    include_variants: bool = False,
    min_h_values: int = 3,
    bayes: bool = True,
    view=None,
    cells: pd.Index | None = None,
) -> pd.DataFrame:
    """One row per compared method: its tests against random (``rand_*``) and against
    all features (``all_*``) and ``percentile`` (median over data sets of its percentile
    among the random draws; label-free only). Each pair (method, reference) is compared on
    the (data set, h) cells where both have a result, one data set per family under a
    ``view`` that says so (:mod:`ufs.stats.views`); ``cells``: only these (data set, h)
    cells (the rank comparison's, ``RankResult.cells.index``: one N per view). Empty when
    neither reference ran."""
    pairs = paired_scores(
        tables,
        protocol,
        metric,
        include_variants=include_variants,
        min_h_values=min_h_values,
        view=view,
        cells=cells,
    )
    out = [
        paired.compare_to_reference(scores, ref, alpha=alpha, bayes=bayes).add_prefix(prefix)
        for prefix, (scores, ref) in pairs.items()
    ]
    if not out:
        return pd.DataFrame()
    res = pd.concat(out, axis=1)
    if protocol != "label_free":
        return res
    if view is not None:
        tables, _ = view.apply(tables)
    rows, thin = _compared(tables, include_variants, min_h_values)
    kept = tables[~tables["dataset"].isin(list(thin))]
    draws = paired.draw_scores(kept, metric)
    if not draws.empty:
        data_scores, status = ranking.dataset_scores(rows, protocol, metric)
        pct = paired.random_percentiles(data_scores.mask(status == "budget_exceeded"), draws)
        res["percentile"] = pct.median(axis=0).reindex(res.index)
        res["n_draws"] = draws.shape[1]
    return res


def all_reference_tests(
    tables: pd.DataFrame,
    *,
    alpha: float = 0.05,
    include_variants: bool = False,
    min_h_values: int = 3,
    view=None,
    results: list | None = None,
    bayes: bool | None = None,
) -> dict[tuple[str, str], pd.DataFrame]:
    """:func:`reference_tests` of every protocol × metric (with the Bayesian test unless
    ``bayes`` is False); with ``results`` (the rank
    comparisons, :func:`ufs.stats.ranking.rank_all`) each on its comparison's cells."""
    cells = {(r.protocol, r.metric): r.cells.index for r in results or [] if not r.cells.empty}
    use_bayes = True if bayes is None else bayes
    return {
        (p, m): reference_tests(
            tables,
            p,
            m,
            alpha=alpha,
            include_variants=include_variants,
            min_h_values=min_h_values,
            bayes=use_bayes,
            view=view,
            cells=cells.get((p, m)),
        )
        for p in ranking.PROTOCOLS
        for m in ranking.METRICS
    }


def _auc_log_h(h: np.ndarray, y: np.ndarray) -> float:
    """Mean of the score curve over log h (trapezoids; the area divided by the log-range);
    the score itself for a single h."""
    order = np.argsort(h)
    h, y = np.log(h[order].astype(float)), y[order].astype(float)
    if h.size == 1 or h[-1] == h[0]:
        return float(y.mean())
    return float(np.sum((y[1:] + y[:-1]) / 2 * np.diff(h)) / (h[-1] - h[0]))


def per_h_view(
    tables: pd.DataFrame,
    metric: str,
    *,
    protocol: str = "label_free",
    include_variants: bool = False,
    min_h_values: int = 3,
) -> pd.DataFrame:
    """Per compared method: ``auc`` (mean over data sets of the score's mean over log h),
    ``wins``/``losses`` (data set × h cells above / below the expected random score),
    ``above_band``/``below_band`` (beyond random's 95th / below its 5th percentile) and
    ``cells``; random from the label-free draws (one random subset, no tuning)."""
    rows, thin = _compared(tables, include_variants, min_h_values)
    part = rows[(rows["protocol"] == protocol) & (rows["h_label"].astype(str) != "all")]
    kept = tables[~tables["dataset"].isin(list(thin))]
    rand = kept[(kept["protocol"] == "label_free") & (kept["method"] == RANDOM)]
    col = f"{metric}_mean"
    rand = rand.set_index(["dataset", "h_label"])
    out = []
    for m, g in part.groupby("method"):
        aucs, w, lo, above, below, cells = [], 0, 0, 0, 0, 0
        for _, gd in g.groupby("dataset"):
            gd = gd.dropna(subset=[col])
            if gd.empty:
                continue
            aucs.append(_auc_log_h(gd["h"].to_numpy(dtype=float), gd[col].to_numpy()))
        for _, r in g.iterrows():
            key = (r["dataset"], r["h_label"])
            if pd.isna(r[col]) or key not in rand.index:
                continue
            ref = rand.loc[key]
            cells += 1
            w += r[col] > ref[col]
            lo += r[col] < ref[col]
            p05, p95 = ref.get(f"{metric}_p05", np.nan), ref.get(f"{metric}_p95", np.nan)
            above += bool(r[col] > p95)
            below += bool(r[col] < p05)
        out.append(
            {
                "method": m,
                "auc": float(np.mean(aucs)) if aucs else np.nan,
                "cells": cells,
                "wins": int(w),
                "losses": int(lo),
                "above_band": int(above),
                "below_band": int(below),
            }
        )
    res = pd.DataFrame(out)
    return res.set_index("method").sort_values("auc", ascending=False) if len(res) else res


def tuning_gain(
    tables: pd.DataFrame, metric: str, *, include_variants: bool = False, min_h_values: int = 3
) -> pd.DataFrame:
    """Per compared method with label-tuned rows: ``G`` settings, ``gain`` (median over data
    sets of tuned − default, both on the odd restarts) and ``random_gain`` (median over
    data sets of random's best-of-G − its mean, also on the odd restarts): a gain no larger
    than random's is what searching G settings buys by chance."""
    rows, thin = _compared(tables, include_variants, min_h_values)
    kept = tables[~tables["dataset"].isin(list(thin))]
    sizes = _grid_sizes(rows)
    if sizes.empty:
        return pd.DataFrame()
    tuned, _ = ranking.dataset_scores(rows, "oracle", metric)
    free_rows = rows.assign(**{f"{metric}_mean": rows[f"{metric}_half_b"]})
    free, _ = ranking.dataset_scores(free_rows, "label_free", metric)
    draws = kept[(kept["protocol"] == "draw") & (kept["method"] == RANDOM)]
    rand_mean = draws.groupby(["dataset", "h_label"])[f"{metric}_half_b"].mean()
    rand_mean = rand_mean.groupby("dataset").mean()
    out = []
    for m in tuned.columns:
        if m not in free:
            continue
        g = int(sizes.get(m, 1))
        gain = (tuned[m] - free[m]).dropna()
        row = {"method": m, "G": g, "gain": float(gain.median()) if len(gain) else np.nan}
        if not draws.empty:
            best = paired.best_of_g_scores(kept, metric, g)
            rg = (best - rand_mean).dropna()
            row["random_gain"] = float(rg.median()) if len(rg) else np.nan
        out.append(row)
    return pd.DataFrame(out).set_index("method") if out else pd.DataFrame()


def _pp(x: float) -> str:
    return "–" if pd.isna(x) else f"{100 * x:+.1f}"


def _p(x: float) -> str:
    if pd.isna(x):
        return "–"
    return f"{x:.2g}" if x >= 1e-3 else f"{x:.0e}"


def _test_cells(r: pd.Series, prefix: str, bayes: bool) -> list[str]:
    if pd.isna(r.get(f"{prefix}n")):
        return ["–"] * (4 + bayes)
    wtl = f"{int(r[f'{prefix}wins'])}/{int(r[f'{prefix}ties'])}/{int(r[f'{prefix}losses'])}"
    diff = (
        f"{_pp(r[f'{prefix}median_diff'])} [{_pp(r[f'{prefix}ci_low'])}, "
        f"{_pp(r[f'{prefix}ci_high'])}]"
    )
    p = _p(r[f"{prefix}p_holm"]) + (" *" if r[f"{prefix}significant"] else "")
    cells = [wtl, diff, p, r[f"{prefix}direction"]]
    if bayes:
        probs = [
            r.get(f"{prefix}p_better"),
            r.get(f"{prefix}p_equivalent"),
            r.get(f"{prefix}p_worse"),
        ]
        cells.append(
            "–" if any(pd.isna(x) for x in probs) else " / ".join(f"{x:.2f}" for x in probs)
        )
    return cells


def references_markdown(
    tables: pd.DataFrame,
    *,
    alpha: float = 0.05,
    include_variants: bool = False,
    min_h_values: int = 3,
    titles: dict[str, str] = ranking.PROTOCOL_TITLES,
    heading: str = "##",
    name=str,
    tests: dict[tuple[str, str], pd.DataFrame] | None = None,
) -> str:
    """The markdown of the comparisons with the references, per protocol and metric, the
    per-h view and the tuning gains. ``tests``: :func:`all_reference_tests`' result when
    the caller has it (the Bayesian test takes ~0.3 s per method and reference)."""
    rows, excluded, thin = ranking.competitors(
        tables, include_variants=include_variants, min_h_values=min_h_values
    )
    lines = [f"{heading} Against the references: chance and all features", ""]
    if tests is None:
        tests = all_reference_tests(
            tables, alpha=alpha, include_variants=include_variants, min_h_values=min_h_values
        )
    first = next((t for t in tests.values() if not t.empty), pd.DataFrame())
    # the N of the tests (data sets or families of their view), not of the raw tables
    ns = [c for c in ("rand_n", "all_n") if c in first]
    n_data = int(first[ns].max().max()) if ns else rows["dataset"].nunique()
    k = len(first) if len(first) else rows["method"].nunique()
    lines += [
        "Each competitor's score on a data set (mean over its h grid; a family of data sets "
        "by the median of its members') paired with the same data set's reference score, "
        f"on the cells of the rank comparison (one N per view); Wilcoxon signed-rank test, two-sided, Holm-corrected "
        f"over the methods of each column (`*`: adjusted p ≤ {alpha:g}); the median "
        "difference (points) with a bootstrap 95 % CI over data sets (10 000 resamples, seed "
        "0); W/T/L: data sets won, tied, lost. *Random* is the expected score of a random "
        "subset (the mean over `evaluation.reference_draws` independent draws), never one "
        "draw; under label-tuning it is the best of G random draws chosen on the same "
        "restarts, G being the method's number of settings; under label-free tuning, whose "
        "choice does not see the data set's labels, the expected random subset on the same "
        "(odd) restarts. A method is called better or "
        "worse only when the adjusted p says so; otherwise *no difference shown*: the data "
        "cannot decide.",
        "",
        paired.detectable(max(k, 2), n_data, alpha).sentence(),
        "",
    ]
    for protocol in ranking.PROTOCOLS:
        for metric in ranking.METRICS:
            res = tests.get((protocol, metric), pd.DataFrame())
            if res.empty:
                continue
            bayes = any(c.endswith("p_better") for c in res.columns)
            head = ["method"]
            if "percentile" in res:
                head.append("percentile among random draws (median)")
            sub = ["W/T/L", "median diff [95 % CI]", "p (Holm)", "verdict"]
            if bayes:
                sub.append("P(better / equiv. / worse), ROPE ±1")
            for ref in ("random", "all features"):
                head += [f"vs {ref}: {c}" for c in sub]
            lines += [
                f"**{metric.upper()}, {titles[protocol]}** ({len(res)} methods, "
                f"{int(res[[c for c in ('rand_n', 'all_n') if c in res]].max().max())} "
                "data sets)",
                "",
                "| " + " | ".join(head) + " |",
                "|---" * len(head) + "|",
            ]
            order = res.sort_values(
                "rand_median_diff" if "rand_median_diff" in res else res.columns[0],
                ascending=False,
            ).index
            for m in order:
                r = res.loc[m]
                cells = [name(m)]
                if "percentile" in res:
                    cells.append("–" if pd.isna(r["percentile"]) else f"{r['percentile']:.0f}")
                cells += _test_cells(r, "rand_", bayes)
                cells += _test_cells(r, "all_", bayes)
                lines.append("| " + " | ".join(cells) + " |")
            lines.append("")
    for metric in ranking.METRICS:
        view = per_h_view(
            tables, metric, include_variants=include_variants, min_h_values=min_h_values
        )
        if view.empty or not view["cells"].any():
            continue
        lines += [
            f"**Per h, {metric.upper()}, label-free**: the mean of the score curve over log h "
            "(averaged over data sets), and the data set × h cells won / lost against the "
            "expected random score, and above / below random's 5-95 % band.",
            "",
            "| method | mean over log h | cells | won | lost | above band | below band |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for m, r in view.iterrows():
            lines.append(
                f"| {name(m)} | {100 * r['auc']:.1f} | {int(r['cells'])} | {int(r['wins'])} | "
                f"{int(r['losses'])} | {int(r['above_band'])} | {int(r['below_band'])} |"
            )
        lines.append("")
    for metric in ranking.METRICS:
        gains = tuning_gain(
            tables, metric, include_variants=include_variants, min_h_values=min_h_values
        )
        if gains.empty:
            continue
        lines += [
            f"**What label-tuning buys, {metric.upper()}**: median over data sets of the "
            "tuned score minus the default's (both on the restarts that did not choose), "
            "next to what the best of G random subsets gains over one random subset.",
            "",
            "| method | G settings | tuning gain (points) | random's gain, best of G |",
            "|---|---:|---:|---:|",
        ]
        for m, r in gains.iterrows():
            lines.append(
                f"| {name(m)} | {int(r['G'])} | {_pp(r['gain'])} | "
                f"{_pp(r.get('random_gain', np.nan))} |"
            )
        lines.append("")
    return "\n".join(lines)
