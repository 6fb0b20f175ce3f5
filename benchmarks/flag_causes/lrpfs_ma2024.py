"""LRPFS's "not converged" flags: the authors' cap and a period-2 iteration.

LRPFS (Ma, Huang, Li, Wang 2024; ``ufs/methods/lrpfs.py``, registered ``lrpfs_ma2024``)
follows the authors' ``LRPFS.m``: at most ``maxIter = 30`` iterations (their usage
example), stop when ``|f_t − f_{t−1}| / f_{t−1} < 1e-6`` from iteration 3 on. Every
label-free fit of the benchmark ran 30. For each data set this script fits LRPFS with the
label-free defaults (α = 1e3, λ = 0.1, k = 5, [0, 1] input, the benchmark's seed 0) at the
authors' cap (30) and at 10× the cap (300, same ``tol``), and reports

* per data set: ``converged_`` of both fits; the smallest relative objective change from
  iteration 3 on (what the stop compares with 1e-6) over 30 and over 300 iterations; the
  period-2 pattern: the median of ``f_t / f_{t−1}`` over odd and over even ``t``; the
  objective at 30 and 300 (both even iterations: the low branch), relative change; the
  resolved rank (rows of ``W`` above 1e-4 of the largest) at 30 / 300; the same
  quantities for ``update="mm"`` (our monotone variant, not the authors') at 300; whether
  the cap fit reproduces the archived benchmark ranking (``--archive``);
* per benchmark ``h`` (:func:`ufs.pipeline.config.relative_h`, ``{1,2,5,10,20} %`` clipped to
  ``[5, 300]``): the overlap ``|S_30 ∩ S_300| / h``, the k-means ACC of both selections on
  the z-scored data (the benchmark's evaluation matrix; :func:`ufs.evaluation.
  evaluate_clustering`, 20 restarts, seeds 0..19) and ``ACC_300 − ACC_30``; ``◊`` marks an
  ``h`` above the fit's resolved rank (the benchmark's *degenerate* rule).

Deterministic (seeded ``init="kmeans"`` and k-means evaluation). Run with one BLAS thread::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        python benchmarks/flag_causes/lrpfs_ma2024.py --datasets wine,lung_discrete,jaffe,glioma
"""

from __future__ import annotations

import time
import warnings

import _common as common
import numpy as np

from ufs.base import resolved_rank
from ufs.methods import LRPFS
from ufs.preprocessing import input_matrix

METHOD = "lrpfs_ma2024"
DATASETS = "wine,breast_cancer,lung_discrete,jaffe,glioma,leukemia,umist"
CAP = 30  # the authors' maxIter (usage example of LRPFS.m)
SEED = 0


def _fit(X: np.ndarray, c: int, max_iter: int, update: str = "authors") -> LRPFS:
    est = LRPFS(
        1, c, alpha=1e3, lam=0.1, n_neighbors=5, max_iter=max_iter, update=update,
        random_state=SEED,
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X)


def _min_rel_change(f: np.ndarray) -> float:
    """Smallest ``|f_t − f_{t−1}| / f_{t−1}`` over ``t ≥ 3`` (the authors' stop)."""
    rel = np.abs(np.diff(f)) / np.abs(f[:-1])
    return float(rel[1:].min()) if rel.size > 1 else float("nan")


def _period2(f: np.ndarray) -> str:
    """Median ``f_t / f_{t−1}`` over odd / even ``t`` (``f`` 0-based: ``f[t − 1]``)."""
    r = f[1:] / f[:-1]  # r[i] = f_{i+2} / f_{i+1}
    t = np.arange(2, f.size + 1)
    return f"{np.median(r[t % 2 == 1]):.2g} / {np.median(r[t % 2 == 0]):.2g}"


def main(argv: list[str] | None = None) -> None:
    ap = common.parser(__doc__, DATASETS)
    ap.add_argument("--factor", type=int, default=10, help="iterations of the long fit / cap")
    args = ap.parse_args(argv)
    common.evaluations_dir(args.archive)  # an archive file is extracted here, before the timings
    k = CAP * args.factor
    stops, rows = [], []
    for ds in common.dataset_names(args.datasets):
        t0 = time.process_time()
        Xz, y, c, raw = common.load_zscored(ds, args.mirror)
        X01 = input_matrix("unit_range", raw, Xz)
        n, p = Xz.shape
        cap, lng, mm = _fit(X01, c, CAP), _fit(X01, c, k), _fit(X01, c, k, "mm")
        rr = {
            name: resolved_rank(e.scores_) for name, e in (("cap", cap), ("10x", lng), ("mm", mm))
        }
        f30, fk, fmm = cap.objective_, lng.objective_, mm.objective_
        hs = common.h_grid(p)
        repro = common.archive_cell(args.archive, ds, METHOD, cap.feature_order_, hs)
        stops.append(
            f"| {ds} | {n}×{p}, c={c} | {cap.converged_} / {lng.converged_} | "
            f"{_min_rel_change(f30):.2g} / {_min_rel_change(fk):.2g} | {_period2(fk)} | "
            f"{f30[-1]:.3g} / {fk[-1]:.3g} ({(fk[-1] - f30[-1]) / abs(f30[-1]):+.0%}) | "
            f"{rr['cap']} / {rr['10x']} | {mm.converged_}, {_min_rel_change(fmm):.1g}, "
            f"{fmm[-1]:.3g}, rank {rr['mm']} | {repro} |"
        )
        rows += common.overlap_acc_rows(
            ds, Xz, y, cap.feature_order_, lng.feature_order_, hs, rr["cap"], rr["10x"]
        )
        print(f"[{ds}: {time.process_time() - t0:.1f} CPU s]", flush=True)
    print(f"\nLRPFS (lrpfs_ma2024), label-free defaults; cap = {CAP} (authors), 10x = {k}; "
          "tol = 1e-6 (relative change)\n")  # fmt: skip
    print(
        f"| data set | shape | converged {CAP} / {k} | min rel. change (t ≥ 3) {CAP} / {k} | "
        f"median f_t/f_t−1, t odd / even | objective {CAP} / {k} | resolved rank {CAP} / {k} | "
        f"mm at {k}: converged, min rel. change, objective, rank | archive reproduced |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(stops))
    common.print_overlap_table(rows, CAP, k)


if __name__ == "__main__":
    main()
