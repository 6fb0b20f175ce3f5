"""UDFS's "degenerate" flags: why ``W`` collapses to about ``c`` rows on z-scored data.

UDFS (Yang et al. 2011) solves ``min_{WᵀW = I} Tr(WᵀMW) + γ||W||_{2,1}``, ``M = XᵀLX``,
``W`` p × c. For orthonormal ``W``, ``||W||_{2,1} ≥ c`` with equality iff ``W`` is ``c``
coordinate axes; such a ``W`` ranks ``c`` features and leaves the rest at round-off. On
z-scored data the scale of ``M`` is fixed by the shape alone: with ``λ`` (the local ridge)
small, ``Tr(B_i X̃_i X̃_iᵀ) = k`` for every local set, so ``Tr(M) = k·n`` and the mean
diagonal is ``k·n/p``. When that is far below ``γ = 1`` (p ≫ n) the ℓ2,1 term dominates and
the re-weighting ends at ``c`` axes.

For every data set the script fits UDFS with the label-free defaults (γ = 1, λ = 1e-3,
k = 5) and reports ``k·n/p``, ``Tr(M)``, the resolved rank (features above 1e-4 of the
largest ``||w_i||``), ``||W||_{2,1} − c`` and ``Tr(WᵀMW)`` at the solution; the resolved rank
of the same fit in the authors' mode (``fs_unsup_udfs``: fixed 20 iterations, ε = MATLAB
eps, parity-tested against the authors' code on digits) with k = 5, λ = 1e-3 and with the
authors' ``LocalDisAna`` defaults (k = 15, λ = 1000); and, for γ in ``--gammas``, the resolved
rank and the k-means ACC (20 restarts, seeds 0..19, ``ufs.evaluation.evaluate_clustering``)
averaged over the benchmark's h values (``round(p × {1,2,5,10,20} %)`` in [5, 300]). On
stderr: whether the γ = 1 fit reproduces the archived label-free selection (``--archive``:
the benchmark archive by default, ``''`` to skip). Deterministic. Run with one BLAS thread: ``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python
benchmarks/flag_causes/udfs.py --datasets colon,glioma,srbct,warpar10p,lung_discrete,jaffe``.
"""

from __future__ import annotations

import warnings

import _common as common
import numpy as np

from ufs.linalg import MATLAB_EPS
from ufs.methods import UDFS

METHOD = "udfs"
DATASETS = "colon,glioma,srbct,warpar10p,bbc,lung_discrete,jaffe,yale"


def _fit(X: np.ndarray, c: int, **kw) -> UDFS:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return UDFS(10, c, **kw).fit(X)


def main() -> None:
    ap = common.parser(__doc__, DATASETS)
    ap.add_argument("--gammas", default="1,0.01,0.0001", help="γ values for the sweep")
    args = ap.parse_args()
    gammas, sweep = common.gamma_sweep(args.gammas)
    print(
        "| data set | n × p | c | k·n/p | Tr(M) | rr (γ=1) | ‖W‖₂,₁ − c | Tr(WᵀMW) | "
        f"authors' mode rr (k=5, λ=1e-3) | authors' LocalDisAna rr (k=15, λ=1e3) | {sweep} |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|" + "---|" * len(gammas))
    for name in common.dataset_names(args.datasets):
        X, y, c, _ = common.load_zscored(name, args.mirror)
        n, p = X.shape
        hs = common.h_grid_nonconstant(X)
        est = _fit(X, c)  # label-free defaults: γ = 1, λ = 1e-3, k = 5
        Xk = X[:, np.any(X != 0, axis=0)]  # W_ has rows for the non-constant features only
        M_W = Xk @ est.W_
        trace = float(np.sum(M_W * (est.L_ @ M_W)))  # Tr(WᵀXᵀLXW) without forming M
        trM = float(np.sum(Xk * (est.L_ @ Xk)))
        excess = float(np.linalg.norm(est.W_, axis=1).sum()) - c
        authors = dict(eps=MATLAB_EPS, max_iter=20, tol=0.0)
        a5 = _fit(X, c, lam=1e-3, n_neighbors=5, **authors)
        a15 = _fit(X, c, lam=1000.0, n_neighbors=15, **authors)
        cells = []
        for g in gammas:
            e = est if g == 1.0 else _fit(X, c, gamma=g)
            cells.append(common.sweep_cell(e, X, y, hs))
        print(
            f"| {name} | {n} × {p} | {c} | {5 * n / p:.2f} | {trM:.1f} | {est.resolved_rank_} | "
            f"{excess:.3f} | {trace:.3f} | {a5.resolved_rank_} | {a15.resolved_rank_} | "
            + " | ".join(cells)
            + " |",
            flush=True,
        )
        sel = {h: est.feature_order_[:h] for h in hs}
        common.note_archive(args.archive, name, METHOD, sel, "γ = 1")


if __name__ == "__main__":
    main()
