"""SPCAFS's collapse against γ on the mirror's data sets: how many features each
γ ranks above round-off (``resolved_rank_``, :func:`ufs.base.resolved_rank`).

At a γ comparable to the leading eigenvalues of ``S_t = XᵀHX`` the ℓ2,1 term wins and ``W``
collapses to ``m = c − 1`` unit rows, the other rows at the smoothing level ``√ε``: the
ranking after position ``m`` is round-off. The label-free default ``gamma="auto"``
(``0.01 λ_max(S_t)``) is chosen from this table. Each cell: resolved rank (of p) for the
fixed γ of the paper's grid and for ``"auto"``, on z-scored or raw input.

Run: ``OMP_NUM_THREADS=1 python benchmarks/spcafs_gamma.py [--input raw] [--datasets a,b]``.
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np

from ufs.datasets import load_dataset
from ufs.methods import SPCAFS
from ufs.preprocessing import standardize
from ufs.validation import constant_feature_mask

DATASETS = (
    "imm40,jaffe,orl,umist,warpar10p,warppie10p,yale,colon,glioma,leuml,lung_discrete,srbct,"
    "bbc,digits,breast_cancer,wine,golfs_sim1,golfs_sim2,coil20,pie,isolet,usps,mfeat_fac,"
    "palmdata25,ar,allaml,tox_171"
)
GAMMAS = (1e2, 1e3, 1e4, "auto")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--input", choices=("standardized", "raw"), default="standardized")
    ap.add_argument("--datasets", default=DATASETS)
    ap.add_argument(
        "--mirror", default=str(Path(__file__).resolve().parents[2] / "shared" / "datasets")
    )
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    head = " | ".join(f"γ = {g:g}" if not isinstance(g, str) else "γ = auto" for g in GAMMAS)
    print(f"| data set | n | p | c | λ_max(S_t) | {head} | auto γ |")
    print("|---|---:|---:|---:|---:|" + "---:|" * (len(GAMMAS) + 1))
    collapsed = dict.fromkeys(GAMMAS, 0)
    sets = args.datasets.split(",")
    for ds in sets:
        d = load_dataset(ds, mirror=args.mirror)
        X = np.asarray(d.X, dtype=np.float64)
        X = X[:, ~constant_feature_mask(X)]
        if args.input == "standardized":
            X = standardize(X).X
        c = int(d.y.max()) + 1
        lam = float(np.linalg.norm(X - X.mean(axis=0), 2) ** 2)
        cells, auto = [], None
        for g in GAMMAS:
            est = SPCAFS(10, c, gamma=g, input_space=args.input).fit(X)
            cells.append(f"{est.resolved_rank_}")
            collapsed[g] += est.resolved_rank_ < min(X.shape[1], 300)
            if g == "auto":
                auto = est.gamma_
        print(
            f"| {ds} | {X.shape[0]} | {X.shape[1]} | {c} | {lam:.3g} | "
            + " | ".join(cells)
            + f" | {auto:.3g} |"
        )
    print(
        "\nresolved rank below min(p, 300) (the benchmark's largest h): "
        + ", ".join(f"γ = {g}: {n} of {len(sets)}" for g, n in collapsed.items())
    )


if __name__ == "__main__":
    main()
