"""How lucky can one random draw be?

Reads a benchmark run's tables (``<results>/tables/*.csv``, with ``random``'s draws as
``protocol = draw`` rows) and ranks each single draw of ``random`` among the competitors
(label-free, mean over h of the mean over restarts), as the old report ranked its one
seed-0 draw; then the expected random score (the mean over the draws) the same way.
Prints the distribution of the single draw's average rank and where draw 0 falls in it.

    python benchmarks/random_single_draw.py results/benchmark [--metric acc]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from ufs.stats import ranking


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("results", type=Path)
    ap.add_argument("--metric", default="acc")
    args = ap.parse_args()
    tables = pd.concat(
        [pd.read_csv(f) for f in sorted((args.results / "tables").glob("*.csv"))],
        ignore_index=True,
    )
    comp, _, thin = ranking.competitors(tables)
    scores, status = ranking.dataset_scores(comp, "label_free", args.metric)
    draws = tables[(tables["protocol"] == "draw") & (tables["method"] == "random")]
    draws = draws[~draws["dataset"].isin(list(thin))]
    per_draw = draws.groupby(["dataset", "draw"])[f"{args.metric}_mean"].mean().unstack("draw")
    per_draw = per_draw.reindex(scores.index)
    ranks = {}
    for d in per_draw.columns:
        s = scores.assign(random=per_draw[d])
        ranks[int(d)] = float(ranking.rank_table(s).mean()["random"])
    r = pd.Series(ranks).sort_index()
    expected = scores.assign(random=per_draw.mean(axis=1))
    exp_rank = float(ranking.rank_table(expected).mean()["random"])
    k = scores.shape[1] + 1
    print(f"{len(r)} draws; {scores.shape[0]} data sets; {k} ranked (competitors + one random)")
    print(f"single draw average rank: mean {r.mean():.2f} ± {r.std(ddof=1):.2f} (sd), ")
    print(f"  min {r.min():.2f}, 5-95 % [{np.percentile(r, 5):.2f}, {np.percentile(r, 95):.2f}]")
    print(f"draw 0: {r[0]:.2f}; draws ranked better than draw 0: {(r < r[0]).mean():.0%}")
    print(f"the expected random score ranked the same way: {exp_rank:.2f}")


if __name__ == "__main__":
    main()
