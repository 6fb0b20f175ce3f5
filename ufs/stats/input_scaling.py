"""Input scaling as a factor of a benchmark: the same methods on z-scored, raw
and [0, 1]-scaled inputs, and how much their ranking moves.

Every table row records the ``input_space`` its fit received. The benchmark runs each
method on its own space; the overlays ``config/experiments/overrides/benchmark_input_scaling_<space>
.yaml`` run the seed methods whose own space differs on ``<space>``, each into
``<dir>/<space>/``. :func:`scaling_scores` pools the rows of every run by their recorded
``input_space``; :func:`scaling_markdown` compares, per space, the methods' mean scores
and their average ranks among themselves (label-free, on the data sets every method ×
space has), and the rank correlation of each space's order with the methods' own.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from . import ranking

#: the input spaces (:data:`ufs.preprocessing.INPUT_SPACES`) as the report names them
SPACE_TITLES = {"standardized": "z-scored", "raw": "raw", "unit_range": "[0, 1]"}

__all__ = ["load_scaling_tables", "scaling_scores", "scaling_markdown"]


def load_scaling_tables(main: pd.DataFrame, scaling_dir: str | Path) -> pd.DataFrame:
    """The main run's tables and every ``<scaling_dir>/<space>/tables/*.csv``, with a
    ``source`` column (``own`` / the space's directory name)."""
    parts = [main.assign(source="own")]
    for sub in sorted(p for p in Path(scaling_dir).iterdir() if p.is_dir()):
        for f in sorted((sub / "tables").glob("*.csv")):
            parts.append(pd.read_csv(f).assign(source=sub.name))
    return pd.concat(parts, ignore_index=True)


def scaling_scores(tables: pd.DataFrame, metric: str = "acc") -> pd.DataFrame:
    """Long table: ``dataset``, ``method``, ``input_space``, ``own`` (the method's own
    space), ``score`` (mean over h of the label-free mean over restarts), for the methods
    that ran on more than one input space."""
    t = tables[(tables["protocol"] == "label_free") & tables["input_space"].notna()]
    t = t[t["input_space"].astype(str) != ""]
    spaces = t.groupby("method")["input_space"].nunique()
    t = t[t["method"].isin(spaces.index[spaces > 1])]
    own = t[t["source"] == "own"].groupby("method")["input_space"].first()
    g = t.groupby(["dataset", "method", "input_space"])[f"{metric}_mean"].mean()
    out = g.rename("score").reset_index()
    out["own"] = out["method"].map(own)
    return out


def scaling_markdown(tables: pd.DataFrame, *, heading: str = "##", metric: str = "acc") -> str:
    """The report section: scores and average ranks of the methods per input space."""
    long = scaling_scores(tables, metric)
    lines = [f"{heading} Input scaling: how much the ranking moves", ""]
    if long.empty:
        return "\n".join(lines + ["No method ran on more than one input space.", ""])
    wide = long.pivot_table(index="dataset", columns=["input_space", "method"], values="score")
    wide = wide.dropna()  # the data sets where every method ran on every space
    spaces = sorted(set(long["input_space"]), key=lambda s: list(SPACE_TITLES).index(s))
    methods = sorted(set(long["method"]))
    if wide.empty:
        return "\n".join(lines + ["No data set has every method on every space yet.", ""])
    own = long.groupby("method")["own"].first()
    own_scores = pd.DataFrame({m: wide[(own[m], m)] for m in methods})
    ranks = {"own": ranking.rank_table(own_scores).mean()}
    means = {}
    for s in spaces:
        sc = pd.DataFrame({m: wide[(s, m)] for m in methods})
        ranks[s] = ranking.rank_table(sc).mean()
        means[s] = sc.mean()
    lines += [
        f"Label-free {metric.upper()} of the methods that ran on several input spaces, on the "
        f"{len(wide)} data sets where each ran on each: the mean score (%) and the average "
        "rank among these methods (1 = best) per input space; *own* is each method's own "
        "space (its row's first column). Kendall's τ compares a space's rank order with the "
        "own-space order (1: unchanged).",
        "",
    ]
    head = ["method", "own space"] + [f"{SPACE_TITLES[s]}: score / rank" for s in spaces]
    head.append("own: rank")
    lines += ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for m in methods:
        cells = [f"`{m}`", SPACE_TITLES.get(own[m], own[m])]
        cells += [f"{100 * means[s][m]:.1f} / {ranks[s][m]:.2f}" for s in spaces]
        cells.append(f"{ranks['own'][m]:.2f}")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    taus = []
    for s in spaces:
        tau = stats.kendalltau(ranks["own"][methods], ranks[s][methods]).statistic
        moved = (ranks[s] - ranks["own"]).abs()
        largest = sorted(str(m) for m in moved.index[np.isclose(moved, moved.max(), 0, 1e-9)])
        taus.append(
            f"{SPACE_TITLES[s]}: τ = {tau:.2f}, largest move {moved.max():.2f} ranks "
            f"({' = '.join(f'`{m}`' for m in largest)})"
            if np.isfinite(tau)
            else f"{SPACE_TITLES[s]}: τ undefined (tied ranks)"
        )
    lines += ["Rank order against the own-space order — " + "; ".join(taus) + ".", ""]
    return "\n".join(lines)
