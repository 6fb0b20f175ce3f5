"""One verdict per seed paper: does its claim hold when someone else runs it? (issue 38)

From a paper's comparison table (:func:`ufs.report.compare.compare_published`: one row per
published cell with ours beside it) this module counts, on the cells both sides computed:

* **best**: in how many comparison groups — one (table, data set, metric, h) — the proposed
  method is the best competitor in the paper, and in how many here (ties count as best;
  the all-features reference is not a competitor);
* **ordering**: Kendall's τ-b between the published and our scores of the competitors of
  each group with at least three of them (1: the same order), summarised per table;
* **cells**: how many of the proposed method's own cells and of the baselines' agree,
  differ or are impossible as published, with the mean difference (ours − published).

:data:`CLAIMS` quotes each paper's headline claim with its section, and names where
``docs/methods.md`` explains a systematic difference (measured there, not here).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from .compare import AGREES, DIFFERS, IMPOSSIBLE, NO_VALUE

__all__ = ["CLAIMS", "Claim", "paper_verdict", "verdict_markdown"]

REFERENCE = "all_features"


@dataclass(frozen=True)
class Claim:
    """A paper's headline claim: the proposed method, the quote, its section, and where
    ``docs/methods.md`` explains a systematic difference."""

    proposed: str
    quote: str
    section: str
    explained: str = ""


CLAIMS: dict[str, Claim] = {
    "kmeans_ufs": Claim(
        "kmeans_ufs",
        "K-means UFS achieves the best performance for all the datasets we used.",
        "§V-C",
        "docs/methods.md, *K-means UFS*",
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
        "docs/methods.md, *FSBC*: the balance term does not change the selection",
    ),
    "golfs": Claim(
        "golfs",
        "The comparisons based on two real datasets show the excellent finite sample "
        "performance of the GOLFS in clustering.",
        "§4",
        "docs/methods.md, *GOLFS*",
    ),
    "spcafs": Claim(
        "spcafs",
        "Compared with the baseline (AllFea), both ACC and NMI of SPCAFS have been "
        "significantly improved on almost all these data sets.",
        "§6",
        "docs/methods.md, *SPCAFS's input*: the gap is its input space",
    ),
}


def _computed(cmp: pd.DataFrame) -> pd.DataFrame:
    ok = ~cmp["status"].isin(NO_VALUE) & cmp["ours"].notna()
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
        part = cmp[mask]
        diff = part["difference"].dropna()
        return {
            "published": int(mask.sum()),
            "computed": int((~part["status"].isin(NO_VALUE)).sum()),
            AGREES: int((status[mask] == AGREES).sum()),
            DIFFERS: int((status[mask] == DIFFERS).sum()),
            IMPOSSIBLE: int((status[mask] == IMPOSSIBLE).sum()),
            "mean_difference": float(diff.mean()) if len(diff) else float("nan"),
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
    if np.isfinite(c["mean_difference"]):
        text += f" (mean difference ours − published {c['mean_difference']:+.3f})"
    return text


def verdict_markdown(cmp: pd.DataFrame | None, paper: str) -> str:
    """One paragraph: the claim, whether our run supports it, the ordering agreement per
    table, the cells, and where a systematic difference is explained."""
    claim = CLAIMS[paper]
    head = f"**{paper}** — “{claim.quote}” ({claim.section})."
    if cmp is None or cmp.empty:
        return head + " *Not computed here*: no comparison with published cells (see below)."
    v = paper_verdict(cmp, paper)
    if v["groups"]:
        support = (
            f" The proposed method is the best competitor in {v['best_published']} of "
            f"{v['groups']} comparisons (table × data set × metric × h) in the paper, in "
            f"{v['best_ours']} of them here"
        )
        verdict = (
            "supported"
            if v["best_ours"] >= v["best_published"]
            else "not supported"
            if 2 * v["best_ours"] < v["best_published"]
            else "partly supported"
        )
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
