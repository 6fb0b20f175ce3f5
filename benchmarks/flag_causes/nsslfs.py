"""Why NSSLFS fits are "not converged": the iteration cap, measured.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        python benchmarks/flag_causes/nsslfs.py [--datasets lung_discrete,colon,digits,jaffe]
        [--factor 10] [--mirror DIR] [--archive FILE|DIR|'']

For each data set, NSSLFS runs as in the benchmark's label-free protocol (registry
defaults: ``lam = 1``, ``max_iter = 2000``, ``tol = 1e-5``; z-scored input; ``k = c``;
``random_state = 0``), except that the cap is ``factor × max_iter``. A callback keeps the
iterate at the default cap, so one long run gives both fits: "cap" (what the benchmark
fitted; identical, since the fit is deterministic) and "10x" (the same run continued to
``factor × max_iter`` iterations or to the tolerance). Printed (markdown), per data set
and per benchmark h (``round(p × {1, 2, 5, 10, 20} %)`` clipped to [5, 300]):

* ``it cap`` / ``it 10x``: iterations and whether ``tol`` was met (``✓``) or the cap ran
  out (``†``);
* ``dJ/J @cap``: the relative decrease of the objective ``J_ε`` (N2) in the last
  iteration before the default cap (the stopping test compares it with ``tol``);
* ``J drop``: ``(J_cap − J_10x) / J_cap``, how much lower the longer run gets;
* ``overlap``: ``|S_cap ∩ S_10x| / h`` of the two top-h selections;
* ``ACC cap`` / ``ACC 10x`` / ``ΔACC``: mean k-means ACC over 20 restarts (seeds 0-19)
  on the selected z-scored columns, :func:`ufs.evaluation.evaluate_clustering`, as the
  benchmark's evaluate step.

The "cap" selection is checked to equal the archived label-free selection of the
benchmark run at every h (the script stops if not; ``(archive ✓)`` marks a checked data
set): ``--archive`` is the benchmark archive (default ``benchmarks/results/benchmark.tar.xz``,
extracted to a temporary folder) or an evaluations folder; ``--archive ''`` skips the check.

``--eps E`` overrides the smoothing ``ε`` (default 1e-6) in every fit (a deviation from
the defaults, for the question whether the slow convergence is the near-exact ℓ1).

``--drift-study DS[,DS]`` asks whether the tolerance itself marks a settled answer: the
fit is continued past the point where ``tol`` stops it (``tol = 0``, ``factor × max_iter``
iterations) and the table gives, per h, the overlap of the tol-stopped top h with the top
h after the extra iterations, and the further relative drop of ``J_ε``.
"""

from __future__ import annotations

import time
import warnings

import _common as common
import numpy as np

from ufs import make_estimator
from ufs.linalg import row_norms, top_rows
from ufs.methods.nsslfs import nsslfs_objective
from ufs.validation import constant_feature_mask

METHOD = "nsslfs"
DEFAULT_DATASETS = "lung_discrete,colon,digits,jaffe"


def run(
    ds: str,
    factor: int,
    mirror: str | None,
    seed: int,
    restarts: int,
    archive: str | None,
    **params,
):
    X, y, c, _ = common.load_zscored(ds, mirror)
    n, p = X.shape
    hs = common.h_grid(p)
    informative = np.flatnonzero(~constant_feature_mask(X))
    est = make_estimator(
        METHOD, n_features_to_select=max(hs), n_clusters=c, random_state=seed, **params
    )
    cap = int(est.max_iter)
    snap: dict[str, np.ndarray] = {}

    def keep(it, W, H):
        if it == cap:
            snap["scores"] = row_norms(W)

    est.set_params(max_iter=factor * cap, callback=keep)
    t0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X)
    cpu = time.process_time() - t0
    J = np.asarray(est.objective_)
    n_long = int(est.n_iter_)
    if n_long <= cap:  # met the tolerance within the default cap: both fits are this one
        snap["scores"] = row_norms(est.W_)
        it_cap, conv_cap = n_long, True
    else:
        it_cap, conv_cap = cap, False
    order_cap = informative[top_rows(snap["scores"], informative.size)]
    order_long = np.asarray(est.feature_order_)
    j_cap = J[it_cap]
    checked = common.require_archive(archive, ds, METHOD, {h: order_cap[:h] for h in hs})
    fixed = {  # the cells that do not depend on h
        "ds": f"{ds} ({n}×{p}, c={c})",
        "it_cap": common.iterations_cell(it_cap, conv_cap),
        "it_long": common.iterations_cell(n_long, est.converged_),
        "dj_cap": (J[it_cap - 1] - J[it_cap]) / abs(J[it_cap - 1]),
        "j_drop": (j_cap - J[-1]) / abs(j_cap),
        "cpu": cpu,
    }
    rows = [{**fixed, **common.cap_long(X, y, order_cap, order_long, h, restarts)} for h in hs]
    return rows, checked


def drift_study(ds: str, factor: int, mirror: str | None, seed: int, **params) -> str:
    X, _, c, _ = common.load_zscored(ds, mirror)
    hs = common.h_grid(X.shape[1])
    informative = np.flatnonzero(~constant_feature_mask(X))
    est = make_estimator(
        METHOD, n_features_to_select=max(hs), n_clusters=c, random_state=seed, **params
    )
    n_max = factor * int(est.max_iter)
    tol = float(est.tol)
    snap: dict[str, object] = {}
    J: list[float] = []
    Xi = X[:, informative]  # what fit() passes to the solver

    def watch(it, W, H):  # the objective is not passed: recompute it as the fit does
        J.append(nsslfs_objective(Xi, W, H, est.lam, est.beta, est.eps))
        if "it" not in snap and len(J) > 1 and J[-2] - J[-1] <= tol * abs(J[-2]):
            snap["it"], snap["scores"] = it, row_norms(W)
            snap["parts"] = parts(Xi, W, H, est)

    est.set_params(max_iter=n_max, tol=0.0, callback=watch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X)
    if "it" not in snap:
        return f"| {ds} | tol not met in {n_max} iterations | | |"
    order_tol = informative[top_rows(snap["scores"], informative.size)]
    order_end = np.asarray(est.feature_order_)
    J_all = np.asarray(est.objective_)
    it_tol = int(snap["it"])
    overl = " ".join(f"{len(np.intersect1d(order_tol[:h], order_end[:h])) / h:.2f}" for h in hs)
    drop = (J_all[it_tol] - J_all[-1]) / abs(J_all[it_tol])
    a, b = snap["parts"], parts(Xi, est.W_, est.H_, est)
    terms = " / ".join(f"{x:.4g} → {y:.4g}" for x, y in zip(a, b, strict=True))
    return f"| {ds} | {it_tol} → {est.n_iter_} | {drop:.2%} | {terms} | {hs}: {overl} |"


def parts(X, W, H, est) -> tuple[float, float, float]:
    """The three terms of ``J_ε`` (N2): smoothed ℓ1 loss, ``λ`` ℓ2,1, ``(β/2)||H||²``."""
    loss = float(np.sqrt((X - (X @ W) @ H) ** 2 + est.eps).sum())
    pen = float(est.lam * np.sqrt(row_norms(W, squared=True) + est.eps).sum())
    return loss, pen, float(0.5 * est.beta * np.sum(H * H))


def main(argv=None) -> None:
    ap = common.parser(__doc__, DEFAULT_DATASETS, "comma-separated names ('' for none)")
    common.add_long_fit_options(ap)
    ap.add_argument("--drift-study", default=None, help="data sets to continue past tol")
    ap.add_argument("--eps", type=float, default=None, help="override the smoothing ε")
    args = ap.parse_args(argv)
    params = {} if args.eps is None else {"eps": args.eps}
    print(
        "| data set | h | it cap | it 10x | dJ/J @cap | J drop | overlap | ACC cap | "
        "ACC 10x | ΔACC | CPU s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for ds in common.dataset_names(args.datasets):
        rows, checked = run(
            ds, args.factor, args.mirror, args.seed, args.restarts, args.archive, **params
        )
        for r in rows:
            print(
                f"| {r['ds']}{' (archive ✓)' if checked else ''} | {r['h']} | {r['it_cap']} | "
                f"{r['it_long']} | {r['dj_cap']:.1e} | {r['j_drop']:.2%} | {r['overlap']:.2f} | "
                f"{r['acc_cap']:.3f} | {r['acc_long']:.3f} | {r['acc_long'] - r['acc_cap']:+.3f} | "
                f"{r['cpu']:.0f} |",
                flush=True,
            )
    if args.drift_study:
        print("\nPast the tolerance (tol = 0, same seed): iterations at tol → end, further")
        print("drop of J_ε, overlap of the tol-stopped top h with the top h at the end.\n")
        print("| data set | iterations | J drop | loss / ℓ2,1 / ‖H‖² terms | overlap by h |")
        print("|---|---|---|---|---|")
        for ds in common.dataset_names(args.drift_study):
            print(drift_study(ds, args.factor, args.mirror, args.seed, **params), flush=True)


if __name__ == "__main__":
    main()
