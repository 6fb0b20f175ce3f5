"""SOGFS's "degenerate" flags: why ``W`` keeps about ``c`` rows, on our fits and
on the authors' reference outputs.

SOGFS (Nie, Zhu, Li 2016; authors' ``SOGFS.m`` + ``InterationW.m``) solves, in its W-step,
``min_{WᵀW = I} Tr(WᵀXᵀL_S XW) + γ||W||_{2,1}`` with ``W`` p × m, ``m = c``, after scaling every
feature to unit ℓ2 norm (the authors' code does this itself, so z-scoring beforehand changes
nothing). For orthonormal ``W``, ``||W||_{2,1} ≥ m`` with equality iff ``W`` is ``m``
coordinate axes, while the trace term is at most ``m·λ_max(L_S)`` whatever the data; with
the registry's ``γ = 1`` the ℓ2,1 term wins and ``W`` ends at (about) ``m`` unit rows.

For every data set the script fits SOGFS with the label-free defaults (γ = 1, seed 0, as
the benchmark) and reports ``c``, the resolved rank (features above 1e-4 of the largest
``||w_i||``), the rows with ``||w_i|| > 0.5``, ``||W||_{2,1} − m``, the trace term, the mean of
``diag(XᵀL_S X)`` (unit-norm features) and ``λ_max(L_S)``; then, for γ in ``--gammas``, the
resolved rank and the k-means ACC (20 restarts, seeds 0..19, as the benchmark) averaged
over the benchmark's h values (``round(p × {1,2,5,10,20} %)`` in [5, 300]). A second table
reads the authors' outputs on digits (``shared/parity/digits/sogfs__g{1,100}.npz``) and
gives the same counts for their ``W``. On stderr: whether the γ = 1 fit reproduces the
archived label-free selection (``--archive``: the benchmark archive by default, ``''`` to
skip).
Run with one BLAS thread: ``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python
benchmarks/flag_causes/sogfs.py --datasets colon,lung_discrete,jaffe,digits,mfeat_fac``.
"""

from __future__ import annotations

import warnings

import _common as common
import numpy as np
import scipy.sparse.linalg as spla

from ufs.base import resolved_rank
from ufs.methods import SOGFS
from ufs.methods._optimal_graph import sym_laplacian

METHOD = "sogfs"
DATASETS = "colon,lung_discrete,jaffe,digits,mfeat_fac"


def _fit(X: np.ndarray, c: int, gamma: float) -> SOGFS:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return SOGFS(10, c, gamma=gamma, random_state=0).fit(X)


def _unit_features(X: np.ndarray) -> np.ndarray:
    Xc = X - X.mean(axis=0)
    return Xc / np.sqrt(np.einsum("ij,ij->j", Xc, Xc) + np.finfo(float).eps)


def main() -> None:
    ap = common.parser(__doc__, DATASETS)
    ap.add_argument("--gammas", default="1,0.1,0.01,0.001", help="γ values for the sweep")
    args = ap.parse_args()
    gammas, sweep = common.gamma_sweep(args.gammas)
    print(
        "| data set | n × p | c = m | converged / iters (γ=1) | rr (γ=1) | rows ‖w‖>0.5 | "
        f"‖W‖₂,₁ − m | Tr(WᵀXᵀLXW) | mean diag XᵀLX | λ_max(L_S) | {sweep} |"
    )
    print("|---|---|---:|---|---:|---:|---:|---:|---:|---:|" + "---|" * len(gammas))
    for name in common.dataset_names(args.datasets):
        X, y, c, _ = common.load_zscored(name, args.mirror)
        n, p = X.shape
        hs = common.h_grid_nonconstant(X)
        cells, est = [], None
        for g in gammas:
            e = _fit(X, c, g)
            est = e if g == 1.0 else est
            cells.append(common.sweep_cell(e, X, y, hs))
        est = est or _fit(X, c, 1.0)
        keep = np.any(X != 0, axis=0)  # W_ has rows for the non-constant features only
        Xu, L = _unit_features(X[:, keep]), sym_laplacian(est.S_)
        Z = Xu @ est.W_
        trace = float(np.sum(Z * (L @ Z)))
        diag = float(np.mean(np.einsum("ij,ij->j", Xu, L @ Xu)))
        lmax = float(spla.eigsh(L, k=1, which="LA", return_eigenvectors=False)[0])
        norms = np.linalg.norm(est.W_, axis=1)
        print(
            f"| {name} | {n} × {p} | {c} | {est.converged_} / {est.n_iter_} | "
            f"{est.resolved_rank_} | {int(np.sum(norms > 0.5))} | {norms.sum() - c:.2e} | "
            f"{trace:.3f} | {diag:.4f} | {lmax:.3f} | " + " | ".join(cells) + " |",
            flush=True,
        )
        sel = {h: est.feature_order_[:h] for h in hs}
        common.note_archive(args.archive, name, METHOD, sel, "γ = 1")

    print("\nAuthors' code on digits (400 × 56, c = 10; `shared/parity/digits`):\n")
    print("| reference | γ | rr of their ‖w_i‖ | rows ‖w‖>0.5 | largest other ‖w_i‖ | ‖W‖₂,₁ − m |")
    print("|---|---:|---:|---:|---:|---:|")
    for tag, g in (("sogfs__g1", 1), ("sogfs__g100", 100)):
        path = common.SHARED / "parity" / "digits" / f"{tag}.npz"
        if not path.exists():
            print(f"| {tag} | {g} | (missing) | | | |")
            continue
        W = np.load(path)["W"]
        norms = np.sort(np.linalg.norm(W, axis=1))[::-1]
        m = W.shape[1]
        print(
            f"| {tag} | {g} | {resolved_rank(norms)} | {int(np.sum(norms > 0.5))} | "
            f"{norms[m]:.1e} | {norms.sum() - m:.1e} |"
        )


if __name__ == "__main__":
    main()
