"""FSBC's first v-step on wide data: the thin SVD of the ``c·n × d`` factor of
``Q̃ = 2 (WᵀW) ⊙ (XᵀX)`` against the dense ``d × d`` eigendecomposition, in one run.

For each data set (standardized, FSBC's defaults, ``h`` = 50, one BLAS thread) it fits
FSBC twice — once as the solver does (factor path where ``c·n ≤ d/2``), once with the
dense eigendecomposition of the same matrix — and prints both CPU times, their ratio and
whether the two fits agree (selected features in order, clusters). The ratio is what to
read: both fits run in the same process, one after the other.

Run: ``python benchmarks/fsbc_factor.py [--mirror ../shared/datasets] [--datasets a b]``.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

import ufs.methods.fsbc as fsbc_module
from ufs.datasets import load_dataset
from ufs.preprocessing import standardize

#: wide sets of the benchmark (c·n ≤ d/2), cheapest first
DEFAULT = ("srbct", "colon", "glioma", "tox_171", "allaml", "pixraw10p")
H = 50


def _fit(X: np.ndarray, c: int, dense: bool):
    fast = fsbc_module._psd_eigenpairs
    if dense:
        fsbc_module._psd_eigenpairs = lambda Q, Z: fast(Z.T @ Z if Z is not None else Q, None)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            t = time.process_time()
            est = fsbc_module.FSBC(H, c, random_state=0).fit(X)
            return time.process_time() - t, est
    finally:
        fsbc_module._psd_eigenpairs = fast


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--mirror", default=str(Path(__file__).parents[1] / ".." / "shared" / "datasets")
    )
    ap.add_argument("--datasets", nargs="+", default=list(DEFAULT))
    args = ap.parse_args(argv)
    print("| data set (n × d) | c·n | dense CPU-s | factor CPU-s | dense / factor | same fit |")
    print("|---|---:|---:|---:|---:|---|")
    with threadpool_limits(1):
        for name in args.datasets:
            ds = load_dataset(name, mirror=args.mirror)
            X = standardize(ds.X).X
            n, d = X.shape
            c = int(np.unique(ds.y).size)
            t_fac, a = _fit(X, c, dense=False)
            t_den, b = _fit(X, c, dense=True)
            same = np.array_equal(a.selected_features_, b.selected_features_) and np.array_equal(
                a.labels_, b.labels_
            )
            print(
                f"| {name} ({n} × {d}) | {c * n} | {t_den:.1f} | {t_fac:.1f} | "
                f"{t_den / t_fac:.1f} | {'yes' if same else 'NO'} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
