"""Can k-means on all features reach a paper's published all-features score? (issue 38)

Every seed paper's tables carry an *All features* column: k-means on the whole data. It
involves no feature selection, so where our k-means cannot reach it on our copy of the data,
in any input space, the difference is the data (another version, another preprocessing) or
the paper's k-means protocol, not a method. For every published all-features cell (ACC,
NMI) on a data set in the local mirror, this prints k-means on all features, 20 restarts
(seeds 0..19, scikit-learn's k-means++, as the workflow's evaluation), in three input
spaces (z-scores, the raw data, each feature min-max scaled to [0, 1]): the mean over the
restarts and the best single restart. ``out of reach`` marks a published value above the
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
from ufs.preprocessing import standardize, unit_range

ROOT = Path(__file__).resolve().parents[1]
SPACES = ("z-scores", "raw", "[0, 1]")


def spaces(X: np.ndarray) -> dict[str, np.ndarray]:
    return {"z-scores": standardize(X).X, "raw": X, "[0, 1]": unit_range(X)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirror", default=str(ROOT.parent / "shared" / "datasets"))
    ap.add_argument("--papers", nargs="*", default=["dgufs", "fsbc", "golfs", "kmeans_ufs"])
    ap.add_argument("--restarts", type=int, default=20)
    args = ap.parse_args()
    rows = []
    for paper in args.papers:
        cfg = yaml.safe_load((ROOT / "config" / "experiments" / f"{paper}.yaml").read_text())
        nmi_average = cfg.get("evaluation", {}).get("nmi_average", "arithmetic")
        pub = pd.read_csv(ROOT / "config" / "published" / f"{paper}.csv", dtype={"h": str})
        pub = pub[(pub["method"] == "all_features") & pub["metric"].isin(["acc", "nmi"])]
        offline = set(pub["dataset"]) - set(datasets_needing_network(args.mirror))
        for ds in sorted(offline):
            if ds.startswith("golfs_sim"):
                continue
            d = load_dataset(ds, mirror=args.mirror)
            X = np.asarray(d.X, dtype=np.float64)
            scores = {}
            for space, M in spaces(X).items():
                r = evaluate_clustering(M, d.y, n_restarts=args.restarts, nmi_average=nmi_average)
                scores[space] = {
                    m: (r.mean(m), float(r.per_restart[m].max())) for m in ("acc", "nmi")
                }
            for cell in pub[pub["dataset"] == ds].itertuples():
                best = max(scores[s][cell.metric][1] for s in SPACES)
                row = {
                    "paper": paper,
                    "table": cell.table,
                    "dataset": f"{ds} {X.shape[0]}×{X.shape[1]}",
                    "metric": cell.metric.upper(),
                    "published": f"{cell.value:.3f}",
                }
                for s in SPACES:
                    mean, top = scores[s][cell.metric]
                    row[f"{s}: mean / best"] = f"{mean:.3f} / {top:.3f}"
                row["reach"] = "out of reach" if cell.value > best + 5e-4 else ""
                rows.append(row)
            print(f"{paper} {ds} done", flush=True)
    print(pd.DataFrame(rows).to_markdown(index=False))


if __name__ == "__main__":
    main()
