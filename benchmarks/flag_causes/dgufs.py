"""DGUFS's "not converged" flags: what 10× the authors' 100 iterations changes.

DGUFS (Guo & Zhu 2018; ``ufs/methods/dgufs.py``, flags explained in ``docs/methods.md``)
follows the authors' ``DGUFS.m``: stop when ``‖Z − Y‖_∞ < 5e-7`` and ``‖L − M‖_∞ < 5e-7``,
at most 100 iterations. Every label-free fit of the benchmark ran 100 (and selected the
``h`` smallest-norm features of its [0, 1] input: also *degenerate*). For each data set
and benchmark ``h`` this script fits DGUFS with the label-free defaults (α = 1e3, β = 0.5,
the authors' variant, [0, 1] input) at the cap (100) and at 10× (1000, same ``tol``), and
reports, per ``h``: ``converged_`` of both fits, the primal residuals ``(‖Z−Y‖_∞,
‖L−M‖_∞)`` at the end of both, ``rank(L)`` at the end and the final ``μ``; the objective
at both ends; the overlap ``|S_100 ∩ S_1000| / h``; the smallest-norm flag
(``degenerate_``) of both; the k-means ACC of both selections on the z-scored data
(:func:`ufs.evaluation.evaluate_clustering`, 20 restarts, seeds 0..19, as the benchmark)
and ``ACC_1000 − ACC_100``. On stderr: whether the cap fits reproduce the archived
label-free selections (``--archive``: the benchmark archive by default, ``''`` to skip).

Deterministic (DGUFS has no random state; k-means seeds fixed). ``n × n`` dense work: keep
to small ``n``. Run with one BLAS thread::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        python benchmarks/flag_causes/dgufs.py --datasets wine,lung_discrete,glioma,jaffe
"""

from __future__ import annotations

import time
import warnings

import _common as common
import numpy as np

from ufs.methods import DGUFS
from ufs.preprocessing import input_matrix

METHOD = "dgufs"
DATASETS = "wine,lung_discrete,glioma,jaffe"
CAP = 100  # the authors' max_Iter


def _fit(X: np.ndarray, h: int, c: int, max_iter: int) -> DGUFS:
    est = DGUFS(h, c, alpha=1e3, beta=0.5, max_iter=max_iter)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X)


def _res(est: DGUFS) -> str:
    r1, r2 = est.residuals_[-1]
    return f"{r1:.1e}, {r2:.2f}"


def main(argv: list[str] | None = None) -> None:
    ap = common.parser(__doc__, DATASETS)
    ap.add_argument("--factor", type=int, default=10, help="iterations of the long fit / cap")
    args = ap.parse_args(argv)
    k = CAP * args.factor
    rows = []
    for ds in common.dataset_names(args.datasets):
        t0 = time.process_time()
        Xz, y, c, raw = common.load_zscored(ds, args.mirror)
        X01 = input_matrix("unit_range", raw, Xz)
        n, p = Xz.shape
        sel_cap = {}
        for h in common.h_grid(p):
            cap, lng = _fit(X01, h, c, CAP), _fit(X01, h, c, k)
            s_cap, s_lng = cap.selected_features_, lng.selected_features_
            sel_cap[h] = s_cap
            ov, a_cap, a_lng = common.overlap_acc(Xz, y, s_cap, s_lng, h)
            rows.append(
                f"| {ds} ({n}×{p}) | {h} | {cap.converged_} / {lng.converged_} "
                f"({lng.n_iter_}) | {_res(cap)} / {_res(lng)} | {cap.rank_L_} / {lng.rank_L_} "
                f"| {cap.mu_:.1e} / {lng.mu_:.1e} | {cap.objective_[-1]:.3g} / "
                f"{lng.objective_[-1]:.3g} | {ov:.2f} | {cap.degenerate_} / {lng.degenerate_} "
                f"| {a_cap:.3f} | {a_lng:.3f} | {a_lng - a_cap:+.3f} |"
            )
        print(f"[{ds}: {time.process_time() - t0:.1f} CPU s]", flush=True)
        common.note_archive(args.archive, ds, METHOD, sel_cap, f"cap {CAP}")
    print(f"\nDGUFS, label-free defaults; cap = {CAP} (authors), 10x = {k}; tol = 5e-7\n")
    print(
        f"| data set | h | converged {CAP} / {k} (iterations) | ‖Z−Y‖∞, ‖L−M‖∞ at {CAP} / {k} "
        f"| rank(L) | final μ | objective | overlap | smallest-norm | ACC {CAP} | ACC {k} "
        "| ΔACC |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
