"""Why URAFS fits are "not converged" (and 2 "degenerate"), measured.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        python benchmarks/flag_causes/urafs.py [--datasets digits,jaffe,golfs_sim1,nci9,mfeat_fac]
        [--factor 10] [--mirror DIR] [--archive FILE|DIR|''] [--rank-study bbc]

For each data set, URAFS runs as in the benchmark's label-free protocol (registry
defaults ``lam = alpha = beta = 1``, kNN support k = 5; ``max_iter = 100``, ``tol = 1e-6``,
``tol_scores = 1e-4``; z-scored input; ``random_state = 0``), except that the cap is
``factor × max_iter``. A callback keeps the iterate at the default cap, so one long run
gives both fits: "cap" (what the benchmark fitted; the fit is deterministic) and "10x"
(continued to ``factor × max_iter`` outer iterations or to the stopping rule). Printed
(markdown), per data set and per benchmark h (``round(p × {1, 2, 5, 10, 20} %)`` clipped
to [5, 300]):

* ``it cap`` / ``it 10x``: outer iterations, ``✓`` stopping rule met, ``†`` cap ran out;
* ``dJ/J @cap`` and ``ds/s @cap``: the two quantities of the stopping rule at the default
  cap — the relative objective change (``tol = 1e-6``) and the relative change of the
  scores ``||w_i||`` (``tol_scores = 1e-4``) in the last iteration;
* ``J change``: ``(J_10x − J_cap) / |J_cap|``;
* ``overlap``: ``|S_cap ∩ S_10x| / h``;
* ``rr cap / 10x``: ``resolved_rank_`` (features above 1e-4 of the largest weight);
* ``ACC cap`` / ``ACC 10x`` / ``ΔACC``: mean k-means ACC over 20 restarts (seeds 0-19)
  on the selected z-scored columns (:func:`ufs.evaluation.evaluate_clustering`, as the
  benchmark's evaluate step).

``--rank-study DS`` (e.g. ``bbc``, the data set of the two degenerate fits) prints, at the
default cap, ``resolved_rank_`` and the number of rows above 1e-2 / 1e-8 of the largest
for ``max_iter_w`` (Algorithm-1 re-weighting steps per outer iteration) ∈ {5, 10, 20, 40,
80}: whether the rows below 1e-4 are rows the ℓ2,1 model zeroes (they keep falling as the
re-weighting goes on) or round-off.

The "cap" selection is checked to equal the archived label-free selection of the
benchmark run at every h (the script stops if not; ``(archive ✓)`` marks a checked data
set): ``--archive`` is the benchmark archive (default ``benchmarks/results/benchmark.tar.xz``,
extracted to a temporary folder) or an evaluations folder; ``--archive ''`` skips the check.
"""

from __future__ import annotations

import time
import warnings

import _common as common
import numpy as np

from ufs import make_estimator
from ufs.base import resolved_rank
from ufs.linalg import row_norms, top_rows
from ufs.validation import constant_feature_mask

METHOD = "urafs"
DEFAULT_DATASETS = "digits,jaffe,golfs_sim1,nci9,mfeat_fac"


def fit(X, c, seed, **params):
    est = make_estimator(METHOD, n_features_to_select=1, n_clusters=c, random_state=seed, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X)
    return est


def run(ds: str, factor: int, mirror: str | None, seed: int, restarts: int, archive: str | None):
    X, y, c, _ = common.load_zscored(ds, mirror)
    n, p = X.shape
    hs = common.h_grid(p)
    informative = np.flatnonzero(~constant_feature_mask(X))
    cap = int(make_estimator(METHOD, n_clusters=c).max_iter)
    scores: dict[int, np.ndarray] = {}

    def keep(it, W, F, S, d):
        if it in (cap - 1, cap):
            scores[it] = row_norms(W)

    t0 = time.process_time()
    est = fit(X, c, seed, max_iter=factor * cap, callback=keep)
    cpu = time.process_time() - t0
    J = np.asarray(est.objective_)  # J[t - 1]: after outer iteration t
    n_long = int(est.n_iter_)
    if n_long <= cap:  # the stopping rule held within the default cap: one fit
        scores[cap] = row_norms(est.W_)
        it_cap, conv_cap = n_long, True
    else:
        it_cap, conv_cap = cap, False
    s_cap = scores[cap]
    ds_cap = (
        np.linalg.norm(s_cap - scores[cap - 1]) / np.linalg.norm(s_cap)
        if cap - 1 in scores
        else float("nan")
    )
    order_cap = informative[top_rows(s_cap, informative.size)]
    order_long = np.asarray(est.feature_order_)
    j_cap = J[it_cap - 1]
    rr_cap, rr_long = resolved_rank(s_cap), int(est.resolved_rank_)
    checked = common.require_archive(archive, ds, METHOD, {h: order_cap[:h] for h in hs})
    fixed = {  # the cells that do not depend on h
        "ds": f"{ds} ({n}×{p}, c={c}){' (archive ✓)' if checked else ''}",
        "it_cap": common.iterations_cell(it_cap, conv_cap),
        "it_long": common.iterations_cell(n_long, est.converged_),
        "dj_cap": abs(J[it_cap - 1] - J[it_cap - 2]) / abs(J[it_cap - 2]),
        "ds_cap": ds_cap if not conv_cap else float("nan"),
        "j_change": (J[-1] - j_cap) / abs(j_cap),
        "rr": f"{rr_cap} / {rr_long}",
        "cpu": cpu,
    }
    return [{**fixed, **common.cap_long(X, y, order_cap, order_long, h, restarts)} for h in hs]


def rank_study(ds: str, mirror: str | None, seed: int) -> None:
    X, _, c, _ = common.load_zscored(ds, mirror)
    hs = common.h_grid(X.shape[1])
    print(f"\n`resolved_rank_` on {ds} ({X.shape[0]}×{X.shape[1]}, c={c}, h = {hs}) at the")
    print("default cap, by Algorithm-1 steps per outer iteration (`max_iter_w`):\n")
    print(
        "| max_iter_w | outer it | rows > 1e-2 | rr (> 1e-4) | rows > 1e-8 | top-h overlap vs 20 |"
    )
    print("|---|---|---|---|---|---|")
    fits = {mw: fit(X, c, seed, max_iter_w=mw) for mw in (5, 10, 20, 40, 80)}
    base = fits[20].feature_order_  # 20: the default
    for mw, est in fits.items():
        s = row_norms(est.W_)
        w = s / s.max()
        order = est.feature_order_
        overlap = " ".join(f"{len(np.intersect1d(order[:h], base[:h])) / h:.2f}" for h in hs)
        cells = [
            str(mw),
            common.iterations_cell(est.n_iter_, est.converged_),
            str(int(np.sum(w > 1e-2))),
            str(resolved_rank(s)),
            str(int(np.sum(w > 1e-8))),
            overlap,
        ]
        print("| " + " | ".join(cells) + " |", flush=True)


def main(argv=None) -> None:
    ap = common.parser(__doc__, DEFAULT_DATASETS, "comma-separated names")
    common.add_long_fit_options(ap)
    ap.add_argument("--rank-study", default=None, help="data set for the max_iter_w study")
    args = ap.parse_args(argv)
    if args.datasets:
        print(
            "| data set | h | it cap | it 10x | dJ/J @cap | ds/s @cap | J change | overlap | "
            "rr cap / 10x | ACC cap | ACC 10x | ΔACC | CPU s |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for ds in common.dataset_names(args.datasets):
            for r in run(ds, args.factor, args.mirror, args.seed, args.restarts, args.archive):
                print(
                    f"| {r['ds']} | {r['h']} | {r['it_cap']} | {r['it_long']} | "
                    f"{r['dj_cap']:.1e} | {r['ds_cap']:.1e} | {r['j_change']:+.1e} | "
                    f"{r['overlap']:.2f} | {r['rr']} | {r['acc_cap']:.3f} | "
                    f"{r['acc_long']:.3f} | {r['acc_long'] - r['acc_cap']:+.3f} | "
                    f"{r['cpu']:.0f} |",
                    flush=True,
                )
    if args.rank_study:
        rank_study(args.rank_study, args.mirror, args.seed)


if __name__ == "__main__":
    main()
