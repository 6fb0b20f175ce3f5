"""One verdict per seed paper: does its claim hold when someone else runs it?

From a paper's comparison table (:func:`ufs.report.compare.compare_published`: one row per
published cell with ours beside it) this module counts, on the cells both sides computed:

* **best**: in how many comparison groups — one (table, data set, metric, h) — the proposed
  method is the best competitor in the paper, and in how many here (ties count as best;
  the all-features reference is not a competitor);
* **ordering**: Kendall's τ-b between the published and our scores of the competitors of
  each group with at least three of them (1: the same order), summarised per table;
* **cells**: how many of the proposed method's own cells and of the baselines' agree,
  differ or are impossible as published, with the mean difference (ours − published) over
  the score cells (ACC, NMI, ARI, CP, NE) — true-positive counts, on their own 0..h scale,
  averaged apart, and cells impossible as published left out of both means.

:data:`CLAIMS` quotes each paper's headline claim with its section, and names where
``docs/methods.md`` explains a systematic difference (measured there, not here).

A paper without published cells (SPCAFS: figures only) is judged on its own claim against
a reference, from our run's label-tuned tables (:func:`versus_verdict`): per data set and
metric, the proposed method's mean over the h grid improves on the reference when it
exceeds it by more than 1.96 standard errors of the two means (each row's std over the
restarts behind it: the held-out half of a label-tuned row; the mean over h's error from
the covariance of the restarts' scores across h, :func:`ufs.report.compare.mean_over_h_std`).

A paper that claims insensitivity to its parameters over a region of its grid
(:data:`SENSITIVITY_CLAIMS`; the K-means UFS paper's Fig. 3) is checked on its sensitivity
run by :func:`sensitivity_verdict`: per data set and h, the claim holds when the best and
the worst grid cell of the region differ by no more than the k-means noise allows — 1.96
standard errors of the two cells' means (std over the restarts / √restarts), Bonferroni-
corrected over the region's pairs of cells (the extremes are the largest of those pairs).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from .compare import (
    AGREES,
    DIFFERS,
    IMPOSSIBLE,
    Z95,
    mean_over_h_std,
    no_value,
    restarts_behind,
)

__all__ = [
    "CLAIMS",
    "SENSITIVITY_CLAIMS",
    "Claim",
    "SensitivityClaim",
    "paper_verdict",
    "sensitivity_verdict",
    "sensitivity_markdown",
    "verdict_markdown",
]

REFERENCE = "all_features"


@dataclass(frozen=True)
class Claim:
    """A paper's headline claim: the proposed method, the quote, its section, and where
    ``docs/methods.md`` explains a systematic difference. A paper that publishes figures
    only (no cells to compare) claims an improvement over a reference: ``versus`` names
    it, ``almost_all`` how many data sets the claim may miss, ``variants`` the declared
    variants checked beside the proposed method (:func:`versus_verdict`)."""

    proposed: str
    quote: str
    section: str
    explained: str = ""
    versus: str = ""
    almost_all: int = 0
    variants: tuple[str, ...] = ()

    @property
    def versus_reads(self) -> tuple[str, ...]:
        """The methods a claim over a reference is judged on (:func:`versus_verdict`): the
        proposed one, its variants, then the reference."""
        return (self.proposed, *self.variants, self.versus)


CLAIMS: dict[str, Claim] = {
    "kmeans_ufs": Claim(
        "kmeans_ufs",
        "K-means UFS achieves the best performance for all the datasets we used.",
        "§V-C",
        "docs/methods.md, *K-means UFS*, Tables III-IV: on Fashion-MNIST the model's own "
        'optimum (`solver="exact"`) scores below all features at every h',
    ),
    "dgufs": Claim(
        "dgufs",
        "Extensive experiments convincingly demonstrate the superiority of DGUFS.",
        "§1",
        "docs/methods.md, *DGUFS*: on z-scored data its selection is the h features of "
        "smallest norm, whatever α, β",
    ),
    "fsbc": Claim(
        "fsbc",
        "The experimental results show that our method outperforms the compared "
        "state-of-the-art unsupervised feature selection not only on the accuracy but also "
        "the balance of the clustering results.",
        "§1",
        "docs/methods.md, *FSBC*: the balance term does not change the selection; and the "
        "paper's JAFFE and Yale are not our copies: its all-features ACC there (0.765, "
        "0.533) is above the best of 20 k-means restarts on ours in every input space "
        "(0.587, 0.521; benchmarks/all_features_reach.py)",
    ),
    "golfs": Claim(
        "golfs",
        "The comparisons based on two real datasets show the excellent finite sample "
        "performance of the GOLFS in clustering.",
        "§4",
        "docs/methods.md, *GOLFS*, input space: the baselines and k-means work on z-scores, "
        "which remove Example 2's raw-variance signal, so on golfs_sim2 they score near "
        "chance (all features ACC 0.28 here, 0.43 in the paper), while GOLFS works on raw "
        "input; on golfs_sim1 the label-tuned baselines recover the 10 true features (RSR, "
        "NDFS: TP 10 of 10 at h ≥ 30) where the paper's found 0-5",
    ),
    "spcafs": Claim(
        "spcafs",
        "Compared with the baseline (AllFea), both ACC and NMI of SPCAFS have been "
        "significantly improved on almost all these data sets.",
        "§6",
        "docs/methods.md, *SPCAFS's input*: the gap is its input space",
        versus="all_features",
        almost_all=1,  # §6: "On PalmData25 ... lower than the baseline"
        variants=("spcafs_raw",),
    ),
}


@dataclass(frozen=True)
class SensitivityClaim:
    """A claim that ``method``'s ``metric`` does not depend on its parameters over
    ``region`` (parameter → the largest value of the claimed region, inclusive), tested on
    the run ``run``."""

    run: str
    method: str
    quote: str
    section: str
    region: dict[str, float]
    metric: str = "acc"


SENSITIVITY_CLAIMS: dict[str, SensitivityClaim] = {
    "kmeans_ufs": SensitivityClaim(
        "kmeans_ufs_sensitivity",
        "kmeans_ufs",
        "when μ⁰ ≤ 1 and ρ ≤ 1.1, our method is not sensitive to μ⁰ and ρ",
        "§V-C, Fig. 3",
        {"mu0": 1.0, "rho": 1.1},
    ),
}


def sensitivity_verdict(scores: pd.DataFrame, claim: SensitivityClaim) -> pd.DataFrame:
    """Per data set and h of ``scores`` (:func:`ufs.report.param_grid.grid_scores` of the
    claim's method): the region's cells, the range of their mean ``metric`` (best − worst),
    the noise allowance (module docstring) and whether the claim holds there."""
    col, std = f"{claim.metric}_mean", f"{claim.metric}_std"
    inside = scores["in_grid"].copy()
    for param, top in claim.region.items():
        inside &= scores[param] <= top * (1 + 1e-12)
    rows = []
    for (ds, h), g in scores[inside].groupby(["dataset", "h"], sort=True):
        n = len(g)
        pairs = n * (n - 1) // 2
        z = float(stats.norm.isf(0.025 / max(pairs, 1)))
        best, worst = g.loc[g[col].idxmax()], g.loc[g[col].idxmin()]
        se = [float(r[std]) / np.sqrt(max(int(r["restarts"]), 1)) for r in (best, worst)]
        allowance = z * float(np.hypot(*se))
        spread = float(best[col] - worst[col])
        rows.append(
            {
                "dataset": ds,
                "h": h,
                "cells": n,
                "low": float(worst[col]),
                "high": float(best[col]),
                "range": spread,
                "allowance": allowance,
                "holds": spread <= allowance,
            }
        )
    return pd.DataFrame(rows)


def sensitivity_markdown(verdict: pd.DataFrame, claim: SensitivityClaim) -> str:
    """One sentence per claim: where it holds, with each data set's range and allowance."""
    region = " and ".join(f"{p} ≤ {v:g}" for p, v in claim.region.items())
    head = f" Its sensitivity claim, “{claim.quote}” ({claim.section}), on the run `{claim.run}`"
    if verdict.empty:
        return head + f": no cell of {claim.method} in the region ({region})."
    held = int(verdict["holds"].sum())
    parts = "; ".join(
        f"{r.dataset} (h = {r.h}): {claim.metric.upper()} {r.low:.3f}–{r.high:.3f} over "
        f"{r.cells} cells, range {r.range:.3f} against {r.allowance:.3f}"
        for r in verdict.itertuples()
    )
    verdict_word = (
        "supported" if held == len(verdict) else "not supported" if not held else "partly supported"
    )
    return (
        head + f": **{verdict_word}** — it holds on {held} of {len(verdict)} data sets "
        f"(the region's best and worst cell within the k-means noise, Bonferroni over its "
        f"pairs of cells): {parts}."
    )


def _support(held: int, needed: int, total: int) -> str:
    """*supported* when ``held`` reaches ``needed``, *not supported* below half of
    ``total``, else *partly supported*."""
    if held >= needed:
        return "supported"
    return "not supported" if 2 * held < total else "partly supported"


def versus_verdict(tables: pd.DataFrame, claim: Claim, restarts: int) -> pd.DataFrame:
    """Per method (the proposed one and its variants present), data set and metric (ACC,
    NMI): the label-tuned mean over h, the reference's score, the difference, the margin
    and whether it ``improves`` or is ``worse`` (module docstring); ``no_score`` where a
    fit exceeded the compute budget (counted as not improving, and said). ``tables``: the run's tables (the
    workflow's CSV rows); ``restarts``: the run's k-means restarts."""
    if not {"dataset", "method", "protocol", "h_label"} <= set(tables.columns):
        return pd.DataFrame()  # tables of another shape (no protocol): nothing to judge
    tuned = tables[tables["protocol"] == "oracle"]
    rows = []
    for method in (claim.proposed, *claim.variants):
        for ds in sorted(tuned["dataset"].unique()):
            mine = tuned[(tuned["method"] == method) & (tuned["dataset"] == ds)]
            mine = mine[mine["h_label"].astype(str) != "all"]
            ref = tuned[(tuned["method"] == claim.versus) & (tuned["dataset"] == ds)]
            if mine.empty or ref.empty:
                continue
            for metric in ("acc", "nmi"):
                col, std = f"{metric}_mean", f"{metric}_std"
                if mine[col].isna().any() or ref[col].isna().all():  # over the budget
                    rows.append({"method": method, "dataset": ds, "metric": metric})
                    rows[-1].update(improves=False, worse=False, no_score=True)
                    continue
                se_m = mean_over_h_std(mine, metric) / np.sqrt(restarts_behind(mine, restarts))
                r = ref.iloc[0]
                se_r = float(r[std]) / np.sqrt(restarts_behind(ref.iloc[:1], restarts))
                diff = float(mine[col].mean() - r[col])
                margin = Z95 * float(np.hypot(se_m, se_r))
                rows.append(
                    {
                        "method": method,
                        "dataset": ds,
                        "metric": metric,
                        "ours": float(mine[col].mean()),
                        "reference": float(r[col]),
                        "difference": diff,
                        "margin": margin,
                        "improves": diff > margin,
                        "worse": diff < -margin,
                        "no_score": False,
                    }
                )
    return pd.DataFrame(rows)


def versus_markdown(verdict: pd.DataFrame, paper: str) -> str:
    """The verdict paragraph of a paper judged against a reference (:func:`versus_verdict`)."""
    claim = CLAIMS[paper]
    head = f"**{paper}** — “{claim.quote}” ({claim.section})."
    if verdict.empty:
        return head + f" *Not computed here*: its run has no {claim.versus} beside it."
    parts = []
    for method, g in verdict.groupby("method", sort=False):
        m = g["dataset"].nunique()
        counts = []
        for metric, gm in g.groupby("metric", sort=True):
            up, down = int(gm["improves"].sum()), int(gm["worse"].sum())
            missing = int(gm["no_score"].sum())
            counts.append(
                f"{metric.upper()} on {up} of {m} (worse on {down}"
                + (f"; no score on {missing}: a fit over the compute budget" if missing else "")
                + ")"
            )
        both = int(g.groupby("dataset")["improves"].all().sum())
        word = _support(both, m - claim.almost_all, m)
        parts.append(
            f"`{method}` improves on {claim.versus} "
            + ", ".join(counts)
            + f" data sets; on both metrics on {both} of {m}: **{word}**"
        )
    why = f" Where they differ systematically: {claim.explained}." if claim.explained else ""
    return (
        head + " No published cells (figures only); our label-tuned run against its claim "
        "(mean over the h grid, beyond 1.96 standard errors of the two means; "
        f"“almost all” read as all but {claim.almost_all}): " + "; ".join(parts) + "." + why
    )


def _computed(cmp: pd.DataFrame) -> pd.DataFrame:
    ok = ~no_value(cmp["status"]) & cmp["ours"].notna()
    if "agreement" in cmp:
        ok &= cmp["agreement"] != IMPOSSIBLE
    return cmp[ok]


def paper_verdict(cmp: pd.DataFrame, paper: str) -> dict[str, object]:
    """The counts of the module docstring for ``paper``'s comparison table ``cmp``."""
    claim = CLAIMS[paper]
    done = _computed(cmp)
    best_pub = best_ours = groups = 0
    taus: dict[str, list[float]] = {}
    for (table, _d, _m, _h), g in done.groupby(["table", "dataset", "metric", "h"], sort=True):
        comp = g[g["method"] != REFERENCE].drop_duplicates("method")
        if claim.proposed not in set(comp["method"]) or len(comp) < 2:
            continue
        groups += 1
        own = comp[comp["method"] == claim.proposed].iloc[0]
        best_pub += bool(own["published"] >= comp["published"].max() - 1e-12)
        best_ours += bool(own["ours"] >= comp["ours"].max() - 1e-12)
        if len(comp) >= 3:
            tau = stats.kendalltau(comp["published"], comp["ours"]).statistic
            if np.isfinite(tau):
                taus.setdefault(str(table), []).append(float(tau))
    status = cmp.get("agreement", pd.Series("", index=cmp.index))

    def cells(mask: pd.Series) -> dict[str, object]:
        part = cmp[mask & (status != IMPOSSIBLE)]  # the means only
        counts = part["metric"] == "tp"
        diff = part.loc[~counts, "difference"].dropna()
        tp_diff = part.loc[counts, "difference"].dropna()
        return {
            "published": int(mask.sum()),
            "computed": int((~no_value(cmp.loc[mask, "status"])).sum()),
            AGREES: int((status[mask] == AGREES).sum()),
            DIFFERS: int((status[mask] == DIFFERS).sum()),
            IMPOSSIBLE: int((status[mask] == IMPOSSIBLE).sum()),
            "mean_difference": float(diff.mean()),  # NaN when there is none
            "mean_tp_difference": float(tp_diff.mean()),
        }

    own = cmp["method"] == claim.proposed
    return {
        "paper": paper,
        "claim": claim,
        "groups": groups,
        "best_published": best_pub,
        "best_ours": best_ours,
        "tau": {t: (float(np.median(v)), len(v)) for t, v in sorted(taus.items())},
        "own": cells(own),
        "baselines": cells(~own & (cmp["method"] != REFERENCE)),
    }


def _cells_text(c: dict[str, object]) -> str:
    if not c["published"]:
        return "none published"
    text = (
        f"{c['computed']} of {c['published']} computed: {c[AGREES]} agree, {c[DIFFERS]} differ"
        + (f", {c[IMPOSSIBLE]} impossible as published" if c[IMPOSSIBLE] else "")
    )
    means = []
    if np.isfinite(c["mean_difference"]):
        means.append(f"mean difference ours − published {c['mean_difference']:+.3f}")
    if np.isfinite(c["mean_tp_difference"]):
        means.append(f"true-positive counts {c['mean_tp_difference']:+.2f} on average")
    if means:
        text += f" ({'; '.join(means)})"
    return text


def verdict_markdown(cmp: pd.DataFrame | None, paper: str) -> str:
    """One paragraph: the claim, whether our run supports it, the ordering agreement per
    table, the cells, and where a systematic difference is explained."""
    claim = CLAIMS[paper]
    head = f"**{paper}** — “{claim.quote}” ({claim.section})."
    if cmp is None:
        return head + " *Not computed here*: the report's inputs hold no run of this paper."
    if cmp.empty:
        return head + " *Not computed here*: its run has no published cell to compare with."
    v = paper_verdict(cmp, paper)
    if v["groups"]:
        support = (
            f" The proposed method is the best competitor in {v['best_published']} of "
            f"{v['groups']} comparisons (table × data set × metric × h) in the paper, in "
            f"{v['best_ours']} of them here"
        )
        verdict = _support(v["best_ours"], v["best_published"], v["best_published"])
        support += f": **{verdict}** on the cells both sides computed."
    else:
        support = " No comparison has the proposed method and another competitor computed."
    tau = "; ".join(f"table {t}: median τ {m:+.2f} over {n}" for t, (m, n) in v["tau"].items())
    order = f" Ordering of the competitors (Kendall's τ, published vs ours): {tau}." if tau else ""
    cells = (
        f" Its own cells: {_cells_text(v['own'])}; the baselines': {_cells_text(v['baselines'])}."
    )
    why = f" Where they differ systematically: {claim.explained}." if claim.explained else ""
    return head + support + order + cells + why
