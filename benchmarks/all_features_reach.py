"""Can k-means on all features reach a paper's published all-features score?

Every seed paper's tables carry an *All features* column: k-means on the whole data. It
involves no feature selection, so where our k-means cannot reach it on our copy of the data,
in any input space, the difference is the data (another version, another preprocessing) or
the paper's k-means protocol, not a method. For every published all-features cell (ACC,
NMI) on a data set in the local mirror, this prints k-means on all features, 20 restarts
(seeds 0..19, scikit-learn's k-means++, as the workflow's evaluation), in the project's three
input spaces (``ufs.preprocessing.INPUT_SPACES``: z-scores, the raw data, each feature
min-max scaled to [0, 1]): the mean over the restarts and the best single restart. ``out of reach`` marks a published value above the
best restart in every space. NMI uses the paper's normalisation (its config's
``evaluation.nmi_average``). Simulations are left out (their replicates are the run's own).
Nothing here chooses anything with the labels: it only reports.

    OMP_NUM_THREADS=1 python benchmarks/all_features_reach.py [--mirror ../shared/datasets]
        [--papers fsbc dgufs ...]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from ufs.datasets import datasets_needing_network, load_dataset
from ufs.evaluation import evaluate_clustering
from ufs.preprocessing import INPUT_SPACES, input_matrix
from ufs.report.compare import ROUNDING

ROOT = Path(__file__).resolve().parents[1]


def all_features_scores(
    ds: str, mirror: str, restarts: int, nmi_average: str
) -> tuple[tuple[int, int], dict[str, dict[str, tuple[float, float]]]]:
    """The data set's shape, and per input space and metric: (mean over the restarts, best
    restart) of k-means on all features."""
    d = load_dataset(ds, mirror=mirror)
    X = np.asarray(d.X, dtype=np.float64)
    scores = {}
    for space in INPUT_SPACES:
        r = evaluate_clustering(
            input_matrix(space, X), d.y, n_restarts=restarts, nmi_average=nmi_average
        )
        scores[space] = {m: (r.mean(m), float(r.per_restart[m].max())) for m in ("acc", "nmi")}
    return X.shape, scores


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirror", default=str(ROOT.parent / "shared" / "datasets"))
    ap.add_argument("--papers", nargs="*", default=["dgufs", "fsbc", "golfs", "kmeans_ufs"])
    ap.add_argument("--restarts", type=int, default=20)
    args = ap.parse_args()
    rows = []
    network = set(datasets_needing_network(args.mirror))
    computed: dict[tuple[str, str], tuple] = {}  # a data set shared by two papers runs once
    for paper in args.papers:
        cfg = yaml.safe_load((ROOT / "config" / "experiments" / f"{paper}.yaml").read_text())
        nmi_average = cfg.get("evaluation", {}).get("nmi_average", "arithmetic")
        pub = pd.read_csv(ROOT / "config" / "published" / f"{paper}.csv", dtype={"h": str})
        pub = pub[(pub["method"] == "all_features") & pub["metric"].isin(["acc", "nmi"])]
        for ds in sorted(set(pub["dataset"]) - network):
            if ds.startswith("golfs_sim"):
                continue
            key = (ds, nmi_average)
            if key not in computed:
                computed[key] = all_features_scores(ds, args.mirror, args.restarts, nmi_average)
            (n, p), scores = computed[key]
            for cell in pub[pub["dataset"] == ds].itertuples():
                best = max(scores[s][cell.metric][1] for s in INPUT_SPACES)
                row = {
                    "paper": paper,
                    "table": cell.table,
                    "dataset": f"{ds} {n}×{p}",
                    "metric": cell.metric.upper(),
                    "published": f"{cell.value:.3f}",
                }
                for s in INPUT_SPACES:
                    mean, top = scores[s][cell.metric]
                    row[f"{s}: mean / best"] = f"{mean:.3f} / {top:.3f}"
                row["reach"] = "out of reach" if cell.value > best + ROUNDING else ""
                rows.append(row)
            print(f"{paper} {ds} done", flush=True)
    print(pd.DataFrame(rows).to_markdown(index=False))


if __name__ == "__main__":
    main()
